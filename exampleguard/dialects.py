"""The registry of dialects: whose parsing rules an example is bound with.

A dialect is one framework's model of its command-line parser (Click and Typer share ``click``,
argparse is ``argparse``). Each lives in one module of :mod:`exampleguard.bind` that defines a
:class:`~exampleguard.bind.dialect.Dialect` record named ``DIALECT``; this registry only names
them. It imports nothing of exampleguard, because the file formats take their accepted dialect
names from it and must stay cheap to import: a dialect's module (its binder) is imported the
first time the dialect is asked for, never when a format is.

Adding a dialect is one new module in :mod:`exampleguard.bind` plus one line below (and the
committed JSON Schemas regenerated, since they list the names).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from exampleguard.bind.dialect import Dialect

__all__ = ["NAMES", "dialect", "spoken_names"]

_MODULES: dict[str, str] = {
    "click": "exampleguard.bind.clickfamily",
    "argparse": "exampleguard.bind.argparser",
}
"""Each dialect's name, as catalogs and trees spell it, and the module that defines it."""

NAMES: tuple[str, ...] = tuple(_MODULES)
"""The registered dialect names, in registry order."""


def dialect(name: str) -> Dialect:
    """The registered dialect called ``name``; ``KeyError`` if there is none.

    The formats accept only registered names, so a loaded catalog or tree always finds its own.
    """
    # Looked up through sys.modules every time (a dictionary lookup once imported) rather than
    # remembered here: a host that drops and re-imports modules (pytest's in-process runs do)
    # must get the dialect whose records the rest of exampleguard now uses, not a stale one.
    module_name = _MODULES[name]
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    found: Dialect = module.DIALECT
    return found


def spoken_names() -> str:
    """The registered names as a sentence lists them: ``click or argparse``."""
    if len(NAMES) == 1:
        return NAMES[0]
    return f"{', '.join(NAMES[:-1])} or {NAMES[-1]}"
