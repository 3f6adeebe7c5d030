"""Launchers: each run is born in its memory cgroup, never joins one, and leaves nothing behind.

A process that joins a cgroup waits out a grace period of the kernel's; the compiled stage's
launchers join theirs ahead of the runs (``sandbox/_launcher.py``). These tests need a host that
delegates a memory cgroup to the caller, and the compiled stage.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sbx_support import REPO, World, needs_bwrap

import sandbox
import sandbox._bubblewrap
import sandbox._launcher
import sandbox._limits
from sandbox import Guarantee, Status


@pytest.fixture
def cgroup_base(sandbox_stage: str) -> Path:
    """The memory cgroup this caller may create runs' cgroups in (with the compiled stage)."""
    if sandbox_stage != "compiled":
        pytest.skip("only the compiled stage has launchers")
    base = sandbox.probe_host().memory_cgroup
    if base is None:
        pytest.skip("this host delegates no memory cgroup to this caller")
    return Path(base)


def _ours(base: Path, pid: int) -> set[str]:
    return {p.name for p in base.iterdir() if p.name.startswith(f"sandbox-run-{pid}-")}


def _launchers_of(pid: int) -> list[int]:
    """The launcher processes started for the caller ``pid`` still waiting for a launch."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"launch" in words and f"parent={pid}".encode() in words:
            found.append(int(entry.name))
    return found


def _members(cgroup: Path) -> list[int]:
    try:
        return [int(pid) for pid in (cgroup / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _command(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


@needs_bwrap
def test_every_process_of_a_run_is_in_the_run_s_own_memory_cgroup(
    world: World, cgroup_base: Path
) -> None:
    # Looked at from outside while the run sleeps: bubblewrap, the stage and the program are
    # the members of one cgroup of this caller's, and nothing else is.
    token = "3.14159"
    done = threading.Event()
    outcomes: list[sandbox.Outcome] = []

    def run() -> None:
        outcomes.append(sandbox.run(world.policy(("/bin/sleep", token)), cancel=done))

    for _ in range(3):
        outcomes.clear()
        thread = threading.Thread(target=run)
        thread.start()
        try:
            deadline = time.monotonic() + 10
            found: list[int] = []
            while not found and time.monotonic() < deadline:
                for name in _ours(cgroup_base, os.getpid()):
                    members = _members(cgroup_base / name)
                    if any(_command(pid)[:2] == [b"/bin/sleep", token.encode()] for pid in members):
                        found = members
                time.sleep(0.02)
            assert found, "the run's program is in no cgroup of this caller's"
            commands = [_command(pid)[0] for pid in found]
            assert len(found) == 3, commands
            assert any(command.endswith(b"bwrap") for command in commands), commands
        finally:
            done.set()
            thread.join()
            done.clear()
        assert outcomes[0].status is Status.CRASHED  # cancelled
        assert Guarantee.MEMORY_CGROUP in outcomes[0].guarantees


@needs_bwrap
def test_a_run_started_by_a_launcher_never_joins_a_cgroup(
    world: World, cgroup_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stage joins a cgroup only where no launcher came in time: that way is closed here.
    def joined(*_: object) -> None:
        raise AssertionError("a run's stage was made to join its cgroup")

    monkeypatch.setattr(sandbox._bubblewrap, "RunCgroup", joined)
    for _ in range(5):
        outcome = sandbox.run(world.policy(("true",)))
        assert outcome.status is Status.PASSED, (outcome.detail, outcome.stderr)
        assert Guarantee.MEMORY_CGROUP in outcome.guarantees


@needs_bwrap
def test_closing_the_launchers_leaves_no_cgroup(world: World, cgroup_base: Path) -> None:
    sandbox.close_launchers()
    before = _ours(cgroup_base, os.getpid())
    outcome = sandbox.run(world.policy(("true",)))
    assert outcome.status is Status.PASSED, outcome.stderr
    assert _launchers_of(os.getpid()), "no launcher waits for the next run"
    sandbox.close_launchers()
    assert _ours(cgroup_base, os.getpid()) == before
    assert _launchers_of(os.getpid()) == []


@needs_bwrap
def test_a_killed_caller_s_launchers_die_and_their_cgroups_are_removed_next(
    world: World, cgroup_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        "import os, signal, sys, sandbox\n"
        "outcome = sandbox.run(sandbox.Policy(argv=('true',)))\n"
        "print(outcome.status.value, flush=True)\n"
        "sys.stdin.readline()\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    caller = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert caller.stdout is not None
    assert caller.stdin is not None
    assert caller.stdout.readline().strip() == "passed"
    deadline = time.monotonic() + 10
    while not _launchers_of(caller.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _launchers_of(caller.pid), "the caller kept no launcher ready"
    left = _ours(cgroup_base, caller.pid)
    assert left
    caller.stdin.write("\n")
    caller.stdin.flush()
    assert caller.wait(10) == -signal.SIGKILL
    caller.stdin.close()
    caller.stdout.close()
    while _launchers_of(caller.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _launchers_of(caller.pid) == [], "a launcher outlived its caller"
    # As a fresh process: the sweep runs once per process and base.
    monkeypatch.setattr(sandbox._limits, "_swept", set())
    sandbox.close_launchers()
    sandbox._limits.RunCgroup(cgroup_base, None).release()
    assert _ours(cgroup_base, caller.pid) == set()


@needs_bwrap
def test_a_launcher_gone_before_its_launch_fails_the_run_alone(
    world: World, cgroup_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = sandbox._launcher.LAUNCHERS.take

    def gone(*arguments: object) -> sandbox._launcher.Launcher | None:
        launcher = taken(*arguments)  # type: ignore[arg-type]
        assert launcher is not None
        launcher.process.kill()
        launcher.process.wait()
        return launcher

    monkeypatch.setattr(sandbox._launcher.LAUNCHERS, "take", gone)
    outcome = sandbox.run(world.policy(("true",)))
    assert outcome.status is Status.NOT_STARTED
    assert outcome.detail is not None
    assert "cannot start" in outcome.detail
    monkeypatch.undo()
    again = sandbox.run(world.policy(("true",)))
    assert again.status is Status.PASSED, again.stderr


@needs_bwrap
def test_with_no_run_going_on_closing_the_launchers_ends_their_thread(
    world: World, cgroup_base: Path
) -> None:
    # A process with a thread besides the main one is not forked (exampleguard checks large
    # catalogs in forked copies of itself): once a session lets go of its launchers, none is.
    for _ in range(3):
        # Each run after the first has its launcher replaced as it ends: close_launchers()
        # comes while the replacement is still starting.
        outcome = sandbox.run(world.policy(("true",)))
        assert outcome.status is Status.PASSED, outcome.stderr
    assert "sandbox-launchers" in {t.name for t in threading.enumerate()}
    started = time.monotonic()
    sandbox.close_launchers()
    assert time.monotonic() - started < 3
    assert "sandbox-launchers" not in {t.name for t in threading.enumerate()}
    assert _launchers_of(os.getpid()) == []
    again = sandbox.run(world.policy(("true",)))
    assert again.status is Status.PASSED, again.stderr
    assert Guarantee.MEMORY_CGROUP in again.guarantees
