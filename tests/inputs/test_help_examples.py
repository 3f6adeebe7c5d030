"""Examples in help text: what the rule takes, what the adapters record, what a run reports.

The tables feed help texts to the rule and compare the command lines found (where, and their
text). The apps are real Click, Typer and argparse programs written here, extracted the way a
run extracts them (imported in a child process), then validated like a user's project.
"""

from __future__ import annotations

import json
import shutil
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from exampleguard._adapters._helptext import help_examples, normalise_click_help
from exampleguard._report import render
from exampleguard._snapshot import Tree
from exampleguard._tree import load_judged_tree, load_tree, parse_tree_spec
from tests.inputs.test_docs_examples import SAMPLE, report_of
from tests.support.project import run_cli, write_config
from tests.support.sarif import sarif_errors

pytest_plugins = ["pytester"]

# -- the rule: one table per construct ----------------------------------------------------------


def lines_of(text: str, program: str = "notes") -> list[tuple[int, int, str]]:
    """``(line, column, command)`` of every command line of ``text`` (dedented)."""
    help_text = textwrap.dedent(text).strip("\n")
    return [(h.line, h.column, h.command) for h in help_examples([("help", help_text)], program)]


SECTIONS = [
    ("heading and indented", "Examples:\n  notes add x\n", [(2, 3, "notes add x")]),
    ("singular heading", "Example:\n\n    notes add x\n", [(3, 5, "notes add x")]),
    ("any case", "EXAMPLES\nnotes add x\n", [(2, 1, "notes add x")]),
    ("markdown heading", "## Examples\n\nnotes add x\n", [(3, 1, "notes add x")]),
    ("example usage", "Example usage:\n  notes add x\n", [(2, 3, "notes add x")]),
    (
        "two examples and a comment",
        "Examples:\n  # add one\n  notes add x\n\n  notes list\n",
        [(3, 3, "notes add x"), (5, 3, "notes list")],
    ),
    (
        "description lines indented in the section",
        "Examples:\n  Add a note:\n    notes add x\n",
        [(3, 5, "notes add x")],
    ),
    (
        "prose after the section ends it",
        "Examples:\n  notes add x\nMore in the manual.\n  notes list\n",
        [(2, 3, "notes add x")],
    ),
    (
        "another heading ends it",
        "Examples:\n  notes add x\nOptions:\n  notes list\n",
        [(2, 3, "notes add x")],
    ),
    (
        "markdown fence in the section (Typer's markdown help)",
        "## Examples\n\n```bash\nnotes add x\n```\n",
        [(4, 1, "notes add x")],
    ),
    ("no section: plain lines are prose", "Use it like this:\n  notes add x\n", []),
    ("program inside a word", "Examples:\n  notesy add x\n  notes-cli add\n", []),
    ("another program in the section", "Examples:\n  git add x\n", []),
    ("heading in a sentence is prose", "Examples of use are below:\n  notes add x\n", []),
]

PROMPTS = [
    ("prompt anywhere", "Add one with\n\n  $ notes add x\n", [(3, 5, "notes add x")]),
    ("prompt at the margin", "$ notes add x\n", [(1, 3, "notes add x")]),
    ("prompt of another program", "$ pip install notes-cli\n", []),
    ("prompt without program", "$ ls\n", []),
    ("dollar inside a sentence", "Costs $ notes add x\n", []),
    (
        "session: output lines are not commands",
        "Examples:\n  $ notes list\n  notes 1: buy milk\n  $ notes add y\n",
        [(2, 5, "notes list"), (4, 5, "notes add y")],
    ),
    (
        "prompted line with a pipe is recorded whole",
        "$ notes list --json | jq .\n",
        [(1, 3, "notes list --json | jq .")],
    ),
]

