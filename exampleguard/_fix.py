"""Fixes: the edits to the catalog's text that an evaluation's diagnostics make unambiguous.

A stage after the diagnostics: it reads the evaluation (each example's record, which locates
its words in the file, and its diagnostics) and returns edits of the catalog file's raw text.
It never writes; ``validate --fix`` does, atomically, and ``--diff`` shows the edits instead.

A diagnostic is fixed only when its replacement is certain:

- ``unknown-flag`` or ``unknown-command`` whose did-you-mean has exactly one candidate (the
  diagnostic's ``suggestion``; the binder sets it only then), the located text being exactly the
  word it replaces;
- ``bad-choice`` whose value is one of the choices in another case;
- ``counts-drift`` when it is the only defect left (the counts are rewritten, as ``counts
  --write`` would).

Anything else is left alone, and a fixable code that cannot be fixed safely (a quoted word, a
replacement the shell would read differently, two fixes for one word) is refused with a reason.
Edits replace only the characters of the fixed word, so every other byte of the file — its
formatting, its key order, its escapes — stays as it was; the replacement is escaped the way
the string it lands in needs, and the edited text is parsed again and must hold exactly the
expected examples before anything is written.
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from exampleguard._codes import BAD_CHOICE, COUNTS_DRIFT, UNKNOWN_COMMAND, UNKNOWN_FLAG
from exampleguard._diagnostics import Diagnostic
from exampleguard._sources.catalog import CatalogOrigin

if TYPE_CHECKING:
    from exampleguard._documents import Document
    from exampleguard._pipeline import Evaluation, ExampleResult

__all__ = ["FIXABLE", "Edit", "FixPlan", "Refusal", "plan_fixes"]

FIXABLE = frozenset({UNKNOWN_FLAG.name, UNKNOWN_COMMAND.name, BAD_CHOICE.name})
"""The codes of the example words ``--fix`` can replace."""

_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
"""A word the shell reads as itself: no quotes, escapes, expansions or spaces."""


@dataclass(frozen=True, slots=True)
class Edit:
    """One replacement in the catalog's text: ``text[start:end]`` becomes ``new``.

    ``old`` and ``replacement`` are the word as the example reads, before and after; ``raw_old``
    and ``new`` are the same as written in the file (escapes included).
    """

    start: int
    end: int
    raw_old: str
    new: str
    old: str
    replacement: str
    code: str
    address: str
    line: int
    column: int
    key: tuple[str | int, ...]
    span: tuple[int, int]
    diagnostic: Diagnostic = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A diagnostic of a fixable code that is left alone, and why."""

    diagnostic: Diagnostic
    reason: str


@dataclass(slots=True)
class FixPlan:
    """What ``--fix`` would change in the catalog, and what it refuses to touch."""

    document: Document
    edits: list[Edit] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    text: str = ""
    """The catalog's text with every edit applied (the old text when there is none)."""
    counts: bool = False
    """Whether the counts are to be rewritten: counts-drift is the only defect left."""


def plan_fixes(evaluation: Evaluation) -> FixPlan:
    """The edits that fix ``evaluation``'s unambiguous defects in its catalog file."""
    document = evaluation.inputs.catalog.document
    plan = FixPlan(document, text=document.text)
    starts = [0, *(m.end() for m in re.finditer("\n", document.text))]
    candidates: list[Edit] = []
    banned = _banned_words(evaluation)
    for result in evaluation.examples:
        origin = result.origin
        if not isinstance(origin, CatalogOrigin) or origin.document is not document:
            # An example of the docs or of a help text: listed, so that nothing is left unsaid.
            plan.refused.extend(
                Refusal(diagnostic, _elsewhere(origin.file, diagnostic))
                for diagnostic in result.diagnostics
                if diagnostic.code in FIXABLE
            )
            continue
        for diagnostic in result.diagnostics:
            if diagnostic.code not in FIXABLE:
                continue
            own = banned.get(result.tool)
            edit = _edit(document, starts, origin, result, diagnostic, banned=own)
            if isinstance(edit, str):
                plan.refused.append(Refusal(diagnostic, edit))
            else:
                candidates.append(edit)
    plan.edits = _without_overlaps(candidates, plan.refused)
    if plan.edits:
        text = _applied(document.text, plan.edits)
        problem = _check(document, text, plan.edits)
        if problem is not None:
            plan.refused.extend(Refusal(edit.diagnostic, problem) for edit in plan.edits)
            plan.edits = []
        else:
            plan.text = text
    # Every defect of the run (the examples', the records', the repository's) that no edit fixes.
    fixed = {_identity(edit.diagnostic) for edit in plan.edits}
    remaining = [d for d in evaluation.diagnostics if d.is_error and _identity(d) not in fixed]
    plan.counts = bool(remaining) and all(d.code == COUNTS_DRIFT.name for d in remaining)
    return plan


