"""The diagnostic record every stage produces and every renderer consumes.

A diagnostic is immutable data: what is wrong (a registered code and a message), where (a file
location and, inside an example, a character span), and how to fix it (a hint). Stages return
diagnostics; they never print them.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "Diagnostic",
    "Location",
    "Region",
    "Related",
    "Severity",
    "Span",
    "neutralise",
    "plural",
]

# Every C0 control but tab and newline, DEL, every C1 control, lone surrogates, and the two
# noncharacters XML refuses: a terminal acts on them (ESC starts CSI and OSC sequences: colours,
# window titles, the clipboard), and XML cannot carry them.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
# A line that a CI runner reads as a command: GitHub Actions' workflow commands (::error,
# ::add-mask::, ::stop-commands::), however indented.
_COMMAND_LINE = re.compile(r"^([ \t]*):(?=:)", re.MULTILINE)


def neutralise(text: str) -> str:
    r"""``text`` as data, fit for any output: controls escaped, no line a CI runner obeys.

    Text that came from another process (an import's error, a parser's message, a dry run's
    output) reaches terminals, CI logs and XML. Each control character becomes its Python
    escape (``\x1b``), and a line that starts with ``::`` gets its first colon escaped
    (``\x3a:``); everything else, newlines and tabs included, is kept as it is.
    """
    if not _CONTROL.search(text) and "::" not in text:
        return text
    escaped = _CONTROL.sub(lambda match: _escape(match.group()), text)
    return _COMMAND_LINE.sub(lambda match: match.group(1) + "\\x3a", escaped)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun`` as a message says them: ``1 tool``, ``2 tools``, ``0 tools``.

    ``many`` is the plural where adding ``s`` does not make it (``1 entry``, ``2 entries``).
    """
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def _escape(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


class Severity(enum.StrEnum):
    """How much a diagnostic matters: errors fail the run, warnings never do."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open character range ``[start, end)`` inside one example's text."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a file: its path as shown to people, a key path, and a 1-based line and column.

    ``key`` is the path of the offending value inside the file, written the way people read it
    (``tools[3].examples[1].command``). ``line`` and ``column`` are absent when the file could not
    be read far enough to know them. ``end_line`` and ``end_column`` close the region when the
    location covers a stretch of text (a word of an example), mapped through the file like the
    start, so escapes inside a JSON string do not shorten it.
    """

    file: str
    line: int | None = None
    column: int | None = None
    key: str | None = None
    end_line: int | None = None
    end_column: int | None = None
    """Where the located text ends (1-based, inclusive of the last character), when known."""

    def __str__(self) -> str:
        if self.line is None:
            return self.file
        if self.column is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"


class Region(Protocol):
    """Where a finding is, in its file's coordinates, before lines and columns are known.

    A stage that finds a problem says where it is in the terms it has (an example and a span
    of its text; a key path of a JSON or TOML file) and reads no file for it; the report builder
    turns it into a :class:`Location` once (:meth:`located`), when the diagnostic is reported.
    """

    @property
    def file(self) -> str:
        """The file, as shown to people."""
        ...

    def located(self) -> Location:
        """The region as a :class:`Location`: file, key path, lines and columns."""
        ...


@dataclass(frozen=True, slots=True)
class Related:
    """A secondary place a diagnostic points at, with a label ("first given here")."""

    message: str
    span: Span | None = None
    location: Location | None = None
    region: Region | None = None
    """Where it is, when the stage that found it left lines and columns to the report."""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: a registered code, its severity, a message, where it is and how to fix it."""

    code: str
    severity: Severity
    message: str
    hint: str | None = None
    suggestion: str | None = None
    """The one replacement a did-you-mean proposes (a flag, a command word, a choice), if any.

    Renderers show it without reading the message or the hint, and fixes apply it.
    """
    tool: str | None = None
    example: int | None = None
    location: Location | None = None
    span: Span | None = None
    related: tuple[Related, ...] = field(default=())
    region: Region | None = None
    """Where it is, when the stage that found it left the lines and columns to the report
    builder; ``location`` is then unset."""

    @property
    def is_error(self) -> bool:
        """Whether this diagnostic fails the run."""
        return self.severity is Severity.ERROR
