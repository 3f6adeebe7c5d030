"""What ``exampleguard dryrun`` refuses before anything runs, and what never reaches a run.

Project content steers the host side of a dry run: the fixtures it copies, the limits it sets,
the environment it passes. Each refusal here is a configuration problem with its exact exit
code (2) and message, naming the file and the key; nothing is run (the fake executable would
leave a marker under ``isolation = "env"``, and the report would list the run).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dryrun.test_dryrun import build, dryrun, markers, needs_bwrap, reconfigure, tool
from tests.support.project import assert_unusable_report
from tests.support.runuid import public_dir, python_for, reachable_by_runs

HINT = (
    "  help: Fixtures are a folder of the project holding regular files and directories only; "
    "docs/dry-runs.md says why."
)
NOTHING_RAN = "exampleguard dryrun ran nothing (1 problem)."

ENV_DUMP = "import json, os\nprint(json.dumps(dict(os.environ)))\n"


@pytest.fixture(scope="module")
def project() -> Iterator[Path]:
    with public_dir("eg-guards-") as base:
        yield _guards_project(base)


def _guards_project(base: Path) -> Path:
    (base / "outside").mkdir()
    (base / "outside" / "id_rsa").write_text("not for the run", encoding="utf-8")
    root = base / "project"
    root.mkdir()
    (root / "fx").mkdir()
    (root / "fx" / "data.txt").write_text("fixture", encoding="utf-8")
    (root / "env_dump.py").write_text(ENV_DUMP, encoding="utf-8")
    return build(root, [tool("fixture", ["ok"], "prev ok --label one")])


@pytest.fixture
def guarded(project: Path) -> Iterator[Path]:
    """The project with its default configuration back, and no marker left over."""
    yield project
    reconfigure(project)
    for marker in (project / "ran").glob("*") if (project / "ran").exists() else ():
        marker.unlink()


def _catalog_fixtures(root: Path, folder: str | None) -> None:
    catalog = json.loads((root / "catalog.json").read_text(encoding="utf-8"))
    if folder is None:
        catalog["tools"][0]["dry_run"].pop("fixtures", None)
    else:
        catalog["tools"][0]["dry_run"]["fixtures"] = folder
    (root / "catalog.json").write_text(json.dumps(catalog, indent=2), encoding="utf-8")


def _line_of(root: Path, file: str, text: str) -> int:
    lines = (root / file).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def _fixtures_key(root: Path) -> str:
    """``catalog.json:LINE:COLUMN`` of the tool's ``fixtures`` key, as diagnostics locate it."""
    lines = (root / "catalog.json").read_text(encoding="utf-8").splitlines()
    number = next(n for n, line in enumerate(lines, 1) if '"fixtures"' in line)
    column = lines[number - 1].index('"fixtures"') + 1
    return f"catalog.json:{number}:{column}"


def _refused(result: object, first: str) -> None:
    assert result.returncode == 2, result.explain()  # type: ignore[attr-defined]
    assert_unusable_report(result.stdout)  # type: ignore[attr-defined]
    lines = result.stderr.splitlines()  # type: ignore[attr-defined]
    assert lines[0] == first, result.stderr  # type: ignore[attr-defined]


# -- fixtures that leave the project ---------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "reason"),
    [
        (
            "../outside",
            "'../outside' leaves the project through '..'; fixtures are a folder inside it",
        ),
        (
            "fx/../../outside",
            "'fx/../../outside' leaves the project through '..'; fixtures are a folder inside it",
        ),
        (
            "linked",
            "'linked' passes through the symlink 'linked'; fixtures are never followed "
            "through a link",
        ),
        (
            "linked/sub",
            "'linked/sub' passes through the symlink 'linked'; fixtures are never "
            "followed through a link",
        ),
    ],
)
def test_a_tool_fixtures_folder_outside_the_project_is_refused(
    guarded: Path, folder: str, reason: str
) -> None:
    link = guarded / "linked"
    if not link.is_symlink():
        link.symlink_to(guarded.parent / "outside")
    (guarded.parent / "outside" / "sub").mkdir(exist_ok=True)
    _catalog_fixtures(guarded, folder)
    try:
        result = dryrun(guarded)
        where = _fixtures_key(guarded)
    finally:
        _catalog_fixtures(guarded, None)

    _refused(
        result,
        f"{where}: config-invalid catalog.json: tools[0].dry_run.fixtures: {reason}",
    )
    assert result.stderr.splitlines()[1] == HINT
    assert NOTHING_RAN in result.stderr
    assert markers(guarded) == set()


