"""The catalog as a source of examples: ``tools[N].examples[I].command`` of the catalog file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from exampleguard._catalogfile import LoadedCatalog
from exampleguard._diagnostics import Location, Span
from exampleguard._documents import Document
from exampleguard._sources._records import ExampleRecord, Examples, SourceContext
from exampleguard._textindex import KeyPath

__all__ = ["CatalogExamples", "CatalogOrigin", "CatalogSource", "catalog_examples"]


@dataclass(frozen=True, slots=True, eq=False)
class CatalogOrigin:
    """The examples of one catalog tool: shared by all of them, located in the catalog's text."""

    document: Document
    position: int
    """The tool's position in the catalog's ``tools``."""
    tool: str

    @property
    def file(self) -> str:
        """The catalog file, as shown to people."""
        return self.document.display

    @property
    def kind(self) -> str:
        """``catalog``."""
        return "catalog"

    def address(self, index: int) -> str:
        """``TOOL_ID[INDEX]``."""
        return f"{self.tool}[{index}]"

    def key(self, index: int) -> KeyPath:
        """The key path of example ``index``'s command string in the catalog."""
        return ("tools", self.position, "examples", index, "command")

    def location(self, index: int, span: Span | None = None) -> Location:
        """Where example ``index`` (or ``span`` of its text) is in the catalog file."""
        if span is None:
            return self.document.location(self.key(index), at_key=False)
        return self.document.string_location(self.key(index), span.start, span.end)


class CatalogExamples(Examples):
    """The catalog's examples, made into records tool by tool when they are asked for.

    Nothing is copied at load: a tool's records (and their shared origin) exist from when the
    pipeline checks the tool, for as long as its results keep them.
    """

    __slots__ = ("_loaded", "_size")

    def __init__(self, loaded: LoadedCatalog) -> None:
        self._loaded = loaded
        self._size = sum(len(tool.examples) for tool in loaded.catalog.tools)

    @property
    def positions(self) -> int:
        """The number of tools in the catalog."""
        return len(self._loaded.catalog.tools)

    def of_tool(self, position: int) -> Sequence[ExampleRecord]:
        """The records of the examples of ``tools[position]``."""
        tools = self._loaded.catalog.tools
        if position >= len(tools):
            return ()
        tool = tools[position]
        origin = CatalogOrigin(self._loaded.document, position, tool.id)
        return [
            ExampleRecord(tool.id, index, example.command, origin)
            for index, example in enumerate(tool.examples)
        ]

    def count(self, position: int) -> int:
        """How many examples ``tools[position]`` has."""
        tools = self._loaded.catalog.tools
        return len(tools[position].examples) if position < len(tools) else 0

    def __len__(self) -> int:
        return self._size


def catalog_examples(loaded: LoadedCatalog) -> CatalogExamples:
    """Every example of the catalog, tool by tool, each with the origin that locates it."""
    return CatalogExamples(loaded)


class CatalogSource:
    """The catalog's own examples: always read, since the catalog is required."""

    name = "catalog"
    reads_tree = False

    def read(self, context: SourceContext) -> Examples:
        """Every example of the run's catalog."""
        return catalog_examples(context.catalog)
