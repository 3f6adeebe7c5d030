"""Memory, process-count and leftover handling for the limits, applied without ``preexec_fn``.

``preexec_fn`` runs Python between fork and exec, which can deadlock when other threads hold
locks (runs happen in parallel threads). Under bubblewrap the sandbox's own process inside sets
the rlimits of the run before its exec; the ``unshare`` and ``env`` backends prefix the command
with util-linux ``prlimit``, which sets RLIMIT_AS/RLIMIT_NPROC and execs it.

RLIMIT_NPROC does not bind host root, and RLIMIT_AS does not count in-memory files. For a root
caller under bubblewrap the run is therefore also put into fresh ``pids`` and ``memory`` cgroups
(version 1 or 2, wherever this process may create children): the caller moves the sandbox's
init into them before it starts the run, so everything the run starts is charged there, tmpfs
pages included; the read-only /sys keeps the run from leaving.

Each cgroup is named after the pid of the process that made it; one left by a killed caller is
removed when the next one is made (a cgroup still holding tasks cannot be removed and
is left alone).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from pathlib import Path

CGROUP_PREFIX = "sandbox-run-"
_LEFTOVER = re.compile(rf"{CGROUP_PREFIX}(\d+)-[0-9a-f]+\Z")
# The sandbox's own process inside the memory cgroup: an interpreter, a few MiB.
MEMORY_HEADROOM = 32 * 1024 * 1024


def prlimit_prefix(prlimit: str, memory_mb: int | None, nproc: int | None) -> list[str]:
    """Return the ``prlimit`` words to put before a command; none when no limit is set."""
    words = [f"--as={memory_mb * 1024 * 1024}"] if memory_mb is not None else []
    if nproc is not None:
        words.append(f"--nproc={nproc}")
    return [prlimit, *words, "--"] if words else []


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


def sweep_leftovers(base: Path) -> None:
    """Remove the cgroups that killed callers left under ``base``.

    Only our own names are considered, only directories (never a symlink), and only those
    whose maker is dead; one listing of ``base`` per new cgroup.
    """
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for entry in entries:
            found = _LEFTOVER.match(entry.name)
            if found is None or not entry.is_dir(follow_symlinks=False):
                continue
            if not pid_alive(int(found.group(1))):
                with contextlib.suppress(OSError):
                    Path(entry.path).rmdir()


class RunCgroup:
    """A fresh cgroup under ``base`` with limits written into it; remove it after the run."""

    def __init__(self, base: Path, limits: dict[str, int], pids: bool) -> None:
        self.pids = pids
        """Whether this cgroup caps the task count (else it caps memory)."""
        sweep_leftovers(base)
        self.path = base / f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex}"
        self.path.mkdir()
        try:
            for name, value in limits.items():
                if (self.path / name).exists():
                    (self.path / name).write_text(str(value), encoding="ascii")
        except OSError:
            self.remove()
            raise

    def add(self, pid: int) -> None:
        """Move ``pid`` into this cgroup."""
        (self.path / "cgroup.procs").write_text(str(pid), encoding="ascii")

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


def pids_limits(max_tasks: int) -> dict[str, int]:
    """The files of a pids cgroup capping it at ``max_tasks``."""
    return {"pids.max": max_tasks}


def memory_limits(limit_bytes: int) -> dict[str, int]:
    """The files of a memory cgroup (v1 or v2) capping it, swap included, at ``limit_bytes``."""
    # v1 needs memory.limit_in_bytes before memsw (which must not be below it); v2 gets no swap.
    return {
        "memory.limit_in_bytes": limit_bytes,
        "memory.memsw.limit_in_bytes": limit_bytes,
        "memory.max": limit_bytes,
        "memory.swap.max": 0,
    }