CONTINUATIONS = [
    (
        "backslash continues",
        "Examples:\n  notes add x \\\n      --priority 2\n",
        [(2, 3, "notes add x \\\n      --priority 2")],
    ),
    (
        "a continued line indented at the heading stays in",
        "Examples:\n  notes add x \\\n--priority 2\n  notes list\n",
        [(2, 3, "notes add x \\\n--priority 2"), (4, 3, "notes list")],
    ),
    (
        "session continuation prompt removed",
        "$ notes add x \\\n> --priority 2\n",
        [(1, 3, "notes add x \\\n--priority 2")],
    ),
    (
        "usage lines are not examples",
        "usage: notes [-h] {add,list} ...\n\nnotes add TEXT [--priority N]\n",
        [],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=name) for name, text, expected in SECTIONS],
)
def test_examples_sections(text: str, expected: list[tuple[int, int, str]]) -> None:
    assert lines_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=name) for name, text, expected in PROMPTS],
)
def test_prompts(text: str, expected: list[tuple[int, int, str]]) -> None:
    assert lines_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=name) for name, text, expected in CONTINUATIONS],
)
def test_continuations_and_usage(text: str, expected: list[tuple[int, int, str]]) -> None:
    assert lines_of(text) == expected


def test_click_help_is_read_as_click_prints_it() -> None:
    doc = """Delete notes.

    Example:

    \b
        notes delete 3

    \f
    Examples:
        notes delete --internal
    """
    text = normalise_click_help(doc)
    assert text is not None
    found = help_examples([("help", text)], "notes")
    # Dedented like a docstring, the `\b` marker a blank line, nothing after the form feed.
    assert [(h.line, h.column, h.command) for h in found] == [(6, 5, "notes delete 3")]
    assert normalise_click_help(None) is None
    assert normalise_click_help("   ") is None


# -- the adapters record them per command -------------------------------------------------------


def extract(root: Path, spec: str, program: str | None = "notes") -> Tree:
    tree, _ = load_tree(
        parse_tree_spec(spec, root), root=root, display=spec, timeout=60, program=program
    )
    return tree


def records(tree: Tree, path: list[str]) -> list[dict[str, Any]]:
    command = tree.command(path)
    assert command is not None, path
    return [h.model_dump(exclude_none=True) for h in command.help_examples]


CLICK_APP = '''\
import click

EPILOG = """Examples:
  notes delete --tag draft
"""


@click.group()
def cli():
    """Keep notes.

    Examples:

    \\b
        notes add "buy milk" \\\\
            --priority 2
    """


@cli.command(epilog=EPILOG)
@click.argument("ids", nargs=-1, type=int)
@click.option("--tag", help="Only notes with this tag, e.g.\\n\\n$ notes delete --tag old")
def delete(ids, tag):
    """Delete notes."""


@cli.command()
@click.argument("text")
@click.option("--priority", type=int)
def add(text, priority):
    """Add a note; see `notes list` for what is kept."""
'''


def test_click_adapter_records_help_epilog_and_option_help(tmp_path: Path) -> None:
    (tmp_path / "helpapp.py").write_text(CLICK_APP, encoding="utf-8")
    tree = extract(tmp_path, "click:helpapp:cli")
    assert records(tree, []) == [
        {
            "command": 'notes add "buy milk" \\\n        --priority 2',
            "field": "help",
            "line": 6,
            "column": 5,
            "source": {"file": "helpapp.py", "line": 15, "column": 9},
        }
    ]
    assert records(tree, ["delete"]) == [
        {
            "command": "notes delete --tag draft",
            "field": "epilog",
            "line": 2,
            # Dedented as a docstring is: the first line's indentation does not count.
            "column": 1,
            # The epilog is a module constant: found in the callback's module.
            "source": {"file": "helpapp.py", "line": 4, "column": 3},
        },
        {
            "command": "notes delete --tag old",
            "field": "help of --tag",
            "line": 3,
            "column": 3,
            "source": {"file": "helpapp.py", "line": 22, "column": 66},
        },
    ]
    # Prose that names a command (in backquotes, not in an Examples section) is not an example.
    assert records(tree, ["add"]) == []


TYPER_APP = '''\
import typer

app = typer.Typer(rich_markup_mode="rich")


@app.command(epilog="Examples:\\n\\n  notes sync --dry-run", rich_help_panel="Remote")
def sync(dry_run: bool = typer.Option(False, "--dry-run", help="Only show it.")):
    """Sync notes.

    $ notes sync
    """


@app.command()
def add(text: str):
    """Add a note."""
'''


