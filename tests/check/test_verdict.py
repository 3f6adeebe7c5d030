"""The real parser's verdict in the pipeline: it decides, the model explains, mismatches show.

A live Click tree that routes and converts dynamically (``tests/fixtures/apps/dynamic_app.py``)
is validated end to end through the CLI: aliases the group resolves are in the tree when the
catalog declares them (no false ``overlay-drift``), lazily loaded commands are read, and where
exampleguard's model and the framework's own parser disagree the framework wins and a
``model-mismatch`` warning carries both verdicts. Examples of an unbound tool fail in every
output format.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import make_project, run_cli


def _tool(tool_id: str, command: list[str], examples: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "id": tool_id,
        "command": command,
        "examples": [{"command": text} for text in examples],
        **extra,
    }


def _validate(root: Path, *extra: str) -> tuple[int, Any]:
    result = run_cli(["validate", "--format", "json", *extra], cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def _codes(report: dict[str, Any], tool: str, index: int) -> list[str]:
    example = next(e for e in report["examples"] if e["tool"] == tool and e["index"] == index)
    return [d["code"] for d in example["diagnostics"]]


def _example(report: dict[str, Any], tool: str, index: int) -> dict[str, Any]:
    found: dict[str, Any] = next(
        e for e in report["examples"] if e["tool"] == tool and e["index"] == index
    )
    return found


@pytest.fixture
def dynamic(tmp_path: Path) -> Path:
    tools = [
        _tool(
            "notes.delete",
            ["delete"],
            ["notes del 3 4", "notes dele 5"],
            aliases=[["del"]],
        ),
        _tool(
            "notes.delete-odd",
            ["tags", "delete"],
            ["notes tags remove x"],
            aliases=[["tags", "remove"]],
        ),
        _tool("notes.sync", ["remote", "sync"], ["notes remote sync --fast"]),
    ]
    return make_project(tmp_path, tools, dialect=None, tree="click:dynamic_app:cli")


def test_declared_aliases_the_group_routes_are_not_drift(dynamic: Path) -> None:
    code, report = _validate(dynamic)
    codes = {d["code"] for d in report["diagnostics"]}
    assert "overlay-drift" not in codes, report["diagnostics"]
    assert _codes(report, "notes.delete", 0) == []
    assert _example(report, "notes.delete", 0)["arguments"] == {"ids": [3, 4]}
    # resolve_command rewrites `remove` to `delete`: the declared alias routes for real.
    assert _codes(report, "notes.delete-odd", 0) == []
    # The lazily loaded command is read through the group's own get_command.
    assert _codes(report, "notes.sync", 0) == []
    assert _example(report, "notes.sync", 0)["arguments"] == {"fast": True}
    assert code == 0, report["diagnostics"]


def test_where_the_model_disagrees_the_real_parser_wins_with_a_warning(dynamic: Path) -> None:
    _, report = _validate(dynamic)
    # `dele` is a unique prefix the group resolves: the model rejects it, the framework
    # accepts it; the example passes with the warning.
    example = _example(report, "notes.delete", 1)
    assert example["ok"] is True
    mismatch = [d for d in example["diagnostics"] if d["code"] == "model-mismatch"]
    assert len(mismatch) == 1
    assert mismatch[0]["severity"] == "warning"
    assert "the framework's parser accepts" in mismatch[0]["message"]
    assert "exampleguard's model rejects" in mismatch[0]["message"]


def test_a_choice_subclass_converts_with_its_own_convert(tmp_path: Path) -> None:
    tools = [_tool("notes.delete", ["delete"], ["notes delete --format yaml"])]
    root = make_project(tmp_path, tools, dialect=None, tree="click:dynamic_app:cli")
    _, report = _validate(root)
    codes = _codes(report, "notes.delete", 0)
    # The framework accepts `yaml` (the model's strict Choice would not): the verdict is the
    # framework's, and the disagreement is a warning.
    assert codes == ["model-mismatch"]
    assert _example(report, "notes.delete", 0)["ok"] is True


def test_a_rejection_the_model_missed_fails_with_the_frameworks_message(tmp_path: Path) -> None:
    tools = [
        _tool("notes.delete", ["delete"], ["notes delete --count 2", "notes delete --count 3"])
    ]
    root = make_project(tmp_path, tools, dialect=None, tree="click:dynamic_app:cli")
    code, report = _validate(root)
    codes = _codes(report, "notes.delete", 0)
    assert "model-mismatch" in codes
    assert "bad-type" in codes
    failing = _example(report, "notes.delete", 0)
    assert failing["ok"] is False
    bad = next(d for d in failing["diagnostics"] if d["code"] == "bad-type")
    assert "2 is even" in bad["message"]
    assert _codes(report, "notes.delete", 1) == []
    assert code == 1


UNBOUND = [
    _tool("app", [], ["app --x 1"]),
    _tool("app.gone", ["gone"], ["app gone --bogus"]),
]


@pytest.fixture
def unbound(tmp_path: Path) -> Path:
    (tmp_path / "unbound_app.py").write_text(
        "import click\n\n@click.command()\n@click.option('--x', type=int)\ndef cli(x):\n    pass\n"
    )
    return make_project(
        tmp_path, UNBOUND, program="app", dialect=None, tree="click:unbound_app:cli"
    )


def test_examples_of_an_unbound_tool_fail_in_json(unbound: Path) -> None:
    code, report = _validate(unbound)
    example = _example(report, "app.gone", 0)
    assert example["ok"] is False
    assert "tool-unbound" in _codes(report, "app.gone", 0)
    assert _example(report, "app", 0)["ok"] is True
    assert code == 1


@pytest.mark.parametrize("output", ["text", "junit", "sarif"])
def test_examples_of_an_unbound_tool_fail_in_every_format(unbound: Path, output: str) -> None:
    result = run_cli(["validate", "--format", output], cwd=unbound)
    assert result.returncode == 1, result.stderr
    if output == "text":
        assert "tool-unbound app.gone[0]" in result.stdout
    elif output == "junit":
        case = result.stdout.split('name="app.gone[0]"', 1)[1].split("</testcase>", 1)[0]
        assert "<failure" in case
        assert "tool-unbound" in case
    else:
        sarif = json.loads(result.stdout)
        results = sarif["runs"][0]["results"]
        assert any(
            r["ruleId"] == "tool-unbound" and "cannot be checked" in r["message"]["text"]
            for r in results
        )


def test_examples_of_an_unbound_tool_fail_under_pytest(unbound: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--exampleguard", "-q", "-p", "no:cacheprovider"],
        cwd=unbound,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(unbound)},
    )
    assert "FAILED catalog.json::app.gone[0]" in result.stdout, result.stdout
    assert "FAILED catalog.json::app[0]" not in result.stdout, result.stdout


def test_a_snapshot_of_a_live_tree_carries_the_routed_aliases_and_the_version(
    dynamic: Path,
) -> None:
    result = run_cli(["tree", "--format", "json"], cwd=dynamic)
    assert result.returncode == 0, result.stderr
    snapshot = json.loads(result.stdout)
    assert snapshot["framework"] == "click"
    assert snapshot["framework_version"]
    by_path = {tuple(c["path"]): c for c in snapshot["commands"]}
    assert ["del"] in by_path[("delete",)]["aliases"]
    assert ["tags", "remove"] in by_path[("tags", "delete")]["aliases"]
    assert ("remote", "sync") in by_path
    # Bound to that snapshot, the alias example passes with the model alone.
    (dynamic / "tree.json").write_text(result.stdout, encoding="utf-8")
    config = (dynamic / "exampleguard.toml").read_text(encoding="utf-8")
    (dynamic / "exampleguard.toml").write_text(
        config.replace('tree = "click:dynamic_app:cli"', 'tree = "tree.json"'), encoding="utf-8"
    )
    _, report = _validate(dynamic)
    assert _codes(report, "notes.delete", 0) == []
    assert _codes(report, "notes.sync", 0) == []


def test_duplicate_example_compares_only_examples_that_bound_without_errors(
    tmp_path: Path,
) -> None:
    parameters = [{"name": "ids", "positional": True, "type": "integer", "nargs": -1}]
    tools = [
        _tool(
            "notes.rm", ["rm"], ["notes rm 3 --bogus", "notes rm 3 --bogus"], parameters=parameters
        ),
        _tool("notes.del", ["del"], ["notes del 3", "notes del 3"], parameters=parameters),
    ]
    root = make_project(tmp_path, tools, dialect="click")
    _, report = _validate(root)
    # Two broken examples are each reported for what is wrong with them, not as copies.
    assert _codes(report, "notes.rm", 0) == ["unknown-flag"]
    assert _codes(report, "notes.rm", 1) == ["unknown-flag"]
    assert _codes(report, "notes.del", 1) == ["duplicate-example"]


# -- "no arguments, show help" stays a defect, whatever the exit status ---------------------------

HELP_CLICK = """
import click