def test_an_absolute_configured_fixtures_folder_is_refused(guarded: Path) -> None:
    reconfigure(guarded, fixtures=str(guarded.parent / "outside"))

    result = dryrun(guarded)

    line = _line_of(guarded, "exampleguard.toml", "fixtures =")
    _refused(
        result,
        f"exampleguard.toml:{line}:1: config-invalid exampleguard.toml: dryrun.fixtures: "
        f"'{guarded.parent / 'outside'}' is an absolute path; fixtures are a folder inside the "
        "project",
    )
    assert NOTHING_RAN in result.stderr
    assert "id_rsa" not in result.stderr


# -- what a fixtures folder may hold ---------------------------------------------------------


def _plant(folder: Path, kind: str) -> Iterator[None]:
    target = folder / f"planted-{kind}"
    server: socket.socket | None = None
    if kind == "FIFO":
        os.mkfifo(target)
    elif kind == "symlink":
        target.symlink_to("/etc/shadow")
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(target))
    elif kind == "character device":
        try:
            # /dev/null's numbers: the node is a file in the test's own folder, nothing else.
            os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device node needs root")
    try:
        yield
    finally:
        if server is not None:
            server.close()
        target.unlink()


@pytest.mark.parametrize("kind", ["FIFO", "symlink", "socket", "character device"])
def test_a_fixture_that_is_not_a_regular_file_is_refused(guarded: Path, kind: str) -> None:
    """The decision: a configuration error (exit 2, nothing run), never a skipped entry."""
    _catalog_fixtures(guarded, "fx")
    planted = _plant(guarded / "fx", kind)
    next(planted)
    try:
        result = dryrun(guarded)
        where = _fixtures_key(guarded)
    finally:
        next(planted, None)
        _catalog_fixtures(guarded, None)

    _refused(
        result,
        f"{where}: config-invalid catalog.json: tools[0].dry_run.fixtures: "
        f"fixtures: {guarded / 'fx' / f'planted-{kind}'} is a {kind}; only regular files and "
        "directories are copied",
    )
    assert NOTHING_RAN in result.stderr
    assert markers(guarded) == set()


# -- limits ----------------------------------------------------------------------------------


def test_an_absurd_output_kb_is_a_configuration_error(guarded: Path) -> None:
    reconfigure(guarded, output_kb=2_000_000_000)

    result = dryrun(guarded)

    line = _line_of(guarded, "exampleguard.toml", "output_kb")
    column = (guarded / "exampleguard.toml").read_text().splitlines()[line - 1].index("2") + 1
    _refused(
        result,
        f"exampleguard.toml:{line}:{column}: config-invalid exampleguard.toml: dryrun.output_kb: "
        "input should be less than or equal to 65536, got 2000000000 (an integer)",
    )


