"""A catalog file read into its models: whole, or a large one tool by tool.

Loading gives a :class:`LoadedCatalog`: the validated :class:`~exampleguard._catalog.Catalog`
plus the :class:`~exampleguard._documents.Document` it came from, so every later diagnostic can
point at the line and column of the tool or parameter it is about. Its examples become records
(:mod:`exampleguard._sources.catalog`) that locate themselves.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from exampleguard._catalog import CATALOG_FORMAT, Catalog, Tool
from exampleguard._documents import (
    SCHEMA_KEY,
    Document,
    check_format,
    load_document,
    parse_document,
    read_text,
    validate_model,
)
from exampleguard._jsonread import JsonArrayStream, NotStreamable
from exampleguard._model import Parameter

__all__ = ["LoadedCatalog", "load_catalog"]


@dataclass(frozen=True, slots=True)
class LoadedCatalog:
    """A validated catalog and the document it was read from.

    ``stated`` holds, tool by tool and parameter by parameter, the overlay-relevant keys the file
    writes explicitly (``type``, ``choices``, ...): an overlay that restates a default is still
    compared with the executable. The parsed data itself is not kept; positions come from the
    text.
    """

    catalog: Catalog
    document: Document
    stated: list[tuple[frozenset[str], ...]] = field(default_factory=list)

    def stated_keys(self, tool_index: int, position: int) -> frozenset[str]:
        """The overlay keys the parameter at ``position`` of a tool writes explicitly.

        A catalog built in code rather than read from a file states none.
        """
        try:
            return self.stated[tool_index][position]
        except IndexError:
            return frozenset()


def load_catalog(path: Path, display: str) -> LoadedCatalog:
    """Read, parse and validate the catalog at ``path``; raise ``SourceError`` if it is unusable."""
    if path.suffix.lower() != ".json":
        return _load_whole(load_document(path, display))
    text = read_text(path, display)
    try:
        return _load_streamed(Document(path, display, text, None, "json"))
    except (NotStreamable, ValidationError):
        # Something is wrong with the file: the ordinary reading finds it and says where.
        return _load_whole(parse_document(text, path, display, "json"))


_TOOL = TypeAdapter(Tool)
_PARAMETER = TypeAdapter(Parameter)


def _load_streamed(document: Document) -> LoadedCatalog:
    # A large catalog's parsed data outweighs the models built from it. Streamed, each tool's
    # data is validated and dropped before the next one is parsed, so the two never coexist.
    stream = JsonArrayStream(document.text, "tools")
    tools: list[Tool] = []
    stated = _StatedKeys()
    parameters = _SharedParameters()
    for data in stream:
        raw = data.get("parameters") if isinstance(data, dict) else None
        if isinstance(raw, list):
            data["parameters"] = parameters.records(raw)
        tools.append(_TOOL.validate_python(data))
        if isinstance(raw, list):
            data["parameters"] = raw
        stated.note(data)
    if stream.head.get("format") != CATALOG_FORMAT:
        raise NotStreamable
    head_data = {**stream.head, "tools": []}
    if not isinstance(head_data.pop(SCHEMA_KEY, ""), str):
        raise NotStreamable
    head = Catalog.model_validate(head_data)
    _unshare_groups(tools)
    return LoadedCatalog(head.model_copy(update={"tools": tools}), document, stated.per_tool)


def _load_whole(document: Document) -> LoadedCatalog:
    check_format(document, CATALOG_FORMAT)
    catalog = validate_model(Catalog, document, schema_key=True)
    stated = _StatedKeys()
    for tool in document.data.get("tools", []):
        stated.note(tool)
    # The raw data is as large as the models built from it; everything later reads the models,
    # and finds positions in the text.
    document.data = None
    return LoadedCatalog(catalog, document, stated.per_tool)


class _SharedParameters:
    """One validated record for each distinct parameter of a catalog, shared by its tools.

    The options of a program recur from command to command (``--format``, ``--verbose``,
    ``--json``): a large catalog written out in full states the same parameter thousands of
    times. Records are immutable, so the tools that state a parameter identically can hold one
    record, validated once. The key is the parameter's parsed data exactly (``repr`` tells
    ``1`` from ``1.0`` and ``true``), so only identical statements share.

    A record is never shared within one tool: the binder tells a command's parameters apart by
    identity. Between tools, :func:`_unshare_groups` keeps it to commands that can never meet
    on one command line.
    """

    def __init__(self) -> None:
        self._records: dict[str, Parameter] = {}
        self._strings: dict[str, str] = {}

    def records(self, parameters: list[Any]) -> list[Any]:
        """``parameters`` (raw data) as records; what is not an object stays raw data.

        Raises :class:`~pydantic.ValidationError` for an invalid parameter, like the tool's own
        validation would.
        """
        result: list[Any] = []
        taken: set[int] = set()
        for data in parameters:
            if not isinstance(data, dict):
                # The tool's validation rejects it, and the whole reading says where.
                result.append(data)
                continue
            key = repr(data)
            record = self._records.get(key)
            if record is None or id(record) in taken:
                _share_strings(data, self._strings)
                record = _PARAMETER.validate_python(data)
                self._records.setdefault(key, record)
            taken.add(id(record))
            result.append(record)
        return result


def _unshare_groups(tools: list[Tool]) -> None:
    """Give the commands that have subcommands records of their own.

    One command line can pass through a group and reach a command below it; were a record of the
    group's also one of that command's, the binder could not tell the two levels' occurrences
    apart. A command without subcommands (no other path starts with its own) is the last level
    of every command line that reaches it, so two of them never meet on one line.
    """
    prefixes = {
        tuple(path[:length])
        for tool in tools
        for path in (tool.command, *tool.aliases)
        for length in range(len(path))
    }
    for tool in tools:
        if tuple(tool.command) in prefixes:
            tool.parameters[:] = [copy.copy(parameter) for parameter in tool.parameters]


def _share_strings(parameter: dict[str, Any], shared: dict[str, str]) -> None:
    # Names, flags, types and choices recur across parameters that differ in some other key
    # (every command has a --format, with its own choices): one string object each.
    for key, value in parameter.items():
        if isinstance(value, str):
            parameter[key] = shared.setdefault(value, value)
        elif isinstance(value, list):
            parameter[key] = [
                shared.setdefault(item, item) if isinstance(item, str) else item for item in value
            ]


OVERLAY_KEYS = frozenset({"type", "choices", "multiple", "count", "nargs"})
"""The parameter keys whose explicit values an overlay must match in the executable."""


class _StatedKeys:
    """Collects, tool by tool, the overlay keys each parameter states explicitly."""

    def __init__(self) -> None:
        self.per_tool: list[tuple[frozenset[str], ...]] = []
        # Few distinct sets, and few distinct sequences of them, exist: each is kept once.
        self._sets: dict[frozenset[str], frozenset[str]] = {}
        self._sequences: dict[tuple[frozenset[str], ...], tuple[frozenset[str], ...]] = {}

    def note(self, tool: Any) -> None:
        """Record the stated keys of ``tool``'s parameters (raw, already validated data)."""
        sequence = tuple(
            self._sets.setdefault(keys, keys)
            for keys in (OVERLAY_KEYS.intersection(p) for p in tool.get("parameters", []))
        )
        self.per_tool.append(self._sequences.setdefault(sequence, sequence))
