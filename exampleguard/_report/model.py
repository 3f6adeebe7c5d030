"""The report format (``exampleguard.report/v1``) as strict pydantic models: its contract.

These models are the source of the committed JSON Schema and the reader of the reports
``report merge`` joins. A run builds the lighter dataclasses of :mod:`exampleguard._report.data`
instead, entry for entry the same; a test keeps the two to the same fields and checks that what a
run writes validates against these.
"""

# No ``from __future__ import annotations``: see exampleguard/_model.py.

from typing import Literal

from pydantic import Field, JsonValue

from exampleguard._counts import Counts
from exampleguard._model import StrictModel, empty_list

__all__ = [
    "DiagnosticEntry",
    "DryRunEntry",
    "ExampleEntry",
    "IsolationEntry",
    "LocationEntry",
    "RelatedEntry",
    "Report",
    "ShardEntry",
    "SpanEntry",
]


class LocationEntry(StrictModel):
    """A 1-based line and column in a file, the key path of the value there, and where it ends.

    ``end_line`` and ``end_column`` (additions to SPEC section 6) are the last character of the
    located text, inclusive, mapped through the file like the start: inside a JSON string they
    count the escapes as written. Both are null where the end is not known.
    """

    line: int | None = None
    column: int | None = None
    key: str | None = None
    end_line: int | None = None
    end_column: int | None = None


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
    """One diagnostic; ``suggestion`` (an addition) is the replacement a did-you-mean proposes."""

    code: str
    severity: Literal["error", "warning"]
    tool: str | None
    example: int | None
    message: str
    hint: str | None
    suggestion: str | None = None
    file: str | None
    location: LocationEntry | None
    span: SpanEntry | None
    related: list[RelatedEntry] = Field(default_factory=empty_list)


class ExampleEntry(StrictModel):
    """The contract verdict on one example.

    ``source`` and ``address`` are additions to SPEC section 6: the kind of place the example
    was read from (``catalog``, ``markdown``, ``help``) and how people address it
    (``TOOL_ID[INDEX]``, ``README.md:42``). An example of no catalog tool has ``tool`` ``""``
    and its position in its file as ``index``.
    """

    tool: str
    index: int
    command: str
    ok: bool
    argv: list[str] | None
    path: list[str] | None
    arguments: dict[str, JsonValue] | None
    diagnostics: list[DiagnosticEntry]
    source: str = "catalog"
    address: str | None = None


class IsolationEntry(StrictModel):
    """Which sandbox ran a dry run and which guarantees held for it."""

    backend: str
    guarantees: list[str]
    not_guaranteed: list[str] = Field(default_factory=empty_list)
    bound: list[str] = Field(default_factory=empty_list)
    """Host paths bound read-only into the run's masked homes or private /tmp."""
    refused: list[str] = Field(default_factory=empty_list)
    """Paths asked to be readable that the sandbox would not uncover."""


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
    dry_runs: list[DryRunEntry] = Field(default_factory=empty_list)
    interrupted: bool = False
    shard: ShardEntry | None = None
