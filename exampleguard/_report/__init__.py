"""Reports: one typed structure, built in one place, one renderer per output format.

:func:`build_report` turns an evaluation (and its dry runs) into a :class:`Report`, and
:func:`merge_report` does the same for the JSON reports of ``--shard`` runs; both decide the
verdict in the same place. Each renderer takes the report and returns text (:func:`render_pieces`
hands it out in pieces, so a large report is written without a second whole copy). Renderers
never decide verdicts and never print.
"""

from __future__ import annotations

from collections.abc import Iterator

from exampleguard._report import json_format
from exampleguard._report.build import (
    build_report,
    diagnostic_entry,
    dry_run_entry,
    located,
    merge_report,
    unusable_report,
)
from exampleguard._report.data import REPORT_FORMAT, DiagnosticEntry, DryRunEntry, Report
from exampleguard._report.frame import SourceLookup
from exampleguard._report.github import render_github
from exampleguard._report.sarif import SourceRoot, render_sarif
from exampleguard._report.text import render_statistics, render_text

__all__ = [
    "FORMATS",
    "REPORT_FORMAT",
    "TEXT_FORMATS",
    "DiagnosticEntry",
    "DryRunEntry",
    "Report",
    "SourceLookup",
    "SourceRoot",
    "build_report",
    "diagnostic_entry",
    "dry_run_entry",
    "located",
    "merge_report",
    "render",
    "render_pieces",
    "render_statistics",
    "unusable_report",
]

FORMATS = ("text", "json", "junit", "sarif", "github", "full", "concise")
"""Every report format. ``text`` is SPEC's one line per diagnostic, which ``concise`` names the
way ruff does; ``full`` adds a code frame under each line (ruff's ``full``)."""

TEXT_FORMATS = frozenset({"text", "full", "concise"})
"""The formats meant for people rather than programs."""


def render(
    report: Report,
    output_format: str,
    *,
    color: bool = False,
    sources: SourceLookup | None = None,
    quiet: bool = False,
    source_root: SourceRoot | None = None,
) -> str:
    """Render ``report`` in ``output_format`` (one of :data:`FORMATS`).

    ``source_root`` anchors SARIF's locations at the repository root (the other formats show
    the report's paths, relative to where the run started).
    """
    return "".join(
        render_pieces(
            report,
            output_format,
            color=color,
            sources=sources,
            quiet=quiet,
            source_root=source_root,
        )
    )


def render_pieces(
    report: Report,
    output_format: str,
    *,
    color: bool = False,
    sources: SourceLookup | None = None,
    quiet: bool = False,
    source_root: SourceRoot | None = None,
) -> Iterator[str]:
    """Render ``report`` as consecutive pieces of text; joined, they are :func:`render`'s.

    ``sources`` (file text by the name diagnostics show) feeds the ``full`` form's code frames;
    ``quiet`` leaves the summary out of the text forms. Machine formats ignore both;
    ``source_root`` is SARIF's (see :func:`render`).
    """
    if output_format == "json":
        # Looked up on its module at each call, so a test can stand in for the writer.
        yield from json_format.json_pieces(report)
    elif output_format == "junit":
        from exampleguard._report.junit import render_junit  # noqa: PLC0415 - only JUnit needs XML

        yield render_junit(report)
    elif output_format == "sarif":
        yield render_sarif(report, source_root)
    elif output_format == "github":
        yield render_github(report)
    else:
        full = output_format == "full"
        yield render_text(report, color=color, full=full, sources=sources, quiet=quiet)
