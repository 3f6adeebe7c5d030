"""``run``: one policy in, one outcome out."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from sandbox._backend import Launch, Request
from sandbox._backends import choose
from sandbox._env import build_env
from sandbox._outcome import judge, not_started
from sandbox._process import execute
from sandbox._registry import DEFAULT_REGISTRY, ProcessRegistry
from sandbox._types import Outcome, Policy
from sandbox._workdir import create_work_dir, remove_work_dir


def run(
    policy: Policy,
    *,
    cancel: threading.Event | None = None,
    registry: ProcessRegistry | None = None,
) -> Outcome:
    """Run ``policy.argv`` in a fresh work dir under the policy's isolation; report what happened.

    A run that fails, times out, crashes or cannot start is an :class:`Outcome`, never an
    exception. Only a policy that must not run at all raises: :class:`IsolationUnavailable`
    when ``auto``/``namespace`` finds no namespace backend (nothing is started). Setting
    ``cancel`` kills the run's whole tree and returns promptly (``crashed``, detail
    ``interrupted``; ``not-started`` if it was set before the start). The run is registered in
    ``registry`` (default: the module's, which :func:`kill_all` empties) while it is live.

    Safe to call from many threads at once; each call blocks its thread until the run's tree
    is dead and its work dir removed (bubblewrap's --die-with-parent is tied to that thread).
    """
    source = policy.source_env if policy.source_env is not None else os.environ
    path = source.get("PATH", os.defpath)
    backend, probe = choose(policy.isolation, path)
    if cancel is not None and cancel.is_set():
        return not_started(backend.name, "interrupted")
    try:
        work = create_work_dir(policy.fixtures, make_dirs=backend.makes_dirs_on_disk)
    except OSError as exc:
        return not_started(backend.name, f"cannot prepare the work dir: {exc}")
    launch: Launch | None = None
    try:
        env = build_env(source, policy.pass_env, work.env_dirs())
        executable = _resolve(policy.argv[0], env["PATH"], work.path)
        if executable is None:
            return not_started(backend.name, f"executable not found: {policy.argv[0]}")
        try:
            request = Request(policy, work, env, executable, source)
            launch = backend.launch(probe, request)
        except OSError as exc:
            return not_started(backend.name, f"cannot prepare the sandbox: {exc}")
        execution = execute(launch, policy.limits, cancel, registry or DEFAULT_REGISTRY)
        return judge(execution, backend, launch.guarantees, policy.expect_exit)
    finally:
        if launch is not None:
            launch.release()
        remove_work_dir(work.path)


def _resolve(program: str, path: str, cwd: Path) -> str | None:
    """Find the file ``program`` names the way exec does: on PATH unless it has a slash."""
    if "/" in program:
        candidate = cwd / program
        return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    return shutil.which(program, path=path)
