"""What an import read, noted inside the child so a cached tree can tell when it is stale.

An audit hook (PEP 578), installed before the application is imported, notes every file opened
for reading and every directory listed (the import system lists each directory of the import
path to find modules, so a module added where it would shadow another shows as a listing that
changed). At the end, every module's file is added, extension modules and modules imported
before the hook included. Only the paths travel back; the parent hashes them
(:mod:`exampleguard.treecache`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["InputRecorder"]

# Kernel interfaces and devices are not inputs a cache could compare.
_IGNORED_PREFIXES = ("/dev/", "/proc/", "/sys/")


class InputRecorder:
    """Notes the files and directories read from now on (see the module docstring)."""

    def __init__(self, scratch: Sequence[str]) -> None:
        self.files: set[str] = set()
        self.directories: set[str] = set()
        # The child's own home and temporary directory are new in every run.
        self._ignored = tuple(os.path.realpath(p) + os.sep for p in scratch if p)

    def install(self) -> None:
        """Start noting (an audit hook cannot be removed: it stays until the child exits)."""
        sys.addaudithook(self._hook)

    def _hook(self, event: str, arguments: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode = [*arguments, None][:2]
            if isinstance(mode, str) and any(c in mode for c in "wax+"):
                return
            self._note(self.files, path)
        elif event in ("os.listdir", "os.scandir"):
            self._note(self.directories, arguments[0] if arguments else None)

    def _note(self, into: set[str], path: Any) -> None:
        if path is None or isinstance(path, int):
            return
        try:
            # Plain string work: the hook runs on every event, and must not follow links.
            text = os.path.abspath(os.fsdecode(path))  # noqa: PTH100
        except (TypeError, ValueError):
            return
        into.add(text)

    def report(self) -> dict[str, list[str]]:
        """The noted paths, every loaded module's file added, as JSON data."""
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str):
                self.files.add(os.path.abspath(path))  # noqa: PTH100 - as noted
        return {
            "files": sorted(p for p in self.files if self._kept(p)),
            "directories": sorted(p for p in self.directories if self._kept(p)),
        }

    def _kept(self, path: str) -> bool:
        # Bytecode is derived from the sources, which are noted themselves.
        if f"{os.sep}__pycache__{os.sep}" in path or path.startswith(_IGNORED_PREFIXES):
            return False
        real = os.path.realpath(path) + os.sep
        return not any(real.startswith(root) for root in self._ignored)
