"""What makes a dialect: the one record through which every dialect-specific decision is made.

A dialect module (``clickfamily``, ``argparser``) defines its parser model and one
:class:`Dialect` record named ``DIALECT``; :mod:`exampleguard._bind` registers it by name.
Nothing outside the dialect's own module asks which dialect it is dealing with: conversion asks
its rules, and :func:`~exampleguard._bind.bind` asks it for the binder. What the contract needs
of a framework is plain data of the model (:data:`exampleguard._model.DIALECTS`).

A binder compiles a lookup table per command node the first time it parses at that level. The
tables live in a :class:`Memo` that the caller owns, not on the nodes: its lifetime is the
caller's to choose (a run keeps one and lets each command's table go once its tool is done, so
memory does not grow with the number of tools).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from exampleguard._bind._records import Binding, FrameworkRules, Piece

if TYPE_CHECKING:
    from exampleguard._contract import CommandNode, Contract

__all__ = ["SHARED_TABLES", "Binder", "Dialect", "Memo", "RulesRow", "parse_version"]


class Binder(Protocol):
    """One binding in progress: a dialect's parser model run over one example's words."""

    def run(self, pieces: list[Piece]) -> None:
        """Parse ``pieces`` (every word after the program), filling in the binding."""


BinderFactory = Callable[["Contract", Binding, "Memo", FrameworkRules], Binder]
"""Makes a dialect's binder for one example: the contract, the binding to fill, the memo of
compiled tables, and the framework rules to follow."""


@dataclass(frozen=True, slots=True)
class RulesRow:
    """One row of a dialect's version table: from which version of which framework its rules hold.

    ``framework`` is what a tree records (``click``, ``typer``, ``argparse``), ``since`` the
    first version the row applies to, ``change`` what differs from the row before, in a
    sentence; each row has a test against the real parser of that version
    (``tests/differential/test_versions.py``).
    """

    framework: str
    since: tuple[int, ...]
    rules: FrameworkRules
    change: str


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``"3.13.0"`` → ``(3, 13, 0)``; the leading numbers of a version, or ``None``."""
    if not text:
        return None
    numbers: list[int] = []
    for part in text.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) != len(part):
            break
    return tuple(numbers) or None


@dataclass(frozen=True, slots=True)
class Dialect:
    """One framework's parsing rules, as exampleguard models them, and its binder."""

    name: str
    """The name catalogs and trees give (``dialect``), as registered."""
    binder: BinderFactory
    rules: FrameworkRules
    """The switches where this framework's parser differs from the others', for a tree that
    does not say which version it came from (:class:`FrameworkRules`)."""
    versions: tuple[RulesRow, ...] = ()
    """The version table: the rows in which the framework's versions differ, oldest first."""

    def rules_for(self, framework: str | None, version: str | None) -> FrameworkRules:
        """The rules of ``framework`` at ``version``: the last row it has reached.

        A tree that records no framework or version gets the default :attr:`rules`; a version
        older than every row gets the oldest row's.
        """
        wanted = parse_version(version)
        rows = [row for row in self.versions if row.framework == framework]
        if wanted is None or not rows:
            return self.rules
        chosen = rows[0]
        for row in rows:
            if row.since <= wanted:
                chosen = row
        return chosen.rules


SHARED_TABLES = 64
"""How many tables :meth:`Memo.shared` keeps for commands that accept the same parameters."""


class Memo:
    """The tables a run's binders compile, one per command node, until the caller lets go.

    Keyed by the node itself (nodes compare by identity), so a table can never be found for
    another node that happens to share a path or a name. A dialect whose table depends on
    nothing but the parameters a level accepts can also find it by those (:meth:`shared`).
    """

    __slots__ = ("_shared", "tables")

    def __init__(self) -> None:
        # Each dialect stores its own kind of table; a memo serves one contract's dialect.
        self.tables: dict[CommandNode, Any] = {}
        self._shared: dict[tuple[Any, ...], tuple[object, Any]] = {}

    def shared(self, key: tuple[Any, ...], keep: object, build: Callable[[], Any]) -> Any:
        """The table built for ``key`` by an earlier ``build()``, or ``build()``'s.

        Commands often accept the very same parameter records (a catalog's tools that state
        their parameters alike share them): their tables are alike too, and are built once.
        ``key`` names the records by identity; ``keep`` holds them, so that no id in a key can
        be reused by another object while the entry lives. Only the :data:`SHARED_TABLES`
        latest are kept: memory stays bounded whatever the catalog.
        """
        entry = self._shared.get(key)
        if entry is not None:
            return entry[1]
        table = build()
        if len(self._shared) >= SHARED_TABLES:
            del self._shared[next(iter(self._shared))]
        self._shared[key] = (keep, table)
        return table

    def release(self, node: CommandNode) -> None:
        """Let go of ``node``'s table once no example still to come needs it.

        A command's table is needed only by its own tool's examples; a group's is kept, since
        every tool beneath it routes through the group again.
        """
        if not node.is_group:
            self.tables.pop(node, None)
