"""Reports: one data structure, one renderer per output format.

:func:`build_report` turns an evaluation (and any dry-run outcomes) into report data of the
``exampleguard.report/v1`` shape; each renderer takes that data and returns text
(:func:`render_pieces` hands it out in pieces, so a large report is written without a second
whole copy). Renderers never decide verdicts and never print.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from exampleguard.report.model import REPORT_FORMAT, Report, diagnostic_data

__all__ = ["FORMATS", "REPORT_FORMAT", "Report", "build_report", "render", "render_pieces"]

FORMATS = ("text", "json", "junit", "sarif", "github")


def build_report(
    evaluation: Any,
    *,
    dry_runs: Iterable[dict[str, Any]] = (),
    extra_diagnostics: Iterable[Any] = (),
    interrupted: bool = False,
    shard: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Report data for an evaluation; ``dry_runs`` are dry-run entries already in report shape."""
    runs = list(dry_runs)
    diagnostics = [*evaluation.diagnostics, *extra_diagnostics]
    failed_runs = any(run["status"] != "passed" for run in runs)
    ok = not any(d.is_error for d in diagnostics) and not failed_runs and not interrupted
    catalog = evaluation.inputs.catalog.document.display
    return {
        "format": REPORT_FORMAT,
        "ok": ok,
        "catalog": catalog,
        "counts": evaluation.counts.model_dump(),
        "examples": [
            {
                "tool": result.tool,
                "index": result.index,
                "command": result.command,
                "ok": result.ok,
                "argv": list(result.argv) if result.argv is not None else None,
                "path": list(result.path) if result.path is not None else None,
                "arguments": result.arguments,
                "diagnostics": [diagnostic_data(d) for d in result.diagnostics],
            }
            for result in evaluation.examples
        ],
        "diagnostics": [diagnostic_data(d) for d in diagnostics],
        "dry_runs": runs,
        "interrupted": interrupted,
        "shard": {"index": shard[0], "total": shard[1]} if shard else None,
    }


def render(data: dict[str, Any], output_format: str, *, color: bool = False) -> str:
    """Render report data in ``output_format`` (one of :data:`FORMATS`)."""
    return "".join(render_pieces(data, output_format, color=color))


def render_pieces(
    data: dict[str, Any], output_format: str, *, color: bool = False
) -> Iterator[str]:
    """Render report data as consecutive pieces of text; joined, they are :func:`render`'s."""
    if output_format == "json":
        from exampleguard.report.json_format import json_pieces  # noqa: PLC0415

        yield from json_pieces(data)
    elif output_format == "junit":
        from exampleguard.report.junit import render_junit  # noqa: PLC0415

        yield render_junit(data)
    elif output_format == "sarif":
        from exampleguard.report.sarif import render_sarif  # noqa: PLC0415

        yield render_sarif(data)
    elif output_format == "github":
        from exampleguard.report.github import render_github  # noqa: PLC0415

        yield render_github(data)
    else:
        from exampleguard.report.text import render_text  # noqa: PLC0415

        yield render_text(data, color=color)
