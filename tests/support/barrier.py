"""Real ``exampleguard`` processes held at a barrier, then released at one instant.

Each child imports everything a command may import, prints ``ready`` and waits on stdin: once
released, what it does next is the command itself, not Python start-up. That is what lets a
test start two writers at the same moment, or send a signal a measured time into a command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.project import FIXTURE_APPS, REPOSITORY

BARRIER_CHILD = """
import sys
import exampleguard.cli, exampleguard._pipeline, exampleguard._files
import exampleguard._commands.validate, exampleguard._commands.counts
import exampleguard._commands.records
import exampleguard._commands.init
import exampleguard._counts, exampleguard._dispositions, exampleguard._tree, exampleguard._report
import exampleguard._adapters._child, exampleguard._dryrun, sandbox
from exampleguard.cli import main
from exampleguard._report import json_format
print("ready", flush=True)
sys.stdin.readline()
sys.exit(main(sys.argv[1:]))
"""


@dataclass(frozen=True)
class Result:
    """How one released process ended."""

    returncode: int
    stdout: str
    stderr: str


def barrier_env(**extra: str) -> dict[str, str]:
    """The environment of a child: the checkout and the fixture apps importable, no colour."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)])
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def start_at_barrier(
    root: Path, args: Sequence[str], env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start ``exampleguard ARGS`` in ``root`` and return once it waits at the barrier."""
    process = _spawn(root, args, env)
    _await_ready(process)
    return process


def _spawn(root: Path, args: Sequence[str], env: Mapping[str, str] | None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", BARRIER_CHILD, *args],
        cwd=root,
        env=dict(env) if env is not None else barrier_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _await_ready(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    ready = process.stdout.readline()
    if ready != "ready\n":
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"the child never reached the barrier: {ready!r}\n{err}")


def release(process: subprocess.Popen[str]) -> None:
    """Let a child waiting at the barrier run its command."""
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()


def run_together(
    root: Path,
    argvs: Sequence[Sequence[str]],
    env: Mapping[str, str] | None = None,
    *,
    timeout: float = 120,
) -> list[Result]:
    """Start one child per argv, wait until all are at the barrier, release them at once."""
    processes: list[subprocess.Popen[str]] = []
    try:
        # All start at once (their imports overlap), and none is released before all are ready.
        processes.extend(_spawn(root, argv, env) for argv in argvs)
        for process in processes:
            _await_ready(process)
        for process in processes:
            release(process)
        outputs = [process.communicate(timeout=timeout) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return [
        Result(process.returncode, out, err)
        for process, (out, err) in zip(processes, outputs, strict=True)
    ]
