"""Building the typed report: the one place that turns findings into :class:`Report` entries.

Every report comes out of :func:`assemble`, which decides the verdict (``ok`` and the tally the
summaries show): :func:`build_report` for an evaluation (with its dry runs), :func:`merge_report`
for the JSON reports of ``--shard`` runs. Dry-run entries come from the sandbox's typed outcome
(:func:`dry_run_entry`), diagnostics from the diagnostic record (:func:`diagnostic_entry`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, assert_never

from exampleguard._diagnostics import Diagnostic, Location, Related, Severity, Span, neutralise
from exampleguard._report.data import (
    DiagnosticEntry,
    DryRunEntry,
    ExampleEntry,
    IsolationEntry,
    LocationEntry,
    RelatedEntry,
    Report,
    RunStatus,
    ShardEntry,
    SpanEntry,
    Tally,
)

if TYPE_CHECKING:
    import sandbox
    from exampleguard._counts import Counts
    from exampleguard._pipeline import Evaluation, ExampleResult

    # The strict models only type what ``report merge`` reads; a run builds the dataclasses.
    from exampleguard._report import model

__all__ = [
    "assemble",
    "build_report",
    "diagnostic_entry",
    "dry_run_entry",
    "located",
    "merge_report",
    "unusable_report",
]


def assemble(
    *,
    catalog: str | None,
    counts: Counts,
    examples: Sequence[ExampleEntry],
    diagnostics: Sequence[DiagnosticEntry],
    dry_runs: Sequence[DryRunEntry] = (),
    interrupted: bool = False,
    shard: ShardEntry | None = None,
    dry_runs_asked: bool = False,
) -> Report:
    """The report of these entries, with its verdict: the only place a verdict is decided.

    The run fails on any error diagnostic, any dry run that did not pass, or an interruption.
    ``dry_runs_asked`` says the run was to execute dry runs, so that none at all is reported.
    """
    errors = sum(1 for d in diagnostics if d.is_error)
    failed_dry_runs = sum(1 for run in dry_runs if not run.passed)
    tally = Tally(
        errors=errors,
        warnings=len(diagnostics) - errors,
        failed_examples=sum(1 for example in examples if not example.ok),
        failed_dry_runs=failed_dry_runs,
        unstarted_dry_runs=sum(1 for run in dry_runs if run.status == "not-started"),
        dry_runs_asked=dry_runs_asked or bool(dry_runs),
    )
    return Report(
        ok=errors == 0 and failed_dry_runs == 0 and not interrupted,
        catalog=catalog,
        counts=counts,
        examples=tuple(examples),
        diagnostics=tuple(diagnostics),
        dry_runs=tuple(dry_runs),
        interrupted=interrupted,
        shard=shard,
        tally=tally,
    )


def unusable_report(diagnostics: Iterable[Diagnostic], catalog: str | None = None) -> Report:
    """The report of a run that could not be evaluated (exit 2): nothing checked, ``ok`` false."""
    # A model module: imported on this path alone.
    from exampleguard._counts import Counts  # noqa: PLC0415

    empty = Counts(
        tools=0,
        examples=0,
        contract_validated=0,
        dry_run_eligible=0,
        dry_run_narrowed=0,
        excluded=0,
    )
    entries = [diagnostic_entry(d) for d in diagnostics]
    return assemble(catalog=catalog, counts=empty, examples=[], diagnostics=entries)


def build_report(
    evaluation: Evaluation,
    *,
    dry_runs: Iterable[DryRunEntry] = (),
    extra_diagnostics: Iterable[Diagnostic] = (),
    interrupted: bool = False,
    shard: tuple[int, int] | None = None,
    dry_runs_asked: bool = False,
) -> Report:
    """The report of an evaluation, its dry runs and the diagnostics those added."""
    # An example's diagnostics are also the report's: each becomes one entry, shared by both.
    entries: dict[int, DiagnosticEntry] = {}

    def entry_of(diagnostic: Diagnostic) -> DiagnosticEntry:
        found = entries.get(id(diagnostic))
        if found is None:
            found = entries[id(diagnostic)] = diagnostic_entry(diagnostic)
        return found

    examples = [_example_entry(result, entry_of) for result in evaluation.examples]
    diagnostics = [entry_of(d) for d in (*evaluation.diagnostics, *extra_diagnostics)]
    return assemble(
        catalog=evaluation.inputs.catalog.document.display,
        counts=evaluation.counts,
        examples=examples,
        diagnostics=diagnostics,
        dry_runs=list(dry_runs),
        interrupted=interrupted,
        shard=ShardEntry(index=shard[0], total=shard[1]) if shard else None,
        dry_runs_asked=dry_runs_asked,
    )


def _example_entry(
    result: ExampleResult, entry_of: Callable[[Diagnostic], DiagnosticEntry]
) -> ExampleEntry:
    return ExampleEntry(
        # An example of no tool (documentation) has no tool id: its address says where it is.
        tool=result.tool or "",
        index=result.index,
        command=result.command,
        ok=result.ok,
        argv=result.argv,
        path=result.path,
        arguments=result.arguments,
        diagnostics=tuple(entry_of(d) for d in result.diagnostics),
        source=result.origin.kind,
        address=result.address,
    )


def merge_report(
    reports: Sequence[model.Report], *, counts: Counts, extra_diagnostics: Iterable[Diagnostic]
) -> Report:
    """One report from the JSON reports of the shards of a run (already checked to fit).

    Examples are in tool and index order, diagnostics and dry runs in the order of the reports,
    then ``extra_diagnostics`` (the counts compared with the committed ones). The catalog is the
    first report's that names one: the shards of one run check the same catalog.
    """
    # Catalog examples in tool order; the others (from the first shard) as that shard had them.
    examples = sorted(
        (_example_from(e) for r in reports for e in r.examples),
        key=lambda e: (0, e.tool, e.index) if e.source == "catalog" else (1, "", 0),
    )
    diagnostics = [_diagnostic_from(d) for r in reports for d in r.diagnostics]
    diagnostics.extend(diagnostic_entry(d) for d in extra_diagnostics)
    return assemble(
        catalog=next((r.catalog for r in reports if r.catalog is not None), None),
        counts=counts,
        examples=examples,
        diagnostics=diagnostics,
        dry_runs=[_dry_run_from(run) for r in reports for run in r.dry_runs],
        interrupted=any(r.interrupted for r in reports),
    )


def dry_run_entry(
    tool: str, index: int, argv: Sequence[str], outcome: sandbox.Outcome
) -> DryRunEntry:
    """The report entry of one dry run of ``TOOL_ID[INDEX]`` from the sandbox's outcome."""
    return DryRunEntry(
        tool=tool,
        index=index,
        argv=tuple(argv),
        status=_run_status(outcome.status),
        exit_code=outcome.exit_code,
        duration_s=round(outcome.duration_s, 4),
        # The run's output is data: a terminal, a CI log or an XML report must not act on it.
        stdout=neutralise(outcome.stdout),
        stderr=neutralise(outcome.stderr),
        stdout_truncated=outcome.stdout_truncated,
        stderr_truncated=outcome.stderr_truncated,
        isolation=IsolationEntry(
            backend=outcome.backend,
            guarantees=tuple(g.value for g in outcome.guarantees),
            not_guaranteed=tuple(g.value for g in outcome.not_guaranteed),
            bound=tuple(outcome.bound),
            refused=tuple(outcome.refused),
        ),
        detail=None if outcome.detail is None else neutralise(outcome.detail),
    )


