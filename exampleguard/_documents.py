"""Reading JSON and TOML files into data that remembers where every value came from.

The standard ``json`` and ``tomllib`` parsers give no positions. Rather than a slower parser on
every run, a :class:`Document` keeps its text and builds a position index lazily, in one linear
pass, the first time a diagnostic asks where a key is. A clean run never pays for it.

Every way a file can be unusable — missing, too large, not UTF-8, not JSON/TOML, nested beyond
reason — becomes a :class:`SourceError` carrying a diagnostic with the file, line and column.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import json
import re
import stat
import tomllib
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from exampleguard._codes import FILE_INVALID, FILE_UNREADABLE
from exampleguard._diagnostics import Diagnostic, Location

__all__ = [
    "MAX_FILE_BYTES",
    "SCHEMA_KEY",
    "Document",
    "JsonArrayStream",
    "KeyPath",
    "KeyRegion",
    "NotStreamable",
    "SourceError",
    "check_format",
    "describe_size",
    "format_key",
    "load_document",
    "parse_document",
    "read_text",
    "validate_model",
    "without_schema_key",
]

KeyPath = tuple[str | int, ...]
ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Largest file exampleguard reads; a larger one is reported, never loaded."""

_BOM = "\ufeff"
_TOML_ERROR_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)$")
_TOML_ERROR_EOF = re.compile(r"\(at end of document\)$")


class SourceError(Exception):
    """A file could not be used; ``diagnostic`` says which, where and why."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def format_key(path: Sequence[str | int]) -> str:
    """Render a key path the way people read it: ``tools[3].examples[1].command``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif text:
            text += f".{part}"
        else:
            text = part
    return text


@dataclass(slots=True)
class _Positions:
    """Offsets of values (and of the keys that name them) in a document's text."""

    values: dict[KeyPath, int] = field(default_factory=dict)
    keys: dict[KeyPath, int] = field(default_factory=dict)

    def value(self, path: KeyPath) -> int | None:
        """Offset of the value at ``path``."""
        return self.values.get(path)

    def key(self, path: KeyPath) -> int | None:
        """Offset of the key that names the value at ``path``."""
        return self.keys.get(path)


