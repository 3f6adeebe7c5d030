"""What makes a dialect: the one record through which every dialect-specific decision is made.

A dialect module (``clickfamily``, ``argparser``) defines its parser model and one
:class:`Dialect` record named ``DIALECT``; :mod:`exampleguard.dialects` registers it by name.
Nothing outside the dialect's own module asks which dialect it is dealing with: the contract
asks the record how catalog-only commands parse and whether the framework enforces a
snapshot's constraints, conversion asks its rules, and :func:`~exampleguard.bind.bind` asks
it for the binder.

A binder compiles a lookup table per command node the first time it parses at that level. The
tables live in a :class:`Memo` that the caller owns, not on the nodes: its lifetime is the
caller's to choose (a run keeps one and lets each command's table go once its tool is done, so
memory does not grow with the number of tools).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from exampleguard.bind.records import Binding, FrameworkRules, Piece

if TYPE_CHECKING:
    from exampleguard.contract import CommandNode, Contract
    from exampleguard.tree import ParserSettings

__all__ = ["Binder", "Dialect", "Memo"]


class Binder(Protocol):
    """One binding in progress: a dialect's parser model run over one example's words."""

    def run(self, pieces: list[Piece]) -> None:
        """Parse ``pieces`` (every word after the program), filling in the binding."""


BinderFactory = Callable[["Contract", Binding, "Memo", FrameworkRules], Binder]
"""Makes a dialect's binder for one example: the contract, the binding to fill, the memo of
compiled tables, and the framework rules to follow."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """One framework's parsing rules, as exampleguard models them.

    ``catalog_group`` and ``catalog_command`` are the parser settings of a catalog-only command
    tree's nodes (with no tree, the catalog's command paths form the routing tree): how a node
    with subcommands, and one without, treats its words. They are shared by every node, so a
    catalog of thousands of commands holds only these two.
    """

    name: str
    """The name catalogs and trees give (``dialect``), as registered."""
    binder: BinderFactory
    catalog_group: ParserSettings
    catalog_command: ParserSettings
    enforces_constraints: bool
    """Whether the framework's parser itself rejects what a tree snapshot's constraints forbid
    (argparse's mutually exclusive and required groups); if not, the rules stage checks them
    like the catalog's own."""
    rules: FrameworkRules
    """The switches where this framework's parser differs from the others' (the version
    modelled today; see :class:`~exampleguard.bind.records.FrameworkRules`)."""


class Memo:
    """The tables a run's binders compile, one per command node, until the caller lets go.

    Keyed by the node itself (nodes compare by identity), so a table can never be found for
    another node that happens to share a path or a name.
    """

    __slots__ = ("tables",)

    def __init__(self) -> None:
        # Each dialect stores its own kind of table; a memo serves one contract's dialect.
        self.tables: dict[CommandNode, Any] = {}

    def release(self, node: CommandNode) -> None:
        """Let go of ``node``'s table once no example still to come needs it.

        A command's table is needed only by its own tool's examples; a group's is kept, since
        every tool beneath it routes through the group again.
        """
        if not node.is_group:
            self.tables.pop(node, None)
