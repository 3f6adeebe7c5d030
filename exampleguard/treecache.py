"""A cache of live trees: an import is not repeated while nothing it read has changed.

Importing an application and judging every example with its own parser is most of what
``validate`` costs on a small catalog. The result (the tree snapshot and the verdicts) is kept
in the user's cache directory, one entry per project and tree setting, and reused only when
everything it came from is unchanged:

- the interpreter (its path and version), ``PYTHONPATH``, exampleguard's version, the tree
  setting and the project directory (the entry's name is their digest), and the program name;
- the questions asked (every example's words and every declared command path);
- the content of every file the import read — every module's source, extension modules, data
  files it opened — and the names in every directory it listed: the import system lists each
  directory of the import path, so a new module that would shadow another, or a distribution
  installed, removed or upgraded (its ``.dist-info`` directory is named by its version), shows
  as a listing that changed.

What the import reads comes from the child itself (:mod:`exampleguard.adapters._inputs`); this
module keeps its fingerprint (:mod:`exampleguard.fingerprint`: digests, with the statuses that
spare hashing an unchanged file again). An entry is written atomically, only when no input
changed while the child ran, and an entry that cannot be read or does not match is ignored:
the tree is imported again. Environment variables are not part of the key: an application whose
commands depend on them is run with ``--no-cache``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from exampleguard.files import read_regular, write_atomically
from exampleguard.fingerprint import (
    SETTLE_SECONDS,
    cache_directory,
    changed_since,
    digest_json,
    fingerprint,
    interpreted,
    note_inputs,
    note_unknown_inputs,
    unchanged,
)

__all__ = ["CACHE_FORMAT", "TreeCache", "cache_directory", "tree_identity"]

CACHE_FORMAT = "exampleguard.tree-cache/v1"


def tree_identity(
    tree: str, root: Path, isolation: str, program: str | None = None
) -> dict[str, Any]:
    """What names a cached tree besides the interpreter: its setting, project and program.

    The entry's file is named without the program (:meth:`TreeCache.inputs_unchanged` asks
    before it is known); the program is checked within the entry.
    """
    return {"tree": tree, "root": str(root), "program": program, "isolation": isolation}


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
        # One verdict per asked argv, then (when help examples were asked for) one per example
        # of the application's own help text, which only the import can count.
        if len(verdicts) < len(request.get("argvs", ())) or not all(
            isinstance(verdict, dict) for verdict in verdicts
        ):
            return None
        # A run cached whole depends on what the import read, which this entry stands for.
        statuses = entry.get("statuses")
        kept_by_status = list(statuses) if isinstance(statuses, dict) else []
        note_inputs([*entry["files"], *kept_by_status], entry["directories"])
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
        if changed_since(files + directories, started - SETTLE_SECONDS):
            return
        # The interpreter's own files (the standard library, installed packages) are replaced
        # rather than edited: kept by their status, as the run cache keeps modules.
        installed = tuple(f"{prefix}{os.sep}" for prefix in _installations())
        libraries = [path for path in files if path.startswith(installed)]
        own = [path for path in files if not path.startswith(installed)]
        entry = {
            "format": CACHE_FORMAT,
            "identity": interpreted(identity),
            "request": digest_json(request),
            **fingerprint(own, directories, by_status=libraries),
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
        if inputs is None:
            note_unknown_inputs()
        else:
            note_inputs(_paths(inputs.get("files")), _paths(inputs.get("directories")))
            self.store(identity, request, (text, verdicts), inputs, started)
        return text, verdicts

    def inputs_unchanged(self, tree: str, root: Path) -> bool:
        """Whether the entry of this tree setting and project has every input unchanged.

        Whatever its program and questions: asked before they are known, to tell whether the
        tree must certainly be imported again (:func:`exampleguard.treechild.start_ahead`).
        """
        identity = tree_identity(tree, root, "auto")
        try:
            entry = json.loads(read_regular(self._entry_path(identity)))
        except (OSError, ValueError):
            return False
        return isinstance(entry, dict) and entry.get("format") == CACHE_FORMAT and unchanged(entry)

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
    return unchanged(entry)


def _installations() -> set[str]:
    """Where the interpreter's standard library and installed packages are."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return {os.path.abspath(prefix) for prefix in prefixes if prefix}  # noqa: PTH100


def _paths(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [path for path in value if isinstance(path, str)]
