"""What the rules read off a binding: the parameters given, the arguments, banned spellings."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from exampleguard._bind import Binding, Occurrence
from exampleguard._contract import EffectiveTool
from exampleguard._model import Parameter
from exampleguard._toolschema import frozen_json

__all__ = [
    "BannedSpellings",
    "always_prompting",
    "arguments_of",
    "banned_spellings",
    "duplicate_key",
    "effective_name",
    "given_names",
    "must_give",
    "named_occurrences",
]


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


def given_names(
    tool: EffectiveTool, binding: Binding, named: Sequence[tuple[str, Occurrence]] | None = None
) -> dict[str, list[Occurrence]]:
    """Every parameter the example gives (SPEC: any option string, or ≥1 positional value).

    ``named`` is :func:`named_occurrences` of the binding, when the caller has it already.
    """
    given: dict[str, list[Occurrence]] = {}
    for name, occurrence in named_occurrences(tool, binding) if named is None else named:
        given.setdefault(name, []).append(occurrence)
    return given


def arguments_of(
    tool: EffectiveTool, binding: Binding, named: Sequence[tuple[str, Occurrence]] | None = None
) -> dict[str, Any]:
    """The typed argument object: effective parameter name → value, for given parameters.

    A ``confirmation`` flag only answers a prompt: its value never reaches the command (Click
    passes the command no argument for it), so it is not part of the object. ``named`` as for
    :func:`given_names`.
    """
    typed = binding.typed
    return {
        name: typed[id(occurrence.parameter)]
        for name, occurrence in (named_occurrences(tool, binding) if named is None else named)
        if id(occurrence.parameter) in typed and not occurrence.parameter.confirmation
    }


def named_occurrences(tool: EffectiveTool, binding: Binding) -> list[tuple[str, Occurrence]]:
    """Every occurrence that gives one of the tool's parameters, with the tool's name for it."""
    return list(_named_occurrences(tool, binding))


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


def always_prompting(tool: EffectiveTool, banned: BannedSpellings) -> Parameter | None:
    """The parameter that makes the tool's command always ask for confirmation, if one does.

    That is a prompted option (an agent cannot answer the prompt) whose only way past the
    prompt is a confirmation bypass: a flag that exists only to answer it (``confirmation``,
    Click's ``confirmation_option``), or one whose spellings are banned (banning one spelling
    bans the parameter's others). No example of such a command can be valid.
    """
    for parameter in tool.parameters:
        if not parameter.prompt or not parameter.flags:
            continue
        if parameter.confirmation or banned.words.intersection(parameter.flags):
            return parameter
    return None


def duplicate_key(path: Sequence[str], arguments: dict[str, Any]) -> Hashable:
    """A canonical key: two examples with the same key do the same thing."""
    # Hashable and exact: the type keeps True apart from 1, and 1 apart from 1.0.
    return (tuple(path), frozen_json(arguments))
