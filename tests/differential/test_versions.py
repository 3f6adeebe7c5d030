"""The version table, row by row, against the real parser of each version.

Each row of a dialect's version table (:attr:`exampleguard._bind.dialect.Dialect.versions`) says
where one version of a framework parses differently. Every row is tested here against the real
parser of its version: a small application is read and judged in an interpreter of that version
(CPython 3.11, 3.12, 3.13 for argparse; Click 8.1 and the installed Click for Click), and
exampleguard's binder, following the rules the snapshot's recorded version selects, must give
the same verdict on every argv — and the argvs are chosen so the verdict differs across the
versions, so a row that is wrong or missing fails.

An interpreter or a Click that is not installed skips its rows with a reason naming what is
missing (CI provides them: see ``.ci/run``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from exampleguard._adapters.verdict import ParseVerdict
from exampleguard._bind import bind
from exampleguard._bind import dialect as dialect_named
from exampleguard._bind.dialect import parse_version
from exampleguard._catalog import Catalog
from exampleguard._catalogfile import LoadedCatalog
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._model import DIALECT_NAMES
from exampleguard._snapshot import Tree

ROOT = Path(__file__).resolve().parents[2]
CLICK_VARIABLES = {"8.1": "EXAMPLEGUARD_CLICK_8_1", "8.2": "EXAMPLEGUARD_CLICK_8_2"}
"""Where the Clicks other than the installed one are (.ci/run installs each in .venv)."""

# Runs in the interpreter under test: read the application, snapshot it, judge every argv.
PROBE = """
import json, os, sys
root, framework, source, argvs = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
sys.path.insert(0, root)
namespace = {}
exec(source, namespace)
if framework == "argparse":
    from exampleguard._adapters.argparser import extract_argparse
    from exampleguard._adapters.judge_argparse import ArgparseJudge
    tree = extract_argparse(namespace["parser"], "prog")
    judge = ArgparseJudge(namespace["parser"]).judge
else:
    from exampleguard._adapters.clickfamily import extract_click
    from exampleguard._adapters.judge_click import ClickJudge
    tree = extract_click(namespace["cli"], "prog")
    judge = ClickJudge(namespace["cli"], "prog").judge
verdicts = [judge([os.fsdecode(os.fsencode(w)) for w in argv]).to_json() for argv in argvs]
print(json.dumps({"tree": tree, "verdicts": verdicts}))
"""

CLICK_APP = """
import click

@click.command()
@click.option("--name", required=True, default=None)
@click.option("--flag", type=bool)
def cli(name, flag):
    pass
"""

CLICK_GROUP = """
import click

@click.group()
def cli():
    pass

@cli.command()
def tags():
    pass
