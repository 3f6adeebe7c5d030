"""A quoted argument that spans lines is one word of its command, as the shell reads it.

Real docs pass scripts and JSON documents that way (``sqlite-utils convert ... '...'``,
``echo '[...]' | sqlite-utils insert``): reading line by line cut the command at the open quote
(a false ``parse-error``) and took the quote's lines for commands of their own.
"""

from __future__ import annotations

import textwrap

import pytest

from exampleguard._docshell import ends_inside_quotes
from exampleguard._sources.markdown import markdown_examples
from exampleguard._sources.rest import rest_examples


@pytest.mark.parametrize(
    ("text", "open_"),
    [
        ("notes add 'x", True),
        ('notes add "x', True),
        ("notes add 'x'", False),
        ('notes add "it\'s"', False),
        ("notes add it\\'s", False),
        ("notes add x  # don't", False),
        ("notes add 'a\nb", True),
        ("notes add 'a\nb'", False),
        ('notes add "a \\" b', True),
        ("notes add x#'y", True),
    ],
)
def test_ends_inside_quotes(text: str, open_: bool) -> None:
    assert ends_inside_quotes(text) is open_


def _found(markdown: str) -> list[tuple[str, str]]:
    text = textwrap.dedent(markdown).lstrip("\n")
    return [(r.address, r.text) for r in markdown_examples(text, "README.md", "notes")]


def test_a_quoted_script_is_part_of_its_command() -> None:
    markdown = """
        ```bash
        notes add --priority 2 '
        notes add this is the note text
        ' && notes export
        notes delete 3
        ```
    """
    assert _found(markdown) == [
        ("README.md:2", "notes add --priority 2 '\nnotes add this is the note text\n'"),
        ("README.md:4", "notes export"),
        ("README.md:5", "notes delete 3"),
    ]


def test_a_document_piped_in_from_echo() -> None:
    markdown = """
        ```bash
        echo '[
          {"text": "x"}
        ]' | notes add -
        ```
    """
    assert _found(markdown) == [("README.md:4", "notes add -")]


def test_a_session_joins_the_quote_after_its_continuation_prompts() -> None:
    markdown = """
        ```console
        $ notes add "a
        > b" --priority 2
        added
        ```
    """
    assert _found(markdown) == [("README.md:2", 'notes add "a\nb" --priority 2')]


def test_a_quote_the_block_never_closes_takes_the_rest_of_the_block() -> None:
    rest = textwrap.dedent(
        """
        .. code-block:: bash

           notes add 'unclosed
           notes export

        .. code-block:: bash

           notes export
        """
    ).lstrip("\n")
    records = rest_examples(rest, "README.rst", "notes")
    assert [(r.address, r.text) for r in records] == [
        ("README.rst:3", "notes add 'unclosed\nnotes export"),
        ("README.rst:8", "notes export"),
    ]
