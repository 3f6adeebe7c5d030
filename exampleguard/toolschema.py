"""Strict argument schemas (JSON Schema draft 2020-12), one per tool.

The schema describes the argument object the binder produces for an example of the tool —
parameter name → typed value — in the closed form strict function-calling APIs accept: every
property typed, ``required`` listed, ``enum`` for choices, arrays for repeated and variadic
parameters, ``additionalProperties: false``, each property's ``default`` where the command
declares one. The tool's constraints are there too, as far as JSON Schema says them: a parameter
is given exactly when its name is a key of the object, so require-one-of is an ``anyOf`` of
``required`` (one per name), require-together a ``dependentRequired`` (each name needs the
others), and mutually-exclusive a ``not`` of an ``anyOf`` of every pair's ``required``.
``validate`` checks every cleanly bound example's arguments against it; a disagreement is
``schema-mismatch``. Each property's subschema is compiled once into a predicate
(:func:`compile_schema`) that applies the keywords these schemas use exactly as JSON Schema
defines them — it agrees with the ``jsonschema`` validator, which a differential test checks — so
the per-example path builds no validator and does not import ``jsonschema``; an object that
fails is validated whole by ``jsonschema``, for its messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from exampleguard.contract import EffectiveTool
from exampleguard.model import Parameter, ParamType

__all__ = [
    "DIALECT",
    "SchemaCheck",
    "argument_schema",
    "compile_schema",
    "frozen_json",
    "json_equal",
    "schema_errors",
]

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


class SchemaCheck:
    """Checks argument objects against their tools' schemas, without repeating work.

    A tool's schema is an object schema whose top-level keywords are ``type``, ``properties``,
    ``required``, ``additionalProperties: false`` and the constraint keywords, which speak only
    of which keys are present. An argument object is valid exactly when its keys include the
    required ones, name only declared properties and satisfy the constraint groups, and each
    value satisfies its property's subschema. The key relations are plain set relations and are
    checked as such; every value is judged by its subschema's compiled predicate, one per
    distinct subschema of the run (catalogs repeat them heavily). An object that fails is
    validated whole again by jsonschema, for its own messages.
    """

    def __init__(self) -> None:
        self._tools: dict[int, _CompiledTool] = {}
        self._predicates: dict[tuple[Any, ...], Predicate] = {}
        self._shapes: dict[tuple[Any, ...], _CompiledTool] = {}
        self._recent: dict[tuple[Any, ...], tuple[object, _CompiledTool]] = {}

    def errors(self, tool: EffectiveTool, arguments: dict[str, Any]) -> list[str]:
        """Why ``arguments`` fail ``tool``'s schema, as messages (empty when they validate)."""
        compiled = self._tools.get(id(tool))
        if compiled is None:
            compiled = self._tools[id(tool)] = self._recalled(tool)
        if compiled.valid(arguments):
            return []
        return _messages(_validator(argument_schema(tool)), arguments)

    def forget(self, tool: EffectiveTool) -> None:
        """Drop what was compiled for ``tool`` (its examples are all checked)."""
        self._tools.pop(id(tool), None)

    def _recalled(self, tool: EffectiveTool) -> _CompiledTool:
        """The check of a recent tool with the very same parameter records, else a new one.

        Tools that state their parameters alike hold the same records (the catalog shares
        them): whatever else decides the check (the catalog's requirements and constraints)
        being equal too, the check is the same, found without working out the fields'
        signatures again. The records are named by identity and held by the entry, so no id
        is reused while it lives; only the :data:`_RECENT_TOOLS` latest are kept.
        """
        rules = tool.constraints
        key = (
            tuple(map(id, tool.parameters)),
            tool.catalog_required,
            *(
                tuple(map(tuple, groups))
                for groups in (
                    rules.require_one_of,
                    rules.require_together,
                    rules.mutually_exclusive,
                )
            ),
        )
        entry = self._recent.get(key)
        if entry is not None:
            return entry[1]
        compiled = self._compile(tool)
        if len(self._recent) >= _RECENT_TOOLS:
            del self._recent[next(iter(self._recent))]
        self._recent[key] = (list(tool.parameters), compiled)
        return compiled

    def _compile(self, tool: EffectiveTool) -> _CompiledTool:
        # Tools with the same fields (a program's commands share most options) share one
        # compiled check, and parameters with the same validation-relevant fields share one
        # predicate (descriptions do not affect validity).
        fields = [
            (parameter, _signature(parameter), required) for parameter, required in _fields(tool)
        ]
        shape = tuple(
            (parameter.name, signature, required) for parameter, signature, required in fields
        )
        groups = _groups(tool, {parameter.name for parameter, _, _ in fields})
        compiled = self._shapes.get((shape, groups))
        if compiled is None:
            properties = {
                parameter.name: self._predicate(parameter, signature)
                for parameter, signature, _ in fields
            }
            required = frozenset(parameter.name for parameter, _, needed in fields if needed)
            compiled = _CompiledTool(properties, required, groups)
            self._shapes[shape, groups] = compiled
        return compiled

    def _predicate(self, parameter: Parameter, signature: tuple[Any, ...]) -> Predicate:
        predicate = self._predicates.get(signature)
        if predicate is None:
            predicate = compile_schema(_parameter_schema(parameter))
            self._predicates[signature] = predicate
        return predicate


