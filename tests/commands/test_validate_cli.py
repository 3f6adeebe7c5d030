"""``exampleguard validate`` and ``counts`` end to end, through the real command line.

What a user sees: the ruff-style text report and its summary, colour only on a terminal (or
when forced), the JSON report's shape and typed arguments, the exit codes, and that checking
never writes a file (only ``counts --write`` does). The repository's own catalog passes.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from exampleguard._report.model import Report
from exampleguard.schemas import committed_schema_path
from tests.support.project import (
    FIXTURE_APPS,
    REPOSITORY,
    assert_unusable_report,
    make_project,
    run_cli,
    write_config,
)

SAMPLE_PROJECT = REPOSITORY / "tests" / "fixtures" / "sample-project"

PARAMETERS: list[dict[str, Any]] = [
    {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
    {"name": "tag", "flags": ["--tag", "-t"], "multiple": True},
    {"name": "all", "flags": ["--all"], "type": "boolean"},
    {"name": "recursive", "flags": ["--recursive", "-r"], "type": "boolean"},
    {"name": "color", "flags": ["--color"], "negation_flags": ["--no-color"], "type": "boolean"},
    {"name": "verbose", "flags": ["-v"], "count": True},
    {"name": "limit", "flags": ["--limit"], "type": "integer"},
    {"name": "ratio", "flags": ["--ratio"], "type": "number"},
    {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
]


def delete_tool(*examples: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": "notes.delete",
        "command": ["delete"],
        "aliases": [["rm"]],
        "parameters": PARAMETERS,
        **fields,
        "examples": [{"command": command} for command in examples],
    }


def position(root: Path, example: str, fragment: str) -> tuple[int, int]:
    """1-based line and column of ``fragment`` of ``example`` in the project's catalog.json."""
    lines = (root / "catalog.json").read_text(encoding="utf-8").splitlines()
    encoded = json.dumps(example)
    (number,) = [i for i, line in enumerate(lines, start=1) if encoded in line]
    line = lines[number - 1]
    return number, line.index(encoded) + encoded.index(fragment) + 1


# -- text -----------------------------------------------------------------------------------------


