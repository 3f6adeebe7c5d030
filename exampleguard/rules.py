"""The catalog's rules, checked on each bound example: stricter than any parser, on purpose.

The binder answers "would the framework accept this?". The rules answer "should an agent copy
this?": requirements the catalog adds, options the command would prompt for, the
require-one-of / require-together / mutually-exclusive constraints, banned confirmation bypasses,
and the per-tool limits on examples (at most two, no duplicates).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from exampleguard.bind import Binding, Occurrence, Problem, Role
from exampleguard.contract import EffectiveTool
from exampleguard.model import Parameter
from exampleguard.toolschema import frozen_json

__all__ = [
    "BannedSpellings",
    "arguments_of",
    "banned_spellings",
    "check_bypass",
    "check_constraints",
    "check_required",
    "duplicate_key",
    "given_names",
    "must_give",
]

MAX_EXAMPLES = 2
"""Examples per tool beyond which every further one is ``too-many-examples``."""


def effective_name(tool: EffectiveTool, occurrence: Occurrence) -> str | None:
    """The tool's name for the parameter an occurrence gives, or ``None`` if it has none.

    Without a tree, a group-level occurrence of a persistent option is matched to the tool's own
    parameter by option string.
    """
    name = tool.origin.get(id(occurrence.parameter))
    if name is not None:
        return name
    if not tool.origin and tool.node is not None and occurrence.level == tool.node.path:
        # Without a tree, the command's own level declares exactly the tool's parameters.
        return occurrence.parameter.name
    wanted = set(occurrence.parameter.all_flags)
    for parameter in tool.parameters:
        if wanted & set(parameter.all_flags):
            return parameter.name
    return None


def given_names(tool: EffectiveTool, binding: Binding) -> dict[str, list[Occurrence]]:
    """Every parameter the example gives (SPEC: any option string, or ≥1 positional value)."""
    given: dict[str, list[Occurrence]] = {}
    for name, occurrence in _named_occurrences(tool, binding):
        given.setdefault(name, []).append(occurrence)
    return given


def arguments_of(tool: EffectiveTool, binding: Binding) -> dict[str, Any]:
    """The typed argument object: effective parameter name → value, for given parameters."""
    return {
        name: binding.typed[id(occurrence.parameter)]
        for name, occurrence in _named_occurrences(tool, binding)
        if id(occurrence.parameter) in binding.typed
    }


def _named_occurrences(tool: EffectiveTool, binding: Binding) -> Iterator[tuple[str, Occurrence]]:
    # A positional that received no value was not given.
    for occurrence in binding.occurrences:
        if occurrence.parameter.positional and not occurrence.values:
            continue
        name = effective_name(tool, occurrence)
        if name is not None:
            yield name, occurrence


def must_give(tool: EffectiveTool) -> list[Parameter]:
    """The parameters whose absence only the rules catch: catalog requirements and prompts."""
    return [p for p in tool.parameters if p.prompt or p.name in tool.catalog_required]


def check_required(
    tool: EffectiveTool,
    binding: Binding,
    given: dict[str, list[Occurrence]],
    required: Sequence[Parameter] | None = None,
) -> list[Problem]:
    """Requirements beyond the framework's: the catalog's, and options that would prompt."""
    if binding.eager:
        return []
    findings: list[Problem] = []
    for parameter in must_give(tool) if required is None else required:
        if parameter.name in given:
            continue
        if parameter.prompt:
            findings.append(
                Problem(
                    "missing-required",
                    f"{parameter.display()} is missing, so the command would prompt for it; an "
                    "agent cannot answer a prompt",
                    hint=f"Give {parameter.display()} in the example.",
                )
            )
        elif parameter.name in tool.catalog_required:
            findings.append(
                Problem(
                    "missing-required",
                    f"the catalog requires {parameter.display()}",
                    hint=f"Give {parameter.display()} in the example.",
                )
            )
    return findings


def check_constraints(
    tool: EffectiveTool, binding: Binding, given: dict[str, list[Occurrence]]
) -> list[Problem]:
    """``require_one_of``, ``require_together`` and ``mutually_exclusive`` (SPEC semantics)."""
    if binding.eager:
        return []
    display = _Display(tool)

    def shown(names: Iterable[str]) -> str:
        return ", ".join(display.get(name, name) for name in names)

    findings: list[Problem] = []
    for group in tool.constraints.require_one_of:
        if not any(name in given for name in group):
            findings.append(
                Problem(
                    "require-one-of",
                    f"one of {shown(group)} is required",
                    hint=f"Give one of {shown(group)}.",
                )
            )
    for group in tool.constraints.require_together:
        present = [name for name in group if name in given]
        if present and len(present) < len(group):
            missing = [name for name in group if name not in given]
            first = given[present[0]][0]
            findings.append(
                Problem(
                    "require-together",
                    f"{shown(present)} must be given together with {shown(missing)}",
                    word=first.word,
                    offset=first.offset,
                    length=first.length,
                    hint=f"Add {shown(missing)}, or remove {shown(present)}.",
                )
            )
    for group in tool.constraints.mutually_exclusive:
        present = [name for name in group if name in given]
        if len(present) < 2:
            continue
        ordered = sorted(present, key=lambda name: _first_word(given[name]))
        first = given[ordered[0]][0]
        for name in ordered[1:]:
            later = given[name][0]
            findings.append(
                Problem(
                    "mutually-exclusive",
                    f"{display.get(name, name)} cannot be combined with "
                    f"{display.get(ordered[0], ordered[0])}",
                    word=later.word if later.word >= 0 else None,
                    offset=later.offset,
                    length=later.length,
                    hint=f"Keep one of {shown(present)}.",
                    related=((f"{display.get(ordered[0], ordered[0])} given here", first.word),)
                    if first.word >= 0
                    else (),
                )
            )
    return findings


class _Display:
    """Parameter names as people read them, computed only when a message needs one."""

    def __init__(self, tool: EffectiveTool) -> None:
        self._tool = tool

    def get(self, name: str, default: str) -> str:
        parameter = self._tool.parameter(name)
        return parameter.display() if parameter is not None else default


def _first_word(occurrences: list[Occurrence]) -> int:
    return min((o.word for o in occurrences if o.word >= 0), default=1 << 30)


@dataclass(frozen=True, slots=True)
class BannedSpellings:
    """A tool's banned bypass spellings, resolved once against the parameters it accepts.

    ``pairs`` maps a parameter (by identity) and polarity (negated or not) to the banned spelling
    that bans it: banning ``--yes`` bans ``-y`` of a ``-y/--yes`` parameter, but not its negation.
    """

    words: frozenset[str]
    pairs: dict[tuple[int, bool], str]


def banned_spellings(banned: Sequence[str], accepted: Sequence[Parameter]) -> BannedSpellings:
    """Resolve ``banned`` spellings against the parameters an example of a tool may give."""
    pairs: dict[tuple[int, bool], str] = {}
    for word in banned:
        for parameter in accepted:
            if word in parameter.flags:
                pairs.setdefault((id(parameter), False), word)
            if word in parameter.negation_flags:
                pairs.setdefault((id(parameter), True), word)
    return BannedSpellings(frozenset(banned), pairs)


def check_bypass(
    binding: Binding, words: Sequence[str], banned: BannedSpellings, text: str | None = None
) -> list[Problem]:
    """Confirmation bypasses, in every spelling with the same effect (SPEC 4 step 5).

    A banned spelling bans its parameter's other option strings too (``-y`` for ``--yes``, in a
    bundle, abbreviated), but not the parameter's negation. A banned word that is another
    option's value, or that comes after ``--``, is data.
    """
    if not banned.words:
        return []
    findings: list[Problem] = []
    flagged_words: set[int] = set()
    for occurrence in binding.occurrences:
        if occurrence.parameter.positional:
            continue
        spelling = banned.pairs.get(
            (id(occurrence.parameter), occurrence.negated)
        ) or _banned_by_flags(occurrence.parameter, occurrence.negated, banned.words)
        if spelling is None:
            continue
        flagged_words.add(occurrence.word)
        same = (
            "" if occurrence.spelling == spelling else f" ({occurrence.spelling} means {spelling})"
        )
        findings.append(
            Problem(
                "bypass-flag",
                f"{occurrence.spelling} skips the command's confirmation{same}",
                word=occurrence.word,
                offset=occurrence.offset,
                length=occurrence.length,
                hint="Remove it; show the command's preview (dry-run) flag instead if it has one.",
            )
        )
    if text is not None and not any(word in text for word in banned.words):
        # No banned word appears anywhere in the example: no word can be one.
        return findings
    separator = next(
        (i for i, role in enumerate(binding.roles) if role is Role.SEPARATOR), len(words)
    )
    for index, word in enumerate(words):
        if index == 0 or index in flagged_words or index > separator:
            continue
        if binding.roles[index] in (Role.VALUE, Role.SEPARATOR, Role.COMMAND):
            continue
        head = word.split("=", 1)[0]
        if head in banned.words:
            findings.append(
                Problem(
                    "bypass-flag",
                    f"{head} skips the command's confirmation",
                    word=index,
                    length=len(head),
                    hint="Remove it.",
                )
            )
    return findings


def _banned_by_flags(parameter: Parameter, negated: bool, banned: frozenset[str]) -> str | None:
    # A catalog-only group option is a different object from the tool's own parameter; compare
    # by option strings.
    strings = parameter.negation_flags if negated else parameter.flags
    return next((spelling for spelling in strings if spelling in banned), None)


def duplicate_key(path: Sequence[str], arguments: dict[str, Any]) -> Hashable:
    """A canonical key: two examples with the same key do the same thing."""
    # Hashable and exact: the type keeps True apart from 1, and 1 apart from 1.0.
    return (tuple(path), frozen_json(arguments))
