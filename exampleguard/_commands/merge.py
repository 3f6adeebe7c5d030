"""``exampleguard report merge``: join the JSON reports of ``--shard`` runs into one."""

from __future__ import annotations

from pathlib import Path

from exampleguard._codes import CONFIG_INVALID
from exampleguard._commands.validate import ValidateOutcome
from exampleguard._config import Config
from exampleguard._counts import Counts, compare_counts, load_counts
from exampleguard._diagnostics import Diagnostic
from exampleguard._documents import SourceError, check_format, load_document, validate_model
from exampleguard._report import merge_report
from exampleguard._report import model as report_format

__all__ = ["merge_reports"]


def merge_reports(paths: list[Path], config: Config | None) -> ValidateOutcome:
    """``exampleguard report merge``: join shard reports into one and compare the counts."""
    reports: list[report_format.Report] = []
    errors: list[Diagnostic] = []
    for path in paths:
        try:
            document = load_document(path, str(path))
            check_format(document, "exampleguard.report/v1")
            reports.append(validate_model(report_format.Report, document, schema_key=True))
        except SourceError as error:
            errors.append(error.diagnostic)
    if errors:
        return ValidateOutcome(unusable=errors)
    shards = sorted({(r.shard.index, r.shard.total) for r in reports if r.shard is not None})
    totals = {total for _, total in shards}
    problems: list[str] = []
    if len(totals) > 1:
        problems.append(f"the reports come from different shard counts: {sorted(totals)}")
    elif totals:
        (total,) = totals
        given = {index for index, _ in shards}
        beyond = sorted(index for index in given if index > total)
        if beyond:
            shards_word = "shard" if len(beyond) == 1 else "shards"
            problems.append(f"{shards_word} {beyond} of {total} cannot exist")
        count, missing = _missing(given, total)
        if count:
            shards_are = "shard" if count == 1 else "shards"
            verb = "is" if count == 1 else "are"
            problems.append(f"{shards_are} {missing} of {total} {verb} missing")
    if len(shards) != len([r for r in reports if r.shard is not None]):
        problems.append("the same shard is given twice")
    if problems:
        return ValidateOutcome(unusable=[CONFIG_INVALID.diagnostic(message=p) for p in problems])
    first = next((r for r in reports if r.shard is None or r.shard.index == 1), reports[0])
    counts = Counts(
        tools=first.counts.tools,
        examples=sum(r.counts.examples for r in reports),
        contract_validated=sum(r.counts.contract_validated for r in reports),
        dry_run_eligible=first.counts.dry_run_eligible,
        dry_run_narrowed=first.counts.dry_run_narrowed,
        excluded=first.counts.excluded,
        # Examples of no tool are all checked in the first shard.
        doc_examples=first.counts.doc_examples,
    )
    drift: list[Diagnostic] = []
    if config is not None:
        try:
            committed = load_counts(config.counts_path, config.display(config.counts_path))
        except SourceError as error:
            return ValidateOutcome(unusable=[error.diagnostic])
        drift = compare_counts(committed, counts, config.display(config.counts_path))
    return ValidateOutcome(merge_report(reports, counts=counts, extra_diagnostics=drift))


_SHOWN = 10


def _missing(given: set[int], total: int) -> tuple[int, str]:
    """How many shards of ``1..total`` are not in ``given``, and the first few, listed.

    ``total`` comes from the reports: a hand-edited one may claim billions of shards, which must
    cost neither time nor memory to describe.
    """
    count = total - len({index for index in given if 1 <= index <= total})
    if count == 0:
        return 0, ""
    first: list[int] = []
    index = 1
    while len(first) < min(count, _SHOWN):
        if index not in given:
            first.append(index)
        index += 1
    if count <= _SHOWN:
        return count, str(first)
    return count, f"[{', '.join(map(str, first))}, ...] ({count} in all)"
