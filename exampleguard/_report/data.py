"""The typed report (``exampleguard.report/v1``): what the builder makes and every renderer reads.

Frozen dataclasses, one per entry of the JSON format, in the order the JSON writes their keys.
They are the light twin of the pydantic models in :mod:`exampleguard._report.model`, which stay the
contract: the committed JSON Schema is generated from those, and ``report merge`` reads its inputs
with them. A run builds these instead because a report of 50,000 examples takes a fraction of the
time and memory as dataclasses (``tests/bench/bench_report.py`` measures both). A test holds the
two to the same fields and checks that what is written from these validates against the models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from exampleguard._diagnostics import Severity

if TYPE_CHECKING:
    from pydantic import JsonValue

    from exampleguard._counts import Counts

__all__ = [
    "FULL_BACKEND",
    "REPORT_FORMAT",
    "DiagnosticEntry",
    "DryRunEntry",
    "ExampleEntry",
    "IsolationEntry",
    "IsolationGap",
    "LocationEntry",
    "RelatedEntry",
    "Report",
    "RunStatus",
    "ShardEntry",
    "SpanEntry",
    "Tally",
]

REPORT_FORMAT: Literal["exampleguard.report/v1"] = "exampleguard.report/v1"

RunStatus = Literal["passed", "failed", "timed-out", "crashed", "not-started"]
"""How a dry run ended, as the report spells it (SPEC section 5)."""

NOT_WRITTEN = {"json": False}
"""Field metadata of what a report holds for its renderers but does not write (the tally)."""


@dataclass(frozen=True, slots=True)
class LocationEntry:
    """A place in a file; ``end_line``/``end_column`` close it, inclusive (see the model)."""

    line: int | None = None
    column: int | None = None
    key: str | None = None
    end_line: int | None = None
    end_column: int | None = None


@dataclass(frozen=True, slots=True)
class SpanEntry:
    """A half-open character range inside an example's text."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class RelatedEntry:
    """A secondary place a diagnostic points at."""

    message: str
    file: str | None = None
    location: LocationEntry | None = None
    span: SpanEntry | None = None


@dataclass(frozen=True, slots=True)
class DiagnosticEntry:
    """One diagnostic; ``suggestion`` (an addition) is the replacement a did-you-mean proposes."""

    code: str
    severity: Severity
    tool: str | None
    example: int | None
    message: str
    hint: str | None
    suggestion: str | None
    file: str | None
    location: LocationEntry | None
    span: SpanEntry | None
    related: tuple[RelatedEntry, ...] = ()

    @property
    def is_error(self) -> bool:
        """Whether this diagnostic fails the run."""
        return self.severity is Severity.ERROR

    @property
    def subject(self) -> str | None:
        """The example or tool the diagnostic is about: ``TOOL_ID[INDEX]``, ``TOOL_ID`` or none."""
        if self.tool is None:
            return None
        if self.example is None:
            return self.tool
        return f"{self.tool}[{self.example}]"


@dataclass(frozen=True, slots=True)
class ExampleEntry:
    """The contract verdict on one example."""

    tool: str
    index: int
    command: str
    ok: bool
    argv: tuple[str, ...] | None
    path: tuple[str, ...] | None
    arguments: Mapping[str, JsonValue] | None
    diagnostics: tuple[DiagnosticEntry, ...]
    source: str = "catalog"
    """Where the example was read from: ``catalog``, ``markdown`` or ``help``."""
    address: str | None = None
    """How people address it (``TOOL_ID[INDEX]``, ``README.md:42``); see :attr:`name`."""

    @property
    def name(self) -> str:
        """How people address the example: ``TOOL_ID[INDEX]``, or its place in its file."""
        return self.address if self.address is not None else f"{self.tool}[{self.index}]"


@dataclass(frozen=True, slots=True)
class IsolationEntry:
    """Which sandbox ran a dry run and which guarantees held for it."""

    backend: str
    guarantees: tuple[str, ...]
    not_guaranteed: tuple[str, ...] = ()
    bound: tuple[str, ...] = ()
    """Host paths bound read-only into the run's masked homes or private /tmp."""
    refused: tuple[str, ...] = ()
    """Paths asked to be readable that the sandbox would not uncover."""


