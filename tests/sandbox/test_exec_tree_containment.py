"""A program named by ``tree = "exec:PROGRAM"`` as a hostile binary, contained as an import is.

The program here is an sh script that speaks the tree protocol and, before it answers, tries
what it would get away with if exampleguard ran it as the caller: it writes into the project
and the caller's home, forges the sandbox's exec-failure line, leaves a process behind, floods
its standard output past the cap, or writes GitHub workflow commands and terminal escapes into
its verdicts. Each runs on the three hosts CI users have
(``tests/sandbox/test_live_tree_containment`` simulates them) and for both callers; where the
sandbox can run it contains the program, where it cannot nothing runs (exit 2,
``isolation-unavailable``). Never does the program run outside the sandbox.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_live_tree_containment import (
    CALLERS,
    HOSTS,
    Caller,
    contained,
    exampleguard,
    validate,
)

from tests.support.project import ONE_EXAMPLE_COUNTS, make_project
from tests.support.runuid import reachable_by_runs

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the host launcher is x86_64's"),
]

TOOL = {"id": "app.hello", "command": ["hello"], "examples": [{"command": "app hello --n 1"}]}
TREE = {
    "format": "exampleguard.tree/v1",
    "program": "app",
    "dialect": "click",
    "commands": [
        {"path": [], "runnable": False},
        {
            "path": ["hello"],
            "runnable": True,
            "parameters": [{"name": "n", "flags": ["--n"], "type": "integer"}],
        },
    ],
}
ANSWER = """\
case "$2" in
tree) cat <<'EOF'
{tree}
EOF
;;
judge) while IFS= read -r line; do
  echo '{{"accepted": true, "path": ["hello"], "given": {{"n": 1}}}}'
done;;
esac
"""


def project(root: Path, prelude: str, answer: str = ANSWER) -> Path:
    """A project whose tree is ``exec:./bin/app``: an sh program running ``prelude`` first."""
    root.mkdir(parents=True, exist_ok=True)
    program = root / "bin" / "app"
    program.parent.mkdir(exist_ok=True)
    body = textwrap.dedent(prelude) + answer.format(tree=json.dumps(TREE))
    program.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    program.chmod(0o755)
    make_project(root, [TOOL], program="app", dialect=None, tree="exec:./bin/app", counts=False)
    counts = json.dumps(ONE_EXAMPLE_COUNTS)
    (root / "exampleguard-counts.json").write_text(counts, encoding="utf-8")
    return root


def expect_refused(result: subprocess.CompletedProcess[str]) -> None:
    """Nothing ran: no sandbox here, or none this caller's interpreter can run in."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert "isolation-unavailable" in result.stderr or (
        "the sandbox could not start the program" in result.stderr
    ), result.stderr


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("who", CALLERS)
def test_a_write_to_the_project_and_the_callers_home_never_lands(
    request: pytest.FixtureRequest, tmp_path: Path, host: str, who: str
) -> None:
    caller = _caller(request, tmp_path, who)
    home = caller.make("home")
    root = caller.make("app")
    targets = [root / "escaped", home / "escaped", root / "bin" / "app.new"]
    writes = "".join(f"echo escaped >> '{target}' 2>/dev/null\n" for target in targets)
    project(root, writes)
    result = validate(caller, root, host, env={"HOME": str(home)})
    if contained(caller, host):
        assert result.returncode == 0, result.stdout + result.stderr
    else:
        # No sandbox here, or (a root caller's landlock run) one that can start the program
        # but not the interpreter its judge run needs: refused either way, never unsandboxed.
        expect_refused(result)
    assert [path for path in targets if path.exists()] == []


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("who", CALLERS)
def test_a_forged_exec_failure_is_the_programs_own_failure_and_nothing_runs_again(
    request: pytest.FixtureRequest, tmp_path: Path, host: str, who: str
) -> None:
    caller = _caller(request, tmp_path, who)
    marker = caller.make("outside") / "ran"
    forged = f"""\
        echo ran >> '{marker}' 2>/dev/null
        echo "sandbox: execvp app: No such file or directory" >&2
        echo '{json.dumps(TREE)}'
        exit 127
        """
    root = project(caller.make("app"), forged)
    result = validate(caller, root, host)
    assert result.returncode == 2, result.stdout + result.stderr
    # The tree run needs no interpreter: where a sandbox can start the program at all, it ran
    # there and its failure is its own.
    if contained(caller, host) or "exited with status 127" in result.stderr:
        assert "exited with status 127 answering `__exampleguard tree`" in result.stderr
        assert "tree-unavailable" in result.stderr
    else:
        expect_refused(result)
    assert not marker.exists()


