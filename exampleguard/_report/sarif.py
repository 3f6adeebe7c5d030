"""The SARIF 2.1.0 renderer, for GitHub code scanning and other SARIF consumers.

Rules come from the code registry (id, short and full description, help), so SARIF, ``explain``
and the docs say the same thing. Each result has its physical location (file, line, column and,
inside an example, the region of the offending text as the file has it) and the tool and example
it is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from exampleguard._codes import CODES
from exampleguard._report.data import DiagnosticEntry, Report
from exampleguard._report.json_format import render_json
from exampleguard._version import VERSION as __version__

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["SARIF_SCHEMA", "SourceRoot", "render_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_INFORMATION_URI = "https://pypi.org/project/exampleguard/"

Json = dict[str, "JsonValue"]

# The base id code scanning and other consumers expect for "relative to the checkout".
_SRCROOT = "%SRCROOT%"


@dataclass(frozen=True, slots=True)
class SourceRoot:
    """Where SARIF anchors its locations.

    The report's paths are relative to ``cwd`` (where the run started); SARIF names them
    relative to the ``repository`` root instead, declared in ``originalUriBaseIds``, so a
    result attaches to the file of a pull request wherever in the repository the run started.
    """

    repository: Path
    cwd: Path

    def artifact(self, file: str) -> Json:
        """The ``artifactLocation`` of ``file``, a path as the report shows it."""
        path = Path(file)
        absolute = path if path.is_absolute() else self.cwd / path
        if absolute.is_relative_to(self.repository):
            return {
                "uri": absolute.relative_to(self.repository).as_posix(),
                "uriBaseId": _SRCROOT,
            }
        return {"uri": absolute.as_uri()}


def _rules() -> list[JsonValue]:
    return [
        {
            "id": code.name,
            "name": "".join(part.capitalize() for part in code.name.split("-")),
            "shortDescription": {"text": code.summary},
            "fullDescription": {"text": f"{code.what} {code.why}"},
            "help": {
                "text": f"{code.what}\n\nWhy it matters: {code.why}\n\nExample: {code.example}"
                f"\n\nHow to fix it: {code.fix}",
                "markdown": f"**{code.summary}**\n\n{code.what}\n\n*Why it matters:* {code.why}"
                f"\n\n*How to fix it:* {code.fix}",
            },
            "defaultConfiguration": {
                "level": "error" if code.severity.value == "error" else "warning"
            },
            "properties": {"stage": code.stage.value, "since": code.since},
        }
        for code in CODES.values()
    ]


def _region(diagnostic: DiagnosticEntry) -> Json | None:
    location = diagnostic.location
    if location is None or location.line is None:
        return None
    region: Json = {"startLine": location.line}
    if location.column is None:
        return region
    region["startColumn"] = location.column
    if location.end_line is not None and location.end_column is not None:
        # Mapped through the file: escapes inside a JSON string are counted as written. SARIF's
        # end column is the one after the region; the report's is the region's last.
        region["endLine"] = location.end_line
        region["endColumn"] = location.end_column + 1
    elif diagnostic.span is not None and diagnostic.span.end > diagnostic.span.start:
        # No end known: the span's width, which is exact only where the file holds the example
        # as it reads (no escapes before its end).
        region["endLine"] = location.line
        region["endColumn"] = location.column + diagnostic.span.end - diagnostic.span.start
    return region


def _result(
    diagnostic: DiagnosticEntry, index: dict[str, int], fallback: str, root: SourceRoot | None
) -> Json:
    message = diagnostic.message
    if diagnostic.hint:
        message += f" ({diagnostic.hint})"
    result: Json = {
        "ruleId": diagnostic.code,
        "ruleIndex": index[diagnostic.code],
        "level": "error" if diagnostic.is_error else "warning",
        "message": {"text": message},
    }
    # GitHub code scanning rejects a whole upload if one result has no location; a finding
    # that is about no file in particular is placed on the catalog.
    file = diagnostic.file or fallback
    if file:
        artifact: Json = {"uri": file} if root is None else root.artifact(file)
        physical: Json = {"artifactLocation": artifact}
        region = _region(diagnostic)
        if region is not None:
            physical["region"] = region
        entry: Json = {"physicalLocation": physical}
        about = diagnostic.subject
        if about is not None:
            entry["logicalLocations"] = [{"name": about, "kind": "member"}]
        result["locations"] = [entry]
    subject: Json = {}
    if diagnostic.tool is not None:
        subject["tool"] = diagnostic.tool
    if diagnostic.example is not None:
        subject["example"] = diagnostic.example
    if subject:
        result["properties"] = subject
    return result


def render_sarif(report: Report, root: SourceRoot | None = None) -> str:
    """Render a report as a SARIF 2.1.0 log.

    With a ``root``, locations are relative to the repository root (``%SRCROOT%``); without
    one, they are the report's paths as they are.
    """
    rules = _rules()
    index = {code: position for position, code in enumerate(CODES)}
    fallback = report.catalog or ""
    results: list[JsonValue] = [
        _result(d, index, fallback, root) for d in report.diagnostics if d.code in index
    ]
    run: Json = {
        "tool": {
            "driver": {
                "name": "exampleguard",
                "version": __version__,
                "informationUri": _INFORMATION_URI,
                "rules": rules,
            }
        },
    }
    if root is not None:
        # The base's URI ends in a slash: SARIF resolves relative references against it.
        run["originalUriBaseIds"] = {_SRCROOT: {"uri": root.repository.as_uri().rstrip("/") + "/"}}
    run["results"] = results
    run["columnKind"] = "unicodeCodePoints"
    if report.dry_runs:
        # SARIF has no place for how a run was isolated: a property bag of the run carries it.
        gaps: list[JsonValue] = [
            {
                "backend": gap.backend,
                "notGuaranteed": list(gap.not_guaranteed),
                "runs": list(gap.runs),
            }
            for gap in report.isolation_gaps
        ]
        run["properties"] = {"dryRunIsolation": {"fullSandbox": not gaps, "gaps": gaps}}
    log: Json = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return render_json(log)