def _run_status(status: sandbox.Status) -> RunStatus:
    # Spelled out rather than taken from ``status.value``: the statuses are part of the report's
    # format, so a new one must fail type checking here until the format names it.
    import sandbox  # noqa: PLC0415 - loaded by dry runs only; validate never pays for it

    match status:
        case sandbox.Status.PASSED:
            return "passed"
        case sandbox.Status.FAILED:
            return "failed"
        case sandbox.Status.TIMED_OUT:
            return "timed-out"
        case sandbox.Status.CRASHED:
            return "crashed"
        case sandbox.Status.NOT_STARTED:
            return "not-started"
        case _:
            assert_never(status)


def located(diagnostic: Diagnostic | Related) -> Location | None:
    """Where ``diagnostic`` is, in lines and columns: the one place a region becomes them.

    The check stage leaves its findings in file coordinates (:class:`Region`: an example of an
    origin, a span of its text); the origin that read the file maps them, here, as the
    diagnostic is reported. A diagnostic of an earlier stage (a file that cannot be loaded)
    comes with its location already.
    """
    if diagnostic.region is not None:
        return diagnostic.region.located()
    return diagnostic.location


def diagnostic_entry(diagnostic: Diagnostic) -> DiagnosticEntry:
    """The report entry of one diagnostic."""
    location = located(diagnostic)
    return DiagnosticEntry(
        code=diagnostic.code,
        severity=diagnostic.severity,
        tool=diagnostic.tool,
        example=diagnostic.example,
        message=diagnostic.message,
        hint=diagnostic.hint,
        suggestion=diagnostic.suggestion,
        file=location.file if location else None,
        location=_location(location),
        span=_span(diagnostic.span),
        related=tuple(_related(item) for item in diagnostic.related),
    )


