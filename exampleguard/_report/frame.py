"""Code frames: the lines of a file a diagnostic points at, with carets under the located text.

The ``full`` text form (ruff's) shows, under each diagnostic's header line, the lines of the file
from the location's start to its end with a line-number gutter, and carets under the located
characters. Columns count characters as the file is written; the carets are placed by display
width, so a tab or a wide character before the span does not shift them. A very long line (a
catalog written on one line) is cut to a window around the span, marked with ``…``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from exampleguard._report.data import LocationEntry

__all__ = ["MAX_FRAME_LINES", "SourceLookup", "code_frame"]

SourceLookup = Callable[[str], "Sequence[str] | None"]
"""Gives the lines of a file (split at ``\n``) by the name diagnostics show for it, or ``None``
when unknown. A lookup splits each file once, however many diagnostics point into it."""

MAX_FRAME_LINES = 6
"""A located stretch longer than this shows its first and last lines only."""

_WINDOW = 100
"""Columns of a long line shown around the located text."""


@dataclass(frozen=True, slots=True)
class _Mark:
    """Which characters of one line the carets go under: ``[start, end)``, 0-based."""

    start: int
    end: int


def code_frame(lines: Sequence[str], location: LocationEntry, label: str) -> list[str]:
    """The frame of ``location`` in a file's ``lines``: gutter, the lines, carets, ``label``.

    Empty when the location has no line, or the line is not in the file (the file changed).
    """
    if location.line is None:
        return []
    first = location.line
    if first < 1 or first > len(lines):
        return []
    last = location.end_line if location.end_line is not None else first
    last = min(max(last, first), len(lines))
    shown = list(range(first, last + 1))
    if len(shown) > MAX_FRAME_LINES:
        shown = [*shown[: MAX_FRAME_LINES // 2], 0, *shown[-(MAX_FRAME_LINES // 2) :]]
    width = len(str(last))
    gutter = " " * width
    frame = [f"{gutter} |"]
    for number in shown:
        if number == 0:
            frame.append(f"{'.' * width} |")
            continue
        line = lines[number - 1].rstrip("\r")
        mark = _mark(line, number, first, last, location)
        shown_line, carets = _render_line(line, mark)
        frame.append(f"{number:>{width}} | {shown_line}".rstrip())
        if carets:
            suffix = f" {label}" if number == last and label else ""
            frame.append(f"{gutter} | {carets}{suffix}")
    frame.append(f"{gutter} |")
    return frame


def _mark(line: str, number: int, first: int, last: int, location: LocationEntry) -> _Mark | None:
    if location.column is None:
        return None
    start = location.column - 1 if number == first else _indent(line)
    if number == last:
        if location.end_column is not None and location.end_line is not None:
            end = location.end_column
        else:
            # Only the start is known: one caret under it.
            end = start + 1
    else:
        end = len(line)
    start = max(0, min(start, len(line)))
    end = max(start + 1, min(end, len(line) + 1))
    return _Mark(start, end)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _render_line(line: str, mark: _Mark | None) -> tuple[str, str]:
    """The line as shown (tabs as spaces, a window of a long one) and its caret line."""
    begin, end = 0, len(line)
    if len(line) > 2 * _WINDOW:
        anchor = mark.start if mark is not None else 0
        begin = max(0, anchor - _WINDOW // 2)
        stop = mark.end if mark is not None else anchor
        end = min(len(line), max(stop, anchor) + _WINDOW // 2)
    visible = line[begin:end]
    lead = "…" if begin > 0 else ""
    tail = "…" if end < len(line) else ""
    shown = lead + _printable(visible) + tail
    if mark is None:
        return shown, ""
    before = _width(lead) + _width(_printable(line[begin : mark.start]))
    under = max(1, _width(_printable(line[mark.start : min(mark.end, end)])))
    return shown, " " * before + "^" * under


def _printable(text: str) -> str:
    # A tab is one column in the file's count but several on a terminal: show it as one space,
    # and any other control character as the replacement mark, so the carets stay aligned.
    return "".join(
        " " if char == "\t" else "\ufffd" if unicodedata.category(char) == "Cc" else char
        for char in text
    )


def _width(text: str) -> int:
    total = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total