class HelpWhenEmpty(click.Command):
    def parse_args(self, ctx, args):
        if not args:
            click.echo(ctx.get_help())
            ctx.exit(STATUS)
        return super().parse_args(ctx, args)


@click.group()
def cli():
    pass


@cli.command(no_args_is_help=True)
@click.argument("name")
def greet(name):
    pass


@cli.command(cls=HelpWhenEmpty)
@click.option("--x")
def shout(x):
    pass
"""

HELP_ARGPARSE = """
import argparse
import sys


class HelpWhenEmpty(argparse.ArgumentParser):
    def parse_args(self, args=None, namespace=None):
        if not args:
            self.print_help()
            EXIT
        return super().parse_args(args, namespace)


parser = HelpWhenEmpty(prog="app")
parser.add_argument("--x")
"""


def _help_message(report: dict[str, Any], tool: str, index: int) -> str:
    example = _example(report, tool, index)
    assert example["ok"] is False
    found = [d for d in example["diagnostics"] if d["code"] == "not-runnable"]
    assert len(found) == 1, example["diagnostics"]
    message: str = found[0]["message"]
    return message


@pytest.mark.parametrize("status", [0, 1, 2])
def test_a_click_command_that_shows_its_help_when_empty_is_a_defect(
    tmp_path: Path, status: int
) -> None:
    (tmp_path / "help_app.py").write_text(HELP_CLICK.replace("STATUS", str(status)))
    tools = [
        _tool("app.greet", ["greet"], ["app greet", "app greet --help"]),
        _tool("app.shout", ["shout"], ["app shout", "app shout --x 1"]),
    ]
    root = make_project(tmp_path, tools, program="app", dialect=None, tree="click:help_app:cli")
    code, report = _validate(root)
    # Click's no_args_is_help, and an application's own shortcut exiting with any status.
    assert "prints its help" in _help_message(report, "app.greet", 0)
    assert "prints its help and exits" in _help_message(report, "app.shout", 0)
    # Asking for the help, or giving arguments, is fine.
    assert _example(report, "app.greet", 1)["ok"] is True
    assert _codes(report, "app.shout", 1) == []
    assert code == 1


@pytest.mark.parametrize("exit_call", ["self.exit(0)", "self.exit(1)", "sys.exit(0)"])
def test_an_argparse_parser_that_shows_its_help_when_empty_is_a_defect(
    tmp_path: Path, exit_call: str
) -> None:
    (tmp_path / "help_app.py").write_text(HELP_ARGPARSE.replace("EXIT", exit_call))
    tools = [_tool("app", [], ["app", "app --x 1"])]
    root = make_project(
        tmp_path, tools, program="app", dialect=None, tree="argparse:help_app:parser"
    )
    code, report = _validate(root)
    message = _help_message(report, "app", 0)
    assert "'app' prints its help and exits" in message
    assert "teaches an agent nothing" in message
    assert _codes(report, "app", 1) == []
    assert code == 1


def test_asking_an_argparse_parser_for_its_help_is_fine(tmp_path: Path) -> None:
    (tmp_path / "help_app.py").write_text(HELP_ARGPARSE.replace("EXIT", "self.exit(0)"))
    tools = [_tool("app", [], ["app --x 1 --help", "app -h"])]
    root = make_project(
        tmp_path, tools, program="app", dialect=None, tree="argparse:help_app:parser"
    )
    code, report = _validate(root)
    assert code == 0, report["diagnostics"]


STOPPING_APP = """
import os
import click

