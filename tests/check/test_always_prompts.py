"""A command that always asks for confirmation: one clear diagnostic, on a real Click app.

Click's ``confirmation_option`` prompts unless ``--yes`` is given, and ``--yes`` is a banned
bypass: without it an example is stuck at a prompt, with it the example teaches agents to skip
the confirmation. Either way ``always-prompts`` says that the command must change, once per
example, instead of ``missing-required`` or ``bypass-flag``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from exampleguard._adapters.clickfamily import extract_click
from exampleguard._snapshot import Tree
from tests.support.project import make_project, run_cli

APP = textwrap.dedent(
    '''
    import click


    @click.group()
    def cli():
        """Notes."""


    @cli.command()
    @click.confirmation_option(prompt="Purge every note?")
    @click.option("--dry-run", is_flag=True, help="Show what would be purged.")
    def purge(dry_run):
        """Purge every note."""


    @cli.command()
    @click.confirmation_option("--i-am-sure", prompt="Really wipe?")
    def wipe():
        """Wipe the store."""


    @cli.command()
    @click.option("--yes", is_flag=True, help="Skip the question.")
    @click.option("--dry-run", is_flag=True)
    def prune(yes, dry_run):
        """Prune: asks in the command itself, not while parsing."""
        if not dry_run and not yes:
            click.confirm("Prune?", abort=True)


    @cli.command()
    @click.option("--name", prompt=True)
    def rename(name):
        """Asks for a missing value: an example that gives it is fine."""
    '''
)


SAFETY: dict[str, dict[str, Any]] = {
    "purge": {"confirmation": "required"},
    "wipe": {"confirmation": "required", "bypass_flags": ["--i-am-sure"]},
    "prune": {"confirmation": "none"},
    "rename": {"confirmation": "none"},
}


def _project(tmp_path: Path, examples: dict[str, list[str]]) -> Path:
    (tmp_path / "purgeapp.py").write_text(APP, encoding="utf-8")
    tools: list[dict[str, Any]] = [
        {
            "id": f"notes.{name}",
            "command": [name],
            "examples": [{"command": command} for command in examples.get(name, [])],
            # What each command does (checked as safety-drift, which is not under test here).
            "safety": SAFETY[name],
        }
        for name in ("purge", "wipe", "prune", "rename")
    ]
    return make_project(tmp_path, tools, dialect=None, tree="click:purgeapp:cli")


def _codes(report: dict[str, Any]) -> dict[str, list[str]]:
    return {
        f"{e['tool']}[{e['index']}]": [d["code"] for d in e["diagnostics"]]
        for e in report["examples"]
    }


def test_a_confirmation_option_gets_one_diagnostic_per_example(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "purge": ["notes purge --dry-run", "notes purge --yes"],
            "wipe": ["notes wipe --i-am-sure"],
            "prune": ["notes prune --dry-run"],
            "rename": ["notes rename --name x"],
        },
    )
    result = run_cli(["validate", "--format", "json"], cwd=project)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert _codes(report) == {
        "notes.purge[0]": ["always-prompts"],
        "notes.purge[1]": ["always-prompts"],
        "notes.wipe[0]": ["always-prompts"],
        "notes.prune[0]": [],
        "notes.rename[0]": [],
    }
    by_example = {(d["tool"], d["example"]): d for d in report["diagnostics"]}
    purge = by_example[("notes.purge", 0)]
    assert purge["message"] == (
        "'notes purge' always asks for confirmation: without --yes it stops at a prompt an agent "
        "cannot answer, and --yes only answers the prompt; no example of it can be valid"
    )
    assert "skip the prompt when --dry-run is given" in purge["hint"]
    assert purge["span"] is None
    given = by_example[("notes.purge", 1)]
    assert given["span"] == {"start": 12, "end": 17}  # the --yes the example gives
    wipe = by_example[("notes.wipe", 0)]
    assert "--i-am-sure only answers the prompt" in wipe["message"]
    assert "give it a preview flag" in wipe["hint"]


def test_the_text_report_says_it_once_and_explain_documents_it(tmp_path: Path) -> None:
    project = _project(tmp_path, {"purge": ["notes purge --dry-run"]})
    result = run_cli(["validate", "--format", "concise"], cwd=project)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if ": " in line and line[0] != " "]
    # The other tools have no examples: a warning each, and one error for purge's example.
    errors = [line for line in lines if "tool-without-examples" not in line]
    assert len(lines) == 4
    assert len(errors) == 1
    assert "always-prompts notes.purge[0]:" in errors[0]
    assert "missing-required" not in result.stdout
    explained = run_cli(["explain", "always-prompts"], cwd=project)
    assert explained.returncode == 0
    for section in ("What it means", "Why it matters", "Example", "How to fix it"):
        assert section in explained.stdout
    assert "confirmation_option" in explained.stdout


def test_the_tree_records_a_confirmation_option(tmp_path: Path) -> None:
    pytest.importorskip("click")
    namespace: dict[str, Any] = {}
    exec(compile(APP, "purgeapp.py", "exec"), namespace)
    tree = Tree.model_validate(extract_click(namespace["cli"], "notes"))
    parameters = {
        tuple(command.path): {p.name: p for p in command.parameters} for command in tree.commands
    }
    purge = parameters[("purge",)]["yes"]
    assert (purge.prompt, purge.confirmation, purge.flags) == (True, True, ["--yes"])
    assert parameters[("wipe",)]["i_am_sure"].confirmation
    assert not parameters[("rename",)]["name"].confirmation  # a prompted value, not a confirmation
    assert not parameters[("prune",)]["yes"].prompt


def test_a_prompted_flag_whose_every_spelling_is_banned_always_prompts(tmp_path: Path) -> None:
    # Without a tree: the catalog says the command prompts for -y/--yes; banning --yes bans -y.
    tool = {
        "id": "notes.purge",
        "command": ["purge"],
        "parameters": [
            {"name": "yes", "flags": ["-y", "--yes"], "type": "boolean", "prompt": True}
        ],
        "examples": [{"command": "notes purge -y"}, {"command": "notes purge"}],
    }
    project = make_project(tmp_path, [tool])
    report = json.loads(run_cli(["validate", "--format", "json"], cwd=project).stdout)
    assert _codes(report) == {
        "notes.purge[0]": ["always-prompts"],
        "notes.purge[1]": ["always-prompts"],
    }
    assert "--yes is a banned confirmation bypass" in report["diagnostics"][0]["message"]


def test_a_prompted_flag_with_an_allowed_spelling_is_only_required(tmp_path: Path) -> None:
    tool = {
        "id": "notes.sync",
        "command": ["sync"],
        "parameters": [
            {"name": "remote", "flags": ["--remote"], "type": "boolean", "prompt": True}
        ],
        "examples": [{"command": "notes sync"}, {"command": "notes sync --remote"}],
    }
    project = make_project(tmp_path, [tool])
    report = json.loads(run_cli(["validate", "--format", "json"], cwd=project).stdout)
    assert _codes(report) == {"notes.sync[0]": ["missing-required"], "notes.sync[1]": []}


def test_tools_stating_the_same_parameters_keep_their_own_bypasses_and_prompts(
    tmp_path: Path,
) -> None:
    # The catalog shares the records of parameters stated alike between tools; what each tool
    # bans and requires is still its own (the tool that bans nothing comes first).
    parameters = [
        {"name": "force", "flags": ["--force", "-f"], "type": "boolean"},
        {"name": "name", "flags": ["--name"]},
    ]
    tools: list[dict[str, Any]] = [
        {"id": "notes.a", "command": ["a"], "parameters": parameters, "examples": []},
        {
            "id": "notes.b",
            "command": ["b"],
            "parameters": parameters,
            "safety": {"bypass_flags": ["--force"]},
            "examples": [],
        },
        {"id": "notes.c", "command": ["c"], "parameters": parameters, "examples": []},
    ]
    for tool in tools:
        tool["examples"] = [{"command": f"notes {tool['command'][0]} -f --name x"}]
    make_project(tmp_path, tools, counts=False)
    report = json.loads(run_cli(["validate", "--format", "json"], cwd=tmp_path).stdout)
    codes = {e["tool"]: sorted(d["code"] for d in e["diagnostics"]) for e in report["examples"]}
    assert codes == {"notes.a": [], "notes.b": ["bypass-flag"], "notes.c": []}