def _elsewhere(file: str, diagnostic: Diagnostic) -> str:
    """Why a defect of ``file`` (not the catalog) is not fixed, with its did-you-mean."""
    reason = f"--fix edits only the catalog; edit {file} by hand"
    if diagnostic.suggestion is not None:
        return f"{reason} (did you mean {diagnostic.suggestion}?)"
    if diagnostic.hint and diagnostic.hint.startswith("Did you mean"):
        return f"{reason} ({diagnostic.hint[0].lower()}{diagnostic.hint[1:]})"
    return reason


def _banned_words(evaluation: Evaluation) -> dict[str | None, frozenset[str]]:
    """Each tool's banned bypass spellings: the configuration's and its own safety's."""
    common = frozenset(evaluation.inputs.config.settings.bypass_flags)
    banned: dict[str | None, frozenset[str]] = {None: common}
    for tool in evaluation.contract.tools:
        safety = tool.tool.safety
        banned[tool.id] = common | frozenset(safety.bypass_flags if safety else ())
    return banned


def _identity(diagnostic: Diagnostic) -> tuple[Any, ...]:
    # Two diagnostics of one code on the same characters of one example are fixed by one edit.
    span = diagnostic.span
    where = (span.start, span.end) if span is not None else None
    return (diagnostic.code, diagnostic.tool, diagnostic.example, where)


def _edit(
    document: Document,
    starts: Sequence[int],
    origin: CatalogOrigin,
    result: ExampleResult,
    diagnostic: Diagnostic,
    *,
    banned: frozenset[str] | None = None,
) -> Edit | str:
    """The edit that fixes ``diagnostic``, or why there is none.

    ``banned``: the tool's confirmation-bypass spellings, which no fix ever writes.
    """
    replacement = diagnostic.suggestion
    span = diagnostic.span
    if replacement is None:
        hint = diagnostic.hint or ""
        if hint.startswith("Did you mean") and " or " in hint:
            return f"ambiguous: {hint[0].lower()}{hint[1:]}"
        return "no replacement is certain"
    if span is None:
        return "the diagnostic does not say which characters to replace"
    old = result.text[span.start : span.end]
    if not _PLAIN.fullmatch(old):
        return f"{old!r} is quoted or escaped in the example; edit it by hand"
    if not _PLAIN.fullmatch(replacement):
        return f"the replacement {replacement!r} would need quoting in the shell"
    problem = _kind_problem(diagnostic.code, old, replacement)
    if problem is not None:
        return problem
    if banned is not None and replacement.split("=", 1)[0] in banned:
        return f"the replacement {replacement} is a banned confirmation bypass; edit it by hand"
    location = origin.location(result.index, span)
    if location.line is None or location.column is None or location.end_column is None:
        return "the word cannot be located in the file"
    if location.end_line is None:
        return "the word cannot be located in the file"
    # Lines and columns count characters of the file's text, as the document located them.
    start = starts[location.line - 1] + location.column - 1
    end = starts[location.end_line - 1] + location.end_column
    raw_old = document.text[start:end]
    if _decoded(raw_old, document.kind) != old:
        return "the file's text at the located place is not the word; edit it by hand"
    return Edit(
        start=start,
        end=end,
        raw_old=raw_old,
        new=_encoded(replacement, document.kind),
        old=old,
        replacement=replacement,
        code=diagnostic.code,
        address=result.address,
        line=location.line,
        column=location.column,
        key=origin.key(result.index),
        span=(span.start, span.end),
        diagnostic=diagnostic,
    )


