"""GitHub Actions workflow commands: one annotation per diagnostic, shown inline on PRs.

``::error file=catalog.json,line=41,col=18,title=unknown-flag notes.delete[1]::message``.
Property values and messages are escaped as the workflow-command syntax requires.
"""

from __future__ import annotations

from exampleguard._diagnostics import neutralise, plural
from exampleguard._report.data import DiagnosticEntry, Report

__all__ = ["render_github"]


def _escape_data(text: str) -> str:
    # The syntax's own escapes first (a line break becomes %0A, so the data stays on the
    # command's line); then any other control is made visible, never passed to the log.
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return neutralise(escaped)


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(diagnostic: DiagnosticEntry) -> str:
    level = "error" if diagnostic.is_error else "warning"
    properties: list[str] = []
    if diagnostic.file:
        properties.append(f"file={_escape_property(diagnostic.file)}")
        location = diagnostic.location
        if location is not None and location.line is not None:
            properties.append(f"line={location.line}")
            if location.column is not None:
                properties.append(f"col={location.column}")
    about = diagnostic.subject
    title = diagnostic.code if about is None else f"{diagnostic.code} {about}"
    properties.append(f"title={_escape_property(title)}")
    message = diagnostic.message
    if diagnostic.hint:
        message += f"\n{diagnostic.hint}"
    return f"::{level} {','.join(properties)}::{_escape_data(message)}"


def render_github(report: Report) -> str:
    """Render a report as GitHub Actions annotations, with a final notice line."""
    lines = [_annotation(diagnostic) for diagnostic in report.diagnostics]
    lines.extend(
        f"::warning title=exampleguard isolation::{_escape_data(gap.describe())}"
        for gap in report.isolation_gaps
    )
    verdict = "passed" if report.ok else "failed"
    lines.append(
        f"::notice title=exampleguard::{plural(len(report.examples), 'example')} checked; "
        f"the run {verdict}"
    )
    return "\n".join(lines) + "\n"