@dataclass(slots=True)
class Document:
    """A parsed JSON or TOML file that can say where any of its values came from."""

    path: Path
    display: str
    text: str
    data: Any
    kind: Literal["json", "toml"]
    _positions: _Positions | _JsonLocator | None = None
    _line_starts: list[int] | None = None

    def position(self, key: Sequence[str | int], *, at_key: bool = True) -> tuple[int, int] | None:
        """Return the 1-based ``(line, column)`` of the value at ``key``.

        With ``at_key`` (the default) the position of the key that names the value is preferred,
        which is where a person looks for an unknown or mistyped key. A path that is not in the
        file falls back to its nearest ancestor that is.
        """
        path = tuple(key)
        while True:
            offset = self._find(path, at_key=at_key)
            if offset is not None:
                return self.line_column(offset)
            if not path:
                return None
            path = path[:-1]

    def location(self, key: Sequence[str | int] = (), *, at_key: bool = True) -> Location:
        """Return the :class:`Location` of ``key`` in this document."""
        where = self.position(key, at_key=at_key)
        line, column = where if where is not None else (None, None)
        return Location(self.display, line, column, format_key(key) or None)

    def region(
        self,
        key: Sequence[str | int] = (),
        *,
        at_key: bool = True,
        otherwise: Sequence[str | int] | None = None,
    ) -> KeyRegion:
        """The region of ``key`` (of ``otherwise`` where the file has no place for ``key``).

        Left for the report builder to place (see :meth:`location`).
        """
        return KeyRegion(self, tuple(key), at_key, None if otherwise is None else tuple(otherwise))

    def string_location(
        self, key: Sequence[str | int], offset: int, end: int | None = None
    ) -> Location:
        """Return the location of character ``offset`` inside the string value at ``key``.

        Escapes in the file (an escaped quote, a ``u`` escape) are accounted for, so the
        column points at the character a person sees in their editor. With ``end`` (the
        exclusive end of a stretch of characters, past ``offset``), the location also closes at
        the last of them, mapped through the file the same way: a stretch that holds an escape
        covers all of the escape's text.
        """
        start = self._find(tuple(key), at_key=False)
        if start is None:
            return self.location(key)
        first, after = _raw_span(self.text, start, offset, end, self.kind)
        line, column = self.line_column(first)
        end_line = end_column = None
        if after is not None and after > first:
            end_line, end_column = self.line_column(after - 1)
        return Location(
            self.display,
            line,
            column,
            format_key(key) or None,
            end_line=end_line,
            end_column=end_column,
        )

    def line_column(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of character ``offset`` of the text."""
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in re.finditer("\n", self.text))]
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def _find(self, path: KeyPath, *, at_key: bool) -> int | None:
        positions = self._index()
        try:
            offset = positions.key(path) if at_key else None
            return offset if offset is not None else positions.value(path)
        except (RecursionError, ValueError, IndexError):
            # Nested too deep for the scanner, or not where the data says: no position.
            return None

    def _index(self) -> _Positions | _JsonLocator:
        if self._positions is None:
            if self.kind == "json":
                self._positions = _JsonLocator(self.text)
            else:
                try:
                    self._positions = _index_toml(self.text)
                except (IndexError, ValueError, RecursionError):
                    # The text already parsed; an index failure costs precision, never the run.
                    self._positions = _Positions()
        return self._positions


@dataclass(frozen=True, slots=True, eq=False)
class KeyRegion:
    """A :class:`~exampleguard._diagnostics.Region`: the value at ``key`` of a parsed document.

    Finding a key's place takes a scan of the file's text: a stage after loading names the key,
    and the report builder has it placed (:meth:`located`), once, when the diagnostic is shown.
    """

    document: Document
    key: KeyPath
    at_key: bool = True
    otherwise: KeyPath | None = None
    """The key placed instead where the file has no place for ``key``."""

    @property
    def file(self) -> str:
        """The document's file, as shown to people."""
        return self.document.display

    def located(self) -> Location:
        """The value's place in lines and columns (see :meth:`Document.location`)."""
        key = self.key
        if self.otherwise is not None and self.document.position(key) is None:
            key = self.otherwise
        return self.document.location(key, at_key=self.at_key)


def load_document(path: Path, display: str, *, max_bytes: int = MAX_FILE_BYTES) -> Document:
    """Read and parse ``path`` as JSON or TOML (by suffix; TOML unless it ends in ``.json``).

    Raises :class:`SourceError` for a file that is missing, not a regular file, larger than
    ``max_bytes``, not UTF-8, or not valid JSON/TOML.
    """
    text = read_text(path, display, max_bytes=max_bytes)
    kind: Literal["json", "toml"] = "json" if path.suffix.lower() == ".json" else "toml"
    return parse_document(text, path, display, kind)


def describe_size(size: int) -> str:
    """A byte count as people write limits: ``32 MiB``, or ``512 B`` below a mebibyte."""
    mebibyte = 1024 * 1024
    return f"{size // mebibyte} MiB" if size >= mebibyte else f"{size} B"


def read_text(path: Path, display: str, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read ``path`` as UTF-8 text within ``max_bytes``, or raise :class:`SourceError`."""
    try:
        # Checked before opening: opening a FIFO would wait for a writer forever.
        if not stat.S_ISREG(path.stat().st_mode):
            problem = "is a directory, not a file" if path.is_dir() else "is not a regular file"
            raise SourceError(_unreadable(display, problem))
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise SourceError(_unreadable(display, "does not exist")) from None
    except IsADirectoryError:
        raise SourceError(_unreadable(display, "is a directory, not a file")) from None
    except OSError as error:
        raise SourceError(_unreadable(display, f"cannot be read: {error.strerror}")) from None
    if len(raw) > max_bytes:
        raise SourceError(
            _unreadable(display, f"is larger than the {describe_size(max_bytes)} limit")
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        before = raw[: error.start].decode("utf-8", errors="replace")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        raise SourceError(
            FILE_UNREADABLE.diagnostic(
                message=f"{display} is not UTF-8 text (byte 0x{raw[error.start]:02x} at byte "
                f"offset {error.start})",
                hint="Save the file as UTF-8.",
                location=Location(display, line, column),
            )
        ) from None
    return text.removeprefix(_BOM)


def parse_document(text: str, path: Path, display: str, kind: Literal["json", "toml"]) -> Document:
    """Parse ``text`` (already read from ``path``) as ``kind``, or raise :class:`SourceError`."""
    try:
        data = _parse_json(text) if kind == "json" else tomllib.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError(
            _invalid(display, f"is not valid JSON: {error.msg}", error.lineno, error.colno)
        ) from None
    except _DuplicateKeyError as error:
        document = Document(path, display, text, None, kind)
        where = document.position(error.path) if error.path else None
        line, column = where if where is not None else (None, None)
        raise SourceError(
            _invalid(display, f"has the key {error.key!r} twice in one object", line, column)
        ) from None
    except _ConstantError as error:
        document = Document(path, display, text, None, kind)
        offset = _constant_position(text)
        line, column = document.line_column(offset) if offset is not None else (None, None)
        raise SourceError(
            _invalid(
                display, f"is not valid JSON: {error.constant} is not a JSON value", line, column
            )
        ) from None
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        line = column = None
        if match := _TOML_ERROR_POSITION.search(message):
            line, column = int(match[1]), int(match[2])
            message = message[: match.start()].rstrip()
        elif match := _TOML_ERROR_EOF.search(message):
            line = text.count("\n") + 1
            message = message[: match.start()].rstrip() + " at the end of the file"
        raise SourceError(
            _invalid(display, f"is not valid TOML: {message}", line, column)
        ) from None
    except RecursionError:
        raise SourceError(_invalid(display, "is nested too deeply to read")) from None
    except ValueError as error:
        # Python refuses to convert integers of more than 4300 digits (CVE-2020-10735).
        raise SourceError(_invalid(display, f"has a value that cannot be read: {error}")) from None
    return Document(path, display, text, data, kind)


SCHEMA_KEY = "$schema"
"""The key an editor reads for a file's JSON Schema; accepted at the top of every JSON file
exampleguard reads (catalog, tree snapshot, counts, report), and otherwise ignored."""


def validate_model(
    model: type[ModelT],
    document: Document,
    *,
    key: KeyPath = (),
    data: Any = None,
    schema_key: bool = False,
) -> ModelT:
    """Validate ``document``'s data (or ``data`` found at ``key`` in it) against ``model``.

    With ``schema_key``, a top-level :data:`SCHEMA_KEY` (a string: where an editor finds the
    file's schema) is accepted and set aside: it says nothing about the file's content.

    Raises :class:`SourceError` whose diagnostic names the first offending key path with its line
    and column; the rest of the errors are listed in the message, so one run shows them all.
    """
    payload = document.data if data is None else data
    if schema_key:
        payload = without_schema_key(payload, document, key)
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        problems = [_describe(document, key, payload, item, model) for item in error.errors()]
    first_location, first_message = problems[0]
    message = f"{document.display}: {first_message}"
    if len(problems) > 1:
        others = "; ".join(text for _, text in problems[1:6])
        more = f" (and {len(problems) - 6} more)" if len(problems) > 6 else ""
        message += f"; also {others}{more}"
    raise SourceError(
        FILE_INVALID.diagnostic(
            message=message,
            hint=f"`exampleguard schema` prints the expected structure of {document.display}.",
            location=first_location,
        )
    )


def without_schema_key(payload: Any, document: Document, key: KeyPath = ()) -> Any:
    """``payload`` without its top-level :data:`SCHEMA_KEY`, which must be a string.

    Raises :class:`SourceError` for a ``$schema`` that is not a string.
    """
    if not isinstance(payload, dict) or SCHEMA_KEY not in payload:
        return payload
    value = payload[SCHEMA_KEY]
    if not isinstance(value, str):
        raise SourceError(
            FILE_INVALID.diagnostic(
                message=f"{document.display}: {SCHEMA_KEY} must be a string (the URL or path "
                f"of the file's JSON Schema), got {_preview(value)} ({_json_type(value)})",
                hint="`exampleguard schema` prints the schema; point `$schema` at a copy of it.",
                location=document.location((*key, SCHEMA_KEY), at_key=False),
            )
        )
    return {name: item for name, item in payload.items() if name != SCHEMA_KEY}


def check_format(document: Document, expected: str) -> None:
    """Fail early, with one clear message, when a file is not of the ``expected`` format.

    A wrong format usually means a different kind of file or version; reporting every key that
    then fails to validate would bury the one message that matters.
    """
    data = document.data
    if not isinstance(data, dict):
        found = "an array" if isinstance(data, list) else "not an object"
        raise SourceError(
            FILE_INVALID.diagnostic(
                message=f"{document.display}: the top level must be an object, found {found}",
                location=document.location(()),
            )
        )
    value = data.get("format")
    if value == expected:
        return
    if value is None:
        message = f"{document.display}: missing required key 'format' (expected {expected!r})"
        location = document.location(())
    else:
        message = f"{document.display}: format is {value!r}, expected {expected!r}"
        location = document.location(("format",), at_key=False)
    raise SourceError(
        FILE_INVALID.diagnostic(
            message=message,
            hint="Each exampleguard file names its format and version in its `format` key.",
            location=location,
        )
    )


def _describe(
    document: Document, key: KeyPath, payload: Any, error: Any, model: type[BaseModel]
) -> tuple[Location, str]:
    loc = _existing_path(payload, tuple(error["loc"]))
    kind = error["type"]
    full = key + loc
    where = format_key(full) or "the top level"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        offending = error["loc"][-1]
        container = format_key(full[:-1]) or "the top level"
        known = _known_keys(model, loc[:-1])
        guess = _closest_key(str(offending), known)
        also = f" (did you mean {guess!r}?)" if guess is not None else ""
        return document.location(full), f"unknown key {offending!r} in {container}{also}"
    if kind in ("missing", "missing_argument"):
        missing = error["loc"][-1]
        parent = full[:-1] if full and full[-1] == missing else full
        shown = format_key(parent) or "the top level"
        return document.location(parent), f"missing required key {missing!r} in {shown}"
    value = error.get("input")
    return document.location(full, at_key=False), f"{where}: {_reword(error['msg'], value)}"


def _known_keys(model: type[BaseModel], path: KeyPath) -> list[str]:
    """The keys the object at ``path`` of a ``model`` document may have, read from its schema.

    The JSON Schema is the one description of every nested object (lists, tables of tables,
    unions); an object it does not describe has no known keys.
    """
    schema = _schema_of(model)
    definitions = schema.get("$defs", {})
    node: Any = schema
    for part in path:
        node = _object_schema(node, definitions, part)
        if node is None:
            return []
    node = _resolved(node, definitions)
    properties = node.get("properties") if isinstance(node, dict) else None
    return list(properties) if isinstance(properties, dict) else []


@functools.cache
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(mode="validation")


def _resolved(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with a ``$ref`` followed, and of a union the first member that is an object."""
    for _ in range(32):
        if not isinstance(node, dict):
            return None
        reference = node.get("$ref")
        if isinstance(reference, str):
            node = definitions.get(reference.rsplit("/", 1)[-1])
            continue
        members = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
        if isinstance(members, list) and "properties" not in node:
            objects = [_resolved(member, definitions) for member in members]
            node = next((o for o in objects if isinstance(o, dict) and "properties" in o), None)
            continue
        return node
    return None


def _object_schema(node: Any, definitions: dict[str, Any], part: str | int) -> Any:
    """The schema of ``part`` (a key or an index) inside the value ``node`` describes."""
    node = _resolved(node, definitions)
    if not isinstance(node, dict):
        return None
    if isinstance(part, int):
        return node.get("items")
    properties = node.get("properties") or {}
    if part in properties:
        return properties[part]
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


_KEY_RIVALS = 1


def _closest_key(key: str, known: Sequence[str]) -> str | None:
    """The one known key ``key`` is the start of, or else the one closest to it (difflib)."""
    if not known:
        return None
    started = [name for name in known if len(name) > len(key) and name.startswith(key)]
    if len(started) == _KEY_RIVALS:
        return started[0]
    # `tree-timeout` for `tree_timeout`, `Catalog` for `catalog`: the spelling of one key.
    folded = {name.replace("-", "_").casefold(): name for name in known}
    same = folded.get(key.replace("-", "_").casefold())
    if same is not None:
        return same
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return close[0] if close else None


def _reword(message: str, value: Any) -> str:
    return f"{message[:1].lower()}{message[1:]}, got {_preview(value)} ({_json_type(value)})"


def _preview(value: Any, width: int = 60) -> str:
    # Encoded piece by piece and only as far as shown: the value may be a whole catalog's
    # worth of data, or nested deeper than encoding it whole could recurse.
    shown = ""
    try:
        for chunk in _PREVIEW_ENCODER.iterencode(value):
            shown += chunk
            if len(shown) > width:
                break
    except RecursionError:
        shown += "..."
    return shown if len(shown) <= width else shown[: width - 3] + "..."


_PREVIEW_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _existing_path(data: Any, loc: KeyPath) -> KeyPath:
    """Trim a pydantic error location to the part that names real keys in ``data``.

    Union members and validator names appear in pydantic locations (``nargs.int``); they are not
    keys of the file and must not be shown as such.
    """
    kept: list[str | int] = []
    node = data
    for part in loc:
        if _has(node, part):
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and part not in node:
            kept.append(part)
            break
        else:
            break
        kept.append(part)
    return tuple(kept)


def _has(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return isinstance(part, str) and part in node
    if isinstance(node, list):
        return isinstance(part, int) and 0 <= part < len(node)
    return False


def _unreadable(display: str, reason: str) -> Diagnostic:
    return FILE_UNREADABLE.diagnostic(
        message=f"{display} {reason}",
        location=Location(display),
    )


def _invalid(
    display: str, reason: str, line: int | None = None, column: int | None = None
) -> Diagnostic:
    return FILE_INVALID.diagnostic(
        message=f"{display} {reason}",
        location=Location(display, line, column),
    )


# -- JSON ---------------------------------------------------------------------------------------


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str, path: KeyPath | None) -> None:
        super().__init__(key)
        self.key = key
        self.path = path


class _ConstantError(ValueError):
    def __init__(self, constant: str) -> None:
        super().__init__(constant)
        self.constant = constant


def _reject_constant(constant: str) -> Any:
    raise _ConstantError(constant)


def _parse_json(text: str) -> Any:
    # Duplicate keys would silently keep the last value: each object is checked as the parser
    # builds it (counting the keys of the text afterwards costs more than the parse), and only
    # a text that has one is searched for where it is.
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique)
    except _RepeatedKey:
        # A syntax error or a constant elsewhere in the text is reported first, as it was
        # before any key was looked at.
        json.loads(text, parse_constant=_reject_constant)
        key, path = _JsonLocator(text).duplicate()
        raise _DuplicateKeyError(key, path) from None


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
                name, position = _scanstring(text, position + 1)
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
        match = _WHITESPACE.match(self.text, position)
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


def _constant_position(text: str) -> int | None:
    # Strings are matched whole, so a constant found is never inside one.
    for match in _CONSTANT_OUTSIDE_STRINGS.finditer(text):
        if match.group(1):
            return match.start(1)
    return None


_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _JsonLocator:
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
                name, position = _scanstring(text, position + 1)
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
        match = _WHITESPACE.match(self.text, position)
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


def _scanstring(text: str, position: int) -> tuple[str, int]:
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
        self.positions = _Positions()
        self.array_lengths: dict[KeyPath, int] = {}

    def scan(self) -> _Positions:
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


def _index_toml(text: str) -> _Positions:
    return _TomlScanner(text).scan()


# -- offsets inside string literals -------------------------------------------------------------


def _raw_span(
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
