"""The catalog: the typed tool specification agents receive (``exampleguard.catalog/v1``).

Loading a catalog gives a :class:`LoadedCatalog`: the validated model plus the
:class:`~exampleguard.documents.Document` it came from, so every later diagnostic can point at the
line and column of the tool or parameter it is about. Its examples become records
(:mod:`exampleguard.sources.catalog`) that locate themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass

from exampleguard.documents import (
    Document,
    JsonArrayStream,
    NotStreamable,
    check_format,
    load_document,
    parse_document,
    read_text,
    validate_model,
)
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


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class Safety(StrictRecord):
    """Informational safety metadata. Nothing is inferred from it, least of all a dry run."""

    effect: Literal["read", "write", "destructive", "exec"] | None = None
    risk: Literal["low", "medium", "high"] | None = None
    confirmation: Literal["none", "required"] | None = None
    idempotent: Flag | None = None
    bypass_flags: list[NonEmpty] = Field(default_factory=list)


_REVIEWED_NEEDS_EVIDENCE: dict[str, Any] = {
    "if": {"properties": {"reviewed": {"const": True}}},
    "then": {
        "required": ["evidence"],
        "properties": {"evidence": {"type": "string", "pattern": r"\S"}},
    },
}


@pydantic_dataclass(
    frozen=True,
    slots=True,
    config=ConfigDict(extra="forbid", json_schema_extra=_REVIEWED_NEEDS_EVIDENCE),
)
class DryRun(StrictRecord):
    """A dry-run capability: reviewed, it is the only thing that makes a tool eligible.

    ``reviewed`` must be literally ``true``, with non-empty ``evidence``, for the capability to
    count (SPEC 3.2). ``reviewed = false`` (an addition) is an unreviewed stub, as ``init``
    writes for a command with a preview flag: it is checked (its flag must be a flag of the
    command) but makes nothing eligible and is not counted, until a reviewer sets ``reviewed``
    to ``true`` and writes the evidence.
    """

    flag: NonEmpty | None
    reviewed: Flag
    evidence: Text | None = None
    fixtures: NonEmpty | None = None
    expect_exit: Whole = 0

    @model_validator(mode="after")
    def _evidenced(self) -> DryRun:
        if self.reviewed and (self.evidence is None or not self.evidence.strip()):
            raise ValueError(
                "a reviewed dry-run capability needs evidence: where the preview is shown safe"
            )
        return self


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

    @property
    def capability(self) -> DryRun | None:
        """The reviewed dry-run capability, if the tool has one (an unreviewed stub is none)."""
        dry_run = self.dry_run
        return dry_run if dry_run is not None and dry_run.reviewed else None


class Catalog(StrictModel):
    """A program's whole tool catalog."""

    format: Literal["exampleguard.catalog/v1"]
    program: NonEmpty
    dialect: Dialect | None = None
    tools: list[Tool]


@dataclass(frozen=True, slots=True)
class LoadedCatalog:
    """A validated catalog and the document it was read from.

    ``stated`` holds, tool by tool and parameter by parameter, the overlay-relevant keys the file
    writes explicitly (``type``, ``choices``, ...): an overlay that restates a default is still
    compared with the executable. The parsed data itself is not kept; positions come from the
    text.
    """

    catalog: Catalog
    document: Document
    stated: list[tuple[frozenset[str], ...]] = field(default_factory=list)

    def stated_keys(self, tool_index: int, position: int) -> frozenset[str]:
        """The overlay keys the parameter at ``position`` of a tool writes explicitly.

        A catalog built in code rather than read from a file states none.
        """
        try:
            return self.stated[tool_index][position]
        except IndexError:
            return frozenset()


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
    stated = _StatedKeys()
    shared: dict[str, str] = {}
    for data in stream:
        _share_parameter_strings(data, shared)
        tools.append(_TOOL.validate_python(data))
        stated.note(data)
    if stream.head.get("format") != CATALOG_FORMAT:
        raise NotStreamable
    head = Catalog.model_validate({**stream.head, "tools": []})
    return LoadedCatalog(head.model_copy(update={"tools": tools}), document, stated.per_tool)


def _load_whole(document: Document) -> LoadedCatalog:
    check_format(document, CATALOG_FORMAT)
    catalog = validate_model(Catalog, document)
    stated = _StatedKeys()
    for tool in document.data.get("tools", []):
        stated.note(tool)
    # The raw data is as large as the models built from it; everything later reads the models,
    # and finds positions in the text.
    document.data = None
    return LoadedCatalog(catalog, document, stated.per_tool)


def _share_parameter_strings(tool: Any, shared: dict[str, str]) -> None:
    # Parameter names, flags, types and choices recur across the tools of a program (every
    # command has its --format and --verbose): one string object each, not one per tool.
    parameters = tool.get("parameters") if isinstance(tool, dict) else None
    if not isinstance(parameters, list):
        return
    for parameter in parameters:
        if not isinstance(parameter, dict):
            continue
        for key, value in parameter.items():
            if isinstance(value, str):
                parameter[key] = shared.setdefault(value, value)
            elif isinstance(value, list):
                parameter[key] = [
                    shared.setdefault(item, item) if isinstance(item, str) else item
                    for item in value
                ]


OVERLAY_KEYS = frozenset({"type", "choices", "multiple", "count", "nargs"})
"""The parameter keys whose explicit values an overlay must match in the executable."""


class _StatedKeys:
    """Collects, tool by tool, the overlay keys each parameter states explicitly."""

    def __init__(self) -> None:
        self.per_tool: list[tuple[frozenset[str], ...]] = []
        # Few distinct sets, and few distinct sequences of them, exist: each is kept once.
        self._sets: dict[frozenset[str], frozenset[str]] = {}
        self._sequences: dict[tuple[frozenset[str], ...], tuple[frozenset[str], ...]] = {}

    def note(self, tool: Any) -> None:
        """Record the stated keys of ``tool``'s parameters (raw, already validated data)."""
        sequence = tuple(
            self._sets.setdefault(keys, keys)
            for keys in (OVERLAY_KEYS.intersection(p) for p in tool.get("parameters", []))
        )
        self.per_tool.append(self._sequences.setdefault(sequence, sequence))