def stop(context, param, value):
    if value and STOPS:
        os._exit(3)
    return value

@click.group()
def cli():
    pass

@cli.command("halt")
@click.option("--now", is_flag=True, callback=stop)
def halt(now):
    pass
"""


@pytest.mark.parametrize("isolation", ["auto", "guard"])
def test_a_child_that_dies_after_sending_the_tree_leaves_the_tree_unavailable(
    tmp_path: Path, isolation: str
) -> None:
    # The tree comes first and the examples are checked while the child judges them: a child
    # that dies midway still fails the run as a whole (exit 2), never with a half-checked
    # report or a traceback.
    (tmp_path / "stopping_app.py").write_text(STOPPING_APP.replace("STOPS", "False"))
    tools = [_tool("app.halt", ["halt"], ["app halt", "app halt --now"])]
    root = make_project(tmp_path, tools, program="app", dialect=None, tree="click:stopping_app:cli")
    assert _validate(root)[0] == 0
    (tmp_path / "stopping_app.py").write_text(STOPPING_APP.replace("STOPS", "True"))
    result = run_cli(["validate"], cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "tree-unavailable" in result.stderr
    assert "exited with status 3 while judging the examples" in result.stderr
    assert "Traceback" not in result.stderr


PURGE = {
    "parameters": [
        {"name": "older_than", "flags": ["--older-than"], "type": "integer", "required": True},
    ],
    "constraints": {"mutually_exclusive": [["keep", "all_"]]},
    "dry_run": {"flag": "--dry-run", "reviewed": True, "evidence": "prefix_app.py: a preview"},
}


@pytest.mark.parametrize(
    ("example", "code"),
    [
        pytest.param("notes pur --older-than 3 --yes", "bypass-flag", id="bypass-flag"),
        pytest.param("notes pur --older-than 3 -y", "bypass-flag", id="bypass-flag-short"),
        pytest.param("notes pur --keep 1", "missing-required", id="catalog-required"),
        pytest.param(
            "notes pur --older-than 3 --keep 1 --all", "mutually-exclusive", id="exclusive"
        ),
        pytest.param("notes pur --older-than 3 --no-dry-run", "dryrun-disabled", id="preview-off"),
    ],
)
def test_the_stricter_rules_hold_where_only_the_framework_follows_the_routing(
    tmp_path: Path, example: str, code: str
) -> None:
    # `pur` is a prefix only the group's own get_command resolves: the framework runs `purge`,
    # the model binds nothing. The rules stricter than any parser still judge what was given.
    tools = [_tool("notes.purge", ["purge"], [example], **PURGE)]
    root = make_project(tmp_path, tools, dialect=None, tree="click:prefix_app:cli")
    _, report = _validate(root)
    codes = _codes(report, "notes.purge", 0)
    assert "model-mismatch" in codes
    assert code in codes
    assert _example(report, "notes.purge", 0)["ok"] is False


def test_a_valid_example_the_model_cannot_route_still_passes(tmp_path: Path) -> None:
    tools = [_tool("notes.purge", ["purge"], ["notes pur --older-than 3 --keep 2"], **PURGE)]
    root = make_project(tmp_path, tools, dialect=None, tree="click:prefix_app:cli")
    code, report = _validate(root)
    example = _example(report, "notes.purge", 0)
    assert [d["code"] for d in example["diagnostics"]] == ["model-mismatch"]
    assert example["ok"] is True
    assert example["path"] == ["purge"]
    assert example["arguments"]["older_than"] == 3
    assert code == 0, report["diagnostics"]


def test_a_duplicate_is_found_through_routing_only_the_framework_follows(tmp_path: Path) -> None:
    examples = ["notes purge --older-than 3", "notes pur --older-than 3"]
    tools = [_tool("notes.purge", ["purge"], examples, **PURGE)]
    root = make_project(tmp_path, tools, dialect=None, tree="click:prefix_app:cli")
    _, report = _validate(root)
    assert _codes(report, "notes.purge", 0) == []
    assert "duplicate-example" in _codes(report, "notes.purge", 1)


NEUTRAL_CLICK = [
    # The variable is set where validate runs: the example is not valid without --token.
    pytest.param("notes serve --port 5", "missing-required", id="environment-not-read"),
    pytest.param("notes serve --token t --port 5000", None, id="value-callback-not-run"),
    pytest.param("notes serve --token t --name lower", None, id="custom-type-not-converted"),
    pytest.param("notes serve --token t --config /no/such/file", None, id="file-not-looked-for"),
    pytest.param("notes serve --token t --log /no/such/dir/log", None, id="file-not-opened"),
]


@pytest.mark.parametrize(("example", "code"), NEUTRAL_CLICK)
def test_the_real_parser_check_leaves_out_what_spec_4_leaves_out_in_click(
    tmp_path: Path, example: str, code: str | None
) -> None:
    tools = [_tool("notes.serve", ["serve"], [example])]
    # The import sees the variable (a placeholder in tree_env), and still no verdict reads it.
    settings = {"tree_env": {"NEUTRAL_APP_TOKEN": "from-the-environment"}}
    root = make_project(
        tmp_path, tools, dialect=None, tree="click:neutral_app:cli", settings=settings
    )
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    codes = _codes(report, "notes.serve", 0)
    assert "model-mismatch" not in codes, report["diagnostics"]
    if code is None:
        assert _example(report, "notes.serve", 0)["ok"] is True, codes
    else:
        assert code in codes


@pytest.mark.parametrize(
    "example",
    [
        pytest.param("notes --level high", id="custom-type-not-converted"),
        pytest.param("notes --input /no/such/file", id="file-not-opened"),
    ],
)
def test_the_real_parser_check_leaves_out_what_spec_4_leaves_out_in_argparse(
    tmp_path: Path, example: str
) -> None:
    tools = [_tool("notes", [], [example])]
    settings: dict[str, object] = {}
    root = make_project(
        tmp_path, tools, dialect=None, tree="argparse:neutral_app:parser", settings=settings
    )
    _, report = _validate(root)
    codes = _codes(report, "notes", 0)
    assert "model-mismatch" not in codes, report["diagnostics"]
    assert _example(report, "notes", 0)["ok"] is True, codes


def test_an_argparse_action_of_the_application_s_gives_what_it_stored(tmp_path: Path) -> None:
    # The program receives what its own Action put in the namespace, not the word it was given.
    tools = [_tool("notes", [], ["notes --tag abc"])]
    settings: dict[str, object] = {}
    root = make_project(
        tmp_path, tools, dialect=None, tree="argparse:neutral_app:parser", settings=settings
    )
    _, report = _validate(root)
    example = _example(report, "notes", 0)
    assert example["arguments"] == {"tag": "ABC"}
    assert example["ok"] is True
    mismatch = [d for d in example["diagnostics"] if d["code"] == "model-mismatch"]
    assert len(mismatch) == 1, example["diagnostics"]
    assert "ABC" in mismatch[0]["message"]


# -- values an application's types convert: a valid example is not reported --------------------

CONVERTING_CLICK = """
import logging
import pathlib

