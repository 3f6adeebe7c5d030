"""Every report format, rendered from one shared evaluation and compared with reviewed snapshots.

The fixture project has a mix of defects (a bad choice with its span, an unknown flag with a did-you
-mean, an extra positional), a warning on a passing example, a tool id with ``:``, ``,`` and ``%``
in it, and repository-level diagnostics with and without a file (a stale exclusion, counts drift,
an uncovered command). Snapshots live in ``tests/snapshots/``; set
``EXAMPLEGUARD_UPDATE_SNAPSHOTS=1`` to rewrite them, then review the diff by eye. They were
written from the output and reviewed; one line was corrected by hand: in ``report.junit.xml`` a
finding without a file reads ``uncovered-command: ...``, not ``: uncovered-command: ...``.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema.validators import validator_for

import exampleguard
from exampleguard._codes import CODES
from exampleguard._commands.validate import SourceFiles, validate
from exampleguard._config import load_config, repository_root
from exampleguard._diagnostics import Diagnostic, Location, Severity
from exampleguard._report import FORMATS, Report, SourceRoot, render
from exampleguard._report.build import unusable_report
from exampleguard._report.github import render_github
from tests.support.project import REPOSITORY, run_cli
from tests.support.sarif import sarif_errors, sarif_schema

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
SNAPSHOTS = REPOSITORY / "tests" / "snapshots"
SUFFIXES = {
    "text": "txt",
    "json": "json",
    "junit": "junit.xml",
    "sarif": "sarif.json",
    "github": "github.txt",
    "full": "full.txt",
    "concise": "concise.txt",
}
VERSION_PLACEHOLDER = "<exampleguard-version>"

CATALOG: dict[str, Any] = {
    "format": "exampleguard.catalog/v1",
    "program": "notes",
    "tools": [
        {
            "id": "notes.delete",
            "command": ["delete"],
            "summary": "Delete notes by id or by tag",
            "dry_run": {"flag": "--dry-run", "reviewed": True, "evidence": "delete --dry-run"},
            "examples": [
                {"command": "notes delete 3 4 --dry-run"},
                {"command": "notes rm --tag draft --format yaml"},
            ],
        },
        {
            "id": "notes.add",
            "command": ["add"],
            "examples": [
                {"command": "notes add 'Buy milk' --pri%ority 2"},
                {"command": "notes add notes*.txt --priority 2"},
            ],
        },
        {
            "id": "notes.export:v2,50%",
            "command": ["export"],
            "examples": [{"command": "notes export"}, {"command": "notes export --format xml"}],
        },
    ],
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("renderers") / "project"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    (root / "catalog.json").write_text(json.dumps(CATALOG, indent=2), encoding="utf-8")
    tree_path = root / "notes.tree.json"
    tree = json.loads(tree_path.read_text(encoding="utf-8"))
    tree["commands"].append({"path": ["purge"], "runnable": True, "parameters": []})
    tree_path.write_text(json.dumps(tree, indent=2), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def outputs(project: Path) -> dict[str, str]:
    """``validate --format F`` for every format: stdout (exit 1, nothing on stderr)."""
    found: dict[str, str] = {}
    for output_format in FORMATS:
        result = run_cli(["validate", "--format", output_format], cwd=project)
        assert result.returncode == 1, result.stderr
        assert result.stderr == ""
        found[output_format] = result.stdout
    return found


@pytest.fixture(scope="module")
def report(outputs: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(outputs["json"])
    return data


@pytest.fixture(scope="module")
def typed(project: Path) -> Report:
    """The same run in this process: the typed report the CLI rendered."""
    outcome = validate(load_config(None, project))
    assert outcome.report is not None, outcome.unusable
    return outcome.report


def _normalise(output_format: str, text: str) -> str:
    if output_format != "sarif":
        assert exampleguard.__version__ not in text or output_format == "json"
        return text
    line = f'"version": "{exampleguard.__version__}",'
    assert text.count(line) == 1
    return text.replace(line, f'"version": "{VERSION_PLACEHOLDER}",')


def test_the_fixture_has_the_mix_it_promises(report: dict[str, Any]) -> None:
    codes = {d["code"] for d in report["diagnostics"]}
    assert {"bad-choice", "unknown-flag", "shell-expansion", "exclusion-stale"} <= codes
    assert {"counts-drift", "uncovered-command"} <= codes
    assert any(d["severity"] == "warning" for d in report["diagnostics"])
    assert any(d["span"] for d in report["diagnostics"])
    assert any(d["example"] is None and d["file"] for d in report["diagnostics"])
    passing_with_warning = [e for e in report["examples"] if e["ok"] and e["diagnostics"]]
    assert passing_with_warning


@pytest.mark.parametrize("output_format", FORMATS)
def test_snapshot(outputs: dict[str, str], project: Path, output_format: str) -> None:
    path = SNAPSHOTS / f"report.{SUFFIXES[output_format]}"
    # SARIF declares the repository root it is relative to: here, the temporary project.
    actual = _normalise(output_format, outputs[output_format]).replace(
        f'"uri": "{project.as_uri()}/"', '"uri": "file:///<repository>/"'
    )
    if os.environ.get("EXAMPLEGUARD_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
    assert path.exists(), f"no snapshot {path}; run with EXAMPLEGUARD_UPDATE_SNAPSHOTS=1"
    assert actual == path.read_bytes().decode("utf-8")


@pytest.mark.parametrize("output_format", FORMATS)
def test_every_renderer_is_fed_the_same_report(
    outputs: dict[str, str], typed: Report, project: Path, output_format: str
) -> None:
    sources = SourceFiles(project)
    # The CLI anchors SARIF at the repository root, found from where it runs.
    root = SourceRoot(repository_root(project), project) if output_format == "sarif" else None
    assert (
        render(typed, output_format, sources=sources, source_root=root) == (outputs[output_format])
    )


@pytest.mark.parametrize("output_format", FORMATS)
def test_output_file_gets_the_report_and_stdout_nothing(
    project: Path, outputs: dict[str, str], tmp_path: Path, output_format: str
) -> None:
    target = tmp_path / f"report.{SUFFIXES[output_format]}"
    result = run_cli(["validate", "--format", output_format, "--output", str(target)], cwd=project)
    assert result.returncode == 1
    assert result.stdout == ""
    assert target.read_text(encoding="utf-8") == outputs[output_format]


# -- SARIF ----------------------------------------------------------------------------------------


def test_sarif_validates_against_the_official_schema(outputs: dict[str, str]) -> None:
    schema = sarif_schema()
    assert validator_for(schema) is jsonschema.Draft4Validator  # the schema's own dialect
    assert "errata01" in schema["id"]
    log = json.loads(outputs["sarif"])
    assert sarif_errors(log) == []


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param(lambda log: log["runs"][0]["results"][0].pop("message"), id="no message"),
        pytest.param(lambda log: log.pop("version"), id="no version"),
        pytest.param(lambda log: log["runs"][0]["tool"]["driver"].pop("name"), id="no tool name"),
        pytest.param(
            lambda log: log["runs"][0]["results"][0].update(level="fatal"), id="unknown level"
        ),
        pytest.param(
            lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
                "region"
            ].update(startLine=0),
            id="line zero",
        ),
    ],
)
def test_a_broken_sarif_log_fails_the_same_check(
    outputs: dict[str, str], breakage: Callable[[dict[str, Any]], object]
) -> None:
    log = json.loads(outputs["sarif"])
    broken = copy.deepcopy(log)
    breakage(broken)
    assert sarif_errors(broken) != []


def test_sarif_rules_come_from_the_registry(
    outputs: dict[str, str], report: dict[str, Any]
) -> None:
    run = json.loads(outputs["sarif"])["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == list(CODES)
    for rule in rules:
        code = CODES[rule["id"]]
        assert rule["shortDescription"]["text"] == code.summary
        assert code.what in rule["fullDescription"]["text"]
        assert code.fix in rule["help"]["text"]
    assert len(run["results"]) == len(report["diagnostics"])
    for result, diagnostic in zip(run["results"], report["diagnostics"], strict=True):
        assert result["ruleId"] == diagnostic["code"]
        assert rules[result["ruleIndex"]]["id"] == diagnostic["code"]
        assert result["level"] == diagnostic["severity"]
        if diagnostic["file"] is None:
            continue
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == diagnostic["file"]
        assert physical["region"]["startLine"] == diagnostic["location"]["line"]
        assert physical["region"]["startColumn"] == diagnostic["location"]["column"]
        if diagnostic["span"]:
            width = diagnostic["span"]["end"] - diagnostic["span"]["start"]
            assert physical["region"]["endColumn"] == diagnostic["location"]["column"] + width


def test_every_sarif_result_has_a_location_github_accepts(outputs: dict[str, str]) -> None:
    # GitHub code scanning rejects the whole upload when one result has no location
    # ("locationFromSarifResult: expected at least one location"); a repository-level finding
    # such as uncovered-command still needs one (the configuration or the tree, for example).
    results = json.loads(outputs["sarif"])["runs"][0]["results"]
    missing = [r["ruleId"] for r in results if not r.get("locations")]
    assert missing == []
    for result in results:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]


def _report_of(*diagnostics: Diagnostic, catalog: str | None = "agents.json") -> Report:
    """A report of nothing but ``diagnostics``, made by the builder."""
    return unusable_report(diagnostics, catalog)


def test_a_finding_about_no_file_is_placed_on_the_catalog_in_sarif() -> None:
    report = _report_of(
        Diagnostic(
            code="uncovered-command",
            severity=Severity.ERROR,
            message="the command 'notes purge' has no tool and no exclusion",
        )
    )
    log = json.loads(render(report, "sarif"))
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "agents.json"
    assert sarif_errors(log) == []


# -- JUnit ----------------------------------------------------------------------------------------


def _cases(xml_text: str) -> tuple[ET.Element, dict[str, ET.Element]]:
    root = ET.fromstring(xml_text)
    (suite,) = root.findall("testsuite")
    return suite, {case.get("name", ""): case for case in suite.findall("testcase")}


def test_junit_has_one_case_per_example_and_the_repository_checks(
    outputs: dict[str, str], report: dict[str, Any]
) -> None:
    suite, cases = _cases(outputs["junit"])
    names = [f"{e['tool']}[{e['index']}]" for e in report["examples"]]
    assert list(cases) == [*names, "repository checks"]
    assert suite.get("tests") == str(len(cases))
    failing = {name for name, case in cases.items() if case.find("failure") is not None}
    assert suite.get("failures") == str(len(failing))
    assert failing == {f"{e['tool']}[{e['index']}]" for e in report["examples"] if not e["ok"]} | {
        "repository checks"
    }
    for example in report["examples"]:
        failure = cases[f"{example['tool']}[{example['index']}]"].find("failure")
        errors = [d["code"] for d in example["diagnostics"] if d["severity"] == "error"]
        if errors:
            assert failure is not None
            assert failure.get("type") == errors[0]
            for code in errors:
                assert f"{code}:" in (failure.get("message") or "")
                assert code in (failure.text or "")
    repository = cases["repository checks"].find("failure")
    assert repository is not None
    for diagnostic in report["diagnostics"]:
        if diagnostic["example"] is None:
            assert diagnostic["code"] in (repository.text or "")


def test_junit_failure_lines_without_a_file_do_not_start_with_a_colon(
    outputs: dict[str, str],
) -> None:
    suite, _ = _cases(outputs["junit"])
    lines = [line for f in suite.iter("failure") for line in (f.text or "").splitlines()]
    assert any("uncovered-command" in line for line in lines)
    assert [line for line in lines if line.startswith(":")] == []


def _sample(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    return root


def test_junit_fails_when_validate_fails_on_a_reviewer_record(tmp_path: Path) -> None:
    root = _sample(tmp_path)
    (root / "dispositions" / "notes.delete.toml").write_text(
        '[[disposition]]\ntool = "notes.delete"\nexample = 1\nreason_code = "needs-fixture"\n'
        'reason = "Deleting by tag needs a notes database."\ncommand = "notes rm --tag old"\n',
        encoding="utf-8",
    )
    result = run_cli(["validate", "--format", "junit"], cwd=root)
    assert result.returncode == 1
    suite, _ = _cases(result.stdout)
    assert suite.get("failures") != "0", "validate failed, but every JUnit case passed"
    failures = " ".join(f.text or "" for f in suite.iter("failure"))
    assert "disposition-stale" in failures


def test_junit_names_are_stable_whether_the_run_passes_or_fails(tmp_path: Path) -> None:
    root = _sample(tmp_path)
    passing = run_cli(["validate", "--format", "junit"], cwd=root)
    assert passing.returncode == 0, passing.stdout
    catalog_path = root / "catalog.json"
    catalog_path.write_text(
        catalog_path.read_text(encoding="utf-8").replace("--format json", "--format yaml"),
        encoding="utf-8",
    )
    failing = run_cli(["validate", "--format", "junit"], cwd=root)
    assert failing.returncode == 1
    passing_suite, passing_cases = _cases(passing.stdout)
    failing_suite, failing_cases = _cases(failing.stdout)
    # CI systems key test history on suite, class and case names.
    assert passing_suite.get("name") == failing_suite.get("name")
    assert {(c.get("classname"), n) for n, c in passing_cases.items()} == {
        (c.get("classname"), n) for n, c in failing_cases.items()
    }


# -- text -----------------------------------------------------------------------------------------

UNKNOWN = "catalog.json:32:44: unknown-flag notes.add[0]: --pri is not an option of 'notes add'"


@pytest.mark.parametrize(
    ("hint", "suggestion", "lines"),
    [
        pytest.param(
            "Did you mean --priority?",
            "--priority",
            [f"{UNKNOWN} (did you mean --priority?)"],
            id="a suggestion and its did-you-mean",
        ),
        pytest.param(
            "Did you mean 'priority'?",
            "priority",
            [f"{UNKNOWN} (did you mean 'priority'?)"],
            id="a suggestion in the stage's own words",
        ),
        pytest.param(
            None, "--priority", [f"{UNKNOWN} (did you mean --priority?)"], id="a bare suggestion"
        ),
        pytest.param(
            "Did you mean to quote it?",
            None,
            [UNKNOWN, "  help: Did you mean to quote it?"],
            id="a hint that reads like one is still a hint",
        ),
        pytest.param(
            "Give it at the group's level.",
            None,
            [UNKNOWN, "  help: Give it at the group's level."],
            id="a hint",
        ),
    ],
)
def test_text_shows_a_suggestion_inline_and_any_other_hint_apart(
    hint: str | None, suggestion: str | None, lines: list[str]
) -> None:
    report = _report_of(
        Diagnostic(
            code="unknown-flag",
            severity=Severity.ERROR,
            message="--pri is not an option of 'notes add'",
            hint=hint,
            suggestion=suggestion,
            tool="notes.add",
            example=0,
            location=Location("catalog.json", 32, 44),
        )
    )
    assert render(report, "text").splitlines()[:-1] == lines


# -- GitHub annotations ---------------------------------------------------------------------------


def _unescape(text: str) -> str:
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def _parse_annotation(line: str) -> tuple[str, dict[str, str], str]:
    assert line.startswith("::")
    command, _, rest = line[2:].partition(" ")
    properties_text, separator, message = rest.partition("::")
    assert separator, line
    properties = {}
    for item in properties_text.split(","):
        key, equals, value = item.partition("=")
        assert equals, line
        assert ":" not in value
        properties[key] = _unescape(value)
    return command, properties, _unescape(message)


def test_github_annotations_round_trip_every_diagnostic(
    outputs: dict[str, str], report: dict[str, Any]
) -> None:
    lines = outputs["github"].splitlines()
    assert len(lines) == len(report["diagnostics"]) + 1
    for line, diagnostic in zip(lines, report["diagnostics"], strict=False):
        command, properties, message = _parse_annotation(line)
        assert command == diagnostic["severity"]
        subject = diagnostic["tool"]
        if subject is not None and diagnostic["example"] is not None:
            subject += f"[{diagnostic['example']}]"
        expected_title = diagnostic["code"] + (f" {subject}" if subject else "")
        assert properties["title"] == expected_title
        if diagnostic["file"]:
            assert properties["file"] == diagnostic["file"]
            assert properties["line"] == str(diagnostic["location"]["line"])
            assert properties["col"] == str(diagnostic["location"]["column"])
        else:
            assert "file" not in properties
        assert message.startswith(diagnostic["message"])
        if diagnostic["hint"]:
            assert message.endswith("\n" + diagnostic["hint"])
        assert "\n" not in line
    assert lines[-1].startswith("::notice title=exampleguard::")


def test_github_escapes_data_and_properties() -> None:
    report = _report_of(
        Diagnostic(
            code="unknown-flag",
            severity=Severity.ERROR,
            message="100% wrong,\r\nreally: yes",
            hint="Use --x, not --y: 50%",
            tool="a:b,c%d",
            example=0,
            location=Location("dir,one/cat:alog%.json", line=3, column=7),
        ),
        Diagnostic(
            code="counts-missing",
            severity=Severity.WARNING,
            message="no line",
            location=Location("counts.json"),
        ),
    )
    assert render_github(report).splitlines() == [
        "::error file=dir%2Cone/cat%3Aalog%25.json,line=3,col=7,"
        "title=unknown-flag a%3Ab%2Cc%25d[0]::"
        "100%25 wrong,%0D%0Areally: yes%0AUse --x, not --y: 50%25",
        "::warning file=counts.json,title=counts-missing::no line",
        "::notice title=exampleguard::0 examples checked; the run failed",
    ]
