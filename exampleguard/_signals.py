"""Ctrl-C and SIGTERM as one exception that every layer lets through to the exit code.

Click turns a ``KeyboardInterrupt`` into "Aborted!" and exit status 1; the contract says an
interrupted run exits 130, after cleaning up. So while a command runs, SIGINT and SIGTERM raise
:class:`Interrupted` instead: writes remove their temporary files, ``init`` undoes its work,
dry runs kill every sandboxed process, and the CLI exits 130. Only the first interrupt raises:
later ones are absorbed until the run has cleaned up.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Only the dry runs wait on futures; every other command stays clear of the module.
    from concurrent.futures import Future

__all__ = ["Interrupted", "held_interrupts", "interrupts_raise", "wait_for_all"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The run was interrupted by Ctrl-C or SIGTERM."""


def _hold(_signum: int, _frame: object) -> None:
    """Once interrupted, a further Ctrl-C or SIGTERM changes nothing: the cleanup goes on."""


def _raise(signum: int, _frame: object) -> None:
    # The first interrupt ends the run; what follows is cleanup that must finish (every
    # sandboxed process stopped, temporary files removed, the partial report written) before
    # exit 130, so a second Ctrl-C neither cuts it short nor ends in a traceback from threads
    # still being waited for.
    _install(_hold)
    raise Interrupted(signum)


@contextlib.contextmanager
def _finalizers_redeliver() -> Iterator[None]:
    """An interrupt raised inside a finalizer is delivered again once the finalizer is done.

    The collector may run a ``__del__`` at any allocation; Python cannot propagate an exception
    out of one, so it would print "Exception ignored" and the run go on as if never
    interrupted. Re-arming and raising the same signal hands it to the next ordinary frame.
    """
    previous = sys.unraisablehook

    def redeliver(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, Interrupted):
            _install(_raise)
            # Sent a moment later from another thread: a signal sent from here would run the
            # handler inside this hook, where the exception would be dropped again.
            later = threading.Timer(0.01, os.kill, (os.getpid(), unraisable.exc_value.args[0]))
            later.daemon = True
            later.start()
        else:
            previous(unraisable)

    sys.unraisablehook = redeliver
    try:
        yield
    finally:
        sys.unraisablehook = previous


def _install(handler: Any) -> dict[signal.Signals, Any]:
    """Install ``handler`` for SIGINT and SIGTERM; return the previous handlers.

    Only the main thread can install handlers; elsewhere nothing changes.
    """
    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):
        for number in _SIGNALS:
            previous[number] = signal.signal(number, handler)
    return previous


def _restore(previous: dict[signal.Signals, Any]) -> None:
    for number, handler in previous.items():
        signal.signal(number, handler)


@contextlib.contextmanager
def held_interrupts() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM do nothing: for cleanup that must finish once begun."""
    previous = _install(_hold)
    try:
        yield
    finally:
        _restore(previous)


@contextlib.contextmanager
def interrupts_raise(*, hold_after: bool = False) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Interrupted`; the handlers are restored.

    With ``hold_after``, a run that was interrupted ignores them from then on: the process is
    ending, and a Ctrl-C during the interpreter's shutdown would end in a traceback (or, once
    Python has put the default handler back, kill it with a status other than 130). Only the
    main thread can install handlers; elsewhere (a test calling the CLI from another thread)
    nothing changes.
    """
    previous = _install(_raise)
    try:
        if previous:
            with _finalizers_redeliver():
                yield
        else:
            yield
    finally:
        if hold_after and signal.getsignal(signal.SIGINT) is _hold:
            # Ignored at the system level: the interpreter keeps an ignored signal ignored
            # while it shuts down.
            _install(signal.SIG_IGN)
        else:
            _restore(previous)


def wait_for_all(futures: Sequence[Future[Any]]) -> None:
    """Wait until every one of ``futures`` is done; an interrupt ends the wait cleanly.

    ``concurrent.futures.wait`` waits on a condition, which an exception raised by a signal
    handler can leave with its lock released (the run then ends in ``RuntimeError: release
    unlocked lock`` instead of exit 130). A queue's ``get`` gives way in one step.
    """
    done: queue.SimpleQueue[Future[Any]] = queue.SimpleQueue()
    for future in futures:
        # Called at once for a future already done.
        future.add_done_callback(done.put)
    for _ in futures:
        done.get()