def test_typer_adapter_records_docstring_and_epilog(tmp_path: Path) -> None:
    (tmp_path / "typerhelp.py").write_text(TYPER_APP, encoding="utf-8")
    tree = extract(tmp_path, "typer:typerhelp:app")
    found = records(tree, ["sync"])
    assert [(h["command"], h["field"]) for h in found] == [
        ("notes sync", "help"),
        ("notes sync --dry-run", "epilog"),
    ]
    # Typer wraps the function: its source is still found through the wrapper.
    assert found[0]["source"] == {"file": "typerhelp.py", "line": 10, "column": 7}
    assert records(tree, ["add"]) == []


ARGPARSE_APP = '''\
import argparse

EPILOG = """\\
examples:
  %(prog)s --tag draft 3
  %(prog)s --all
"""


def build():
    parser = argparse.ArgumentParser(
        prog="notes",
        description="Keep notes. Run `notes delete 3` to delete one.",
        usage="%(prog)s [-h] {delete} ...",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    delete = sub.add_parser(
        "delete", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    delete.add_argument("ids", nargs="*", type=int)
    delete.add_argument("--tag", help="tag to delete, as in\\n$ %(prog)s --tag x")
    delete.add_argument("--all", action="store_true")
    return parser
'''


def test_argparse_adapter_fills_in_prog_and_reads_epilog_description_usage(
    tmp_path: Path,
) -> None:
    (tmp_path / "argshelp.py").write_text(ARGPARSE_APP, encoding="utf-8")
    tree = extract(tmp_path, "argparse:argshelp:build")
    # The description and usage hold no example: a command in prose, a usage line.
    assert records(tree, []) == []
    found = records(tree, ["delete"])
    assert [(h["command"], h["field"], h["line"]) for h in found] == [
        ("notes delete --tag draft 3", "epilog", 2),
        ("notes delete --all", "epilog", 3),
        ("notes delete --tag x", "help of --tag", 2),
    ]
    # The source spells them with `%(prog)s`: that is what is looked for in the factory's module.
    assert [h.get("source") for h in found] == [
        {"file": "argshelp.py", "line": 5, "column": 3, "written": "%(prog)s --tag draft 3"},
        {"file": "argshelp.py", "line": 6, "column": 3, "written": "%(prog)s --all"},
        {"file": "argshelp.py", "line": 21, "column": 64, "written": "%(prog)s --tag x"},
    ]


def test_a_snapshot_without_help_examples_still_loads(tmp_path: Path) -> None:
    old = {
        "format": "exampleguard.tree/v1",
        "program": "notes",
        "dialect": "click",
        "commands": [{"path": [], "runnable": True, "parameters": []}],
    }
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    tree = extract(tmp_path, "old.json")
    assert tree.commands[0].help_examples == []


# -- checked like documentation examples, located at the command whose help holds them ----------

HELP_LINES = """\
      "help_examples": [
        {"command": "notes delete 3 --dry-run"},
        {"command": "notes rm --tag x --all", "field": "epilog", "line": 2},
        {"command": "notes delete --frmat json | jq ."}
      ],
"""


def snapshot_project(root: Path, **settings: Any) -> Path:
    """The sample project, its ``delete`` command's help showing three examples."""
    for name in ("catalog.json", "exampleguard-counts.json"):
        shutil.copy(SAMPLE / name, root / name)
    shutil.copytree(SAMPLE / "dispositions", root / "dispositions")
    tree = (SAMPLE / "notes.tree.json").read_text(encoding="utf-8")
    anchor = '      "path": ["delete"],\n'
    assert anchor in tree
    (root / "notes.tree.json").write_text(
        tree.replace(anchor, anchor + HELP_LINES), encoding="utf-8"
    )
    write_config(root, {"catalog": "catalog.json", "tree": "notes.tree.json", **settings})
    return root


