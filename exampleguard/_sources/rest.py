"""reStructuredText documents as a source of examples: the command lines of their shell blocks.

Most Python CLIs document themselves with Sphinx, in reStructuredText. A ``docs`` file whose
name ends in ``.rst`` is parsed with docutils, so that what is a code block is decided as a
reST renderer decides it, never guessed by pattern:

* ``code``, ``code-block`` and ``sourcecode`` directives of a shell language
  (:data:`~exampleguard._sources._codeblocks.SHELL_LANGUAGES`): every line is a command line once an
  optional prompt (``doc_prompts``) is removed; in a ``console`` or ``shell-session`` block only
  prompted lines are, the rest is output;
* ``::`` literal blocks: only prompted lines are command lines (such a block is as often a
  program's output, a configuration file or Python as it is a shell session); a block without
  any prompt, only when each of its command lines runs the program;
* the content of directives docutils does not know (Sphinx's own, extensions': ``tab``,
  ``tab-item``) is read as reST of its own; sphinx-prompt's ``prompt`` directive of a shell
  language is a shell block.

No file is ever included or read through the document (``include`` and ``raw`` are off). Each
example is located at the reST file's line and column of every character, as Markdown's are.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from exampleguard._docshell import DEFAULT_PROMPTS
from exampleguard._sources._codeblocks import (
    SESSION_LANGUAGES,
    SHELL_LANGUAGES,
    CodeLine,
    CommandLineReader,
    DocumentOrigin,
)

if TYPE_CHECKING:
    from exampleguard._diagnostics import Diagnostic
    from exampleguard._sources._records import ExampleRecord

__all__ = ["CODE_DIRECTIVE_CLASS", "REST_SUFFIX", "rest_examples"]

REST_SUFFIX = ".rst"
"""The suffix of the files read as reStructuredText (Markdown's: ``MARKDOWN_SUFFIXES``)."""
CODE_DIRECTIVE_CLASS = "code"
"""The class docutils gives the literal block of a ``code`` directive (and its aliases)."""

_UNKNOWN = re.compile(r'Unknown directive type "')
_DIRECTIVE = re.compile(r"\.\.\s+([\w:+.-]+?)::(.*)")
_OPTION = re.compile(r":[\w-]+:(\s|$)")
_MAX_NESTING = 8
"""Unknown directives inside unknown directives read, at most (a ``tab`` in a ``tab-set``)."""

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
    from docutils.core import publish_doctree  # noqa: PLC0415

    settings = {**_SETTINGS, "warning_stream": io.StringIO()}
    tree = publish_doctree(text, source_path=display, settings_overrides=settings)
    origin = DocumentOrigin(display, "rest")
    reader = CommandLineReader(origin, program, prompts)
    source = text.splitlines()
    cursor = 0
    for classes, block_text in _literal_blocks(tree, display, 0):
        session = _session(classes)
        if session is None:
            continue
        content = block_text.split("\n")
        start = _find(content, source, cursor)
        if start is None:
            continue
        lines = _placed(content, source, start)
        cursor = start + len(content)
        if program in block_text:
            # A `::` block is read as a session without saying so: it is as often output.
            reader.block(lines, session=session, declared=CODE_DIRECTIVE_CLASS in classes)
    if notes is not None:
        notes.extend(reader.notes)
    return reader.records


def _literal_blocks(tree: Any, display: str, depth: int) -> Iterator[tuple[list[str], str]]:
    """``(classes, text)`` of every literal block of ``tree``, in document order.

    Sphinx's directives and its extensions' are unknown to docutils, which quotes each in an
    error report. Those that hold content (``tab``, ``tab-item``, ``only``, ``versionadded``)
    often hold the shell blocks a page shows, one per platform or configuration format: the
    content is read as reST of its own, as the extension renders it. The content of
    sphinx-prompt's ``prompt`` directive of a shell language is a shell block itself.
    """
    from docutils import nodes  # noqa: PLC0415
    from docutils.core import publish_doctree  # noqa: PLC0415

    for block in tree.findall(nodes.literal_block):
        report = block.parent
        if not isinstance(report, nodes.system_message):
            if not _in_error_report(block, nodes.system_message):
                yield list(block.get("classes", [])), block.astext()
            continue
        # The text of a directive docutils could not run, quoted in its error report.
        unknown = _UNKNOWN.search(report.astext().split("\n", 1)[0])
        directive = _DIRECTIVE.match(block.astext())
        if unknown is None or directive is None or depth >= _MAX_NESTING:
            continue
        name, arguments = directive.group(1).lower(), directive.group(2).split()
        body = _directive_body(block.astext().split("\n")[1:])
        if name == "prompt":
            language = arguments[0].lower() if arguments else ""
            if language in SHELL_LANGUAGES and body:
                # `auto`: the lines carry their prompts; otherwise each line is a command.
                shown = "console" if "auto" in arguments else language or "sh"
                yield [CODE_DIRECTIVE_CLASS, shown], body
            continue
        if body:
            settings = {**_SETTINGS, "warning_stream": io.StringIO()}
            nested = publish_doctree(body, source_path=display, settings_overrides=settings)
            yield from _literal_blocks(nested, display, depth + 1)


def _directive_body(lines: list[str]) -> str:
    """The content of a directive (the lines after its first), without its options."""
    body = textwrap.dedent("\n".join(lines)).split("\n")
    while body and _OPTION.match(body[0]):
        body.pop(0)
    return "\n".join(body).strip("\n")


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
