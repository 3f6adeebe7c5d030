"""What a root caller's ``unshare`` and ``env`` dry runs can reach.

Those runs execute as an unprivileged uid of their own (see ``sandbox.RUN_UIDS``), which
reads only what every user may: pytest's 0700 temporary dirs and an interpreter in root's
0700 home are out of its reach, and the sandbox then refuses to start it. Tests that run them
as root use an interpreter every user may run and let the run's uid walk to their project.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox._runuid import RUN_UID, check_reachable

HOST_ISOLATIONS = ("unshare", "env", "landlock")


def runs_as_run_uid(isolation: str | None) -> bool:
    """Whether a dry run under ``isolation`` executes as a run uid (root caller, no mounts)."""
    return os.geteuid() == 0 and isolation in HOST_ISOLATIONS


@functools.cache
def public_python() -> str | None:
    """A Python 3.11+ that every user may run, if this host has one."""
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        found = shutil.which("python3", path=directory)
        if found is None:
            continue
        try:
            check_reachable([(Path(found), "program")], RUN_UID)
        except OSError:
            continue
        return found
    return None


def python_for(isolation: str | None) -> str:
    """The interpreter a dry run under ``isolation`` can execute (skips the test without)."""
    if not runs_as_run_uid(isolation):
        return sys.executable
    found = public_python()
    if found is None:
        pytest.skip("no Python that every user may run: a root caller's env run needs one")
    return found


def reachable_by_runs(path: Path, *, writable: bool = False) -> Path:
    """Let a root caller's run uids walk to ``path`` (and write in it, with ``writable``).

    Only as root; pytest gives its own dirs back their 0700 at the next session.
    """
    if os.geteuid() != 0:
        return path
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)
    if writable:
        path.chmod(0o777)
    return path


@contextlib.contextmanager
def public_dir(prefix: str) -> Iterator[Path]:
    """A fresh directory (0755) that a run's uid can always reach, removed afterwards.

    Outside pytest's base dir, which every concurrent pytest session gives back its 0700.
    """
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