def test_a_program_that_leaves_a_process_behind_leaves_none(tmp_path: Path) -> None:
    caller = Caller("caller", tmp_path)
    root = project(caller.make("app"), "sleep 600 &\n( sleep 601 & ) &\n")
    result = validate(caller, root, "namespaces")
    assert result.returncode == 0, result.stdout + result.stderr
    for seconds in ("600", "601"):
        leftover = subprocess.run(
            ["pgrep", "-x", "-f", f"sleep {seconds}"], capture_output=True, check=False
        )
        assert leftover.stdout == b""


def test_an_answer_past_the_cap_is_refused_and_never_held(tmp_path: Path) -> None:
    caller = Caller("caller", tmp_path)
    # 96 MiB of "tree", past the 64 MiB cap.
    flood = 'if [ "$2" = tree ]; then head -c 100663296 /dev/zero | tr "\\0" x; exit 0; fi\n'
    root = project(caller.make("app"), flood)
    measured = caller.make("peak") / "kib"
    measure = (
        "import resource, subprocess, sys; done = subprocess.run(sys.argv[2:]); "
        "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))"
        "; sys.exit(done.returncode)"
    )
    run = caller.command("namespaces", "validate", "--no-cache")
    result = subprocess.run(
        [sys.executable, "-c", measure, str(measured), *run],
        cwd=root,
        env=caller.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "with more than 64 MiB" in result.stderr
    peak_mib = int(measured.read_text(encoding="utf-8")) / 1024
    assert peak_mib < 320, peak_mib


def test_the_programs_words_are_data_in_every_output(tmp_path: Path) -> None:
    caller = Caller("caller", tmp_path)
    hostile = """\
case "$2" in
tree) cat <<'EOF'
{tree}
EOF
;;
judge) while IFS= read -r line; do
  printf '%s\\n' '{{"accepted": false, "error": "\\n::add-mask::x\\n::error::pwned \\u001b[2J"}}'
done;;
esac
"""
    root = project(caller.make("app"), "", answer=hostile)
    result = exampleguard(caller, root, "namespaces", "validate", "--format", "github")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith(("::add-mask::", "::error::pwned"))]
    assert "\x1b" not in result.stdout


def test_guard_named_by_name_is_said_for_a_program_too(tmp_path: Path) -> None:
    if os.geteuid() == 0 and str(Path(sys.executable).resolve()).startswith("/root/"):
        pytest.skip("a root caller's env run cannot execute an interpreter in root's home")
    caller = Caller("caller", tmp_path)
    root = project(caller.make("app"), "")
    # A root caller's env run is another uid, which must reach the program by permission.
    reachable_by_runs(root)
    config = root / "exampleguard.toml"
    config.write_text(config.read_text("utf-8") + 'tree_isolation = "guard"\n', "utf-8")
    result = validate(caller, root, "namespaces")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tree-unsandboxed" in result.stdout + result.stderr


def _caller(request: pytest.FixtureRequest, tmp_path: Path, who: str) -> Caller:
    """The caller ``who``, as the live tree's containment tests make it."""
    from test_live_tree_containment import PUBLIC_PYTHON

    from tests.support.runuid import public_dir

    if who == "caller":
        return Caller("caller", tmp_path)
    if os.geteuid() != 0:
        pytest.skip("only root can run exampleguard as nobody")
    if PUBLIC_PYTHON is None:
        pytest.skip("EXAMPLEGUARD_PUBLIC_PYTHON names no interpreter every user may run")
    manager = public_dir("exampleguard-exec-")
    folder = manager.__enter__()
    request.addfinalizer(lambda: manager.__exit__(None, None, None))
    return Caller("nobody", folder)
