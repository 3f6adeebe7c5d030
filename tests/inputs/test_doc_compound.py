"""Simple commands that run the program inside compound commands and shell builtins.

The issue's cases (``if``, ``time``, ``!``, ``{ ...; }``, ``for ... do``) are in
``tests/test_docs_examples.py``; these are the rest of the shell's grammar that runs a command
as it is: ``function`` bodies, ``coproc``, ``exec`` and ``command``, a newline between commands.
And a usage synopsis, which shows a command's form and runs nothing.
"""

from __future__ import annotations

import pytest

from exampleguard._docshell import line_examples
from exampleguard._sources.markdown import markdown_examples


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("function f { notes add x; }", ["notes add x"]),
        ("f() { notes add x; }", ["notes add x"]),
        ("coproc notes export", ["notes export"]),
        ("exec notes export --format json", ["notes export --format json"]),
        ("command notes export", ["notes export"]),
        ("case $x in a) notes export ;; esac", ["notes export"]),
        ("select n in 1 2; do notes delete $n; done", ["notes delete $n"]),
        ("notes add 'a\nb' && notes export", ["notes add 'a\nb'", "notes export"]),
        # Another program, or a builtin that looks the program up: not an example.
        ("nohup notes export", []),
        ("command -v notes", []),
        ("exec -a name notes export", []),
        ("echo function notes", []),
    ],
)
def test_commands_the_shell_runs(line: str, expected: list[str]) -> None:
    assert [found.text for found in line_examples(line, "notes")] == expected


def test_a_newline_outside_quotes_ends_a_command() -> None:
    text = "if notes export\nthen notes add x\nfi"
    assert [found.text for found in line_examples(text, "notes")] == [
        "notes export",
        "notes add x",
    ]


def test_a_usage_synopsis_is_not_an_example() -> None:
    page = (
        "```console\n"
        "$ notes add [OPTIONS] TEXT\n"
        "$ notes delete [OPTIONS] [IDS]...\n"
        "$ notes add '[OPTIONS]'\n"
        "$ notes add [x]\n"
        "```\n"
    )
    records = markdown_examples(page, "README.md", "notes")
    # A bracketed word in capitals is a synopsis's; quoted, or in lower case, it is a word.
    assert [(r.address, r.text) for r in records] == [
        ("README.md:4", "notes add '[OPTIONS]'"),
        ("README.md:5", "notes add [x]"),
    ]
