"""The JSON Schemas: generated from the models, committed, printed, and true to the real files."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from exampleguard.schemas import SCHEMA_KINDS, committed_schema_path, schema_text
from tests.support.project import REPOSITORY, run_cli

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
REGENERATE = (
    "regenerate the committed schemas with:\n  python -c 'from exampleguard.schemas import "
    "SCHEMA_KINDS, committed_schema_path, schema_text; [committed_schema_path(k).write_text("
    "schema_text(k)) for k in SCHEMA_KINDS]'\nand review the diff."
)


def validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_text(kind)))


def errors(kind: str, data: Any) -> list[str]:
    return [error.message for error in validator(kind).iter_errors(data)]


def test_the_kinds_are_the_documented_ones() -> None:
    assert SCHEMA_KINDS == (
        "catalog",
        "tree",
        "judge",
        "dispositions",
        "exclusions",
        "doc-exceptions",
        "counts",
        "report",
        "config",
    )
    committed = sorted(path.name for path in committed_schema_path("catalog").parent.glob("*.json"))
    assert committed == sorted(f"{kind}.schema.json" for kind in SCHEMA_KINDS), (
        "a committed schema has no kind (or a kind has no committed schema)"
    )


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_committed_schema_matches_the_models(kind: str) -> None:
    committed = committed_schema_path(kind).read_text(encoding="utf-8")
    assert committed == schema_text(kind), (
        f"exampleguard/schemas/{kind}.schema.json is out of date with the models; {REGENERATE}"
    )


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_schema_is_a_valid_draft_2020_12_schema(kind: str) -> None:
    schema = json.loads(schema_text(kind))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_schema_command_prints_exactly_the_schema(tmp_path: Path, kind: str) -> None:
    result = run_cli(["schema", kind], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == schema_text(kind)
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["schema", "catalogue"], "'catalogue' is not one of"),
        (["schema"], "Missing argument"),
        (["schema", "catalog", "notes.delete"], "takes no TOOL_ID"),
    ],
    ids=["unknown-kind", "no-kind", "tool-id-with-a-format"],
)
def test_schema_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli(args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr


# -- real files validate against their committed schemas ------------------------------------------


def committed(kind: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(committed_schema_path(kind).read_text(encoding="utf-8")))


SAMPLE_FILES = [
    ("catalog", SAMPLE / "catalog.json"),
    ("tree", SAMPLE / "notes.tree.json"),
    ("counts", SAMPLE / "exampleguard-counts.json"),
    ("exclusions", SAMPLE / "dispositions" / "exclusions.toml"),
    ("config", SAMPLE / "exampleguard.toml"),
    ("catalog", REPOSITORY / "agent-catalog.json"),
    ("counts", REPOSITORY / "exampleguard-counts.json"),
    *(
        ("exclusions" if path.name == "exclusions.toml" else "dispositions", path)
        for path in sorted((REPOSITORY / "dispositions").glob("*.toml"))
    ),
]


def read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else tomllib.loads(text)


@pytest.mark.parametrize(
    ("kind", "path"),
    SAMPLE_FILES,
    ids=[f"{kind}:{path.relative_to(REPOSITORY)}" for kind, path in SAMPLE_FILES],
)
def test_real_files_validate_against_their_committed_schema(kind: str, path: Path) -> None:
    problems = [error.message for error in committed(kind).iter_errors(read(path))]
    assert problems == []


def test_the_projects_own_configuration_validates() -> None:
    table = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["tool"]["exampleguard"]
    assert [error.message for error in committed("config").iter_errors(table)] == []


def test_a_report_validates_against_the_report_schema(tmp_path: Path) -> None:
    result = run_cli(
        ["validate", "--format", "json", "--config", str(SAMPLE / "exampleguard.toml")],
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["format"] == "exampleguard.report/v1"
    assert [error.message for error in committed("report").iter_errors(report)] == []


def test_a_report_with_defects_validates_against_the_report_schema(tmp_path: Path) -> None:
    catalog = json.loads((SAMPLE / "catalog.json").read_text())
    catalog["tools"][1]["examples"].append({"command": "notes add 'x' --priority 9 --nope"})
    (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (tmp_path / "exampleguard.toml").write_text(
        f'catalog = "catalog.json"\ntree = {json.dumps(str(SAMPLE / "notes.tree.json"))}\n',
        encoding="utf-8",
    )
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["diagnostics"], "the run found defects"
    assert [error.message for error in committed("report").iter_errors(report)] == []


# -- the schemas are as strict as the loaders ------------------------------------------------------


def sample(name: str) -> Any:
    return read(SAMPLE / name)


def with_change(data: Any, path: tuple[str | int, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(data))
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return copy


STRICTNESS = [
    ("catalog", "catalog.json", ("tools", 0, "examples", 0, "command"), 5),
    ("catalog", "catalog.json", ("tools", 0, "parameters", 0, "nargs"), "-1"),
    ("catalog", "catalog.json", ("tools", 0, "dry_run", "reviewed"), "true"),
    ("catalog", "catalog.json", ("tools", 0, "summmary"), "unknown key"),
    ("catalog", "catalog.json", ("format",), "exampleguard.catalog/v2"),
    ("tree", "notes.tree.json", ("commands", 1, "runnable"), 1),
    ("tree", "notes.tree.json", ("dialect",), "bash"),
    ("counts", "exampleguard-counts.json", ("tools",), "2"),
    ("counts", "exampleguard-counts.json", ("skipped",), 0),
    ("exclusions", "dispositions/exclusions.toml", ("exclusion", 0, "path"), "export"),
    ("config", "exampleguard.toml", ("max_example_chars",), "5"),
]


@pytest.mark.parametrize(
    ("kind", "name", "path", "value"),
    STRICTNESS,
    ids=[f"{kind}-{'.'.join(map(str, path))}" for kind, _, path, value in STRICTNESS],
)
def test_schemas_reject_what_the_loaders_reject(
    kind: str, name: str, path: tuple[str | int, ...], value: Any
) -> None:
    assert errors(kind, sample(name)) == []
    assert errors(kind, with_change(sample(name), path, value)) != []