_RECENT_TOOLS = 64
"""How many tools' checks :meth:`SchemaCheck._recalled` keeps to find by parameter records."""

Predicate = Callable[[Any], bool]
"""Whether a JSON value is valid against the schema it was compiled from."""


@dataclass(slots=True)
class _CompiledTool:
    properties: dict[str, Predicate]
    required: frozenset[str]
    groups: _Groups

    def valid(self, arguments: dict[str, Any]) -> bool:
        names = arguments.keys()
        if not self.required <= names or not names <= self.properties.keys():
            return False
        groups = self.groups
        if any(group.isdisjoint(names) for group in groups.one_of):
            return False
        if any(0 < len(group & names) < len(group) for group in groups.together):
            return False
        if any(len(group & names) > 1 for group in groups.exclusive):
            return False
        properties = self.properties
        # A loop, not all() over a generator: this runs for every example's argument object.
        for name, value in arguments.items():  # noqa: SIM110
            if not properties[name](value):
                return False
        return True


def compile_schema(schema: dict[str, Any] | bool) -> Predicate:
    """A predicate equal to JSON Schema (2020-12) validation against ``schema``.

    It covers the keywords the argument schemas use (``type``, ``enum``, the numeric bounds,
    ``items``, ``prefixItems``, ``minItems``, ``maxItems``, ``anyOf``; annotations such as
    ``description`` and ``default`` are ignored); a schema with any other keyword is handed to
    ``jsonschema``.
    """
    if isinstance(schema, bool):
        return partial(_constant, schema)
    if not schema.keys() <= _COMPILED_KEYWORDS:
        return _validator(schema).is_valid  # type: ignore[no-any-return]
    checks: list[Predicate] = []
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if len(kinds) == 1 and kinds[0] in _TYPE_CHECKS:
            checks.append(_TYPE_CHECKS[kinds[0]])
        else:
            checks.append(lambda value: any(_is_type(value, k) for k in kinds))
    if "enum" in schema:
        checks.append(_enum(list(schema["enum"])))
    checks.extend(_bounds(schema))
    checks.extend(_array_checks(schema))
    if "anyOf" in schema:
        branches = [compile_schema(branch) for branch in schema["anyOf"]]
        checks.append(lambda value: any(branch(value) for branch in branches))
    return _all_of(checks)


def _all_of(checks: list[Predicate]) -> Predicate:
    # Every example's every value goes through these: two checks (a type and an enum, a type
    # and a bound) are the common case, and a plain conjunction costs less than a generator.
    if not checks:
        return partial(_constant, True)
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)

    def every(value: Any) -> bool:
        for check in checks:  # noqa: SIM110 - see above
            if not check(value):
                return False
        return True

    return every


def _enum(options: list[Any]) -> Predicate:
    """``enum``: equal (as JSON Schema compares) to one of ``options``."""
    if options and all(isinstance(option, str) for option in options):
        # Choices are strings: a string equals one exactly, and nothing else equals a string.
        strings = frozenset(options)
        return lambda value: isinstance(value, str) and value in strings
    return lambda value: any(json_equal(value, option) for option in options)


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _is_array(value: Any) -> bool:
    return isinstance(value, list)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_COMPILED_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "anyOf",
        "description",
        "title",
        "default",
    }
)


