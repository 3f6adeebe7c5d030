"""The pytest plugin, used by a real test project through ``pytester``.

Each example is an item ``catalog.json::TOOL[INDEX]`` that passes or fails with its diagnostics,
plus one item for the repository-wide checks; nothing is collected unless asked for
(``--exampleguard``, ``pytest = true`` in ``[tool.exampleguard]``, or the ``exampleguard`` ini
option); ``--exampleguard-dryrun`` adds one item per dry run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import run_cli

pytest_plugins = ["pytester"]

DRY_RUN = {"flag": "--dry-run", "reviewed": True, "evidence": "fake_notes.py: delete previews"}

CATALOG: dict[str, Any] = {
    "format": "exampleguard.catalog/v1",
    "program": "notes",
    "dialect": "click",
    "tools": [
        {
            "id": "notes.delete",
            "command": ["delete"],
            "parameters": [
                {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
                {"name": "tag", "flags": ["--tag"], "multiple": True},
                {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"},
            ],
            "dry_run": DRY_RUN,
            "examples": [
                {"command": "notes delete 3 4"},
                {"command": "notes delete --tag broken"},
            ],
        },
        {
            "id": "notes.add",
            "command": ["add"],
            "parameters": [{"name": "text", "positional": True}],
            "examples": [{"command": "notes add 'Buy milk'"}, {"command": "notes add"}],
        },
    ],
}

CONTRACT_ITEMS = {
    "catalog.json::notes.delete[0]": "PASSED",
    "catalog.json::notes.delete[1]": "PASSED",
    "catalog.json::notes.add[0]": "PASSED",
    "catalog.json::notes.add[1]": "FAILED",
    "catalog.json::repository": "PASSED",
}

# A stand-in for the real program: previews succeed, except for the tag "broken".
FAKE_NOTES = """\
import sys

args = sys.argv[1:]
if "--dry-run" not in args:
    sys.exit("refusing to run without --dry-run")
if "broken" in args:
    sys.exit("cannot preview the tag 'broken'")
print("would delete:", " ".join(args))
"""


def _config(extra: str = "") -> str:
    return f'catalog = "catalog.json"\n{extra}'


def _project(pytester: pytest.Pytester, *, config: str | None = None) -> Path:
    root = pytester.path
    # Like a checkout: a root caller's dry runs execute as the sandbox's own uid, which reads
    # only what every user may (pytest makes its temporary dirs 0700).
    root.chmod(0o755)
    (root / "catalog.json").write_text(json.dumps(CATALOG, indent=2), encoding="utf-8")
    (root / "exampleguard.toml").write_text(config or _config(), encoding="utf-8")
    result = run_cli(["counts", "--write"], cwd=root)
    assert result.returncode == 0, result.stderr
    return root


def _statuses(result: pytest.RunResult) -> dict[str, str]:
    """Each item's node id and outcome, from the reports of the in-process run."""
    found: dict[str, str] = {}
    for report in result.reprec.getreports("pytest_runtest_logreport"):  # type: ignore[attr-defined]
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            found[report.nodeid] = report.outcome.upper()
    return found


