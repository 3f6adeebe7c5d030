"""The records every dialect's binder produces, and turning a word into a parameter's value.

A binding says what an example's words are to the framework: the resolved command, each
parameter's occurrences and typed values, each word's role, and every problem. The records are
the same for every dialect; only the binder that fills them differs.

Values convert the way the framework converts them. Click and argparse convert numbers with
Python's ``int()`` and ``float()``; Typer 0.26 and later validates through pydantic, which differs
at the edges (``"1.0"`` is an integer to pydantic and ``"٣"`` is not). A tree snapshot says which
(``value_syntax``); where the frameworks differ beyond that (how a choice is matched, which words
a boolean accepts) the dialect's :class:`FrameworkRules` say. File existence and application-defined
types are never checked (SPEC section 4).
"""

from __future__ import annotations

import datetime
import enum
import functools
import os
import pathlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from exampleguard._contract import CommandNode
    from exampleguard._model import Parameter, ParamType

__all__ = [
    "CLICK_81_BOOLEANS",
    "CLICK_BOOLEANS",
    "Binding",
    "Conversion",
    "FrameworkRules",
    "Occurrence",
    "Path",
    "Piece",
    "Problem",
    "Role",
    "ValueError_",
    "convert",
]

Path = tuple[str, ...]


class Role(enum.Enum):
    """What a word of the example turned out to be."""

    PROGRAM = "program"
    COMMAND = "command"
    OPTION = "option"
    VALUE = "value"
    POSITIONAL = "positional"
    SEPARATOR = "separator"
    UNKNOWN = "unknown"
    EXTRA = "extra"


class Piece(NamedTuple):
    """A word, or the part of a word the parser is looking at (a bundle's tail, ``=value``).

    A tuple rather than a dataclass: the binder makes one per word of every example.
    """

    text: str
    word: int
    offset: int = 0

    @property
    def whole(self) -> bool:
        """Whether this is an entire word."""
        return self.offset == 0


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem the binder found, located by word (and characters within it)."""

    code: str
    message: str
    word: int | None = None
    offset: int = 0
    length: int | None = None
    hint: str | None = None
    related: tuple[tuple[str, int], ...] = ()
    suggestion: str | None = None
    """The one replacement a did-you-mean proposes (a flag, a command word), if any."""


@dataclass(slots=True)
class Occurrence:
    """One appearance of a parameter: which option string (if any) and which values."""

    parameter: Parameter
    level: Path
    spelling: str
    negated: bool
    word: int
    offset: int = 0
    length: int | None = None
    values: list[Piece] = field(default_factory=list)
    bare: bool = False
    """An optional-value option given without its value."""
    converted: list[Any] | None = field(default=None, repr=False, compare=False)
    """The values already converted while parsing (argparse converts as it goes), if so."""


@dataclass(slots=True)
class Binding:
    """Everything the binder learned about one example."""

    path: Path | None
    node: CommandNode | None
    occurrences: list[Occurrence]
    roles: list[Role]
    problems: list[Problem]
    eager: bool = False
    typed: dict[int, Any] = field(default_factory=dict)
    """Typed value of each given parameter, by ``id`` of the parameter as declared."""

    @property
    def ok(self) -> bool:
        """Whether the framework's parser would accept the example."""
        return not self.problems


# -- values --------------------------------------------------------------------------------------

CLICK_BOOLEANS: Mapping[str, bool] = {
    "1": True,
    "0": False,
    "yes": True,
    "no": False,
    "true": True,
    "false": False,
    "on": True,
    "off": False,
    "t": True,
    "f": False,
    "y": True,
    "n": False,
    # Click 8.2 and later read an empty value as absent, that is False.
    "": False,
}
"""The words Click's ``BOOL`` type accepts (stripped and lower-cased first), and their values."""

CLICK_81_BOOLEANS: Mapping[str, bool] = {
    word: value for word, value in CLICK_BOOLEANS.items() if word
}
"""Click 8.2's and before ``BOOL`` words: an empty value is not a boolean."""