FULL_BACKEND = "bwrap"
"""The backend that gives the full guarantee set (``sandbox``'s bubblewrap backend)."""


@dataclass(frozen=True, slots=True)
class IsolationGap:
    """Dry runs that ran with less than the full sandbox: the backend and what did not hold."""

    backend: str
    not_guaranteed: tuple[str, ...]
    runs: tuple[str, ...]
    """The addresses (``TOOL_ID[INDEX]``) of the runs, in report order."""

    def describe(self) -> str:
        """One line for people: how many runs, under what, and every guarantee that failed."""
        count = len(self.runs)
        runs = f"{count} dry run{'s' if count != 1 else ''}"
        if self.backend == FULL_BACKEND:
            how = f"{runs} ran under {self.backend} without its full guarantee set"
        else:
            how = f"{runs} ran under {self.backend}, not the full sandbox ({FULL_BACKEND})"
        held = ", ".join(self.not_guaranteed) or "nothing reported"
        return f"{how}; not guaranteed: {held}"


@dataclass(frozen=True, slots=True)
class DryRunEntry:
    """The outcome of one dry run."""

    tool: str
    index: int
    argv: tuple[str, ...]
    status: RunStatus
    exit_code: int | None
    duration_s: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    isolation: IsolationEntry
    detail: str | None = None

    @property
    def passed(self) -> bool:
        """Whether the run passed; every other status fails the report."""
        return self.status == "passed"

    @property
    def interrupted(self) -> bool:
        """Whether the session's interruption stopped the run, or kept it from starting.

        Such a run neither passed nor failed (the report is ``interrupted`` and does not pass).
        """
        return self.detail == "interrupted" and self.status in ("crashed", "not-started")

    @property
    def address(self) -> str:
        """The example the run executed: ``TOOL_ID[INDEX]``."""
        return f"{self.tool}[{self.index}]"


@dataclass(frozen=True, slots=True)
class ShardEntry:
    """Which part of a sharded run a report covers (``--shard K/N``)."""

    index: int
    total: int


@dataclass(frozen=True, slots=True)
class Tally:
    """The figures behind the verdict, counted once by the builder for every renderer."""

    errors: int
    warnings: int
    failed_examples: int
    failed_dry_runs: int
    unstarted_dry_runs: int = 0
    """Dry runs that never started (an interrupted session's rest): counted, never run."""
    dry_runs_asked: bool = False
    """Whether the run was asked to execute dry runs (``dryrun``), even if none was eligible."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """A whole run: verdicts, diagnostics, counts and dry runs.

    ``catalog``, ``interrupted`` and ``shard`` are additions to SPEC section 6: the catalog file
    the run checked (JUnit names its suite after it, SARIF falls back to it), whether Ctrl-C or
    SIGTERM stopped the run, and which shard a shard's report covers. ``ok`` and ``tally`` are
    decided by the builder; renderers read them and never count for themselves.
    """

    format: Literal["exampleguard.report/v1"] = REPORT_FORMAT
    ok: bool
    catalog: str | None
    counts: Counts
    examples: tuple[ExampleEntry, ...]
    diagnostics: tuple[DiagnosticEntry, ...]
    dry_runs: tuple[DryRunEntry, ...] = ()
    interrupted: bool = False
    shard: ShardEntry | None = None
    tally: Tally = field(metadata=NOT_WRITTEN)

    @property
    def isolation_gaps(self) -> tuple[IsolationGap, ...]:
        """Runs that did not get the full sandbox, one entry per backend and missing set.

        A run that never started needed nothing to hold and is left out; an empty result means
        every run that ran had the full guarantee set.
        """
        groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for run in self.dry_runs:
            isolation = run.isolation
            if run.status == "not-started":
                continue
            if isolation.backend == FULL_BACKEND and not isolation.not_guaranteed:
                continue
            key = (isolation.backend, tuple(isolation.not_guaranteed))
            groups.setdefault(key, []).append(run.address)
        return tuple(
            IsolationGap(backend, missing, tuple(runs))
            for (backend, missing), runs in groups.items()
        )
