"""Building throwaway projects and running the real CLI against them."""

from __future__ import annotations

import compileall
import contextlib
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE_APPS = REPOSITORY / "tests" / "fixtures" / "apps"


NOTES_TREE = {
    "format": "exampleguard.tree/v1",
    "program": "notes",
    "dialect": "click",
    "commands": [
        {"path": [], "runnable": False, "parameters": []},
        {
            "path": ["add"],
            "runnable": True,
            "parameters": [
                {"name": "title", "positional": True},
                {"name": "tag", "flags": ["--tag", "-t"], "multiple": True},
                {"name": "limit", "flags": ["--limit"], "type": "integer", "min": 1},
                {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
            ],
        },
    ],
}
"""A tree snapshot of one command, ``notes add TITLE [--tag T]... [--limit N] [--format F]``."""


ONE_EXAMPLE_COUNTS = {
    "format": "exampleguard.counts/v1",
    "tools": 1,
    "examples": 1,
    "contract_validated": 1,
    "dry_run_eligible": 0,
    "dry_run_narrowed": 0,
    "excluded": 0,
}
"""The counts of a catalog of one tool with one example and no dry run (written, not run)."""


def toml_value(value: Any) -> str:
    """A TOML literal for a plain value (strings, numbers, booleans, lists, inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + "}"
    raise TypeError(type(value))


def write_config(root: Path, settings: Mapping[str, Any], *, pyproject: bool = False) -> Path:
    """Write ``settings`` as ``exampleguard.toml`` (or a ``[tool.exampleguard]`` table)."""
    tables = {k: v for k, v in settings.items() if isinstance(v, dict) and k == "dryrun"}
    plain = {k: v for k, v in settings.items() if k not in tables}
    prefix = "tool.exampleguard" if pyproject else ""
    lines = [f"[{prefix}]"] if pyproject else []
    lines += [f"{key} = {toml_value(value)}" for key, value in plain.items()]
    for name, table in tables.items():
        lines.append(f"[{prefix + '.' if prefix else ''}{name}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    path = root / ("pyproject.toml" if pyproject else "exampleguard.toml")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_project(
    root: Path,
    tools: Sequence[Mapping[str, Any]],
    *,
    program: str = "notes",
    dialect: str | None = "click",
    tree: str | None = None,
    settings: Mapping[str, Any] | None = None,
    counts: bool = True,
) -> Path:
    """A project in ``root``: a catalog of ``tools``, its configuration, and (by default) counts.

    The counts file is written with the current figures (via the real CLI), so a test sees only
    the defects it planted.
    """
    catalog: dict[str, Any] = {"format": "exampleguard.catalog/v1", "program": program}
    if dialect is not None:
        catalog["dialect"] = dialect
    catalog["tools"] = list(tools)
    (root / "catalog.json").write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    config: dict[str, Any] = {"catalog": "catalog.json"}
    if tree is not None:
        config["tree"] = tree
    config.update(settings or {})
    write_config(root, config)
    if counts:
        result = run_cli(["counts", "--write"], cwd=root)
        assert result.returncode == 0, result.stderr
    return root


def compile_bytecode(checkout: Path = REPOSITORY) -> None:
    """Write the bytecode of what exampleguard processes import from ``checkout``.

    An installed package comes with its bytecode, and an interpreter that may write it caches
    it on the first run. Under ``PYTHONDONTWRITEBYTECODE``, which some CI hosts set, a fresh
    clone has none and gets none: every process started from it (the suite's few hundred, see
    :func:`_environment`; the benchmark's) would compile exampleguard again, 0.45 s of a 0.75 s
    start. A checkout that may not be written is left as it is (``quiet=2``).
    """
    for folder in ("exampleguard", "sandbox", "tests/fixtures/apps"):
        compileall.compile_dir(checkout / folder, quiet=2)


def _environment(env: Mapping[str, str] | None) -> dict[str, str]:
    environment = dict(os.environ if env is None else env)
    # Fixture applications import from here, as a user's application imports from its project.
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(FIXTURE_APPS), str(REPOSITORY), environment.get("PYTHONPATH")])
    )
    environment.setdefault("NO_COLOR", "1")
    return environment


@contextlib.contextmanager
def _process_state(cwd: Path, env: Mapping[str, str], stdin: str) -> Iterator[tuple[Any, Any]]:
    """The working directory, environment and standard streams of a run, restored after it."""
    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    try:
        with contextlib.chdir(cwd):
            os.environ.clear()
            os.environ.update(env)
            sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
            yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)


def run_main(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``exampleguard ARGS`` in this process through ``main(argv)``, as ``run_cli`` would.

    The same exit code and output as a subprocess, without an interpreter's start-up: for every
    test where a separate process proves nothing more (signals, terminals and start-up itself
    need one: use :func:`run_cli`).
    """
    from exampleguard.cli import main

    with _process_state(cwd, _environment(env), input_text or "") as (out, err):
        code = main(list(args))
        out.flush()
        err.flush()
        stdout = out.buffer.getvalue().decode("utf-8", "backslashreplace")
        stderr = err.buffer.getvalue().decode("utf-8", "backslashreplace")
    return subprocess.CompletedProcess([*args], code, stdout, stderr)


def run_cli(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    input_text: str | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``exampleguard ARGS`` in ``cwd`` and capture its exit code and output.

    In this process through ``main(argv)`` (:func:`run_main`), unless the test needs a process
    of its own: ``process=True``, an environment of its own (``env``: what it imports may
    depend on it), a ``timeout`` (it may hang), or a call from another thread than the main
    one (the working directory and the standard streams are the process's, one run at a
    time). Then ``python -m exampleguard``, as a user runs it.
    """
    in_main_thread = threading.current_thread() is threading.main_thread()
    if not process and env is None and timeout is None and in_main_thread:
        return run_main(args, cwd=cwd, input_text=input_text)
    return run_process(args, cwd=cwd, env=env, timeout=timeout or 120, input_text=input_text)


def run_process(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m exampleguard ARGS`` in ``cwd`` as a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "exampleguard", *args],
        cwd=cwd,
        env=_environment(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input_text,
        check=False,
    )


# A one-command Click application whose module runs some code of the test's before it defines the
# command: what an import that misbehaves looks like. Its catalog holds one valid example.
APP_MODULE_TAIL = '''
import click


@click.command()
@click.option("--x", type=int)
def cli(x):
    """An app."""
'''


def app_project_files(
    source: str = "", *, timeout: float = 20, module: str = "app_module", isolation: str = "auto"
) -> dict[str, str]:
    """The files of a project whose tree is ``click:MODULE:cli``, imported after ``source`` ran.

    ``isolation`` is the project's ``tree_isolation``: ``auto`` (the default) imports the tree
    in the sandbox, ``guard`` under the import guard and the sandbox's ``env`` backend.
    """
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "app",
        "tools": [{"id": "app", "command": [], "examples": [{"command": "app --x 1"}]}],
    }
    return {
        "exampleguard.toml": (
            f'catalog = "catalog.json"\ntree = "click:{module}:cli"\ntree_timeout = {timeout}\n'
            f'tree_isolation = "{isolation}"\n'
        ),
        "catalog.json": json.dumps(catalog),
        "exampleguard-counts.json": json.dumps(ONE_EXAMPLE_COUNTS),
        f"{module}.py": source + APP_MODULE_TAIL,
    }


def assert_unusable_report(
    stdout: str, args: Sequence[str] = ("validate", "--format", "json")
) -> None:
    """What ``exampleguard ARGS`` that could not be evaluated (exit 2) writes on stdout.

    A report command (``validate``, ``dryrun``, ``report merge``) in a machine format still
    writes its report
    (SPEC 6): well-formed, ``ok`` false, nothing checked, an error saying why. Anything else
    (text, a listing, a usage error) writes nothing there: the reasons are on stderr.
    """
    words = list(args)
    chosen = words[words.index("--format") + 1] if "--format" in words[:-1] else "full"
    reporting = words[:1] in (["validate"], ["dryrun"]) or words[:2] == ["report", "merge"]
    # A usage error (an unknown format among them) comes before any report.
    if not reporting or chosen not in ("json", "sarif", "junit", "github"):
        assert stdout == "", "the reasons are on stderr"
        return
    if chosen == "junit":
        ElementTree.fromstring(stdout)
        return
    if chosen == "github":
        assert stdout.startswith("::error "), stdout
        return
    report: dict[str, Any] = json.loads(stdout)
    if chosen == "sarif":
        assert report["runs"][0]["results"], report
        return
    assert report["format"] == "exampleguard.report/v1"
    assert report["ok"] is False
    assert report["examples"] == []
    assert any(d["severity"] == "error" for d in report["diagnostics"]), report
