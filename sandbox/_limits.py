"""Memory and process-count limits, applied without ``preexec_fn``, and the host's cgroups.

``preexec_fn`` runs Python between fork and exec, which can deadlock when other threads hold
locks (runs happen in parallel threads). Under bubblewrap the sandbox's own process inside sets
the rlimits of the run before its exec; the ``unshare`` and ``env`` backends prefix the command
with util-linux ``prlimit``, which sets RLIMIT_AS/RLIMIT_NPROC and execs it.

RLIMIT_NPROC binds because no run is root: a root caller's run has a uid of its own (see
``_runuid``), so its count is the run's alone. Runs are not moved into cgroups: on a version 1
hierarchy every move waits for an RCU grace period (milliseconds per run and controller), and
the rlimits with sized in-memory file systems bound the same things. The cgroups a host
delegates are still found, for :func:`sandbox.probe_host` to report.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

__all__ = ["find_memory_cgroup", "find_pids_cgroup", "pid_alive", "prlimit_prefix"]

CGROUP_PREFIX = "sandbox-run-"


def prlimit_prefix(prlimit: str, memory_mb: int | None, nproc: int | None) -> list[str]:
    """Return the ``prlimit`` words to put before a command.

    Core dumps are always off: a crash would otherwise hand the run's memory to the host's
    core handler (a ``|program`` core_pattern runs as root), or fill the disk.
    """
    words = ["--core=0"]
    if memory_mb is not None:
        words.append(f"--as={memory_mb * 1024 * 1024}")
    if nproc is not None:
        words.append(f"--nproc={nproc}")
    return [prlimit, *words, "--"]


def pid_alive(pid: int) -> bool:
    """Tell whether a process ``pid`` exists (of any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find_cgroup(controller: str, limit_file: str) -> Path | None:
    """The cgroup of ``controller`` this process is in, if it can create children there."""
    base = _own_cgroup(controller)
    if base is None:
        return None
    probe = base / f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return None
    try:
        return base if (probe / limit_file).exists() else None
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def find_pids_cgroup() -> Path | None:
    """The pids-controlled cgroup this process can create children in, if any."""
    return find_cgroup("pids", "pids.max")


def find_memory_cgroup() -> Path | None:
    """The memory-controlled cgroup this process can create children in, if any."""
    base = _own_cgroup("memory")
    if base is None:
        return None
    v1 = find_cgroup("memory", "memory.limit_in_bytes")
    return v1 if v1 is not None else find_cgroup("memory", "memory.max")


def _own_cgroup(controller: str) -> Path | None:
    try:
        cgroups = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
        mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    v1_path = v2_path = None
    for line in cgroups:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            v1_path = path
        elif controllers == "":
            v2_path = path
    for line in mountinfo:
        # mountinfo: id parent dev root mountpoint options [optional...] - fstype source super
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or fields[3] != "/":
            continue
        mountpoint = fields[4]
        if tail[0] == "cgroup" and v1_path and controller in tail[2].split(","):
            return Path(mountpoint) / v1_path.lstrip("/")
        if tail[0] == "cgroup2" and v2_path is not None and v1_path is None:
            base = Path(mountpoint) / v2_path.lstrip("/")
            with contextlib.suppress(OSError):
                if controller in (base / "cgroup.controllers").read_text().split():
                    return base
    return None
