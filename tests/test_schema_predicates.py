"""The compiled schema predicates agree with the jsonschema validator, value for value.

``validate`` judges every example's arguments with predicates compiled from the argument
schemas (:func:`exampleguard.toolschema.compile_schema`), not with jsonschema; these
differential tests generate schemas made of the keywords those schemas use, and JSON values
near their edges (booleans beside integers, integral floats, bounds, array lengths), and ask
both for a verdict.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from exampleguard.toolschema import DIALECT, compile_schema, json_equal

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=5),
    st.floats(min_value=-5, max_value=5, allow_nan=False).map(lambda f: round(f * 2) / 2),
    st.sampled_from(["", "a", "text", "json", "1", "true"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
BOUNDS = st.integers(min_value=-3, max_value=3) | st.sampled_from([0.5, -1.5, 2.0])


@st.composite
def base_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A schema of scalar keywords: a type (or several), an enum, numeric bounds."""
    schema: dict[str, Any] = {}
    if draw(st.booleans()):
        schema["type"] = draw(TYPES | st.lists(TYPES, min_size=1, max_size=3, unique=True))
    if draw(st.booleans()):
        schema["enum"] = draw(st.lists(SCALARS, min_size=1, max_size=4))
    for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.integers(0, 3)) == 0:
            schema[keyword] = draw(BOUNDS)
    if draw(st.integers(0, 4)) == 0:
        schema["description"] = "annotation only"
    return schema


def array_schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Array keywords around ``inner`` subschemas; ``anyOf`` of them."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "array"} if draw(st.booleans()) else {}
        if draw(st.booleans()):
            schema["prefixItems"] = draw(st.lists(inner, min_size=1, max_size=3))
        if draw(st.booleans()):
            schema["items"] = draw(inner | st.just(False))
        if draw(st.booleans()):
            schema["minItems"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            schema["maxItems"] = draw(st.integers(0, 3))
        return schema

    any_of = st.lists(inner, min_size=1, max_size=3).map(lambda branches: {"anyOf": branches})
    return build() | any_of


SCHEMAS = st.recursive(base_schemas() | st.booleans(), array_schemas, max_leaves=6)


@given(schema=SCHEMAS, value=VALUES)
def test_a_compiled_schema_judges_a_value_as_jsonschema_does(schema: Any, value: Any) -> None:
    expected = Draft202012Validator(
        {"$schema": DIALECT, **schema} if schema is not True and schema is not False else schema
    ).is_valid(value)
    assert compile_schema(schema)(value) is expected


@given(one=VALUES, two=VALUES)
def test_equality_is_json_schemas(one: Any, two: Any) -> None:
    validator = Draft202012Validator({"enum": [two]})
    assert json_equal(one, two) is validator.is_valid(one)


def test_the_edges_jsonschema_draws() -> None:
    integer = compile_schema({"type": "integer", "minimum": 1, "maximum": 3})
    assert [integer(v) for v in (1, 3.0, True, 0, 4, "2", 2.5)] == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    choice = compile_schema({"enum": ["json", 1]})
    assert [choice(v) for v in ("json", 1, 1.0, True, "1")] == [True, True, True, False, False]
    pair = compile_schema({"type": "array", "prefixItems": [{"type": "string"}], "items": False})
    assert [pair(v) for v in (["a"], [], ["a", "b"], [1], ("a",))] == [
        True,
        True,
        False,
        False,
        False,
    ]
