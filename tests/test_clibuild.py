"""The fast-start command line is Typer's own to a user: the same help, values and errors.

``exampleguard`` builds a subcommand only when it is looked up, and converts the values Typer's
pydantic adapters would convert trivially without them (:mod:`exampleguard.clibuild`). These
tests hold both against Typer: every help text and every error of the lazily built group is the
one of the group ``typer.main.get_command`` builds, and every parameter converts a range of
values, valid and invalid, to the result (or the error message) of Typer's own conversion.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param

from exampleguard.cli import OutputFormat, app
from exampleguard.clibuild import DirectCommand, DirectGroup, click_command
from tests.support.project import REPOSITORY, run_main


def _eager() -> Any:
    """The group as Typer builds it: every command at once."""
    return typer.main.get_command(app)


def _paths(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield prefix
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _paths(command, (*prefix, name))
        else:
            yield (*prefix, name)


COMMAND_PATHS = list(_paths(_eager()))

ERRORS = [
    [],
    ["nosuch"],
    ["valdate"],
    ["dispositions", "nosuch"],
    ["report"],
    ["validate", "--format", "bogus"],
    ["dryrun", "--jobs", "0"],
    ["dryrun", "--jobs", "abc"],
    ["dryrun", "--jobs", "1.5"],
    ["validate", "--form", "json"],
    ["validate", "extra"],
    ["validate", "--config", "/"],
    ["validate", "--output", "/"],
    ["schema", "bogus"],
    ["dispositions", "add", "t", "-1", "--reason-code", "r", "--reason", "why"],
    ["dispositions", "add", "t", "x", "--reason-code", "r", "--reason", "why"],
    ["report", "merge", "/"],
    ["tree", "--format", "yaml"],
]


def _as_built(command: Any) -> None:
    del command  # compared as Typer builds it, without the CLI's own touches to its help


def _outcome(command: Any, args: list[str]) -> tuple[int | str | None, str, str]:
    """Exit code, stdout and stderr of ``command`` run on ``args`` in this process."""
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            command.main(args=args, prog_name="exampleguard", standalone_mode=True)
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def test_every_command_of_the_app_is_a_direct_one() -> None:
    # A command left to Typer's classes would convert its values through pydantic again.
    for path in COMMAND_PATHS:
        command = _eager()
        for name in path:
            command = command.commands[name]
        expected = DirectGroup if hasattr(command, "commands") else DirectCommand
        assert isinstance(command, expected), path


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda path: " ".join(path) or "root")
def test_help_is_typers_own(path: tuple[str, ...]) -> None:
    lazy = _outcome(click_command(app, _as_built), [*path, "--help"])
    assert lazy == _outcome(_eager(), [*path, "--help"])
    assert lazy[0] == 0
    assert "Usage: exampleguard" in lazy[1]


@pytest.mark.parametrize("args", ERRORS, ids=" ".join)
def test_errors_are_typers_own(args: list[str], tmp_path: Path) -> None:
    with contextlib.chdir(tmp_path):
        lazy = _outcome(click_command(app, _as_built), args)
        eager = _outcome(_eager(), args)
    assert lazy == eager
    assert lazy[0] == 2


def test_a_command_is_built_only_when_it_is_looked_up() -> None:
    built: list[str] = []
    group = click_command(app, lambda command: built.append(command.name))
    assert built == ["exampleguard"]
    assert list(group.commands) == list(_eager().commands)
    assert built == ["exampleguard"]
    assert group.commands["explain"].name == "explain"
    assert built == ["exampleguard", "explain"]


def test_the_cli_runs_a_command_through_the_lazy_group(tmp_path: Path) -> None:
    result = run_main(["explain", "unknown-flag"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("unknown-flag (error, since ")


def _values(tmp_path: Path) -> list[Any]:
    file = tmp_path / "file.json"
    file.write_text("{}", encoding="utf-8")
    texts = [
        "", "0", "1", "2", "01", "-1", "+1", " 1", "1 ", "1_0", "1.5", "\u0661", "10" * 12,
        "abc", "json", "JSON", "Json", " json", "full", "FULL", "text", "catalog", "tool",
        "doc-exceptions", "-", str(file), str(tmp_path), str(tmp_path / "absent.json"),
        "a\x00b",
    ]  # fmt: skip
    values: list[Any] = [*texts, 0, 1, -3, True, False, None, OutputFormat.json, file, tmp_path]
    values += [(), (str(file),), (str(tmp_path),), ("a", "b"), ("1", "x"), [str(file)]]
    return values


def _converted(convert: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        result = convert.coerce(value, param=param, ctx=ctx)
    except BadParameter as error:
        return "error", error.format_message()
    except Exception as error:  # whatever Typer raises, the direct path must raise too
        return "raised", (type(error), str(error))
    return "value", (type(result), result)


def test_every_parameter_converts_as_typer_does(tmp_path: Path) -> None:
    values = _values(tmp_path)
    checked = 0
    for path in COMMAND_PATHS:
        command = _eager()
        for name in path:
            command = command.commands[name]
        ctx = Context(command, info_name=path[-1] if path else "exampleguard")
        for param in command.get_params(ctx):
            descriptor = getattr(param, "type_descriptor", None)
            if descriptor is None:
                continue
            direct = param.get_runtime_param()
            assert type(direct).__name__ == "_DirectValues", param.name
            typer_own = build_runtime_param(descriptor)
            for value in values:
                expected = _converted(typer_own, value, param, ctx)
                assert _converted(direct, value, param, ctx) == expected, (param.name, value)
                checked += 1
    assert checked > 1000


WITHOUT_CONVERSION_LAYER = """
import contextlib, io, json, sys
# As with a Typer that has no pydantic conversion layer to bypass (0.26): the module that
# bypasses it cannot be imported.
sys.modules["exampleguard._directvalues"] = None
from exampleguard.cli import main
outcomes = []
for args in json.loads(sys.argv[1]):
    out, err = io.TextIOWrapper(io.BytesIO()), io.TextIOWrapper(io.BytesIO())
    sys.stdout, sys.stderr = out, err
    code = main(args)
    out.flush(); err.flush()
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    outcomes.append([code, out.buffer.getvalue().decode(), err.buffer.getvalue().decode()])
print(json.dumps({"outcomes": outcomes, "typer_own": "typer._adapters" in sys.modules}))
"""


def test_without_the_direct_conversion_typer_converts_and_says_the_same(tmp_path: Path) -> None:
    calls = [["--help"], ["validate", "--help"], ["dryrun", "--jobs", "0"], ["explain", "x"]]
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_CONVERSION_LAYER, json.dumps(calls)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPOSITORY), "NO_COLOR": "1", "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.splitlines()[-1])
    assert probe["typer_own"] is True
    expected = []
    for args in calls:
        done = run_main(args, cwd=tmp_path, env={"NO_COLOR": "1", "COLUMNS": "80"})
        expected.append([done.returncode, done.stdout, done.stderr])
    assert probe["outcomes"] == expected
    assert expected[2][0] == 2
