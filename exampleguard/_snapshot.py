"""The executable command tree's format (``exampleguard.tree/v1``): what a snapshot file holds.

A live tree's child writes the same format; :mod:`exampleguard._tree` loads either. A program in
another language that speaks the exampleguard tree protocol (``tree = "exec:PROGRAM"``, SPEC
3.3) prints the same format for ``__exampleguard tree``, and answers ``__exampleguard judge``
with one :class:`JudgeVerdict` per line.
"""

# No ``from __future__ import annotations``: see exampleguard/_model.py.
from typing import Annotated, Literal

from pydantic import Field, JsonValue, Strict

from exampleguard._model import (
    NO_CONSTRAINTS,
    Alias,
    Constraints,
    Dialect,
    NonEmpty,
    Parameter,
    ParserSettings,
    StrictModel,
    empty_dict,
    empty_list,
)

__all__ = ["TREE_FORMAT", "HelpExample", "JudgeVerdict", "SourcePlace", "Tree", "TreeCommand"]

TREE_FORMAT = "exampleguard.tree/v1"


class SourcePlace(StrictModel):
    """Where a help text's line is written in the application's Python source (a live tree)."""

    file: NonEmpty
    line: Annotated[int, Strict(), Field(ge=1)]
    column: Annotated[int, Strict(), Field(ge=1)] = 1
    written: NonEmpty | None = None
    """The first line as the source spells it, where that differs from the help text (a
    docstring's doubled backslashes, argparse's ``%(prog)s``)."""


class HelpExample(StrictModel):
    """A command line the command's own help text shows (docs/docs-examples.md, help text).

    ``command`` is the line as the help shows it, a continued command's physical lines joined
    by newlines; ``field`` names the help text it is in (``help``, ``epilog``, ``description``,
    ``usage``, ``help of --format``); ``line`` and ``column`` place it in that text. ``source``
    is where a live tree's adapter found it written in the Python source, when it did.
    """

    command: NonEmpty
    field: NonEmpty = "help"
    line: Annotated[int, Strict(), Field(ge=1)] | None = None
    column: Annotated[int, Strict(), Field(ge=1)] | None = None
    source: SourcePlace | None = None


class TreeCommand(StrictModel):
    """One command or group of the executable tree.

    ``help_examples`` (an addition to the format; absent in older snapshots) are the command
    lines its help text shows, checked like documentation examples.
    """

    path: list[NonEmpty]
    aliases: list[Alias] = Field(default_factory=empty_list)
    runnable: bool
    hidden: bool = False
    parameters: list[Parameter] = Field(default_factory=empty_list)
    constraints: Constraints = Field(default_factory=lambda: NO_CONSTRAINTS)
    description: str | None = None
    default_command: NonEmpty | None = None
    default_if_no_args: bool = False
    settings: ParserSettings = Field(default_factory=ParserSettings)
    help_examples: list[HelpExample] = Field(default_factory=empty_list)
    own_lookup: NonEmpty | None = None
    """Click: the group looks its subcommands up with code of its own (a class whose
    ``list_commands`` or ``get_command`` is the application's), named here. Such a group may
    create a command only for some command lines (Typer's own ``typer PATH run``, made inside
    the group's callback from the file it is given), which a tree read without one cannot
    hold: a tool on such a command is ``dynamic-command``, not ``tool-unbound``."""


class Tree(StrictModel):
    """A program's executable command tree: every command, its parameters and parsing rules.

    ``value_syntax`` says whose rules convert numbers: ``python`` (``int()``/``float()``, as Click
    and argparse do) or ``pydantic`` (Typer 0.26 and later, which validates through pydantic).
    ``framework`` and ``framework_version`` say which parser the tree was read from (``click``,
    ``typer``, ``argparse`` or ``cobra``, and the version of Click, of Typer, of CPython for
    argparse, or of cobra where the Go program's build recorded it):
    the binder follows that version's rules. Both are optional; a snapshot without them is bound
    with the dialect's default rules (:meth:`~exampleguard._bind.dialect.Dialect.rules_for`).
    """

    format: Literal["exampleguard.tree/v1"]
    program: NonEmpty
    dialect: Dialect
    value_syntax: Literal["python", "pydantic"] = "python"
    framework: Literal["click", "typer", "argparse", "cobra"] | None = None
    framework_version: NonEmpty | None = None
    option_values_drop_separator: bool | None = None
    """argparse: whether ``--`` given as an option's own value (``--opt=--``) is dropped, as
    measured on the parser the tree was read from (a patch release of 3.11 and of 3.12 changed
    it, so the version alone does not tell); absent, the version table decides."""
    find_skips_flag_values: bool | None = None
    """cobra: whether the program's cobra finds a command's word past the flag values before it
    (1.7 and later), as the helper measured it on that cobra (a build without module data does
    not say its version); absent, the version table decides."""
    commands: list[TreeCommand]

    def command(self, path: list[str] | tuple[str, ...]) -> TreeCommand | None:
        """The command at exactly ``path``, if the tree has one."""
        wanted = list(path)
        return next((c for c in self.commands if c.path == wanted), None)


class JudgeVerdict(StrictModel):
    """One answer of a program's own parser in the tree protocol (``__exampleguard judge``).

    The program reads one JSON array of words (the words after the program) per line on its
    standard input and writes one of these per line on its standard output, in order, with no
    command body run. ``accepted`` is its parser's verdict; ``path`` the command it resolved,
    by primary names from the program on (as far as parsing got, for a rejection); ``given``
    what the command would receive, by the snapshot's parameter names: each flag given, and
    the positional parameter when it received at least one word; ``error`` the parser's
    message for a rejection. A number that is not finite is written ``NaN``, ``Infinity`` or
    ``-Infinity``. Everything in it is data: exampleguard decides nothing else by it.
    """

    accepted: bool
    path: list[str] | None = None
    given: dict[str, JsonValue] = Field(default_factory=empty_dict)
    error: str | None = None
