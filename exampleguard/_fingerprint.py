"""What a cached tree came from, and whether any of it changed.

A result is kept with the *fingerprint* of its inputs: every file it could read and the names in
every directory it could list. A file is kept by its status (size, modification and change
times, inode and device) when its last change is a settling second older than the fingerprint,
and by the SHA-256 of its content otherwise. The change time cannot be set back (writing a file,
or setting its times, renews it), so any later write gives another status. A file that was
missing, or was not a file, has no digest, and stays unchanged only while it is still missing.

The tree cache (:mod:`exampleguard._treecache`) keeps its entries in the user's cache directory
and stores nothing when an input changed while the result was being made.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from exampleguard._version import VERSION as __version__

__all__ = [
    "SETTLE_SECONDS",
    "cache_directory",
    "changed_since",
    "digest_json",
    "fingerprint",
    "interpreted",
    "unchanged",
]

SETTLE_SECONDS = 1.0
"""Files changed this recently may have changed while they were read: file times are coarser
than the clock, so such a result is not stored, and such a file's status is not trusted."""

_PYCACHE = "__pycache__"


def cache_directory() -> Path:
    """Where exampleguard keeps its caches: the platform's per-user cache directory.

    ``XDG_CACHE_HOME`` (or ``~/.cache``) on Linux and other POSIX systems, ``~/Library/Caches``
    on macOS, ``%LOCALAPPDATA%`` on Windows.
    """
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or ""
        if not Path(base).is_absolute():
            # The XDG rule: a relative value is invalid and ignored.
            base = str(Path.home() / ".cache")
    return Path(base) / "exampleguard"


def _file_status(path: str) -> list[int] | None:
    """What says a file is unchanged: size, modification and change times, inode, device."""
    try:
        found = os.stat(path)  # noqa: PTH116 - called for every input of a cached tree
    except (OSError, ValueError):
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev]


def _file_digest(path: str, folders: dict[str, str] | None = None) -> str | None:
    """The SHA-256 of a file's content, and of where it really is when a link leads there.

    A link pointed elsewhere, at a copy of the same content, gives another digest: an import
    may read where a module lies (``__file__``) as well as what it holds.
    What is not a regular file gets what it is instead (:func:`_what_is`): ``None`` only when
    nothing is there, so a folder, a FIFO or a dangling link put where nothing was is a
    change. Opened without blocking, so a FIFO put where a file was read is not waited on.
    ``folders`` keeps where each folder really is, for many files hashed at one moment.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return _what_is(path)
    try:
        if not _is_regular(descriptor):
            return _what_is(path)
        digest = hashlib.sha256()
        real = _real_path(path, {} if folders is None else folders)
        if real != os.path.abspath(path):  # noqa: PTH100
            digest.update(b"\0link\0" + os.fsencode(real) + b"\0")
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            return hashlib.file_digest(stream, lambda: digest).hexdigest()
    except OSError:
        return _what_is(path)
    finally:
        os.close(descriptor)


def _real_path(path: str, folders: dict[str, str]) -> str:
    """Where ``path`` really is: its folder's real path (kept in ``folders``), then its own link.

    The same as ``os.path.realpath``, which looks at every part of every path again.
    """
    folder, name = os.path.split(os.path.abspath(path))  # noqa: PTH100
    real_folder = folders.get(folder)
    if real_folder is None:
        real_folder = folders[folder] = os.path.realpath(folder)
    joined = os.path.join(real_folder, name)  # noqa: PTH118
    return os.path.realpath(joined) if os.path.islink(joined) else joined  # noqa: PTH114


def _is_regular(descriptor: int) -> bool:
    return stat.S_ISREG(os.fstat(descriptor).st_mode)


def _what_is(path: str) -> str | None:
    """What is at ``path`` when it is no regular file (or folder) to read.

    ``None`` when nothing is, else its kind; for a link, where it leads and what is there.
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return f"!unreadable:{getattr(error, 'errno', None)}"
    if not stat.S_ISLNK(found.st_mode):
        return f"!kind:{stat.S_IFMT(found.st_mode):o}"
    try:
        target = os.readlink(path)  # noqa: PTH115 - strings, as every path here
    except OSError:
        target = "?"
    try:
        there = f"{stat.S_IFMT(os.stat(path).st_mode):o}"  # noqa: PTH116
    except OSError:
        there = "nothing"
    return f"!link:{target}:{there}"


