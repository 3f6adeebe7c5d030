"""A cobra program taken through exampleguard as its maintainer would, start to finish.

``exampleguard init --cobra`` in the program's Go module, the one line of wiring, ``go build``,
``tree = "exec:./bin/shop"``, then ``exampleguard validate``: it passes, and catches a flag the
code renamed, a flag group the code tightened and a command line of a cobra ``Example`` that
names a flag the command does not have. A reviewed preview of the Go binary is dry-run in the
sandbox. Every run of the program goes through the sandbox
(``tests/sandbox/test_exec_tree_containment`` has the hostile ones).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.golang import build, lay_out, missing_go
from tests.support.project import run_cli, write_config

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(missing_go() is not None, reason=str(missing_go())),
]

WIRING = "\texampleguard.Register(rootCmd)\n\tif err := rootCmd.Execute()"
TOOLS = [
    {
        "id": "shop.list",
        "command": ["list"],
        "examples": [{"command": "shop list --limit 5 -o json"}],
    },
    {
        "id": "shop.buy",
        "command": ["buy"],
        "safety": {"effect": "write", "confirmation": "none"},
        "dry_run": {
            "flag": "--dry-run",
            "reviewed": True,
            "evidence": "main.go: buy --dry-run prints what it would buy and writes nothing",
        },
        "examples": [{"command": "shop buy apple --card"}],
    },
]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The shop module, laid out under a GOPATH, without the helper: as its maintainer has it."""
    gopath = tmp_path / "gopath"
    module = lay_out("shop", gopath, helper=False)
    result = run_cli(["init", "--cobra"], cwd=module)
    assert result.returncode == 0, result.stderr
    assert "wrote internal/exampleguard/exampleguard.go" in result.stdout
    assert 'import "example.com/shop/internal/exampleguard"' in result.stdout
    # The one line of wiring, and the import the message names.
    main = module / "main.go"
    source = main.read_text(encoding="utf-8")
    source = source.replace(
        '"github.com/spf13/cobra"',
        '"example.com/shop/internal/exampleguard"\n\t"github.com/spf13/cobra"',
    )
    main.write_text(source.replace("\tif err := rootCmd.Execute()", WIRING), encoding="utf-8")
    rebuild(module)
    catalog = {"format": "exampleguard.catalog/v1", "program": "shop", "tools": TOOLS}
    (module / "catalog.json").write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    write_config(
        module,
        {
            "catalog": "catalog.json",
            "tree": "exec:./bin/shop",
            "dryrun": {"executable": "./bin/shop"},
        },
    )
    counted = run_cli(["counts", "--write"], cwd=module)
    assert counted.returncode == 0, counted.stdout + counted.stderr
    return module


def rebuild(module: Path) -> None:
    gopath = module.parents[2]
    build(module, gopath, module / "bin" / "shop")


def edit(module: Path, old: str, new: str) -> None:
    main = module / "main.go"
    source = main.read_text(encoding="utf-8")
    assert old in source
    main.write_text(source.replace(old, new), encoding="utf-8")
    rebuild(module)


def validate(module: Path) -> tuple[int, dict[str, Any]]:
    result = run_cli(["validate", "--format", "json"], cwd=module)
    return result.returncode, json.loads(result.stdout)


def errors(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(d["code"], d["message"]) for d in report["diagnostics"] if d["severity"] == "error"]


def test_a_wired_cobra_program_validates(shop: Path) -> None:
    code, report = validate(shop)
    assert (code, errors(report)) == (0, [])
    # The Example's command lines were checked too, with the program's own verdict.
    assert [d["code"] for d in report["diagnostics"]] == []
    assert report["counts"]["examples"] == 2
    arguments = {e["tool"]: e["arguments"] for e in report["examples"] if e["tool"]}
    assert arguments == {
        "shop.list": {"limit": 5, "output": "json"},
        "shop.buy": {"card": True, "args": "apple"},
    }


def test_a_renamed_flag_is_caught(shop: Path) -> None:
    edit(shop, '"limit", 10', '"max", 10')
    code, report = validate(shop)
    assert code == 1
    found = errors(report)
    assert ("unknown-flag", "--limit is not an option of 'shop list'") in found
    # The Example that still says --limit is caught too, where cobra keeps it.
    [example] = [d for d in report["diagnostics"] if d["file"].startswith("exec:")]
    assert example["code"] == "unknown-flag"
    assert "shop list" in example["location"]["key"]


def test_a_tightened_flag_group_is_caught(shop: Path) -> None:
    edit(
        shop,
        'buy.MarkFlagsMutuallyExclusive("card", "cash")',
        'buy.Flags().String("pin", "", "the card\'s PIN")\n'
        '\tbuy.MarkFlagsRequiredTogether("card", "pin")',
    )
    code, report = validate(shop)
    assert code == 1
    assert [c for c, _ in errors(report)] == ["require-together"]


def test_a_wrong_example_in_the_code_is_caught(shop: Path) -> None:
    edit(shop, "shop list --limit 5", "shop list --limt 5")
    code, report = validate(shop)
    assert code == 1
    [found] = [d for d in report["diagnostics"] if d["severity"] == "error"]
    assert found["code"] == "unknown-flag"
    assert found["hint"] == "Did you mean --limit?"
    # Addressed by the tree setting, the command, cobra's Example and its line.
    assert found["file"] == "exec:./bin/shop"
    assert found["location"]["key"] == "'shop list' example, line 3"


def test_the_go_binary_is_dry_run_in_the_sandbox(shop: Path) -> None:
    result = run_cli(["dryrun", "--format", "json"], cwd=shop)
    assert result.returncode == 0, result.stdout + result.stderr
    [run] = json.loads(result.stdout)["dry_runs"]
    assert run["tool"] == "shop.buy"
    assert run["status"] == "passed", run
    assert run["argv"][-3:] == ["apple", "--dry-run", "--card"] or "--dry-run" in run["argv"]
    assert run["stdout"].startswith("would buy apple in ")
    assert not (shop / "receipt.txt").exists()
