"""The typed report: one builder, one verdict, and the same fields as the format's models.

A run builds frozen dataclasses; the pydantic models of ``exampleguard._report.model`` are the
format's contract (the committed JSON Schema, the reader of ``report merge``). These tests hold
the two together, check the verdict the builder decides, and that ``report merge`` goes through
the same builder (it keeps the catalog the JUnit suite and the SARIF fallback are named after),
and that a SARIF region ends where the offending text ends in the file, escapes included.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel

import sandbox
from exampleguard._commands.validate import validate
from exampleguard._config import load_config
from exampleguard._counts import Counts
from exampleguard._diagnostics import Diagnostic, Location, Related, Severity, Span
from exampleguard._report import Report, data, diagnostic_entry, dry_run_entry, model, render
from exampleguard._report.build import assemble
from exampleguard._report.json_format import written_fields
from exampleguard.schemas import committed_schema_path
from tests.support.project import REPOSITORY, run_cli
from tests.support.sarif import sarif_errors

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
# The JSON catalog holds this example as ``"notes rm --tag draft --format \"yaml\""``.
ESCAPED_EXAMPLE = 'notes rm --tag draft --format "yaml"'
ESCAPED_WORD = '\\"yaml\\"'
COUNTS = Counts(
    tools=2, examples=3, contract_validated=3, dry_run_eligible=2, dry_run_narrowed=0, excluded=1
)

PAIRS: list[tuple[type, type[BaseModel]]] = [
    (data.LocationEntry, model.LocationEntry),
    (data.SpanEntry, model.SpanEntry),
    (data.RelatedEntry, model.RelatedEntry),
    (data.DiagnosticEntry, model.DiagnosticEntry),
    (data.ExampleEntry, model.ExampleEntry),
    (data.IsolationEntry, model.IsolationEntry),
    (data.DryRunEntry, model.DryRunEntry),
    (data.ShardEntry, model.ShardEntry),
    (data.Report, model.Report),
]


def _outcome(status: sandbox.Status, **changes: Any) -> sandbox.Outcome:
    values: dict[str, Any] = {
        "status": status,
        "exit_code": 0 if status is sandbox.Status.PASSED else None,
        "stdout": "would delete 3\n",
        "stderr": "",
        "stdout_truncated": False,
        "stderr_truncated": True,
        "duration_s": 0.123456,
        "backend": "bwrap",
        "guarantees": (sandbox.Guarantee.NO_NETWORK, sandbox.Guarantee.OWN_HOME),
        "not_guaranteed": (sandbox.Guarantee.NO_FS_UNIX_SOCKETS,),
        "detail": None,
        "bound": ("/home/ci/project", "/home/ci/.venv"),
        "refused": ("/home/ci/.ssh",),
    }
    values.update(changes)
    return sandbox.Outcome(**values)


def _full_report() -> Report:
    """A report in which every field of every entry holds a value somewhere."""
    where = Location("catalog.json", 21, 53, "tools[0].examples[1].command", 21, 60)
    first = Diagnostic(
        code="unknown-flag",
        severity=Severity.ERROR,
        message="--recurse is not an option of 'notes delete'",
        hint="Did you mean --recursive?",
        suggestion="--recursive",
        tool="notes.delete",
        example=1,
        location=where,
        span=Span(10, 19),
        related=(Related("first given here", Span(3, 5), where),),
    )
    warning = Diagnostic(
        code="shell-expansion", severity=Severity.WARNING, message="'*' is a glob", tool="t"
    )
    entries = [diagnostic_entry(first), diagnostic_entry(warning)]
    example = data.ExampleEntry(
        tool="notes.delete",
        index=1,
        command="notes delete --recurse",
        ok=False,
        argv=("notes", "delete", "--recurse"),
        path=("delete",),
        arguments={"ids": [3, 4], "all": True, "limit": 2.5, "title": "é", "none": None},
        diagnostics=tuple(entries[:1]),
        address="notes.delete[1]",
    )
    runs = [
        dry_run_entry(
            "notes.delete", 0, ["notes", "delete", "3"], _outcome(status, detail="detail")
        )
        for status in sandbox.Status
    ]
    return assemble(
        catalog="catalog.json",
        counts=COUNTS,
        examples=[example],
        diagnostics=entries,
        dry_runs=runs,
        interrupted=True,
        shard=data.ShardEntry(index=1, total=2),
    )


def _set_fields(value: object, found: set[tuple[str, str]]) -> None:
    """Every (model, field) of ``value``'s tree that holds a value (not None, not empty)."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            item = getattr(value, name)
            if item not in (None, [], {}):
                found.add((type(value).__name__, name))
            _set_fields(item, found)
    elif isinstance(value, list):
        for item in value:
            _set_fields(item, found)


