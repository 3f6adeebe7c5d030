"""A cache of live trees: an import is not repeated while nothing it could read has changed.

Importing an application and judging every example with its own parser is most of what
``validate`` costs on a small catalog. The result (the tree snapshot and the verdicts) is kept
in the user's cache directory, one entry per project and tree setting, and reused only when
everything it came from is unchanged. Everything in the key is computed here, by exampleguard's
own process, from what the import *can* read; nothing the child reports is trusted with it:

- the interpreter (its path and version), ``PYTHONPATH``, the whole import path, exampleguard's
  version, the tree setting, the project directory, the program name and the containment (the
  isolation decided, ``tree_env`` and its values);
- the questions asked (every example's words and every declared command path);
- every file of the project directory and of the import path's directories outside the
  interpreter's installations (an editable sibling package, a ``PYTHONPATH`` entry), kept by
  status, and the names in every directory of the import path, so that a distribution
  installed, removed or upgraded (its ``.dist-info`` directory is named by its version) shows
  as a listing that changed.

An entry is written atomically, only when no input changed while the child ran, and an entry
that cannot be read or does not match is ignored: the tree is imported again. A project too
large to fingerprint (more than :data:`MAX_FILES` files) is not cached.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exampleguard._files import read_regular, write_atomically
from exampleguard._fingerprint import (
    SETTLE_SECONDS,
    cache_directory,
    changed_since,
    digest_json,
    fingerprint,
    interpreted,
    unchanged,
)
from exampleguard._treechild import import_path

__all__ = [
    "CACHE_FORMAT",
    "MAX_FILES",
    "ImportInputs",
    "TreeCache",
    "cache_directory",
    "import_inputs",
    "tree_identity",
]

CACHE_FORMAT = "exampleguard.tree-cache/v2"
MAX_FILES = 20_000
"""More files than this in what an import can read, and the tree is not cached."""

# Directories that hold no source of the application: version control, caches, environments.
_SKIPPED = frozenset({"__pycache__", "node_modules"})


def tree_identity(
    tree: str, root: Path, containment: dict[str, Any], program: str | None = None
) -> dict[str, Any]:
    """What names a cached tree besides the interpreter: its setting, project and program."""
    return {"tree": tree, "root": str(root), "program": program, "containment": containment}


@dataclass(frozen=True)
class ImportInputs:
    """What an import can read, as exampleguard's own process finds it (``None``: too much)."""

    files: tuple[str, ...] | None
    directories: tuple[str, ...]


def import_inputs(root: Path) -> ImportInputs:
    """Every file the import of a tree in ``root`` can read that is not installed, and listings.

    The project directory and the import path's directories outside the interpreter's
    installations are walked (hidden directories, caches and virtual environments skipped);
    every directory of the import path is listed.
    """
    installed = tuple(f"{prefix}{os.sep}" for prefix in _installations())
    search = [str(path) for path in import_path()]
    walked = [str(root)]
    walked += [p for p in search if not f"{p}{os.sep}".startswith(installed) and Path(p).is_dir()]
    files: list[str] = []
    directories = list(search)
    for top in dict.fromkeys(walked):
        for folder, names in _walk(top):
            directories.append(folder)
            files += (os.path.join(folder, name) for name in names)  # noqa: PTH118
            if len(files) > MAX_FILES:
                return ImportInputs(None, ())
    return ImportInputs(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(directories)))


def _walk(top: str) -> Iterator[tuple[str, list[str]]]:
    """Each directory under ``top`` with its regular files, skipping what holds no source."""
    for folder, subfolders, names in os.walk(top):
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".")
            and name not in _SKIPPED
            and not Path(folder, name, "pyvenv.cfg").exists()
        ]
        yield folder, [name for name in names if not name.endswith((".pyc", ".pyo"))]


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
        if not _current(entry, interpreted(identity), digest_json(request)):
            return None
        verdicts = entry["verdicts"]
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
        inputs: ImportInputs,
        started: float,
    ) -> None:
        """Keep ``result`` (tree text, verdict records) for the questions ``request`` asked.

        ``started`` is the wall-clock time the child was started. Nothing is stored when an
        input changed while the child ran, or when the cache directory cannot be written.
        """
        files = list(inputs.files or ())
        directories = list(inputs.directories)
        # Listings are compared by their names when the entry is looked up; a file that changed
        # while the child ran may have been read before or after the change: not kept.
        if changed_since(files, started - SETTLE_SECONDS):
            return
        entry = {
            "format": CACHE_FORMAT,
            "identity": interpreted(identity),
            "request": digest_json(request),
            **fingerprint(files, directories),
            "tree": result[0],
            "verdicts": result[1],
        }
        try:
            write_atomically(
                self._entry_path(identity), json.dumps(entry, ensure_ascii=False), durable=False
            )
        except (OSError, ValueError):
            return

    def through(
        self,
        identity: dict[str, Any],
        request: dict[str, Any],
        inputs: ImportInputs,
        extract: Callable[[], tuple[str, list[Any]]],
    ) -> tuple[str, list[Any]]:
        """The cached result for ``request``, or ``extract``'s, kept for next time."""
        if inputs.files is None:
            return extract()
        cached = self.lookup(identity, request)
        if cached is not None:
            return cached
        started = time.time()
        text, verdicts = extract()
        self.store(identity, request, (text, verdicts), inputs, started)
        return text, verdicts

    def _entry_path(self, identity: dict[str, Any]) -> Path:
        # One entry per tree setting and project: the program name is checked within it.
        named = {key: value for key, value in identity.items() if key != "program"}
        return self.directory / f"{digest_json(interpreted(named))[:32]}.json"


def _current(entry: Any, identity: dict[str, Any], request: str) -> bool:
    """Whether ``entry`` is one of this version, for these questions, with no input changed."""
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
        return False
    if entry.get("identity") != identity or entry.get("request") != request:
        return False
    if not isinstance(entry.get("tree"), str) or not isinstance(entry.get("verdicts"), list):
        return False
    if not isinstance(entry.get("statuses"), dict):
        return False
    return unchanged(entry)


def _installations() -> set[str]:
    """Where the interpreter's standard library and installed packages are."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return {os.path.abspath(prefix) for prefix in prefixes if prefix}  # noqa: PTH100
