"""The report (``exampleguard.report/v1``): the one data structure every renderer reads.

The pydantic model is the contract of the JSON output and the source of its JSON Schema.
:func:`build_report` produces plain JSON data of that shape directly from an evaluation, which
keeps large runs fast; a test checks that the data validates against the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, JsonValue

from exampleguard.counts import Counts
from exampleguard.diagnostics import Diagnostic, Location, Related, Span
from exampleguard.model import StrictModel

__all__ = [
    "REPORT_FORMAT",
    "DiagnosticEntry",
    "DryRunEntry",
    "ExampleEntry",
    "Report",
    "ShardEntry",
    "diagnostic_data",
    "subject_of",
]

REPORT_FORMAT = "exampleguard.report/v1"


class LocationEntry(StrictModel):
    """A 1-based line and column in a file, and the key path of the value there."""

    line: int | None = None
    column: int | None = None
    key: str | None = None


class SpanEntry(StrictModel):
    """A half-open character range inside an example's text."""

    start: int
    end: int


class RelatedEntry(StrictModel):
    """A secondary place a diagnostic points at."""

    message: str
    file: str | None = None
    location: LocationEntry | None = None
    span: SpanEntry | None = None


class DiagnosticEntry(StrictModel):
    """One diagnostic."""

    code: str
    severity: Literal["error", "warning"]
    tool: str | None
    example: int | None
    message: str
    hint: str | None
    file: str | None
    location: LocationEntry | None
    span: SpanEntry | None
    related: list[RelatedEntry] = Field(default_factory=list)


class ExampleEntry(StrictModel):
    """The contract verdict on one example."""

    tool: str
    index: int
    command: str
    ok: bool
    argv: list[str] | None
    path: list[str] | None
    arguments: dict[str, JsonValue] | None
    diagnostics: list[DiagnosticEntry]


class IsolationEntry(StrictModel):
    """Which sandbox ran a dry run and which guarantees held for it."""

    backend: str
    guarantees: list[str]
    not_guaranteed: list[str] = Field(default_factory=list)


class DryRunEntry(StrictModel):
    """The outcome of one dry run."""

    tool: str
    index: int
    argv: list[str]
    status: Literal["passed", "failed", "timed-out", "crashed", "not-started"]
    exit_code: int | None
    duration_s: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    isolation: IsolationEntry
    detail: str | None = None


class ShardEntry(StrictModel):
    """Which part of a sharded run a report covers (``--shard K/N``)."""

    index: int = Field(ge=1)
    total: int = Field(ge=1)


class Report(StrictModel):
    """A whole run: verdicts, diagnostics, counts and dry runs.

    ``catalog``, ``interrupted`` and ``shard`` are additions to SPEC section 6: the catalog file
    the run checked (JUnit names its suite after it, SARIF falls back to it), whether Ctrl-C or
    SIGTERM stopped the run, and which shard a shard's report covers.
    """

    format: Literal["exampleguard.report/v1"]
    ok: bool
    catalog: str | None = None
    counts: Counts
    examples: list[ExampleEntry]
    diagnostics: list[DiagnosticEntry]
    dry_runs: list[DryRunEntry] = Field(default_factory=list)
    interrupted: bool = False
    shard: ShardEntry | None = None


def _location(location: Location | None) -> dict[str, Any] | None:
    if location is None or (location.line is None and location.key is None):
        return None
    return {"line": location.line, "column": location.column, "key": location.key}


def _span(span: Span | None) -> dict[str, int] | None:
    return None if span is None else {"start": span.start, "end": span.end}


def _related(related: Iterable[Related]) -> list[dict[str, Any]]:
    return [
        {
            "message": item.message,
            "file": item.location.file if item.location else None,
            "location": _location(item.location),
            "span": _span(item.span),
        }
        for item in related
    ]


def diagnostic_data(diagnostic: Diagnostic) -> dict[str, Any]:
    """One diagnostic as report data."""
    return {
        "code": diagnostic.code,
        "severity": diagnostic.severity.value,
        "tool": diagnostic.tool,
        "example": diagnostic.example,
        "message": diagnostic.message,
        "hint": diagnostic.hint,
        "file": diagnostic.location.file if diagnostic.location else None,
        "location": _location(diagnostic.location),
        "span": _span(diagnostic.span),
        "related": _related(diagnostic.related),
    }


def subject_of(diagnostic: dict[str, Any]) -> str | None:
    """The example or tool a diagnostic (as report data) is about: ``TOOL_ID[INDEX]``."""
    if diagnostic.get("tool") is None:
        return None
    if diagnostic.get("example") is None:
        return str(diagnostic["tool"])
    return f"{diagnostic['tool']}[{diagnostic['example']}]"
