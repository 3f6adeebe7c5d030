"""Markdown documents as a source of examples: the command lines of their shell code blocks.

The files are the configuration's ``docs`` globs (relative to the configuration file). Each is
parsed with markdown-it-py, a CommonMark parser, so that what is code is decided as a Markdown
renderer decides it: fences inside list items and blockquotes, indented code, fences of other
languages and inline code are told apart exactly, never guessed by pattern.

What is an example (docs/docs-examples.md, "Examples in documentation"):

* code: fenced blocks whose info string is a shell (:data:`SHELL_LANGUAGES`) or empty; indented
  blocks and inline code only when ``docs_code`` names them;
* lines: a line is a command line once an optional ``$ `` or ``% `` prompt is removed; in a
  ``console`` or ``shell-session`` block only prompted lines are, the rest is output. A line
  ending in a backslash continues on the next (a ``> `` prompt there is removed);
* commands: every simple command of a command line that runs the catalog's ``program``
  (:func:`~exampleguard._docshell.program_commands`), with its placeholders noted.

Each example is located at the Markdown file's line and column of every character, so a
diagnostic points at the offending word in the file.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from exampleguard._codes import DOC_FILE_UNREAD
from exampleguard._diagnostics import Diagnostic
from exampleguard._docshell import DEFAULT_PROMPTS
from exampleguard._documents import read_text
from exampleguard._sources._codeblocks import (
    SESSION_LANGUAGES,
    SHELL_LANGUAGES,
    CodeLine,
    CommandLineReader,
    DocumentOrigin,
)
from exampleguard._sources._records import (
    ExampleList,
    ExampleRecord,
    Examples,
    SourceContext,
)
from exampleguard._sources.rest import REST_SUFFIX, rest_examples

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from exampleguard._config import Config

__all__ = [
    "MARKDOWN_NAMES",
    "MARKDOWN_SUFFIXES",
    "MarkdownSource",
    "doc_files",
    "document_kind",
    "markdown_examples",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mdwn", ".mkd", ".mkdn", ".mdx"})
"""The names (lower-cased) of the files read as Markdown; ``.rst`` files are reStructuredText."""
MARKDOWN_NAMES = frozenset({"llms.txt", "llms-full.txt"})
"""Files read as Markdown whatever their suffix: the llms.txt convention writes Markdown."""
_SHOWN_UNREAD = 3
"""How many of a glob's unread files a warning names."""

# `**` does not descend into these: dependencies and tool caches are not the project's docs.
_NOT_DOCS = frozenset({"node_modules", "__pycache__", "site-packages"})


class MarkdownSource:
    """The examples of the configuration's ``docs`` files."""

    name = "docs"
    reads_tree = False

    def read(self, context: SourceContext) -> Examples:
        """Every example of every file the ``docs`` globs name: reST (``.rst``) or Markdown."""
        config = context.config
        settings = config.settings
        records: list[ExampleRecord] = []
        notes: list[Diagnostic] = []
        # Every file is under the configuration's folder: shown as that folder is, plus the rest.
        shown_root = config.display(config.root)
        prefix = "" if shown_root == "." else f"{shown_root.rstrip('/')}/"
        seen: set[Path] = set()
        for index, pattern in enumerate(settings.docs):
            paths = [path for path in doc_files(config.root, [pattern]) if path not in seen]
            seen.update(paths)
            unread = [path for path in paths if document_kind(path) is None]
            if unread:
                # Never read (an image is no text): named at the glob that brought them in.
                shown = [prefix + path.relative_to(config.root).as_posix() for path in unread]
                notes.append(_unread_note(config, index, pattern, shown))
            for path in paths:
                if document_kind(path) is None:
                    continue
                display = prefix + path.relative_to(config.root).as_posix()
                self._read_one(path, display, context, records, notes)
        return ExampleList((), records, notes) if records or notes else Examples()

    @staticmethod
    def _read_one(
        path: Path,
        display: str,
        context: SourceContext,
        records: list[ExampleRecord],
        notes: list[Diagnostic],
    ) -> None:
        """Add the examples of one file, read as its kind of document."""
        settings = context.config.settings
        program = context.catalog.catalog.program
        text = read_text(path, display)
        prompts = settings.doc_prompts
        if document_kind(path) == "rest":
            if program in text:
                records.extend(rest_examples(text, display, program, notes, prompts=prompts))
            return
        if not _may_hold_examples(text, program, settings.docs_code, prompts):
            # Most files of a docs tree never name the program in code: nothing to parse.
            return
        records.extend(
            markdown_examples(text, display, program, settings.docs_code, notes, prompts=prompts)
        )