"""

ARGPARSE_STAR_CHOICES = """
import argparse
parser = argparse.ArgumentParser(prog="prog")
parser.add_argument("kinds", nargs="*", choices=["a", "b"])
"""

ARGPARSE_BUNDLE = """
import argparse
parser = argparse.ArgumentParser(prog="prog")
parser.add_argument("-f", "--force", action="store_true")
parser.add_argument("-t", "--hook-type", choices=["pre-push", "commit"])
parser.add_argument("-q", action="store_true")
"""

ARGPARSE_SEPARATOR = """
import argparse
parser = argparse.ArgumentParser(prog="prog")
parser.add_argument("--opt")
parser.add_argument("--many", nargs="*")
"""

ARGPARSE_SHARED_WORDS = """
import argparse
parser = argparse.ArgumentParser(prog="prog")
group = parser.add_mutually_exclusive_group()
group.add_argument("--push", action="store_true")
group.add_argument("--branch", default="x")
"""

# (row, application, argvs and the verdict each version gives: version prefix -> accepted)
CASES: list[tuple[str, str, str, list[tuple[list[str], dict[str, bool]]]]] = [
    (
        "click 8.3: explicit default=None satisfies required=True",
        "click",
        CLICK_APP,
        [([], {"8.1": False, "8.2": False, "8.3+": True}), (["--name", "x"], {"any": True})],
    ),
    (
        "click 8.3: an empty boolean value is False",
        "click",
        CLICK_APP,
        [(["--name", "x", "--flag", ""], {"8.1": False, "8.2": False, "8.3+": True})],
    ),
    (
        "click 8.2: an unknown option-like subcommand word is re-parsed with the rest",
        "click",
        CLICK_GROUP,
        [
            (["--", "--bogus", "--help", "tags"], {"8.1": True, "8.2": False, "8.3+": False}),
            (["--", "--bogus", "tags"], {"any": False}),
            (["--", "--help"], {"8.1": False, "8.2": True, "8.3+": True}),
        ],
    ),
    (
        "argparse 3.12: an empty nargs='*' positional with choices",
        "argparse",
        ARGPARSE_STAR_CHOICES,
        [([], {"3.11": False, "3.12": True, "3.13": True}), (["a"], {"any": True})],
    ),
    (
        "argparse 3.13: '=' inside a bundle separates the value",
        "argparse",
        ARGPARSE_BUNDLE,
        [
            (["-ft=pre-push"], {"3.11": False, "3.12": False, "3.13": True}),
            (["-ftcommit"], {"any": True}),
            (["-f=x"], {"any": False}),
            (["-fq"], {"any": True}),
            (["-fz"], {"any": False}),
        ],
    ),
    (
        "argparse 3.13: '--' stays among an option's values",
        "argparse",
        ARGPARSE_SEPARATOR,
        [(["--opt=--"], {"any": True}), (["--many", "a", "--", "b"], {"any": False})],
    ),
    (
        "argparse 3.13: a one-character word is the shared string",
        "argparse",
        ARGPARSE_SHARED_WORDS,
        [
            (["--branch", "x", "--push"], {"3.11": False, "3.12": False, "3.13": True}),
            (["--branch", "y", "--push"], {"any": False}),
        ],
    ),
]


def _python(version: str) -> str | None:
    """An interpreter of CPython ``version`` (``3.12``): under pyenv, or on PATH (not a shim)."""
    if sys.version_info[:2] == tuple(map(int, version.split("."))):
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", "/root/.pyenv")) / "versions"
    for candidate in sorted(pyenv.glob(f"{version}.*/bin/python{version}")):
        return str(candidate)
    found = shutil.which(f"python{version}")
    return found if found and "/shims/" not in found else None


def _interpreters(framework: str) -> list[tuple[str, list[str], dict[str, str]]]:
    """(label, interpreter command, extra environment) for each version to test against."""
    if framework == "click":
        installed = _click_label(importlib.metadata.version("click"))
        found: list[tuple[str, list[str], dict[str, str]]] = [(installed, [sys.executable], {})]
        for label, variable in CLICK_VARIABLES.items():
            if label == installed:
                continue
            # Where .ci/run installs it, when the variable is not set.
            folder = ROOT / ".venv" / f"click-{label}"
            where = os.environ.get(variable) or (str(folder) if folder.is_dir() else None)
            found.append(
                (label, [sys.executable], {"PYTHONPATH": where}) if where else (label, [], {})
            )
        return found
    return [
        (version, [p] if (p := _python(version)) else [], {})
        for version in ("3.11", "3.12", "3.13")
    ]


def _run(
    command: list[str],
    environment: dict[str, str],
    source: str,
    framework: str,
    argvs: list[list[str]],
) -> dict[str, Any]:
    env = {**os.environ, **environment}
    if "PYTHONPATH" in environment:
        env["PYTHONPATH"] = os.pathsep.join([environment["PYTHONPATH"], str(ROOT)])
    result = subprocess.run(
        [*command, "-c", PROBE, str(ROOT), framework, source, json.dumps(argvs)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _click_label(version: str) -> str:
    """The version label of a Click: its rows of the table are those of 8.1, 8.2 or 8.3+."""
    parsed = parse_version(version)
    assert parsed is not None, version
    release = parsed[:2]
    return "8.1" if release < (8, 2) else "8.2" if release < (8, 3) else "8.3+"


def _expected(table: dict[str, bool], label: str) -> bool:
    return table.get(label, table.get("any", False))


def _model_accepts(tree: Tree, argv: list[str]) -> bool:
    tools = [{"id": f"t{i}", "command": c.path} for i, c in enumerate(tree.commands) if c.runnable]
    catalog = Catalog.model_validate(
        {"format": "exampleguard.catalog/v1", "program": tree.program, "tools": tools}
    )
    loaded = LoadedCatalog(catalog, Document(Path("c.json"), "c.json", "{}", {}, "json"))
    binding = bind(build_contract(loaded, tree), ["prog", *argv])
    return not [p for p in binding.problems if p.code != "repeated-option"]


@pytest.mark.parametrize(
    ("row", "framework", "source", "argvs"), CASES, ids=[case[0] for case in CASES]
)
def test_version_row_against_the_real_parser(
    row: str, framework: str, source: str, argvs: list[tuple[list[str], dict[str, bool]]]
) -> None:
    tested = 0
    for label, command, environment in _interpreters(framework):
        if not command:
            continue
        data = _run(command, environment, source, framework, [argv for argv, _ in argvs])
        tree = Tree.model_validate(data["tree"])
        assert tree.framework == framework
        for (argv, table), record in zip(argvs, data["verdicts"], strict=True):
            real = ParseVerdict.from_json(record)
            expected = _expected(table, label)
            assert real.accepted is expected, (row, label, argv, real)
            assert _model_accepts(tree, argv) is real.accepted, (row, label, argv, real)
        tested += 1
    missing = [label for label, command, _ in _interpreters(framework) if not command]
    if missing:
        what = ", ".join(
            f"Click {label} (set {CLICK_VARIABLES.get(label)} to a directory holding it, or "
            f"install it in .venv/click-{label} as .ci/run does)"
            if framework == "click"
            else f"CPython {label}"
            for label in missing
        )
        pytest.skip(f"tested {tested} version(s); not installed here: {what}")


def test_every_row_has_a_version_and_a_change() -> None:
    for name in DIALECT_NAMES:
        dialect = dialect_named(name)
        assert dialect.versions, name
        for row in dialect.versions:
            assert row.since
            assert row.change
        # Rows are oldest first, per framework: rules_for picks the last one reached.
        for framework in {row.framework for row in dialect.versions}:
            since = [row.since for row in dialect.versions if row.framework == framework]
            assert since == sorted(since)


@pytest.mark.parametrize(
    ("framework", "version", "expected"),
    [
        ("argparse", "3.11.7", (3, 11)),
        ("argparse", "3.12.1", (3, 12)),
        ("argparse", "3.13.0", (3, 13)),
        ("argparse", "3.14.0rc1", (3, 13)),
        ("argparse", "3.10.0", (3, 11)),
        ("click", "8.1.8", (8, 0)),
        ("click", "8.2.0", (8, 2)),
        ("click", "8.2.1", (8, 2)),
        ("click", "8.3.0", (8, 3)),
        ("click", "8.5.1", (8, 3)),
    ],
)
def test_rules_for_picks_the_last_row_reached(
    framework: str, version: str, expected: tuple[int, ...]
) -> None:
    dialect = dialect_named("argparse" if framework == "argparse" else "click")
    row = next(r for r in dialect.versions if r.framework == framework and r.since == expected)
    assert dialect.rules_for(framework, version) is row.rules


def test_a_tree_without_a_version_gets_the_documented_default() -> None:
    for name in DIALECT_NAMES:
        dialect = dialect_named(name)
        assert dialect.rules_for(None, None) is dialect.rules
    assert parse_version("3.13.0") == (3, 13, 0)
    assert parse_version("8.2.0.dev1") == (8, 2, 0)
    assert parse_version(None) is None


def _model_arguments(tree: Tree, argv: list[str]) -> dict[str, Any]:
    """The argument object exampleguard's model builds for ``argv`` on the tree's root."""
    from exampleguard._rules import arguments_of

    catalog = Catalog.model_validate(
        {
            "format": "exampleguard.catalog/v1",
            "program": tree.program,
            "tools": [{"id": "t", "command": []}],
        }
    )
    loaded = LoadedCatalog(catalog, Document(Path("c.json"), "c.json", "{}", {}, "json"))
    contract = build_contract(loaded, tree)
    [tool] = contract.tools
    binding = bind(contract, ["prog", *argv])
    assert not binding.problems, binding.problems
    return arguments_of(tool, binding)


@pytest.mark.parametrize("argv", [["--opt=--"], ["--opt", "x", "--many=--"]], ids=" ".join)
def test_a_separator_given_as_an_option_s_value_is_stored_as_each_argparse_stores_it(
    argv: list[str],
) -> None:
    # CPython changed it in 3.13 and in a patch release of 3.11 and of 3.12: the value a
    # snapshot's model gives is the one the parser it was read from gives, whatever the row.
    tested = 0
    for label, command, environment in _interpreters("argparse"):
        if not command:
            continue
        data = _run(command, environment, ARGPARSE_SEPARATOR, "argparse", [argv])
        tree = Tree.model_validate(data["tree"])
        assert tree.option_values_drop_separator is not None
        real = ParseVerdict.from_json(data["verdicts"][0])
        assert real.accepted, (label, real)
        received = {given.name: given.value for given in real.given}
        assert _model_arguments(tree, argv) == received, (label, tree.framework_version)
        # A snapshot taken before it was measured: the row of its version decides, and for
        # the releases installed here each row is right.
        unmeasured = tree.model_copy(update={"option_values_drop_separator": None})
        assert _model_arguments(unmeasured, argv) == received, (label, tree.framework_version)
        tested += 1
    assert tested


@pytest.mark.parametrize("drops", [True, False])
def test_what_a_snapshot_measured_wins_over_its_version_s_row(drops: bool) -> None:
    tree = Tree.model_validate(
        {
            "format": "exampleguard.tree/v1",
            "program": "prog",
            "dialect": "argparse",
            "framework": "argparse",
            "framework_version": "3.11.7",
            "option_values_drop_separator": drops,
            "commands": [
                {
                    "path": [],
                    "runnable": True,
                    "parameters": [{"name": "opt", "flags": ["--opt"], "nargs": "*"}],
                }
            ],
        }
    )
    assert _model_arguments(tree, ["--opt=--"]) == {"opt": [] if drops else ["--"]}
