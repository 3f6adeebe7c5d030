"""The fresh work dir of one run: created under a temp root, fixtures copied in, removed after."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Dot-named so a fixture tree rarely collides with them; relative to the work dir. All of them
# exist when the run starts: the contract promises directories, and a program that opens
# $XDG_CONFIG_HOME/app/ without creating its parents must see an empty config, not an error.
_HOME = ".home"
_TMP = ".tmp"
_XDG = {
    "XDG_CONFIG_HOME": f"{_HOME}/.config",
    "XDG_CACHE_HOME": f"{_HOME}/.cache",
    "XDG_DATA_HOME": f"{_HOME}/.local/share",
    "XDG_STATE_HOME": f"{_HOME}/.local/state",
}


def in_memory_dirs(work: Path) -> list[str]:
    """Arguments for bubblewrap that mount HOME and TMPDIR in memory, XDG dirs inside.

    The directories appear at their usual paths inside the work dir; only their mount points
    touch the disk. A fixture that ships its own ``.home`` or ``.tmp`` keeps it.
    """
    arguments: list[str] = []
    for name in (_HOME, _TMP):
        if not (work / name).exists():
            arguments += ["--tmpfs", str(work / name)]
    for relative in _XDG.values():
        arguments += ["--dir", str(work / relative)]
    return arguments


@dataclass(frozen=True)
class WorkDir:
    """A run's private directory: its cwd and the only place it may write."""

    path: Path

    def env_dirs(self) -> dict[str, str]:
        """HOME, TMPDIR and the XDG base dirs, all inside the work dir."""
        dirs = {"HOME": str(self.path / _HOME), "TMPDIR": str(self.path / _TMP)}
        dirs.update({name: str(self.path / rel) for name, rel in _XDG.items()})
        return dirs


def create_work_dir(fixtures: Path | None, *, make_dirs: bool = True) -> WorkDir:
    """Create a fresh, uniquely named work dir and copy the fixtures' contents into it.

    mkdtemp gives each run its own directory (mode 0700) even when runs start concurrently in
    threads or processes. With ``make_dirs`` the HOME, TMPDIR and XDG directories are made on
    disk; bubblewrap instead mounts them in memory inside the sandbox (see ``_launch``), which
    spares a dozen directory operations per run. Raises OSError when the fixtures cannot be
    copied; the caller removes nothing then, because this removes its own half-made directory.
    """
    path = Path(tempfile.mkdtemp(prefix="sandbox-run-"))
    try:
        if fixtures is not None:
            # symlinks=True: a fixture symlink is copied as a link, never followed out of the tree.
            shutil.copytree(fixtures, path, symlinks=True, dirs_exist_ok=True)
        work = WorkDir(path)
        for name in (_HOME, _TMP, *_XDG.values()) if make_dirs else ():
            try:
                (path / name).mkdir(parents=True)
            except FileExistsError:
                if not (path / name).is_dir():
                    raise

    except BaseException:
        remove_work_dir(path)
        raise
    return work


def remove_work_dir(path: Path) -> None:
    """Remove a work dir, including what the run made unreadable or unwritable inside it."""
    with contextlib.suppress(OSError):
        # The common case: a run that left nothing but the empty mount points of its home and
        # temporary directory. Three rmdir calls instead of a tree walk.
        for name in (_TMP, _HOME):
            with contextlib.suppress(FileNotFoundError):
                (path / name).rmdir()
        path.rmdir()
        return

    def make_removable(func: Callable[..., object], failed: str, _exc: object) -> None:
        # A run may chmod its own dirs to 000: give the owner its rights back and retry; a
        # later pass removes what this one could not list.
        for target in (Path(failed).parent, Path(failed)):
            if not target.is_symlink():
                with contextlib.suppress(OSError):
                    target.chmod(stat.S_IRWXU)
        with contextlib.suppress(OSError):
            func(failed)

    for _ in range(3):
        if not os.path.lexists(path):
            return
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=make_removable)
        else:
            shutil.rmtree(path, onerror=make_removable)
