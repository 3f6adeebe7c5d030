"""The code blocks of Markdown files, kept between runs while neither file nor parser changed.

Parsing a README with markdown-it-py (and importing it) costs a small ``validate`` run about as
much as checking every example. What a parse yields for the examples is the list of code
blocks (fenced and indented: kind, info string, content, first line); that list is kept in
the user's cache directory, one entry per Markdown file, and used only when the file's text and
the parser are the ones it came from:

- the text: its SHA-256 is in the entry;
- the parser: the entry names markdown-it-py's files (the name, size and modification time of
  each module of the package, found without importing it) and this cache's format, which
  changes with exampleguard's version.

An entry that cannot be read, or does not match, is ignored and written again after a parse.
The examples are built from the blocks by the same code either way, so a run's output does not
depend on the cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from exampleguard import __version__
from exampleguard.files import read_regular, write_atomically

__all__ = ["Block", "BlockCache"]

Block = tuple[str, str, str, int]
"""A code block: ``fence`` or ``code_block``, the info string, the content, its first line
(0-based, markdown-it's ``map[0]``)."""

_FORMAT = f"exampleguard.markdown-blocks/v1+{__version__}"


class BlockCache:
    """Entries of Markdown files' code blocks in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path | None = None) -> None:
        if directory is None:
            from exampleguard.fingerprint import cache_directory  # noqa: PLC0415 - tiny

            directory = cache_directory()
        self.directory = directory / "markdown"
        self._parser: str | None = None

    def lookup(self, path: Path, text: str) -> list[Block] | None:
        """The blocks of ``path`` when its cached entry is for ``text`` and this parser."""
        try:
            entry = json.loads(read_regular(self._entry(path)))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != self._key(text):
            return None
        blocks = entry.get("blocks")
        if not isinstance(blocks, list) or not all(_is_block(block) for block in blocks):
            return None
        return [(kind, info, content, first) for kind, info, content, first in blocks]

    def store(self, path: Path, text: str, blocks: list[Block]) -> None:
        """Keep ``blocks`` as the parse of ``text`` (nothing is kept where the cache cannot be)."""
        entry = {"key": self._key(text), "blocks": [list(block) for block in blocks]}
        try:
            write_atomically(
                self._entry(path), json.dumps(entry, ensure_ascii=False), durable=False
            )
        except (OSError, ValueError):
            return

    def _entry(self, path: Path) -> Path:
        name = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogateescape"))
        return self.directory / f"{name.hexdigest()[:32]}.json"

    def _key(self, text: str) -> list[str]:
        if self._parser is None:
            self._parser = _parser_identity()
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return [_FORMAT, self._parser, digest]


def _parser_identity() -> str:
    """markdown-it-py's modules, by name, size and modification time, found without an import."""
    spec = importlib.util.find_spec("markdown_it")
    if spec is None or not spec.submodule_search_locations:
        return "absent"
    stats: list[str] = []
    # os.walk and plain strings: a tenth of the cost of pathlib's rglob, on every run.
    for location in spec.submodule_search_locations:
        for folder, directories, files in os.walk(location):
            directories[:] = sorted(d for d in directories if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    module = os.path.join(folder, name)  # noqa: PTH118
                    try:
                        found = os.stat(module)  # noqa: PTH116
                    except OSError:
                        continue
                    stats.append(f"{module}\0{found.st_size}\0{found.st_mtime_ns}")
    return hashlib.sha256("\n".join(stats).encode("utf-8", "surrogateescape")).hexdigest()


def _is_block(block: Any) -> bool:
    return (
        isinstance(block, list)
        and len(block) == 4
        and block[0] in ("fence", "code_block")
        and isinstance(block[1], str)
        and isinstance(block[2], str)
        and type(block[3]) is int
        and block[3] >= 0
    )
