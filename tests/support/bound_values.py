"""Comparing what a real parser hands the program with exampleguard's argument object.

For an argv both accept, the framework's values — Click's ``ctx.params`` level by level, or
argparse's namespace — must equal the argument object :func:`exampleguard._rules.arguments_of`
builds from the binding, parameter for parameter. The two are not the same shape by design:
the argument object is JSON-like and holds only what the example gives. The mapping rules,
applied to the framework's side only:

1. Given means given on the command line. A Click parameter counts when its source is
   ``COMMANDLINE``; defaults, environment variables and prompts are not in the argument
   object. argparse keeps no sources, so every parameter exampleguard does not list must hold
   argparse's default (or, for a positional that may be absent, whatever argparse fills in for
   no words). A positional that received no word is never given (an empty variadic).
2. Containers become lists: Click's tuples (``multiple``, ``nargs > 1``, variadic positionals)
   and argparse's lists alike, recursively. argparse's explicit ``nargs=1`` stores a one-item
   list; the snapshot records one value per occurrence for it as for ``nargs=None``, so the
   argument object holds the value itself and the list is unwrapped.
3. Scalars become JSON values: paths their ``os.fspath``, datetimes their ``isoformat()``,
   UUIDs their ``str``, enum members their value, opened files their name. Everything else is
   compared exactly, type included (``1`` is not ``1.0``, ``True`` is not ``1``).
4. What was given, not what accumulated: argparse adds a ``count`` to an integer default and
   appends ``append``/``extend`` values to a copy of a list default; the default part is taken
   off. ``extend`` flattens what ``append`` keeps per occurrence, so the argument object's
   per-occurrence lists are flattened for it.
5. Constants the snapshot does not record are compared by presence only: a flag whose value is
   not a boolean (argparse ``store_const``/``append_const``, a Click ``flag_value``) and an
   optional-value option given bare (argparse ``const``, Click ``flag_value``).
6. Parameters that share one destination (an argparse ``dest``, a Click parameter name such
   as ``--upper``/``--lower`` both storing ``transform``) are compared only when the example
   gives exactly one of them: the framework's one value cannot say which of them wrote it.

Each rule is exact: no tolerance, no parameter skipped beyond what the rules name.
"""

from __future__ import annotations

import argparse
import datetime
import enum
import io
import math
import os
import uuid
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any

from exampleguard._bind import Binding, Occurrence
from exampleguard._contract import EffectiveTool
from exampleguard._model import Parameter
from exampleguard._rules import arguments_of, effective_name

_ABSENT = object()


def given_by_exampleguard(
    tool: EffectiveTool, binding: Binding
) -> dict[int, tuple[Occurrence, Any]]:
    """The argument object, keyed by the declared parameter: its last occurrence and value."""
    arguments = arguments_of(tool, binding)
    found: dict[int, tuple[Occurrence, Any]] = {}
    for occurrence in binding.occurrences:
        name = effective_name(tool, occurrence)
        if name is not None and name in arguments:
            found[id(occurrence.parameter)] = (occurrence, arguments[name])
    return found


