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
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sandbox._limits import find_memory_cgroup, find_pids_cgroup

__all__ = [
    "NAMESPACE_KINDS",
    "REPORT_NAMESPACES",
    "HostInfo",
    "Refusal",
    "cached",
    "host_info",
    "refusal",
    "try_run",
]

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
    refusal: Refusal | None = None
    """Why this host refuses the namespaces a sandbox needs, when it does (see :func:`refusal`)."""

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


@dataclass(frozen=True)
class Refusal:
    """What this host refuses a sandbox, and what a user can do about it there."""

    cause: str
    options: str


# Flags of unshare(2).
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNS_NET = 0x00020000 | 0x40000000
_TRIAL = (
    "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
    "sys.exit(0 if libc.unshare(int(sys.argv[1])) == 0 else ctypes.get_errno())"
)


def _may_unshare(flags: int) -> bool:
    """Whether a fresh process of this user may make these namespaces (a trial; nothing kept)."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _TRIAL, str(flags)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except OSError:
        return None


def _seccomp_filtered() -> bool:
    """Whether this process runs under a seccomp filter (a container's profile, say)."""
    status = _read("/proc/self/status") or ""
    return any(line.split() == ["Seccomp:", "2"] for line in status.splitlines())


_KNOWINGLY = 'or, knowingly, name isolation = "env" (not a security boundary)'


def refusal(euid: int) -> Refusal | None:
    """Why namespaces cannot be made here, measured by trials and read from sysctls (never set).

    ``None`` where this user may make the namespaces a sandbox needs. A root caller needs no
    user namespace; an unprivileged one does.
    """
    if euid == 0:
        if _may_unshare(_CLONE_NEWNS_NET):
            return None
        cause = "namespace creation is refused even to root"
        if _seccomp_filtered():
            cause += (
                ": a seccomp profile refuses unshare and clone with namespace flags (a "
                "container's default profile: Docker, GitLab's Docker executor, GitHub "
                "`container:` jobs)"
            )
        return Refusal(
            cause,
            "run the container with `--security-opt seccomp=unconfined` (or a profile that "
            f"allows namespaces) {_KNOWINGLY}",
        )
    if _may_unshare(_CLONE_NEWUSER):
        return None
    apparmor = _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    if apparmor == "1":
        return Refusal(
            "AppArmor restricts unprivileged user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns=1: Ubuntu 23.10 and later, GitHub's "
            "ubuntu-24.04 runners)",
            "run exampleguard as root (`sudo`: root needs no user namespace); on a host you "
            "administer, an AppArmor profile for bwrap or "
            f"`sysctl kernel.apparmor_restrict_unprivileged_userns=0`; {_KNOWINGLY}",
        )
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        return Refusal(
            "unprivileged user namespaces are turned off (kernel.unprivileged_userns_clone=0)",
            "run exampleguard as root; on a host you administer, "
            f"`sysctl kernel.unprivileged_userns_clone=1`; {_KNOWINGLY}",
        )
    if _read("/proc/sys/user/max_user_namespaces") == "0":
        return Refusal(
            "user namespaces are turned off (user.max_user_namespaces=0)",
            f"run exampleguard as root; {_KNOWINGLY}",
        )
    if _seccomp_filtered():
        return Refusal(
            "a seccomp profile refuses creating user namespaces (a container's default profile)",
            "run the container with `--security-opt seccomp=unconfined` (or a profile that "
            f"allows namespaces) {_KNOWINGLY}",
        )
    return Refusal(
        "this user may not create user namespaces here", f"run exampleguard as root; {_KNOWINGLY}"
    )


def _probe(path: str, euid: int) -> HostInfo:
    refused = refusal(euid)
    return HostInfo(
        path=path,
        euid=euid,
        own_namespaces=_namespaces_of_self(),
        pdeathsig=_pdeathsig(shutil.which("setpriv", path=path)),
        prlimit=shutil.which("prlimit", path=path),
        pids_cgroup=find_pids_cgroup() if euid == 0 else None,
        memory_cgroup=find_memory_cgroup(),
        landlock_abi=landlock_abi(),
        # A trial decides where one was refused: a seccomp profile leaves the sysctls alone.
        unprivileged_userns=_unprivileged_userns() and refused is None,
        refusal=refused,
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
