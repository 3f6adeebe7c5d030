"""Strict tool schemas: ``exampleguard schema tool ID`` and the check of every example against it.

A schema is JSON Schema draft 2020-12 in the closed form strict function-calling APIs accept:
``type: object``, every property typed, ``required``, ``enum`` for choices, arrays for multiple
and variadic parameters, ``additionalProperties: false``. The argument object the binder makes
for any example the framework accepts must validate against it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from exampleguard._config import load_config
from exampleguard._pipeline import load_inputs, run
from exampleguard._toolschema import argument_schema, schema_errors
from tests.support.frameworks import argparse_accepts
from tests.support.project import REPOSITORY, run_cli

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

CLICK_TOOLS = {
    "notes.add": ["add"],
    "notes.delete": ["delete"],
    "notes.grep": ["grep"],
    "notes.run": ["run"],
    "notes.tags.merge": ["tags", "merge"],
    "notes.tags.rename": ["tags", "rename"],
    "notes.view.page": ["view", "page"],
    "notes.view.show": ["view", "show"],
}
ARGPARSE_TOOLS = {
    "notes.add": ["add"],
    "notes.delete": ["delete"],
    "notes.run": ["run"],
    "notes.sync": ["sync"],
    "notes.tags.merge": ["tags", "merge"],
    "notes.tags.rename": ["tags", "rename"],
}


def _make(
    root: Path, spec: str, tools: dict[str, list[str]], examples: dict[str, list[str]] | None = None
) -> Path:
    root.mkdir(parents=True)
    catalog_tools: list[dict[str, Any]] = []
    for tool_id, command in tools.items():
        tool: dict[str, Any] = {"id": tool_id, "command": command}
        if tool_id == "notes.delete":
            tool["summary"] = "Delete notes by id or by tag"
            # A catalog overlay may make an optional flag required; the schema must say so.
            tool["parameters"] = [
                {"name": "format", "flags": ["--format"], "required": True, "description": "Fmt."}
            ]
        tool["examples"] = [{"command": c} for c in (examples or {}).get(tool_id, [])]
        catalog_tools.append(tool)
    catalog = {"format": "exampleguard.catalog/v1", "program": "notes", "tools": catalog_tools}
    (root / "catalog.json").write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    (root / "exampleguard.toml").write_text(
        f'catalog = "catalog.json"\ntree = "{spec}"\n', encoding="utf-8"
    )
    return root


def _schema(root: Path, tool_id: str) -> dict[str, Any]:
    result = run_cli(["schema", "tool", tool_id], cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    schema: dict[str, Any] = json.loads(result.stdout)
    return schema


@pytest.fixture(scope="module")
def click_schemas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = _make(tmp_path_factory.mktemp("click") / "p", "click:click_app:cli", CLICK_TOOLS)
    wanted = ("notes.add", "notes.delete", "notes.grep", "notes.tags.merge")
    return {tool_id: _schema(root, tool_id) for tool_id in wanted}


@pytest.fixture(scope="module")
def argparse_schemas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = _make(
        tmp_path_factory.mktemp("argparse") / "p", "argparse:argparse_app:parser", ARGPARSE_TOOLS
    )
    wanted = ("notes.add", "notes.delete", "notes.run")
    return {tool_id: _schema(root, tool_id) for tool_id in wanted}


def _all(
    click_schemas: dict[str, dict[str, Any]], argparse_schemas: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    return [*click_schemas.values(), *argparse_schemas.values()]


def test_every_schema_is_a_closed_draft_2020_12_object(
    click_schemas: dict[str, dict[str, Any]], argparse_schemas: dict[str, dict[str, Any]]
) -> None:
    for schema in _all(click_schemas, argparse_schemas):
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == DIALECT
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        for name, prop in schema["properties"].items():
            assert {"type", "enum", "anyOf"} & set(prop), f"{schema['title']}.{name} is untyped"


CLICK_PROPERTIES = [
    ("notes.add", "text", {"type": "string"}),
    ("notes.add", "priority", {"type": "integer"}),
    ("notes.add", "color", {"type": "boolean"}),
    ("notes.add", "verbose", {"type": "integer", "minimum": 1}),
    (
        "notes.add",
        "point",
        {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
    ),
    (
        "notes.add",
        "pair",
        {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": False,
            "minItems": 2,
            "maxItems": 2,
        },
    ),
    ("notes.add", "archived", {"type": "boolean"}),
    ("notes.delete", "ids", {"type": "array", "items": {"type": "integer"}, "minItems": 1}),
    ("notes.delete", "tag", {"type": "array", "items": {"type": "string"}, "minItems": 1}),
    ("notes.delete", "format", {"enum": ["text", "json"]}),
    ("notes.delete", "limit", {"type": "integer", "minimum": 1, "maximum": 10}),
    ("notes.delete", "ratio", {"type": "number", "exclusiveMinimum": 0, "maximum": 1}),
    (
        "notes.grep",
        "exclude",
        {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1},
    ),
    ("notes.grep", "paths", {"type": "array", "items": {"type": "string"}, "minItems": 1}),
    (
        "notes.tags.merge",
        "pair",
        {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
    ),
]


@pytest.mark.parametrize(
    ("tool", "name", "expected"),
    [pytest.param(*case, id=f"click {case[0]} {case[1]}") for case in CLICK_PROPERTIES],
)
def test_click_parameters_are_typed(
    click_schemas: dict[str, dict[str, Any]], tool: str, name: str, expected: dict[str, Any]
) -> None:
    found = dict(click_schemas[tool]["properties"][name])
    found.pop("description", None)
    found.pop("default", None)  # annotations, tested on their own below
    assert found == expected


ARGPARSE_PROPERTIES = [
    ("notes.add", "priority", {"enum": [1, 2, 3]}),
    ("notes.add", "tags", {"type": "array", "items": {"type": "string"}, "minItems": 1}),
    ("notes.add", "ratio", {"type": "number"}),
    ("notes.delete", "format", {"enum": ["text", "json"]}),
    ("notes.delete", "verbose", {"type": "integer", "minimum": 1}),
]


@pytest.mark.parametrize(
    ("tool", "name", "expected"),
    [pytest.param(*case, id=f"argparse {case[0]} {case[1]}") for case in ARGPARSE_PROPERTIES],
)
def test_argparse_parameters_are_typed(
    argparse_schemas: dict[str, dict[str, Any]], tool: str, name: str, expected: dict[str, Any]
) -> None:
    found = dict(argparse_schemas[tool]["properties"][name])
    found.pop("description", None)
    found.pop("default", None)
    assert found == expected


def test_defaults_are_in_the_schema(argparse_schemas: dict[str, dict[str, Any]]) -> None:
    properties = argparse_schemas["notes.delete"]["properties"]
    assert properties["format"]["default"] == "text"
    assert properties["verbose"]["default"] == 0
    assert "default" not in argparse_schemas["notes.add"]["properties"]["text"]


@pytest.mark.parametrize(
    ("framework", "tool", "required"),
    [
        pytest.param("click", "notes.add", ["text", "priority"], id="click add"),
        pytest.param("click", "notes.delete", ["format"], id="click delete (catalog overlay)"),
        pytest.param("click", "notes.grep", ["pattern", "paths"], id="click grep"),
        pytest.param("click", "notes.tags.merge", ["pair", "into"], id="click tags merge"),
        pytest.param("argparse", "notes.add", ["text", "priority"], id="argparse add"),
        # `ids` is nargs="*": argparse accepts no ids at all, so it is not required.
        pytest.param("argparse", "notes.delete", ["format"], id="argparse delete (nargs *)"),
        # `argv` is argparse.REMAINDER: `notes run` alone is accepted.
        pytest.param("argparse", "notes.run", [], id="argparse run (REMAINDER)"),
    ],
)
def test_required_lists_exactly_what_must_be_given(
    click_schemas: dict[str, dict[str, Any]],
    argparse_schemas: dict[str, dict[str, Any]],
    framework: str,
    tool: str,
    required: list[str],
) -> None:
    schemas = click_schemas if framework == "click" else argparse_schemas
    assert sorted(schemas[tool]["required"]) == sorted(required)


def test_descriptions_come_along(click_schemas: dict[str, dict[str, Any]]) -> None:
    assert click_schemas["notes.delete"]["description"] == "Delete notes by id or by tag"
    assert click_schemas["notes.delete"]["properties"]["format"]["description"] == "Fmt."


REJECTED = [
    pytest.param({"priority": 1}, "'text' is a required property", id="missing required"),
    pytest.param({"text": "x", "priority": "1"}, "is not of type 'integer'", id="wrong type"),
    pytest.param({"text": "x", "priority": 1, "bogus": 1}, "Additional properties", id="extra"),
    pytest.param({"text": "x", "priority": 1, "point": [1.0]}, "is too short", id="tuple short"),
    pytest.param(
        {"text": "x", "priority": 1, "pair": ["a", "b"]}, "is not of type 'integer'", id="tuple"
    ),
    pytest.param({"text": "x", "priority": 1, "verbose": 0}, "less than the minimum", id="count"),
]


@pytest.mark.parametrize(("arguments", "fragment"), REJECTED)
def test_the_schema_rejects_arguments_the_command_would_not(
    click_schemas: dict[str, dict[str, Any]], arguments: dict[str, Any], fragment: str
) -> None:
    errors = schema_errors(click_schemas["notes.add"], arguments)
    assert any(fragment in error for error in errors), errors


def test_the_schema_rejects_a_value_outside_the_choices(
    click_schemas: dict[str, dict[str, Any]],
) -> None:
    errors = schema_errors(click_schemas["notes.delete"], {"format": "yaml"})
    assert errors == ["format: 'yaml' is not one of ['text', 'json']"]


def test_unknown_tool_is_exit_2(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "p", ignore=shutil.ignore_patterns("*.lock"))
    result = run_cli(["schema", "tool", "notes.nope"], cwd=tmp_path / "p")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "no tool 'notes.nope'" in result.stderr
    missing = run_cli(["schema", "tool"], cwd=tmp_path / "p")
    assert missing.returncode == 2


# -- every example of real catalogs validates against its tool's schema --------------------------


def _examples_against_schemas(config_path: Path) -> list[tuple[str, int, dict[str, Any]]]:
    config = load_config(config_path, config_path.parent)
    evaluation = run(load_inputs(config, with_counts=False), check_counts=False)
    schemas = {tool.id: argument_schema(tool) for tool in evaluation.contract.tools}
    checked = []
    # The catalog's own examples: those of the documentation belong to no tool.
    for result in (r for r in evaluation.examples if r.tool is not None):
        assert result.arguments is not None, f"{result.address} did not bind: {result.diagnostics}"
        assert result.tool is not None, result.address
        Draft202012Validator.check_schema(schemas[result.tool])
        assert schema_errors(schemas[result.tool], result.arguments) == [], result.address
        checked.append((result.tool, result.index, result.arguments))
    return checked


def test_every_example_of_the_sample_project_validates() -> None:
    checked = _examples_against_schemas(SAMPLE / "exampleguard.toml")
    assert len(checked) == 3


def test_every_example_of_the_repository_catalog_validates() -> None:
    checked = _examples_against_schemas(REPOSITORY / "pyproject.toml")
    catalog = json.loads((REPOSITORY / "agent-catalog.json").read_text(encoding="utf-8"))
    assert len(checked) == sum(len(tool.get("examples", [])) for tool in catalog["tools"]) > 0


ARGPARSE_ACCEPTED = [
    pytest.param("notes.delete", "notes delete --all --format json", id="delete without ids"),
    pytest.param("notes.delete", "notes delete 1 2 --format json", id="delete with ids"),
    pytest.param("notes.run", "notes run", id="run without argv"),
    pytest.param("notes.run", "notes run ls -la", id="run with argv"),
    pytest.param("notes.add", "notes add hi --priority 2 --label", id="bare optional value"),
    pytest.param("notes.add", "notes add hi --priority 2 --extra a --extra b c", id="extend"),
    pytest.param("notes.add", "notes add hi --priority 2 --extra --extra a", id="extend empty"),
]


@pytest.mark.parametrize(("tool", "command"), ARGPARSE_ACCEPTED)
def test_examples_argparse_accepts_pass_the_schema_check(
    tmp_path: Path, tool: str, command: str
) -> None:
    import argparse_app

    assert argparse_accepts(argparse_app.build_parser(), command.split()[1:])
    root = _make(tmp_path / "p", "argparse:argparse_app:parser", ARGPARSE_TOOLS, {tool: [command]})
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    (example,) = report["examples"]
    assert [d["code"] for d in example["diagnostics"]] == [], example["diagnostics"]
    assert example["ok"] is True
    assert schema_errors(_schema(root, tool), example["arguments"]) == []
