"""The JSON renderer: a report (or any JSON data) as indented JSON text, written piece by piece.

The text is ``json.dumps(..., indent=2, ensure_ascii=False)`` of the same data as plain dicts and
lists, followed by a newline. A report is written one entry at a time — its envelope by hand, then
each example, diagnostic and dry run as the JSON of that entry alone, indented to its place — so
neither a second copy of the report (as dicts) nor its whole text ever exists.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
from collections.abc import Iterable, Iterator

from pydantic import BaseModel

from exampleguard._report.data import Report

__all__ = ["json_pieces", "render_json", "written_fields"]

_INDENT = "  "
_ENCODER = json.JSONEncoder(indent=len(_INDENT), ensure_ascii=False)
# Text joined into one piece: large enough to make writes few, small enough to hold nothing much.
_PIECE_CHARS = 1 << 16
# For data that is not a report: the encoder's chunks joined at a time, for the same reasons.
_CHUNKS_PER_PIECE = 8192


def render_json(value: object) -> str:
    """Render a report (or any JSON data, such as a SARIF log) as indented JSON text."""
    return "".join(json_pieces(value))


def json_pieces(value: object) -> Iterator[str]:
    """The text of :func:`render_json` in consecutive pieces of a few ten thousand characters.

    With an indent, ``json.dumps`` collects every one of the encoder's small chunks — several per
    value — before joining them, and for a report of 50,000 examples that list alone outweighs
    the report. Written out piece by piece, the text never exists whole either.
    """
    if isinstance(value, Report):
        yield from _joined(_report_text(value))
    else:
        chunks = _ENCODER.iterencode(value)
        while batch := list(itertools.islice(chunks, _CHUNKS_PER_PIECE)):
            yield "".join(batch)
    yield "\n"


def _joined(texts: Iterable[str]) -> Iterator[str]:
    held: list[str] = []
    size = 0
    for text in texts:
        held.append(text)
        size += len(text)
        if size >= _PIECE_CHARS:
            yield "".join(held)
            held, size = [], 0
    if held:
        yield "".join(held)


def _report_text(report: Report) -> Iterator[str]:
    # The layout json.dumps gives a dict of lists, one entry at a time.
    separator = "{\n" + _INDENT
    for name in written_fields(Report):
        value = getattr(report, name)
        yield f"{separator}{_ENCODER.encode(name)}: "
        separator = ",\n" + _INDENT
        if isinstance(value, tuple) and value:
            opening = "[\n" + _INDENT * 2
            for entry in value:
                yield opening + _entry_text(entry, depth=2)
                opening = ",\n" + _INDENT * 2
            yield "\n" + _INDENT + "]"
        else:
            yield _entry_text(value, depth=1)
    yield "\n}"


def _entry_text(value: object, *, depth: int) -> str:
    # A newline in JSON text is only ever layout (inside strings it is escaped), so the entry's
    # own layout is moved to its depth by indenting every line after the first.
    return _ENCODER.encode(_plain(value)).replace("\n", "\n" + _INDENT * depth)


def _plain(value: object) -> object:
    """``value`` as plain JSON data: entries as dicts of their written fields, tuples as lists."""
    names = _entry_fields(type(value))
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, BaseModel):
        return value.model_dump()
    return value


# Asked once per value written: a plain dict, filled as types are first met.
_ENTRY_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _entry_fields(value_type: type) -> tuple[str, ...] | None:
    try:
        return _ENTRY_FIELDS[value_type]
    except KeyError:
        found = written_fields(value_type) if dataclasses.is_dataclass(value_type) else None
        _ENTRY_FIELDS[value_type] = found
        return found


@functools.cache
def written_fields(entry_type: type) -> tuple[str, ...]:
    """The keys a report entry of ``entry_type`` (a dataclass) is written with, in order."""
    return tuple(
        item.name for item in dataclasses.fields(entry_type) if item.metadata.get("json", True)
    )
