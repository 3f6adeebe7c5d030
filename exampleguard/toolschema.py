"""Strict argument schemas (JSON Schema draft 2020-12), one per tool.

The schema describes the argument object the binder produces for an example of the tool —
parameter name → typed value — in the closed form strict function-calling APIs accept: every
property typed, ``required`` listed, ``enum`` for choices, arrays for repeated and variadic
parameters, ``additionalProperties: false``. ``validate`` checks every cleanly bound example's
arguments against it with the ``jsonschema`` validator; a disagreement is ``schema-mismatch``.
"""

from __future__ import annotations

from typing import Any

from exampleguard.contract import EffectiveTool
from exampleguard.model import Parameter, ParamType

__all__ = ["DIALECT", "argument_schema", "schema_errors"]

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
    for parameter in tool.parameters:
        if parameter.eager:
            # --help and --version end parsing; they are not arguments of the tool.
            continue
        properties[parameter.name] = _parameter_schema(parameter)
        if _required(tool, parameter):
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
    return schema


def _required(tool: EffectiveTool, parameter: Parameter) -> bool:
    if parameter.name in tool.catalog_required or parameter.prompt:
        return True
    if parameter.positional:
        return parameter.is_required
    return parameter.required is True


def _value_schema(parameter: Parameter, position: int) -> dict[str, Any]:
    value_type = parameter.value_type(position)
    if parameter.choices is not None:
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
    return schema


def schema_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Every way ``arguments`` fails ``schema``, as messages (empty when it validates)."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - only needed for the check

    validator = Draft202012Validator(schema)
    messages: list[str] = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = ".".join(str(part) for part in error.path)
        messages.append(f"{where}: {error.message}" if where else error.message)
    return messages
