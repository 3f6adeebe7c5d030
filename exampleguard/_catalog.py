"""The catalog: the typed tool specification agents receive (``exampleguard.catalog/v1``).

The models only; :mod:`exampleguard._catalogfile` reads a catalog file into them. The check
stage works on these records and never on the file they came from.
"""

# No ``from __future__ import annotations``: see exampleguard/_model.py.
from typing import Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass

from exampleguard._model import (
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
    empty_list,
)

__all__ = ["CATALOG_FORMAT", "Catalog", "DryRun", "Example", "Safety", "Tool"]

CATALOG_FORMAT = "exampleguard.catalog/v1"


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class Safety(StrictRecord):
    """Safety metadata, checked against the real command's gate (:mod:`exampleguard._safety`).

    It never creates, widens or implies a dry-run capability.
    """

    effect: Literal["read", "write", "destructive", "exec"] | None = None
    risk: Literal["low", "medium", "high"] | None = None
    confirmation: Literal["none", "required"] | None = None
    idempotent: Flag | None = None
    bypass_flags: list[NonEmpty] = Field(default_factory=empty_list)


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
    def _evidenced(self) -> Self:
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
    aliases: list[Alias] = Field(default_factory=empty_list)
    summary: Text | None = None
    description: Text | None = None
    parameters: list[Parameter] = Field(default_factory=empty_list)
    constraints: Constraints = Field(default_factory=lambda: NO_CONSTRAINTS)
    safety: Safety | None = None
    dry_run: DryRun | None = None
    examples: list[Example] = Field(default_factory=empty_list)

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
