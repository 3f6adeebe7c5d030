"""Strict argument schemas (JSON Schema draft 2020-12), one per tool.

The schema describes the argument object the binder produces for an example of the tool —
parameter name → typed value — in the closed form strict function-calling APIs accept: every
property typed, ``required`` listed, ``enum`` for choices, arrays for repeated and variadic
parameters, ``additionalProperties: false``, each property's ``default`` where the command
declares one. The tool's constraints are there too, as far as JSON Schema says them: a parameter
is given exactly when its name is a key of the object, so require-one-of is an ``anyOf`` of
``required`` (one per name), require-together a ``dependentRequired`` (each name needs the
others), and mutually-exclusive a ``not`` of an ``anyOf`` of every pair's ``required``.
``exampleguard schema tool ID`` prints it. That every argument object the binder accepts
satisfies it is a differential test
(``tests/differential/test_toolschema_differential.py``), validated by the ``jsonschema``
library, as :func:`schema_errors` validates.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from exampleguard._contract import EffectiveTool
from exampleguard._model import Parameter, ParamType

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["DIALECT", "argument_schema", "frozen_json", "schema_errors"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_JSON_TYPES: dict[ParamType, dict[str, Any]] = {
    "string": {"type": "string"},
    "path": {"type": "string"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "datetime": {"type": "string"},
    "uuid": {"type": "string"},
}


def argument_schema(tool: EffectiveTool) -> dict[str, Any]:
    """The strict argument schema of ``tool``."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter, is_required in _fields(tool):
        properties[parameter.name] = _parameter_schema(parameter)
        if is_required:
            required.append(parameter.name)
    schema: dict[str, Any] = {
        "$schema": DIALECT,
        "title": tool.id,
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    summary = tool.tool.summary or tool.tool.description
    if summary:
        schema["description"] = summary
    schema.update(_constraint_keywords(_groups(tool, set(properties))))
    return schema


@dataclass(frozen=True, slots=True)
class _Groups:
    """A tool's constraints by argument name, limited to names the schema has."""

    one_of: tuple[frozenset[str], ...] = ()
    together: tuple[frozenset[str], ...] = ()
    exclusive: tuple[frozenset[str], ...] = ()


def _groups(tool: EffectiveTool, names: set[str]) -> _Groups:
    """The constraints the rules check for ``tool``, each naming only arguments of the schema.

    They are the catalog's, and the tree's where its framework does not enforce them itself
    (:attr:`EffectiveTool.constraints`). A group that names something else is
    ``constraint-invalid`` on its own and left out here.
    """
    rules = tool.constraints

    def usable(groups: list[list[str]], smallest: int) -> tuple[frozenset[str], ...]:
        found: list[frozenset[str]] = []
        for group in groups:
            members = frozenset(group)
            if len(members) >= smallest and members <= names and members not in found:
                found.append(members)
        return tuple(found)

    return _Groups(
        one_of=usable(rules.require_one_of, 1),
        together=usable(rules.require_together, 2),
        exclusive=usable(rules.mutually_exclusive, 2),
    )


def _constraint_keywords(groups: _Groups) -> dict[str, Any]:
    """The JSON Schema keywords that say ``groups``."""
    keywords: dict[str, Any] = {}
    clauses: list[dict[str, Any]] = [
        {"anyOf": [{"required": [name]} for name in sorted(group)]} for group in groups.one_of
    ]
    for group in groups.exclusive:
        members = sorted(group)
        pairs = [
            {"required": [first, second]}
            for index, first in enumerate(members)
            for second in members[index + 1 :]
        ]
        clauses.append({"not": {"anyOf": pairs}})
    if len(clauses) == 1:
        keywords.update(clauses[0])
    elif clauses:
        keywords["allOf"] = clauses
    needs: dict[str, set[str]] = {}
    for group in groups.together:
        for name in group:
            needs.setdefault(name, set()).update(group - {name})
    if needs:
        keywords["dependentRequired"] = {name: sorted(needs[name]) for name in sorted(needs)}
    return keywords


def _fields(tool: EffectiveTool) -> Iterator[tuple[Parameter, bool]]:
    """The tool's arguments, each with whether the schema requires it."""
    for parameter in tool.parameters:
        if parameter.eager:
            # --help and --version end parsing; they are not arguments of the tool.
            continue
        yield parameter, _required(tool, parameter)


def _required(tool: EffectiveTool, parameter: Parameter) -> bool:
    if parameter.name in tool.catalog_required or parameter.prompt:
        return True
    if parameter.positional:
        return parameter.is_required
    return parameter.required is True


def _value_schema(parameter: Parameter, position: int) -> dict[str, Any]:
    value_type = parameter.value_type(position)
    items = parameter.item_choices
    if items is not None and position < len(items):
        if items[position] is not None:
            return {"enum": list(items[position] or [])}
    elif parameter.choices is not None:
        return {"enum": list(parameter.choices)}
    schema = dict(_JSON_TYPES[value_type])
    if value_type in ("integer", "number"):
        if parameter.min is not None:
            schema["exclusiveMinimum" if parameter.min_open else "minimum"] = parameter.min
        if parameter.max is not None:
            schema["exclusiveMaximum" if parameter.max_open else "maximum"] = parameter.max
    return schema


def _occurrence_schema(parameter: Parameter) -> dict[str, Any]:
    """The schema of the value one occurrence gives."""
    nargs = parameter.values_per_occurrence
    if parameter.is_flag:
        return {"type": "boolean"}
    if isinstance(nargs, int) and nargs > 1:
        if not isinstance(parameter.type, list) and parameter.item_choices is None:
            # Every value alike: one item schema, whatever nargs a (hostile) file declares.
            item = _value_schema(parameter, 0)
            return {"type": "array", "items": item, "minItems": nargs, "maxItems": nargs}
        # One type or choice list per value, each written in the file: as many as it holds.
        items = [_value_schema(parameter, i) for i in range(nargs)]
        if all(item == items[0] for item in items):
            return {"type": "array", "items": items[0], "minItems": nargs, "maxItems": nargs}
        return {
            "type": "array",
            "prefixItems": items,
            "items": False,
            "minItems": nargs,
            "maxItems": nargs,
        }
    if nargs in ("*", "+", "...") and not parameter.positional:
        return {
            "type": "array",
            "items": _value_schema(parameter, 0),
            "minItems": 1 if nargs == "+" else 0,
        }
    value = _value_schema(parameter, 0)
    if nargs == "?" and not parameter.positional:
        # Given bare, an optional-value option stores its constant: true for a boolean, else null.
        return {"anyOf": [value, {"type": "boolean" if parameter.type == "boolean" else "null"}]}
    return value


def _parameter_schema(parameter: Parameter) -> dict[str, Any]:
    if parameter.count:
        schema: dict[str, Any] = {"type": "integer", "minimum": 1}
    elif parameter.positional and (
        parameter.variadic or (isinstance(parameter.nargs, int) and parameter.nargs > 1)
    ):
        if parameter.variadic:
            schema = {
                "type": "array",
                "items": _value_schema(parameter, 0),
                "minItems": 1,
            }
        else:
            schema = _occurrence_schema(parameter)
    elif parameter.multiple:
        schema = {"type": "array", "items": _occurrence_schema(parameter), "minItems": 1}
    else:
        schema = _occurrence_schema(parameter)
    if parameter.description:
        schema = {**schema, "description": parameter.description}
    if parameter.default is not None:
        schema = {**schema, "default": parameter.default}
    return schema


def frozen_json(value: Any) -> Any:
    """A hashable stand-in for a JSON value; distinct for values JSON Schema tells apart."""
    kind = type(value)
    if kind in _SCALARS:
        # The type keeps True apart from 1 and 1.0 from 1, as JSON Schema's types do.
        return (kind.__name__, value)
    if isinstance(value, list):
        return ("list", tuple(map(frozen_json, value)))
    if isinstance(value, dict):
        return ("object", tuple(sorted([(k, frozen_json(v)) for k, v in value.items()])))
    return (kind.__name__, value)


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""The types of JSON's scalars, exactly (every example's every argument value is one)."""


def schema_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Every way ``arguments`` fails ``schema``, as messages (empty when it validates)."""
    return _messages(_validator(schema), arguments)


def _validator(schema: dict[str, Any]) -> Validator:
    # Imported when asked: printing a schema needs no validator.
    from jsonschema import Draft202012Validator  # noqa: PLC0415

    return Draft202012Validator(schema)


def _messages(validator: Validator, arguments: dict[str, Any]) -> list[str]:
    if validator.is_valid(arguments):
        return []
    messages: list[str] = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = ".".join(str(part) for part in error.path)
        messages.append(f"{where}: {error.message}" if where else error.message)
    return messages