def document_kind(path: Path) -> str | None:
    """``markdown`` or ``rest``: how ``path`` is read; None for a file no reader reads."""
    suffix = path.suffix.lower()
    if suffix == REST_SUFFIX:
        return "rest"
    if suffix in MARKDOWN_SUFFIXES or path.name.lower() in MARKDOWN_NAMES:
        return "markdown"
    return None


def _unread_note(config: Config, index: int, pattern: str, shown: list[str]) -> Diagnostic:
    """The ``doc-file-unread`` warning of the ``docs`` glob ``index``, at that glob."""
    named = ", ".join(shown[:_SHOWN_UNREAD])
    if len(shown) > _SHOWN_UNREAD:
        named += f" and {len(shown) - _SHOWN_UNREAD} more"
    files = "file" if len(shown) == 1 else "files"
    return DOC_FILE_UNREAD.diagnostic(
        f"docs glob {pattern!r} matches {len(shown)} {files} that no reader reads, not "
        f"checked: {named}",
        hint="Markdown (.md, .markdown, .mdx, llms.txt) and reStructuredText (.rst) are read; "
        "narrow the glob to them.",
        region=config.region("docs", index),
    )


def _may_hold_examples(
    text: str, program: str, code: Sequence[str], prompts: Sequence[str] = DEFAULT_PROMPTS
) -> bool:
    """Whether ``text`` can hold an example at all; false only when it certainly cannot.

    An example's line names the program. When fences are the only code read, that line also
    comes after a fence's opening line, which holds three backticks or tildes: a file that
    names the program only before its first fence (an API page's prose) has no example.
    """
    first = text.find(program)
    if first < 0:
        return False
    if any(f"{prompt} {program}" in text for prompt in prompts):
        # A prompted line in a paragraph (a generated reference page).
        return True
    if any(kind != "fenced" for kind in code):
        return True
    fences = [at for at in (text.find("```"), text.find("~~~")) if at >= 0]
    if not fences:
        return False
    # CommonMark ends a line at a line feed or at a lone carriage return (old Mac files).
    ends = [at for at in (text.find("\n", min(fences)), text.find("\r", min(fences))) if at >= 0]
    return bool(ends) and text.find(program, min(ends)) >= 0


def doc_files(root: Path, patterns: Sequence[str]) -> list[Path]:
    """The files ``patterns`` name under ``root``, in pattern order, each once.

    A pattern is a path relative to ``root`` whose segments may use ``*``, ``?`` and ``[...]``;
    a ``**`` segment matches any number of directories, but never enters a hidden directory
    (``.git``, ``.venv``), a virtual environment (a directory with a ``pyvenv.cfg``),
    ``node_modules``, ``__pycache__`` or ``site-packages``, and never follows a symbolic link
    to a directory. A pattern that matches nothing adds nothing.
    """
    found: dict[Path, None] = {}
    for pattern in patterns:
        parts = [part for part in PurePosixPath(pattern).parts if part not in ("", ".")]
        for path in _expand(root, parts):
            found.setdefault(path, None)
    return list(found)


def _magic(part: str) -> bool:
    return any(ch in part for ch in "*?[")


def _expand(directory: Path, parts: list[str]) -> Iterator[Path]:
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    if head == "**":
        if rest:
            yield from _expand(directory, rest)
        for child in _subdirectories(directory):
            yield from _expand(child, parts)
        return
    if not _magic(head):
        child = directory / head
        if rest:
            if _is(child, stat.S_ISDIR):
                yield from _expand(child, rest)
        elif _is(child, stat.S_ISREG):
            yield child
        return
    for entry in _entries(directory):
        if not fnmatch.fnmatchcase(entry.name, head):
            continue
        if rest:
            if entry.is_dir():
                yield from _expand(Path(entry.path), rest)
        elif entry.is_file():
            yield Path(entry.path)


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as scan:
            return sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return []


def _subdirectories(directory: Path) -> Iterator[Path]:
    for entry in _entries(directory):
        name = entry.name
        if name.startswith(".") or name in _NOT_DOCS:
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        if _is(path / "pyvenv.cfg", stat.S_ISREG):
            continue
        yield path


def _is(path: Path, kind: Callable[[int], bool]) -> bool:
    """Whether ``path`` is of ``kind``; false also when it cannot be looked at.

    A folder the user may not enter (a container's data volume, owned by another user) holds
    none of the project's docs: it is passed over, as the listing of such a folder is.
    """
    try:
        return kind(path.stat().st_mode)
    except OSError:
        return False


_PARSERS: dict[bool, MarkdownIt] = {}


