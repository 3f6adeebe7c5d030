"""Memory and process-count limits, applied without ``preexec_fn``.

``preexec_fn`` runs Python between fork and exec, which can deadlock when other threads hold
locks (runs happen in parallel threads). Instead the run's command is prefixed with util-linux
``prlimit``, which sets RLIMIT_AS/RLIMIT_NPROC and execs the command, so the limits bind the
run's first process and everything it starts.

RLIMIT_NPROC does not bind host root (the kernel exempts uid 0 of the initial user namespace,
which is what a root caller's sandbox runs as). For a root caller under bubblewrap the process
count is therefore capped with a cgroup ``pids`` controller instead: a shell that moves itself
into a fresh cgroup, then execs bubblewrap; the read-only /sys and the dropped capabilities keep
the run from leaving it.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

_CGROUP_PREFIX = "sandbox-run-"


def prlimit_prefix(prlimit: str, memory_mb: int | None, nproc: int | None) -> list[str]:
    """Return the ``prlimit`` words to put before a command; none when no limit is set."""
    words = [f"--as={memory_mb * 1024 * 1024}"] if memory_mb is not None else []
    if nproc is not None:
        words.append(f"--nproc={nproc}")
    return [prlimit, *words, "--"] if words else []


def find_pids_cgroup() -> Path | None:
    """Find the pids-controlled cgroup this process is in, if it can create children there."""
    base = _own_pids_cgroup()
    if base is None:
        return None
    probe = base / f"{_CGROUP_PREFIX}probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return None
    try:
        return base if (probe / "pids.max").exists() else None
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _own_pids_cgroup() -> Path | None:
    try:
        cgroups = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
        mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    v1_path = v2_path = None
    for line in cgroups:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
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
        if tail[0] == "cgroup" and v1_path and "pids" in tail[2].split(","):
            return Path(mountpoint) / v1_path.lstrip("/")
        if tail[0] == "cgroup2" and v2_path is not None and v1_path is None:
            return Path(mountpoint) / v2_path.lstrip("/")
    return None


class PidsCgroup:
    """A fresh cgroup capping a run's task count; remove it after the run."""

    def __init__(self, base: Path, max_tasks: int) -> None:
        self.path = base / f"{_CGROUP_PREFIX}{uuid.uuid4().hex}"
        self.path.mkdir()
        try:
            (self.path / "pids.max").write_text(str(max_tasks), encoding="ascii")
        except OSError:
            self.remove()
            raise

    def wrapper(self) -> list[str]:
        """Words that move the process into this cgroup, then exec the rest of the argv."""
        # Writing 0 to cgroup.procs moves the writer itself; exec keeps the cgroup and the pid.
        return ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', str(self.path / "cgroup.procs")]

    def remove(self) -> None:
        """Remove the cgroup; its tasks are gone once the run's tree is dead."""
        for _ in range(50):
            try:
                self.path.rmdir()
            except FileNotFoundError:
                return
            except OSError:
                # EBUSY while the last killed tasks are still being reaped.
                time.sleep(0.01)
            else:
                return
