"""Ctrl-C and SIGTERM as one exception that every layer lets through to the exit code.

Click turns a ``KeyboardInterrupt`` into "Aborted!" and exit status 1; the contract says an
interrupted run exits 130, after cleaning up. So while a command runs, SIGINT and SIGTERM raise
:class:`Interrupted` instead: writes remove their temporary files, ``init`` undoes its work,
dry runs kill every sandboxed process, and the CLI exits 130.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

__all__ = ["Interrupted", "interrupts_raise"]


class Interrupted(BaseException):
    """The run was interrupted by Ctrl-C or SIGTERM."""


def _raise(_signum: int, _frame: object) -> None:
    raise Interrupted


@contextlib.contextmanager
def interrupts_raise() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Interrupted`; the handlers are restored.

    Only the main thread can install handlers; elsewhere (a test calling the CLI from another
    thread) nothing changes.
    """
    previous: dict[signal.Signals, Any] = {}
    try:
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, _raise)
    except ValueError:
        pass
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
