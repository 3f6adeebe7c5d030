"""The example record every stage after loading works on, whatever source it was read from.

A record is data: its identity (the catalog tool it belongs to, its index), its text and its
:class:`Origin`, which says where it is in its file. The check stage reads records and never the
file they came from; the sources (:mod:`exampleguard._sources`) make them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from exampleguard._diagnostics import Diagnostic, Location, Span

__all__ = ["ExampleList", "ExampleRecord", "ExampleRegion", "Examples", "Origin"]


class Origin(Protocol):
    """Where the examples of one place of one file are, and how people address them.

    An origin is shared by every example it holds (one per catalog tool, one per document), so a
    record costs a reference to it, not a copy of its file's name and key path. Regions are
    computed only when a diagnostic asks, from the file's text.
    """

    @property
    def file(self) -> str:
        """The file, as shown to people."""
        ...

    @property
    def kind(self) -> str:
        """The kind of source the examples come from: ``catalog``, ``markdown`` or ``help``."""
        ...

    def address(self, index: int) -> str:
        """How people address example ``index`` (``TOOL_ID[INDEX]``, ``README.md:42``)."""
        ...

    def location(self, index: int, span: Span | None = None) -> Location:
        """The region of example ``index`` in its file, or of ``span`` of its text.

        Without a span, the start of the example in the file. With one, the region from the
        span's first character to its last, both mapped through the file (escapes, line
        continuations), with the key path where the file has one.
        """
        ...


@dataclass(frozen=True, slots=True)
class ExampleRecord:
    """One example, whatever it was read from: who it belongs to, its text and its origin.

    ``tool`` is the id of the catalog tool it is an example of, or ``None`` for an example that
    only names the command it runs (one in a README binds to the command path it names).
    ``index`` identifies it within its origin: its position among the tool's examples for a
    catalog, its position in the file for a document. ``(origin, index)`` is its identity;
    :attr:`address` is how people see it (``TOOL_ID[INDEX]``, ``README.md:42``).

    ``placeholders`` are the spans of the text that stand for a value the reader supplies
    (``<name>``, ``{id}``, ``...`` in documentation); a catalog example has none. ``blanks`` are
    spans (backslash-newlines between words) that read the same to the shell as blanks.
    """

    tool: str | None
    index: int
    text: str
    origin: Origin
    placeholders: tuple[Span, ...] = ()
    blanks: tuple[Span, ...] = ()

    @property
    def address(self) -> str:
        """How people address the example: ``TOOL_ID[INDEX]`` for a catalog's."""
        return self.origin.address(self.index)

    def location(self, span: Span | None = None) -> Location:
        """Where the example (or ``span`` of its text) is in its file: lines and columns."""
        return self.origin.location(self.index, span)

    def region(self, span: Span | None = None) -> ExampleRegion:
        """Where the example (or ``span`` of its text) is, for the report builder to place.

        Nothing is read or computed: the check stage says where, the report says which line.
        """
        return ExampleRegion(self.origin, self.index, span)

    def shown(self, value: str) -> str:
        """``value`` (a word of :attr:`checked_text`, a message) with placeholders as written.

        The checked text masks each placeholder (``<part>`` is checked as a plain word); what
        people and reports read names it as the example does.
        """
        if not self.placeholders:
            return value
        from exampleguard._docshell import unmask_placeholders  # noqa: PLC0415 - docs only

        return unmask_placeholders(value, self.text, self.placeholders)

    @property
    def checked_text(self) -> str:
        """The text as it is tokenized: each placeholder a plain word of the same length."""
        if not self.placeholders and not self.blanks:
            return self.text
        from exampleguard._docshell import mask_placeholders  # noqa: PLC0415 - docs only

        text = mask_placeholders(self.text, self.placeholders)
        for span in self.blanks:
            text = text[: span.start] + " " * (span.end - span.start) + text[span.end :]
        return text


