"""``run``: one policy in, one outcome out."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from sandbox._backend import Backend, Launch, Probe, Request
from sandbox._backends import choose, require
from sandbox._env import build_env
from sandbox._outcome import judge, not_started
from sandbox._process import execute
from sandbox._registry import DEFAULT_REGISTRY, ProcessRegistry
from sandbox._runuid import UidLease, lease_uid
from sandbox._types import Outcome, Policy
from sandbox._workdir import (
    FixtureError,
    WorkDir,
    check_fixtures,
    create_work_dir,
    in_sandbox_work_dir,
    remove_work_dir,
)

__all__ = ["run"]


def run(
    policy: Policy,
    *,
    cancel: threading.Event | None = None,
    registry: ProcessRegistry | None = None,
    on_stdout: Callable[[bytes], None] | None = None,
    on_start: Callable[[], None] | None = None,
) -> Outcome:
    """Run ``policy.argv`` in a fresh work dir under the policy's isolation; report what happened.

    A run that fails, times out, crashes or cannot start is an :class:`Outcome`, never an
    exception; fixtures that are not a plain tree within the limits make it ``not-started``.
    Only a policy that must not run at all raises: :class:`IsolationUnavailable` when the
    isolation asked for (or a guarantee in ``policy.require``) cannot be given here, and
    :class:`PassEnvError` when a ``pass_env`` value read now breaks the rules (nothing is
    started). Setting ``cancel`` kills the run's whole tree and returns promptly (``crashed``,
    detail ``interrupted``; ``not-started`` if it was set before the start). The run is
    registered in ``registry`` (default: the module's, which :func:`kill_all` empties) while
    it is live. ``on_stdout``, when given, is handed each piece of the standard output as it is
    read (in the calling thread, before the cap applies to the capture), so a caller can act on
    what the run says before it ends; the outcome still carries the capture. ``on_start``, when
    given, is called (in the calling thread) once the run's process is started and registered,
    so a caller that runs this in a thread of its own can wait for the start — the setup before
    it is work of this process — and not for the run.

    Safe to call from many threads at once; each call blocks its thread until the run's tree
    is dead and its work dir removed (bubblewrap's --die-with-parent is tied to that thread).
    """
    source = policy.source_env if policy.source_env is not None else os.environ
    path = source.get("PATH", os.defpath)
    backend, probe = choose(policy.isolation, path)
    require(backend, probe, policy)
    started_at = time.monotonic()
    if cancel is not None and cancel.is_set():
        return not_started(backend.name, "interrupted")
    lease: UidLease | None = None
    if probe.host.euid == 0:
        # A root caller's run never executes as root, nor as the uid of another live run.
        try:
            lease = lease_uid()
        except OSError as exc:
            return not_started(backend.name, f"cannot lease a uid for the run: {exc}")
    try:
        return _run_as(
            policy,
            backend,
            probe,
            source=source,
            lease=lease,
            cancel=cancel,
            registry=registry,
            started_at=started_at,
            on_stdout=on_stdout,
            on_start=on_start,
        )
    finally:
        if lease is not None:
            lease.release()


def _run_as(
    policy: Policy,
    backend: Backend,
    probe: Probe,
    *,
    source: Mapping[str, str],
    lease: UidLease | None,
    cancel: threading.Event | None,
    registry: ProcessRegistry | None,
    started_at: float,
    on_stdout: Callable[[bytes], None] | None = None,
    on_start: Callable[[], None] | None = None,
) -> Outcome:
    """Prepare the work dir, launch, execute and judge; remove what the run left."""
    deadline = started_at + policy.limits.timeout_s
    uid = lease.uid if lease is not None else None
    try:
        if backend.work_dir_on_host:
            work = create_work_dir(
                policy.fixtures, limits=policy.limits, deadline=deadline, owner=uid
            )
        else:
            if policy.fixtures is not None:
                check_fixtures(policy.fixtures, policy.limits)
            work = in_sandbox_work_dir()
    except FixtureError as exc:
        return not_started(backend.name, f"cannot prepare the work dir: {exc}")
    except OSError as exc:
        return not_started(backend.name, f"cannot prepare the work dir: {exc}")
    launch: Launch | None = None
    try:
        env = build_env(source, policy.pass_env, work.env_dirs(), policy.set_env)
        executable = _resolve(policy.argv[0], env["PATH"], work, policy.fixtures)
        if executable is None:
            return not_started(backend.name, f"executable not found: {policy.argv[0]}")
        try:
            launch = backend.launch(probe, Request(policy, work, env, executable, source, uid))
        except OSError as exc:
            return not_started(backend.name, f"cannot prepare the sandbox: {exc}")
        execution = execute(
            launch,
            policy.limits,
            cancel,
            registry or DEFAULT_REGISTRY,
            started_at=started_at,
            on_stdout=on_stdout,
            on_start=on_start,
        )
        return judge(
            execution,
            backend,
            launch.guarantees,
            policy.expect_exit,
            bound=launch.bound,
            refused=launch.refused,
            oom_kills=launch.oom_kills,
        )
    finally:
        if launch is not None:
            launch.release()
        if work.on_host:
            remove_work_dir(work.path)


def _resolve(program: str, path: str, work: WorkDir, fixtures: Path | None) -> str | None:
    """Find the file ``program`` names the way exec does: on PATH unless it has a slash.

    A relative path is looked up in the work dir, or, where that exists only inside the
    sandbox, in the fixtures it is filled from.
    """
    if "/" in program:
        if program.startswith("/"):
            # Found where it is named: one Path, not one per join, in every run.
            named = Path(program)
            if not (named.is_file() and os.access(named, os.X_OK)):
                return None
            return str(named)
        base = work.path if work.on_host else fixtures
        if base is None:
            return None
        candidate = base / program
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            return None
        return str(work.path / program)
    return shutil.which(program, path=path)
