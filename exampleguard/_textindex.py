"""Where each value of a JSON or TOML text is: offsets of values and of the keys naming them.

The standard ``json`` and ``tomllib`` parsers give no positions. A :class:`JsonLocator` finds a
JSON value's offset lazily, one container at a time; :func:`index_toml` walks a TOML text that
``tomllib`` accepted once, recording every key and value; :func:`raw_span` maps characters of a
decoded string back to the escapes that spell them. :mod:`exampleguard._documents` asks them only
when a diagnostic needs a place.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "WHITESPACE",
    "JsonLocator",
    "KeyPath",
    "Positions",
    "index_toml",
    "raw_span",
    "scanstring",
]

KeyPath = tuple[str | int, ...]
"""Where a value is in a document's data: object keys and array indexes, outermost first."""

WHITESPACE = re.compile(r"[ \t\n\r]*")
"""JSON's insignificant whitespace, matched at a position."""


@dataclass(slots=True)
class Positions:
    """Offsets of values (and of the keys that name them) in a document's text."""

    values: dict[KeyPath, int] = field(default_factory=dict)
    keys: dict[KeyPath, int] = field(default_factory=dict)

    def value(self, path: KeyPath) -> int | None:
        """Offset of the value at ``path``."""
        return self.values.get(path)

    def key(self, path: KeyPath) -> int | None:
        """Offset of the key that names the value at ``path``."""
        return self.keys.get(path)


