"""JSON read strictly: whole, or the items of one array one at a time.

``json.loads`` keeps the last of two values under one key and reads ``NaN``; a file
exampleguard reads may hold neither. :func:`parse_json` refuses both, saying where the repeated
key is; :class:`JsonArrayStream` reads a large catalog's tools one at a time under the same
rules, and gives up (:class:`NotStreamable`) on anything the whole read would refuse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from typing import Any

from exampleguard._textindex import WHITESPACE, JsonLocator, KeyPath, scanstring

__all__ = [
    "ConstantError",
    "DuplicateKeyError",
    "JsonArrayStream",
    "NotStreamable",
    "constant_position",
    "parse_json",
]


class DuplicateKeyError(ValueError):
    def __init__(self, key: str, path: KeyPath | None) -> None:
        super().__init__(key)
        self.key = key
        self.path = path


class ConstantError(ValueError):
    def __init__(self, constant: str) -> None:
        super().__init__(constant)
        self.constant = constant


def _reject_constant(constant: str) -> Any:
    raise ConstantError(constant)


def parse_json(text: str) -> Any:
    # Duplicate keys would silently keep the last value: each object is checked as the parser
    # builds it (counting the keys of the text afterwards costs more than the parse), and only
    # a text that has one is searched for where it is.
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique)
    except _RepeatedKey:
        # A syntax error or a constant elsewhere in the text is reported first, as it was
        # before any key was looked at.
        json.loads(text, parse_constant=_reject_constant)
        key, path = JsonLocator(text).duplicate()
        raise DuplicateKeyError(key, path) from None


class NotStreamable(Exception):
    """The text cannot be read one item at a time; read it whole, which reports why."""


class JsonArrayStream:
    """The items of one array in a top-level JSON object, parsed one at a time.

    Iterating yields each item of the array under ``key`` exactly as ``json.loads`` would parse
    it, while the rest of the object collects in :attr:`head` — so a large catalog never exists
    as one tree of Python objects next to the models built from it. Only valid JSON is streamed:
    anything that ``parse_document`` would refuse (a syntax error, a duplicate key, ``NaN``, a
    huge integer, trailing text) raises :class:`NotStreamable` instead, and the caller reads the
    text the ordinary way, which reports the problem with its position.
    """

    def __init__(self, text: str, key: str) -> None:
        self.text = text
        self.key = key
        self.head: dict[str, Any] = {}
        # Each object is checked for a repeated key as the scanner builds it: counting keys in
        # the text afterwards costs more than the parse itself on a large catalog.
        decoder = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique)
        self._scan = decoder.scan_once  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[Any]:
        text = self.text
        position = self._space(0)
        self._expect(position, "{")
        position = self._space(position + 1)
        streamed = False
        if text.startswith("}", position):
            raise NotStreamable
        while True:
            self._expect(position, '"')
            try:
                name, position = scanstring(text, position + 1)
            except ValueError:
                raise NotStreamable from None
            position = self._space(position)
            self._expect(position, ":")
            position = self._space(position + 1)
            if name in self.head or (name == self.key and streamed):
                raise NotStreamable
            if name == self.key and text.startswith("[", position):
                streamed = True
                position = yield from self._items(position)
            else:
                self.head[name], position = self._value(position)
            position = self._space(position)
            if text.startswith(",", position):
                position = self._space(position + 1)
                continue
            self._expect(position, "}")
            break
        if not streamed or self._space(position + 1) != len(text):
            raise NotStreamable

    def _items(self, position: int) -> Generator[Any, None, int]:
        text = self.text
        position = self._space(position + 1)
        if text.startswith("]", position):
            return position + 1
        while True:
            item, position = self._value(position)
            yield item
            position = self._space(position)
            if text.startswith(",", position):
                position = self._space(position + 1)
                continue
            self._expect(position, "]")
            return position + 1

    def _value(self, position: int) -> tuple[Any, int]:
        try:
            value, end = self._scan(self.text, position)
        except (StopIteration, ValueError, RecursionError):
            # A repeated key raises ValueError from _unique, like a syntax error.
            raise NotStreamable from None
        return value, end

    def _expect(self, position: int, character: str) -> None:
        if not self.text.startswith(character, position):
            raise NotStreamable

    def _space(self, position: int) -> int:
        match = WHITESPACE.match(self.text, position)
        return match.end() if match else position


class _RepeatedKey(ValueError):
    """An object of the text has a key twice."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict, refusing a repeated key (which would drop a value)."""
    data = dict(pairs)
    if len(data) != len(pairs):
        raise _RepeatedKey("repeated key")
    return data


_CONSTANT_OUTSIDE_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def constant_position(text: str) -> int | None:
    # Strings are matched whole, so a constant found is never inside one.
    for match in _CONSTANT_OUTSIDE_STRINGS.finditer(text):
        if match.group(1):
            return match.start(1)
    return None
