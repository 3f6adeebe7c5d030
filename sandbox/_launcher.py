"""Launchers started ahead of runs, each already in the memory cgroup its run will have.

A process that joins a cgroup waits out an RCU grace period of the kernel's (about 10 ms on a
version 1 hierarchy, where nothing else is migrating at the moment): every run that joined its
cgroup paid it, five times what the rest of the sandbox costs a run. A process *born* in a
cgroup pays nothing, so the cgroup is joined ahead of the run, by a launcher: the compiled
stage in its ``launch`` mode (see ``_stage.c``), started in a fresh cgroup while an earlier run
goes on. When a run starts, a ready launcher is handed its limit, its bubblewrap command line
and descriptors, and execs bubblewrap in place of itself: bubblewrap, the stage and the whole
run are born in the cgroup, and the launcher's process is the caller's child as bubblewrap's
would be.

Launchers die with the thread that started them (their parent-death signal, which bubblewrap's
``--die-with-parent`` keeps), so one thread starts them all and lives as long as any of them
waits or runs. A run that takes the last ready one has more started; one that lets go of its
launcher has it replaced. :func:`close_launchers` ends the ones waiting, and so does a while
with no run taking one (a cgroup left by a killed caller is removed at the next start, like
any run's).
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox._limits import RunCgroup

__all__ = ["LAUNCHERS", "Launcher", "LauncherPool", "close_launchers"]

_READY_S = 5.0
"""How long a launcher may take to join its cgroup and say it is ready."""
_TAKE_WAIT_S = 2.0
"""How long a run waits for a launcher being started before it joins a cgroup itself."""
_IDLE_S = 5.0
"""How long ready launchers wait with no run taking one before they are let go of."""
_DEPTH = 3
"""Launchers kept ready or starting per cgroup base: runs shorter than a grace period, one
after the other, find one ready (several started together share one grace period)."""
_HEADER = struct.Struct("=II")
"""The launch's header: the payload's length and the number of descriptors it carries."""


class Launcher:
    """One launcher: its process, the caller's end of its socket, and the cgroup it is in."""

    def __init__(
        self, process: subprocess.Popen[bytes], channel: socket.socket, cgroup: RunCgroup
    ) -> None:
        self.process = process
        self.channel = channel
        self.cgroup = cgroup
        self.taken = False
        """Whether a run took it from the pool (then its release ends that run's use of it)."""
        self.key: _Key | None = None
        """What it was started for."""
        self._started = False
        self._released = False

    def alive(self) -> bool:
        """Whether the launcher is still waiting for its launch."""
        return not self._started and self.process.poll() is None

    def start(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path, fds: Sequence[int]
    ) -> subprocess.Popen[bytes]:
        """Have the launcher exec ``argv`` with ``env`` in ``cwd``, holding ``fds`` as numbered.

        Returns the launcher's process, which is then that program's. OSError when the launch
        cannot be handed over (the launcher is gone).
        """
        words = [str(cwd), str(len(argv)), *argv, str(len(env))]
        words += [f"{key}={value}" for key, value in env.items()]
        words += [str(fd) for fd in fds]
        payload = b"".join(os.fsencode(word) + b"\0" for word in words)
        header = _HEADER.pack(len(payload), len(fds))
        socket.send_fds(self.channel, [header], list(fds))
        self.channel.sendall(payload)
        # Handed over: from here the process is the run's, reaped by its supervision.
        self._started = True
        self.channel.close()
        return self.process

    def release(self) -> None:
        """End the launcher if it never launched; its cgroup is removed in the background.

        A launched one's process is the run's, reaped by the run's supervision before this.
        A second call does nothing.
        """
        if self._released:
            return
        self._released = True
        with contextlib.suppress(OSError):
            self.channel.close()
        if not self._started:
            with contextlib.suppress(OSError):
                self.process.kill()
            self.process.wait()
            for stream in (self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()
        LAUNCHERS.dispose(self.cgroup, taken=self.key if self.taken else None)


_Key = tuple[Path, int, int]
"""What a launcher is ready for: the cgroup base, the stage binary's descriptor, the limit."""


class LauncherPool:
    """Ready launchers per key, and the one thread that starts them and removes used cgroups.

    The thread ends when nothing it started waits, starts or runs: after :meth:`close`, or
    once its launchers have waited :data:`_IDLE_S` with no run taking one (a process with a
    thread besides its main one is never forked, and a library's caller may never close).
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._ready: dict[_Key, list[Launcher]] = {}
        self._wanted: list[tuple[_Key, Mapping[str, str]]] = []
        self._starting: dict[_Key, int] = {}
        """Launchers asked for or being started, per key."""
        self._used: list[RunCgroup] = []
        self._live = 0
        """Launchers that runs took and have not let go of: their bubblewrap may still run."""
        self._envs: dict[_Key, Mapping[str, str]] = {}
        """Each key's launcher environment, for the launchers started to replace one; none
        while closing, so that nothing is started to replace what is being ended."""
        self._last_take = time.monotonic()
        self._thread: threading.Thread | None = None

    def take(
        self, base: Path, stage_fd: int, memory_bytes: int, env: Mapping[str, str]
    ) -> Launcher | None:
        """A ready launcher in a fresh cgroup under ``base`` limited to ``memory_bytes``.

        ``None`` if none comes in time, or none can be started. The next runs' are started
        now. ``env`` is the launcher's (and bubblewrap's) environment, fixed by the caller.
        """
        key = (base, stage_fd, memory_bytes)
        deadline = time.monotonic() + _TAKE_WAIT_S
        with self._lock:
            self._last_take = time.monotonic()
            self._envs[key] = env
            launcher = self._pop(key)
            if launcher is None:
                # None ready (the session's first run): this run's, and the next runs'. Else
                # the one taken is replaced once its run is over (dispose), not while it runs.
                self._fill(key, extra=1)
            while launcher is None:
                remaining = deadline - time.monotonic()
                # None starting any more (the host refused them): no use waiting.
                if remaining <= 0 or not self._starting.get(key):
                    return None
                self._lock.wait(remaining)
                launcher = self._pop(key)
            launcher.taken = True
            self._live += 1
            return launcher

    def dispose(self, cgroup: RunCgroup, *, taken: _Key | None = None) -> None:
        """Remove ``cgroup`` in the background, its run being over (not on the run's time).

        ``taken``: the key of a launcher a run took, which is replaced now.
        """
        with self._lock:
            self._used.append(cgroup)
            if taken is not None:
                self._live -= 1
                self._fill(taken)
            self._wake()

    def _fill(self, key: _Key, *, extra: int = 0) -> None:
        """Ask for launchers of ``key`` up to the depth, and ``extra`` more (the lock held)."""
        env = self._envs.get(key)
        if env is None:
            return
        ahead = len(self._ready.get(key, ())) + self._starting.get(key, 0)
        missing = _DEPTH - ahead + extra
        if missing > 0:
            self._wanted += [(key, env)] * missing
            self._starting[key] = self._starting.get(key, 0) + missing
            self._wake()

    def close(self) -> None:
        """End every launcher waiting or starting, and remove every cgroup used, now.

        Nothing is started to replace them; launchers still starting are waited for and
        ended. With no run going on, the thread ends too.
        """
        with self._lock:
            self._envs.clear()
            for key, _ in self._wanted:
                self._starting[key] -= 1
            self._wanted.clear()
            deadline = time.monotonic() + _READY_S * 2
            while any(self._starting.values()) and time.monotonic() < deadline:
                self._lock.wait(deadline - time.monotonic())
            waiting = self._take_all_ready()
        for launcher in waiting:
            launcher.release()
        with self._lock:
            used, self._used = self._used, []
            thread = self._thread
            idle = self._live == 0
            self._lock.notify_all()
        for cgroup in used:
            cgroup.release()
        if idle and thread is not None and thread is not threading.current_thread():
            thread.join(_READY_S * 2)

    def _take_all_ready(self) -> list[Launcher]:
        """Every ready launcher, out of the pool (the lock held)."""
        waiting = [launcher for ready in self._ready.values() for launcher in ready]
        self._ready.clear()
        return waiting

    def _idle(self) -> bool:
        """Whether no launcher of the thread's waits, starts or runs (the lock held)."""
        return (
            self._live == 0 and not any(self._ready.values()) and not any(self._starting.values())
        )

    def _pop(self, key: _Key) -> Launcher | None:
        """A ready, live launcher for ``key`` (the lock held); dead ones are let go of."""
        ready = self._ready.get(key, [])
        while ready:
            launcher = ready.pop(0)
            if launcher.alive():
                return launcher
            launcher.release()
        return None

    def _wake(self) -> None:
        """Start the thread if needed and wake it (the lock held)."""
        if self._thread is None or not self._thread.is_alive():
            # It must outlive every launcher it starts: a launcher (and the bubblewrap it
            # becomes) dies with the thread that started it.
            self._thread = threading.Thread(
                target=self._serve, name="sandbox-launchers", daemon=True
            )
            self._thread.start()
        self._lock.notify_all()

    def _serve(self) -> None:
        while True:
            with self._lock:
                while not self._wanted and not self._used:
                    if self._live == 0 and not any(self._starting.values()):
                        unused = time.monotonic() - self._last_take
                        if unused >= _IDLE_S and any(self._ready.values()):
                            # Waited long with no run taking one: let them go, then end.
                            stale = self._take_all_ready()
                            self._lock.release()
                            try:
                                for launcher in stale:
                                    launcher.release()
                            finally:
                                self._lock.acquire()
                            continue
                        if not any(self._ready.values()):
                            # Nothing it started is left: it ends (a later run starts another).
                            self._thread = None
                            return
                    self._lock.wait(_IDLE_S)
                batch, self._wanted = self._wanted, []
                used, self._used = self._used, []
            for cgroup in used:
                cgroup.release()
            self._start_batch(batch)

    def _start_batch(self, batch: list[tuple[_Key, Mapping[str, str]]]) -> None:
        """Start ``batch`` together (their joins share one grace period), then keep the ready.

        Every launcher asked for is accounted for, whatever fails: a failure must neither end
        this thread (every bubblewrap it started would die with it) nor leave one counted as
        starting for ever.
        """
        started: list[tuple[_Key, Launcher | None]] = []
        for key, env in batch:
            try:
                launcher = _start(key, env)
            except Exception:
                # One launcher's failure is not the pool's: the run that wanted it joins its
                # cgroup itself.
                launcher = None
            started.append((key, launcher))
        for key, launcher in started:
            ready = False
            try:
                ready = launcher is not None and _await_ready(launcher)
            finally:
                with self._lock:
                    self._starting[key] -= 1
                    # Not kept while closing: close() ends what it waited for.
                    keep = ready and launcher is not None and key in self._envs
                    if keep and launcher is not None:
                        self._ready.setdefault(key, []).append(launcher)
                    self._lock.notify_all()
                if launcher is not None and not keep:
                    launcher.release()


def _start(key: _Key, env: Mapping[str, str]) -> Launcher | None:
    """Start one launcher in a fresh, limited cgroup; None if the host refuses either."""
    base, stage_fd, memory_bytes = key
    try:
        cgroup = RunCgroup(base, memory_bytes)
    except OSError:
        return None
    assert cgroup.procs_fd is not None
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        process = subprocess.Popen(
            [
                f"/proc/self/fd/{stage_fd}",
                "launch",
                f"sock={theirs.fileno()}",
                f"cgroup={cgroup.procs_fd}",
                f"parent={os.getpid()}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            cwd="/",
            env=dict(env),
            pass_fds=(theirs.fileno(), cgroup.procs_fd, stage_fd),
            close_fds=True,
            # As bubblewrap itself is started (see _process._spawn): its own process group,
            # and what the run makes in places it shares is its own.
            process_group=0,
            umask=0o077,
        )
    except BaseException as error:
        ours.close()
        cgroup.release()
        if isinstance(error, OSError):
            return None
        raise
    finally:
        theirs.close()
    cgroup.close_procs()
    launcher = Launcher(process, ours, cgroup)
    launcher.key = key
    return launcher


def _await_ready(launcher: Launcher) -> bool:
    """Whether the launcher joined its cgroup and said so in time."""
    channel = launcher.channel
    waiting = select.poll()  # not select(): a descriptor may be numbered past 1023
    waiting.register(channel, select.POLLIN)
    if not waiting.poll(_READY_S * 1000):
        return False
    try:
        return channel.recv(1) == b"r"
    except OSError:
        return False


LAUNCHERS = LauncherPool()
"""The process's launchers."""


def close_launchers() -> None:
    """End the launchers kept ready for the next runs, and remove their cgroups."""
    LAUNCHERS.close()
