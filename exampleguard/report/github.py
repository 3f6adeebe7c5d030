"""GitHub Actions workflow commands: one annotation per diagnostic, shown inline on PRs.

``::error file=catalog.json,line=41,col=18,title=unknown-flag notes.delete[1]::message``.
Property values and messages are escaped as the workflow-command syntax requires.
"""

from __future__ import annotations

from typing import Any

from exampleguard.report.model import subject_of

__all__ = ["render_github"]


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(data: dict[str, Any]) -> str:
    """Render report data as GitHub Actions annotations, with a final notice line."""
    lines: list[str] = []
    for diagnostic in data["diagnostics"]:
        level = "error" if diagnostic["severity"] == "error" else "warning"
        properties: list[str] = []
        if diagnostic.get("file"):
            properties.append(f"file={_escape_property(diagnostic['file'])}")
            location = diagnostic.get("location") or {}
            if location.get("line") is not None:
                properties.append(f"line={location['line']}")
                if location.get("column") is not None:
                    properties.append(f"col={location['column']}")
        about = subject_of(diagnostic)
        title = diagnostic["code"] if about is None else f"{diagnostic['code']} {about}"
        properties.append(f"title={_escape_property(title)}")
        message = diagnostic["message"]
        if diagnostic.get("hint"):
            message += f"\n{diagnostic['hint']}"
        lines.append(f"::{level} {','.join(properties)}::{_escape_data(message)}")
    examples = len(data["examples"])
    verdict = "passed" if data["ok"] else "failed"
    lines.append(f"::notice title=exampleguard::{examples} examples checked; the run {verdict}")
    return "\n".join(lines) + "\n"
