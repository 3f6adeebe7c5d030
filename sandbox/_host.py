"""What this machine offers: which namespace tools actually work, measured once per PATH.

A binary on PATH is not enough: each candidate runs a trivial command that reports its
namespaces, and counts only if it really got new ones. Results are cached per (PATH, euid),
because every run would otherwise pay for the probe.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from sandbox._limits import find_pids_cgroup
from sandbox._seccomp import unix_socket_filter

PROBE_TIMEOUT_S = 10.0
_PROBE_PATH = "/usr/local/bin:/usr/bin:/bin"

# bwrap's own flags, shared by every run (the per-run mounts are added by _launch). These are
# the measured set: --unshare-pid with --die-with-parent and --new-session leaves no survivor;
# --unshare-user is forced (as root bwrap would otherwise skip the user namespace) and
# --cap-drop ALL removes what a root caller would keep.
BWRAP_FLAGS = (
    "--unshare-all",
    "--unshare-user",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
)
BWRAP_BASE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")


@dataclass(frozen=True)
class HostInfo:
    """The measured capabilities of this machine for one PATH and effective uid."""

    euid: int
    bwrap: str | None
    bwrap_detail: str | None
    bwrap_disable_userns: bool
    bwrap_seccomp: bool
    unshare: str | None
    unshare_full: bool
    unshare_detail: str | None
    pdeathsig: tuple[str, ...]
    """util-linux ``setpriv --pdeathsig KILL`` when it works: unshare, unlike bwrap, does not
    die with its parent by itself, so a killed caller would leave the run going."""
    prlimit: str | None
    pids_cgroup: Path | None


def unshare_mapping(euid: int) -> list[str]:
    """Map the caller to a non-root uid inside, so the command keeps no capability after exec.

    A root caller maps to nobody (65534) rather than to itself: in a user namespace, uid 0 keeps
    every capability across exec.
    """
    uid, gid = (65534, 65534) if euid == 0 else (os.getuid(), os.getgid())
    return ["--user", f"--map-user={uid}", f"--map-group={gid}"]


UNSHARE_FULL = ("--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--kill-child")
UNSHARE_MINIMAL = ("--net",)

_cache: dict[tuple[str, int], HostInfo] = {}
_cache_lock = threading.Lock()


def host_info(path: str) -> HostInfo:
    """Probe (once per PATH and euid, then cached) what this machine offers."""
    key = (path, os.geteuid())
    with _cache_lock:
        info = _cache.get(key)
        if info is None:
            info = _cache[key] = _probe(path)
        return info


def _probe(path: str) -> HostInfo:
    euid = os.geteuid()
    own = _namespaces_of_self()
    bwrap, bwrap_detail = _probe_bwrap(shutil.which("bwrap", path=path), own)
    unshare, full, unshare_detail = _probe_unshare(shutil.which("unshare", path=path), own, euid)
    return HostInfo(
        euid=euid,
        bwrap=bwrap,
        bwrap_detail=bwrap_detail,
        bwrap_disable_userns=bwrap is not None and _works(bwrap, "--disable-userns"),
        bwrap_seccomp=bwrap is not None and _seccomp_loads(bwrap),
        unshare=unshare,
        unshare_full=full,
        unshare_detail=unshare_detail,
        pdeathsig=_pdeathsig(shutil.which("setpriv", path=path)),
        prlimit=shutil.which("prlimit", path=path),
        pids_cgroup=find_pids_cgroup() if euid == 0 else None,
    )


# Prints one "name:[inode]" per line; readlink is in coreutils and busybox alike.
_NAMESPACE_KINDS = ("net", "user", "pid")
_REPORT_NAMESPACES = ("readlink", *(f"/proc/self/ns/{kind}" for kind in _NAMESPACE_KINDS))
_NOTHING = ("/bin/sh", "-c", ":")


def _probe_bwrap(bwrap: str | None, own: dict[str, str]) -> tuple[str | None, str | None]:
    """Return the usable bwrap (or None) and, if unusable, why."""
    if bwrap is None:
        return None, "bwrap not found on PATH"
    argv = [bwrap, *BWRAP_BASE_MOUNTS, *BWRAP_FLAGS, "--", *_REPORT_NAMESPACES]
    ok, detail = _try(argv, own, _NAMESPACE_KINDS)
    return (bwrap, None) if ok else (None, detail)


def _probe_unshare(
    unshare: str | None, own: dict[str, str], euid: int
) -> tuple[str | None, bool, str | None]:
    """Return the usable unshare (or None), whether it gets a PID namespace, what it lacks."""
    if unshare is None:
        return None, False, "unshare not found on PATH"
    mapping = unshare_mapping(euid)
    full = [unshare, *mapping, *UNSHARE_FULL, "--", *_REPORT_NAMESPACES]
    ok, why_not_full = _try(full, own, _NAMESPACE_KINDS)
    if ok:
        return unshare, True, None
    minimal = [unshare, *mapping, *UNSHARE_MINIMAL, "--", *_REPORT_NAMESPACES]
    ok, detail = _try(minimal, own, ("net", "user"))
    if ok:
        return unshare, False, f"no PID namespace ({why_not_full})"
    return None, False, detail


def _works(bwrap: str, *flags: str) -> bool:
    """Tell whether bwrap accepts an optional hardening flag (``--disable-userns`` is 0.8+)."""
    return _try([bwrap, *BWRAP_BASE_MOUNTS, *BWRAP_FLAGS, *flags, "--", *_NOTHING])[0]


def _seccomp_loads(bwrap: str) -> bool:
    """Tell whether bwrap can load the unix-socket filter on this kernel and architecture."""
    program = unix_socket_filter()
    if program is None:
        return False
    read_end, write_end = os.pipe()
    try:
        # A few hundred bytes: far below a pipe's capacity, so this write cannot block.
        os.write(write_end, program)
        os.close(write_end)
        argv = [bwrap, *BWRAP_BASE_MOUNTS, *BWRAP_FLAGS, "--seccomp", str(read_end)]
        return _try([*argv, "--", *_NOTHING], pass_fds=(read_end,))[0]
    finally:
        os.close(read_end)


def _pdeathsig(setpriv: str | None) -> tuple[str, ...]:
    if setpriv is None:
        return ()
    words = (setpriv, "--pdeathsig", "KILL")
    return words if _try([*words, "--", *_NOTHING])[0] else ()


def _namespaces_of_self() -> dict[str, str]:
    found = {}
    for kind in _NAMESPACE_KINDS:
        try:
            found[kind] = str(Path(f"/proc/self/ns/{kind}").readlink())
        except OSError:
            continue
    return found


def _try(
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
