"""The uids a root caller's runs execute as: one of :data:`RUN_UIDS` per run, leased.

A root caller's run never executes as host uid 0, and no two live runs share a uid: runs that
shared one could signal and trace each other and read each other's files wherever the other
layers do not separate them (the ``unshare`` and ``env`` backends share the host's /tmp, and
``env`` its PID namespace). Each run leases a uid for its lifetime:

- the lease is an ``flock`` on a file named after the uid in :data:`LEASE_DIR`, a directory
  only root may enter (it is refused unless root owns it, it is a real directory and its mode
  is 0700). ``flock`` locks belong to an open file, so threads of one process exclude each
  other as surely as separate processes, and the kernel drops a lock whose holder died;
- the file says ``1`` while a run holds it and ``0`` after a clean release. A lease taken
  over from a killed caller still says ``1``: before its uid is used again every process left
  of that uid is killed (possible only for ``env`` runs, which have no PID namespace), and the
  same happens when an ``env`` run ends;
- a uid in the password or group database is skipped: it may own files.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import grp
import os
import pwd
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "HOST_BACKEND_HINT",
    "LEASE_DIR",
    "RUN_UID",
    "RUN_UIDS",
    "UidLease",
    "check_reachable",
    "kill_uid",
    "lease_uid",
    "needed_by_run",
    "shebang_interpreter",
    "within",
]

RUN_UID = 1_879_113_728
"""The first uid (and gid) of :data:`RUN_UIDS`: 0x70010000, just above the range
systemd-nspawn hands to containers (up to 0x6FFFFFFF), far from login, subordinate and dynamic
uids."""
RUN_UID_COUNT = 65_536
RUN_UIDS = range(RUN_UID, RUN_UID + RUN_UID_COUNT)
"""The uids (each also the gid) a root caller's runs execute as, one per live run. None of
them may be in the password or group database; each owns nothing but its run's work dir."""
LEASE_DIR = Path("/run/sandbox-uids")
"""Where the leases live: made by the first root caller, 0700, root's."""

HOST_BACKEND_HINT = (
    "use isolation 'auto' (bubblewrap), which mounts a Python installation inside a home into "
    "the run"
)
"""What else a root caller can do when the ``unshare`` or ``env`` backend cannot reach a path."""

_IN_USE = b"1"
_FREE = b"0"
_SWEEP_ENV = {"PATH": "/usr/bin:/bin"}


class UidUnavailable(OSError):
    """No uid can be leased: the lease dir is unsafe, or every uid of the range is taken."""


@dataclass
class UidLease:
    """One uid of :data:`RUN_UIDS`, held by one run until :meth:`release`."""

    uid: int
    _fd: int | None = field(default=None, repr=False)

    @property
    def gid(self) -> int:
        """The run's gid: the same number as its uid."""
        return self.uid

    def release(self) -> None:
        """Give the uid back (whatever of it might live on is the releaser's to kill first)."""
        if self._fd is None:
            return
        try:
            os.pwrite(self._fd, _FREE, 0)
        finally:
            # Closing drops the flock: the next run may take the uid.
            os.close(self._fd)
            self._fd = None


def _lease_dir() -> int:
    """Open (making it if need be) the lease dir; refuse one that another user could reach."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(LEASE_DIR, flags)
    except FileNotFoundError:
        # Only the first run on this host makes it: every run leases, a mkdir each is waste.
        with contextlib.suppress(FileExistsError):
            LEASE_DIR.mkdir(mode=0o700)
        fd = os.open(LEASE_DIR, flags)
    info = os.fstat(fd)
    if info.st_uid != 0 or stat.S_IMODE(info.st_mode) & 0o077:
        os.close(fd)
        raise UidUnavailable(
            f"{LEASE_DIR} must be a directory of root's with mode 0700, not uid {info.st_uid} "
            f"mode {oct(stat.S_IMODE(info.st_mode))}: remove it (a root caller makes it anew)"
        )
    return fd


@functools.cache
def in_databases(uid: int) -> bool:
    """Whether ``uid`` names a user or a group (looked up once per process)."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
        except KeyError:
            continue
        return True
    return False


