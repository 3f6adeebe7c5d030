"""What a source of examples reads and makes: the layout of an example in a file of lines.

The records themselves (:class:`ExampleRecord`, :class:`Examples`) are in
:mod:`exampleguard._examples`, which the check stage reads without importing any source.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from exampleguard._diagnostics import Location, Span
from exampleguard._examples import ExampleList, ExampleRecord, Examples, Origin

if TYPE_CHECKING:
    from exampleguard._catalogfile import LoadedCatalog
    from exampleguard._config import Config
    from exampleguard._documents import Document
    from exampleguard._snapshot import Tree

__all__ = [
    "ExampleList",
    "ExampleRecord",
    "ExampleSource",
    "Examples",
    "Layout",
    "LoadedTree",
    "Origin",
    "SourceContext",
]


@dataclass(frozen=True, slots=True)
class Layout:
    """Where one example's text is in a file of lines: each piece's offset, line and column.

    A piece is a physical line of the example (a continued command has several); ``place``
    maps an offset of the example's text to the 1-based line and column of that character.
    """

    offsets: tuple[int, ...]
    lines: tuple[int, ...]
    columns: tuple[int, ...]
    address: str

    @classmethod
    def of(
        cls, starts: Sequence[int], places: Sequence[tuple[int, int]], start: int, end: int
    ) -> Layout:
        """The layout of ``[start, end)`` of a text whose pieces start at ``starts``.

        ``places`` holds the line and column of each piece's first character; the address is
        ``FILE:LINE`` to be filled in by the origin (left empty here).
        """
        first = max(bisect.bisect_right(starts, start) - 1, 0)
        offsets = [0]
        lines = [places[first][0]]
        columns = [places[first][1] + start - starts[first]]
        for index in range(first + 1, len(starts)):
            if starts[index] >= end:
                break
            offsets.append(starts[index] - start)
            lines.append(places[index][0])
            columns.append(places[index][1])
        return cls(tuple(offsets), tuple(lines), tuple(columns), "")

    def place(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of character ``offset`` of the example's text."""
        piece = bisect.bisect_right(self.offsets, offset) - 1
        piece = max(piece, 0)
        return self.lines[piece], self.columns[piece] + offset - self.offsets[piece]

    def location(self, file: str, span: Span | None) -> Location:
        """The region of ``span`` of the example (its start without one) in ``file``."""
        if span is None:
            line, column = self.place(0)
            return Location(file, line, column)
        line, column = self.place(span.start)
        end_line, end_column = self.place(max(span.end - 1, span.start))
        return Location(file, line, column, end_line=end_line, end_column=end_column)


@dataclass(frozen=True, slots=True)
class LoadedTree:
    """The run's command tree as a source of examples reads it: the model and its text.

    ``live`` is true for a tree imported from the application (``document`` is then the
    snapshot the child produced, which no one can open); ``display`` is the snapshot file or
    the ``tree`` setting, as people see it.
    """

    tree: Tree
    document: Document
    live: bool
    display: str


@dataclass(frozen=True, slots=True)
class SourceContext:
    """What a source of examples may read: the configuration, the catalog, and the tree.

    ``tree`` is set only for the sources that read it (:attr:`ExampleSource.reads_tree`),
    once it is loaded, and only when one is configured.
    """

    config: Config
    catalog: LoadedCatalog
    tree: LoadedTree | None = None


class ExampleSource(Protocol):
    """A kind of place examples are read from (the catalog; documents; help text).

    ``read`` raises :class:`~exampleguard._documents.SourceError` for a file it cannot use; the
    run then stops before anything is checked (exit 2), like any unreadable input.
    """

    name: str
    """What the source is called (and, for an optional one, its configuration key)."""
    reads_tree: bool
    """Whether its examples come from the command tree: it is read once the tree is loaded
    (a live tree's own parser is asked about the examples of the others before that)."""

    def read(self, context: SourceContext) -> Examples:
        """Every example this source finds for the run."""
        ...
