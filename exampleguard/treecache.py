"""A cache of live trees: an import is not repeated while nothing it read has changed.

Importing an application and judging every example with its own parser is most of what
``validate`` costs on a small catalog. The result (the tree snapshot and the verdicts) is kept
in the user's cache directory, one entry per project and tree setting, and reused only when
everything it came from is unchanged:

- the interpreter (its path and version), ``PYTHONPATH``, exampleguard's version, the tree
  setting, the program name and the project directory (the entry's name is their digest);
- the questions asked (every example's words and every declared command path);
- the content of every file the import read — every module's source, extension modules, data
  files it opened — and the names in every directory it listed: the import system lists each
  directory of the import path, so a new module that would shadow another, or a distribution
  installed, removed or upgraded (its ``.dist-info`` directory is named by its version), shows
  as a listing that changed.

What the import reads comes from the child itself (:mod:`exampleguard.adapters._inputs`); this
module hashes it. With each file's digest the entry keeps the file's status as it was hashed
(size, modification and change times, inode and device) when its last change is a settling
second older than the hashing; a file whose status is exactly that is not hashed again. The
change time cannot be set back (writing a file, or setting its times, renews it), so any later
write gives another status, and that file is hashed. An entry is written atomically, only when
no input changed while the child ran, and an entry that cannot be read or does not match is
ignored: the tree is imported again. Environment variables are not part of the key: an
application whose commands depend on them is run with ``--no-cache``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from exampleguard import __version__
from exampleguard.files import read_regular, write_atomically

__all__ = ["CACHE_FORMAT", "TreeCache", "cache_directory"]

CACHE_FORMAT = "exampleguard.tree-cache/v1"
# Files changed this recently may have changed while the child read them: such a run is not
# cached (file times are coarser than the clock that started the child).
_SETTLE_SECONDS = 1.0


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


class TreeCache:
    """Entries of extracted live trees in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = (directory or cache_directory()) / "trees"

    def lookup(
        self, identity: dict[str, Any], request: dict[str, Any]
    ) -> tuple[str, list[Any]] | None:
        """The cached tree text and verdict records for these questions, if still true."""
        try:
            entry = json.loads(read_regular(self._entry_path(identity)))
        except (OSError, ValueError):
            return None
        if not _current(entry, _full_identity(identity), _digest_json(request)):
            return None
        verdicts = entry["verdicts"]
        # One verdict per asked argv, then (when help examples were asked for) one per example
        # of the application's own help text, which only the import can count.
        if len(verdicts) < len(request.get("argvs", ())) or not all(
            isinstance(verdict, dict) for verdict in verdicts
        ):
            return None
        return entry["tree"], verdicts

    def store(
        self,
        identity: dict[str, Any],
        request: dict[str, Any],
        result: tuple[str, list[Any]],
        inputs: dict[str, Any],
        started: float,
    ) -> None:
        """Keep ``result`` (tree text, verdict records) for the questions ``request`` asked.

        ``inputs`` is what the child read (``files`` and ``directories``); ``started`` the
        wall-clock time the child was started. Nothing is stored when an input changed while
        the child ran, or when the cache directory cannot be written (a cache is optional).
        """
        files = _paths(inputs.get("files"))
        directories = _paths(inputs.get("directories"))
        if _changed_since(files + directories, started - _SETTLE_SECONDS):
            return
        digests: dict[str, str | None] = {}
        statuses: dict[str, list[int]] = {}
        settled = int((time.time() - _SETTLE_SECONDS) * 1e9)
        for path in files:
            before = file_status(path)
            digests[path] = file_digest(path)
            # Kept only for a file last changed well before it was hashed, and not since: a
            # write during the hashing, or within the clock's granularity of it, renews the
            # change time past the one kept.
            if before is not None and before[2] < settled and file_status(path) == before:
                statuses[path] = before
        entry = {
            "format": CACHE_FORMAT,
            "identity": _full_identity(identity),
            "request": _digest_json(request),
            "files": digests,
            "statuses": statuses,
            "directories": {path: listing_digest(path) for path in directories},
            "tree": result[0],
            "verdicts": result[1],
        }
        try:
            write_atomically(self._entry_path(identity), json.dumps(entry, ensure_ascii=False))
        except (OSError, ValueError):
            return

    def through(
        self,
        identity: dict[str, Any],
        request: dict[str, Any],
        extract: Callable[[dict[str, Any]], tuple[str, list[Any], dict[str, Any] | None]],
    ) -> tuple[str, list[Any]]:
        """The cached result for ``request``, or ``extract``'s, kept for next time.

        ``extract`` runs the child on the request (with ``inputs`` asked for) and returns the
        tree text, the verdict records and what the import read.
        """
        cached = self.lookup(identity, request)
        if cached is not None:
            return cached
        started = time.time()
        text, verdicts, inputs = extract({**request, "inputs": True})
        if inputs is not None:
            self.store(identity, request, (text, verdicts), inputs, started)
        return text, verdicts

    def _entry_path(self, identity: dict[str, Any]) -> Path:
        return self.directory / f"{_digest_json(_full_identity(identity))[:32]}.json"


def _current(entry: Any, identity: dict[str, Any], request: str) -> bool:
    """Whether ``entry`` is one of this version, for these questions, with no input changed."""
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
        return False
    if entry.get("identity") != identity or entry.get("request") != request:
        return False
    files, directories = entry.get("files"), entry.get("directories")
    if not isinstance(files, dict) or not isinstance(directories, dict):
        return False
    if not isinstance(entry.get("tree"), str) or not isinstance(entry.get("verdicts"), list):
        return False
    statuses = entry.get("statuses")
    if not isinstance(statuses, dict):
        statuses = {}
    for path, digest in files.items():
        kept = statuses.get(path)
        if kept is not None and file_status(path) == kept:
            continue
        if file_digest(path) != digest:
            return False
    return all(listing_digest(path) == digest for path, digest in directories.items())


def file_status(path: str) -> list[int] | None:
    """What says a file is unchanged: size, modification and change times, inode, device."""
    try:
        found = Path(path).stat()
    except OSError:
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev]


def file_digest(path: str) -> str | None:
    """The SHA-256 of a file's content; ``None`` when it is missing or not a file."""
    try:
        with Path(path).open("rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError:
        return None


def listing_digest(path: str) -> str | None:
    """The SHA-256 of the sorted names in a directory; ``None`` when it cannot be listed."""
    try:
        names = sorted(entry.name for entry in os.scandir(path))
    except OSError:
        return None
    return hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def _full_identity(identity: dict[str, Any]) -> dict[str, Any]:
    return {
        **identity,
        "executable": sys.executable,
        "python": sys.version,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "exampleguard": __version__,
    }


def _digest_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _paths(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [path for path in value if isinstance(path, str)]


def _changed_since(paths: Iterable[str], moment: float) -> bool:
    limit = int(moment * 1e9)
    for path in paths:
        try:
            if Path(path).stat().st_mtime_ns >= limit:
                return True
        except OSError:
            continue
    return False
