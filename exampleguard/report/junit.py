"""The JUnit XML renderer: one test suite per catalog, one test case per example.

Dry runs are test cases of their own (``TOOL[INDEX] dry run``). Failures carry the diagnostic
codes and messages; warnings are listed in ``system-out``. The layout is the common subset that
Jenkins, GitLab and GitHub test reporters read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from xml.etree import ElementTree as ET

__all__ = ["render_junit"]


def _line(diagnostic: dict[str, Any]) -> str:
    location = diagnostic.get("location") or {}
    where = diagnostic.get("file") or ""
    if where and location.get("line") is not None:
        where += f":{location['line']}"
        if location.get("column") is not None:
            where += f":{location['column']}"
    prefix = f"{where}: " if where else ""
    return f"{prefix}{diagnostic['code']}: {diagnostic['message']}"


def _identity(diagnostic: dict[str, Any]) -> tuple[Any, ...]:
    location = diagnostic.get("location") or {}
    return (
        diagnostic["code"],
        diagnostic.get("tool"),
        diagnostic.get("example"),
        diagnostic["message"],
        diagnostic.get("file"),
        location.get("line"),
        location.get("column"),
    )


def _failure(case: ET.Element, errors: list[dict[str, Any]]) -> None:
    failure = ET.SubElement(
        case,
        "failure",
        message="; ".join(f"{d['code']}: {d['message']}" for d in errors),
        type=errors[0]["code"],
    )
    failure.text = "\n".join(_line(d) for d in errors)


def _output(case: ET.Element, lines: Iterable[str]) -> None:
    text = "\n".join(lines)
    if text:
        ET.SubElement(case, "system-out").text = text


def render_junit(data: dict[str, Any]) -> str:
    """Render report data as JUnit XML."""
    # Named after the catalog whatever the verdict: CI keeps test history by these names.
    catalog = data.get("catalog") or "catalog"
    suites = ET.Element("testsuites", name="exampleguard")
    suite = ET.SubElement(suites, "testsuite", name=catalog)
    tests = failures = 0
    for example in data["examples"]:
        tests += 1
        case = ET.SubElement(
            suite,
            "testcase",
            classname=catalog,
            name=f"{example['tool']}[{example['index']}]",
        )
        errors = [d for d in example["diagnostics"] if d["severity"] == "error"]
        if errors:
            failures += 1
            _failure(case, errors)
        _output(
            case,
            [f"$ {example['command']}"]
            + [_line(d) for d in example["diagnostics"] if d["severity"] == "warning"],
        )
    # Everything that is not an example's own finding: catalog, tree, reviewer records, counts.
    own = {_identity(d) for example in data["examples"] for d in example["diagnostics"]}
    repository = [d for d in data["diagnostics"] if _identity(d) not in own]
    if repository:
        tests += 1
        case = ET.SubElement(suite, "testcase", classname=catalog, name="repository checks")
        errors = [d for d in repository if d["severity"] == "error"]
        if errors:
            failures += 1
            _failure(case, errors)
    for run in data.get("dry_runs", []):
        tests += 1
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{catalog}.dryrun",
            name=f"{run['tool']}[{run['index']}] dry run",
            time=f"{run['duration_s']:.3f}",
        )
        if run["status"] != "passed":
            failures += 1
            code = "dryrun-timeout" if run["status"] == "timed-out" else "dryrun-failed"
            failure = ET.SubElement(
                case,
                "failure",
                message=f"{code}: {run['status']} (exit code {run['exit_code']})",
                type=code,
            )
            failure.text = run.get("stderr") or run.get("stdout") or ""
        _output(case, [f"$ {' '.join(run['argv'])}", run.get("stdout") or ""])
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suites.set("tests", str(tests))
    suites.set("failures", str(failures))
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