def _location(location: Location | None) -> LocationEntry | None:
    if location is None or (location.line is None and location.key is None):
        return None
    return LocationEntry(
        line=location.line,
        column=location.column,
        key=location.key,
        end_line=location.end_line,
        end_column=location.end_column,
    )


def _span(span: Span | None) -> SpanEntry | None:
    return None if span is None else SpanEntry(start=span.start, end=span.end)


def _related(related: Related) -> RelatedEntry:
    location = located(related)
    return RelatedEntry(
        message=related.message,
        file=location.file if location else None,
        location=_location(location),
        span=_span(related.span),
    )


# -- entries of a report read back (report merge) -------------------------------------------------


def _example_from(entry: model.ExampleEntry) -> ExampleEntry:
    return ExampleEntry(
        tool=entry.tool,
        index=entry.index,
        command=entry.command,
        ok=entry.ok,
        argv=None if entry.argv is None else tuple(entry.argv),
        path=None if entry.path is None else tuple(entry.path),
        arguments=entry.arguments,
        diagnostics=tuple(_diagnostic_from(d) for d in entry.diagnostics),
        source=entry.source,
        address=entry.address,
    )


def _diagnostic_from(entry: model.DiagnosticEntry) -> DiagnosticEntry:
    return DiagnosticEntry(
        code=entry.code,
        severity=Severity(entry.severity),
        tool=entry.tool,
        example=entry.example,
        message=entry.message,
        hint=entry.hint,
        suggestion=entry.suggestion,
        file=entry.file,
        location=_location_from(entry.location),
        span=_span_from(entry.span),
        related=tuple(
            RelatedEntry(
                message=item.message,
                file=item.file,
                location=_location_from(item.location),
                span=_span_from(item.span),
            )
            for item in entry.related
        ),
    )


def _location_from(entry: model.LocationEntry | None) -> LocationEntry | None:
    if entry is None:
        return None
    return LocationEntry(
        line=entry.line,
        column=entry.column,
        key=entry.key,
        end_line=entry.end_line,
        end_column=entry.end_column,
    )


def _span_from(entry: model.SpanEntry | None) -> SpanEntry | None:
    return None if entry is None else SpanEntry(start=entry.start, end=entry.end)


def _dry_run_from(entry: model.DryRunEntry) -> DryRunEntry:
    return DryRunEntry(
        tool=entry.tool,
        index=entry.index,
        argv=tuple(entry.argv),
        status=entry.status,
        exit_code=entry.exit_code,
        duration_s=entry.duration_s,
        stdout=entry.stdout,
        stderr=entry.stderr,
        stdout_truncated=entry.stdout_truncated,
        stderr_truncated=entry.stderr_truncated,
        isolation=IsolationEntry(
            backend=entry.isolation.backend,
            guarantees=tuple(entry.isolation.guarantees),
            not_guaranteed=tuple(entry.isolation.not_guaranteed),
            bound=tuple(entry.isolation.bound),
            refused=tuple(entry.isolation.refused),
        ),
        detail=entry.detail,
    )
