"""The text renderer: one line per diagnostic, location first, then a summary (ruff style).

``catalog.json:41:18: unknown-flag notes.delete[1]: --recurse is not an option of 'notes delete'
(did you mean --recursive?)``. A suggestion is shown inline; any other hint follows on an
indented ``help:`` line. Colour is added only when asked for (the CLI asks on a terminal).
"""

from __future__ import annotations

from typing import Any

from exampleguard.report.model import subject_of

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


def render_text(data: dict[str, Any], *, color: bool = False) -> str:
    """Render report data as text lines and a summary."""
    lines: list[str] = []
    # A failed dry run is a diagnostic (dryrun-failed, dryrun-timeout) like any other.
    for diagnostic in data["diagnostics"]:
        lines.extend(diagnostic_lines(diagnostic, color=color))
    lines.append(_summary(data, color))
    return "\n".join(lines) + "\n"


def _where(diagnostic: dict[str, Any]) -> str:
    file: str | None = diagnostic.get("file")
    location = diagnostic.get("location") or {}
    if not file:
        return "exampleguard"
    if location.get("line") is None:
        return file
    if location.get("column") is None:
        return f"{file}:{location['line']}"
    return f"{file}:{location['line']}:{location['column']}"


def diagnostic_lines(diagnostic: dict[str, Any], *, color: bool = False) -> list[str]:
    """The line for one diagnostic, and its ``help:`` line when it has a hint."""
    where = _paint(f"{_where(diagnostic)}:", "location", color)
    code = _paint(diagnostic["code"], diagnostic["severity"], color)
    about = subject_of(diagnostic)
    subject = " " + _paint(f"{about}:", "subject", color) if about is not None else ""
    message = diagnostic["message"]
    hint = diagnostic.get("hint")
    extra: list[str] = []
    if hint and hint.startswith("Did you mean"):
        message += f" ({hint[0].lower()}{hint[1:]})"
    elif hint:
        extra.append(_paint(f"  help: {hint}", "help", color))
    return [f"{where} {code}{subject} {message}", *extra]


def _summary(data: dict[str, Any], color: bool) -> str:
    diagnostics = data["diagnostics"]
    errors = sum(1 for d in diagnostics if d["severity"] == "error")
    warnings = sum(1 for d in diagnostics if d["severity"] == "warning")
    counts = data["counts"]
    examples = len(data["examples"])
    failed = sum(1 for example in data["examples"] if not example["ok"])
    runs = data.get("dry_runs", [])
    run_failures = sum(1 for run in runs if run["status"] != "passed")
    scope = f"{examples} example{'s' if examples != 1 else ''} of {counts['tools']} tool" + (
        "s" if counts["tools"] != 1 else ""
    )
    ran = ""
    if runs:
        plural = "s" if len(runs) != 1 else ""
        ran = f"; {len(runs) - run_failures} of {len(runs)} dry run{plural} passed"
    if data.get("interrupted"):
        return _paint(f"Interrupted: {scope} checked{ran}.", "error", color)
    if errors == 0 and run_failures == 0:
        note = f" ({warnings} warning{'s' if warnings != 1 else ''})" if warnings else ""
        return _paint(f"All checks passed: {scope}{ran}{note}.", "ok", color)
    parts = [f"{errors} error{'s' if errors != 1 else ''}"]
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    failing = f"{failed} example{'s' if failed != 1 else ''} failed"
    return _paint(f"Found {' and '.join(parts)} in {scope} ({failing}{ran}).", "error", color)
