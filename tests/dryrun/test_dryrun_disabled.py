"""``dryrun-disabled``: an example of a previewable tool that turns its own preview off.

A real Click application written here has four ways to spell a preview: a boolean flag pair
(``--dry-run/--no-dry-run``), a plain boolean flag, an option whose value may turn it off
(``--dry-run[=BOOL]``), and feature switches (``--dry-run``/``--apply`` both storing ``mode``).
Each example is checked by ``validate`` and offered to ``dryrun``; an example that switches
its preview off must fail with the new code and never run, whatever the spelling, and the same
examples with the preview on must pass and run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import make_project, run_cli
from tests.support.runuid import public_dir, python_for, reachable_by_runs

# One command per kind of preview; each case below gets a command of its kind of its own, so one
# project (one validate, one dryrun) checks every case.
KINDS = {
    "pair": (
        '@click.option("--dry-run/--no-dry-run", default=False)\n@click.argument("name")',
        "dry_run, name",
    ),
    "flag": ('@click.option("--dry-run", is_flag=True)\n@click.argument("name")', "dry_run, name"),
    "value": (
        '@click.option("--dry-run", is_flag=False, flag_value=True, type=bool, default=False)\n'
        '@click.option("--name")',
        "dry_run, name",
    ),
    # Click's feature switches: two flags storing into one destination, the last given wins.
    "switch": (
        '@click.option("--dry-run", "mode", flag_value="preview", default=True)\n'
        '@click.option("--apply", "mode", flag_value="apply")\n@click.argument("name")',
        "mode, name",
    ),
}

RESULT = {"switch": 'mode == "preview"'}
"""What a command returns, when its preview is not the parameter ``dry_run``."""


STRICTER = {"--no-dry-run a --dry-run", "--apply a --dry-run"}
"""Refused on purpose although Click keeps the preview on (the last flag wins): an example
that shows the negation teaches it."""


def _app(commands: list[tuple[str, str]]) -> str:
    """A real Click group with one command per (name, kind)."""
    lines = ["import click", "", "", "@click.group()", "def cli():", '    """Change things."""']
    for name, kind in commands:
        decorators, arguments = KINDS[kind]
        lines += ["", "", f"@cli.command({name!r})", decorators, f"def _{name}({arguments}):"]
        lines.append(f'    """A command previewed with a {kind} option."""')
        lines.append(f"    return {RESULT.get(kind, 'dry_run')}")
    return "\n".join(lines) + "\n"


# The executable the dry run starts: it leaves a marker, so a run is seen even if the report
# were to leave it out.
RECORDER = """import pathlib, sys
marker = pathlib.Path(__file__).with_name("ran")
(marker / "-".join(sys.argv[1:]).replace("/", "_")).write_text("ran")
"""

# (kind of preview option, the example's words after the command, the code it must fail with or
# None for an example that passes and runs)
CASES: list[tuple[str, str, str | None]] = [
    ("pair", "a --dry-run", None),
    ("pair", "a", None),
    ("pair", "a --no-dry-run", "dryrun-disabled"),
    ("pair", "--dry-run a --no-dry-run", "dryrun-disabled"),
    ("pair", "--no-dry-run a --dry-run", "dryrun-disabled"),
    ("flag", "a --dry-run", None),
    ("flag", "a", None),
    # A boolean flag takes no value: Click rejects it, and so does the contract.
    ("flag", "a --dry-run=false", "unexpected-value"),
    ("value", "--dry-run --name a", None),
    ("value", "--dry-run=true --name a", None),
    ("value", "--name a", None),
    ("value", "--dry-run=false --name a", "dryrun-disabled"),
    ("value", "--dry-run=No --name a", "dryrun-disabled"),
    ("value", "--dry-run 0 --name a", "dryrun-disabled"),
    ("value", "--dry-run=off --name a", "dryrun-disabled"),
    ("switch", "a --dry-run", None),
    ("switch", "a", None),
    ("switch", "a --apply", "dryrun-disabled"),
    ("switch", "--dry-run a --apply", "dryrun-disabled"),
    ("switch", "--apply a --dry-run", "dryrun-disabled"),
]


def _project(root: Path) -> Path:
    """The project: a command and a tool per case, the recorder as the dry run's executable."""
    root.mkdir(parents=True)
    # A root caller's env run executes as a uid of its own: it must reach the project.
    root.chmod(0o755)
    reachable_by_runs(root, writable=True)
    (root / "ran").mkdir()
    (root / "ran").chmod(0o1777)
    commands = [(f"c{i}", kind) for i, (kind, _, _) in enumerate(CASES)]
    (root / "switchapp.py").write_text(_app(commands), encoding="utf-8")
    (root / "recorder.py").write_text(RECORDER, encoding="utf-8")
    tools: list[dict[str, Any]] = [
        {
            "id": f"case{i}",
            "command": [f"c{i}"],
            "dry_run": {
                # An option that takes a value carries it: inserted bare it could take a word.
                "flag": "--dry-run=true" if kind == "value" else "--dry-run",
                "reviewed": True,
                "evidence": "switchapp.py: every command previews with --dry-run",
            },
            "examples": [{"command": f"switch c{i} {words}"}],
        }
        for i, (kind, words, _) in enumerate(CASES)
    ]
    return make_project(
        root,
        tools,
        program="switch",
        tree="click:switchapp:cli",
        settings={
            "dryrun": {
                "executable": [python_for("env"), str(root / "recorder.py")],
                "isolation": "env",
            }
        },
    )


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root)}