def line_of(root: Path, file: str, text: str) -> int:
    """The 1-based line of ``file`` that holds ``text``."""
    lines = (root / file).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def column_of(root: Path, file: str, text: str, word: str) -> int:
    line = (root / file).read_text(encoding="utf-8").splitlines()[line_of(root, file, text) - 1]
    return line.index(word) + 1


def test_snapshot_help_examples_are_reported_at_the_snapshot_entry(tmp_path: Path) -> None:
    root = snapshot_project(tmp_path)
    report = report_of(root)
    helps = {e.address: e.ok for e in report.examples if e.source == "help"}
    first = line_of(root, "notes.tree.json", "notes delete 3 --dry-run")
    assert helps == {
        f"notes.tree.json:{first}": True,
        f"notes.tree.json:{first + 1}": False,
        f"notes.tree.json:{first + 2}": False,
    }
    located = sorted(
        (d.location.line, d.location.column, d.code)
        for d in report.diagnostics
        if d.file == "notes.tree.json" and d.location is not None
    )
    assert located == [
        (first + 1, column_of(root, "notes.tree.json", "--all", "--all"), "mutually-exclusive"),
        (
            first + 2,
            column_of(root, "notes.tree.json", "--frmat", "--frmat"),
            "unknown-flag",
        ),
        # Once --frmat is unknown, its value is taken for an id, as Click would.
        (first + 2, column_of(root, "notes.tree.json", "--frmat", "json"), "bad-type"),
    ]
    assert report.counts.doc_examples == {"help": 3}


def test_every_output_format_points_at_the_help_example(tmp_path: Path) -> None:
    root = snapshot_project(tmp_path)
    report = report_of(root)
    line = line_of(root, "notes.tree.json", "--frmat")
    column = column_of(root, "notes.tree.json", "--frmat", "--frmat")
    text = render(report, "text")
    assert f"notes.tree.json:{line}:{column}: unknown-flag --frmat" in text
    data = json.loads(render(report, "json"))
    entry = next(e for e in data["examples"] if e["address"] == f"notes.tree.json:{line}")
    assert (entry["source"], entry["command"], entry["ok"]) == (
        "help",
        "notes delete --frmat json",
        False,
    )
    github = render(report, "github")
    assert f"::error file=notes.tree.json,line={line},col={column},title=unknown-flag::" in github
    sarif = json.loads(render(report, "sarif"))
    assert sarif_errors(sarif) == []
    regions = [
        r["locations"][0]["physicalLocation"]
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "unknown-flag"
    ]
    assert [(p["artifactLocation"]["uri"], p["region"]["startLine"]) for p in regions] == [
        ("notes.tree.json", line)
    ]
    junit = ET.fromstring(render(report, "junit"))
    names = {case.get("name") for case in junit.iter("testcase")}
    assert f"notes.tree.json:{line}" in names


def test_help_examples_false_turns_them_off(tmp_path: Path) -> None:
    report = report_of(snapshot_project(tmp_path, help_examples=False))
    assert [e for e in report.examples if e.source == "help"] == []
    assert report.counts.doc_examples == {}


def test_counts_record_the_help_examples(tmp_path: Path) -> None:
    root = snapshot_project(tmp_path)
    assert run_cli(["counts", "--write"], cwd=root).returncode == 0
    written = json.loads((root / "exampleguard-counts.json").read_text(encoding="utf-8"))
    assert written["doc_examples"] == {"help": 3}
    drift = [d for d in report_of(root).diagnostics if d.code == "counts-drift"]
    assert drift == []


def test_a_doc_exception_exempts_a_help_example(tmp_path: Path) -> None:
    root = snapshot_project(tmp_path)
    (root / "dispositions" / "doc-exceptions.toml").write_text(
        "[[doc_exception]]\n"
        'file = "notes.tree.json"\n'
        'command = "notes rm --tag x --all"\n'
        'reason_code = "counter-example"\n'
        'reason = "The help shows what --all may not be combined with."\n',
        encoding="utf-8",
    )
    report = report_of(root)
    line = line_of(root, "notes.tree.json", "--all")
    entry = next(e for e in report.examples if e.address == f"notes.tree.json:{line}")
    assert [d.code for d in entry.diagnostics] == ["doc-example-excepted"]
    assert "mutually-exclusive" not in {d.code for d in report.diagnostics}