import click


class LogLevel(click.Choice):
    # As celery's: any case is accepted, and the program receives the level's number.
    def __init__(self):
        super().__init__(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False)

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        return logging.getLevelName(super().convert(value, param, ctx).upper())


@click.command()
@click.option("--loglevel", "-l", type=LogLevel(), default="WARNING")
@click.option("--config", type=click.Path(path_type=pathlib.Path))
@click.option("--workers", type=click.IntRange(1, 8))
@click.argument("sources", nargs=-1, type=click.Path())
def cli(loglevel, config, workers, sources):
    pass
"""

CONVERTING_ARGPARSE = """
import argparse
import os


class PrependListAction(argparse.Action):
    # As ansible-galaxy's --roles-path: the value is prepended to a list.
    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest) or [])
        items[0:0] = values
        setattr(namespace, self.dest, items)


def paths(value):
    return [os.path.expanduser(part) for part in value.split(os.pathsep)]


parser = argparse.ArgumentParser(prog="galaxy")
parser.add_argument("--roles-path", action=PrependListAction, type=paths)
parser.add_argument("--level", type=int, choices=[1, 2, 3])
"""


def _errors(report: dict[str, Any], tool: str, index: int) -> list[str]:
    example = _example(report, tool, index)
    return [d["code"] for d in example["diagnostics"] if d["severity"] == "error"]


def test_values_a_click_type_converts_leave_a_valid_example_valid(tmp_path: Path) -> None:
    (tmp_path / "converting_app.py").write_text(CONVERTING_CLICK)
    examples = ["app -l INFO --config conf/app.toml a.txt b.txt", "app --loglevel info --workers 2"]
    tools = [_tool("app", [], examples)]
    root = make_project(
        tmp_path, tools, program="app", dialect=None, tree="click:converting_app:cli"
    )
    code, report = _validate(root)
    # The program receives 20 for INFO and a pathlib.Path for the config: neither is what the
    # tool's schema declares (its enum says INFO, its path is a string), and neither is a defect.
    for index in (0, 1):
        assert _example(report, "app", index)["ok"] is True, report["diagnostics"]
        assert _errors(report, "app", index) == []
    assert code == 0, report["diagnostics"]


def test_values_an_argparse_action_builds_leave_a_valid_example_valid(tmp_path: Path) -> None:
    (tmp_path / "galaxy_app.py").write_text(CONVERTING_ARGPARSE)
    tools = [_tool("galaxy", [], ["galaxy --roles-path roles", "galaxy --level 2"])]
    root = make_project(
        tmp_path, tools, program="galaxy", dialect=None, tree="argparse:galaxy_app:parser"
    )
    code, report = _validate(root)
    # The action makes the path a list of its characters: the example is still valid.
    for index in (0, 1):
        assert _example(report, "galaxy", index)["ok"] is True, report["diagnostics"]
        assert _errors(report, "galaxy", index) == []
    assert code == 0, report["diagnostics"]
