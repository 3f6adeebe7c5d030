"""The catalog: the typed tool specification agents receive (``exampleguard.catalog/v1``).

Loading a catalog gives a :class:`LoadedCatalog`: the validated model plus the
:class:`~exampleguard.sources.Document` it came from, so every later diagnostic can point at the
line and column of the tool, example or parameter it is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from exampleguard.model import Constraints, Dialect, NonEmpty, Parameter, StrictModel
from exampleguard.sources import (
    Document,
    KeyPath,
    check_format,
    load_document,
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

Evidence = Annotated[str, StringConstraints(strip_whitespace=False, min_length=1, pattern=r"\S")]


class Safety(StrictModel):
    """Informational safety metadata. Nothing is inferred from it, least of all a dry run."""

    effect: Literal["read", "write", "destructive", "exec"] | None = None
    risk: Literal["low", "medium", "high"] | None = None
    confirmation: Literal["none", "required"] | None = None
    idempotent: bool | None = None
    bypass_flags: list[NonEmpty] = Field(default_factory=list)


class DryRun(StrictModel):
    """An explicit, reviewed dry-run capability: the only thing that makes a tool eligible."""

    flag: NonEmpty | None
    reviewed: Literal[True]
    evidence: Evidence
    fixtures: NonEmpty | None = None
    expect_exit: int = 0


class Example(StrictModel):
    """One worked example: a single command line that starts with the program."""

    command: str
    description: str | None = None


class Tool(StrictModel):
    """One runnable command offered to agents, with its parameters, rules and examples."""

    id: NonEmpty
    command: list[NonEmpty]
    aliases: list[list[NonEmpty]] = Field(default_factory=list)
    summary: str | None = None
    description: str | None = None
    parameters: list[Parameter] = Field(default_factory=list)
    constraints: Constraints = Field(default_factory=Constraints)
    safety: Safety | None = None
    dry_run: DryRun | None = None
    examples: list[Example] = Field(default_factory=list)

    @field_validator("aliases")
    @classmethod
    def _aliases_not_empty(cls, aliases: list[list[str]]) -> list[list[str]]:
        if any(not alias for alias in aliases):
            raise ValueError("an alias is a non-empty path of command words")
        return aliases

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
    """A validated catalog and the document it was read from."""

    catalog: Catalog
    document: Document

    def tool_key(self, index: int) -> KeyPath:
        """Key path of the tool at ``index`` in the file."""
        return ("tools", index)

    def example_key(self, tool_index: int, example_index: int) -> KeyPath:
        """Key path of an example's command string in the file."""
        return ("tools", tool_index, "examples", example_index, "command")


def load_catalog(path: Path, display: str) -> LoadedCatalog:
    """Read, parse and validate the catalog at ``path``; raise ``SourceError`` if it is unusable."""
    document = load_document(path, display)
    check_format(document, CATALOG_FORMAT)
    return LoadedCatalog(validate_model(Catalog, document), document)
