"""Binding an example's words to the command tree, following the framework's own parser.

Each dialect is an exact model of one framework's parser, in a module of its own
(:mod:`~exampleguard.bind.clickfamily` for Click and Typer, :mod:`~exampleguard.bind.argparser`
for argparse), registered in :mod:`exampleguard.dialects`. :func:`bind` hands the words to the
contract's dialect; the result is a :class:`Binding`: the resolved command path, every
occurrence of every parameter, the role of each word, and every problem found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from exampleguard import dialects
from exampleguard.bind._records import Binding, Occurrence, Piece, Problem, Role
from exampleguard.bind.dialect import Dialect, Memo, RulesRow

if TYPE_CHECKING:
    from exampleguard.contract import Contract

__all__ = [
    "Binding",
    "Dialect",
    "Memo",
    "Occurrence",
    "Piece",
    "Problem",
    "Role",
    "RulesRow",
    "bind",
]


def bind(contract: Contract, words: Sequence[str], memo: Memo | None = None) -> Binding:
    """Bind the example ``words`` (the program word first) to ``contract``'s command tree.

    ``memo`` keeps the tables compiled for each command between calls; a caller binding many
    examples passes one and releases each command's table when done with it. Without one, the
    tables last for this call only.
    """
    roles = [Role.EXTRA] * len(words)
    binding = Binding(path=None, node=None, occurrences=[], roles=roles, problems=[])
    if not words:
        return binding
    roles[0] = Role.PROGRAM
    pieces = [Piece(text, index) for index, text in enumerate(words) if index > 0]
    dialect = dialects.dialect(contract.dialect)
    tree = contract.tree
    rules = (
        dialect.rules_for(tree.framework, tree.framework_version)
        if tree is not None
        else dialect.rules
    )
    dialect.binder(contract, binding, Memo() if memo is None else memo, rules).run(pieces)
    return binding