@dataclass(frozen=True, slots=True)
class ExampleRegion:
    """A :class:`~exampleguard._diagnostics.Region`: ``span`` of example ``index`` of ``origin``.

    The origin that read the file maps it, when the report builder asks (:meth:`located`).
    """

    origin: Origin
    index: int
    span: Span | None = None

    @property
    def file(self) -> str:
        """The example's file, as shown to people."""
        return self.origin.file

    def located(self) -> Location:
        """The region in lines and columns, mapped through the file by the origin."""
        return self.origin.location(self.index, self.span)


class Examples:
    """The examples of a run, grouped by the catalog tool (by position) each belongs to.

    Positions are the catalog's, the same as :attr:`EffectiveTool.index`: two tools that share
    an id keep their examples apart. A source may make its records only when they are asked for
    (the catalog does): what a run keeps is what its results keep, not a second copy.

    Examples that belong to no tool (documentation, help text) are :attr:`named`: each binds to
    the command it names. Iterating and ``len`` cover the tools' examples only.
    """

    __slots__ = ()

    @property
    def named(self) -> Sequence[ExampleRecord]:
        """The examples that belong to no catalog tool, in file and line order."""
        return ()

    @property
    def positions(self) -> int:
        """How many tool positions there are (the catalog's tools)."""
        return 0

    @property
    def notes(self) -> Sequence[Diagnostic]:
        """What a source noticed while reading its files (a docs block that yields nothing)."""
        return ()

    def of_tool(self, position: int) -> Sequence[ExampleRecord]:
        """The examples of the catalog tool at ``position``, in their order."""
        del position
        return ()

    def count(self, position: int) -> int:
        """How many examples the tool at ``position`` has."""
        return len(self.of_tool(position))

    def merge(self, other: Examples) -> Examples:
        """These examples and ``other``'s, a tool's own first."""
        if not len(self) and not self.named and not self.notes:
            return other
        if not len(other) and not other.named and not other.notes:
            return self
        return _Merged(self, other)

    def __len__(self) -> int:
        return sum(self.count(position) for position in range(self.positions))

    def __iter__(self) -> Iterator[ExampleRecord]:
        for position in range(self.positions):
            yield from self.of_tool(position)


class ExampleList(Examples):
    """Examples held as records, tool position by tool position, and those of no tool."""

    __slots__ = ("_by_tool", "_named", "_notes", "_size")

    def __init__(
        self,
        by_tool: Sequence[Sequence[ExampleRecord]] = (),
        named: Sequence[ExampleRecord] = (),
        notes: Sequence[Diagnostic] = (),
    ) -> None:
        self._by_tool = tuple(tuple(records) for records in by_tool)
        self._named = tuple(named)
        self._notes = tuple(notes)
        self._size = sum(len(records) for records in self._by_tool)

    @property
    def notes(self) -> Sequence[Diagnostic]:
        """What the source noticed while reading its files."""
        return self._notes

    @property
    def named(self) -> Sequence[ExampleRecord]:
        """The examples that belong to no catalog tool."""
        return self._named

    @property
    def positions(self) -> int:
        """How many tool positions there are."""
        return len(self._by_tool)

    def of_tool(self, position: int) -> Sequence[ExampleRecord]:
        """The examples of the tool at ``position``."""
        return self._by_tool[position] if position < len(self._by_tool) else ()

    def __len__(self) -> int:
        return self._size


class _Merged(Examples):
    __slots__ = ("_first", "_second")

    def __init__(self, first: Examples, second: Examples) -> None:
        self._first, self._second = first, second

    @property
    def positions(self) -> int:
        return max(self._first.positions, self._second.positions)

    @property
    def named(self) -> Sequence[ExampleRecord]:
        return (*self._first.named, *self._second.named)

    @property
    def notes(self) -> Sequence[Diagnostic]:
        return (*self._first.notes, *self._second.notes)

    def of_tool(self, position: int) -> Sequence[ExampleRecord]:
        return (*self._first.of_tool(position), *self._second.of_tool(position))

    def count(self, position: int) -> int:
        return self._first.count(position) + self._second.count(position)

    def __len__(self) -> int:
        return len(self._first) + len(self._second)
