"""Live runs of this process, so that an interrupt can kill every sandboxed process at once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

__all__ = ["DEFAULT_REGISTRY", "LiveRun", "ProcessRegistry", "kill_all", "wait_gone"]


class LiveRun:
    """One started backend process and its tree, killable from any thread.

    Every backend process is started in a new process group (of a new session, but for
    bubblewrap, which keeps the run apart itself), so that group holds the backend and whatever
    did not leave it. Killing the group is safe against pid reuse because
    its leader is our unreaped child until :meth:`reap`.

    ``namespace_init`` is the host pid of the PID namespace's init; its end proves the whole
    tree's end. bubblewrap reports it at start (``kill_init``): its init arms its parent-death
    signal only late in its setup, so killing bubblewrap alone in that window would orphan the
    sandbox, and the init is killed directly. util-linux unshare's init is its only child,
    looked up when the run is killed (``find_init``); it is in the killed process group.
    """

    def __init__(
        self, proc: subprocess.Popen[bytes], *, namespace_init: int | None, find_init: bool
    ) -> None:
        self.proc = proc
        self.namespace_init = namespace_init
        self._kill_init = namespace_init is not None
        self._find_init = find_init
        self.owner = threading.get_ident()
        self.interrupted = threading.Event()
        self.finished = threading.Event()
        self.killed = False
        self._lock = threading.Lock()
        self._reaped = False

    def kill(self, *, interrupt: bool = False) -> None:
        """SIGKILL the run's tree (idempotent; a no-op once reaped)."""
        if interrupt:
            self.interrupted.set()
        with self._lock:
            if self._reaped:
                return
            if self._find_init and self.namespace_init is None:
                self.namespace_init = _only_child(self.proc.pid)
            if self._kill_init and self.namespace_init is not None and not self.killed:
                # The init is pid 1 of the run's PID namespace: the kernel kills the rest.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.namespace_init, signal.SIGKILL)
            self.killed = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def reap(self) -> int:
        """Wait for the backend process (after it exited or was killed) and return its status."""
        with self._lock:
            self._reaped = True
        return self.proc.wait()


def _only_child(pid: int) -> int | None:
    """Return the single child of ``pid`` (unshare's forked namespace init), if there is one."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii").split()
    except OSError:
        return None
    return int(children[0]) if len(children) == 1 else None


def process_gone(pid: int) -> bool:
    """Tell whether ``pid`` has exited (gone, or a zombie whose tree the kernel tore down)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    # The state follows the parenthesised command name, which may itself contain ") ".
    return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] in (b"Z", b"X")


def wait_gone(pid: int, timeout_s: float) -> bool:
    """Poll until ``pid`` is gone; False if it is still there after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not process_gone(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)
    return True


class ProcessRegistry:
    """The live runs of this process; :meth:`kill_all` ends every one of them.

    ``run`` registers each run it starts here (the module-wide default unless given another)
    and unregisters it once its tree is dead; the run's thread then removes its work dir.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[LiveRun] = set()

    def add(self, live: LiveRun) -> None:
        """Register a started run."""
        with self._lock:
            self._live.add(live)

    def discard(self, live: LiveRun) -> None:
        """Unregister a finished run."""
        with self._lock:
            self._live.discard(live)

    def live_count(self) -> int:
        """Count the runs live now."""
        with self._lock:
            return len(self._live)

    def kill_all(self, *, timeout_s: float = 10.0) -> int:
        """SIGKILL every live run and wait until each tree is dead; return how many there were.

        Each interrupted run returns ``crashed`` with detail ``interrupted``. Safe to call from a
        signal handler: a run owned by the calling thread (interrupted by that very handler) is
        killed but not waited for, since it can only finish once the handler returns. Runs
        starting concurrently are not covered; pass them a ``cancel`` event and set it first.
        """
        with self._lock:
            live = list(self._live)
        for run in live:
            run.kill(interrupt=True)
        deadline = time.monotonic() + timeout_s
        me = threading.get_ident()
        for run in live:
            if run.owner != me:
                run.finished.wait(max(0.0, deadline - time.monotonic()))
        return len(live)


DEFAULT_REGISTRY = ProcessRegistry()


def kill_all(*, timeout_s: float = 10.0) -> int:
    """Kill every live run of the default registry (see :meth:`ProcessRegistry.kill_all`)."""
    return DEFAULT_REGISTRY.kill_all(timeout_s=timeout_s)