def test_text_report_is_ruff_style(tmp_path: Path) -> None:
    good = "notes delete 3 --recursive"
    suggestion = "notes delete 3 --recurse"
    helped = "notes tags --format yaml"
    make_project(
        tmp_path,
        [
            delete_tool(good, suggestion),
            {
                "id": "notes.tags",
                "command": ["tags"],
                "parameters": [{"name": "format", "flags": ["--format"], "choices": ["a", "b"]}],
                "examples": [{"command": helped}],
            },
        ],
    )
    result = run_cli(["validate", "--format", "concise"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    line, column = position(tmp_path, suggestion, "--recurse")
    line2, column2 = position(tmp_path, helped, "yaml")
    assert result.stdout.splitlines() == [
        f"catalog.json:{line}:{column}: unknown-flag notes.delete[1]: --recurse is not an option "
        "of 'notes delete' (did you mean --recursive?)",
        f"catalog.json:{line2}:{column2}: bad-choice notes.tags[0]: 'yaml' is not one of 'a', 'b' "
        "for --format",
        "  help: Choose from: a, b",
        "Found 2 errors in 3 examples of 2 tools (2 examples failed).",
    ]
    assert result.stderr == ""


def test_text_report_of_a_clean_run(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(SAMPLE_PROJECT, project)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "All checks passed: 3 examples of 2 tools.\n"


def test_text_report_with_a_warning_passes(tmp_path: Path) -> None:
    example = "notes delete 3 --format json --format text"
    make_project(tmp_path, [delete_tool(example)])
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    line, column = position(tmp_path, example, "--format text")
    assert result.stdout.splitlines()[0] == (
        f"catalog.json:{line}:{column}: repeated-option notes.delete[0]: --format is given more "
        "than once; only the last value takes effect"
    )
    assert result.stdout.splitlines()[-1] == "All checks passed: 1 example of 1 tool (1 warning)."


# -- colour ---------------------------------------------------------------------------------------

ESCAPE = "\x1b["


@pytest.fixture(scope="module")
def defective(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("colour")
    make_project(root, [delete_tool("notes delete 3 --recurse")])
    return root


def _environment(**changes: str | None) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    # run_cli sets NO_COLOR=1 when it is absent; an empty NO_COLOR means "not set" (no-color.org).
    environment["NO_COLOR"] = ""
    for key, value in changes.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return environment


@pytest.mark.parametrize(
    ("args", "environment", "coloured"),
    [
        (["validate"], {}, False),
        (["validate"], {"FORCE_COLOR": "1"}, True),
        (["validate"], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (["validate", "--format", "json"], {"FORCE_COLOR": "1"}, False),
        (["validate", "--format", "github"], {"FORCE_COLOR": "1"}, False),
    ],
    ids=["piped", "FORCE_COLOR", "NO_COLOR wins", "json never", "github never"],
)
def test_colour(
    defective: Path, args: list[str], environment: dict[str, str], coloured: bool
) -> None:
    result = run_cli(args, cwd=defective, env=_environment(**environment))
    assert result.returncode == 1
    assert (ESCAPE in result.stdout) is coloured, result.stdout
    if coloured:
        assert f"{ESCAPE}1;31munknown-flag{ESCAPE}0m" in result.stdout


def test_colour_on_a_terminal(defective: Path) -> None:
    """With stdout on a real (pseudo-)terminal and nothing forced, the report is coloured."""
    environment = _environment()
    environment["PYTHONPATH"] = os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)])
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "exampleguard", "validate"],
            cwd=defective,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        _, err = process.communicate(timeout=60)
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    output = b"".join(chunks).decode()
    assert process.returncode == 1, err
    assert f"{ESCAPE}1;31munknown-flag{ESCAPE}0m" in output
    assert "Found 1 error in 1 example of 1 tool" in output


# -- JSON -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def json_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    root = tmp_path_factory.mktemp("json")
    make_project(
        root,
        [
            delete_tool(
                "notes rm 3 4 --tag a -t b --limit 5 --ratio 0.5 -vvv --no-color --all",
                "notes delete 3 --recurse",
            ),
            {
                "id": "notes.broken",
                "command": ["broken"],
                "examples": [{"command": "notes broken 'unclosed"}],
            },
        ],
    )
    result = run_cli(["validate", "--format", "json"], cwd=root)
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout), result.stderr


