"""Memory and process-count limits, applied without ``preexec_fn``, and a run's memory cgroup.

``preexec_fn`` runs Python between fork and exec, which can deadlock when other threads hold
locks (runs happen in parallel threads). Under bubblewrap the sandbox's own process inside sets
the rlimits of the run before its exec; the ``unshare`` and ``env`` backends prefix the command
with util-linux ``prlimit``, which sets RLIMIT_AS/RLIMIT_NPROC and execs it. Every run also
gets RLIMIT_NOFILE (:func:`open_files`) and no core dumps.

RLIMIT_NPROC binds because no run is root: a root caller's run has a uid of its own (see
``_runuid``), so its count is the run's alone. RLIMIT_AS bounds each process's address space,
not what the kernel holds for it elsewhere (socket buffers, SysV shared memory, the pages of a
memfd written without being mapped). Where the host delegates a memory cgroup, a bubblewrap
run also gets one of its own (:class:`RunCgroup`), which charges all of that and bounds the
whole run. Creating, joining and removing one costs about 0.1 ms (a version 1 hierarchy on
kernel 6.18 included): the sandbox's own process joins it by writing to a descriptor of the
cgroup's ``cgroup.procs`` that the caller opened, before it starts the run.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import threading
import time
import uuid
from pathlib import Path

__all__ = [
    "RunCgroup",
    "find_memory_cgroup",
    "find_pids_cgroup",
    "open_files",
    "pid_alive",
    "prlimit_prefix",
]

OPEN_FILES = 4096
"""The most descriptors a run's process may hold: each pins kernel memory (an open file, a
socket with its buffers) that RLIMIT_AS does not count."""


def open_files() -> int:
    """RLIMIT_NOFILE for a run: :data:`OPEN_FILES`, or less where this process's own is lower.

    A run starts from this process's limits and cannot raise a hard limit: a lower one is kept.
    """
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return OPEN_FILES if hard == resource.RLIM_INFINITY else min(OPEN_FILES, hard)


CGROUP_PREFIX = "sandbox-run-"
_OWN_CGROUP = re.compile(re.escape(CGROUP_PREFIX) + r"([0-9]+)-[0-9a-f]+")
_REMOVE_TRIES = 20
_swept: set[Path] = set()
_swept_lock = threading.Lock()


def prlimit_prefix(prlimit: str, memory_mb: int | None, nproc: int | None) -> list[str]:
    """Return the ``prlimit`` words to put before a command.

    Core dumps are always off: a crash would otherwise hand the run's memory to the host's
    core handler (a ``|program`` core_pattern runs as root), or fill the disk.
    """
    words = ["--core=0", f"--nofile={open_files()}"]
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


class RunCgroup:
    """A memory cgroup of one run's own, under a cgroup the host delegates.

    Its limit charges everything the run makes the kernel hold: the pages of its processes,
    of its in-memory file systems, SysV shared memory and memfds, and kernel memory such as
    queued socket buffers. Swap is closed to it, so the limit cannot be stretched there.
    ``procs_fd`` is a descriptor of its ``cgroup.procs``, for the sandbox's own process to
    join by writing "0" (the writer itself): the kernel checks that write against the opener,
    this process, so it holds inside the run's namespaces too.
    """

    def __init__(self, base: Path, memory_bytes: int | None) -> None:
        """Create the cgroup under ``base`` with its limit; OSError when the host refuses.

        Without ``memory_bytes`` it has none yet: :meth:`limit` sets it before a run starts.
        """
        _sweep_leftover_cgroups(base)
        self.path = base / f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.procs_fd: int | None = None
        self.path.mkdir(mode=0o700)
        try:
            if memory_bytes is not None:
                self.limit(memory_bytes)
            self.procs_fd = os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except BaseException:
            self.release()
            raise

    def close_procs(self) -> None:
        """Close the descriptor of ``cgroup.procs`` once the cgroup's first process joined."""
        if self.procs_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.procs_fd)
            self.procs_fd = None

    def limit(self, memory_bytes: int) -> None:
        """Limit the cgroup to ``memory_bytes`` without swap; OSError when the host refuses."""
        if (self.path / "memory.limit_in_bytes").exists():
            # Version 1: the memory-and-swap limit may only be set at or above the memory one.
            _write(self.path / "memory.limit_in_bytes", memory_bytes)
            if (self.path / "memory.memsw.limit_in_bytes").exists():
                _write(self.path / "memory.memsw.limit_in_bytes", memory_bytes)
        else:
            _write(self.path / "memory.max", memory_bytes)
            if (self.path / "memory.swap.max").exists():
                _write(self.path / "memory.swap.max", 0)

    def oom_kills(self) -> int:
        """How many of the run's processes the kernel killed for this cgroup's limit."""
        for name in ("memory.events", "memory.oom_control"):
            with contextlib.suppress(OSError, ValueError):
                for line in (self.path / name).read_text(encoding="ascii").splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return 0

    def release(self) -> None:
        """Close the descriptor and remove the cgroup once the run's processes are gone.

        The kernel reaps a PID namespace's processes as its init ends, so the cgroup is
        normally empty at once; one that stays busy is left for the next start's sweep.
        """
        self.close_procs()
        for attempt in range(_REMOVE_TRIES):
            try:
                self.path.rmdir()
            except FileNotFoundError:
                return
            except OSError:
                if attempt + 1 < _REMOVE_TRIES:
                    time.sleep(0.001 * (attempt + 1))
            else:
                return


def _write(path: Path, value: int) -> None:
    # One write of the whole value: the kernel parses each write on its own.
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, str(value).encode("ascii"))
    finally:
        os.close(fd)


def _sweep_leftover_cgroups(base: Path) -> None:
    """Remove, once per process and base, the run cgroups that dead callers left behind."""
    with _swept_lock:
        if base in _swept:
            return
        _swept.add(base)
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for entry in entries:
            found = _OWN_CGROUP.fullmatch(entry.name)
            if found is None or not entry.is_dir(follow_symlinks=False):
                continue
            if not pid_alive(int(found.group(1))):
                # A cgroup that still holds a process is busy, and stays.
                with contextlib.suppress(OSError):
                    Path(entry.path).rmdir()


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
