"""The SARIF 2.1.0 renderer, for GitHub code scanning and other SARIF consumers.

Rules come from the code registry (id, short and full description, help), so SARIF, ``explain``
and the docs say the same thing. Each result has its physical location (file, line, column and,
inside an example, the character region) and the tool and example it is about.
"""

from __future__ import annotations

from typing import Any

from exampleguard import __version__
from exampleguard.codes import CODES
from exampleguard.report.json_format import render_json
from exampleguard.report.model import subject_of

__all__ = ["SARIF_SCHEMA", "render_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_INFORMATION_URI = "https://pypi.org/project/exampleguard/"


def _rules() -> list[dict[str, Any]]:
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


def _result(diagnostic: dict[str, Any], index: dict[str, int], fallback: str) -> dict[str, Any]:
    message = diagnostic["message"]
    if diagnostic.get("hint"):
        message += f" ({diagnostic['hint']})"
    result: dict[str, Any] = {
        "ruleId": diagnostic["code"],
        "ruleIndex": index[diagnostic["code"]],
        "level": "error" if diagnostic["severity"] == "error" else "warning",
        "message": {"text": message},
    }
    # GitHub code scanning rejects a whole upload if one result has no location; a finding
    # that is about no file in particular is placed on the catalog.
    file = diagnostic.get("file") or fallback
    if file:
        physical: dict[str, Any] = {"artifactLocation": {"uri": file}}
        location = diagnostic.get("location") or {}
        if location.get("line") is not None:
            region: dict[str, Any] = {"startLine": location["line"]}
            if location.get("column") is not None:
                region["startColumn"] = location["column"]
                span = diagnostic.get("span")
                if span is not None and span["end"] > span["start"]:
                    region["endLine"] = location["line"]
                    region["endColumn"] = location["column"] + span["end"] - span["start"]
            physical["region"] = region
        entry: dict[str, Any] = {"physicalLocation": physical}
        about = subject_of(diagnostic)
        if about is not None:
            entry["logicalLocations"] = [{"name": about, "kind": "member"}]
        result["locations"] = [entry]
    subject = {
        key: diagnostic[key] for key in ("tool", "example") if diagnostic.get(key) is not None
    }
    if subject:
        result["properties"] = subject
    return result


def render_sarif(data: dict[str, Any]) -> str:
    """Render report data as a SARIF 2.1.0 log."""
    rules = _rules()
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    fallback = data.get("catalog") or ""
    results = [_result(d, index, fallback) for d in data["diagnostics"] if d["code"] in index]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "exampleguard",
                        "version": __version__,
                        "informationUri": _INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return render_json(log)
