"""The text renderers: a line per diagnostic, location first, then a summary (ruff style).

The concise form (``--format concise``, also called ``text``) is one line per diagnostic:
``catalog.json:41:18: unknown-flag notes.delete[1]: --recurse is not an option of 'notes delete'
(did you mean --recursive?)``. A diagnostic with a suggestion shows it inline, in the words of
its hint when it has one (the did-you-mean as its stage phrased it); any other hint follows on an
indented ``help:`` line.

The full form (``--format full``, the default) starts each diagnostic with the same line, then
shows the lines of the file it points at with carets under the located text (ruff's ``full``
format), then its hint as ``= help:``. Colour is added only when asked for (the CLI asks on a
terminal). ``quiet`` leaves out the summary; :func:`render_statistics` counts diagnostics by
code instead of listing them (``--statistics``).
"""

from __future__ import annotations

import json
from collections import Counter

from exampleguard._codes import CODES, TOOL_WITHOUT_EXAMPLES
from exampleguard._report.data import DiagnosticEntry, Report
from exampleguard._report.frame import SourceLookup, code_frame

__all__ = ["diagnostic_lines", "full_diagnostic_lines", "render_statistics", "render_text"]

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


def render_text(
    report: Report,
    *,
    color: bool = False,
    full: bool = False,
    sources: SourceLookup | None = None,
    quiet: bool = False,
) -> str:
    """Render a report as text: each diagnostic (framed with ``full``), then a summary.

    ``sources`` gives the text of a file by the name diagnostics show for it; without it, or
    for a file it does not know, the full form shows no frame. ``quiet`` leaves out the summary.
    """
    lines: list[str] = []
    # A failed dry run is a diagnostic (dryrun-failed, dryrun-timeout) like any other.
    for diagnostic in report.diagnostics:
        if full:
            lines.extend(full_diagnostic_lines(diagnostic, sources, color=color))
        else:
            lines.extend(diagnostic_lines(diagnostic, color=color))
    # Never a silent downgrade: a run without the full sandbox says so, whatever its verdict,
    # quiet or not.
    for gap in report.isolation_gaps:
        lines.append(_paint(f"isolation: {gap.describe()}", "warning", color))
    if not quiet:
        lines.append(_summary(report, color))
    return "".join(f"{line}\n" for line in lines)


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


def full_diagnostic_lines(
    diagnostic: DiagnosticEntry, sources: SourceLookup | None, *, color: bool = False
) -> list[str]:
    """One diagnostic in the full form: its line, the code frame, its help, a blank line."""
    head, *_ = diagnostic_lines(diagnostic, color=color)
    lines = [head]
    lines_of_file = sources(diagnostic.file) if sources is not None and diagnostic.file else None
    if lines_of_file is not None and diagnostic.location is not None:
        # The carets carry the did-you-mean; the code is already on the line above them.
        label = ""
        if diagnostic.suggestion is not None:
            label = f"did you mean {diagnostic.suggestion}?"
        frame = code_frame(lines_of_file, diagnostic.location, label)
        severity = diagnostic.severity.value
        for line in frame:
            # The file's lines as they are, the carets in the severity's colour, the rest dim.
            if not color or line[:1].isdigit():
                lines.append(line)
            else:
                lines.append(_paint(line, severity if "^" in line else "help", color))
    if diagnostic.hint and diagnostic.suggestion is None:
        lines.append(_paint(f"  = help: {diagnostic.hint}", "help", color))
    for related in diagnostic.related:
        where = related.file or diagnostic.file
        place = ""
        if where and related.location is not None and related.location.line is not None:
            place = f" ({where}:{related.location.line})"
        lines.append(_paint(f"  = note: {related.message}{place}", "help", color))
    lines.append("")
    return lines


def render_statistics(report: Report, *, as_json: bool = False) -> str:
    """How many diagnostics of each code the report holds, most frequent first (ruff's form)."""
    tally = Counter(d.code for d in report.diagnostics)
    ordered = sorted(tally.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        entries = [
            {
                "code": code,
                "count": count,
                "severity": CODES[code].severity.value if code in CODES else "error",
                "summary": CODES[code].summary if code in CODES else None,
            }
            for code, count in ordered
        ]
        return json.dumps(entries, indent=2) + "\n"
    if not ordered:
        return ""
    count_width = max(len(str(count)) for _, count in ordered)
    code_width = max(len(code) for code, _ in ordered)
    rows = []
    for code, count in ordered:
        summary = CODES[code].summary if code in CODES else ""
        rows.append(f"{count:>{count_width}}  {code:<{code_width}}  {summary}".rstrip())
    return "\n".join(rows) + "\n"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _summary(report: Report, color: bool) -> str:
    tally = report.tally
    runs = len(report.dry_runs)
    scope = f"{_plural(len(report.examples), 'example')} of {_plural(report.counts.tools, 'tool')}"
    ran = ""
    plural = "s" if runs != 1 else ""
    passed = runs - tally.failed_dry_runs
    if report.interrupted and runs:
        started = runs - tally.unstarted_dry_runs
        ran = f"; {started} of {runs} dry run{plural} ran before the interruption ({passed} passed)"
    elif runs:
        ran = f"; {passed} of {runs} dry run{plural} passed"
    elif tally.dry_runs_asked:
        ran = "; no dry run ran"
    # Coverage that looks green is not: the tools without a single example are counted aloud.
    bare = sum(1 for d in report.diagnostics if d.code == TOOL_WITHOUT_EXAMPLES.name)
    if bare:
        scope += f", {_plural(bare, 'tool')} without examples"
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