def _listing_digest(path: str) -> str | None:
    """The SHA-256 of a directory's names, each with its kind; else what is there instead.

    The kind (folder, file, link, other) comes with the listing at no cost, and tells a file
    that became a folder, or a folder that became a link to one, from what it was. A
    ``__pycache__`` folder is left out: bytecode is derived from the sources, and the first
    import of a package makes one. ``None`` only when nothing is at ``path``
    (:func:`_what_is`).
    """
    try:
        with os.scandir(path) as entries:
            named = sorted(
                f"{entry.name}\0{_kind(entry)}" for entry in entries if entry.name != _PYCACHE
            )
    except (OSError, ValueError):
        return _what_is(path)
    return hashlib.sha256("\0".join(named).encode("utf-8", "surrogateescape")).hexdigest()


def _kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "l"
        if entry.is_dir(follow_symlinks=False):
            return "d"
        return "f" if entry.is_file(follow_symlinks=False) else "o"
    except OSError:
        return "?"


def fingerprint(files: Iterable[str], directories: Iterable[str]) -> dict[str, Any]:
    """The fingerprint of ``files`` and ``directories`` as they are now, as JSON data.

    A settled file is kept by its status alone: it is not hashed, and any other status later
    counts as a change. A file changed too recently for its status to be trusted is hashed.
    """
    digests: dict[str, str | None] = {}
    statuses: dict[str, list[int]] = {}
    settled = int((time.time() - SETTLE_SECONDS) * 1e9)
    folders: dict[str, str] = {}
    for path in files:
        status = _file_status(path)
        if status is not None and status[2] < settled:
            statuses[path] = status
        else:
            digests[path] = _file_digest(path, folders)
    return {
        "files": digests,
        "statuses": statuses,
        "directories": {path: _listing_digest(path) for path in directories},
    }


def unchanged(entry: dict[str, Any]) -> bool:
    """Whether every input that ``entry`` (holding a :func:`fingerprint`) names is unchanged."""
    files, statuses, directories = (entry.get(key) for key in ("files", "statuses", "directories"))
    if not isinstance(files, dict) or not isinstance(statuses, dict):
        return False
    if not isinstance(directories, dict):
        return False
    folders: dict[str, str] = {}
    if any(_file_digest(path, folders) != digest for path, digest in files.items()):
        return False
    if any(_file_status(path) != kept for path, kept in statuses.items()):
        return False
    return all(_listing_digest(path) == digest for path, digest in directories.items())


def changed_since(paths: Iterable[str], moment: float) -> bool:
    """Whether any of ``paths`` was modified at or after ``moment`` (seconds since the epoch)."""
    limit = int(moment * 1e9)
    for path in paths:
        try:
            if os.stat(path).st_mtime_ns >= limit:  # noqa: PTH116
                return True
        except (OSError, ValueError):
            continue
    return False


def interpreted(identity: dict[str, Any]) -> dict[str, Any]:
    """``identity`` with what every cached result also depends on.

    That is the interpreter (its path and version), where it imports from (``PYTHONPATH`` and
    the whole import path: an editable install re-pointed at another checkout of the same
    version imports other code from other files), and exampleguard's version.
    """
    return {
        **identity,
        "executable": sys.executable,
        "python": sys.version,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "path": list(sys.path),
        "exampleguard": __version__,
    }


def digest_json(value: Any) -> str:
    """The SHA-256 of ``value`` as canonical JSON (sorted keys)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
