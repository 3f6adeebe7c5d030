"""The dialect registry and record: one place decides everything a dialect changes.

What a user sees depends on it — which ``dialect`` values a catalog or tree may give, how a
catalog-only tree routes, whose constraints the rules stage checks, the did-you-mean a
diagnostic carries — so each is checked through the product's own entry points: the models,
the committed schemas, ``build_contract``, ``bind`` and ``run``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from exampleguard._bind import Memo, bind, dialect
from exampleguard._bind.dialect import SHARED_TABLES
from exampleguard._catalog import Catalog
from exampleguard._catalogfile import LoadedCatalog, load_catalog
from exampleguard._config import load_config
from exampleguard._contract import Contract
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._model import DIALECT_NAMES, DIALECTS, spoken_dialects
from exampleguard._pipeline import load_inputs, run
from exampleguard._snapshot import Tree
from exampleguard.schemas import committed_schema_path

REPOSITORY = Path(__file__).resolve().parents[2]


def catalog_only(dialect: str, tools: list[dict[str, Any]], program: str = "notes") -> Contract:
    """The contract of a catalog with no tree: its command paths are the routing tree."""
    catalog = Catalog.model_validate(
        {
            "format": "exampleguard.catalog/v1",
            "program": program,
            "dialect": dialect,
            "tools": tools,
        }
    )
    document = Document(Path("catalog.json"), "catalog.json", "{}", {}, "json")
    return build_contract(LoadedCatalog(catalog, document), None)


def contract_of_tree(tree: dict[str, Any], tools: list[dict[str, Any]]) -> Contract:
    """The contract of a catalog of ``tools`` bound to the tree snapshot ``tree``."""
    catalog = Catalog.model_validate(
        {"format": "exampleguard.catalog/v1", "program": tree["program"], "tools": tools}
    )
    document = Document(Path("catalog.json"), "catalog.json", "{}", {}, "json")
    return build_contract(LoadedCatalog(catalog, document), Tree.model_validate(tree))


TOOLS: list[dict[str, Any]] = [
    {
        "id": "notes.tag.add",
        "command": ["tag", "add"],
        "parameters": [
            {"name": "name", "positional": True},
            {"name": "color", "flags": ["--color", "-c"], "choices": ["red", "blue"]},
        ],
    },
    {"id": "notes.tag.list", "command": ["tag", "list"]},
]


def test_every_dialect_has_its_facts_and_its_binder() -> None:
    assert DIALECT_NAMES == ("click", "argparse", "cobra")
    assert spoken_dialects() == "click, argparse or cobra"
    assert tuple(DIALECTS) == DIALECT_NAMES
    for name in DIALECT_NAMES:
        assert dialect(name).name == name


@pytest.mark.parametrize("kind", ["catalog", "tree"])
def test_the_formats_accept_exactly_the_registered_names(kind: str) -> None:
    schema = json.loads(committed_schema_path(kind).read_text(encoding="utf-8"))
    dialect = schema["properties"]["dialect"]
    # The catalog's is optional (a tree decides when there is one): a string or null.
    enums = [branch["enum"] for branch in dialect.get("anyOf", [dialect]) if "enum" in branch]
    assert enums == [list(DIALECT_NAMES)]


def test_an_unregistered_dialect_is_refused_with_the_registered_names() -> None:
    with pytest.raises(ValidationError, match="'click', 'argparse' or 'cobra'"):
        Tree.model_validate(
            {"format": "exampleguard.tree/v1", "program": "x", "dialect": "clap", "commands": []}
        )


def test_the_models_do_not_import_any_binder() -> None:
    # The formats take the dialect names from the model; the binders load with the bind stage.
    code = (
        "import sys, exampleguard._catalog, exampleguard._tree; "
        "print([m for m in sys.modules if m.startswith('exampleguard._bind')])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_binding_loads_only_the_trees_own_dialect(name: str) -> None:
    # A run pays for its framework's parser model, not for the others'.
    code = (
        "import sys; from exampleguard._bind import dialect; "
        f"dialect({name!r}); "
        "print(sorted(m.split('.')[-1] for m in sys.modules "
        "if m.split('.')[-1] in ('clickfamily', 'argparser', 'cobra') and 'bind' in m))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, check=True
    )
    own = {"click": "clickfamily", "argparse": "argparser", "cobra": "cobra"}[name]
    assert result.stdout.strip() == repr([own])


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_a_catalog_only_tree_routes_with_its_dialects_settings(name: str) -> None:
    contract = catalog_only(name, TOOLS)
    dialect = DIALECTS[name]
    group = contract.root.children["tag"]
    assert contract.root.settings is dialect.catalog_group
    assert group.settings is dialect.catalog_group
    assert group.children["add"].settings is dialect.catalog_command


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_a_choice_converts_as_the_dialect_converts_it(name: str) -> None:
    tools = [
        {
            "id": "notes.run",
            "command": ["run"],
            "parameters": [{"name": "level", "flags": ["--level"], "choices": [1, 2]}],
        }
    ]
    contract = catalog_only(name, tools)
    binding = bind(contract, ["notes", "run", "--level", "2"])
    # Click matches the text and gives back the choice itself; argparse converts the word with
    # the parameter's type (a string here), which is then not among the integer choices.
    if dialect(name).rules.choices_by_text:
        assert binding.ok
        assert list(binding.typed.values()) == [2]
    else:
        assert [p.code for p in binding.problems] == ["bad-choice"]


TREE_WITH_GROUP = {
    "format": "exampleguard.tree/v1",
    "program": "notes",
    "commands": [
        {"path": [], "runnable": False},
        {
            "path": ["sync"],
            "runnable": True,
            "parameters": [
                {"name": "push", "flags": ["--push"], "type": "boolean"},
                {"name": "pull", "flags": ["--pull"], "type": "boolean"},
            ],
            "constraints": {"mutually_exclusive": [["push", "pull"]]},
        },
    ],
}


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_a_snapshots_constraints_are_the_rules_stages_unless_the_framework_enforces_them(
    name: str,
) -> None:
    tree = Tree.model_validate({**TREE_WITH_GROUP, "dialect": name})
    catalog = Catalog.model_validate(
        {
            "format": "exampleguard.catalog/v1",
            "program": "notes",
            "tools": [{"id": "notes.sync", "command": ["sync"]}],
        }
    )
    document = Document(Path("catalog.json"), "catalog.json", "{}", {}, "json")
    contract = build_contract(LoadedCatalog(catalog, document), tree)
    [tool] = contract.tools
    binding = bind(contract, ["notes", "sync", "--push", "--pull"])
    if DIALECTS[name].enforces_constraints:
        # argparse's own parse_args rejects the pair: the binder says so, the rules need not.
        assert [p.code for p in binding.problems] == ["mutually-exclusive"]
        assert tool.constraints.mutually_exclusive == []
    else:
        assert binding.ok
        assert tool.constraints.mutually_exclusive == [["push", "pull"]]


# -- the memo -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_a_memo_compiles_each_level_once_and_lets_a_command_go(name: str) -> None:
    contract = catalog_only(name, TOOLS)
    memo = Memo()
    words = ["notes", "tag", "add", "x", "--color", "red"]
    assert bind(contract, words, memo).ok
    group = contract.root.children["tag"]
    command = group.children["add"]
    table = memo.tables[command]
    assert bind(contract, words, memo).ok
    assert memo.tables[command] is table
    memo.release(command)
    memo.release(group)
    # A command's table is its tool's alone; a group's serves every tool beneath it.
    assert command not in memo.tables
    assert group in memo.tables
    assert bind(contract, words, memo).ok
    assert command in memo.tables


def _shared_catalog(tmp_path: Path, dialect: str) -> Contract:
    """Three commands read from a file: two state their parameters alike, one differently."""
    parameters = [
        {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
        {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
        {"name": "all", "flags": ["--all"], "type": "boolean"},
    ]
    tools = [
        {"id": f"notes.{name}", "command": [name], "parameters": parameters}
        for name in ("list", "show")
    ]
    other = [*parameters[:2], {"name": "all", "flags": ["--every"], "type": "boolean"}]
    tools.append({"id": "notes.drop", "command": ["drop"], "parameters": other})
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "notes",
        "dialect": dialect,
        "tools": tools,
    }
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(catalog), encoding="utf-8")
    return build_contract(load_catalog(path, "catalog.json"), None)


def test_commands_that_accept_the_same_parameters_share_one_click_table(tmp_path: Path) -> None:
    contract = _shared_catalog(tmp_path, "click")
    memo = Memo()
    for command in ("list", "show", "drop"):
        binding = bind(contract, ["notes", command, "1", "--format", "json", "--all"], memo)
        assert binding.ok == (command != "drop")
    nodes = contract.root.children
    assert memo.tables[nodes["list"]] is memo.tables[nodes["show"]]
    assert memo.tables[nodes["drop"]] is not memo.tables[nodes["list"]]
    # What each binding says is its own command's, shared table or not.
    shown = bind(contract, ["notes", "show", "--all"], memo)
    assert (shown.path, shown.node) == (("show",), nodes["show"])


def test_a_memo_keeps_only_the_latest_shared_tables() -> None:
    memo = Memo()
    built: list[int] = []

    def table(number: int) -> list[int]:
        def build() -> list[int]:
            built.append(number)
            return [number]

        found: list[int] = memo.shared((number,), None, build)
        return found

    tables = [table(n) for n in range(SHARED_TABLES)]
    assert [table(n) for n in range(SHARED_TABLES)] == tables
    assert built == list(range(SHARED_TABLES))
    table(SHARED_TABLES)
    # The oldest entry made room for the newest: asked for again, it is built again.
    assert table(0) == [0]
    assert built == [*range(SHARED_TABLES + 1), 0]


# -- did-you-mean data ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", DIALECT_NAMES)
@pytest.mark.parametrize(
    ("words", "code", "suggestion", "hint"),
    [
        (["tag", "add", "x", "--colr", "red"], "unknown-flag", "--color", "Did you mean --color?"),
        (["tag", "ad", "x"], "unknown-command", "add", "Did you mean 'add'?"),
        (["tag", "add", "x", "--zzzz"], "unknown-flag", None, None),
        (["tag", "zzzz"], "unknown-command", None, None),
        (["tag", "add", "x", "--color", "green"], "bad-choice", None, "Choose from: red, blue"),
    ],
)
def test_a_problem_carries_the_one_replacement_it_proposes(
    name: str, words: list[str], code: str, suggestion: str | None, hint: str | None
) -> None:
    binding = bind(catalog_only(name, TOOLS), ["notes", *words])
    [problem] = [p for p in binding.problems if p.code == code]
    assert (problem.suggestion, problem.hint) == (suggestion, hint)


LEVELS: list[dict[str, Any]] = [
    {
        "id": "deployctl.release.create",
        "command": ["release", "create"],
        "parameters": [{"name": "tag", "flags": ["--tag"]}],
    },
    {"id": "deployctl.release.delete", "command": ["release", "delete"]},
    {
        "id": "deployctl.status",
        "command": ["status"],
        "parameters": [{"name": "force", "flags": ["--force"], "type": "boolean"}],
    },
]


@pytest.mark.parametrize(
    ("name", "words", "hint"),
    [
        *(
            pytest.param(
                name, ["release", "delete", "--tag", "v1"], None, id=f"{name}: a sibling's option"
            )
            for name in ("click", "argparse")
        ),
        *(
            pytest.param(name, ["status", "--tag", "v1"], None, id=f"{name}: a cousin's option")
            for name in ("click", "argparse")
        ),
        pytest.param(
            # argparse reads `v1` as the subcommand there: an unknown command, not this case.
            "click",
            ["release", "--tag", "v1", "create"],
            "--tag is an option of 'deployctl release create'; give it at that level.",
            id="the command the example goes on to",
        ),
    ],
)
def test_an_option_of_another_level_is_proposed_only_on_the_examples_path(
    name: str, words: list[str], hint: str | None
) -> None:
    binding = bind(catalog_only(name, LEVELS, program="deployctl"), ["deployctl", *words])
    problem = next(p for p in binding.problems if p.code == "unknown-flag")
    assert problem.suggestion is None
    assert problem.hint == hint


def test_a_group_option_given_below_its_group_proposes_the_group() -> None:
    tree = {
        "format": "exampleguard.tree/v1",
        "program": "deployctl",
        "dialect": "click",
        "commands": [
            {
                "path": [],
                "runnable": False,
                "parameters": [{"name": "verbose", "flags": ["--verbose"], "type": "boolean"}],
            },
            {"path": ["release"], "runnable": False},
            {"path": ["release", "create"], "runnable": True},
            {"path": ["status"], "runnable": True},
        ],
    }
    contract = contract_of_tree(tree, [{"id": "c", "command": ["release", "create"]}])
    binding = bind(contract, ["deployctl", "release", "create", "--verbose"])
    [problem] = binding.problems
    assert problem.hint == "--verbose is an option of 'deployctl'; give it at that level."


def test_the_diagnostic_carries_the_suggestion(tmp_path: Path) -> None:
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "notes",
        "dialect": "click",
        "tools": [{**TOOLS[0], "examples": [{"command": "notes tag add x --colr red"}]}],
    }
    (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (tmp_path / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    inputs = load_inputs(load_config(tmp_path / "exampleguard.toml", tmp_path), with_counts=False)
    evaluation = run(inputs, check_counts=False, repository_checks=False)
    [diagnostic] = [d for d in evaluation.diagnostics if d.code == "unknown-flag"]
    assert diagnostic.suggestion == "--color"
    assert diagnostic.hint == "Did you mean --color?"
