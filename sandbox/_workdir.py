"""The work dir of one run: its layout, the fixtures check and copy, leftovers of killed callers.

Under bubblewrap the work dir exists only inside the sandbox: a sized in-memory file system that
the sandbox's own process fills (see ``_stage``), gone with the run. The ``unshare`` and ``env``
backends get a directory on the host instead (0700, in the temp dir); each is named after the
pid of the process that made it, so that one left by a killed caller is removed by the next
run of that user in the same temp dir.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox._limits import pid_alive
from sandbox._runuid import RUN_UIDS, check_reachable
from sandbox._stage import StageError, copy_fixtures
from sandbox._types import Limits

__all__ = [
    "LAYOUT",
    "FixtureError",
    "WorkDir",
    "check_fixtures",
    "create_work_dir",
    "in_sandbox_work_dir",
    "remove_work_dir",
]

# Dot-named so a fixture tree rarely collides with them; relative to the work dir. All of them
# exist when the run starts: the contract promises directories, and a program that opens
# $XDG_CONFIG_HOME/app/ without creating its parents must see an empty config, not an error.
HOME = ".home"
TMP = ".tmp"
_XDG = {
    "XDG_CONFIG_HOME": f"{HOME}/.config",
    "XDG_CACHE_HOME": f"{HOME}/.cache",
    "XDG_DATA_HOME": f"{HOME}/.local/share",
    "XDG_STATE_HOME": f"{HOME}/.local/state",
}
LAYOUT: tuple[str, ...] = (HOME, TMP, *_XDG.values())
"""The directories every work dir has when the run starts, parents first."""

_RUN_DIR = re.compile(r"sandbox-run-(\d+)-")
TMPDIR_HINT = "set TMPDIR to a directory every user may search, such as /tmp"


class FixtureError(ValueError):
    """The fixtures cannot be copied into a run: not a plain tree, or too large."""


@dataclass(frozen=True)
class WorkDir:
    """A run's private directory: its cwd and the only place it may write.

    ``on_host`` is false when the directory exists only inside the sandbox (bubblewrap).
    """

    path: Path
    on_host: bool = True

    def env_dirs(self) -> dict[str, str]:
        """HOME, TMPDIR and the XDG base dirs, all inside the work dir."""
        # By string: every run asks, and each Path join parses its parts anew.
        top = str(self.path)
        dirs = {"HOME": f"{top}/{HOME}", "TMPDIR": f"{top}/{TMP}"}
        dirs.update({name: f"{top}/{rel}" for name, rel in _XDG.items()})
        return dirs


def in_sandbox_work_dir() -> WorkDir:
    """A unique path for a work dir that exists only inside the sandbox, under its /tmp."""
    return WorkDir(Path(f"/tmp/sandbox-run-{secrets.token_hex(8)}"), on_host=False)


def check_fixtures(fixtures: Path, limits: Limits | None = None) -> None:
    """Raise :class:`FixtureError` unless ``fixtures`` is a plain tree within the limits.

    A plain tree: a directory (not a symlink to one) of regular files and directories only,
    within the limits' entry and byte bounds. Nothing is read but metadata: a device or FIFO
    is refused before anyone could open it.
    """
    limits = limits or Limits()
    try:
        top = fixtures.lstat()
    except OSError as exc:
        raise FixtureError(f"fixtures {fixtures}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(top.st_mode):
        raise FixtureError(f"fixtures {fixtures}: not a directory (a symlink is not followed)")
    entries = total = 0
    pending = [fixtures]
    while pending:
        directory = pending.pop()
        try:
            listing = list(os.scandir(directory))
        except OSError as exc:
            raise FixtureError(f"fixtures {directory}: {exc.strerror or exc}") from None
        for entry in listing:
            entries += 1
            if entries > limits.max_fixture_entries:
                raise FixtureError(
                    f"fixtures {fixtures}: more than {limits.max_fixture_entries} entries"
                )
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                pending.append(Path(entry.path))
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > limits.max_fixture_bytes:
                    raise FixtureError(
                        f"fixtures {fixtures}: more than {limits.max_fixture_bytes} bytes"
                    )
            else:
                kind = _kind(info.st_mode)
                raise FixtureError(
                    f"fixtures: {entry.path} is a {kind}; only regular files and directories "
                    "are copied"
                )


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "special file"


def sweep_leftovers(parent: Path) -> None:
    """Remove the work dirs that this user's dead callers left in ``parent``.

    Only directories (never a symlink) named like ours, owned by this user (for root: or by
    a run's leased uid, to which root hands its runs' work dirs), whose maker is dead are
    removed.
    """
    euid = os.geteuid()
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            found = _RUN_DIR.match(entry.name)
            if found is None or not entry.is_dir(follow_symlinks=False):
                continue
            owner = entry.stat(follow_symlinks=False).st_uid
            if owner != euid and not (euid == 0 and owner in RUN_UIDS):
                continue
            if not pid_alive(int(found.group(1))):
                remove_work_dir(Path(entry.path))


def create_work_dir(
    fixtures: Path | None,
    *,
    limits: Limits | None = None,
    deadline: float | None = None,
    owner: int | None = None,
) -> WorkDir:
    """Create a fresh host work dir (0700) and copy the fixtures' contents into it.

    The copy is bounded by the limits and by ``deadline`` (a ``time.monotonic`` value). With
    ``owner`` (a root caller's run uid) the whole tree is handed to that uid and group once it
    is complete. Raises OSError (or :class:`FixtureError`) when it cannot be made; the
    half-made directory is removed first.
    """
    limits = limits or Limits()
    parent = Path(tempfile.gettempdir())
    if owner is not None:
        # The run's uid must reach its own work dir through every parent.
        check_reachable([(parent, "temporary directory (TMPDIR)")], owner, also=(TMPDIR_HINT,))
    sweep_leftovers(parent)
    path = Path(tempfile.mkdtemp(prefix=f"sandbox-run-{os.getpid()}-", dir=parent))
    try:
        if fixtures is not None:
            check_fixtures(fixtures, limits)
            try:
                copy_fixtures(
                    str(fixtures),
                    str(path),
                    limits.max_fixture_entries,
                    limits.max_fixture_bytes,
                    deadline,
                )
            except StageError as exc:
                raise FixtureError(str(exc)) from None
        for name in LAYOUT:
            try:
                (path / name).mkdir(parents=True)
            except FileExistsError:
                if not (path / name).is_dir():
                    raise
        # Whatever modes the fixtures carried, the work dir stays private.
        path.chmod(0o700)
        if owner is not None:
            _hand_over(path, owner)
    except BaseException:
        remove_work_dir(path)
        raise
    return WorkDir(path)


def _hand_over(top: Path, owner: int) -> None:
    """Give the work dir's tree (ours alone so far: 0700, nothing running) to ``owner``."""
    for directory, subdirs, files in os.walk(top):
        for name in (*subdirs, *files):
            os.chown(Path(directory, name), owner, owner, follow_symlinks=False)
    os.chown(top, owner, owner, follow_symlinks=False)


_REMOVALS = (os.rmdir, os.unlink, os.remove)


def remove_work_dir(path: Path) -> None:
    """Remove a work dir, including what the run made unreadable or unwritable inside it.

    shutil.rmtree never follows a symlink the run planted (it walks by descriptors). Only an
    unprivileged caller needs to restore rights the run took away; root needs none and never
    changes a mode here, so no path swapped in by a surviving process can steer a chmod.
    """

    def make_removable(func: Callable[..., object], failed: str, _exc: object) -> None:
        # A run may chmod its own dirs to 000: give the owner its rights back and retry; a
        # later pass removes what this one could not list. By descriptor, never through a
        # symlink: O_NOFOLLOW refuses a link in the last step, O_DIRECTORY anything but a dir.
        if os.geteuid() != 0:
            for target in (Path(failed).parent, Path(failed)):
                with contextlib.suppress(OSError):
                    _chmod_dir_no_follow(target)
        # Only a removal is tried again here: what failed to open, list or stat (a folder the
        # run locked) is removed by the next pass, now that it can be entered.
        if func in _REMOVALS:
            with contextlib.suppress(OSError):
                func(failed)

    for _ in range(3):
        if not os.path.lexists(path):
            return
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=make_removable)
        else:
            shutil.rmtree(path, onerror=make_removable)


def _chmod_dir_no_follow(path: Path) -> None:
    fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        # An O_PATH descriptor cannot be fchmod()ed; its /proc link names that very inode.
        Path(f"/proc/self/fd/{fd}").chmod(stat.S_IRWXU)
    finally:
        os.close(fd)


def deadline_after(seconds: float) -> float:
    """The ``time.monotonic`` value ``seconds`` from now."""
    return time.monotonic() + seconds
