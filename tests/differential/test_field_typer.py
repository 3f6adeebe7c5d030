"""Typer's own CLI (``typer``): a command created inside a callback.

``typer PATH run`` has no ``run`` until the group's callback has read ``PATH``: Typer's
``TyperCLIGroup`` imports the file as it looks commands up and adds ``run`` then. A tree read
without a command line cannot hold it. The tree records that the group looks its commands up
with its own code (``own_lookup``); a catalog tool on ``run`` is ``dynamic-command`` (not
``tool-unbound``), and an example that names ``run`` gets a hint that says so. Where the file
exists, the framework's own lookup materialises ``run`` while judging, and its verdict stands.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import typer.cli

from exampleguard._adapters.clickfamily import as_click_command
from exampleguard._bind import bind
from tests.support.click_field import FieldCLI, field_disagreement
from tests.support.project import make_project, run_cli

TYPER_APP = """import typer

app = typer.Typer()


@app.command()
def main(name: str = "x"):
    pass
"""


@pytest.fixture
def fresh_typer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FieldCLI:
    # `typer` keeps what its callback read in a module-level state, and adds `run` to its
    # group for good once a file is loaded: both are put back after each test.
    monkeypatch.chdir(tmp_path)
    command = as_click_command(typer.cli.app)
    monkeypatch.setattr(typer.cli, "state", typer.cli.State())
    monkeypatch.setattr(command, "commands", dict(command.commands))
    return FieldCLI("typer", "typer", command)


PINNED = (
    ("utils", "docs", "--name", "x"),
    ("utils", "docs", "--output"),
    ("utils", "bogus"),
    ("--version", "utils"),
    ("--app", "app", "utils", "docs"),
)


@pytest.mark.parametrize("argv", PINNED, ids=" ".join)
def test_typer_command_lines_get_typers_verdict(
    fresh_typer: FieldCLI, argv: tuple[str, ...]
) -> None:
    message = field_disagreement(fresh_typer, argv, Counter())
    assert message is None, message


def test_the_tree_says_the_group_looks_its_commands_up_itself(fresh_typer: FieldCLI) -> None:
    root = fresh_typer.tree.command([])
    assert root is not None
    assert root.own_lookup == "TyperCLIGroup.get_command"
    assert fresh_typer.tree.command(["run"]) is None


def test_run_without_its_file_is_rejected_on_both_sides_with_a_hint(
    fresh_typer: FieldCLI,
) -> None:
    argv = ["main.py", "run"]
    message = field_disagreement(fresh_typer, argv, Counter())
    assert message is None, message
    final = fresh_typer.final(argv)
    # Typer imports `main.py` as a module and raises: no verdict, the model judges.
    assert final.by == "model"
    assert final.verdict.message == "ModuleNotFoundError: No module named 'main'"
    [problem] = bind(fresh_typer.contract, ["typer", *argv]).problems
    assert problem.code == "unknown-command"
    assert problem.hint is not None
    assert "TyperCLIGroup.get_command" in problem.hint


def test_run_with_its_file_is_materialised_by_the_frameworks_lookup(
    fresh_typer: FieldCLI, tmp_path: Path
) -> None:
    (tmp_path / "main.py").write_text(TYPER_APP, encoding="utf-8")
    verdict = fresh_typer.judge.judge(["main.py", "run", "--name", "y"])
    assert verdict.accepted is True
    assert verdict.path == ("run",)
    rejected = fresh_typer.judge.judge(["main.py", "run", "--bogus"])
    assert (rejected.accepted, rejected.error) == (False, "NoSuchOption")


def test_validate_names_a_command_created_in_a_callback(tmp_path: Path) -> None:
    tools: list[dict[str, Any]] = [
        {"id": "typer.run", "command": ["run"], "examples": [{"command": "typer main.py run"}]},
        {"id": "typer.docs", "command": ["utils", "docs"], "examples": []},
    ]
    root = make_project(tmp_path, tools, program="typer", dialect=None, tree="typer:typer.cli:app")
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    assert result.returncode == 1, report
    # Once on the tool's command, once on its example: neither says tool-unbound.
    on_tool = [d for d in report["diagnostics"] if d.get("tool") == "typer.run"]
    assert [(d["code"], d["example"]) for d in on_tool] == [
        ("dynamic-command", None),
        ("dynamic-command", 0),
    ]
    assert "'typer' (TyperCLIGroup.get_command)" in on_tool[0]["message"]
    assert "inside a callback" in on_tool[0]["message"]
    assert "tool-unbound" not in json.dumps(report)
    [example] = [e for e in report["examples"] if e["tool"] == "typer.run"]
    assert example["ok"] is False
    assert [d["code"] for d in example["diagnostics"]] == ["dynamic-command"]