# -- the environment -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [
        (
            "DATABASE_URL",
            "postgres://app:hunter2-secret@db.internal/prod",
            "pass_env names that look like credentials are never passed into a sandbox: "
            "DATABASE_URL (the rule: sandbox.CREDENTIAL_PATTERNS, case-insensitive; matched: "
            "DATABASE_URL value with a password in a URL (scheme://user:password@...))",
        ),
        (
            "LD_PRELOAD",
            None,
            "pass_env names that steer a loader or an interpreter are never passed into a "
            "sandbox: LD_PRELOAD (the rule: sandbox.HOOK_PATTERNS; matched: LD_PRELOAD LD_*)",
        ),
        (
            "PYTHONPATH",
            None,
            "pass_env names that steer a loader or an interpreter are never passed into a "
            "sandbox: PYTHONPATH (the rule: sandbox.HOOK_PATTERNS; matched: PYTHONPATH "
            "PYTHONPATH)",
        ),
        (
            "BASH_FUNC_ls%%",
            None,
            "pass_env names that steer a loader or an interpreter are never passed into a "
            "sandbox: BASH_FUNC_ls%% (the rule: sandbox.HOOK_PATTERNS; matched: BASH_FUNC_ls%% "
            "BASH_FUNC_*)",
        ),
    ],
)
def test_a_refused_pass_env_exits_2_with_its_rule(
    guarded: Path, name: str, value: str | None, rule: str
) -> None:
    """A hook is refused by name alone (it is not set here: it would steer exampleguard too)."""
    reconfigure(guarded, isolation="env", pass_env=[name])

    result = dryrun(guarded, env={**os.environ, name: value} if value else None)

    line = _line_of(guarded, "exampleguard.toml", "pass_env =")
    _refused(
        result,
        f"exampleguard.toml:{line}:1: config-invalid exampleguard.toml: dryrun.pass_env: {rule}",
    )
    assert NOTHING_RAN in result.stderr
    assert value is None or value not in result.stderr
    assert markers(guarded) == set()


@pytest.mark.parametrize(
    "isolation", [pytest.param("auto", marks=[pytest.mark.sandbox, needs_bwrap]), "env"]
)
def test_a_name_that_only_starts_like_a_locale_never_reaches_the_run(
    guarded: Path, isolation: str
) -> None:
    reconfigure(
        guarded,
        isolation=isolation,
        executable=[python_for(isolation), str(guarded / "env_dump.py")],
    )
    planted = "lc-api-token-value"
    # Concurrent pytest sessions give pytest's base dir back its 0700.
    reachable_by_runs(guarded)

    result = dryrun(guarded, env={**os.environ, "LC_API_TOKEN": planted, "LC_ALL": "C.UTF-8"})

    assert result.returncode == 0, result.explain()
    environment = json.loads(result.runs[("fixture", 0)]["stdout"].splitlines()[0])
    assert "LC_API_TOKEN" not in environment
    assert planted not in result.stdout
    # A real locale name still passes.
    assert environment["LC_ALL"] == "C.UTF-8"


# -- the minimum set of guarantees -----------------------------------------------------------


def test_required_guarantees_the_backend_lacks_fail_closed(guarded: Path) -> None:
    reconfigure(guarded, isolation="env", require=["read-only-root", "no-network"])

    result = dryrun(guarded)

    line = _line_of(guarded, "exampleguard.toml", "require =")
    _refused(
        result,
        f"exampleguard.toml:{line}:1: isolation-unavailable exampleguard.toml: dryrun.require: "
        "the env backend cannot guarantee no-network, read-only-root that `require` names; "
        "nothing was run",
    )
    assert NOTHING_RAN in result.stderr
    assert markers(guarded) == set()


@pytest.mark.sandbox
@needs_bwrap
def test_required_guarantees_the_full_backend_gives_run(guarded: Path) -> None:
    reconfigure(guarded, require=["read-only-root", "not-host-root", "landlock-fs"])

    result = dryrun(guarded)

    assert result.returncode == 0, result.explain()
    held = result.runs[("fixture", 0)]["isolation"]["guarantees"]
    assert {"read-only-root", "not-host-root", "landlock-fs"} <= set(held)


def test_an_unknown_guarantee_name_is_a_configuration_error(guarded: Path) -> None:
    reconfigure(guarded, require=["read-only-rot"])

    result = dryrun(guarded)

    assert result.returncode == 2, result.explain()
    first = result.stderr.splitlines()[0]
    assert ": config-invalid exampleguard.toml: dryrun.require[0]: value error, " in first
    assert "'read-only-rot' is not a sandbox guarantee; one of: work-dir-only-writable," in first


def test_the_config_schema_lists_the_guarantees() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "exampleguard", "schema", "config"],
        capture_output=True,
        text=True,
        check=True,
    )
    schema = json.loads(done.stdout)
    require = schema["$defs"]["DryRunSettings"]["properties"]["require"]
    assert "read-only-root" in require["items"]["enum"]
    assert "landlock-scope" in require["items"]["enum"]
