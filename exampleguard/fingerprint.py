"""What a cached result came from, and whether any of it changed: the caches' shared footing.

A result is kept with the *fingerprint* of its inputs: the SHA-256 of every file it read and of
the names in every directory it listed. A file's status (size, modification and change times,
inode and device) is kept beside its digest when its last change is a settling second older
than the hashing; a file whose status is exactly that later is not hashed again. The change
time cannot be set back (writing a file, or setting its times, renews it), so any later write
gives another status, and that file is hashed. A file that was missing, or was not a file, has
no digest, and stays unchanged only while it is still missing.

Both caches (live trees, :mod:`exampleguard.treecache`; whole runs,
:mod:`exampleguard.runcache`) live in the user's cache directory and store nothing when an input
changed while the result was being made.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Self

from exampleguard import __version__

__all__ = [
    "SETTLE_SECONDS",
    "Recording",
    "cache_directory",
    "changed_since",
    "digest_json",
    "file_digest",
    "file_status",
    "fingerprint",
    "interpreted",
    "listing_digest",
    "note_inputs",
    "note_scratch",
    "note_unknown_inputs",
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


def file_status(path: str) -> list[int] | None:
    """What says a file is unchanged: size, modification and change times, inode, device."""
    try:
        found = os.stat(path)  # noqa: PTH116 - called for every input of every cached run
    except (OSError, ValueError):
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev]


def file_digest(path: str, folders: dict[str, str] | None = None) -> str | None:
    """The SHA-256 of a file's content, and of where it really is when a link leads there.

    A link pointed elsewhere, at a copy of the same content, gives another digest: where a
    file lies can decide a verdict too (a reviewer record may not lead outside the project).
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


def listing_digest(path: str) -> str | None:
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


