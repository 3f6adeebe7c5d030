"""Safety metadata checked against real Click, Typer and argparse commands (``safety-drift``).

Each row is one tool of a real application and the ``safety`` block a catalog gives it; the
check must report exactly the drift expected, in both directions: a gate the metadata denies,
metadata that claims a gate the command does not show, a bypass flag the command lacks, and a
flag that answers the prompt left unbanned.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import make_project, run_cli

CLICK_APP = """
import click


@click.group()
def cli():
    pass


@cli.command()
@click.confirmation_option("--really", prompt="Purge everything?")
def purge():
    pass


@cli.command()
@click.option("--force", is_flag=True, prompt="Wipe the cache?")
def wipe(force):
    pass


@cli.command()
@click.option("--yes", "-y", is_flag=True)
def drop(yes):
    if not yes:
        click.confirm("Drop the table?", abort=True)


@cli.command()
def show():
    pass
"""

TYPER_APP = """
import typer

app = typer.Typer()


@app.command()
def reset(force: bool = typer.Option(False, "--force", prompt="Reset every setting?")):
    pass


@app.command()
def status():
    pass
"""

ARGPARSE_APP = """
import argparse


def parser():
    main = argparse.ArgumentParser(prog="ops")
    commands = main.add_subparsers(dest="command")
    apply = commands.add_parser("apply")
    apply.add_argument("--auto-approve", action="store_true")
    commands.add_parser("destroy")
    commands.add_parser("plan")
    return main
"""

APPS = {
    "click": ("click:safe_click:cli", "safe_click", CLICK_APP),
    "typer": ("typer:safe_typer:app", "safe_typer", TYPER_APP),
    "argparse": ("argparse:safe_argparse:parser", "safe_argparse", ARGPARSE_APP),
}


def safety_run(
    root: Path, app: str, command: list[str], safety: dict[str, Any] | None, **settings: Any
) -> tuple[int, list[dict[str, Any]]]:
    """Validate one tool of ``app`` with ``safety``; the exit code and the safety diagnostics."""
    spec, module, source = APPS[app]
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    tool: dict[str, Any] = {"id": "tool", "command": command}
    if safety is not None:
        tool["safety"] = safety
    make_project(root, [tool], program="app", dialect=None, tree=spec, settings=settings)
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    found = [d for d in report["diagnostics"] if d["code"].startswith(("safety-", "gate-"))]
    return result.returncode, found


CASES = [
    # A Click confirmation_option: the command asks, whatever the metadata says.
    ("click", ["purge"], {"confirmation": "none", "bypass_flags": ["--really"]}, "asks for"),
    ("click", ["purge"], None, "safety.confirmation is absent"),
    ("click", ["purge"], {"confirmation": "required"}, "--really answers the command's"),
    ("click", ["purge"], {"confirmation": "required", "bypass_flags": ["--really"]}, None),
    # A prompted yes/no flag is a gate too.
    ("click", ["wipe"], {"confirmation": "none"}, "--force answers it"),
    ("click", ["wipe"], {"confirmation": "required", "bypass_flags": ["--force"]}, None),
    # A gate in the command's body: its bypass flag (--yes, banned by default) is the evidence.
    ("click", ["drop"], {"confirmation": "required"}, None),
    # No gate at all.
    ("click", ["show"], {"confirmation": "none"}, None),
    ("click", ["show"], {"confirmation": "required"}, "shows no gate"),
    ("click", ["show"], {"confirmation": "none", "bypass_flags": ["-y"]}, "names -y"),
    ("typer", ["reset"], {"confirmation": "none"}, "--force answers it"),
    ("typer", ["reset"], {"confirmation": "required", "bypass_flags": ["--force"]}, None),
    ("typer", ["status"], {"confirmation": "required"}, "shows no gate"),
    ("typer", ["status"], {"confirmation": "none"}, None),
    # argparse has no prompts: a bypass flag the command accepts is the only visible evidence.
    ("argparse", ["apply"], {"confirmation": "required", "bypass_flags": ["--auto-approve"]}, None),
    ("argparse", ["destroy"], {"confirmation": "required"}, "shows no gate"),
    ("argparse", ["destroy"], {"confirmation": "none", "bypass_flags": ["--yes"]}, "names --yes"),
    ("argparse", ["plan"], {"confirmation": "none"}, None),
]


@pytest.mark.parametrize(
    ("app", "command", "safety", "expected"),
    CASES,
    ids=[f"{c[0]}-{c[1][0]}-{i}" for i, c in enumerate(CASES)],
)
def test_safety_is_checked_against_the_real_command(
    tmp_path: Path,
    app: str,
    command: list[str],
    safety: dict[str, Any] | None,
    expected: str | None,
) -> None:
    # The applications' other commands have no tool: the run's exit code says so too.
    code, found = safety_run(tmp_path, app, command, safety)
    if expected is None:
        assert found == [], found
    else:
        assert {d["code"] for d in found} == {"safety-drift"}, found
        assert any(expected in d["message"] for d in found), found
        assert code == 1


ARGPARSE_TOOLS = [
    {"id": "ops.destroy", "command": ["destroy"], "safety": {"confirmation": "required"}},
    {"id": "ops.plan", "command": ["plan"], "safety": {"confirmation": "required"}},
    {"id": "ops.apply", "command": ["apply"], "safety": {"confirmation": "none"}},
]


def gate_run(root: Path, records: str) -> tuple[int, list[tuple[str, str | None]]]:
    """Validate the argparse app's three tools with ``records`` as dispositions/gates.toml."""
    spec, module, source = APPS["argparse"]
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    (root / "dispositions").mkdir()
    (root / "dispositions" / "gates.toml").write_text(records, encoding="utf-8")
    make_project(root, ARGPARSE_TOOLS, program="ops", dialect=None, tree=spec)
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    found = [
        (d["code"], d["tool"])
        for d in report["diagnostics"]
        if d["code"].startswith(("safety-", "gate-"))
    ]
    return result.returncode, found


