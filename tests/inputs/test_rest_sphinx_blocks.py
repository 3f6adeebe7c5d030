"""reST as Sphinx projects write it: blocks inside extensions' directives, commands in ``::``.

Found measuring recall on real docs: tox shows its commands in sphinx-inline-tabs' ``tab``
directives (unknown to docutils, whose content was dropped with its error report), datasette
writes its commands in ``::`` blocks without prompts (which were read as output).
"""

from __future__ import annotations

import textwrap

import pytest

from exampleguard._sources.rest import rest_examples


def found(rest: str) -> list[tuple[str, str, int]]:
    """``(address, text, column)`` of every example of ``rest``."""
    text = textwrap.dedent(rest).lstrip("\n")
    records = rest_examples(text, "index.rst", "notes")
    return [(r.address, r.text, r.location().column or 0) for r in records]


def test_blocks_inside_tabs_are_read_where_they_are() -> None:
    rest = """
        .. tab:: TOML

            .. code-block:: bash

               notes add x --priority 2

        .. tab-set::

           .. tab-item:: pip
              :sync: pip

              .. code-block:: console

                 $ notes export
                 exported
    """
    assert found(rest) == [
        ("index.rst:5", "notes add x --priority 2", 8),
        ("index.rst:14", "notes export", 12),
    ]


def test_sphinx_prompt_content_is_a_shell_block() -> None:
    rest = """
        .. prompt:: bash $

           notes add x

        .. prompt:: bash $ auto

           $ notes export
           exported

        .. prompt:: python >>>

           notes.add("x")
    """
    assert found(rest) == [("index.rst:3", "notes add x", 4), ("index.rst:7", "notes export", 6)]


def test_an_unknown_directive_without_blocks_yields_nothing() -> None:
    rest = """
        .. mermaid::

           graph LR; notes --> add

        .. click:: notes.cli:cli
           :prog: notes
    """
    assert found(rest) == []


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        pytest.param(
            "    notes add x \\\n      --priority 2\n    notes export\n",
            [
                ("index.rst:3", "notes add x \\\n  --priority 2", 5),
                ("index.rst:5", "notes export", 5),
            ],
            id="every line runs the program",
        ),
        pytest.param(
            "    echo '[1]' | notes add -\n\n    # then\n    notes export > out.json\n",
            [("index.rst:3", "notes add -", 18), ("index.rst:6", "notes export", 5)],
            id="pipes, blank lines and comments",
        ),
        pytest.param("    notes export\n    exported 3 notes\n", [], id="output after it"),
        pytest.param("    pip install notes\n    notes add x\n", [], id="another program first"),
        pytest.param("    notes = Notes()\n", [], id="Python"),
        pytest.param("    notes\n    notes-plugin\n", [], id="a requirements file"),
    ],
)
def test_a_literal_block_without_prompts_is_commands_when_each_runs_the_program(
    block: str, expected: list[tuple[str, str, int]]
) -> None:
    text = "Run::\n\n" + block
    records = rest_examples(text, "index.rst", "notes")
    assert [(r.address, r.text, r.location().column) for r in records] == expected
