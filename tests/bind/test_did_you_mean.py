"""Did-you-mean, as a user sees it: flags, commands, choices and the keys of every file.

A word that is the start of exactly one candidate proposes it (``--new`` for ``--new-version``);
otherwise the closest candidate by edit distance does (``difflib``), and two as close are both
named, with nothing proposed as *the* replacement. Each row runs the real CLI on a catalog-only
project and reads what ``validate --format json`` (or the error on stderr) says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import make_project, run_cli

PARAMETERS: list[dict[str, Any]] = [
    {"name": "part", "positional": True, "required": False},
    {"name": "new_version", "flags": ["--new-version"]},
    {"name": "dry_run", "flags": ["--dry-run", "-n"], "type": "boolean"},
    {"name": "dry_run_all", "flags": ["--dry-run-all"], "type": "boolean"},
    {"name": "recursive", "flags": ["--recursive"], "type": "boolean"},
    {"name": "yes", "flags": ["--yes", "-y"], "type": "boolean"},
    {"name": "format", "flags": ["--format"], "choices": ["parsable", "json", "yaml", "yml"]},
]

# (example, code, what the span covers, the hint, the suggestion a fix would apply)
ROWS = [
    pytest.param(
        "bump bump --new 2.0",
        "unknown-flag",
        "--new",
        "Did you mean --new-version?",
        "--new-version",
        id="flag: the start of one option (not the closer --yes)",
    ),
    pytest.param(
        "bump bump --recusive",
        "unknown-flag",
        "--recusive",
        "Did you mean --recursive?",
        "--recursive",
        id="flag: a misspelling",
    ),
    pytest.param(
        "bump bump --dry",
        "unknown-flag",
        "--dry",
        "Did you mean --dry-run or --dry-run-all?",
        None,
        id="flag: the start of two options names both and proposes neither",
    ),
    pytest.param(
        "bump show --ye",
        "unknown-flag",
        "--ye",
        None,
        None,
        id="flag: the dashes alone make no match (--ye is not --help)",
    ),
    pytest.param(
        "bump bump --format parseable",
        "bad-choice",
        "parseable",
        "Did you mean 'parsable'?",
        "parsable",
        id="choice: a misspelling",
    ),
    pytest.param(
        "bump bump --format pars",
        "bad-choice",
        "pars",
        "Did you mean 'parsable'?",
        "parsable",
        id="choice: the start of one choice",
    ),
    pytest.param(
        "bump bump --format JSON",
        "bad-choice",
        "JSON",
        "Did you mean 'json'?",
        "json",
        id="choice: another case",
    ),
    pytest.param(
        "bump bump --format y",
        "bad-choice",
        "y",
        "Choose from: parsable, json, yaml, yml",
        None,
        id="choice: the start of two choices proposes neither",
    ),
    pytest.param(
        "bump sh",
        "unknown-command",
        "sh",
        "Did you mean 'show'?",
        "show",
        id="command: the start of one command",
    ),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("did-you-mean")
    examples = [row.values[0] for row in ROWS]
    tools = [
        {
            "id": f"bump.bump{index}",
            "command": ["bump"] if index == 0 else ["bump", f"x{index}"],
            "parameters": PARAMETERS,
            "examples": [],
        }
        for index in range(len(examples))
    ]
    # One example per tool, every one on `bump bump` but for its own tool's command: each is
    # reported on its own tool (wrong-command aside, which the rows do not look at).
    for tool, example in zip(tools, examples, strict=True):
        tool["examples"] = [{"command": str(example)}]
    # As a live Click tree declares it on every command.
    show_help = {"name": "help", "flags": ["--help"], "type": "boolean"}
    tools.append({"id": "bump.show", "command": ["show"], "parameters": [show_help]})
    make_project(root, tools, program="bump")
    result = run_cli(["validate", "--format", "json"], cwd=root)
    assert result.returncode == 1, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.parametrize(("example", "code", "span", "hint", "suggestion"), ROWS)
def test_did_you_mean(
    report: dict[str, Any],
    example: str,
    code: str,
    span: str,
    hint: str | None,
    suggestion: str | None,
) -> None:
    entry = next(e for e in report["examples"] if e["command"] == example)
    found = [d for d in entry["diagnostics"] if d["code"] == code]
    assert len(found) == 1, entry["diagnostics"]
    diagnostic = found[0]
    assert example[diagnostic["span"]["start"] : diagnostic["span"]["end"]] == span
    if hint is None:
        assert diagnostic["hint"] is None, diagnostic
    else:
        assert hint in diagnostic["hint"]
    assert diagnostic["suggestion"] == suggestion


CONFIG_ROWS = [
    pytest.param(
        'catalogue = "catalog.json"\n',
        "unknown key 'catalogue' in the top level (did you mean 'catalog'?)",
        id="a misspelled key",
    ),
    pytest.param(
        'catalog = "catalog.json"\ntree-timeout = 5\n',
        "unknown key 'tree-timeout' in the top level (did you mean 'tree_timeout'?)",
        id="a dash for an underscore",
    ),
    pytest.param(
        'catalog = "catalog.json"\n[dryrun]\ntimout = 5\n',
        "unknown key 'timout' in dryrun (did you mean 'timeout'?)",
        id="a key of a nested table",
    ),
    pytest.param(
        'catalog = "catalog.json"\n[dryrun]\noutput = 5\n',
        "unknown key 'output' in dryrun (did you mean 'output_kb'?)",
        id="the start of one key",
    ),
    pytest.param(
        'catalog = "catalog.json"\nzzz = 5\n',
        "unknown key 'zzz' in the top level\n",
        id="nothing close: no guess",
    ),
]


@pytest.mark.parametrize(("config", "message"), CONFIG_ROWS)
def test_did_you_mean_for_configuration_keys(tmp_path: Path, config: str, message: str) -> None:
    make_project(tmp_path, [], program="bump", counts=False)
    (tmp_path / "exampleguard.toml").write_text(config, encoding="utf-8")
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert "config-invalid" in result.stderr
    assert message in result.stderr + "\n"


def test_did_you_mean_for_catalog_keys(tmp_path: Path) -> None:
    tool = {
        "id": "bump.bump",
        "command": ["bump"],
        "exampels": [],
        "parameters": [{"name": "x", "flag": ["--x"]}],
    }
    make_project(tmp_path, [tool], program="bump", counts=False)
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown key 'flag' in tools[0].parameters[0] (did you mean 'flags'?)" in result.stderr
    assert "unknown key 'exampels' in tools[0] (did you mean 'examples'?)" in result.stderr
