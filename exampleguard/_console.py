"""The terminal: exampleguard's two streams, colour, and the progress bar on stderr.

Machine formats go to stdout and nothing else does; messages and progress go to stderr, and
progress only when stderr is a terminal (never into a pipe, a file or a CI log).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exampleguard._dryrun import PlannedRun, RunRecord

__all__ = ["ProgressBar", "on_terminal", "progress", "use_color", "write_stderr", "write_stdout"]


def write_stdout(text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces, as they come) to stdout, whatever it holds."""
    # An example may hold text that is not valid Unicode (a lone surrogate): it is reported,
    # and its report must still be printable.
    sys.stdout.flush()
    for piece in (text,) if isinstance(text, str) else text:
        sys.stdout.buffer.write(piece.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()


def write_stderr(text: str) -> None:
    """Write one message to stderr, as a line."""
    line = text if text.endswith("\n") else text + "\n"
    sys.stderr.flush()
    sys.stderr.buffer.write(line.encode("utf-8", "backslashreplace"))
    sys.stderr.buffer.flush()


def use_color(output: Path | None) -> bool:
    """Whether a report for ``output`` (``None``: stdout) is coloured: a terminal, not NO_COLOR."""
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty() or bool(os.environ.get("FORCE_COLOR"))


def on_terminal() -> bool:
    """Whether progress may be drawn: only on a terminal's stderr, never into a pipe or file."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


class ProgressBar:
    """Progress on a terminal's stderr: examples checked, then dry runs done, of how many.

    Validation shows its bar for a long catalog, or once checking has taken a while (a short
    catalog flashes nothing); the dry runs' bar also shows which runs are running.
    """

    _PATIENCE_S = 0.5
    _LONG_CATALOG = 1000

    def __init__(self) -> None:
        # rich only once a bar is drawn: a run in a pipe or in CI never imports it.
        from rich.console import Console  # noqa: PLC0415
        from rich.progress import (  # noqa: PLC0415
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bar = Progress(
            TextColumn("{task.fields[stage]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=Console(stderr=True),
            transient=True,
        )
        self._lock = threading.Lock()
        self._task: Any = None
        self._first_check: float | None = None
        self._running: dict[str, None] = {}

    def _show(self, stage: str, total: int) -> None:
        if self._task is None:
            self._bar.start()
        else:
            self._bar.remove_task(self._task)
        self._task = self._bar.add_task("", total=total, stage=stage)

    def checked(self, done: int, total: int) -> None:
        """``done`` examples of ``total`` have been checked."""
        now = time.monotonic()
        if self._first_check is None:
            self._first_check = now
        waited = now - self._first_check >= self._PATIENCE_S
        if self._task is None and (waited or total >= self._LONG_CATALOG):
            self._show("checking examples", total)
        if self._task is not None:
            self._bar.update(self._task, completed=done, total=total)

    def planned(self, total: int) -> None:
        """The dry runs start: ``total`` of them."""
        self._show("dry runs", total)

    def started(self, run: PlannedRun) -> None:
        """Name ``run`` among those running."""
        with self._lock:
            self._running[f"{run.tool}[{run.index}]"] = None
            self._bar.update(self._task, description=self._describe())

    def finished(self, record: RunRecord) -> None:
        """Count ``record``'s run as done."""
        with self._lock:
            self._running.pop(record.entry.address, None)
            self._bar.update(self._task, advance=1, description=self._describe())

    def _describe(self) -> str:
        names = list(self._running)
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return f"running {shown}" if names else ""

    def close(self) -> None:
        """Take the bar off the terminal."""
        if self._task is not None:
            self._bar.stop()


@contextlib.contextmanager
def progress(*, enabled: bool = True) -> Iterator[ProgressBar | None]:
    """A progress bar on stderr when it is a terminal; nothing otherwise (pipes, files, CI, -q)."""
    if not enabled or not on_terminal():
        yield None
        return
    bar = ProgressBar()
    try:
        yield bar
    finally:
        bar.close()
