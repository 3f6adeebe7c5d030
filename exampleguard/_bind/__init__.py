"""Binding an example's words to the command tree, following the framework's own parser.

Each dialect is an exact model of one framework's parser, in a module of its own
(:mod:`~exampleguard._bind.clickfamily` for Click and Typer, :mod:`~exampleguard._bind.argparser`
for argparse, :mod:`~exampleguard._bind.cobra` for Go's cobra), registered below by name.
:func:`bind` hands the words to the contract's dialect; the result is a :class:`Binding`: the
resolved command path, every occurrence of every parameter, the role of each word, and every
problem found.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from exampleguard._bind._records import Binding, FrameworkRules, Occurrence, Piece, Problem, Role
from exampleguard._bind.dialect import Dialect, Memo, RulesRow

if TYPE_CHECKING:
    from exampleguard._contract import Contract

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
    "dialect",
]

_DIALECTS: dict[str, str] = {"click": "clickfamily", "argparse": "argparser", "cobra": "cobra"}
"""The module of each dialect's binder and rules, by the name
:data:`exampleguard._model.DIALECT_NAMES` gives. A run imports only its own dialect's."""


def dialect(name: str) -> Dialect:
    """The dialect called ``name``; ``KeyError`` if there is none.

    The formats accept only the names of :data:`~exampleguard._model.DIALECT_NAMES`, each of
    which has its binder here, so a loaded catalog or tree always finds its own.
    """
    found: Dialect = importlib.import_module(f".{_DIALECTS[name]}", __name__).DIALECT
    return found


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
    cut = contract.unparsed_after
    if cut is not None and cut in words[1:]:
        # The program keeps these words for itself: its parser never sees them.
        at = list(words).index(cut, 1)
        roles[at] = Role.SEPARATOR
        roles[at + 1 :] = [Role.VALUE] * (len(words) - at - 1)
        pieces = pieces[: at - 1]
    found = dialect(contract.dialect)
    tree = contract.tree
    rules = (
        _rules(
            contract.dialect,
            tree.framework,
            tree.framework_version,
            tree.option_values_drop_separator,
            tree.find_skips_flag_values,
        )
        if tree is not None
        else found.rules
    )
    found.binder(contract, binding, Memo() if memo is None else memo, rules).run(pieces)
    return binding


@functools.lru_cache(maxsize=16)
def _rules(
    name: str,
    framework: str | None,
    version: str | None,
    drops_separator: bool | None,
    skips_values: bool | None = None,
) -> FrameworkRules:
    """The rules a tree's examples are bound with: its version's row, then what it measured.

    One object per tree setting, so that what is compiled per rules is compiled once.
    """
    rules = dialect(name).rules_for(framework, version)
    # Measured where the tree was read: it wins over the version table.
    if drops_separator is not None:
        rules = replace(rules, option_values_drop_separator=drops_separator)
    if skips_values is not None:
        rules = replace(rules, find_skips_flag_values=skips_values)
    return rules
