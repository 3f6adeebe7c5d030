"""``exampleguard validate``, and the evaluation every command that checks examples shares."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from exampleguard._config import Config
from exampleguard._diagnostics import Diagnostic
from exampleguard._inputs import InputError, load_inputs

if TYPE_CHECKING:
    from exampleguard._pipeline import Evaluation
    from exampleguard._report import Report

__all__ = ["SourceFiles", "ValidateOutcome", "run_evaluation", "shard_of", "validate"]

MAX_FRAMED_BYTES = 16 * 1024 * 1024
"""Files larger than this get no code frame (their diagnostics keep their location line)."""


@dataclass(slots=True)
class ValidateOutcome:
    """A validation run: its report, or the reasons it could not be evaluated."""

    report: Report | None = None
    evaluation: Evaluation | None = None
    unusable: list[Diagnostic] = field(default_factory=list)


def shard_of(tool_id: str, total: int) -> int:
    """The 1-based shard a tool belongs to: stable across runs, machines and Python versions."""
    digest = hashlib.sha256(tool_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def run_evaluation(
    config: Config,
    *,
    shard: tuple[int, int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Evaluation | None, list[Diagnostic]]:
    """Load and evaluate; return the evaluation or the structure errors that prevent it.

    ``progress`` is told how many examples of how many have been checked, as it goes.
    """
    try:
        inputs = load_inputs(config, with_counts=shard is None)
        from exampleguard._pipeline import run  # noqa: PLC0415

        if shard is None:
            return run(inputs, progress=progress), []
        index, total = shard
        evaluation = run(
            inputs,
            check_counts=False,
            select=lambda tool: shard_of(tool.id, total) == index,
            repository_checks=index == 1,
            progress=progress,
        )
    except InputError as error:
        return None, error.diagnostics
    return evaluation, []


def validate(
    config: Config,
    *,
    shard: tuple[int, int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ValidateOutcome:
    """``exampleguard validate``; ``progress`` as for :func:`run_evaluation`."""
    evaluation, unusable = run_evaluation(config, shard=shard, progress=progress)
    if evaluation is None:
        return ValidateOutcome(unusable=unusable)
    from exampleguard._report import build_report  # noqa: PLC0415 - see run_evaluation

    return ValidateOutcome(build_report(evaluation, shard=shard), evaluation)


class SourceFiles:
    """The text of the files diagnostics name, for the code frames of the ``full`` text form.

    A diagnostic names a file the way people see it: relative to the current directory or to
    the configuration's folder, or absolute. Each file is read once, when a frame first needs
    it; one that cannot be read as UTF-8 text (or is very large) simply gets no frame.
    """

    def __init__(self, *folders: Path) -> None:
        self._folders = folders
        self._lines: dict[str, list[str] | None] = {}

    def __call__(self, name: str) -> list[str] | None:
        """The lines of the file shown as ``name``, or ``None``."""
        if name not in self._lines:
            text = self._read(name)
            self._lines[name] = text.split("\n") if text is not None else None
        return self._lines[name]

    def _read(self, name: str) -> str | None:
        relative = Path(name)
        candidates = [relative] if relative.is_absolute() else [f / relative for f in self._folders]
        for candidate in candidates:
            try:
                if not candidate.is_file() or candidate.stat().st_size > MAX_FRAMED_BYTES:
                    continue
                return candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
        return None
