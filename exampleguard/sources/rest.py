"""reStructuredText documents as a source of examples: the command lines of their shell blocks.

Most Python CLIs document themselves with Sphinx, in reStructuredText. A ``docs`` file whose
name ends in ``.rst`` is parsed with docutils, so that what is a code block is decided as a
reST renderer decides it, never guessed by pattern:

* ``code``, ``code-block`` and ``sourcecode`` directives of a shell language
  (:data:`~exampleguard.sources._codeblocks.SHELL_LANGUAGES`): every line is a command line once an
  optional ``$ `` or ``% `` prompt is removed; in a ``console`` or ``shell-session`` block only
  prompted lines are, the rest is output;
* ``::`` literal blocks: only prompted lines are command lines (such a block is as often a
  program's output, a configuration file or Python as it is a shell session).

Nothing else is read: directives docutils does not know (Sphinx's own, extensions') are passed
over, and no file is ever included or read through the document (``include`` and ``raw`` are
off). Each example is located at the reST file's line and column of every character, as
Markdown's are.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from exampleguard.docshell import DEFAULT_PROMPTS
from exampleguard.sources._codeblocks import (
    SESSION_LANGUAGES,
    SHELL_LANGUAGES,
    CodeLine,
    CommandLineReader,
    DocumentOrigin,
)

if TYPE_CHECKING:
    from exampleguard.diagnostics import Diagnostic
    from exampleguard.sources._records import ExampleRecord

__all__ = ["CODE_DIRECTIVE_CLASS", "REST_SUFFIX", "rest_examples"]

REST_SUFFIX = ".rst"
"""The suffix of the files read as reStructuredText (Markdown's: ``MARKDOWN_SUFFIXES``)."""
CODE_DIRECTIVE_CLASS = "code"
"""The class docutils gives the literal block of a ``code`` directive (and its aliases)."""

_SETTINGS: dict[str, Any] = {
    # A document is data: it may name no file to read, and its errors are not ours to print.
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
    "report_level": 5,
    "halt_level": 5,
    # No highlighting: the block's text is all that is needed (and Pygments is not).
    "syntax_highlight": "none",
}


def rest_examples(
    text: str,
    display: str,
    program: str,
    notes: list[Diagnostic] | None = None,
    *,
    prompts: Sequence[str] = DEFAULT_PROMPTS,
) -> list[ExampleRecord]:
    """The examples of one reStructuredText document, each located in ``text``.

    ``prompts`` are the prompts a command line may start with (``doc_prompts``). What the
    reading noticed (a session block without a prompt) is added to ``notes``.
    """
    # Deferred: only runs whose docs hold reST need the parser (a tenth of a second to import).
    from docutils import nodes  # noqa: PLC0415
    from docutils.core import publish_doctree  # noqa: PLC0415

    settings = {**_SETTINGS, "warning_stream": io.StringIO()}
    tree = publish_doctree(text, source_path=display, settings_overrides=settings)
    origin = DocumentOrigin(display, "rest")
    reader = CommandLineReader(origin, program, prompts)
    source = text.splitlines()
    cursor = 0
    for block in tree.findall(nodes.literal_block):
        if _in_error_report(block, nodes.system_message):
            # The text of a directive docutils could not run, quoted in its error report.
            continue
        session = _session(block.get("classes", []))
        if session is None:
            continue
        content = block.astext().split("\n")
        start = _find(content, source, cursor)
        if start is None:
            continue
        lines = _placed(content, source, start)
        cursor = start + len(content)
        if program in block.astext():
            # A `::` block is read as a session without saying so: it is as often output.
            declared = CODE_DIRECTIVE_CLASS in block.get("classes", [])
            reader.block(lines, session=session, declared=declared)
    if notes is not None:
        notes.extend(reader.notes)
    return reader.records


def _in_error_report(node: Any, system_message: type) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, system_message):
            return True
        parent = parent.parent
    return False


def _session(classes: list[str]) -> bool | None:
    """Whether a block is a session (only prompted lines are commands); None: not shell code."""
    if CODE_DIRECTIVE_CLASS not in classes:
        # A `::` literal block: its prompted lines only.
        return True
    languages = [name for name in classes if name != CODE_DIRECTIVE_CLASS]
    language = languages[0].lower() if languages else ""
    if not language or language not in SHELL_LANGUAGES:
        return None
    return language in SESSION_LANGUAGES


def _find(content: list[str], source: list[str], cursor: int) -> int | None:
    """The 0-based line of ``source`` where a block's ``content`` starts, from ``cursor`` on.

    docutils removes the block's common indentation; every line of the block is then the end of
    its line in the file, at one indentation.
    """
    first = next((i for i, line in enumerate(content) if line.strip()), None)
    if first is None:
        return None
    for number in range(cursor + first, len(source)):
        raw = source[number]
        if not raw.endswith(content[first]) or raw.strip() != content[first].strip():
            continue
        start = number - first
        indent = len(raw) - len(content[first])
        if all(_same(source, start + i, indent, line) for i, line in enumerate(content)):
            return start
    return None


def _same(source: list[str], number: int, indent: int, line: str) -> bool:
    if number >= len(source):
        return not line
    raw = source[number]
    return raw[indent:] == line if line else not raw.strip()


def _placed(content: list[str], source: list[str], start: int) -> list[CodeLine]:
    lines = []
    for offset, line in enumerate(content):
        raw = source[start + offset] if start + offset < len(source) else line
        column = len(raw) - len(line) + 1 if line else 1
        lines.append(CodeLine(line, start + offset + 1, column))
    return lines
