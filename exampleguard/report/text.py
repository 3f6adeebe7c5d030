"""The text renderer: one line per diagnostic, location first, then a summary (ruff style).

``catalog.json:41:18: unknown-flag notes.delete[1]: --recurse is not an option of 'notes delete'
(did you mean --recursive?)``. A diagnostic with a suggestion shows it inline, in the words of
its hint when it has one (the did-you-mean as its stage phrased it); any other hint follows on an
indented ``help:`` line. Colour is added only when asked for (the CLI asks on a terminal).
"""

from __future__ import annotations

from exampleguard.report.data import DiagnosticEntry, Report

__all__ = ["diagnostic_lines", "render_text"]

_STYLES = {
    "location": "\x1b[1m",
    "error": "\x1b[1;31m",
    "warning": "\x1b[1;33m",
    "subject": "\x1b[36m",
    "help": "\x1b[2m",
    "ok": "\x1b[1;32m",
}
_RESET = "\x1b[0m"


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_STYLES[style]}{text}{_RESET}" if color else text


def render_text(report: Report, *, color: bool = False) -> str:
    """Render a report as text lines and a summary."""
    lines: list[str] = []
    # A failed dry run is a diagnostic (dryrun-failed, dryrun-timeout) like any other.
    for diagnostic in report.diagnostics:
        lines.extend(diagnostic_lines(diagnostic, color=color))
    lines.append(_summary(report, color))
    return "\n".join(lines) + "\n"


def _where(diagnostic: DiagnosticEntry) -> str:
    file = diagnostic.file
    location = diagnostic.location
    if not file:
        return "exampleguard"
    if location is None or location.line is None:
        return file
    if location.column is None:
        return f"{file}:{location.line}"
    return f"{file}:{location.line}:{location.column}"


def diagnostic_lines(diagnostic: DiagnosticEntry, *, color: bool = False) -> list[str]:
    """The line for one diagnostic, and its ``help:`` line when it has a hint to show apart."""
    where = _paint(f"{_where(diagnostic)}:", "location", color)
    code = _paint(diagnostic.code, diagnostic.severity.value, color)
    about = diagnostic.subject
    subject = " " + _paint(f"{about}:", "subject", color) if about is not None else ""
    message = diagnostic.message
    hint = diagnostic.hint
    extra: list[str] = []
    if diagnostic.suggestion is not None:
        proposal = hint or f"Did you mean {diagnostic.suggestion}?"
        message += f" ({proposal[0].lower()}{proposal[1:]})"
    elif hint:
        extra.append(_paint(f"  help: {hint}", "help", color))
    return [f"{where} {code}{subject} {message}", *extra]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _summary(report: Report, color: bool) -> str:
    tally = report.tally
    runs = len(report.dry_runs)
    scope = f"{_plural(len(report.examples), 'example')} of {_plural(report.counts.tools, 'tool')}"
    ran = ""
    if runs:
        plural = "s" if runs != 1 else ""
        ran = f"; {runs - tally.failed_dry_runs} of {runs} dry run{plural} passed"
    if report.interrupted:
        return _paint(f"Interrupted: {scope} checked{ran}.", "error", color)
    if report.ok:
        note = f" ({_plural(tally.warnings, 'warning')})" if tally.warnings else ""
        return _paint(f"All checks passed: {scope}{ran}{note}.", "ok", color)
    parts = [_plural(tally.errors, "error")]
    if tally.warnings:
        parts.append(_plural(tally.warnings, "warning"))
    failing = f"{_plural(tally.failed_examples, 'example')} failed"
    return _paint(f"Found {' and '.join(parts)} in {scope} ({failing}{ran}).", "error", color)
