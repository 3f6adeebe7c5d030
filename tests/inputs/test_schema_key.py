"""``$schema`` at the top of every JSON file exampleguard reads, and the schemas' stable ``$id``.

Editors find a file's schema through its ``$schema`` key. Each row writes a real project whose
file names its schema, runs the real CLI, and checks the file is read as if the key were not
there; a ``$schema`` that is not a string, or one below the top level, is still an error. The
committed schemas must accept the key too, or an editor would flag it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from exampleguard.schemas import SCHEMA_KINDS, committed_schema_path
from tests.support.project import NOTES_TREE, make_project, run_cli

SCHEMA = "./agent-catalog.schema.json"
TOOL = {
    "id": "notes.add",
    "command": ["add"],
    "examples": [{"command": "notes add 'Buy milk' --format json"}],
}


def _with_schema(path: Path, value: Any = SCHEMA) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({"$schema": value, **data}, indent=2), encoding="utf-8")


def _project(root: Path) -> Path:
    (root / "notes.tree.json").write_text(json.dumps(NOTES_TREE), encoding="utf-8")
    return make_project(root, [TOOL], dialect=None, tree="notes.tree.json")


@pytest.mark.parametrize("file", ["catalog.json", "notes.tree.json", "exampleguard-counts.json"])
def test_a_schema_key_at_the_top_is_accepted(tmp_path: Path, file: str) -> None:
    project = _project(tmp_path)
    _with_schema(project / file)
    result = run_cli(["validate", "--format", "concise"], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "All checks passed: 1 example of 1 tool.\n"


def test_a_toml_catalog_may_name_its_schema_too(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "catalog.toml").write_text(
        f'"$schema" = "{SCHEMA}"\nformat = "exampleguard.catalog/v1"\nprogram = "notes"\n\n'
        '[[tools]]\nid = "notes.add"\ncommand = ["add"]\n'
        "examples = [{command = \"notes add 'Buy milk'\"}]\n",
        encoding="utf-8",
    )
    (project / "exampleguard.toml").write_text(
        'catalog = "catalog.toml"\ntree = "notes.tree.json"\n', encoding="utf-8"
    )
    result = run_cli(["validate", "--format", "concise"], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_catalog_with_a_schema_key_still_reports_its_own_errors(tmp_path: Path) -> None:
    # Not streamed (an error elsewhere): the whole reading sets `$schema` aside just the same.
    project = _project(tmp_path)
    path = project / "catalog.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tools"][0]["exampels"] = []
    path.write_text(json.dumps({"$schema": SCHEMA, **data}), encoding="utf-8")
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 2
    assert "unknown key 'exampels' in tools[0]" in result.stderr
    assert "$schema" not in result.stderr


def test_counts_write_keeps_the_schema_key(tmp_path: Path) -> None:
    project = _project(tmp_path)
    counts = project / "exampleguard-counts.json"
    _with_schema(counts, "./counts.schema.json")
    catalog = project / "catalog.json"
    data = json.loads(catalog.read_text(encoding="utf-8"))
    data["tools"][0]["examples"].append({"command": "notes add 'Call Bob'"})
    catalog.write_text(json.dumps(data), encoding="utf-8")
    assert run_cli(["counts", "--write"], cwd=project).returncode == 0
    written = json.loads(counts.read_text(encoding="utf-8"))
    assert next(iter(written)) == "$schema"
    assert written["$schema"] == "./counts.schema.json"
    assert written["examples"] == 2
    assert run_cli(["validate"], cwd=project).returncode == 0


def test_report_merge_reads_reports_that_name_their_schema(tmp_path: Path) -> None:
    project = _project(tmp_path)
    for shard in (1, 2):
        args = ["validate", "--shard", f"{shard}/2", "--format", "json", "-o", f"s{shard}.json"]
        assert run_cli(args, cwd=project).returncode == 0
        _with_schema(project / f"s{shard}.json", "./report.schema.json")
    merged = run_cli(["report", "merge", "s1.json", "s2.json"], cwd=project)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert json.loads(merged.stdout)["ok"] is True


@pytest.mark.parametrize(
    ("file", "message"),
    [
        pytest.param(
            "catalog.json", "catalog.json: $schema must be a string", id="catalog: a number"
        ),
        pytest.param(
            "notes.tree.json", "notes.tree.json: $schema must be a string", id="tree: a number"
        ),
        pytest.param(
            "exampleguard-counts.json",
            "exampleguard-counts.json: $schema must be a string",
            id="counts: a number",
        ),
    ],
)
def test_a_schema_key_that_is_not_a_string_is_an_error(
    tmp_path: Path, file: str, message: str
) -> None:
    project = _project(tmp_path)
    _with_schema(project / file, 7)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 2
    assert "file-invalid" in result.stderr
    assert message in result.stderr


def test_a_schema_key_below_the_top_is_an_unknown_key(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / "catalog.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tools"][0]["$schema"] = SCHEMA
    path.write_text(json.dumps(data), encoding="utf-8")
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 2
    assert "unknown key '$schema' in tools[0]" in result.stderr


@pytest.mark.parametrize("kind", ["catalog", "tree", "counts", "report"])
def test_the_committed_schemas_accept_the_schema_key(kind: str) -> None:
    schema = json.loads(committed_schema_path(kind).read_text(encoding="utf-8"))
    errors = {
        error.message for error in Draft202012Validator(schema).iter_errors({"$schema": "./x.json"})
    }
    assert not any("$schema" in message for message in errors), errors
    bad = {error.message for error in Draft202012Validator(schema).iter_errors({"$schema": 7})}
    assert "7 is not of type 'string'" in bad


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_every_schema_has_a_stable_urn_id(kind: str) -> None:
    schema = json.loads(committed_schema_path(kind).read_text(encoding="utf-8"))
    assert schema["$id"] == f"urn:exampleguard:schema:{kind}:v1"