def test_json_report_matches_the_model_and_the_committed_schema(
    json_report: tuple[Any, str],
) -> None:
    data, stderr = json_report
    assert stderr == ""  # machine formats: stdout carries the report and nothing else
    Report.model_validate(data)
    schema = json.loads(committed_schema_path("report").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    assert data["format"] == "exampleguard.report/v1"
    assert data["ok"] is False
    assert data["counts"]["examples"] == 3
    assert {"tool", "index", "command", "ok", "argv", "path", "arguments", "diagnostics"} <= set(
        data["examples"][0]
    )


def test_json_report_examples(json_report: tuple[Any, str]) -> None:
    data, _ = json_report
    good, bad, broken = data["examples"]
    assert (good["tool"], good["index"], good["ok"], good["diagnostics"]) == (
        "notes.delete",
        0,
        True,
        [],
    )
    assert good["argv"] == [
        *("notes", "rm", "3", "4", "--tag", "a", "-t", "b", "--limit", "5", "--ratio", "0.5"),
        *("-vvv", "--no-color", "--all"),
    ]
    assert good["path"] == ["delete"]  # the alias resolved to the primary path
    assert good["arguments"] == {
        "ids": [3, 4],
        "tag": ["a", "b"],
        "limit": 5,
        "ratio": 0.5,
        "verbose": 3,
        "color": False,
        "all": True,
    }
    types = {name: type(value) for name, value in good["arguments"].items()}
    assert types == {
        "ids": list,
        "tag": list,
        "limit": int,
        "ratio": float,
        "verbose": int,
        "color": bool,
        "all": bool,
    }
    assert (bad["ok"], bad["path"]) == (False, ["delete"])
    assert [d["code"] for d in bad["diagnostics"]] == ["unknown-flag"]
    # An example that does not tokenize has no argv, path or arguments.
    assert broken["ok"] is False
    assert (broken["argv"], broken["path"], broken["arguments"]) == (None, None, None)
    assert [d["code"] for d in broken["diagnostics"]] == ["parse-error"]
    # Top-level diagnostics are the examples' diagnostics (plus repository-level ones).
    assert [d["code"] for d in data["diagnostics"]] == ["unknown-flag", "parse-error"]


def test_arguments_of_numeric_choices_are_numbers(tmp_path: Path) -> None:
    """A parameter typed integer with choices [1, 2, 3]: ``--level 2`` is the number 2."""
    parameters = [
        {"name": "level", "flags": ["--level"], "type": "integer", "choices": [1, 2, 3]},
        {"name": "scale", "flags": ["--scale"], "type": "number", "choices": [0.5, 1.5]},
    ]
    make_project(
        tmp_path,
        [
            {
                "id": "notes.pick",
                "command": ["pick"],
                "parameters": parameters,
                "examples": [{"command": "notes pick --level 2 --scale 1.5"}],
            }
        ],
    )
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    (example,) = json.loads(result.stdout)["examples"]
    assert example["diagnostics"] == []
    assert example["arguments"] == {"level": 2, "scale": 1.5}
    assert type(example["arguments"]["level"]) is int
    assert result.returncode == 0


# -- exit codes -----------------------------------------------------------------------------------


def _clean(root: Path) -> None:
    make_project(root, [delete_tool("notes delete 3")])


def _defect(root: Path) -> None:
    make_project(root, [delete_tool("notes delete --bogus")])


def _warning_only(root: Path) -> None:
    make_project(root, [delete_tool("notes delete 3 --tag *.md")])


def _counts_missing(root: Path) -> None:
    make_project(root, [delete_tool("notes delete 3")], counts=False)


def _malformed_catalog(root: Path) -> None:
    _clean(root)
    (root / "catalog.json").write_text('{"format": "exampleguard.catalog/v1", ', encoding="utf-8")


def _wrong_type(root: Path) -> None:
    _clean(root)
    catalog = json.loads((root / "catalog.json").read_text(encoding="utf-8"))
    catalog["tools"][0]["parameters"][6]["type"] = 5
    (root / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")


def _no_configuration(root: Path) -> None:
    (root / "catalog.json").write_text("{}", encoding="utf-8")


def _tree_not_importable(root: Path) -> None:
    make_project(root, [delete_tool("notes delete 3")], counts=False)
    write_config(root, {"catalog": "catalog.json", "tree": "click:no_such_module:cli"})


@pytest.mark.parametrize(
    ("setup", "args", "code", "stderr_mentions"),
    [
        (_clean, ["validate"], 0, None),
        (_warning_only, ["validate"], 0, None),
        (_defect, ["validate"], 1, None),
        (_counts_missing, ["validate"], 1, None),
        (_malformed_catalog, ["validate"], 2, "catalog.json"),
        (_wrong_type, ["validate"], 2, "tools[0].parameters[6].type"),
        (_no_configuration, ["validate"], 2, "exampleguard.toml"),
        (_tree_not_importable, ["validate"], 2, "no_such_module"),
        (_clean, ["validate", "--format", "yaml"], 2, "yaml"),
        (_clean, ["validate", "--bogus"], 2, "--bogus"),
        (_clean, ["validate", "--shard", "3/2"], 2, "--shard"),
    ],
    ids=[
        "clean",
        "warnings only",
        "defect",
        "counts missing",
        "malformed catalog",
        "wrong value type",
        "no configuration",
        "tree not importable",
        "unknown format",
        "unknown option",
        "bad shard",
    ],
)
def test_exit_codes(
    tmp_path: Path,
    setup: Callable[[Path], None],
    args: list[str],
    code: int,
    stderr_mentions: str | None,
) -> None:
    setup(tmp_path)
    result = run_cli(args, cwd=tmp_path)
    assert result.returncode == code, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    if stderr_mentions is not None:
        assert stderr_mentions in result.stderr, result.stderr
    if code == 2:
        assert_unusable_report(result.stdout, args)


def test_json_exit_code_2_writes_a_report_that_is_not_ok(tmp_path: Path) -> None:
    _malformed_catalog(tmp_path)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 2
    assert_unusable_report(result.stdout)
    assert "catalog.json" in result.stderr


# -- nothing is written ---------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file and directory under ``root``: content hash (or "dir") and modification time.

    The directories' own modification times catch a file created and removed again.
    """
    found: dict[str, tuple[str, int]] = {".": ("dir", root.lstat().st_mtime_ns)}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        digest = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
        found[str(path.relative_to(root))] = (digest, stat.st_mtime_ns)
    return found


APP = """
import click


@click.group()
def cli():
    "Manage notes."


@cli.command()
@click.argument("ids", nargs=-1, type=int)
@click.option("--limit", type=int)
def delete(ids, limit):
    "Delete notes."
"""


@pytest.mark.parametrize("with_tree", [False, True], ids=["catalog only", "imported tree"])
def test_checking_never_writes_a_file(tmp_path: Path, with_tree: bool) -> None:
    """validate (every format), counts and tree write nothing, even importing the tree's module.

    A bytecode cache (``__pycache__``) of the imported application would be a write too.
    """
    tools = [
        {
            "id": "notes.delete",
            "command": ["delete"],
            "parameters": [] if with_tree else PARAMETERS[:1] + PARAMETERS[6:7],
            "examples": [{"command": "notes delete 3 --limit x"}, {"command": "notes delete 4"}],
        }
    ]
    if with_tree:
        (tmp_path / "notesapp.py").write_text(APP, encoding="utf-8")
    make_project(
        tmp_path,
        tools,
        dialect=None if with_tree else "click",
        tree="click:notesapp:cli" if with_tree else None,
    )
    (tmp_path / "dispositions").mkdir()
    before = snapshot(tmp_path)
    runs = [
        *(["validate", "--format", fmt] for fmt in ("text", "json", "junit", "sarif", "github")),
        ["counts"],
        *([["tree"], ["tree", "--format", "json"]] if with_tree else []),
    ]
    for args in runs:
        result = run_cli(args, cwd=tmp_path)
        assert result.returncode in (0, 1), (args, result.stderr)
    assert snapshot(tmp_path) == before


def test_counts_write_writes_the_counts_file_whatever_the_verdicts(tmp_path: Path) -> None:
    make_project(tmp_path, [delete_tool("notes delete 3")])
    counts = tmp_path / "exampleguard-counts.json"
    # The catalog gains an invalid example: validate fails on it and on the drift ...
    make_project(tmp_path, [delete_tool("notes delete 3", "notes delete --bogus")], counts=False)
    assert run_cli(["validate"], cwd=tmp_path).returncode == 1
    before = snapshot(tmp_path)
    # ... and counts --write still records the figures, exiting 0.
    result = run_cli(["counts", "--write"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "wrote exampleguard-counts.json" in result.stdout
    written = json.loads(counts.read_text(encoding="utf-8"))
    assert written["examples"] == 2
    assert written["contract_validated"] == 2
    changed = {name for name, state in snapshot(tmp_path).items() if before.get(name) != state}
    # The counts file (written atomically: the directory changes too), and the lock file that
    # serialises concurrent writers; nothing else.
    assert changed <= {".", "exampleguard-counts.json", ".exampleguard-counts.json.lock"}
    assert "exampleguard-counts.json" in changed
    # Only the unknown flag is left.
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert [d["code"] for d in json.loads(result.stdout)["diagnostics"]] == ["unknown-flag"]


def test_counts_prints_the_figures(tmp_path: Path) -> None:
    make_project(tmp_path, [delete_tool("notes delete 3", "notes delete 4")])
    result = run_cli(["counts"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures == {
        "format": "exampleguard.counts/v1",
        "tools": 1,
        "examples": 2,
        "contract_validated": 2,
        "dry_run_eligible": 0,
        "dry_run_narrowed": 0,
        "excluded": 0,
    }
    assert figures == json.loads(
        (tmp_path / "exampleguard-counts.json").read_text(encoding="utf-8")
    )


def test_counts_without_write_reports_drift(tmp_path: Path) -> None:
    make_project(tmp_path, [delete_tool("notes delete 3")])
    make_project(tmp_path, [delete_tool("notes delete 3", "notes delete 4")], counts=False)
    result = run_cli(["counts"], cwd=tmp_path)
    assert result.returncode == 1
    assert "examples: 1 -> 2" in result.stdout
    assert "contract_validated: 1 -> 2" in result.stdout


# -- dogfood --------------------------------------------------------------------------------------


def test_the_repositorys_own_catalog_passes() -> None:
    result = run_cli(["validate"], cwd=REPOSITORY)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("All checks passed: "), result.stdout
