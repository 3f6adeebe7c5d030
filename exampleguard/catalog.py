"""The catalog: the typed tool specification agents receive (``exampleguard.catalog/v1``).

Loading a catalog gives a :class:`LoadedCatalog`: the validated model plus the
:class:`~exampleguard.sources.Document` it came from, so every later diagnostic can point at the
line and column of the tool, example or parameter it is about.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, Strict, StringConstraints, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from exampleguard.model import (
    NO_CONSTRAINTS,
    RECORD,
    Alias,
    Constraints,
    Dialect,
    Flag,
    NonEmpty,
    Parameter,
    StrictModel,
    StrictRecord,
    Text,
    Whole,
)
from exampleguard.sources import (
    Document,
    JsonArrayStream,
    KeyPath,
    NotStreamable,
    check_format,
    load_document,
    parse_document,
    read_text,
    validate_model,
)

__all__ = [
    "CATALOG_FORMAT",
    "Catalog",
    "DryRun",
    "Example",
    "LoadedCatalog",
    "Safety",
    "Tool",
    "load_catalog",
]

CATALOG_FORMAT = "exampleguard.catalog/v1"

Evidence = Annotated[
    str, Strict(), StringConstraints(strip_whitespace=False, min_length=1, pattern=r"\S")
]


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class Safety(StrictRecord):
    """Informational safety metadata. Nothing is inferred from it, least of all a dry run."""

    effect: Literal["read", "write", "destructive", "exec"] | None = None
    risk: Literal["low", "medium", "high"] | None = None
    confirmation: Literal["none", "required"] | None = None
    idempotent: Flag | None = None
    bypass_flags: list[NonEmpty] = Field(default_factory=list)


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class DryRun(StrictRecord):
    """An explicit, reviewed dry-run capability: the only thing that makes a tool eligible."""

    flag: NonEmpty | None
    reviewed: Literal[True]
    evidence: Evidence
    fixtures: NonEmpty | None = None
    expect_exit: Whole = 0


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class Example(StrictRecord):
    """One worked example: a single command line that starts with the program."""

    command: Text
    description: Text | None = None


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class Tool(StrictRecord):
    """One runnable command offered to agents, with its parameters, rules and examples."""

    id: NonEmpty
    command: list[NonEmpty]
    aliases: list[Alias] = Field(default_factory=list)
    summary: Text | None = None
    description: Text | None = None
    parameters: list[Parameter] = Field(default_factory=list)
    constraints: Constraints = Field(default_factory=lambda: NO_CONSTRAINTS)
    safety: Safety | None = None
    dry_run: DryRun | None = None
    examples: list[Example] = Field(default_factory=list)

    def parameter(self, name: str) -> Parameter | None:
        """The parameter called ``name``, if the tool declares one."""
        return next((p for p in self.parameters if p.name == name), None)


class Catalog(StrictModel):
    """A program's whole tool catalog."""

    format: Literal["exampleguard.catalog/v1"]
    program: NonEmpty
    dialect: Dialect | None = None
    tools: list[Tool]


@dataclass(frozen=True, slots=True)
class LoadedCatalog:
    """A validated catalog and the document it was read from.

    ``stated`` holds, for each parameter that states any, the overlay-relevant keys the file
    writes explicitly (``type``, ``choices``, ...): an overlay that restates a default is still
    compared with the executable. The parsed data itself is not kept; positions come from the
    text.
    """

    catalog: Catalog
    document: Document
    stated: dict[tuple[int, int], frozenset[str]] = field(default_factory=dict)

    def tool_key(self, index: int) -> KeyPath:
        """Key path of the tool at ``index`` in the file."""
        return ("tools", index)

    def example_key(self, tool_index: int, example_index: int) -> KeyPath:
        """Key path of an example's command string in the file."""
        return ("tools", tool_index, "examples", example_index, "command")


def load_catalog(path: Path, display: str) -> LoadedCatalog:
    """Read, parse and validate the catalog at ``path``; raise ``SourceError`` if it is unusable."""
    if path.suffix.lower() != ".json":
        return _load_whole(load_document(path, display))
    text = read_text(path, display)
    try:
        return _load_streamed(Document(path, display, text, None, "json"))
    except (NotStreamable, ValidationError):
        # Something is wrong with the file: the ordinary reading finds it and says where.
        return _load_whole(parse_document(text, path, display, "json"))


_TOOL = TypeAdapter(Tool)


def _load_streamed(document: Document) -> LoadedCatalog:
    # A large catalog's parsed data outweighs the models built from it. Streamed, each tool's
    # data is validated and dropped before the next one is parsed, so the two never coexist.
    stream = JsonArrayStream(document.text, "tools")
    tools: list[Tool] = []
    stated: dict[tuple[int, int], frozenset[str]] = {}
    for index, data in enumerate(stream):
        tools.append(_TOOL.validate_python(data))
        _note_stated_keys(stated, index, data)
    if stream.head.get("format") != CATALOG_FORMAT:
        raise NotStreamable
    head = Catalog.model_validate({**stream.head, "tools": []})
    return LoadedCatalog(head.model_copy(update={"tools": tools}), document, stated)


def _load_whole(document: Document) -> LoadedCatalog:
    check_format(document, CATALOG_FORMAT)
    catalog = validate_model(Catalog, document)
    stated = _stated_keys(document.data)
    # The raw data is as large as the models built from it; everything later reads the models,
    # and finds positions in the text.
    document.data = None
    return LoadedCatalog(catalog, document, stated)


OVERLAY_KEYS = frozenset({"type", "choices", "multiple", "count", "nargs"})
"""The parameter keys whose explicit values an overlay must match in the executable."""


_SHARED: dict[frozenset[str], frozenset[str]] = {}


def _stated_keys(data: Any) -> dict[tuple[int, int], frozenset[str]]:
    stated: dict[tuple[int, int], frozenset[str]] = {}
    for tool_index, tool in enumerate(data.get("tools", [])):
        _note_stated_keys(stated, tool_index, tool)
    return stated


def _note_stated_keys(
    stated: dict[tuple[int, int], frozenset[str]], tool_index: int, tool: Any
) -> None:
    for position, parameter in enumerate(tool.get("parameters", [])):
        keys = OVERLAY_KEYS.intersection(parameter)
        if keys:
            # Few distinct sets exist; share them rather than keep one per parameter.
            stated[(tool_index, position)] = _SHARED.setdefault(keys, keys)