@dataclass(frozen=True, slots=True)
class FrameworkRules:
    """The switches in which one framework (at one version) parses differently from another.

    A flat record of documented switches rather than code paths: a dialect holds one of these
    today, and a dialect whose framework changed between versions holds one row per version
    range and hands its binder the row for the version a tree records. A switch only some
    dialects read is documented as such; the others leave it at what their framework does.
    """

    choices_by_text: bool
    """Whether a choice is matched by its string form before any conversion, the matching
    choice itself becoming the value (Click), rather than converted first and then looked up
    among the choices (argparse)."""
    booleans: Mapping[str, bool]
    """The words a boolean value accepts under Python syntax (stripped, lower-cased). argparse
    has no boolean converter; its rules keep Click's words for the value-taking booleans a
    catalog may declare."""
    empty_star_checks_choices: bool = False
    """argparse before 3.12: a ``nargs='*'`` positional with choices that receives no word
    checks the empty list against its choices, and fails."""
    option_values_drop_separator: bool = False
    """argparse before 3.13: the first ``--`` among an option's values is dropped too (3.13
    drops it from positionals only): ``--opt=--`` stores ``[]``."""
    shared_one_character_words: bool = False
    """CPython 3.13 and later: a one-character command-line word (Latin-1) is the interpreter's
    shared string object, so argparse's identity test takes ``--opt x`` for "not given" when
    the default is the string ``"x"`` (mutual exclusion and required groups)."""
    bundle_equals_separator: bool = False
    """argparse 3.13 and later: in a bundle of short options, ``=`` after an option's letter
    separates the next option's value (``-ft=x`` gives ``-t`` the value ``x``, not ``=x``); a
    switch given ``=value`` (``-f=x``) is an error; an unknown letter ends the bundle as an
    unrecognized argument."""
    find_skips_flag_values: bool = False
    """cobra 1.7 and later: ``Find`` removes a command's word where it stands, not where the
    same word first appears as a flag's value, and ``Traverse`` takes a word for a flag only if
    it starts with ``--`` or is ``-x``... (1.6 took any word whose second byte is ``-``)."""
    reparse_skips_command_word: bool = False
    """Click 8.1 and before: when a group's first leftover word looks like an option and names
    no subcommand, the group re-parses only the words after it (8.2 and later re-parse from
    that word on), so ``-- --bogus --help`` shows help where 8.2 reports ``--bogus``."""


@dataclass(frozen=True, slots=True)
class ValueError_:
    """Why a word does not convert: ``bad-type`` or ``bad-choice``, with a message."""

    code: str
    message: str


Conversion = tuple[Any, ValueError_ | None]


def convert(
    parameter: Parameter,
    text: str,
    position: int,
    *,
    syntax: str,
    rules: FrameworkRules,
) -> Conversion:
    """Convert ``text`` as the ``position``-th value of one occurrence of ``parameter``.

    Returns the typed value and ``None``, or the text and the reason it does not convert.
    """
    value_type = parameter.value_type(position)
    item_choices = parameter.item_choices
    if item_choices is not None and position < len(item_choices):
        choices = item_choices[position]
        if choices is not None:
            return _click_choice(choices, text, case_sensitive=parameter.case_sensitive)
    elif parameter.choices is not None and rules.choices_by_text:
        chosen = _click_choice(parameter.choices, text, case_sensitive=parameter.case_sensitive)
        if parameter.own_convert and chosen[1] is None:
            # The application's convert makes the value; the model keeps the word as written.
            return text, None
        return chosen
    elif parameter.own_convert and parameter.choices is None:
        # A type whose own convert accepts any word (a "soft" Choice): the word as written.
        return text, None
    value, problem = _convert_type(value_type, text, parameter, syntax=syntax, rules=rules)
    if problem is not None:
        return text, problem
    if parameter.choices is not None and value not in parameter.choices:
        return text, ValueError_(
            "bad-choice",
            f"{text!r} is not one of {', '.join(repr(c) for c in parameter.choices)}",
        )
    return value, None


def _click_choice(
    choices: list[str | int | float], text: str, *, case_sensitive: bool
) -> Conversion:
    # Click compares the string forms (case-folded unless case-sensitive) and gives back the
    # choice itself, so a numeric choice stays a number.
    wanted = text if case_sensitive else text.casefold()
    for choice in choices:
        shown = str(choice)
        if (shown if case_sensitive else shown.casefold()) == wanted:
            return choice, None
    return text, ValueError_(
        "bad-choice", f"{text!r} is not one of {', '.join(repr(str(c)) for c in choices)}"
    )


