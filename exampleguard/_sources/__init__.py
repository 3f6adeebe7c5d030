"""Where examples come from: records that carry their own location, and the sources of them.

Every stage after loading works on :class:`ExampleRecord`: its identity (the tool it belongs
to, its index), its text and its :class:`Origin`, which maps any span of the text to a region of
its file. Nothing later reads the file an example came from, or the model it was loaded into.

Adding a source of examples is one module here (a class with ``name`` and ``read``, following
:class:`ExampleSource`), its line in :data:`SOURCES`, and the configuration key that names its
files.
"""

from __future__ import annotations

from exampleguard._sources._records import (
    ExampleList,
    ExampleRecord,
    Examples,
    ExampleSource,
    LoadedTree,
    Origin,
    SourceContext,
)
from exampleguard._sources.catalog import CatalogSource
from exampleguard._sources.help import HelpSource
from exampleguard._sources.markdown import MarkdownSource

__all__ = [
    "SOURCES",
    "ExampleList",
    "ExampleRecord",
    "ExampleSource",
    "Examples",
    "LoadedTree",
    "Origin",
    "SourceContext",
    "load_examples",
]

SOURCES: tuple[ExampleSource, ...] = (CatalogSource(), MarkdownSource(), HelpSource())
"""Every source of examples, in the order their examples are checked and reported."""


def load_examples(context: SourceContext) -> Examples:
    """The examples of every source the context is for (``SourceError`` for an unusable file).

    Without a tree in ``context``, those of the sources that do not read the tree; with one,
    those of the sources that do.
    """
    examples = Examples()
    with_tree = context.tree is not None
    for source in SOURCES:
        if source.reads_tree == with_tree:
            examples = examples.merge(source.read(context))
    return examples
