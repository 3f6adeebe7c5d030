"""Reading JSON and TOML files into data that remembers where every value came from.

The standard ``json`` and ``tomllib`` parsers give no positions. Rather than a slower parser on
every run, a :class:`Document` keeps its text and has it indexed (:mod:`exampleguard._textindex`)
lazily, the first time a diagnostic asks where a key is. A clean run never pays for it. JSON is
read strictly (:mod:`exampleguard._jsonread`): no repeated key, no ``NaN``.

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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from exampleguard._codes import FILE_INVALID, FILE_UNREADABLE
from exampleguard._diagnostics import Diagnostic, Location
from exampleguard._jsonread import ConstantError, DuplicateKeyError, constant_position, parse_json
from exampleguard._textindex import JsonLocator, KeyPath, Positions, index_toml, raw_span

__all__ = [
    "MAX_FILE_BYTES",
    "SCHEMA_KEY",
    "Document",
    "KeyRegion",
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
class Document:
    """A parsed JSON or TOML file that can say where any of its values came from."""

    path: Path
    display: str
    text: str
    data: Any
    kind: Literal["json", "toml"]
    _positions: Positions | JsonLocator | None = None
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
        first, after = raw_span(self.text, start, offset, end, self.kind)
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

    def _index(self) -> Positions | JsonLocator:
        if self._positions is None:
            if self.kind == "json":
                self._positions = JsonLocator(self.text)
            else:
                try:
                    self._positions = index_toml(self.text)
                except (IndexError, ValueError, RecursionError):
                    # The text already parsed; an index failure costs precision, never the run.
                    self._positions = Positions()
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

    @property
    def shown_key(self) -> str:
        """The key path as people read it (``dryrun.fixtures``); empty for the top level."""
        return format_key(self.key)

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
        data = parse_json(text) if kind == "json" else tomllib.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError(
            _invalid(display, f"is not valid JSON: {error.msg}", error.lineno, error.colno)
        ) from None
    except DuplicateKeyError as error:
        document = Document(path, display, text, None, kind)
        raise SourceError(
            FILE_INVALID.diagnostic(
                message=f"{display} has the key {error.key!r} twice in one object",
                region=document.region(error.path) if error.path else None,
                location=None if error.path else Location(display),
            )
        ) from None
    except ConstantError as error:
        document = Document(path, display, text, None, kind)
        offset = constant_position(text)
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
    first_region, first_message = problems[0]
    message = f"{document.display}: {first_message}"
    if len(problems) > 1:
        others = "; ".join(text for _, text in problems[1:6])
        more = f" (and {len(problems) - 6} more)" if len(problems) > 6 else ""
        message += f"; also {others}{more}"
    raise SourceError(
        FILE_INVALID.diagnostic(
            message=message,
            hint=f"`exampleguard schema` prints the expected structure of {document.display}.",
            region=first_region,
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
                region=document.region((*key, SCHEMA_KEY), at_key=False),
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
                region=document.region(),
            )
        )
    value = data.get("format")
    if value == expected:
        return
    if value is None:
        message = f"{document.display}: missing required key 'format' (expected {expected!r})"
        region = document.region()
    else:
        message = f"{document.display}: format is {value!r}, expected {expected!r}"
        region = document.region(("format",), at_key=False)
    raise SourceError(
        FILE_INVALID.diagnostic(
            message=message,
            hint="Each exampleguard file names its format and version in its `format` key.",
            region=region,
        )
    )


def _describe(
    document: Document, key: KeyPath, payload: Any, error: Any, model: type[BaseModel]
) -> tuple[KeyRegion, str]:
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
        return document.region(full), f"unknown key {offending!r} in {container}{also}"
    if kind in ("missing", "missing_argument"):
        missing = error["loc"][-1]
        parent = full[:-1] if full and full[-1] == missing else full
        shown = format_key(parent) or "the top level"
        return document.region(parent), f"missing required key {missing!r} in {shown}"
    value = error.get("input")
    return document.region(full, at_key=False), f"{where}: {_reword(error['msg'], value)}"


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
