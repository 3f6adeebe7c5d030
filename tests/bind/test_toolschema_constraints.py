"""The tool schema says the catalog's constraints, and agrees with the rules on every example.

``schema tool`` carries require-one-of as an ``anyOf`` of ``required``, require-together as
``dependentRequired`` and mutually-exclusive as a ``not``: an agent that fills arguments from
the schema meets the same rules ``validate`` checks. The agreement test gives every subset of a
tool's parameters as an example and compares, example by example, what the rules say with what
the schema says.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from exampleguard._commands.schema import tool_schema
from exampleguard._commands.validate import validate
from exampleguard._config import load_config
from exampleguard._toolschema import argument_schema

PARAMETERS: list[dict[str, Any]] = [
    {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
    {"name": "tag", "flags": ["--tag"]},
    {"name": "all", "flags": ["--all"], "type": "boolean"},
    {"name": "force", "flags": ["--force", "-f"], "type": "boolean"},
    {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean", "default": False},
]
CONSTRAINTS = {
    "require_one_of": [["ids", "tag", "all"]],
    "require_together": [["tag", "force"]],
    "mutually_exclusive": [["ids", "all"], ["tag", "all", "dry_run"]],
}
WORDS = {"ids": "3 4", "tag": "--tag draft", "all": "--all", "force": "-f", "dry_run": "--dry-run"}
CONSTRAINT_CODES = {"require-one-of", "require-together", "mutually-exclusive"}


def _subsets() -> list[tuple[str, ...]]:
    names = list(WORDS)
    return [c for size in range(len(names) + 1) for c in itertools.combinations(names, size)]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("constraints")
    subsets = _subsets()
    tools = []
    pairs = [subsets[i : i + 2] for i in range(0, len(subsets), 2)]
    for number, pair in enumerate(pairs):
        tools.append(
            {
                "id": f"notes.c{number}",
                "command": [f"c{number}"],
                "parameters": PARAMETERS,
                "constraints": CONSTRAINTS,
                "examples": [
                    {"command": " ".join(["notes", f"c{number}", *(WORDS[n] for n in given)])}
                    for given in pair
                ],
            }
        )
    catalog: dict[str, object] = {
        "format": "exampleguard.catalog/v1",
        "program": "notes",
        "dialect": "click",
    }
    catalog["tools"] = tools
    (root / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (root / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    outcome = validate(load_config(None, root))
    assert outcome.report is not None, outcome.unusable
    assert outcome.evaluation is not None
    return outcome


def test_the_schema_carries_the_constraints_and_defaults(evaluated: Any) -> None:
    tool = evaluated.evaluation.contract.tools[0]
    schema = argument_schema(tool)
    assert schema["allOf"] == [
        {"anyOf": [{"required": ["all"]}, {"required": ["ids"]}, {"required": ["tag"]}]},
        {"not": {"anyOf": [{"required": ["all", "ids"]}]}},
        {
            "not": {
                "anyOf": [
                    {"required": ["all", "dry_run"]},
                    {"required": ["all", "tag"]},
                    {"required": ["dry_run", "tag"]},
                ]
            }
        },
    ]
    assert schema["dependentRequired"] == {"force": ["tag"], "tag": ["force"]}
    assert schema["properties"]["dry_run"]["default"] is False
    Draft202012Validator.check_schema(schema)


def test_every_example_the_rules_accept_validates_and_every_one_they_reject_does_not(
    evaluated: Any,
) -> None:
    report = evaluated.report
    tools = {tool.id: tool for tool in evaluated.evaluation.contract.tools}
    seen = 0
    for example in report.examples:
        codes = {d.code for d in example.diagnostics}
        assert codes <= CONSTRAINT_CODES, (example.command, codes)
        assert example.arguments is not None, example.command
        tool = tools[example.tool]
        arguments = dict(example.arguments)
        valid = Draft202012Validator(argument_schema(tool)).is_valid(arguments)
        assert valid == (not codes), (example.command, codes, arguments)
        seen += 1
    assert seen == len(_subsets()) == 32
    assert sum(1 for e in report.examples if e.ok) == 5  # the subsets every rule allows


def test_schema_tool_prints_the_constraints(evaluated: Any) -> None:
    config = evaluated.evaluation.inputs.config
    printed = json.loads(tool_schema(config, "notes.c0").text)
    assert printed["dependentRequired"] == {"force": ["tag"], "tag": ["force"]}