@pytest.fixture(scope="module")
def checked() -> Iterator[tuple[Path, Any, Any]]:
    """The project, and what ``validate`` and ``dryrun`` (both JSON) made of it."""
    with public_dir("eg-disabled-") as base:
        root = _project(base / "project")
        validated = run_cli(["validate", "--format", "json"], cwd=root, env=_env(root))
        ran = run_cli(["dryrun", "--format", "json"], cwd=root, env=_env(root))
        yield root, validated, ran


@pytest.mark.parametrize(
    ("index", "case"), list(enumerate(CASES)), ids=[f"{k}: {w}" for k, w, _ in CASES]
)
def test_an_example_that_turns_its_preview_off_fails_and_never_runs(
    checked: tuple[Path, Any, Any], index: int, case: tuple[str, str, str | None]
) -> None:
    root, validated, ran = checked
    code = case[2]
    assert validated.returncode == 1, validated.stdout + validated.stderr
    assert ran.returncode == 1, ran.stdout + ran.stderr
    tool = f"case{index}"
    codes = [d["code"] for d in json.loads(validated.stdout)["diagnostics"] if d["tool"] == tool]
    runs = [r for r in json.loads(ran.stdout)["dry_runs"] if r["tool"] == tool]
    markers = [p.name for p in (root / "ran").iterdir() if p.name.startswith(f"c{index}-")]
    if code is None:
        assert codes == []
        assert [r["status"] for r in runs] == ["passed"]
        assert {"--dry-run", "--dry-run=true"} & set(runs[0]["argv"])
        assert len(markers) == 1
    else:
        assert code in codes
        assert runs == []
        assert markers == []


@pytest.mark.parametrize(
    ("index", "case"),
    [(i, c) for i, c in enumerate(CASES) if c[2] == "dryrun-disabled" and c[1] not in STRICTER],
    ids=[f"{k}: {w}" for k, w, c in CASES if c == "dryrun-disabled" and w not in STRICTER],
)
def test_without_the_rule_the_real_parser_turns_the_preview_off(
    checked: tuple[Path, Any, Any], index: int, case: tuple[str, str, str | None]
) -> None:
    """The escape has teeth: Click itself runs each refused example with dry_run false."""
    root, _, _ = checked
    namespace: dict[str, Any] = {}
    exec(
        compile((root / "switchapp.py").read_text(encoding="utf-8"), "switchapp", "exec"), namespace
    )
    words = [f"c{index}", *case[1].split()]

    dry_run = namespace["cli"].main(words, prog_name="switch", standalone_mode=False)

    assert dry_run is False


def test_the_message_names_the_spelling_and_points_at_it(
    checked: tuple[Path, Any, Any],
) -> None:
    root, _, _ = checked

    result = run_cli(["validate"], cwd=root, env=_env(root))

    assert result.returncode == 1
    line = next(x for x in result.stdout.splitlines() if "case2[0]" in x)
    # catalog.json:LINE:COLUMN where the word --no-dry-run starts in the example's text.
    text = (root / "catalog.json").read_text(encoding="utf-8").splitlines()
    number = next(i for i, x in enumerate(text, 1) if "switch c2 a --no-dry-run" in x)
    column = text[number - 1].index("--no-dry-run") + 1
    assert line == (
        f"catalog.json:{number}:{column}: dryrun-disabled case2[0]: --no-dry-run is the negation "
        "of the preview flag --dry-run: the dry run would run the real command"
    )


def test_explain_documents_the_code() -> None:
    result = run_cli(["explain", "dryrun-disabled"], cwd=Path.cwd())

    assert result.returncode == 0, result.stderr
    assert "turns its own preview off" in result.stdout
    assert "--no-dry-run" in result.stdout