def test_each_example_is_an_item_that_passes_or_fails(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("--exampleguard", "-v", "-p", "no:cacheprovider")
    assert _statuses(result) == CONTRACT_ITEMS
    result.assert_outcomes(passed=4, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # The failure shows the example and its diagnostic, not a traceback.
    lines = result.outlines
    start = lines.index("$ notes add")
    assert lines[start - 1].strip("_ ") == "notes.add[1]"
    assert lines[start + 1].startswith("catalog.json:")
    assert ": missing-required notes.add[1]: 'notes add' requires" in lines[start + 1]
    assert "Traceback" not in result.stdout.str()


def test_verbose_output_names_items_as_they_are_selected(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("--exampleguard", "-v", "-p", "no:cacheprovider")
    # What -v prints is what a user copies to re-run one example.
    shown = [line.split()[:2] for line in result.outlines if line.startswith("catalog.json::")]
    assert ["catalog.json::notes.delete[0]", "PASSED"] in shown
    assert ["catalog.json::notes.add[1]", "FAILED"] in shown


def test_one_example_can_be_selected_by_its_node_id(pytester: pytest.Pytester) -> None:
    _project(pytester)
    by_keyword = pytester.runpytest("--exampleguard", "-p", "no:cacheprovider", "-k", "add")
    assert set(_statuses(by_keyword)) == {
        "catalog.json::notes.add[0]",
        "catalog.json::notes.add[1]",
    }
    by_id = pytester.runpytest(
        "--exampleguard", "-p", "no:cacheprovider", "catalog.json::notes.add[0]"
    )
    assert _statuses(by_id) == {"catalog.json::notes.add[0]": "PASSED"}
    assert by_id.ret == pytest.ExitCode.OK


def _with_testpaths(pytester: pytest.Pytester, extra: str = "") -> Path:
    """A project whose pytest configuration collects only ``tests/``, as most projects do."""
    root = _project(pytester)
    (root / "exampleguard.toml").unlink()
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("def test_app():\n    pass\n", "utf-8")
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n'
        f'[tool.exampleguard]\ncatalog = "catalog.json"\n{extra}',
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize(
    ("option", "extra", "args"),
    [
        pytest.param("--exampleguard", "", (), id="testpaths"),
        pytest.param("--exampleguard", "", ("tests/test_app.py",), id="a-named-test-file"),
        pytest.param(None, "pytest = true\n", (), id="pytest-true-with-testpaths"),
    ],
)
def test_the_catalog_is_checked_whatever_testpaths_and_arguments_say(
    pytester: pytest.Pytester, option: str | None, extra: str, args: tuple[str, ...]
) -> None:
    _with_testpaths(pytester, extra)
    flags = [option] if option else []
    result = pytester.runpytest(*flags, "-v", "-p", "no:cacheprovider", *args)
    assert _statuses(result) == {**CONTRACT_ITEMS, "tests/test_app.py::test_app": "PASSED"}
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_keyword_selection_applies_to_the_added_items(pytester: pytest.Pytester) -> None:
    _with_testpaths(pytester)
    result = pytester.runpytest("--exampleguard", "-p", "no:cacheprovider", "-k", "add")
    assert set(_statuses(result)) == {
        "catalog.json::notes.add[0]",
        "catalog.json::notes.add[1]",
    }


def test_a_missing_catalog_fails_collection_naming_it(pytester: pytest.Pytester) -> None:
    root = _with_testpaths(pytester)
    (root / "catalog.json").unlink()
    result = pytester.runpytest("--exampleguard", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*exampleguard: the catalog *catalog.json does not exist*"])


def test_a_broken_configuration_is_named_when_the_plugin_is_asked_for(
    pytester: pytest.Pytester,
) -> None:
    root = _with_testpaths(pytester, "unknown_key = 1\n")
    del root
    result = pytester.runpytest("--exampleguard", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*exampleguard: *unknown_key*"])


def test_nothing_is_collected_without_asking(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.assert_outcomes()
    assert "catalog.json::" not in result.stdout.str()


def test_pytest_true_in_the_configuration_enables_it(pytester: pytest.Pytester) -> None:
    _project(pytester, config=_config("pytest = true\n"))
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    assert _statuses(result) == CONTRACT_ITEMS


def test_pytest_true_in_pyproject_enables_it(pytester: pytest.Pytester) -> None:
    root = _project(pytester)
    (root / "exampleguard.toml").unlink()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "notes"\n\n[tool.exampleguard]\ncatalog = "catalog.json"\n'
        "pytest = true\n",
        encoding="utf-8",
    )
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    assert _statuses(result) == CONTRACT_ITEMS


def test_the_exampleguard_ini_option_enables_it(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makeini("[pytest]\nexampleguard = true\n")
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    assert _statuses(result) == CONTRACT_ITEMS


def test_an_ordinary_test_suite_is_untouched(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makepyfile(test_app="def test_app():\n    assert True\n")
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    assert _statuses(result) == {"test_app.py::test_app": "PASSED"}


def test_repository_item_fails_on_counts_drift(pytester: pytest.Pytester) -> None:
    root = _project(pytester)
    counts = json.loads((root / "exampleguard-counts.json").read_text(encoding="utf-8"))
    counts["examples"] += 1
    (root / "exampleguard-counts.json").write_text(json.dumps(counts), encoding="utf-8")
    result = pytester.runpytest("--exampleguard", "-v", "-p", "no:cacheprovider")
    assert _statuses(result)["catalog.json::repository"] == "FAILED"
    result.stdout.fnmatch_lines(["*counts-drift*examples: 5 -> 4*"])


def test_a_stale_disposition_fails_the_run(pytester: pytest.Pytester) -> None:
    root = _project(pytester)
    (root / "dispositions").mkdir()
    (root / "dispositions" / "notes.delete.toml").write_text(
        '[[disposition]]\ntool = "notes.delete"\nexample = 1\nreason_code = "needs-fixture"\n'
        'reason = "Deleting by tag needs a notes database."\ncommand = "notes delete --tag old"\n',
        encoding="utf-8",
    )
    assert run_cli(["validate"], cwd=root).returncode == 1
    result = pytester.runpytest("--exampleguard", "-v", "-p", "no:cacheprovider")
    failing = {node for node, status in _statuses(result).items() if status == "FAILED"}
    # Which item carries it (the repository item or notes.delete[1]) is the plugin's choice;
    # that one must fail is not.
    assert len(failing) >= 2, "validate fails on the stale disposition, but no pytest item does"
    assert "catalog.json::notes.add[1]" in failing
    result.stdout.fnmatch_lines(["*disposition-stale*"])


def test_an_unusable_catalog_is_one_clear_failure(pytester: pytest.Pytester) -> None:
    _project(pytester)
    (pytester.path / "catalog.json").write_text('{"format": "exampleguard.catalog/v1"', "utf-8")
    result = pytester.runpytest("--exampleguard", "-v", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*catalog.json*not valid JSON*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.sandbox
def test_dryrun_adds_one_item_per_dry_run(pytester: pytest.Pytester) -> None:
    script = pytester.path / "fake_notes.py"
    script.write_text(FAKE_NOTES, encoding="utf-8")
    config = _config(
        f"[dryrun]\nexecutable = {json.dumps([sys.executable, str(script)])}\ntimeout = 60\n"
    )
    _project(pytester, config=config)
    result = pytester.runpytest("--exampleguard-dryrun", "-v", "-p", "no:cacheprovider")
    assert _statuses(result) == {
        **CONTRACT_ITEMS,
        "catalog.json::notes.delete[0]::dryrun": "PASSED",
        "catalog.json::notes.delete[1]::dryrun": "FAILED",
    }
    result.stdout.fnmatch_lines(
        ["$ *fake_notes.py delete --dry-run --tag broken", "*cannot preview the tag 'broken'*"]
    )


@pytest.mark.sandbox
def test_dryrun_of_a_narrowed_example_is_skipped_not_passed(pytester: pytest.Pytester) -> None:
    script = pytester.path / "fake_notes.py"
    script.write_text(FAKE_NOTES, encoding="utf-8")
    config = _config(
        f"[dryrun]\nexecutable = {json.dumps([sys.executable, str(script)])}\ntimeout = 60\n"
    )
    root = _project(pytester, config=config)
    added = run_cli(
        [
            "dispositions",
            "add",
            "notes.delete",
            "1",
            "--reason-code",
            "needs-fixture",
            "--reason",
            "Previewing by tag needs a notes database with tagged rows.",
        ],
        cwd=root,
    )
    assert added.returncode == 0, added.stderr
    assert run_cli(["counts", "--write"], cwd=root).returncode == 0
    result = pytester.runpytest("--exampleguard-dryrun", "-v", "-p", "no:cacheprovider")
    statuses = _statuses(result)
    assert statuses["catalog.json::notes.delete[0]::dryrun"] == "PASSED"
    assert statuses["catalog.json::notes.delete[1]::dryrun"] == "SKIPPED"
    assert statuses["catalog.json::notes.delete[1]"] == "PASSED"