@pytest.mark.parametrize(("typed", "contract"), PAIRS, ids=[p[1].__name__ for p in PAIRS])
def test_the_dataclasses_write_the_fields_of_the_models(
    typed: type, contract: type[BaseModel]
) -> None:
    assert written_fields(typed) == tuple(contract.model_fields)


def test_a_written_report_is_read_back_whole_by_the_model_and_the_schema() -> None:
    text = render(_full_report(), "json")
    read = model.Report.model_validate_json(text)
    found: set[tuple[str, str]] = set()
    _set_fields(read, found)
    every = {(contract.__name__, name) for _, contract in PAIRS for name in contract.model_fields}
    assert every - found == set(), "the full report leaves these fields empty"
    # Nothing is lost or coerced on the way: the model gives back the very same JSON.
    assert read.model_dump(mode="json") == json.loads(text)
    schema = json.loads(committed_schema_path("report").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(text), schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("status", list(sandbox.Status), ids=lambda s: s.value)
def test_a_dry_run_entry_says_how_the_run_ended(status: sandbox.Status) -> None:
    entry = dry_run_entry("notes.delete", 0, ("notes", "delete", "3"), _outcome(status))
    assert entry.status == status.value
    assert entry.passed is (status is sandbox.Status.PASSED)
    assert entry.duration_s == 0.1235
    assert entry.isolation.guarantees == ("no-network", "own-home")
    assert entry.isolation.not_guaranteed == ("no-fs-unix-sockets",)
    assert entry.isolation.bound == ("/home/ci/project", "/home/ci/.venv")
    assert entry.isolation.refused == ("/home/ci/.ssh",)


def _verdict(
    *severities: Severity, runs: tuple[sandbox.Status, ...] = (), interrupted: bool = False
) -> Report:
    return assemble(
        catalog=None,
        counts=COUNTS,
        examples=[],
        diagnostics=[
            diagnostic_entry(Diagnostic(code="c", severity=severity, message="m"))
            for severity in severities
        ],
        dry_runs=[dry_run_entry("t", 0, ["t"], _outcome(status)) for status in runs],
        interrupted=interrupted,
    )


@pytest.mark.parametrize(
    ("report", "ok", "summary"),
    [
        pytest.param(_verdict(), True, "All checks passed: 0 examples of 2 tools.", id="nothing"),
        pytest.param(
            _verdict(Severity.WARNING),
            True,
            "All checks passed: 0 examples of 2 tools (1 warning).",
            id="a warning",
        ),
        pytest.param(
            _verdict(Severity.ERROR, Severity.WARNING, Severity.WARNING),
            False,
            "Found 1 error and 2 warnings in 0 examples of 2 tools (0 examples failed).",
            id="an error",
        ),
        pytest.param(
            _verdict(runs=(sandbox.Status.PASSED, sandbox.Status.TIMED_OUT)),
            False,
            "Found 0 errors in 0 examples of 2 tools (0 examples failed; 1 of 2 dry runs passed).",
            id="a failed dry run",
        ),
        pytest.param(
            _verdict(runs=(sandbox.Status.PASSED,), interrupted=True),
            False,
            "Interrupted: 0 examples of 2 tools checked; 1 of 1 dry run ran before the "
            "interruption (1 passed).",
            id="interrupted",
        ),
    ],
)
def test_the_builder_decides_the_verdict_every_renderer_shows(
    report: Report, ok: bool, summary: str
) -> None:
    assert report.ok is ok
    assert render(report, "text").splitlines()[-1] == summary
    assert json.loads(render(report, "json"))["ok"] is ok
    assert render(report, "github").endswith(f"the run {'passed' if ok else 'failed'}\n")


# -- a project whose catalog holds an escaped example --------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The sample project, its second example now ``... --format \\"yaml\\"`` (a bad choice)."""
    root = tmp_path / "project"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    catalog = root / "catalog.json"
    text = catalog.read_text(encoding="utf-8")
    escaped = text.replace("--format json", '--format \\"yaml\\"')
    assert escaped != text
    catalog.write_text(escaped, encoding="utf-8")
    assert json.loads(escaped)["tools"][0]["examples"][1]["command"] == ESCAPED_EXAMPLE
    return root


def _bad_choice(log: dict[str, Any]) -> dict[str, Any]:
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "bad-choice"]
    region: dict[str, Any] = result["locations"][0]["physicalLocation"]["region"]
    return region