def _constant(verdict: bool, _value: Any) -> bool:
    return verdict


def _is_type(value: Any, kind: str) -> bool:
    # JSON Schema's types over Python's JSON values: a bool is not a number, and a float with
    # an integral value is an integer.
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if isinstance(value, bool):
        return False
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return kind == "number" and isinstance(value, int | float)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPE_CHECKS: dict[str, Predicate] = {
    "string": _is_string,
    "boolean": _is_boolean,
    "array": _is_array,
    "integer": _is_integer,
    "number": _is_number,
}
"""One type's check, for a schema that names one: the same verdicts as :func:`_is_type`."""


def _bounds(schema: dict[str, Any]) -> Iterator[Predicate]:
    """The numeric bounds of ``schema``; each ignores values that are not numbers."""
    comparisons: dict[str, Callable[[Any], Predicate]] = {
        "minimum": lambda bound: lambda value: not _is_number(value) or value >= bound,
        "maximum": lambda bound: lambda value: not _is_number(value) or value <= bound,
        "exclusiveMinimum": lambda bound: lambda value: not _is_number(value) or value > bound,
        "exclusiveMaximum": lambda bound: lambda value: not _is_number(value) or value < bound,
    }
    for keyword, bounded in comparisons.items():
        if keyword in schema:
            yield bounded(schema[keyword])


def _array_checks(schema: dict[str, Any]) -> Iterator[Predicate]:
    """The array keywords of ``schema``; each ignores values that are not arrays."""
    lowest, highest = schema.get("minItems"), schema.get("maxItems")
    if lowest is not None or highest is not None:
        yield partial(_sized, lowest, highest)
    prefix = [compile_schema(item) for item in schema.get("prefixItems", ())]
    rest = compile_schema(schema["items"]) if "items" in schema else None
    if prefix or rest is not None:
        yield partial(_items_valid, prefix, rest)


def _sized(lowest: int | None, highest: int | None, value: Any) -> bool:
    if not isinstance(value, list):
        return True
    return (lowest is None or len(value) >= lowest) and (highest is None or len(value) <= highest)


def _items_valid(prefix: list[Predicate], rest: Predicate | None, value: Any) -> bool:
    if not isinstance(value, list):
        return True
    for check, item in zip(prefix, value, strict=False):
        if not check(item):
            return False
    return rest is None or all(rest(item) for item in value[len(prefix) :])


def json_equal(one: Any, two: Any) -> bool:
    """JSON Schema's equality (``enum``, ``const``): ``true`` is not ``1``, ``1.0`` is ``1``."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(map(json_equal, one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(json_equal(one[k], two[k]) for k in one)
    if isinstance(one, str) != isinstance(two, str):
        return False
    if isinstance(one, list | dict) or isinstance(two, list | dict):
        return False
    return bool(one == two)


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


def _signature(parameter: Parameter) -> tuple[Any, ...]:
    # The declared fields that decide a parameter's subschema (derived ones follow from them).
    kind = parameter.type
    choices = parameter.choices
    items = parameter.item_choices
    return (
        parameter.positional,
        tuple(kind) if isinstance(kind, list) else kind,
        tuple(choices) if choices is not None else None,
        parameter.nargs,
        parameter.multiple,
        parameter.count,
        parameter.required,
        parameter.min,
        parameter.max,
        parameter.min_open,
        parameter.max_open,
        tuple(tuple(c) if c is not None else None for c in items) if items else None,
    )


def schema_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Every way ``arguments`` fails ``schema``, as messages (empty when it validates)."""
    return _messages(_validator(schema), arguments)


def _validator(schema: dict[str, Any]) -> Any:
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - only needed for the check

    return Draft202012Validator(schema)


def _messages(validator: Any, arguments: dict[str, Any]) -> list[str]:
    if validator.is_valid(arguments):
        return []
    messages: list[str] = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = ".".join(str(part) for part in error.path)
        messages.append(f"{where}: {error.message}" if where else error.message)
    return messages