DESTROY_GATE = """
[[gate]]
tool = "ops.destroy"
reason = "destroy asks for the workspace name on its terminal before it deletes anything."
reviewer = "a-reviewer"
evidence = ["ops/destroy.py:41 input('Type the workspace name')"]
"""


def test_a_reviewed_gate_record_silences_exactly_its_tool(tmp_path: Path) -> None:
    code, found = gate_run(tmp_path, DESTROY_GATE)
    # ops.destroy is silenced by its record; ops.plan, in the same state, is not.
    assert found == [("safety-drift", "ops.plan")]
    assert code == 1


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        pytest.param(
            DESTROY_GATE.replace("ops.destroy", "ops.apply"),
            ("gate-stale", "ops.apply"),
            id="confirmation-not-required",
        ),
        pytest.param(
            DESTROY_GATE.replace("ops.destroy", "ops.nuke"), ("gate-invalid", None), id="unknown"
        ),
        pytest.param(DESTROY_GATE + DESTROY_GATE, ("gate-duplicate", None), id="duplicate"),
    ],
)
def test_a_gate_record_that_silences_nothing_is_a_defect(
    tmp_path: Path, records: str, expected: tuple[str, str | None]
) -> None:
    _, found = gate_run(tmp_path, records)
    codes = [(code, tool if expected[1] else None) for code, tool in found]
    assert expected in codes, found


def test_a_snapshot_of_the_tree_is_checked_the_same_way(tmp_path: Path) -> None:
    spec, module, source = APPS["click"]
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    snapshot = run_cli(
        ["tree", "--tree", spec, "--program", "app", "--format", "json"], cwd=tmp_path
    )
    assert snapshot.returncode == 0, snapshot.stderr
    (tmp_path / "tree.json").write_text(snapshot.stdout, encoding="utf-8")
    tool = {"id": "tool", "command": ["purge"], "safety": {"confirmation": "none"}}
    make_project(tmp_path, [tool], program="app", dialect=None, tree="tree.json")
    report = json.loads(run_cli(["validate", "--format", "json"], cwd=tmp_path).stdout)
    drift = [d["message"] for d in report["diagnostics"] if d["code"] == "safety-drift"]
    assert any("--really answers it" in message for message in drift), drift