class JsonLocator:
    """Offsets of JSON values and keys, found lazily, one container at a time.

    Asking for ``tools[3].examples[1].command`` indexes the top-level object, the ``tools``
    array, that one tool and its ``examples`` — and nothing else. Sibling values are skipped with
    the C scanner of the ``json`` module, so even a very large catalog is located in
    milliseconds, and only when a diagnostic needs a position.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
        self._containers: dict[KeyPath, dict[str | int, tuple[int | None, int]]] = {}
        self._root = self._skip_space(0)

    def value(self, path: KeyPath) -> int | None:
        """Offset of the value at ``path``."""
        found = self._find(path)
        return found[1] if found else None

    def key(self, path: KeyPath) -> int | None:
        """Offset of the key that names the value at ``path`` (``None`` for array items)."""
        found = self._find(path)
        return found[0] if found else None

    def duplicate(self) -> tuple[str, KeyPath | None]:
        """The first key written twice in one object, and its path (for the error message)."""
        pending: list[KeyPath] = [()]
        while pending:
            path = pending.pop(0)
            start = self.value(path) if path else self._root
            if start is None or self.text[start : start + 1] not in ("{", "["):
                continue
            repeated = self._children(path, start, report_duplicate=True)
            if repeated is not None:
                return repeated
            pending.extend((*path, child) for child in self._containers[path])
        return "?", None

    def _find(self, path: KeyPath) -> tuple[int | None, int] | None:
        found: tuple[int | None, int] = (None, self._root)
        for depth, part in enumerate(path):
            container = path[:depth]
            children = self._containers.get(container)
            if children is None:
                start = found[1]
                if self.text[start : start + 1] not in ("{", "["):
                    return None
                self._children(container, start)
                children = self._containers[container]
            child = children.get(part)
            if child is None:
                return None
            found = child
        return found

    def _children(
        self, path: KeyPath, start: int, *, report_duplicate: bool = False
    ) -> tuple[str, KeyPath] | None:
        text = self.text
        children: dict[str | int, tuple[int | None, int]] = {}
        self._containers[path] = children
        is_object = text[start] == "{"
        position = self._skip_space(start + 1)
        index = 0
        while position < len(text) and text[position] not in "}]":
            key_at: int | None = None
            name: str | int = index
            if is_object:
                key_at = position
                name, position = scanstring(text, position + 1)
                position = self._skip_space(self._skip_space(position) + 1)  # past the colon
                if report_duplicate and name in children:
                    return str(name), (*path, name)
            value_at = position
            position = self._skip_value(position)
            children.setdefault(name, (key_at, value_at))
            index += 1
            position = self._skip_space(position)
            if text[position : position + 1] == ",":
                position = self._skip_space(position + 1)
        return None

    def _skip_space(self, position: int) -> int:
        match = WHITESPACE.match(self.text, position)
        return match.end() if match else position

    def _skip_value(self, position: int) -> int:
        """The end of the value at ``position``.

        An array is stepped over one item at a time: scanning it whole would build, for the
        ``tools`` array of a large catalog, the whole tree of Python objects that loading took
        care never to hold at once. Each item, and any other value, is skipped by the C scanner.
        """
        text = self.text
        if not text.startswith("[", position):
            _, end = self._scan(text, position)
            return int(end)
        position = self._skip_space(position + 1)
        while position < len(text) and text[position] != "]":
            _, position = self._scan(text, position)
            position = self._skip_space(position)
            if text.startswith(",", position):
                position = self._skip_space(position + 1)
        return position + 1


def scanstring(text: str, position: int) -> tuple[str, int]:
    # json's C string scanner: decodes the string that starts after the opening quote.
    value, end = json.decoder.scanstring(text, position)  # type: ignore[attr-defined]
    return str(value), int(end)


# -- TOML ---------------------------------------------------------------------------------------

_TOML_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_WS = re.compile(r"[ \t]*")
_TOML_WS_NL = re.compile(r"(?:[ \t\r\n]|#[^\n]*)*")
_TOML_SCALAR = re.compile(r"[^\s,\]}#]+(?:[ ](?=\d)[^\s,\]}#]+)?")


class _TomlScanner:
    """A position-recording walk over TOML text that ``tomllib`` has already accepted.

    It follows tables, arrays of tables, dotted keys, inline tables and arrays, and every string
    form, so that values at any depth get their offset. It trusts the text to be valid TOML.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.positions = Positions()
        self.array_lengths: dict[KeyPath, int] = {}

    def scan(self) -> Positions:
        table: KeyPath = ()
        text = self.text
        while self.pos < len(text):
            self._skip(_TOML_WS_NL)
            if self.pos >= len(text):
                break
            if text.startswith("[[", self.pos):
                start = self.pos
                self.pos += 2
                names = self._key()
                self._expect("]]")
                parent = self._resolve(names[:-1])
                array = (*parent, names[-1])
                index = self.array_lengths.get(array, 0)
                self.array_lengths[array] = index + 1
                table = (*array, index)
                self.positions.keys.setdefault(array, start)
                self.positions.values.setdefault(table, start)
                self.positions.keys.setdefault(table, start)
            elif text[self.pos] == "[":
                start = self.pos
                self.pos += 1
                names = self._key()
                self._expect("]")
                table = self._resolve(names)
                self.positions.values.setdefault(table, start)
                self.positions.keys.setdefault(table, start)
            else:
                key_start = self.pos
                names = self._key()
                self._skip(_TOML_WS)
                self._expect("=")
                self._skip(_TOML_WS)
                path = (*table, *names)
                self.positions.keys.setdefault(path, key_start)
                self._value(path)
        return self.positions

    def _resolve(self, names: Sequence[str]) -> KeyPath:
        # A name that is an array of tables refers to its most recent element.
        path: KeyPath = ()
        for name in names:
            path = (*path, name)
            count = self.array_lengths.get(path)
            if count:
                path = (*path, count - 1)
        return path

    def _skip(self, pattern: re.Pattern[str]) -> None:
        match = pattern.match(self.text, self.pos)
        if match:
            self.pos = match.end()

    def _expect(self, literal: str) -> None:
        self._skip(_TOML_WS)
        if not self.text.startswith(literal, self.pos):
            raise ValueError(f"expected {literal!r} at {self.pos}")
        self.pos += len(literal)

    def _key(self) -> list[str]:
        names: list[str] = []
        while True:
            self._skip(_TOML_WS)
            char = self.text[self.pos]
            if char in "\"'":
                names.append(self._string())
            else:
                match = _TOML_BARE_KEY.match(self.text, self.pos)
                if match is None:
                    raise ValueError(f"expected a key at {self.pos}")
                names.append(match.group())
                self.pos = match.end()
            self._skip(_TOML_WS)
            if self.pos < len(self.text) and self.text[self.pos] == ".":
                self.pos += 1
                continue
            return names

    def _value(self, path: KeyPath) -> None:
        text = self.text
        self.positions.values.setdefault(path, self.pos)
        char = text[self.pos]
        if char in "\"'":
            self._string()
        elif char == "[":
            self.pos += 1
            index = 0
            while True:
                self._skip(_TOML_WS_NL)
                if text[self.pos] == "]":
                    self.pos += 1
                    return
                self._value((*path, index))
                index += 1
                self._skip(_TOML_WS_NL)
                if text[self.pos] == ",":
                    self.pos += 1
        elif char == "{":
            self.pos += 1
            while True:
                self._skip(_TOML_WS)
                if text[self.pos] == "}":
                    self.pos += 1
                    return
                key_start = self.pos
                names = self._key()
                self._expect("=")
                self._skip(_TOML_WS)
                inner = (*path, *names)
                self.positions.keys.setdefault(inner, key_start)
                self._value(inner)
                self._skip(_TOML_WS)
                if text[self.pos] == ",":
                    self.pos += 1
        else:
            match = _TOML_SCALAR.match(text, self.pos)
            if match is None:
                raise ValueError(f"expected a value at {self.pos}")
            self.pos = match.end()

    def _string(self) -> str:
        text = self.text
        for quote in ('"""', "'''"):
            if text.startswith(quote, self.pos):
                end = text.find(quote, self.pos + 3)
                while quote == '"""' and end != -1 and _escaped(text, end):
                    end = text.find(quote, end + 1)
                if end == -1:
                    raise ValueError("unterminated string")
                # A closing delimiter may be followed by up to two more quote characters.
                while text.startswith(quote[0], end + 3):
                    end += 1
                value = text[self.pos : end + 3]
                self.pos = end + 3
                return value
        quote = text[self.pos]
        end = self.pos + 1
        while True:
            end = text.index(quote, end)
            if quote == "'" or not _escaped(text, end):
                break
            end += 1
        raw = text[self.pos : end + 1]
        self.pos = end + 1
        if quote == "'":
            return raw[1:-1]
        return tomllib.loads(f"k = {raw}")["k"]  # type: ignore[no-any-return]


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes - 1 >= 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def index_toml(text: str) -> Positions:
    return _TomlScanner(text).scan()