LIVE_APP = '''\
import click


@click.group()
def cli():
    """Keep notes."""


@cli.command(epilog="Examples:\\n  notes delete --tag draft --all")
@click.argument("ids", nargs=-1, type=int)
@click.option("--tag")
@click.option("--all", "all_", is_flag=True)
def delete(ids, tag, all_):
    """Delete notes.

    Examples:

    \\b
        notes delete 3 4
        notes delete --tga old
    """


@cli.command()
@click.argument("text")
@click.option("--priority", type=click.IntRange(1, 5))
def add(text, priority):
    """Add a note.

    $ notes add "buy milk" \\\\
        --priority 9
    """
'''

LIVE_CATALOG = {
    "format": "exampleguard.catalog/v1",
    "program": "notes",
    "tools": [
        {
            "id": "notes.delete",
            "command": ["delete"],
            "parameters": [{"name": "tag", "flags": ["--tag"]}],
            "constraints": {"mutually_exclusive": [["tag", "all_"]]},
        },
        {"id": "notes.add", "command": ["add"]},
    ],
}


def live_project(root: Path) -> Path:
    (root / "liveapp.py").write_text(LIVE_APP, encoding="utf-8")
    (root / "catalog.json").write_text(json.dumps(LIVE_CATALOG), encoding="utf-8")
    write_config(root, {"catalog": "catalog.json", "tree": "click:liveapp:cli"})
    run_cli(["counts", "--write", "--no-cache"], cwd=root)
    return root


def test_live_click_help_examples_are_reported_in_the_python_source(tmp_path: Path) -> None:
    root = live_project(tmp_path)
    result = run_cli(["validate", "--no-cache", "--format", "concise"], cwd=root)
    assert result.returncode == 1, result.stderr
    tga = line_of(root, "liveapp.py", "--tga")
    nine = line_of(root, "liveapp.py", "--priority 9")
    epilog = line_of(root, "liveapp.py", "--tag draft --all")
    col = column_of
    assert [line for line in result.stdout.splitlines() if line.startswith("liveapp.py:")] == [
        # On the continuation's line, at its column in the source file.
        f"liveapp.py:{nine}:{col(root, 'liveapp.py', '--priority 9', '9')}: bad-type '9' is "
        "not in the range 1<=x<=5 for --priority",
        f"liveapp.py:{tga}:{col(root, 'liveapp.py', '--tga', '--tga')}: unknown-flag --tga is "
        "not an option of 'notes delete' (did you mean --tag?)",
        f"liveapp.py:{tga}:{col(root, 'liveapp.py', '--tga', 'old')}: bad-type 'old' is not a "
        "valid integer for IDS",
        # The catalog's constraint applies to the help example of its tool's command.
        f"liveapp.py:{epilog}:{col(root, 'liveapp.py', '--tag draft', '--all')}: "
        "mutually-exclusive --all cannot be combined with --tag",
    ]
    data = json.loads(run_cli(["validate", "--no-cache", "--format", "json"], cwd=root).stdout)
    helps = {e["address"]: e["ok"] for e in data["examples"] if e["source"] == "help"}
    assert helps == {
        f"liveapp.py:{epilog}": False,
        f"liveapp.py:{tga - 1}": True,
        f"liveapp.py:{tga}": False,
        f"liveapp.py:{nine - 1}": False,
    }


def test_live_help_examples_are_named_from_where_the_run_started(tmp_path: Path) -> None:
    (tmp_path / "packages" / "notes").mkdir(parents=True)
    root = live_project(tmp_path / "packages" / "notes")
    result = run_cli(
        ["validate", "--no-cache", "--config", "packages/notes/exampleguard.toml", "-f", "json"],
        cwd=tmp_path,
    )
    data = json.loads(result.stdout)
    files = {d["file"] for d in data["diagnostics"] if d["code"] == "unknown-flag"}
    assert files == {"packages/notes/liveapp.py"}
    tga = line_of(root, "liveapp.py", "--tga")
    assert f"packages/notes/liveapp.py:{tga}" in {e["address"] for e in data["examples"]}