def _convert_type(
    value_type: ParamType, text: str, parameter: Parameter, *, syntax: str, rules: FrameworkRules
) -> Conversion:
    if value_type == "path" and syntax == "pydantic":
        # Typer 0.26 and later hand the program a pathlib.Path: its text is normalised
        # (`a//b/` is `a/b`, the empty path is `.`). Existence is never checked.
        return os.fspath(pathlib.PurePath(text)), None
    if value_type in ("string", "path"):
        return text, None
    if value_type == "integer":
        value = _pydantic("int", text) if syntax == "pydantic" else _python_number(int, text)
        if value is None:
            return text, ValueError_("bad-type", f"{text!r} is not a valid integer")
        return _in_range(value, text, parameter)
    if value_type == "number":
        value = _pydantic("float", text) if syntax == "pydantic" else _python_number(float, text)
        if value is None:
            return text, ValueError_("bad-type", f"{text!r} is not a valid number")
        return _in_range(value, text, parameter)
    if value_type == "boolean":
        return _boolean(text, syntax=syntax, words=rules.booleans)
    if value_type == "datetime":
        return _datetime(text, parameter.formats, syntax=syntax)
    if value_type == "uuid":
        return _uuid(text, syntax=syntax)
    return text, None


def _python_number(kind: type[int] | type[float], text: str) -> int | float | None:
    try:
        return kind(text)
    except (ValueError, OverflowError):
        return None


def _in_range(value: int | float, text: str, parameter: Parameter) -> Conversion:
    low, high = parameter.min, parameter.max
    too_low = low is not None and (value <= low if parameter.min_open else value < low)
    too_high = high is not None and (value >= high if parameter.max_open else value > high)
    if too_low or too_high:
        return text, ValueError_(
            "bad-type", f"{text!r} is not in the range {_describe_range(parameter)}"
        )
    return value, None


def _describe_range(parameter: Parameter) -> str:
    low = "" if parameter.min is None else f"{parameter.min}{'<' if parameter.min_open else '<='}"
    high = "" if parameter.max is None else f"{'<' if parameter.max_open else '<='}{parameter.max}"
    return f"{low}x{high}"


def _boolean(text: str, *, syntax: str, words: Mapping[str, bool]) -> Conversion:
    if syntax == "pydantic":
        stripped = text.strip()
        if stripped == "":
            return False, None
        value = _pydantic("bool", stripped)
        if value is None:
            return text, ValueError_("bad-type", f"{text!r} is not a valid boolean")
        return value, None
    state = words.get(text.strip().lower())
    if state is None:
        return text, ValueError_("bad-type", f"{text!r} is not a valid boolean")
    return state, None


def _datetime(text: str, formats: list[str] | None, *, syntax: str) -> Conversion:
    if formats:
        for pattern in formats:
            try:
                return datetime.datetime.strptime(text, pattern).isoformat(), None
            except ValueError:
                continue
        return text, ValueError_(
            "bad-type", f"{text!r} does not match the format(s) {', '.join(formats)}"
        )
    if syntax == "pydantic":
        value = _pydantic("datetime", text)
        if value is not None:
            return value.isoformat(), None
    return text, ValueError_("bad-type", f"{text!r} is not a valid date and time")


def _uuid(text: str, *, syntax: str) -> Conversion:
    if syntax == "pydantic":
        value = _pydantic("uuid", text)
    else:
        try:
            value = uuid.UUID(text.strip())
        except ValueError:
            value = None
    if value is None:
        return text, ValueError_("bad-type", f"{text!r} is not a valid UUID")
    return str(value), None


@functools.cache
def _adapter(kind: str) -> Any:
    from pydantic import TypeAdapter  # noqa: PLC0415 - only Typer 0.26+ trees need it

    target = {
        "int": int,
        "float": float,
        "bool": bool,
        "datetime": datetime.datetime,
        "uuid": uuid.UUID,
    }
    return TypeAdapter(target[kind])


def _pydantic(kind: str, text: str) -> Any:
    from pydantic import ValidationError  # noqa: PLC0415 - only Typer 0.26+ trees need it

    try:
        return _adapter(kind).validate_python(text)
    except ValidationError:
        return None
