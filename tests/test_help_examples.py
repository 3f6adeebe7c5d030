"""Examples in help text: what the rule takes, what the adapters record, what a run reports.

The tables feed help texts to the rule and compare the command lines found (where, and their
text). The apps are real Click, Typer and argparse programs written here, extracted the way a
run extracts them (imported in a child process), then validated like a user's project.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from exampleguard.adapters._helptext import help_examples, normalise_click_help
from exampleguard.tree import Tree, load_tree, parse_tree_spec

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
        {"file": "argshelp.py", "line": 5, "column": 3},
        {"file": "argshelp.py", "line": 6, "column": 3},
        {"file": "argshelp.py", "line": 21, "column": 64},
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
