"""The real parser's verdict on one argv: the record the child sends back for each example.

For a live tree, the child process that imports the application also parses every example's
argv with the framework's own parser (:mod:`~exampleguard._adapters.judge_click`,
:mod:`~exampleguard._adapters.judge_argparse`) and answers with one :class:`ParseVerdict` per
argv. The record is plain data: it crosses the process boundary as JSON, names parameters by
their snapshot names (the adapter's, so there is one naming), and is keyed by the argv, so a
run can keep the verdicts with the tree they came from.
"""

from __future__ import annotations

import datetime
import enum
import io
import os
import pathlib
import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["APPLICATION_ERROR", "GivenValue", "ParseVerdict", "as_json_value", "raised"]

APPLICATION_ERROR = "ApplicationError"
"""The ``error`` of a verdict that is none: application code raised something other than the
framework's usage errors while the framework parsed (SPEC 4). The model judges the example."""

# How much of an exception's message a verdict keeps: its first line, this long at most.
_RAISED_LENGTH = 300


def raised(error: BaseException) -> str:
    """``error`` as a verdict names it: its class and the first line of its message.

    The text is the application's, from the child: it is kept short and on one line here, and
    neutralised like all the child's text where a diagnostic shows it.
    """
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > _RAISED_LENGTH:
        text = text[: _RAISED_LENGTH - 1] + "…"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


@dataclass(frozen=True, slots=True)
class GivenValue:
    """One parameter the argv gave, with the value the framework handed the program.

    ``level`` is the command path the parameter is declared at and ``name`` its snapshot name.
    ``bare`` is an optional-value option given without its value. ``value`` is the framework's
    value as JSON (tuples as lists, paths as strings); for ``count`` options the count, for
    argparse the values of the occurrences themselves, not what accumulated on a default.
    """

    level: tuple[str, ...]
    name: str
    value: Any
    bare: bool = False

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data."""
        record: dict[str, Any] = {"level": list(self.level), "name": self.name, "value": self.value}
        if self.bare:
            record["bare"] = True
        return record

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GivenValue:
        """The record from :meth:`to_json` data."""
        return cls(tuple(data["level"]), data["name"], data.get("value"), bool(data.get("bare")))


@dataclass(frozen=True, slots=True)
class ParseVerdict:
    """What the framework's own parser made of one argv (the words after the program).

    ``accepted`` is its verdict. A rejection carries the framework's ``error`` class name (for
    Click the exception class, for argparse ``ArgumentError``; ``NoArgsIsHelpError`` also for
    a Click that prints its help and exits without one; ``PromptRequired`` for an option that
    would prompt; ``ApplicationError`` where application code raised while it parsed, which
    is no verdict at all: see :attr:`decided`) and its ``message``, the parameter it is about
    (``parameter``, a snapshot name at ``level``) and the offending ``word`` where the
    framework names one. ``path`` is the command path resolved (primary names), as far as
    parsing got. ``eager`` says an eager
    option (``--help``, ``--version``) ended parsing. ``given`` lists what the program would
    receive, when the parse ran to its end.
    """

    accepted: bool
    path: tuple[str, ...] | None = None
    error: str | None = None
    message: str | None = None
    parameter: str | None = None
    level: tuple[str, ...] | None = None
    word: str | None = None
    eager: bool = False
    given: tuple[GivenValue, ...] = field(default=())
    constraint: str | None = None
    """For a constraint the framework checks (cloup's ``ConstraintViolated``), the code of
    the rule broken: ``require-one-of``, ``require-together``, ``mutually-exclusive`` or
    ``missing-required``."""

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data (only the fields that say something)."""
        record: dict[str, Any] = {"accepted": self.accepted}
        if self.path is not None:
            record["path"] = list(self.path)
        for key in ("error", "message", "parameter", "word", "constraint"):
            value = getattr(self, key)
            if value is not None:
                record[key] = value
        if self.level is not None:
            record["level"] = list(self.level)
        if self.eager:
            record["eager"] = True
        if self.given:
            record["given"] = [item.to_json() for item in self.given]
        return record

    @property
    def decided(self) -> bool:
        """Whether the framework reached a verdict: no application code raised while it parsed.

        An undecided record's ``message`` names the exception (class and message).
        """
        return self.error != APPLICATION_ERROR

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ParseVerdict:
        """The record from :meth:`to_json` data."""
        path = data.get("path")
        level = data.get("level")
        return cls(
            accepted=bool(data["accepted"]),
            path=tuple(path) if path is not None else None,
            error=data.get("error"),
            message=data.get("message"),
            parameter=data.get("parameter"),
            level=tuple(level) if level is not None else None,
            word=data.get("word"),
            eager=bool(data.get("eager")),
            given=tuple(GivenValue.from_json(item) for item in data.get("given", ())),
            constraint=data.get("constraint"),
        )


_PLAIN = frozenset({str, int, float, bool, type(None)})


def as_json_value(value: Any) -> Any:
    """A framework value as JSON: containers as lists, paths, dates, UUIDs, enums as text.

    An opened file stands for its name. A value JSON cannot hold becomes its ``repr``, so a
    verdict always crosses the process boundary.
    """
    if type(value) in _PLAIN:
        # Most values, by their exact type (an enum deriving from str or int is not one).
        return value
    if isinstance(value, enum.Enum):
        # Before the scalars: a str or int enum is an instance of both.
        return as_json_value(value.value)
    if value is None or isinstance(value, bool | int | float | str):
        # Infinities and NaN travel as Python's json writes and reads them.
        return value
    if isinstance(value, tuple | list):
        return [as_json_value(item) for item in value]
    if isinstance(value, pathlib.PurePath):
        return os.fspath(value)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, io.IOBase) or type(value).__name__.lstrip("_") == "LazyFile":
        name = getattr(value, "name", None)
        return name if isinstance(name, str) else repr(value)
    return repr(value)
