"""Simple commands that run the program inside compound commands and shell builtins.

The issue's cases (``if``, ``time``, ``!``, ``{ ...; }``, ``for ... do``) are in
``tests/test_docs_examples.py``; these are the rest of the shell's grammar that runs a command
as it is: ``function`` bodies, ``coproc``, ``exec`` and ``command``, a newline between commands.
"""

from __future__ import annotations

import pytest

from exampleguard.docshell import line_examples


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
