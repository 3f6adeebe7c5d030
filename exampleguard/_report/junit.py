"""The JUnit XML renderer: one test suite per catalog, one test case per example.

Dry runs are test cases of their own (``TOOL[INDEX] dry run``). Failures carry the diagnostic
codes and messages; warnings are listed in ``system-out``. The layout is the common subset that
Jenkins, GitLab and GitHub test reporters read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from xml.etree import ElementTree as ET

from exampleguard._diagnostics import neutralise
from exampleguard._report.data import (
    FULL_BACKEND,
    DiagnosticEntry,
    DryRunEntry,
    ExampleEntry,
    IsolationGap,
    Report,
)

__all__ = ["render_junit"]


def _line(diagnostic: DiagnosticEntry) -> str:
    location = diagnostic.location
    where = diagnostic.file or ""
    if where and location is not None and location.line is not None:
        where += f":{location.line}"
        if location.column is not None:
            where += f":{location.column}"
    prefix = f"{where}: " if where else ""
    return f"{prefix}{diagnostic.code}: {diagnostic.message}"


def _identity(diagnostic: DiagnosticEntry) -> tuple[object, ...]:
    location = diagnostic.location
    return (
        diagnostic.code,
        diagnostic.tool,
        diagnostic.example,
        diagnostic.message,
        diagnostic.file,
        location.line if location is not None else None,
        location.column if location is not None else None,
    )


def _failure(case: ET.Element, errors: Sequence[DiagnosticEntry]) -> None:
    failure = ET.SubElement(
        case,
        "failure",
        message="; ".join(f"{d.code}: {d.message}" for d in errors),
        type=errors[0].code,
    )
    failure.text = "\n".join(_line(d) for d in errors)


def _output(case: ET.Element, lines: Iterable[str]) -> None:
    text = "\n".join(lines)
    if text:
        ET.SubElement(case, "system-out").text = text


def _example_case(suite: ET.Element, catalog: str, example: ExampleEntry) -> bool:
    """Add the case of one example; whether it fails."""
    case = ET.SubElement(suite, "testcase", classname=catalog, name=example.name)
    errors = [d for d in example.diagnostics if d.is_error]
    if errors:
        _failure(case, errors)
    _output(
        case,
        [f"$ {example.command}"] + [_line(d) for d in example.diagnostics if not d.is_error],
    )
    return bool(errors)


def _repository_case(suite: ET.Element, catalog: str, report: Report) -> bool | None:
    """Add the case of everything that is not an example's own finding; whether it fails.

    Catalog, tree, reviewer records and counts findings; ``None`` (and no case) when there are
    none.
    """
    own = {_identity(d) for example in report.examples for d in example.diagnostics}
    repository = [d for d in report.diagnostics if _identity(d) not in own]
    if not repository:
        return None
    case = ET.SubElement(suite, "testcase", classname=catalog, name="repository checks")
    errors = [d for d in repository if d.is_error]
    if errors:
        _failure(case, errors)
    return bool(errors)


def _dry_run_case(suite: ET.Element, catalog: str, run: DryRunEntry) -> bool | None:
    """Add the case of one dry run; whether it fails (``None``: skipped, never finished)."""
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"{catalog}.dryrun",
        name=f"{run.address} dry run",
        time=f"{run.duration_s:.3f}",
    )
    isolation = run.isolation
    properties = ET.SubElement(case, "properties")
    ET.SubElement(properties, "property", name="isolation.backend", value=isolation.backend)
    ET.SubElement(
        properties,
        "property",
        name="isolation.not_guaranteed",
        value=",".join(isolation.not_guaranteed),
    )
    for name in ("bound", "refused"):
        paths = getattr(isolation, name)
        if paths:
            # Paths may hold commas: one per line.
            ET.SubElement(properties, "property", name=f"isolation.{name}", value="\n".join(paths))
    full = isolation.backend == FULL_BACKEND and not isolation.not_guaranteed
    if run.interrupted:
        # Stopped by Ctrl-C or SIGTERM, or never started: not a failure of the example; the
        # run as a whole exits 130.
        started = "stopped by the interruption" if run.status == "crashed" else "never started"
        ET.SubElement(case, "skipped", message=f"interrupted: {started}")
        return None
    if not run.passed:
        code = "dryrun-timeout" if run.status == "timed-out" else "dryrun-failed"
        failure = ET.SubElement(
            case,
            "failure",
            message=f"{code}: {run.status} (exit code {run.exit_code})",
            type=code,
        )
        failure.text = run.stderr or run.stdout or ""
    lines = [f"$ {' '.join(run.argv)}", run.stdout or ""]
    if not full and run.status != "not-started":
        gap = IsolationGap(isolation.backend, isolation.not_guaranteed, (run.address,))
        lines.insert(0, f"isolation: {gap.describe()}")
    _output(case, lines)
    return not run.passed


def render_junit(report: Report) -> str:
    """Render a report as JUnit XML."""
    # Named after the catalog whatever the verdict: CI keeps test history by these names.
    catalog = report.catalog or "catalog"
    suites = ET.Element("testsuites", name="exampleguard")
    suite = ET.SubElement(suites, "testsuite", name=catalog)
    outcomes = [_example_case(suite, catalog, example) for example in report.examples]
    repository = _repository_case(suite, catalog, report)
    if repository is not None:
        outcomes.append(repository)
    runs = [_dry_run_case(suite, catalog, run) for run in report.dry_runs]
    skipped = sum(1 for outcome in runs if outcome is None)
    outcomes.extend(outcome for outcome in runs if outcome is not None)
    tests, failures = str(len(outcomes) + skipped), str(sum(outcomes))
    suite.set("tests", tests)
    suite.set("failures", failures)
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suites.set("tests", tests)
    suites.set("failures", failures)
    # Whatever reached the tree (a catalog's text, a run's output), the XML stays well-formed.
    for element in suites.iter():
        if element.text:
            element.text = neutralise(element.text)
        for name, value in element.attrib.items():
            element.set(name, neutralise(value))
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