def fingerprint(
    files: Iterable[str],
    directories: Iterable[str],
    *,
    by_status: Iterable[str] = (),
    listings: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """The fingerprint of ``files`` and ``directories`` as they are now, as JSON data.

    ``by_status`` are more files, kept by their status alone where it can be trusted (a module
    of a library, which is replaced rather than edited): a settled one is not hashed, and any
    other status later counts as a change. One changed too recently is hashed like the rest.
    ``listings`` holds directories' :func:`listing_digest` taken a moment ago, not taken again.
    """
    digests: dict[str, str | None] = {}
    statuses: dict[str, list[int]] = {}
    settled = int((time.time() - SETTLE_SECONDS) * 1e9)
    hashed = list(files)
    for path in by_status:
        status = file_status(path)
        if status is not None and status[2] < settled:
            statuses[path] = status
        else:
            hashed.append(path)
    folders: dict[str, str] = {}
    for path in hashed:
        before = file_status(path)
        digests[path] = file_digest(path, folders)
        # Kept only for a file last changed well before it was hashed, and not since: a write
        # during the hashing, or within the clock's granularity of it, renews the change time
        # past the one kept.
        if before is not None and before[2] < settled and file_status(path) == before:
            statuses[path] = before
    return {
        "files": digests,
        "statuses": statuses,
        "directories": {path: _listing(path, listings) for path in directories},
    }


def _listing(path: str, taken: Mapping[str, str | None] | None) -> str | None:
    if taken is not None and path in taken:
        return taken[path]
    return listing_digest(path)


def unchanged(entry: dict[str, Any]) -> bool:
    """Whether every input that ``entry`` (holding a :func:`fingerprint`) names is unchanged."""
    files, directories = entry.get("files"), entry.get("directories")
    if not isinstance(files, dict) or not isinstance(directories, dict):
        return False
    statuses = entry.get("statuses")
    if not isinstance(statuses, dict):
        statuses = {}
    folders: dict[str, str] = {}
    for path, digest in files.items():
        kept = statuses.get(path)
        if kept is not None and file_status(path) == kept:
            continue
        if file_digest(path, folders) != digest:
            return False
    for path, kept in statuses.items():
        # A file kept by its status alone: any other status is a change.
        if path not in files and file_status(path) != kept:
            return False
    return all(listing_digest(path) == digest for path, digest in directories.items())


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


# Kernel interfaces and devices are not inputs a cache could compare; bytecode is derived from
# the sources, which are inputs themselves.
_IGNORED_PREFIXES = ("/dev/", "/proc/", "/sys/")
_BYTECODE = f"{os.sep}{_PYCACHE}{os.sep}"
# Opened to write, or not for its content: a descriptor on a directory or on a path alone.
_NOT_A_READ = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_DIRECTORY
_NOT_A_READ |= getattr(os, "O_PATH", 0)


class Recording:
    """Notes what a result is made from while it is made: files read and directories listed.

    An audit hook (PEP 578) sees every open and every listing in every thread, whichever code
    makes it, so no input can be left out by a reader that forgot to say so. What the hook
    cannot see is added with :func:`note_inputs`: a subprocess's reads, and the questions a run
    asks without reading (is there a counts file, is this a folder). One recording is active at
    a time (one begun while another is active notes nothing, and is incomplete); the hook,
    which cannot be removed, does nothing while none is. Paths under ``ignored`` (the caches'
    own directories, whose entries are functions of their keys) are left out.
    """

    def __init__(self, ignored: Iterable[Path] = ()) -> None:
        self.files: set[str] = set()
        self.read_as: dict[str, list[int] | None] = {}
        """Each file's status when it was first read: one that differs when the run is kept
        changed while the run went on, whatever its modification time says."""
        self.noted: set[str] = set()
        self.directories: set[str] = set()
        self.listed_as: dict[str, str | None] = {}
        """Each directory's listing (:func:`listing_digest`) when this process first listed
        it: one that differs when the run is kept changed while the run went on."""
        self.complete = True
        """Whether every input is known: false once something was read that cannot be named."""
        self.started = time.time()
        self._ignored = tuple(os.path.abspath(p) + os.sep for p in ignored)  # noqa: PTH100

    def __enter__(self) -> Self:
        global _active  # noqa: PLW0603 - the one slot the process-wide hook reads
        with _lock:
            if _active is not None:
                # Another run records in this process (a program calling main() from two
                # threads): this one cannot tell its reads apart, so it is never kept.
                self.complete = False
                return self
            _install()
            self.started = time.time()
            _active = self
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop noting (what was noted is kept); a recording that is not active is left alone."""
        global _active  # noqa: PLW0603
        with _lock:
            if _active is self:
                _active = None

    def note(self, files: Iterable[str], directories: Iterable[str]) -> None:
        """Add inputs that were read elsewhere (a subprocess's, a cache entry's)."""
        for path in files:
            self._keep(self.noted, path)
        for path in directories:
            self._keep(self.directories, path)

    def inputs(self) -> tuple[list[str], list[str], list[str]]:
        """The files this process read, the other files, and the directories listed.

        The other files are those noted (:meth:`note`) and every module the process has
        loaded: a fingerprint may keep them by their status (see :func:`fingerprint`).
        """
        others = set(self.noted)
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str):
                self._keep(others, path)
        return sorted(self.files), sorted(others - self.files), sorted(self.directories)

    def _keep(self, into: set[str], path: object) -> str | None:
        if isinstance(path, int) or path is None:
            return None
        try:
            # Plain string work: the hook runs on every event, and must not follow links.
            text = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]  # noqa: PTH100
        except (TypeError, ValueError):
            return None
        if text.startswith(_IGNORED_PREFIXES) or _BYTECODE in text:
            return None
        if self._ignored and (text + os.sep).startswith(self._ignored):
            return None
        into.add(text)
        return text

    def ignore(self, path: str) -> None:
        """Leave out ``path`` and everything under it from now on (and what was noted)."""
        prefix = os.path.abspath(path) + os.sep  # noqa: PTH100
        self._ignored = (*self._ignored, prefix)
        for noted in (self.files, self.noted, self.directories):
            noted.difference_update([p for p in noted if (p + os.sep).startswith(prefix)])
        for seen in (self.read_as, self.listed_as):
            for read in [p for p in seen if (p + os.sep).startswith(prefix)]:
                del seen[read]

    def changed_while_read(self, listings: Mapping[str, str | None] | None = None) -> bool:
        """Whether an input this process read changed since: a file's status, a listing.

        A listing is compared by its names rather than the directory's times, which the
        first import of a package renews by making its ``__pycache__``. ``listings`` holds the
        listings now, where already taken (:func:`listing_digest`).
        """
        if any(file_status(path) != status for path, status in self.read_as.items()):
            return True
        return any(_listing(path, listings) != seen for path, seen in self.listed_as.items())


_active: Recording | None = None
_installed = False
_lock = threading.Lock()


def _install() -> None:
    global _installed  # noqa: PLW0603 - an audit hook is added once per process
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


def _hook(event: str, arguments: tuple[Any, ...]) -> None:
    recording = _active
    if recording is None:
        return
    if event == "open":
        path, mode, flags = (*arguments, None, None, None)[:3]
        if isinstance(mode, str):
            if any(c in mode for c in "wax+"):
                return
        elif isinstance(flags, int) and flags & _NOT_A_READ:
            return
        kept = recording._keep(recording.files, path)  # the hook is the recording's own
        if kept is not None and kept not in recording.read_as:
            recording.read_as[kept] = file_status(kept)
    elif event in ("os.listdir", "os.scandir"):
        kept = recording._keep(recording.directories, arguments[0] if arguments else ".")
        if kept is not None and kept not in recording.listed_as:
            # Taken just before the run's own listing; the one taken here is audited too,
            # and finds the entry already made.
            recording.listed_as[kept] = None
            recording.listed_as[kept] = listing_digest(kept)


def note_inputs(files: Iterable[str], directories: Iterable[str]) -> None:
    """Tell the active :class:`Recording`, if any, that its result depends on these too."""
    recording = _active
    if recording is not None:
        recording.note(files, directories)


def note_scratch(path: str) -> None:
    """Tell the active :class:`Recording`, if any, that ``path`` is the run's own scratch.

    What the run makes for itself (a request written for a child, read back, removed) is no
    input: it comes from the inputs, and is gone when the run is kept.
    """
    recording = _active
    if recording is not None:
        recording.ignore(path)


def note_unknown_inputs() -> None:
    """Tell the active :class:`Recording`, if any, that its result depends on inputs unnamed."""
    recording = _active
    if recording is not None:
        recording.complete = False
