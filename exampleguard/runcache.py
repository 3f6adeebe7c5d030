"""A cache of whole ``validate`` runs: a run whose every input is unchanged is answered from it.

Like ruff's cache, it spares the work and never the verdict. An entry holds what a run wrote
(in one format, for one view: colour, ``--quiet``, ``--statistics``) and its verdict, with the
fingerprint (:mod:`exampleguard.fingerprint`) of everything the run read, recorded as it read
it: the configuration, the catalog, a tree snapshot or every file a live tree's import read,
the reviewer records, the counts, the documents whose examples were checked and every directory
listed to find them, the files a code frame quotes, and every module the run had imported —
exampleguard's own, pydantic's, the standard library's. A later run with the same identity (the
working directory, the configuration file, the shard, the view, the interpreter, ``PYTHONPATH``
and exampleguard's version) whose inputs all still match writes the same output and exits the
same way, without importing the models, the tree or the binder.

Nothing is stored for a run that could not be evaluated (exit 2), that was interrupted, whose
output is very large, that depends on something it cannot name (a live tree read without the
tree cache), or during which an input changed. An entry that cannot be read or does not match
is ignored. Environment variables are not part of the key, as for the tree cache: an
application whose commands depend on them is checked with ``--no-cache``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exampleguard.files import read_regular, write_atomically
from exampleguard.fingerprint import (
    SETTLE_SECONDS,
    Recording,
    cache_directory,
    changed_since,
    digest_json,
    fingerprint,
    interpreted,
    listing_digest,
    unchanged,
)
from exampleguard.locate import config_source, repository_root

__all__ = ["CACHE_FORMAT", "MAX_OUTPUT_CHARS", "CachedRun", "RunCache", "run_identity"]

CACHE_FORMAT = "exampleguard.run-cache/v1"
MAX_OUTPUT_CHARS = 8 << 20
"""A run that writes more than this is not stored: checking it again costs little beside it."""


@dataclass(frozen=True, slots=True)
class CachedRun:
    """What a run wrote, its verdict, and the files its output may never replace."""

    output: str
    ok: bool
    guarded: tuple[tuple[str, str], ...] = ()
    """Each file the run read as an input that ``--output`` must not name, with its role."""


def run_identity(
    cwd: Path, explicit: Path | None, *, shard: tuple[int, int] | None, view: dict[str, Any]
) -> dict[str, Any] | None:
    """What names a run besides its inputs; ``None`` when no configuration file is found.

    ``explicit`` is ``--config``; otherwise the configuration is searched for as the run would
    search for it, so a configuration file added nearer the working directory is another run.
    """
    source = config_source(explicit, cwd)
    if source is None:
        return None
    identity = {
        "cwd": str(cwd),
        "config": str(source.resolve()),
        "shard": list(shard) if shard is not None else None,
        "view": view,
    }
    if view.get("format") == "sarif":
        # SARIF names files from the repository root, which a `.git` added above may move.
        identity["repository"] = str(repository_root(cwd))
    return identity


class RunCache:
    """Entries of whole runs in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.root = directory or cache_directory()
        self.directory = self.root / "runs"

    def recording(self) -> Recording:
        """A recording of a run's inputs, leaving out exampleguard's own cache entries."""
        return Recording(ignored=[self.root])

    def lookup(self, identity: dict[str, Any]) -> CachedRun | None:
        """The stored run of this identity, if every input it read is unchanged."""
        full = interpreted(identity)
        try:
            entry = json.loads(read_regular(self._entry_path(full)))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
            return None
        output, ok, guarded = entry.get("output"), entry.get("ok"), entry.get("guarded")
        if entry.get("identity") != full or not isinstance(output, str):
            return None
        if not isinstance(ok, bool) or not isinstance(guarded, list) or not _pairs(guarded):
            return None
        if not unchanged(entry):
            return None
        return CachedRun(output, ok, tuple((path, role) for path, role in guarded))

    def store(self, identity: dict[str, Any], run: CachedRun, recording: Recording) -> None:
        """Keep ``run`` for ``identity`` with the fingerprint of what ``recording`` noted.

        The recording stops here. Nothing is stored when an input cannot be named or changed
        while the run went on, when the output is too large, or when the cache directory
        cannot be written (a cache is optional).
        """
        recording.stop()
        if not recording.complete or len(run.output) > MAX_OUTPUT_CHARS:
            return
        files, others, directories = recording.inputs()
        # Directories this process listed are compared by their listings below; those listed
        # elsewhere (by the tree's child) only by their times.
        elsewhere = [path for path in directories if path not in recording.listed_as]
        if changed_since(files + others + elsewhere, recording.started - SETTLE_SECONDS):
            return
        # Each listing is taken once, for both uses below.
        listings = {path: listing_digest(path) for path in directories}
        if recording.changed_while_read(listings):
            # Rewritten as the run went on with its times put back (cp -p, rsync -t): the
            # output may be of the old content, the digests would be of the new.
            return
        full = interpreted(identity)
        entry = {
            "format": CACHE_FORMAT,
            "identity": full,
            **fingerprint(files, directories, by_status=others, listings=listings),
            "ok": run.ok,
            "guarded": [list(pair) for pair in run.guarded],
            "output": run.output,
        }
        try:
            write_atomically(
                self._entry_path(full), json.dumps(entry, ensure_ascii=False), durable=False
            )
        except (OSError, ValueError):
            return

    def _entry_path(self, full: dict[str, Any]) -> Path:
        return self.directory / f"{digest_json(full)[:32]}.json"


def _pairs(value: list[Any]) -> bool:
    return all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        for pair in value
    )
