"""The Go helper for cobra programs: the tree it exports and the verdicts it gives, for real.

The fixture programs (``tests/fixtures/go``) are built once per session with the helper that
exampleguard ships wired in, against Debian's cobra 1.6; the tests run them as exampleguard
does (``PROGRAM __exampleguard tree|judge``, here without a sandbox: the programs are the
tests' own) and as a user does (every other run must be the program's alone).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from exampleguard._commands.init import cobra_helper_source
from exampleguard._snapshot import JudgeVerdict, Tree, TreeCommand
from tests.support.golang import HELPER, build_fixture, missing_go

pytestmark = pytest.mark.skipif(missing_go() is not None, reason=str(missing_go()))


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("go")
    return {name: build_fixture(name, folder) for name in ("kit", "traverse", "single")}


def tree_of(program: Path) -> Tree:
    done = subprocess.run(
        [str(program), "__exampleguard", "tree"], capture_output=True, check=True, timeout=60
    )
    return Tree.model_validate_json(done.stdout)


def judged(program: Path, *argvs: Sequence[str], env: dict[str, str] | None = None) -> list[Any]:
    lines = "".join(json.dumps(list(argv)) + "\n" for argv in argvs)
    done = subprocess.run(
        [str(program), "__exampleguard", "judge"],
        input=lines,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    return [JudgeVerdict.model_validate_json(line) for line in done.stdout.splitlines()]


def command(tree: Tree, *path: str) -> TreeCommand:
    found = tree.command(list(path))
    assert found is not None, path
    return found


def parameter(found: TreeCommand, name: str) -> dict[str, Any]:
    for p in found.parameters:
        if p.name == name:
            return p.model_dump(exclude_defaults=True)
    raise AssertionError(f"{name} not in {found.path}")


def test_the_shipped_helper_is_the_one_init_writes() -> None:
    assert cobra_helper_source() == HELPER.read_text(encoding="utf-8")


def test_the_tree_says_what_cobra_accepts(programs: dict[str, Path]) -> None:
    tree = tree_of(programs["kit"])
    assert (tree.program, tree.dialect, tree.framework) == ("kit", "cobra", "cobra")
    get = command(tree, "get")
    assert get.aliases == [["g"], ["fetch"]]
    assert get.runnable
    assert parameter(get, "all") == {
        "name": "all",
        "flags": ["--all", "-A"],
        "type": "boolean",
        "description": "all of them",
        "default": False,
        "pflag_type": "bool",
        "no_opt_default": "true",
    }
    assert parameter(get, "small")["min"] == -128
    assert parameter(get, "small")["max"] == 127
    assert parameter(get, "byte")["max"] == 255
    assert parameter(get, "tag")["multiple"]
    assert parameter(get, "tag")["pflag_type"] == "stringSlice"
    assert parameter(get, "color")["nargs"] == "?"
    assert parameter(get, "color")["no_opt_default"] == "auto"
    assert parameter(get, "old")["hidden"]
    assert parameter(get, "secret")["hidden"]
    assert parameter(get, "help")["eager"]
    assert parameter(get, "args") == {
        "name": "args",
        "positional": True,
        "required": True,
        "nargs": 1,
    }
    assert get.constraints.mutually_exclusive == [["all", "limit"]]
    assert get.settings.min_args == 1
    assert get.settings.max_args == 1
    # Persistent flags are declared once, where cobra declares them.
    root = command(
        tree,
    )
    assert parameter(root, "config")["persistent"]
    assert parameter(root, "version")["eager"]
    assert root.settings.legacy_args
    assert "config" not in {p.name for p in get.parameters}
    assert parameter(command(tree, "group"), "zone")["persistent"]


def test_validators_are_read_by_what_they_accept(programs: dict[str, Path]) -> None:
    tree = tree_of(programs["kit"])
    rules = {
        name: (
            command(tree, "group", name).settings.min_args,
            command(tree, "group", name).settings.max_args,
        )
        for name in ("none", "some", "few", "span", "pick", "any")
    }
    assert rules == {
        "none": (0, 0),
        "some": (1, None),
        "few": (0, 2),
        "span": (1, 3),
        "pick": (1, 1),
        "any": (0, None),
    }
    assert "args" not in {p.name for p in command(tree, "group", "none").parameters}
    assert parameter(command(tree, "group", "pick"), "args")["choices"] == ["red", "green", "blue"]
    assert command(tree, "group", "nested").settings.legacy_args


def test_flag_groups_required_flags_and_parser_settings(programs: dict[str, Path]) -> None:
    tree = tree_of(programs["kit"])
    deploy = command(tree, "deploy")
    assert parameter(deploy, "env")["required"]
    assert deploy.constraints.require_together == [["user", "password"]]
    assert deploy.constraints.mutually_exclusive == [["json", "yaml", "text"]]
    # One-required is exported only where the program's cobra checks it (1.8 and newer).
    enforced = [["token", "web"]] if tree.find_skips_flag_values and _checks_one_required() else []
    assert command(tree, "login").constraints.require_one_of == enforced
    assert not command(tree, "exec").settings.allow_interspersed_args
    assert command(tree, "raw").settings.disable_flag_parsing
    assert command(tree, "internal").hidden
    legacy = command(tree, "legacy")
    assert legacy.hidden
    assert "deprecated: use get" in (legacy.description or "")
    # cobra's own commands are there, as every run has them, and hidden: they need no tool.
    assert command(tree, "help").hidden
    assert command(tree, "completion", "bash").hidden
    assert tree.command(["__exampleguard"]) is None
    assert tree_of(programs["traverse"]).commands[0].settings.traverse_children


def test_examples_are_the_command_lines_of_example(programs: dict[str, Path]) -> None:
    get = command(tree_of(programs["kit"]), "get")
    assert [(e.command, e.field, e.line, e.column) for e in get.help_examples] == [
        ("kit get pods --all -o json", "example", 2, 3),
        ("kit get x \\\n    --limit 3", "example", 3, 3),
    ]
    single = tree_of(programs["single"]).commands[0]
    # A session: only the prompted lines, not the output between them.
    assert [e.command for e in single.help_examples] == ["single --count 2 notes.txt", "single -n"]


def test_a_program_of_one_command_stays_one(programs: dict[str, Path]) -> None:
    tree = tree_of(programs["single"])
    assert [c.path for c in tree.commands] == [[]]
    assert tree.commands[0].settings.legacy_args
    # Without subcommands, cobra's legacy rule takes any word.
    [verdict] = judged(programs["single"], ["a", "b", "-n"])
    assert verdict.accepted
    assert verdict.given == {"count": 10, "args": ["a", "b"]}


def test_every_other_run_is_the_programs_own(programs: dict[str, Path], tmp_path: Path) -> None:
    done = subprocess.run(
        [str(programs["single"]), "a", "b"], capture_output=True, text=True, check=True
    )
    assert done.stdout == "ran [a b]\n"
    done = subprocess.run(
        [str(programs["kit"]), "get", "x", "--all"],
        capture_output=True,
        text=True,
        check=True,
        env={"KIT_MARKERS": str(tmp_path)},
    )
    assert done.stdout == "ran kit get [x]\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["initializer", "prerun", "run"]
    # The protocol's word alone is no request: cobra says it does not know it.
    lone = subprocess.run(
        [str(programs["kit"]), "__exampleguard"], capture_output=True, text=True, check=False
    )
    assert lone.returncode == 1
    assert "unknown command" in lone.stderr


def test_judging_runs_nothing_of_the_program(programs: dict[str, Path], tmp_path: Path) -> None:
    verdicts = judged(
        programs["kit"],
        ["get", "x", "--all"],
        ["deploy", "--env", "prod"],
        env={"KIT_MARKERS": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert [v.accepted for v in verdicts] == [True, True]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["get", "x", "-A"],
            {"accepted": True, "path": ["get"], "given": {"all": True, "args": ["x"]}},
        ),
        (
            ["fetch", "x", "--ratio=0.1", "--share", "0.1"],
            {
                "accepted": True,
                "path": ["get"],
                "given": {"ratio": 0.1, "share": 0.10000000149011612, "args": ["x"]},
            },
        ),
        (["get", "x", "--ratio", "nan"], {"accepted": True, "path": ["get"]}),
        (
            ["get", "x", "--ids", "1,2", "--ids=3"],
            {
                "accepted": True,
                "path": ["get"],
                "given": {"ids": [1, 2, 3], "args": ["x"]},
            },
        ),
        (
            ["get", "x", "--label", "a,b", "--label", "c"],
            {
                "accepted": True,
                "path": ["get"],
                "given": {"label": ["a,b", "c"], "args": ["x"]},
            },
        ),
        (
            ["group", "none", "extra"],
            {
                "accepted": False,
                "path": ["group", "none"],
                "error": 'unknown command "extra" for "kit group none"',
            },
        ),
        (
            ["group"],
            {
                "accepted": False,
                "path": ["group"],
                "error": '"kit group" needs a subcommand: cobra prints its help and runs nothing',
            },
        ),
        (
            ["deploy"],
            {
                "accepted": False,
                "path": ["deploy"],
                "error": 'required flag(s) "env" not set',
            },
        ),
    ],
)
def test_verdicts(programs: dict[str, Path], argv: list[str], expected: dict[str, Any]) -> None:
    [verdict] = judged(programs["kit"], argv)
    found = verdict.model_dump(exclude_defaults=True)
    if argv[-1] == "nan":
        assert found["given"]["ratio"] != found["given"]["ratio"]
        return
    assert found == expected


def test_an_unreadable_request_is_a_failure_not_a_verdict(programs: dict[str, Path]) -> None:
    done = subprocess.run(
        [str(programs["kit"]), "__exampleguard", "judge"],
        input="not json\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert "gave no verdict" in done.stderr
    unknown = subprocess.run(
        [str(programs["kit"]), "__exampleguard", "bogus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert unknown.returncode == 1
    assert "unknown request" in unknown.stderr


def _checks_one_required() -> bool:
    """Whether the cobra the fixtures build against has MarkFlagsOneRequired (1.8 and newer)."""
    from tests.support.golang import COBRA, OTHER_COBRA

    source = Path(OTHER_COBRA, "src/github.com/spf13/cobra") if OTHER_COBRA else COBRA
    return "MarkFlagsOneRequired" in (source / "flag_groups.go").read_text(encoding="utf-8")


def test_the_helper_is_formatted_and_vetted(tmp_path: Path) -> None:
    from tests.support.golang import go_environment, lay_out

    unformatted = subprocess.run(
        ["gofmt", "-l", str(HELPER)], capture_output=True, text=True, check=True
    )
    assert unformatted.stdout == ""
    source = lay_out("single", tmp_path)
    vetted = subprocess.run(
        ["go", "vet", "./internal/exampleguard/"],
        cwd=source,
        env=go_environment(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert vetted.returncode == 0, vetted.stderr
