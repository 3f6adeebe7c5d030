"""Checking a large catalog on every core, with the output of a serial run.

The tools are split into contiguous runs of about equal numbers of examples; this process
checks the first, and a forked copy of it checks each of the others (a fork shares the loaded
inputs and the contract: nothing is sent to it). A child sends back only what the check
produced for each example, in order; this process puts the pieces together in the tools'
order, so results, diagnostics and reports are exactly those of a serial run. A child that
fails in any way is not trusted: its tools are checked here, serially.

Forking is used only where it is safe and pays: on Linux, from a process running a single
thread, for catalogs of at least :data:`THRESHOLD` examples (below that, the fork and the
transfer cost more than the second core saves), one worker per core that is idle at that moment
(:func:`idle_cores`), unless a number of jobs is asked for.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "THRESHOLD",
    "available_cores",
    "can_fork",
    "idle_cores",
    "runnable_now",
    "split_work",
]

THRESHOLD = 5000
"""Examples from which a catalog is checked on every core.

Measured with 1k-10k generated examples: a second process is no faster up to 4000 examples
and 20% faster at 10,000 (on a two-core machine with some load).
"""

Item = TypeVar("Item")
Result = TypeVar("Result")


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def idle_cores(runnable: Callable[[], int | None] | None = None) -> int:
    """The cores not busy with other work right now (at least 1, counting this process's own).

    A worker on a core that is not free only competes with its parent: on a loaded machine a
    second process makes a check slower, not faster. What is busy is judged by the processes
    ready to run at this moment (:func:`runnable_now`), not by a load average: the one-minute
    average still counts, for a minute, whatever has just finished (the commands a script ran
    before this one, a build that ended), and misses what has just started. A moment's count
    can catch a process that runs for a millisecond; one taken again a little later cannot
    catch it twice, so the smallest of a few counts is taken.

    The count is the whole machine's; with fewer cores than the machine has (an affinity mask,
    a container's cpuset) the other processes are taken to be spread over all of them, so only
    this process's share of them competes with it. Without the count (not Linux), the load
    average stands in for it.
    """
    cores = available_cores()
    if cores < 2:
        return 1
    read = runnable or runnable_now
    others: float | None = None
    for attempt in range(_COUNTS):
        count = read()
        if count is None:
            break
        # The count includes this process, which is running as it reads it.
        others = count - 1 if others is None else min(others, count - 1)
        if others <= 0:
            break
        if attempt < _COUNTS - 1:
            time.sleep(_COUNT_INTERVAL)
    if others is None:
        try:
            others = os.getloadavg()[0]
        except (AttributeError, OSError):
            return cores
    machine = max(cores, os.cpu_count() or cores)
    busy = others * cores / machine
    return max(1, min(cores, int(cores - busy + 0.5)))


_COUNTS = 3
"""How many counts of the runnable processes :func:`idle_cores` takes at most."""

_COUNT_INTERVAL = 0.002
"""Seconds between two counts: long enough for a process that ran for a moment to be gone."""


def runnable_now() -> int | None:
    """How many processes (threads) of the machine are running or ready to run, this one too.

    The fourth field of ``/proc/loadavg`` (``RUNNING/TOTAL``), which the kernel counts when it
    is read; ``None`` where it cannot be read.
    """
    try:
        return int(Path("/proc/loadavg").read_bytes().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def can_fork() -> bool:
    """Whether forking this process is safe: Linux, and no thread but this one.

    The threads are counted by the kernel, as the interpreter counts them when it warns of a
    fork: a thread that Python did not start (a library's) counts too.
    """
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return False
    try:
        return sum(1 for _ in Path("/proc/self/task").iterdir()) == 1
    except OSError:
        return False


def split_work(
    items: Sequence[Item],
    weights: Sequence[int],
    jobs: int,
    *,
    run: Callable[[Sequence[Item]], list[Result]],
    pack: Callable[[list[Result]], Any],
    unpack: Callable[[Sequence[Item], Any], list[Result]],
) -> list[Result]:
    """``run(items)``, computed in up to ``jobs`` processes, in the order of ``items``.

    ``weights`` says how much work each item is (its examples); ``pack`` turns a child's
    results into picklable data, ``unpack`` turns that data back into results for its items.
    """
    chunks = _chunks(items, weights, jobs)
    if len(chunks) < 2 or not can_fork():
        return run(items)
    children = [_start(chunk, run, pack) for chunk in chunks[1:]]
    try:
        results = run(chunks[0])
    except BaseException:
        for child in children:
            _stop(child)
        raise
    for chunk, child in zip(chunks[1:], children, strict=True):
        payload = _finish(child)
        results.extend(run(chunk) if payload is None else unpack(chunk, payload))
    return results


def _chunks(items: Sequence[Item], weights: Sequence[int], jobs: int) -> list[Sequence[Item]]:
    """``items`` cut into at most ``jobs`` contiguous runs of about equal weight."""
    total = sum(weights)
    if jobs < 2 or total == 0:
        return [items]
    chunks: list[Sequence[Item]] = []
    start, carried = 0, 0
    for index, weight in enumerate(weights):
        carried += weight
        if carried * jobs >= total * (len(chunks) + 1) and len(chunks) < jobs - 1:
            chunks.append(items[start : index + 1])
            start = index + 1
    chunks.append(items[start:])
    return [chunk for chunk in chunks if len(chunk)]


def _start(
    chunk: Sequence[Item],
    run: Callable[[Sequence[Item]], list[Result]],
    pack: Callable[[list[Result]], Any],
) -> tuple[int, int]:
    """Fork a child that checks ``chunk`` and writes the packed results to a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        status = 1
        try:
            # Written as it is pickled, and read as it is unpickled: the transfer never holds a
            # second copy of the results as bytes.
            with os.fdopen(write_end, "wb") as stream:
                pickle.dump(pack(run(chunk)), stream, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            # The copy must not run the rest of this process's program, nor its exit handlers.
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _finish(child: tuple[int, int]) -> Any:
    """The child's packed results, or ``None`` if it did not finish cleanly."""
    pid, read_end = child
    with os.fdopen(read_end, "rb") as stream:
        try:
            payload = pickle.load(stream)
        except Exception:
            # Cut short or garbled: the child failed, and its exit status says so below.
            payload = None
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    return payload


def _stop(child: tuple[int, int]) -> None:
    pid, read_end = child
    with contextlib.suppress(OSError):
        os.kill(pid, 9)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        os.close(read_end)
