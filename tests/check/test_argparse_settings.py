"""The settings an argparse program's examples are judged by: what the user sees for each.

``argparse_parse`` and ``[argv_rewrite]`` through the real CLI, with a tree snapshot (the model
alone judges) and with a live parser; ``@file`` arguments of a snapshot, read from the project.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import run_cli, write_config

GROUPED = {
    "format": "exampleguard.tree/v1",
    "program": "tool",
    "dialect": "argparse",
    "commands": [
        {
            "path": [],
            "runnable": False,
            "parameters": [{"name": "quiet", "flags": ["-q"], "type": "boolean"}],
        },
        {"path": ["run"], "runnable": True, "parameters": []},
    ],
}
FLAT = {
    "format": "exampleguard.tree/v1",
    "program": "tool",
    "dialect": "argparse",
    "commands": [
        {
            "path": [],
            "runnable": True,
            "settings": {"fromfile_prefix_chars": "@"},
            "parameters": [
                {"name": "x", "flags": ["-x"], "type": "boolean"},
                {"name": "files", "positional": True, "nargs": "*"},
            ],
        }
    ],
}


def _project(
    root: Path, tree: dict[str, Any], lines: list[str], tables: str = "", **keys: Any
) -> None:
    (root / "tree.json").write_text(json.dumps(tree), encoding="utf-8")
    runnable = [command["path"] for command in tree["commands"] if command["runnable"]]
    tools = [{"id": " ".join(["tool", *path]), "command": path} for path in runnable]
    catalog = {"format": "exampleguard.catalog/v1", "program": "tool", "tools": tools}
    (root / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    readme = "```console\n" + "\n".join(f"$ {line}" for line in lines) + "\n```\n"
    (root / "README.md").write_text(readme, encoding="utf-8")
    config = write_config(
        root, {"catalog": "catalog.json", "tree": "tree.json", "docs": ["README.md"], **keys}
    )
    if tables:
        with config.open("a", encoding="utf-8") as stream:
            stream.write(tables)


def _diagnostics(root: Path) -> list[dict[str, Any]]:
    """What the README's examples get (the catalog's tools have none: not what is tested)."""
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    return [d for d in report["diagnostics"] if d["file"] == "README.md"]


def test_intermixed_parsing_is_refused_for_a_parser_with_subcommands(tmp_path: Path) -> None:
    _project(tmp_path, GROUPED, ["tool run"], argparse_parse="parse_intermixed_args")
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert "config-invalid" in result.stdout + result.stderr
    assert "subcommands" in result.stdout + result.stderr


def test_an_unknown_key_of_argv_rewrite_is_refused(tmp_path: Path) -> None:
    _project(tmp_path, GROUPED, ["tool run"], tables='[argv_rewrite]\nnote = "x"\nsplit = "--"\n')
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert "config-invalid" in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["tool -x a b", "tool a -x b"], []),
        (["tool -- -x"], []),
    ],
)
def test_a_snapshot_is_judged_intermixed_when_the_configuration_says_so(
    tmp_path: Path, lines: list[str], expected: list[str]
) -> None:
    _project(tmp_path, FLAT, lines, argparse_parse="parse_intermixed_args")
    codes = [d["code"] for d in _diagnostics(tmp_path)]
    assert [c for c in codes if c != "shell-expansion"] == expected


def test_a_swallowed_separator_fails_only_when_parsing_is_intermixed(tmp_path: Path) -> None:
    # A first pass over the options consumes the first `--`: `-weird` is an option again.
    plain, mixed = tmp_path / "plain", tmp_path / "mixed"
    plain.mkdir()
    mixed.mkdir()
    _project(plain, FLAT, ["tool -- -weird"])
    _project(mixed, FLAT, ["tool -- -weird"], argparse_parse="parse_intermixed_args")
    assert _diagnostics(plain) == []
    assert [d["code"] for d in _diagnostics(mixed)] == ["unknown-flag"]


def test_an_at_file_of_a_snapshot_is_read_from_the_project(tmp_path: Path) -> None:
    (tmp_path / "args.txt").write_text("-x\n--nope\n", encoding="utf-8")
    _project(tmp_path, FLAT, ["tool @args.txt", "tool @absent.txt"])
    found = [
        (d["code"], d["location"]["line"], d["location"]["column"]) for d in _diagnostics(tmp_path)
    ]
    # Both at the @file word: line 2 and 3 of the README, column 8 (after "$ tool ").
    assert found == [("unknown-flag", 2, 8), ("argument-file-unreadable", 3, 8)]


def test_a_command_word_the_parser_does_not_know_names_the_stated_rewriting(
    tmp_path: Path,
) -> None:
    tables = '[argv_rewrite]\nnote = "tool inserts run when no command is given"\n'
    _project(tmp_path, GROUPED, ["tool -q fast"], tables=tables)
    (found,) = _diagnostics(tmp_path)
    assert found["code"] == "argv-rewritten"
    assert "tool inserts run when no command is given" in found["message"]


def test_words_the_program_keeps_for_itself_reach_no_parser(tmp_path: Path) -> None:
    tables = '[argv_rewrite]\nnote = "tool keeps what follows --"\nunparsed_after = "--"\n'
    _project(tmp_path, GROUPED, ["tool run -- --anything goes"], tables=tables)
    assert _diagnostics(tmp_path) == []
