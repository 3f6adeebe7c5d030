"""What this machine offers every backend, and the probe runner each backend measures with.

A binary on PATH is not enough: each backend runs a trivial command that reports its
namespaces, and counts only if it really got new ones. Results are cached per (PATH, euid),
because every run would otherwise pay for the probes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sandbox._limits import find_memory_cgroup, find_pids_cgroup

__all__ = ["NAMESPACE_KINDS", "REPORT_NAMESPACES", "HostInfo", "cached", "host_info", "try_run"]

PROBE_TIMEOUT_S = 10.0
_PROBE_PATH = "/usr/local/bin:/usr/bin:/bin"

# Prints one "name:[inode]" per line; readlink is in coreutils and busybox alike.
NAMESPACE_KINDS = ("net", "user", "pid")
REPORT_NAMESPACES = ("readlink", *(f"/proc/self/ns/{kind}" for kind in NAMESPACE_KINDS))
NOTHING = ("/bin/sh", "-c", ":")


@dataclass(frozen=True)
class HostInfo:
    """The measured facts of this machine that do not belong to one backend."""

    path: str
    """The PATH that backends and helpers are looked up on."""
    euid: int
    own_namespaces: dict[str, str]
    pdeathsig: tuple[str, ...]
    """util-linux ``setpriv --pdeathsig KILL`` when it works."""
    prlimit: str | None
    pids_cgroup: Path | None
    """A pids cgroup delegated to a root caller (None: none), reported, not used by runs."""
    memory_cgroup: Path | None
    """A memory cgroup this caller may create children in (None: none): each bubblewrap run
    with a memory limit gets one of its own there."""
    landlock_abi: int
    """The kernel's Landlock ABI version; 0 without Landlock."""
    unprivileged_userns: bool
    """Whether an unprivileged process may create a user namespace here (read, never set)."""

    def which(self, program: str) -> str | None:
        """Find ``program`` on this host's PATH."""
        return shutil.which(program, path=self.path)


_cache: dict[tuple[object, ...], object] = {}
# Re-entrant: a backend's probe may run a trial that asks for the host's facts again.
_cache_lock = threading.RLock()
_T = TypeVar("_T")


def cached(key: tuple[object, ...], compute: Callable[[], _T]) -> _T:
    """Compute once per key (which always includes PATH and euid), then reuse."""
    with _cache_lock:
        if key not in _cache:
            _cache[key] = compute()
        found: _T = _cache[key]  # type: ignore[assignment] # stored by this function for key
        return found


def host_info(path: str) -> HostInfo:
    """Probe (once per PATH and euid, then cached) what this machine offers."""
    euid = os.geteuid()
    return cached(("host", path, euid), lambda: _probe(path, euid))


def _probe(path: str, euid: int) -> HostInfo:
    return HostInfo(
        path=path,
        euid=euid,
        own_namespaces=_namespaces_of_self(),
        pdeathsig=_pdeathsig(shutil.which("setpriv", path=path)),
        prlimit=shutil.which("prlimit", path=path),
        pids_cgroup=find_pids_cgroup() if euid == 0 else None,
        memory_cgroup=find_memory_cgroup(),
        landlock_abi=landlock_abi(),
        unprivileged_userns=_unprivileged_userns(),
    )


_LANDLOCK_CREATE_RULESET = 444
_LANDLOCK_CREATE_RULESET_VERSION = 1


def landlock_abi() -> int:
    """Ask the kernel for its Landlock ABI version (0 when it has none or refuses)."""
    # The one ctypes use on the host side; the syscall number is the same on every
    # architecture this package supports.
    import ctypes  # noqa: PLC0415 - only the probe needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = int(
            libc.syscall(_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
        )
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def _unprivileged_userns() -> bool:
    """Read (never write) the sysctls that gate unprivileged user namespaces."""
    for path, refuses in (
        ("/proc/sys/user/max_user_namespaces", "0"),
        ("/proc/sys/kernel/unprivileged_userns_clone", "0"),
        ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"),
    ):
        with contextlib.suppress(OSError):
            if Path(path).read_text(encoding="ascii").strip() == refuses:
                return False
    return True


def _pdeathsig(setpriv: str | None) -> tuple[str, ...]:
    if setpriv is None:
        return ()
    words = (setpriv, "--pdeathsig", "KILL")
    return words if try_run([*words, "--", *NOTHING])[0] else ()


def _namespaces_of_self() -> dict[str, str]:
    found = {}
    for kind in NAMESPACE_KINDS:
        try:
            found[kind] = str(Path(f"/proc/self/ns/{kind}").readlink())
        except OSError:
            continue
    return found


def try_run(
    argv: list[str],
    own: dict[str, str] | None = None,
    must_differ: tuple[str, ...] = (),
    pass_fds: tuple[int, ...] = (),
) -> tuple[bool, str | None]:
    """Run a probe; with ``own``, it must print namespaces that differ from ours."""
    name = Path(argv[0]).name
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            cwd="/",
            env={"PATH": _PROBE_PATH},
            pass_fds=pass_fds,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{name} could not run: {exc}"
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        last = lines[-1] if lines else f"exit status {done.returncode}"
        return False, f"{name} cannot create namespaces here: {last}"
    seen = done.stdout.decode("utf-8", "replace").split()
    for kind in must_differ:
        ours = (own or {}).get(kind)
        if ours is None or ours in seen or not any(s.startswith(f"{kind}:[") for s in seen):
            return False, f"{name} ran but did not create a {kind} namespace"
    return True, None
