"""Waiting for work in other threads: every piece is waited for, and Ctrl-C ends the wait."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from exampleguard._signals import Interrupted, interrupts_raise, wait_for_all


def test_every_future_is_waited_for_done_before_or_after_the_wait() -> None:
    release = threading.Event()
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = pool.submit(lambda: 1)
        done.result()
        later = pool.submit(lambda: release.wait(5))
        threading.Timer(0.1, release.set).start()
        wait_for_all([done, later])
        assert later.done()
        assert later.result() is True


def test_ctrl_c_ends_the_wait_with_interrupted() -> None:
    release = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocked = pool.submit(lambda: release.wait(10))
        timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
        try:
            with interrupts_raise():
                timer.start()
                with pytest.raises(Interrupted):
                    wait_for_all([blocked])
            assert not blocked.done()
        finally:
            timer.cancel()
            release.set()


class _InterruptedWhileCollected:
    """An object whose finalizer is running when SIGTERM arrives."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        # The handler runs at the next bytecode boundary: inside this finalizer.
        sum(range(1000))


def test_an_interrupt_that_lands_in_a_finalizer_still_ends_the_run(
    capfd: pytest.CaptureFixture[str],
) -> None:
    started = time.monotonic()

    def collect_then_wait() -> None:
        _InterruptedWhileCollected()
        time.sleep(5)

    with interrupts_raise(), pytest.raises(Interrupted):
        collect_then_wait()
    assert time.monotonic() - started < 4
    assert "Exception ignored" not in capfd.readouterr().err