def as_argument(value: Any) -> Any:
    """A framework value in the argument object's shape (rules 2 and 3)."""
    if isinstance(value, tuple | list):
        return [as_argument(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return os.fspath(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, io.IOBase) or type(value).__name__.lstrip("_") == "LazyFile":
        # Click's lazy file opens itself on any attribute it does not have; its name it has.
        return value.name
    return value


def same(framework: Any, ours: Any) -> bool:
    """Exact equality, type included, through lists and tuples; a NaN equals a NaN."""
    if isinstance(framework, list | tuple) and type(framework) is type(ours):
        return len(framework) == len(ours) and all(map(same, framework, ours))
    if isinstance(framework, float) and isinstance(ours, float) and math.isnan(framework):
        return math.isnan(ours)
    return type(framework) is type(ours) and framework == ours


def _presence_only(parameter: Parameter, occurrence: Occurrence, framework: Any) -> bool:
    # Rule 5: a constant the snapshot does not record.
    if occurrence.bare:
        return True
    return parameter.is_flag and not parameter.count and not isinstance(framework, bool)


# -- Click ----------------------------------------------------------------------------------------


def _click_match(parameter: Parameter, click_param: Any) -> bool:
    if parameter.positional:
        return bool(
            click_param.param_type_name == "argument" and click_param.name == parameter.name
        )
    options = {*click_param.opts, *click_param.secondary_opts}
    return bool(options & set(parameter.all_flags))


def click_differences(tool: EffectiveTool, binding: Binding, contexts: list[Any]) -> list[str]:
    """Where Click's ``ctx.params`` and the argument object disagree (empty when they agree)."""
    ours = given_by_exampleguard(tool, binding)
    by_level: dict[int, list[tuple[Occurrence, Any]]] = {}
    for occurrence, value in ours.values():
        by_level.setdefault(len(occurrence.level), []).append((occurrence, value))
    problems: list[str] = []
    matched: set[int] = set()
    for depth, context in enumerate(contexts):
        click_params = [p for p in context.command.get_params(context) if p.expose_value]
        level = by_level.get(depth, [])
        for hidden in context.command.get_params(context):
            if not hidden.expose_value:
                # Kept out of ctx.params, its value reaches the program through its callback:
                # the real-parser check compares what that received.
                matched.update(
                    id(occurrence.parameter)
                    for occurrence, _ in level
                    if _click_match(occurrence.parameter, hidden)
                )
        for click_param in click_params:
            sharers = [p for p in click_params if p.name == click_param.name]
            given_sharers = [
                occurrence
                for occurrence, _ in level
                if any(_click_match(occurrence.parameter, p) for p in sharers)
            ]
            value = context.params.get(click_param.name, _ABSENT)
            source = context.get_parameter_source(click_param.name)
            given = source is not None and source.name == "COMMANDLINE" and value not in ((), None)
            mine = next(
                (
                    (occurrence, argument)
                    for occurrence, argument in level
                    if _click_match(occurrence.parameter, click_param)
                ),
                None,
            )
            if len(sharers) > 1 and (mine is None or len(given_sharers) > 1):
                # Rule 6.
                if mine is not None:
                    matched.add(id(mine[0].parameter))
                if given_sharers or not given:
                    continue
            if mine is None:
                if given:
                    problems.append(
                        f"Click got {click_param.name}={value!r} from the command line; the "
                        "argument object does not have it"
                    )
                continue
            occurrence, argument = mine
            matched.add(id(occurrence.parameter))
            if not given:
                problems.append(
                    f"the argument object gives {occurrence.parameter.name}={argument!r}; Click "
                    f"took {click_param.name} from {source.name if source else 'nowhere'}"
                )
                continue
            framework = as_argument(value)
            if _presence_only(occurrence.parameter, occurrence, framework):
                continue
            if not same(framework, argument):
                problems.append(
                    f"{click_param.name}: Click has {framework!r}, the argument object {argument!r}"
                )
    problems.extend(
        f"the argument object gives {occurrence.parameter.name}, which matches no Click parameter"
        for key, (occurrence, _) in ours.items()
        if key not in matched
    )
    return problems


# -- argparse -------------------------------------------------------------------------------------


def argparse_actions(
    parser: argparse.ArgumentParser, commands: Iterator[tuple[list[str], list[Parameter]]]
) -> dict[int, argparse.Action]:
    """Each snapshot parameter (by identity) → the argparse action it was extracted from.

    The adapter writes one parameter per action, in the parser's order, leaving out only the
    subparsers action; so the two line up level by level.
    """
    found: dict[int, argparse.Action] = {}
    for path, parameters in commands:
        level = parser
        for word in path:
            sub = next(a for a in level._actions if isinstance(a, argparse._SubParsersAction))
            level = sub.choices[word]
        actions = [a for a in level._actions if not isinstance(a, argparse._SubParsersAction)]
        assert len(actions) == len(parameters), path
        found.update((id(p), a) for p, a in zip(parameters, actions, strict=True))
    return found


def _argparse_given(action: argparse.Action, value: Any, occurrence: Occurrence) -> Any:
    """Rule 4, then rule 2's unwrapping: the part of the namespace value the example gave."""
    default = action.default
    if isinstance(action, argparse._CountAction) and isinstance(default, int):
        return value - default
    if isinstance(action, argparse._AppendAction | argparse._ExtendAction) and isinstance(
        default, list
    ):
        value = value[len(default) :]
    if action.nargs == 1 and not occurrence.parameter.multiple:
        return value[0]
    if action.nargs == 1:
        return [item[0] for item in value]
    return value


def argparse_differences(
    tool: EffectiveTool,
    binding: Binding,
    namespace: argparse.Namespace,
    actions: dict[int, argparse.Action],
    levels: list[list[Parameter]],
) -> list[str]:
    """Where argparse's namespace and the argument object disagree (empty when they agree).

    ``levels`` are the parameters of each parser the argv went through, root first.
    """
    ours = given_by_exampleguard(tool, binding)
    problems: list[str] = []
    destinations: dict[str, list[int]] = {}
    for parameters in levels:
        for parameter in parameters:
            destinations.setdefault(actions[id(parameter)].dest, []).append(id(parameter))
    for parameters in levels:
        for parameter in parameters:
            action = actions[id(parameter)]
            if parameter.eager:
                continue
            sharing = [key for key in destinations[action.dest] if key in ours]
            value = getattr(namespace, action.dest, _ABSENT)
            mine = ours.get(id(parameter))
            if mine is None:
                if sharing or parameter.positional:
                    # Rule 6, and rule 1 for a positional argparse filled in itself.
                    continue
                if value is not action.default and value != action.default:
                    problems.append(
                        f"argparse has {action.dest}={value!r}, not its default "
                        f"{action.default!r}; the argument object does not have {parameter.name}"
                    )
                continue
            if len(sharing) > 1:
                continue
            occurrence, argument = mine
            framework = as_argument(_argparse_given(action, value, occurrence))
            if isinstance(action, argparse._ExtendAction) and isinstance(argument, list):
                argument = [item for chunk in argument for item in chunk]
            if _presence_only(parameter, occurrence, framework):
                continue
            if not same(framework, argument):
                problems.append(
                    f"{action.dest}: argparse has {framework!r}, the argument object {argument!r}"
                )
    return problems
