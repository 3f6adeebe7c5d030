"""Binding the catalog to the tree: overlays, coverage of paths, ids, aliases, dry-run flags.

End to end: each case writes a catalog and a tree snapshot, runs ``exampleguard validate
--format json`` and compares the catalog-level diagnostics of the JSON report — code, tool, key
path and line — with the expectation. Every catalog is written with one parameter, example or
rule per line, so the expected line is simply the line of a unique marker.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.cases import collected_cases, run_in_parallel
from tests.support.project import run_cli

CATALOG_CODES = {
    "duplicate-tool",
    "alias-collision",
    "tool-unbound",
    "overlay-drift",
    "dryrun-flag-unknown",
    "constraint-invalid",
}

TREE = {
    "format": "exampleguard.tree/v1",
    "program": "notes",
    "dialect": "click",
    "commands": [
        {
            "path": [],
            "runnable": False,
            "parameters": [{"name": "profile", "flags": ["--profile"]}],
            "settings": {"allow_interspersed_args": False, "allow_extra_args": True},
        },
        {
            "path": ["delete"],
            "aliases": [["rm"]],
            "runnable": True,
            "parameters": [
                {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
                {"name": "tag", "flags": ["--tag", "-t"], "multiple": True},
                {"name": "all", "flags": ["--all"], "type": "boolean"},
                {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
                {"name": "limit", "flags": ["--limit"], "type": "integer"},
                {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"},
                {"name": "yes", "flags": ["-y", "--yes"], "type": "boolean"},
            ],
        },
        {
            "path": ["add"],
            "runnable": True,
            "parameters": [
                {"name": "text", "positional": True},
                {"name": "priority", "flags": ["--priority"], "type": "integer", "required": True},
                {
                    "name": "color",
                    "flags": ["--color"],
                    "negation_flags": ["--no-color"],
                    "type": "boolean",
                },
            ],
        },
        {"path": ["tags"], "runnable": False, "parameters": []},
        {
            "path": ["tags", "rename"],
            "runnable": True,
            "parameters": [
                {"name": "old", "positional": True},
                {"name": "new", "positional": True},
            ],
        },
    ],
}


def render_catalog(tools: list[dict[str, Any]], dialect: str | None) -> str:
    """The catalog as JSON with each parameter, example and rule block on a line of its own."""
    lines = ["{", '  "format": "exampleguard.catalog/v1",', '  "program": "notes",']
    if dialect is not None:
        lines.append(f'  "dialect": "{dialect}",')
    rendered = []
    for tool in tools:
        head = {key: tool[key] for key in ("id", "command", "aliases") if key in tool}
        parts = [json.dumps(head)[1:-1]]
        for key in ("parameters", "examples"):
            if key in tool:
                items = ",\n".join("       " + json.dumps(item) for item in tool[key])
                parts.append(f'"{key}": [\n{items}\n     ]')
        for key in ("constraints", "dry_run"):
            if key in tool:
                parts.append(f'"{key}": {json.dumps(tool[key])}')
        rendered.append("    {" + ",\n     ".join(parts) + "}")
    lines += ['  "tools": [', ",\n".join(rendered), "  ]", "}"]
    return "\n".join(lines) + "\n"


def line_of(text: str, marker: str, nth: int = 0) -> int:
    start = -1
    for _ in range(nth + 1):
        start = text.index(marker, start + 1)
    return text.count("\n", 0, start) + 1


@dataclass(frozen=True)
class Expect:
    """A catalog-level diagnostic: code, tool id, key path, and the marker on its line."""

    code: str
    tool: str | None
    key: str
    marker: str
    nth: int = 0
    message: str = ""


@dataclass(frozen=True)
class Case:
    id: str
    tools: list[dict[str, Any]]
    expect: list[Expect] = field(default_factory=list)
    dialect: str | None = None
    tree: bool = True


def delete(**fields: Any) -> dict[str, Any]:
    return {"id": "notes.delete", "command": ["delete"], **fields}


def add(**fields: Any) -> dict[str, Any]:
    return {"id": "notes.add", "command": ["add"], **fields}


REVIEWED = {"reviewed": True, "evidence": "notes/cli.py: --dry-run lists and exits"}

CASES = [
    # -- overlays that are allowed ----------------------------------------------------------------
    Case(
        "overlay-adds-a-description",
        [delete(parameters=[{"name": "tag", "flags": ["--tag"], "description": "A tag."}])],
    ),
    Case(
        "overlay-makes-an-optional-flag-required",
        [delete(parameters=[{"name": "tag", "flags": ["--tag", "-t"], "required": True}])],
    ),
    Case(
        "overlay-restates-the-tree-exactly",
        [
            delete(
                parameters=[
                    {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
                    {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
                    {"name": "limit", "flags": ["--limit"], "type": "integer"},
                ]
            ),
            add(parameters=[{"name": "priority", "flags": ["--priority"], "required": True}]),
        ],
    ),
    Case(
        "overlay-names-the-negation",
        [
            add(
                parameters=[
                    {"name": "color", "flags": ["--color"], "negation_flags": ["--no-color"]}
                ]
            )
        ],
    ),
    Case(
        "constraints-on-tree-parameters",
        [delete(constraints={"mutually_exclusive": [["ids", "all"], ["tag", "all"]]})],
    ),
    Case("catalog-dialect-matches-the-tree", [delete()], dialect="click"),
    Case("catalog-alias-that-routes", [delete(aliases=[["rm"]])]),
    Case("dry-run-flag-accepted", [delete(dry_run={"flag": "--dry-run", **REVIEWED})]),
    Case("dry-run-command-is-itself-a-preview", [delete(dry_run={"flag": None, **REVIEWED})]),
    Case("tool-on-a-nested-command", [{"id": "notes.tags.rename", "command": ["tags", "rename"]}]),
    # -- overlays that drift -------------------------------------------------------------------
    Case(
        "overlay-names-a-flag-the-leaf-lacks",
        [delete(parameters=[{"name": "recursive", "flags": ["--recursive"]}])],
        [Expect("overlay-drift", "notes.delete", "tools[0].parameters[0]", '"--recursive"')],
    ),
    Case(
        "overlay-adds-a-spelling",
        [delete(parameters=[{"name": "tag", "flags": ["--tag", "--tags"]}])],
        [
            Expect(
                "overlay-drift",
                "notes.delete",
                "tools[0].parameters[0]",
                '"--tags"',
                message="--tags",
            )
        ],
    ),
    Case(
        "overlay-wrong-type",
        [delete(parameters=[{"name": "limit", "flags": ["--limit"], "type": "string"}])],
        [
            Expect(
                "overlay-drift",
                "notes.delete",
                "tools[0].parameters[0]",
                '"--limit"',
                message="type",
            )
        ],
    ),
    Case(
        "overlay-wrong-choices",
        [delete(parameters=[{"name": "format", "flags": ["--format"], "choices": ["xml"]}])],
        [
            Expect(
                "overlay-drift",
                "notes.delete",
                "tools[0].parameters[0]",
                '"xml"',
                message="choices",
            )
        ],
    ),
    Case(
        "overlay-wrong-multiple",
        [delete(parameters=[{"name": "tag", "flags": ["--tag"], "multiple": False}])],
        [
            Expect(
                "overlay-drift",
                "notes.delete",
                "tools[0].parameters[0]",
                '"--tag"',
                message="multiple",
            )
        ],
    ),
    Case(
        "overlay-wrong-arity",
        [delete(parameters=[{"name": "all", "flags": ["--all"], "type": "boolean", "nargs": 1}])],
        [
            Expect(
                "overlay-drift",
                "notes.delete",
                "tools[0].parameters[0]",
                '"--all"',
                message="nargs",
            )
        ],
    ),
    Case(
        "overlay-marks-a-required-parameter-optional",
        [add(parameters=[{"name": "priority", "flags": ["--priority"], "required": False}])],
        [
            Expect(
                "overlay-drift",
                "notes.add",
                "tools[0].parameters[0]",
                '"--priority"',
                message="optional",
            )
        ],
    ),
    Case(
        "overlay-marks-a-required-positional-optional",
        [add(parameters=[{"name": "text", "positional": True, "required": False}])],
        [Expect("overlay-drift", "notes.add", "tools[0].parameters[0]", '"text"')],
    ),
    Case(
        "overlay-invents-a-positional",
        [delete(parameters=[{"name": "pattern", "positional": True}])],
        [Expect("overlay-drift", "notes.delete", "tools[0].parameters[0]", '"pattern"')],
    ),
    Case(
        "overlay-turns-a-positional-into-an-option",
        [delete(parameters=[{"name": "ids", "flags": ["--ids"]}])],
        [Expect("overlay-drift", "notes.delete", "tools[0].parameters[0]", '"--ids"')],
    ),
    Case(
        "catalog-dialect-differs-from-the-tree",
        [delete()],
        [Expect("overlay-drift", None, "dialect", '"dialect"', message="argparse")],
        dialect="argparse",
    ),
    Case(
        "catalog-alias-that-does-not-route",
        [delete(aliases=[["rm"], ["remove"]])],
        [
            Expect(
                "overlay-drift",
                "notes.delete",
                "tools[0].aliases[1]",
                '"aliases"',
                message="remove",
            )
        ],
    ),
    # -- paths ----------------------------------------------------------------------------------
    Case(
        "tool-path-missing",
        [delete(), {"id": "notes.export", "command": ["export"]}],
        [Expect("tool-unbound", "notes.export", "tools[1].command", '"notes.export"')],
    ),
    Case(
        "tool-path-is-a-group",
        [{"id": "notes.tags", "command": ["tags"]}],
        [Expect("tool-unbound", "notes.tags", "tools[0].command", '"notes.tags"', message="group")],
    ),
    Case(
        "tool-path-too-deep",
        [{"id": "notes.delete.all", "command": ["delete", "all"]}],
        [Expect("tool-unbound", "notes.delete.all", "tools[0].command", '"notes.delete.all"')],
    ),
    Case(
        "tool-path-misspelt",
        [{"id": "notes.delete", "command": ["delet"]}],
        [Expect("tool-unbound", "notes.delete", "tools[0].command", '"delet"', message="delete")],
    ),
    Case(
        "two-tools-on-one-path",
        [delete(), {"id": "notes.remove", "command": ["delete"]}],
        [Expect("alias-collision", "notes.remove", "tools[1].command", '"notes.remove"')],
    ),
    Case(
        "a-tool-on-another-tools-alias",
        [delete(), {"id": "notes.rm", "command": ["rm"]}],
        [Expect("alias-collision", "notes.rm", "tools[1].command", '"notes.rm"')],
    ),
    Case(
        "duplicate-tool-ids",
        [delete(), {"id": "notes.delete", "command": ["add"]}],
        [Expect("duplicate-tool", "notes.delete", "tools[1].id", '"notes.delete"', nth=1)],
    ),
    # -- dry-run flags and constraints -------------------------------------------------------------
    Case(
        "dry-run-flag-not-accepted",
        [delete(dry_run={"flag": "--preview", **REVIEWED})],
        [Expect("dryrun-flag-unknown", "notes.delete", "tools[0].dry_run.flag", '"--preview"')],
    ),
    Case(
        "dry-run-flag-takes-a-value",
        [delete(dry_run={"flag": "--limit", **REVIEWED})],
        [
            Expect(
                "dryrun-flag-unknown",
                "notes.delete",
                "tools[0].dry_run.flag",
                '"flag": "--limit"',
                message="takes a value",
            )
        ],
    ),
    Case(
        "constraint-names-an-unknown-parameter",
        [delete(constraints={"require_one_of": [["tag", "ghost"]]})],
        [
            Expect(
                "constraint-invalid",
                "notes.delete",
                "tools[0].constraints.require_one_of[0]",
                '"ghost"',
                message="ghost",
            )
        ],
    ),
    Case(
        "constraint-group-of-one",
        [delete(constraints={"mutually_exclusive": [["tag"]]})],
        [
            Expect(
                "constraint-invalid",
                "notes.delete",
                "tools[0].constraints.mutually_exclusive[0]",
                '"mutually_exclusive"',
            )
        ],
    ),
    # -- without a tree the catalog is the truth ---------------------------------------------------
    Case(
        "no-tree-catalog-is-the-truth",
        [
            delete(
                aliases=[["rm"]],
                parameters=[
                    {"name": "tag", "flags": ["--tag"]},
                    {"name": "force", "flags": ["--force"], "type": "boolean"},
                ],
                constraints={"mutually_exclusive": [["tag", "force"]]},
                dry_run={"flag": "--force", **REVIEWED},
            ),
            {"id": "notes.export", "command": ["export"]},
        ],
        dialect="click",
        tree=False,
    ),
    Case(
        "no-tree-two-tools-on-one-path",
        [delete(), {"id": "notes.remove", "command": ["delete"]}],
        [Expect("alias-collision", "notes.remove", "tools[1].command", '"notes.remove"')],
        dialect="click",
        tree=False,
    ),
    Case(
        "no-tree-alias-is-another-tools-command",
        [delete(), add(aliases=[["delete"]])],
        [Expect("alias-collision", "notes.add", "tools[1].aliases[0]", '"aliases"')],
        dialect="click",
        tree=False,
    ),
    Case(
        "no-tree-duplicate-ids",
        [delete(), {"id": "notes.delete", "command": ["add"]}],
        [Expect("duplicate-tool", "notes.delete", "tools[1].id", '"notes.delete"', nth=1)],
        dialect="click",
        tree=False,
    ),
    Case(
        "no-tree-dry-run-flag-not-declared",
        [
            delete(
                parameters=[{"name": "tag", "flags": ["--tag"]}],
                dry_run={"flag": "--dry-run", **REVIEWED},
            )
        ],
        [Expect("dryrun-flag-unknown", "notes.delete", "tools[0].dry_run.flag", '"--dry-run"')],
        dialect="click",
        tree=False,
    ),
    Case(
        "no-tree-constraint-names-an-unknown-parameter",
        [
            delete(
                parameters=[{"name": "tag", "flags": ["--tag"]}],
                constraints={"require_together": [["tag", "all"]]},
            )
        ],
        [
            Expect(
                "constraint-invalid",
                "notes.delete",
                "tools[0].constraints.require_together[0]",
                '"require_together"',
                message="'all'",
            )
        ],
        dialect="click",
        tree=False,
    ),
]


# -- running the cases concurrently ---------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    catalog: str
    returncode: int
    report: dict[str, Any]
    stderr: str


def write_project(
    root: Path, tools: list[dict[str, Any]], *, dialect: str | None, tree: bool
) -> str:
    catalog = render_catalog(tools, dialect)
    (root / "catalog.json").write_text(catalog, encoding="utf-8")
    config = 'catalog = "catalog.json"\n'
    if tree:
        (root / "notes.tree.json").write_text(json.dumps(TREE, indent=2), encoding="utf-8")
        config += 'tree = "notes.tree.json"\n'
    (root / "exampleguard.toml").write_text(config, encoding="utf-8")
    return catalog


def run_case(root: Path, case: Case) -> Outcome:
    catalog = write_project(root, case.tools, dialect=case.dialect, tree=case.tree)
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout) if result.stdout else {}
    return Outcome(catalog, result.returncode, report, result.stderr)


@pytest.fixture(scope="module")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[Outcome]]]:
    selected = collected_cases(request, Case)
    with run_in_parallel(selected, run_case, tmp_path_factory.mktemp) as futures:
        yield futures


def test_case_ids_are_unique() -> None:
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_catalog_bound_to_tree(case: Case, outcomes: dict[str, Future[Outcome]]) -> None:
    outcome = outcomes[case.id].result()
    assert outcome.report, f"no JSON report (exit {outcome.returncode}):\n{outcome.stderr}"
    found = [d for d in outcome.report["diagnostics"] if d["code"] in CATALOG_CODES]
    shown = [(d["code"], d["tool"], d["location"], d["message"]) for d in found]
    assert len(found) == len(case.expect), shown
    for expect, diagnostic in zip(case.expect, found, strict=True):
        assert (diagnostic["code"], diagnostic["tool"]) == (expect.code, expect.tool), shown
        assert diagnostic["file"] == "catalog.json"
        assert diagnostic["location"]["key"] == expect.key, shown
        line = line_of(outcome.catalog, expect.marker, expect.nth)
        assert diagnostic["location"]["line"] == line, (shown, outcome.catalog)
        assert expect.message in diagnostic["message"]
        assert diagnostic["severity"] == "error"
    if case.expect:
        assert outcome.returncode == 1
        assert outcome.report["ok"] is False


# -- what binding means for the examples ----------------------------------------------------------


def validate_examples(
    root: Path, tools: list[dict[str, Any]], *, tree: bool = True, dialect: str | None = None
) -> tuple[int, dict[str, Any]]:
    write_project(root, tools, dialect=dialect, tree=tree)
    result = run_cli(["validate", "--format", "json"], cwd=root)
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def example_codes(report: dict[str, Any]) -> dict[str, list[str]]:
    return {
        f"{example['tool']}[{example['index']}]": sorted(d["code"] for d in example["diagnostics"])
        for example in report["examples"]
    }


def test_a_required_overlay_is_enforced_in_validate(tmp_path: Path) -> None:
    tools = [
        delete(
            parameters=[{"name": "tag", "flags": ["--tag", "-t"], "required": True}],
            examples=[{"command": "notes delete 3"}, {"command": "notes rm -t draft"}],
        )
    ]
    _, report = validate_examples(tmp_path, tools)
    assert example_codes(report) == {"notes.delete[0]": ["missing-required"], "notes.delete[1]": []}
    (missing,) = report["examples"][0]["diagnostics"]
    assert "--tag" in missing["message"]


def test_an_overlay_description_reaches_the_tool_schema(tmp_path: Path) -> None:
    tools = [
        delete(
            parameters=[
                {"name": "tag", "flags": ["--tag"], "description": "Only notes with this tag."}
            ]
        )
    ]
    write_project(tmp_path, tools, dialect=None, tree=True)
    result = run_cli(["schema", "tool", "notes.delete"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema["properties"]["tag"]["description"] == "Only notes with this tag."


def test_with_a_tree_the_tree_decides_which_flags_exist(tmp_path: Path) -> None:
    # The catalog declares no parameters at all: the tree's flags are still accepted, and a flag
    # the tree lacks is still unknown.
    tools = [
        delete(
            examples=[
                {"command": "notes delete --tag a --all"},
                {"command": "notes delete --force"},
            ]
        )
    ]
    _, report = validate_examples(tmp_path, tools)
    assert example_codes(report) == {"notes.delete[0]": [], "notes.delete[1]": ["unknown-flag"]}


def test_without_a_tree_the_catalog_decides_which_flags_exist(tmp_path: Path) -> None:
    tools = [
        delete(
            parameters=[{"name": "force", "flags": ["--force"], "type": "boolean"}],
            examples=[{"command": "notes delete --force"}, {"command": "notes delete --all"}],
        )
    ]
    code, report = validate_examples(tmp_path, tools, tree=False, dialect="click")
    assert example_codes(report) == {"notes.delete[0]": [], "notes.delete[1]": ["unknown-flag"]}
    assert code == 1


def test_examples_of_an_unbound_tool_are_not_bound(tmp_path: Path) -> None:
    tools = [
        delete(),
        {"id": "notes.export", "command": ["export"], "examples": [{"command": "notes export"}]},
    ]
    code, report = validate_examples(tmp_path, tools)
    assert code == 1
    on_tool = [
        d["code"]
        for d in report["diagnostics"]
        if d["tool"] == "notes.export" and d["example"] is None
    ]
    assert on_tool == ["tool-unbound"], "reported once on the tool"
    # ... and on each of its examples, which cannot be checked: nothing passes unchecked.
    example = next(e for e in report["examples"] if e["tool"] == "notes.export")
    assert example["ok"] is False
    assert [d["code"] for d in example["diagnostics"]] == ["tool-unbound"]


def test_a_live_click_tree_binds_like_its_snapshot(tmp_path: Path) -> None:
    tools = [
        {
            "id": "notes.delete",
            "command": ["delete"],
            "parameters": [{"name": "tag", "flags": ["--tag"], "type": "integer"}],
            "dry_run": {"flag": "--limit", **REVIEWED},
        }
    ]
    catalog = render_catalog(tools, None)
    (tmp_path / "catalog.json").write_text(catalog, encoding="utf-8")
    (tmp_path / "exampleguard.toml").write_text(
        'catalog = "catalog.json"\ntree = "click:click_app:cli"\n', encoding="utf-8"
    )
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    report = json.loads(result.stdout)
    found = [
        (d["code"], d["location"]["key"], d["location"]["line"])
        for d in report["diagnostics"]
        if d["code"] in CATALOG_CODES
    ]
    assert found == [
        ("overlay-drift", "tools[0].parameters[0]", line_of(catalog, '"--tag"')),
        ("dryrun-flag-unknown", "tools[0].dry_run.flag", line_of(catalog, '"dry_run"')),
    ]
