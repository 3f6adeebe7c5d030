"""Tree adapters: each reads one framework's command objects into a tree snapshot.

Each adapter is the only place that touches its framework's internals. They run inside the child
process that imports the application (see :mod:`exampleguard._tree`), and return plain JSON data in
the ``exampleguard.tree/v1`` shape. They are imported when first named: exampleguard's own process
uses only the verdict records and the frame protocol of this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exampleguard._adapters.argparser import extract_argparse
    from exampleguard._adapters.clickfamily import extract_click

__all__ = ["extract_argparse", "extract_click"]


def __getattr__(name: str) -> Any:
    if name == "extract_argparse":
        from exampleguard._adapters.argparser import extract_argparse  # noqa: PLC0415

        return extract_argparse
    if name == "extract_click":
        from exampleguard._adapters.clickfamily import extract_click  # noqa: PLC0415

        return extract_click
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