def _parser(*, inline: bool) -> MarkdownIt:
    """One CommonMark parser for the run (imported only when a file names the program).

    Without ``inline``, the parse stops after the blocks: code blocks and fences are block
    tokens, and parsing the inline content of every paragraph is most of the rest of the work.
    """
    parser = _PARSERS.get(inline)
    if parser is None:
        from markdown_it import MarkdownIt  # noqa: PLC0415 - only runs that have docs need it

        parser = MarkdownIt("commonmark")
        if not inline:
            parser.disable("inline")
        _PARSERS[inline] = parser
    return parser


def markdown_examples(
    text: str,
    display: str,
    program: str,
    code: Sequence[str] = ("fenced",),
    notes: list[Diagnostic] | None = None,
    *,
    prompts: Sequence[str] = DEFAULT_PROMPTS,
) -> list[ExampleRecord]:
    """The examples of one Markdown document, each with an origin that locates it in ``text``.

    ``code`` names the kinds of code read: ``fenced`` blocks, ``indented`` blocks, ``inline``
    code; ``prompts`` the prompts a command line may start with (``doc_prompts``). What the
    reading noticed (a session block without a prompt) is added to ``notes``.
    """
    origin = DocumentOrigin(display, "markdown")
    source_lines = text.splitlines()
    builder = CommandLineReader(origin, program, prompts)
    prompted = tuple(f"{prompt} {program}" for prompt in prompts)
    previous: str | None = None
    for token in _parser(inline="inline" in code).parse(text):
        opened, previous = previous, token.type
        if (
            token.type == "inline"
            and opened == "paragraph_open"
            and token.map is not None
            and any(start in token.content for start in prompted)
        ):
            # Generated reference pages write `$ mycli ...` lines in plain paragraphs.
            for line in _prompted_lines(token.content, prompted, token.map[0], source_lines):
                builder.block([line], session=True, declared=False)
        if token.type == "fence" and "fenced" in code and token.map is not None:
            language = token.info.strip().split(maxsplit=1)[0].lower() if token.info else ""
            if language in SHELL_LANGUAGES:
                lines = _code_lines(token.content, token.map[0] + 1, source_lines)
                builder.block(lines, session=language in SESSION_LANGUAGES)
        elif token.type == "code_block" and "indented" in code and token.map is not None:
            builder.block(_code_lines(token.content, token.map[0], source_lines), session=False)
        elif token.type == "inline" and "inline" in code and token.map is not None:
            for child in token.children or ():
                if child.type == "code_inline":
                    builder.block([_inline_line(child, token, source_lines)], session=False)
    if notes is not None:
        notes.extend(builder.notes)
    return builder.records


def _prompted_lines(
    content: str, prompted: tuple[str, ...], first: int, source: list[str]
) -> Iterator[CodeLine]:
    """The lines of a paragraph that start with a prompt and the program, placed in the file.

    A paragraph's continuation lines keep their indentation in its content: Typer's generated
    reference pages indent their ``Examples`` lines under the word (``  $ mycli add x``).
    """
    for offset, line in enumerate(content.split("\n")):
        line_text = line.lstrip(" \t")
        if not any(line_text == start or line_text.startswith(start + " ") for start in prompted):
            continue
        number = first + offset
        raw = source[number] if number < len(source) else line_text
        found = raw.find(line_text)
        yield CodeLine(line_text, number + 1, (found if found >= 0 else 0) + 1)


def _code_lines(content: str, first: int, source: list[str]) -> list[CodeLine]:
    """The lines of a code block, each placed in the file (``first`` is its 0-based line)."""
    lines: list[CodeLine] = []
    for offset, line_text in enumerate(content.split("\n")[:-1] if content else []):
        number = first + offset
        raw = source[number] if number < len(source) else line_text
        # The parser removed the block's indentation and any list or blockquote markers: the
        # line's text is what is left at the end of the file's line.
        if raw.endswith(line_text):
            column = len(raw) - len(line_text) + 1
        else:
            found = raw.find(line_text.lstrip())
            column = (found if found >= 0 else 0) + 1 - (len(line_text) - len(line_text.lstrip()))
            column = max(column, 1)
        lines.append(CodeLine(line_text, number + 1, column))
    return lines


def _inline_line(child: Any, parent: Any, source: list[str]) -> CodeLine:
    """Inline code placed where it is written (searched for in its paragraph's lines)."""
    content: str = child.content
    start, end = parent.map
    for number in range(start, min(end, len(source))):
        found = source[number].find(content)
        if found >= 0:
            return CodeLine(content, number + 1, found + 1)
    return CodeLine(content, start + 1, 1)