def test_help_examples_are_pytest_items(pytester: pytest.Pytester) -> None:
    snapshot_project(pytester.path)
    run_cli(["counts", "--write"], cwd=pytester.path)
    result = pytester.runpytest("--exampleguard", "-v", "-p", "no:cacheprovider")
    outcomes = {
        report.nodeid: report.outcome
        for report in result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
        if report.when == "call"
    }
    line = line_of(pytester.path, "notes.tree.json", "notes delete 3 --dry-run")
    assert outcomes[f"catalog.json::notes.tree.json:{line}"] == "passed"
    assert outcomes[f"catalog.json::notes.tree.json:{line + 2}"] == "failed"
    assert f"notes.tree.json:{line + 2}:" in result.stdout.str()


# -- a real third-party CLI ----------------------------------------------------------------------


def test_sqlite_utils_help_examples_pass_and_a_planted_error_is_found(tmp_path: Path) -> None:
    import sqlite_utils.cli

    catalog = {"format": "exampleguard.catalog/v1", "program": "sqlite-utils", "tools": []}
    (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    write_config(tmp_path, {"catalog": "catalog.json", "tree": "click:sqlite_utils.cli:cli"})
    result = run_cli(["validate", "--no-cache", "--format", "json"], cwd=tmp_path)
    data = json.loads(result.stdout)
    helps = [e for e in data["examples"] if e["source"] == "help"]
    # Its commands' docstrings show dozens of examples under "Example:" headings.
    assert len(helps) >= 30
    assert [(e["address"], e["diagnostics"]) for e in helps if not e["ok"]] == []
    source = Path(sqlite_utils.cli.__file__).resolve()
    lines = source.read_text(encoding="utf-8").splitlines()
    for entry in helps:
        file, _, line = entry["address"].rpartition(":")
        assert Path(file).resolve() == source
        # Each is reported on the source line that holds its first line.
        assert entry["command"].split("\n")[0].rstrip("\\ ") in lines[int(line) - 1]
    # The same tree read from a snapshot, one example broken: reported at the snapshot's entry.
    snapshot = json.loads(
        run_cli(
            ["tree", "--tree", "click:sqlite_utils.cli:cli", "--format", "json"], cwd=tmp_path
        ).stdout
    )
    tables = next(c for c in snapshot["commands"] if c["path"] == ["tables"])
    assert tables["help_examples"][0]["command"] == "sqlite-utils tables trees.db"
    # No installed package's absolute path in a snapshot meant to be committed.
    assert not [
        e for c in snapshot["commands"] for e in c.get("help_examples", ()) if "source" in e
    ]
    tables["help_examples"][0]["command"] = "sqlite-utils tables trees.db --cvs"
    (tmp_path / "tree.json").write_text(json.dumps(snapshot, indent=1), encoding="utf-8")
    write_config(tmp_path, {"catalog": "catalog.json", "tree": "tree.json"})
    report = report_of(tmp_path)
    wrong = [d for d in report.diagnostics if d.code == "unknown-flag"]
    line = line_of(tmp_path, "tree.json", "--cvs")
    assert [(d.file, d.location and d.location.line, d.message) for d in wrong] == [
        (
            "tree.json",
            line,
            "--cvs is not an option of 'sqlite-utils tables'",
        )
    ]


TYPER_PLANTED = '''\
import typer

app = typer.Typer()


@app.command(epilog="Examples:\\n\\n  notes sync --dry-rn")
def sync(dry_run: bool = typer.Option(False, "--dry-run")):
    """Sync notes.

    $ notes sync --dry-run
    """


@app.command()
def add(text: str):
    """Add a note."""
'''

ARGPARSE_PLANTED = '''\
import argparse

EPILOG = """examples:
  %(prog)s --all
  %(prog)s 3 --all
"""


def build():
    parser = argparse.ArgumentParser(prog="notes")
    sub = parser.add_subparsers(dest="command", required=True)
    delete = sub.add_parser("delete", epilog=EPILOG)
    group = delete.add_mutually_exclusive_group(required=True)
    group.add_argument("ids", nargs="*", type=int, default=[])
    group.add_argument("--all", action="store_true")
    sub.add_parser("add").add_argument("text")
    return parser
'''


@pytest.mark.parametrize(
    ("spec", "source", "tools", "good", "bad", "word", "code"),
    [
        pytest.param(
            "typer:plantedapp:app",
            TYPER_PLANTED,
            ["sync", "add"],
            "$ notes sync --dry-run",
            "notes sync --dry-rn",
            "--dry-rn",
            "unknown-flag",
            id="typer",
        ),
        pytest.param(
            "argparse:plantedapp:build",
            ARGPARSE_PLANTED,
            ["delete", "add"],
            "%(prog)s --all",
            "%(prog)s 3 --all",
            "--all",
            "mutually-exclusive",
            id="argparse",
        ),
    ],
)
def test_live_typer_and_argparse_help_examples(
    tmp_path: Path,
    spec: str,
    source: str,
    tools: list[str],
    good: str,
    bad: str,
    word: str,
    code: str,
) -> None:
    (tmp_path / "plantedapp.py").write_text(source, encoding="utf-8")
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "notes",
        "tools": [{"id": f"notes.{name}", "command": [name]} for name in tools],
    }
    (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    write_config(tmp_path, {"catalog": "catalog.json", "tree": spec})
    run_cli(["counts", "--write", "--no-cache"], cwd=tmp_path)
    data = json.loads(run_cli(["validate", "--no-cache", "--format", "json"], cwd=tmp_path).stdout)
    good_line = line_of(tmp_path, "plantedapp.py", good)
    bad_line = line_of(tmp_path, "plantedapp.py", bad)
    helps = {e["address"]: e["ok"] for e in data["examples"] if e["source"] == "help"}
    assert helps == {f"plantedapp.py:{good_line}": True, f"plantedapp.py:{bad_line}": False}
    found = [
        (d["file"], d["location"]["line"], d["location"]["column"])
        for d in data["diagnostics"]
        if d["code"] == code
    ]
    column = column_of(tmp_path, "plantedapp.py", bad, word)
    assert found == [("plantedapp.py", bad_line, column)]
    assert data["counts"]["doc_examples"] == {"help": 2}


def test_a_live_trees_own_parser_judges_its_help_examples(tmp_path: Path) -> None:
    (tmp_path / "liveapp.py").write_text(LIVE_APP, encoding="utf-8")
    spec = parse_tree_spec("click:liveapp:cli", tmp_path)
    asked = ["add", "x"]
    judged = load_judged_tree(
        spec,
        root=tmp_path,
        display="click:liveapp:cli",
        program="notes",
        argvs=[asked],
        help_examples=True,
    )
    verdicts = {argv: verdict.accepted for argv, verdict in judged.verdicts.items()}
    # The asked argv first, then the words of every help example, as the run reads them.
    assert verdicts == {
        ("add", "x"): True,
        ("delete", "--tag", "draft", "--all"): True,
        ("delete", "3", "4"): True,
        ("delete", "--tga", "old"): False,
        ("add", "buy milk", "--priority", "9"): False,
    }
    without = load_judged_tree(
        spec, root=tmp_path, display="click:liveapp:cli", program="notes", argvs=[asked]
    )
    assert list(without.verdicts) == [("add", "x")]


@pytest.mark.parametrize(
    ("spec", "program"),
    [
        # Rich markup naming its commands in prose ("equivalent to [bold]fastapi run[/bold]").
        pytest.param("typer:fastapi_cli.cli:app", "fastapi", id="fastapi-cli"),
        # A long argparse description that names the program in sentences.
        pytest.param("argparse:isort.main:_build_arg_parser", "isort", id="isort"),
    ],
)
def test_third_party_prose_help_holds_no_examples(tmp_path: Path, spec: str, program: str) -> None:
    tree = extract(tmp_path, spec, program=program)
    assert len(tree.commands) >= 1
    assert [c.help_examples for c in tree.commands if c.help_examples] == []