# -- offsets inside string literals -------------------------------------------------------------


def raw_span(
    text: str, start: int, offset: int, end: int | None, kind: Literal["json", "toml"]
) -> tuple[int, int | None]:
    """Map characters ``[offset, end)`` of the string literal at ``start`` to text offsets.

    Returns where the character at ``offset`` starts in the text and, with ``end``, where the
    raw text of the character before ``end`` ends (exclusive).
    """
    body = _string_body(text, start, kind)
    if body is None:
        return start, None
    position, literal = body
    first = _advance(text, position, offset, literal=literal)
    if end is None or end <= offset:
        return first, None
    last = _advance(text, first, end - 1 - offset, literal=literal)
    return first, _next_raw_char(text, last, literal=literal) if last < len(text) else last


def _string_body(text: str, start: int, kind: Literal["json", "toml"]) -> tuple[int, bool] | None:
    """Where the characters of the string literal at ``start`` begin, and whether it is literal.

    ``None`` when no string literal starts there.
    """
    if start >= len(text):
        return None
    opener = text[start]
    if kind == "toml" and text.startswith(("'''", '"""'), start):
        position = start + 3
        # A newline right after the opening delimiter is not part of the value.
        if text.startswith("\r\n", position):
            position += 2
        elif text.startswith("\n", position):
            position += 1
    elif opener in "\"'":
        position = start + 1
    else:
        return None
    return position, opener == "'"


def _advance(text: str, position: int, count: int, *, literal: bool) -> int:
    """Step over ``count`` decoded characters from ``position``; where the next one starts."""
    while count > 0 and position < len(text):
        position = _next_raw_char(text, position, literal=literal)
        count -= 1
    if not literal:
        # A line-ending backslash yields no character: the character at this offset is the
        # first one after it (on the next line).
        match = _LINE_ENDING_BACKSLASH.match(text, position)
        if match:
            position = match.end()
    return position


_LINE_ENDING_BACKSLASH = re.compile(r"\\[ \t]*\r?\n[ \t\r\n]*")
_HIGH_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _next_raw_char(text: str, position: int, *, literal: bool) -> int:
    """Return where the raw text of the next decoded character after ``position`` ends."""
    if literal or text[position] != "\\":
        return position + 1
    escape = text[position + 1 : position + 2]
    if escape == "u":
        # JSON spells characters outside the BMP as a surrogate pair: two escapes, one character.
        return position + (12 if _HIGH_SURROGATE_ESCAPE.match(text, position) else 6)
    if escape == "U":
        return position + 10
    if escape in ("\r", "\n", " ", "\t"):
        # A line-ending backslash in a TOML multi-line string swallows the following blanks and
        # yields no character; skip it and count the character after it.
        match = _LINE_ENDING_BACKSLASH.match(text, position)
        end = match.end() if match else position + 2
        return _next_raw_char(text, end, literal=literal) if end < len(text) else end
    return position + 2