def _kind_problem(code: str, old: str, replacement: str) -> str | None:
    """Why ``replacement`` is not the kind of word that replaces ``old`` for ``code``."""
    if code == UNKNOWN_FLAG.name and (old[:1] not in "-+/" or replacement[:1] != old[:1]):
        return f"{old!r} is not a whole option (a letter of a bundle); edit it by hand"
    if code == UNKNOWN_COMMAND.name and replacement.startswith("-"):
        return "the replacement is not a command word"
    if code == BAD_CHOICE.name and old.casefold() != replacement.casefold():
        return "only a choice written in another case is fixed"
    return None


def _decoded(raw: str, kind: str) -> str | None:
    """The characters ``raw`` (a stretch inside a string literal of the file) stands for."""
    if "\\" not in raw:
        return raw
    try:
        if kind == "json":
            value = json.loads(f'"{raw}"')
        else:
            value = tomllib.loads(f'value = "{raw}"')["value"]
    except (ValueError, KeyError):
        return None
    return value if isinstance(value, str) else None


def _encoded(word: str, kind: str) -> str:
    """``word`` as the string it lands in writes it (JSON's and TOML's escapes agree here)."""
    del kind  # both formats escape a plain word the same way: not at all, beyond JSON's rules
    return json.dumps(word, ensure_ascii=False)[1:-1]


def _without_overlaps(edits: Sequence[Edit], refused: list[Refusal]) -> list[Edit]:
    """The edits, each stretch of text once; two different fixes of one stretch are refused."""
    unique: dict[tuple[int, int], Edit] = {}
    clashing: set[tuple[int, int]] = set()
    for edit in edits:
        where = (edit.start, edit.end)
        if where in unique and unique[where].new != edit.new:
            clashing.add(where)
        unique.setdefault(where, edit)
    ordered = sorted(unique.values(), key=lambda e: (e.start, e.end))
    for first, second in itertools.pairwise(ordered):
        if second.start < first.end:
            clashing.update({(first.start, first.end), (second.start, second.end)})
    for edit in edits:
        if (edit.start, edit.end) in clashing:
            refused.append(Refusal(edit.diagnostic, "two different fixes touch the same word"))
    return [edit for where, edit in unique.items() if where not in clashing]


def _applied(text: str, edits: Sequence[Edit]) -> str:
    pieces: list[str] = []
    position = 0
    for edit in sorted(edits, key=lambda e: e.start):
        pieces.append(text[position : edit.start])
        pieces.append(edit.new)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def _check(document: Document, new_text: str, edits: Sequence[Edit]) -> str | None:
    """Why the edited text is not exactly the old one with the fixed examples, if it is not."""
    try:
        before = _parsed(document.text, document.kind)
        after = _parsed(new_text, document.kind)
    except ValueError as error:
        return f"the edited file would not parse: {error}"
    expected = before
    by_key: dict[tuple[str | int, ...], list[Edit]] = {}
    for edit in edits:
        by_key.setdefault(edit.key, []).append(edit)
    for key, group in by_key.items():
        holder = expected
        for part in key[:-1]:
            holder = holder[part]
        command = holder[key[-1]]
        for edit in sorted(group, key=lambda e: e.span[0], reverse=True):
            start, end = edit.span
            if command[start:end] != edit.old:
                return "the example's text is not what was checked; run validate again"
            command = command[:start] + edit.replacement + command[end:]
        holder[key[-1]] = command
    if after != expected:
        return "the edit would change more than the fixed words"
    return None


def _parsed(text: str, kind: str) -> Any:
    if kind == "json":
        return json.loads(text)
    return tomllib.loads(text)