def lease_uid() -> UidLease:
    """Lease the lowest free uid of :data:`RUN_UIDS` (root only); raise UidUnavailable."""
    directory = _lease_dir()
    try:
        for uid in RUN_UIDS:
            fd = os.open(
                str(uid),
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=directory,
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if in_databases(uid):
                os.close(fd)
                continue
            try:
                if os.pread(fd, 1, 0) == _IN_USE:
                    # Its last holder was killed mid-run: nothing of that run may live on.
                    kill_uid(uid)
                os.pwrite(fd, _IN_USE, 0)
            except BaseException:
                os.close(fd)
                raise
            return UidLease(uid, fd)
    finally:
        os.close(directory)
    raise UidUnavailable(f"every uid of {RUN_UID}..{RUN_UIDS[-1]} is leased")


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid``: ``kill -KILL -1`` run as that uid reaches exactly them.

    One pass is enough: the kernel signals every process at once, and a process forking then
    has its SIGKILL pending, which makes the fork fail.
    """
    subprocess.run(
        ["/bin/sh", "-c", "kill -KILL -1 2>/dev/null; exit 0"],
        user=uid,
        group=uid,
        extra_groups=[],
        env=_SWEEP_ENV,
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=10,
    )


def within(path: Path, top: Path) -> bool:
    """Whether absolute ``path`` is ``top`` or lies below it (by name, as the kernel walks it).

    String prefixes, not ``Path.parents``: every run asks this many times, and a parents
    sequence is rebuilt on each membership test.
    """
    inner, outer = str(path), str(top)
    return inner == outer or inner.startswith(outer if outer == "/" else outer + "/")


def shebang_interpreter(executable: str, path: str) -> str | None:
    """The interpreter a script's ``#!`` line names (``env NAME`` looked up on ``path``)."""
    try:
        with Path(executable).open("rb") as script:
            first = script.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env" and len(words) > 1:
        name = next((w for w in words[1:] if not w.startswith("-")), None)
        return shutil.which(name, path=path) if name else None
    return words[0]


def check_reachable(
    needed: list[tuple[Path, str]],
    uid: int,
    *,
    bound_below: tuple[Path, ...] = (),
    also: tuple[str, ...] = (),
) -> None:
    """Raise OSError unless uid ``uid`` (no groups) can use each path the way its kind needs.

    ``needed`` pairs a path with what it is (``program``, ``project dir``, ...): a program
    must be readable and executable, anything else readable (and searchable, a directory),
    and every directory above it searchable, all by the "other" permission bits: the uid
    owns nothing on the host and has no groups. Paths below ``bound_below`` are mounted
    with parents of the sandbox's own (0755), so only the path itself counts there. The
    message says which path stops the run and what to do about it (``also``: more ways).
    """
    for path, what in needed:
        real = path.resolve()
        try:
            mode = real.stat().st_mode
        except OSError:
            continue
        want = 0o005 if what == "program" or stat.S_ISDIR(mode) else 0o004
        # The path as named and where it leads: exec and open walk the first, then the second.
        parents = dict.fromkeys(
            parent
            for chain in (path.absolute().parents, real.parents)
            for parent in chain
            if not any(within(parent, top) for top in bound_below)
        )
        for candidate, need in [(real, want), *((p, 0o001) for p in parents)]:
            try:
                info = candidate.stat()
            except OSError:
                continue
            if info.st_mode & need != need:
                kind = "search" if need == 0o001 else "read" if need == 0o004 else "read and run"
                shown = f"{path} ({real})" if real != path.absolute() else str(path)
                fixes = [f"grant others '{kind}' on {candidate}", *also]
                if what != "temporary directory (TMPDIR)":
                    fixes.insert(0, "install it where every user may read it (/usr/local, /opt)")
                raise OSError(
                    f"the {what} {shown} cannot be used by the run: {candidate} (mode "
                    f"{oct(stat.S_IMODE(info.st_mode))}, owner uid {info.st_uid}) does not let "
                    f"other users {kind} it, and a root caller's run executes as the "
                    f"unprivileged uid {uid}, never as root; "
                    + ", ".join(fixes[:-1])
                    + f" or {fixes[-1]}"
                )


def needed_by_run(
    executable: str, path: str, project_dir: Path | None, readable: tuple[Path, ...]
) -> list[tuple[Path, str]]:
    """What a run reads on the host, each with what it is: for :func:`check_reachable`."""
    needed = [(Path(executable), "program")]
    interpreter = shebang_interpreter(executable, path)
    if interpreter is not None:
        needed.append((Path(interpreter), "program"))
    if project_dir is not None:
        needed.append((project_dir, "project dir"))
    needed += [(p, "readable path") for p in readable]
    return needed
