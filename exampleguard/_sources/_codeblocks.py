"""Command lines in a document's code blocks: what is read as a command, and where it is.

Shared by every document format (Markdown, reStructuredText): the format's own parser says which
blocks are shell code and where each of their lines is in the file; this module reads the
command lines of those lines (prompts, sessions, continuations) and locates every example.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from exampleguard._codes import DOC_BLOCK_WITHOUT_EXAMPLE
from exampleguard._diagnostics import Diagnostic, Location, Span
from exampleguard._docshell import DEFAULT_PROMPTS, ends_inside_quotes, line_examples
from exampleguard._sources._records import ExampleRecord, Layout

__all__ = [
    "SESSION_LANGUAGES",
    "SHELL_LANGUAGES",
    "CodeLine",
    "CommandLineReader",
    "DocumentOrigin",
]

SHELL_LANGUAGES = frozenset({"sh", "bash", "shell", "console", "zsh", "shell-session", ""})
"""Languages (a fence's info string's first word, a code directive's argument; lower-cased) of
the blocks that hold commands."""
SESSION_LANGUAGES = frozenset({"console", "shell-session"})
"""Blocks of a terminal session: only prompted lines are commands, the rest is output."""
_CONTINUATION_PROMPT = "> "
_SYNOPSIS = re.compile(r"(?<![\w'\"\\])\[[A-Z][A-Z0-9_-]*\](?:\.\.\.)?(?=[\s\]]|$)")
"""A usage synopsis's bracketed word in capitals (``[OPTIONS]``, ``[FILES]...``), unquoted:
the shell would take it for a glob, and no writer means it as a value."""
_ASSIGNED = re.compile(r"\s+[-+*/]?=(\s|$)")
"""What follows the program's name in code that assigns to a variable of that name."""
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
"""A here-document's operator and delimiter word (``<<EOF``, ``<<-'END'``); ``<<<`` is a
here-string, which has no body."""


@dataclass(frozen=True, slots=True, eq=False)
class DocumentOrigin:
    """The examples of one document (Markdown, reStructuredText), each located in it."""

    display: str
    kind: str
    """The kind of document (``markdown``, ``rest``), as counts and reports name it."""
    layouts: list[Layout] = field(default_factory=list)

    @property
    def file(self) -> str:
        """The Markdown file, as shown to people."""
        return self.display

    def address(self, index: int) -> str:
        """``README.md:42`` (``README.md:42:17`` for a second example on that line)."""
        return self.layouts[index].address

    def location(self, index: int, span: Span | None = None) -> Location:
        """Where example ``index`` (or ``span`` of its text) is in the file."""
        return self.layouts[index].location(self.display, span)


@dataclass(slots=True)
class CodeLine:
    """One line of code: its text and where that text starts in the file (1-based)."""

    text: str
    line: int
    column: int


class CommandLineReader:
    """Turns the lines of code blocks into located example records."""

    def __init__(
        self, origin: DocumentOrigin, program: str, prompts: Sequence[str] = DEFAULT_PROMPTS
    ) -> None:
        self.origin = origin
        self.program = program
        # A prompt is followed by a blank (`$ mycli`): `$HOME/bin/mycli` is not prompted.
        # Longest first, so that `>>>` wins over a configured `>`.
        self.prompts = tuple(sorted((f"{p} " for p in prompts), key=len, reverse=True))
        self.records: list[ExampleRecord] = []
        self.notes: list[Diagnostic] = []
        self._lines_used: set[int] = set()

    def block(self, lines: list[CodeLine], *, session: bool, declared: bool = True) -> None:
        """Read the command lines of one block of code.

        A block in which some lines carry a prompt is a session whatever its language: its
        other lines are output (a program's output often starts with the program's name). The
        body of a here-document is the input of its command, never a command line. A session
        its writer ``declared`` (a ``console`` block) with no prompt at all is noted when it
        names the program. One that was not declared (reST's ``::`` block, which is as often
        output or Python) is read as commands only when each of its command lines runs the
        program: a block of commands written without prompts.
        """
        prompted = any(self._prompt(line.text) is not None for line in lines)
        if session and not prompted:
            if declared:
                self._note_unread(lines)
                return
            if not self._all_commands(lines):
                return
            session = False
        for pieces in self._command_lines(lines, session=session or prompted):
            self._command_line(pieces)

    def _command_lines(self, lines: list[CodeLine], *, session: bool) -> Iterator[list[CodeLine]]:
        """The command lines of a block, each as its physical lines without their prompts."""
        i = 0
        while i < len(lines):
            line = lines[i]
            stripped = line.text.lstrip()
            indent = len(line.text) - len(stripped)
            prompt = self._prompt(line.text)
            i += 1
            if session and prompt is None:
                continue  # output
            skip = indent + (len(prompt) if prompt else 0)
            pieces = [CodeLine(line.text[skip:], line.line, line.column + skip)]
            while i < len(lines) and _continued(pieces):
                following = lines[i]
                i += 1
                # The shell removes only the backslash-newline: the next line's indentation
                # stays part of the command; a session's `> ` prompt does not.
                prompted = session and following.text.startswith(_CONTINUATION_PROMPT)
                cut = len(_CONTINUATION_PROMPT) if prompted else 0
                pieces.append(
                    CodeLine(following.text[cut:], following.line, following.column + cut)
                )
            yield pieces
            i = _after_heredocs(lines, i, "\n".join(piece.text for piece in pieces))

    def _all_commands(self, lines: list[CodeLine]) -> bool:
        """Whether every command line of a block without prompts runs the program."""
        seen = False
        for pieces in self._command_lines(lines, session=False):
            text = "\n".join(piece.text for piece in pieces).strip()
            if not text or text.startswith("#"):
                continue
            found = line_examples(text, self.program)
            if not found or _ASSIGNED.match(found[0].text, len(self.program)):
                # Output, another program's command, or code (`mycli = App()`).
                return False
            seen = True
        return seen

    def _prompt(self, text: str) -> str | None:
        stripped = text.lstrip()
        return next((p for p in self.prompts if stripped.startswith(p)), None)

    def _note_unread(self, lines: list[CodeLine]) -> None:
        """A session block with no prompt: note it if it names the program."""
        naming = next((line for line in lines if self.program in line.text), None)
        if naming is None or not line_examples(naming.text, self.program):
            return
        column = naming.column + naming.text.index(self.program)
        self.notes.append(
            DOC_BLOCK_WITHOUT_EXAMPLE.diagnostic(
                f"this block reads only prompted lines as commands, and '{self.program}' is "
                "named on a line without a prompt",
                hint="Give the command lines a `$ ` prompt, or mark the block `sh` or `bash`.",
                location=Location(self.origin.display, naming.line, column),
            )
        )

    def _command_line(self, pieces: list[CodeLine]) -> None:
        text = "\n".join(piece.text for piece in pieces)
        if self.program not in text:
            return
        starts: list[int] = []
        position = 0
        for piece in pieces:
            starts.append(position)
            position += len(piece.text) + 1
        places = [(piece.line, piece.column) for piece in pieces]
        for found in line_examples(text, self.program):
            if _SYNOPSIS.search(found.text):
                # `mycli add [OPTIONS] TEXT`: the form of a command, not a command to run.
                continue
            layout = Layout.of(starts, places, found.start, found.end)
            line = layout.lines[0]
            address = f"{self.origin.display}:{line}"
            if line in self._lines_used:
                address += f":{layout.columns[0]}"
            self._lines_used.add(line)
            self.origin.layouts.append(replace(layout, address=address))
            self.records.append(
                ExampleRecord(
                    None,
                    len(self.origin.layouts) - 1,
                    found.text,
                    self.origin,
                    found.placeholders,
                    found.blanks,
                )
            )


def _continued(pieces: list[CodeLine]) -> bool:
    """Whether the shell reads the next line as more of the command line of ``pieces``.

    After a backslash-newline, and while a quote is open: a multi-line quoted argument (a
    ``--convert '...'`` script, a JSON document) is one word of the command.
    """
    if pieces[-1].text.endswith("\\"):
        return True
    return ends_inside_quotes("\n".join(piece.text for piece in pieces))


def _after_heredocs(lines: list[CodeLine], i: int, command: str) -> int:
    """Where reading goes on after the bodies of ``command``'s here-documents (from line ``i``).

    Each body runs to the line that is exactly its delimiter word (with leading tabs removed
    for ``<<-``); a body the block does not close takes the rest of the block.
    """
    for match in _HEREDOC.finditer(command.replace("<<<", "   ")):
        strip_tabs, word = match.group(1) == "-", match.group(3)
        while i < len(lines):
            text = lines[i].text
            i += 1
            if (text.lstrip("\t") if strip_tabs else text) == word:
                break
    return i