def _covered(project: Path, region: dict[str, Any]) -> str:
    """The text of the catalog a SARIF region covers (columns are 1-based, the end exclusive)."""
    assert region["endLine"] == region["startLine"]
    lines = (project / "catalog.json").read_text(encoding="utf-8").splitlines()
    line = lines[region["startLine"] - 1]
    covered: str = line[region["startColumn"] - 1 : region["endColumn"] - 1]
    return covered


def _sarif_of(report: Report) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(render(report, "sarif"))
    assert sarif_errors(log) == []
    return log


def test_a_sarif_region_ends_where_the_report_says_the_text_ends(project: Path) -> None:
    outcome = validate(load_config(None, project))
    assert outcome.report is not None
    (found,) = [d for d in outcome.report.diagnostics if d.code == "bad-choice"]
    assert found.location is not None
    assert found.location.line is not None
    line = (
        (project / "catalog.json").read_text(encoding="utf-8").splitlines()[found.location.line - 1]
    )
    start = line.index(ESCAPED_WORD)
    assert found.location.column == start + 1  # the start is mapped through the escapes
    # The end, mapped through the file the same way: the closing \" is the last character.
    ended = dataclasses.replace(
        found.location, end_line=found.location.line, end_column=start + len(ESCAPED_WORD)
    )
    report = dataclasses.replace(
        outcome.report, diagnostics=(dataclasses.replace(found, location=ended),)
    )
    region = _bad_choice(_sarif_of(report))
    assert _covered(project, region) == ESCAPED_WORD
    assert json.loads(render(report, "json"))["diagnostics"][0]["location"]["end_column"] == (
        start + len(ESCAPED_WORD)
    )


def test_without_an_end_a_sarif_region_is_as_wide_as_the_span(project: Path) -> None:
    outcome = validate(load_config(None, project))
    assert outcome.report is not None
    (found,) = [d for d in outcome.report.diagnostics if d.code == "bad-choice"]
    assert found.location is not None
    assert found.span is not None
    bare = dataclasses.replace(found.location, end_line=None, end_column=None)
    report = dataclasses.replace(
        outcome.report, diagnostics=(dataclasses.replace(found, location=bare),)
    )
    region = _bad_choice(_sarif_of(report))
    assert found.location.column is not None
    assert region["endColumn"] == found.location.column + found.span.end - found.span.start


# -- report merge ---------------------------------------------------------------------------------


def _shards(project: Path) -> list[Path]:
    paths = []
    for index in (1, 2):
        path = project / f"shard-{index}.json"
        result = run_cli(
            ["validate", "--shard", f"{index}/2", "--format", "json", "--output", path.name],
            cwd=project,
        )
        assert result.returncode in (0, 1), result.stderr
        paths.append(path)
    return paths


def _merge(project: Path, shards: list[Path], output_format: str) -> str:
    result = run_cli(
        ["report", "merge", *(p.name for p in shards), "--format", output_format], cwd=project
    )
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_a_merged_report_keeps_its_catalog(project: Path) -> None:
    merged = json.loads(_merge(project, _shards(project), "json"))
    assert merged["catalog"] == "catalog.json"
    model.Report.model_validate(merged)


def test_a_merged_junit_suite_is_named_after_the_catalog_as_unsharded(project: Path) -> None:
    unsharded = run_cli(["validate", "--format", "junit"], cwd=project)
    merged = _merge(project, _shards(project), "junit")
    names = [ET.fromstring(text).find("testsuite") for text in (unsharded.stdout, merged)]
    assert [suite.get("name") for suite in names if suite is not None] == ["catalog.json"] * 2


def test_a_merged_sarif_log_places_a_finding_about_no_file_on_the_catalog(
    project: Path,
) -> None:
    shards = _shards(project)
    first = json.loads(shards[0].read_text(encoding="utf-8"))
    # A finding about no file in particular, as a shard's report may carry one.
    first["diagnostics"].append(
        {
            "code": "uncovered-command",
            "severity": "error",
            "tool": None,
            "example": None,
            "message": "the command 'notes purge' has no tool and no exclusion",
            "hint": None,
            "file": None,
            "location": None,
            "span": None,
        }
    )
    shards[0].write_text(json.dumps(first), encoding="utf-8")
    log = json.loads(_merge(project, shards, "sarif"))
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "uncovered-command"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "catalog.json"
