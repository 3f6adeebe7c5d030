"""Examples in reStructuredText documentation: found as docutils sees code, located exactly.

The tables feed real reST to the reST source and compare the examples found (where, and their
text). The third-party test reads the reST long description that watchdog ships in its
``METADATA`` (its ``watchmedo`` CLI is a real argparse program), checks it against the real
parser's tree, and plants errors at known places.
"""

from __future__ import annotations

import json
import textwrap
from email.message import Message
from importlib.metadata import metadata
from pathlib import Path
from typing import cast

import pytest

from exampleguard._commands.validate import validate
from exampleguard._config import load_config
from exampleguard._diagnostics import Span
from exampleguard._report import Report
from exampleguard._sources.rest import rest_examples
from tests.support.project import write_config


def found(rest: str, program: str = "notes") -> list[tuple[str, str]]:
    """``(address, text)`` of every example of ``rest``."""
    text = textwrap.dedent(rest).lstrip("\n")
    return [(r.address, r.text) for r in rest_examples(text, "README.rst", program)]


def test_code_directives_of_a_shell_language_hold_examples() -> None:
    rest = """
        Usage
        =====

        .. code-block:: bash

           notes add "buy milk" --tag home

        .. code:: sh

           $ notes list --format json

        .. sourcecode:: shell

           notes rm 4
    """
    assert found(rest) == [
        ("README.rst:6", 'notes add "buy milk" --tag home'),
        ("README.rst:10", "notes list --format json"),
        ("README.rst:14", "notes rm 4"),
    ]


def test_a_session_block_and_a_literal_block_read_only_their_prompted_lines() -> None:
    rest = """
        .. code-block:: console

           $ notes list
           buy milk
           notes list is printed above

        Or, in plain reST::

            $ notes add "call mum"
            added note 5
            notes are kept in ~/.notes
    """
    assert found(rest) == [
        ("README.rst:3", "notes list"),
        ("README.rst:9", 'notes add "call mum"'),
    ]


def test_continuations_are_joined_and_located_line_by_line() -> None:
    rest = """
        .. code-block:: bash

            notes add \\
                --tag home \\
                "buy milk"
    """
    records = rest_examples(textwrap.dedent(rest).lstrip("\n"), "README.rst", "notes")
    assert [r.text for r in records] == ['notes add \\\n    --tag home \\\n    "buy milk"']
    origin = records[0].origin
    # `--tag` starts on the block's second line, after its eight spaces.
    start = records[0].text.index("--tag")
    location = origin.location(records[0].index, Span(start, start + len("--tag")))
    assert (location.line, location.column) == (4, 9)


def test_blocks_inside_lists_and_notes_are_read() -> None:
    rest = """
        * Add a note:

          .. code-block:: bash

             notes add x

        .. note::

           Remove it again::

               $ notes rm 1
    """
    assert found(rest) == [("README.rst:5", "notes add x"), ("README.rst:11", "notes rm 1")]


def test_other_languages_unknown_directives_and_includes_are_left_alone(tmp_path: Path) -> None:
    secret = tmp_path / "secret.rst"
    secret.write_text(".. code-block:: bash\n\n   notes leaked\n", encoding="utf-8")
    rest = f"""
        .. code-block:: python

           subprocess.run(["notes", "add", "x"])

        .. click:: notes.cli:cli
           :prog: notes

           notes from-an-unknown-directive

        .. include:: {secret}

        .. raw:: html

           <pre>notes raw</pre>

        ``notes inline`` is prose.

        >>> run("notes add x")
    """
    assert found(rest) == []


def test_the_same_text_twice_is_located_at_each_place() -> None:
    rest = """
        .. code-block:: bash

           notes list

        Again:

        .. code-block:: bash

           notes list
    """
    assert found(rest) == [("README.rst:3", "notes list"), ("README.rst:9", "notes list")]


# -- a real third-party reST document against its real parser --------------------------------------


def _watchdog_readme() -> str:
    # The metadata is an email message; its body is the long description (reST).
    body = cast(Message, metadata("watchdog")).get_payload()
    assert isinstance(body, str)
    assert ".. code-block:: bash" in body
    return body


def _watchmedo_report(root: Path, readme: str) -> Report:
    (root / "catalog.json").write_text(
        json.dumps({"format": "exampleguard.catalog/v1", "program": "watchmedo", "tools": []}),
        encoding="utf-8",
    )
    (root / "README.rst").write_text(readme, encoding="utf-8")
    write_config(
        root,
        {
            "catalog": "catalog.json",
            "tree": "argparse:watchdog.watchmedo:cli",
            "docs": ["README.rst"],
        },
    )
    outcome = validate(load_config(None, root))
    assert outcome.report is not None, outcome.unusable
    return outcome.report


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if needle in line)


def test_watchdog_readme_against_watchmedo(tmp_path: Path) -> None:
    pytest.importorskip("watchdog.watchmedo")
    original = _watchdog_readme()
    clean = _watchmedo_report(tmp_path, original)
    docs = {e.address: e for e in clean.examples if e.source == "rest"}
    log = f"README.rst:{_line_of(original, 'watchmedo log')}"
    shell = f"README.rst:{_line_of(original, 'watchmedo shell-command')}"
    assert docs[log].ok, docs[log].diagnostics
    assert docs[shell].ok, docs[shell].diagnostics
    # Plant a misspelt flag on the log example's fourth line, and a removed subcommand.
    lines = original.split("\n")
    recursive = _line_of(original, "watchmedo log") + 3
    assert lines[recursive - 1].strip() == "--recursive \\"
    lines[recursive - 1] = lines[recursive - 1].replace("--recursive", "--no-recursive")
    command = _line_of(original, "watchmedo shell-command")
    lines[command - 1] = lines[command - 1].replace("shell-command", "shell-cmd")
    report = _watchmedo_report(tmp_path, "\n".join(lines))
    located = {
        (d.location.line, d.location.column, d.code)
        for d in report.diagnostics
        if d.file == "README.rst" and d.location is not None
    }
    flag_column = lines[recursive - 1].index("--no-recursive") + 1
    command_column = lines[command - 1].index("shell-cmd") + 1
    assert (recursive, flag_column, "unknown-flag") in located
    assert (command, command_column, "unknown-command") in located
