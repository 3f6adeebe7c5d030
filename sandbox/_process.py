"""Start one launch, drain its output under a cap, enforce timeout and cancel, reap its tree."""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import re
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sandbox._backend import Execution, Launch
from sandbox._registry import LiveRun, ProcessRegistry, wait_gone
from sandbox._runuid import kill_uid
from sandbox._types import Limits

__all__ = ["execute"]

_POLL_S = 0.05
"""How often cancel and process exit are checked while output is quiet."""
_KILL_GRACE_S = 2.0
"""How long a killed tree may take to disappear before the run stops claiming it did."""
_EXIT_GRACE_S = 0.5
"""How long to keep draining after the backend exited (only escaped env children lag)."""
_STARTUP_S = 10.0
"""How long bubblewrap may take to report its child before the run goes on without knowing it."""
_READ_BYTES = 1 << 20
_REPORT_BYTES = 1 << 16
_PIPE_BYTES = 1 << 20
_DEFAULT_PIPE_BYTES = 1 << 16
"""A pipe's capacity unless resized (Linux): a read this large found the pipe full."""
_CHILD_PID = re.compile(rb'"child-pid": (\d+)')
_STATUS_FIELD = re.compile(rb'"(child-pid|exit-code)": (-?\d+)')


@dataclass
class _Capture:
    """The first ``limit`` bytes of a stream; the rest is counted as truncation and dropped."""

    limit: int
    data: bytearray = field(default_factory=bytearray)
    truncated: bool = False

    def feed(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > max(room, 0):
            self.truncated = True


def execute(
    launch: Launch,
    limits: Limits,
    cancel: threading.Event | None,
    registry: ProcessRegistry,
    *,
    started_at: float | None = None,
    on_stdout: Callable[[bytes], None] | None = None,
    on_start: Callable[[], None] | None = None,
) -> Execution:
    """Run ``launch`` to its end and return what happened; never raises for the run's failures.

    The calling thread spawns the backend and stays in here until the backend is reaped, so
    bubblewrap's --die-with-parent (tied to the spawning thread) cannot fire early.
    ``started_at`` (a ``time.monotonic`` value) is when the run's time began, if before the
    spawn (a fixtures copy counts against the timeout). ``on_stdout`` is handed each piece of
    the standard output as it is read; ``on_start`` is called once the run is registered.
    """
    start = time.monotonic() if started_at is None else started_at
    proc = _spawn(launch)
    if isinstance(proc, Execution):
        return proc
    result = Execution()
    status = bytearray()
    report = bytearray()
    init = None
    if launch.status_fd is not None:
        # Learn the namespace's init before anyone may kill the run (see LiveRun).
        try:
            init = _await_child_pid(launch.status_fd, status, start + _STARTUP_S)
        except BaseException:
            LiveRun(proc, namespace_init=None, find_init=False).kill()
            proc.wait()
            raise
    live = LiveRun(proc, namespace_init=init, find_init=launch.child_is_init)
    registry.add(live)
    exited = False
    try:
        if on_start is not None:
            on_start()
        exited = _supervise(
            proc,
            live=live,
            launch=launch,
            limits=limits,
            cancel=cancel,
            start=start,
            result=result,
            on_stdout=on_stdout,
        )
    finally:
        # Also on KeyboardInterrupt in the run's own thread: nothing outlives the run.
        _finish(
            proc,
            live,
            launch,
            result=result,
            status=status,
            report=report,
            start=start,
            exited=exited,
        )
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        registry.discard(live)
        live.finished.set()
    return result


def _spawn(launch: Launch) -> subprocess.Popen[bytes] | Execution:
    """Start the backend; an :class:`Execution` saying why if it cannot be started."""
    try:
        return subprocess.Popen(
            launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Unbuffered: only the descriptors are read (by os.read), never the file objects.
            bufsize=0,
            cwd=launch.cwd,
            env=launch.env,
            pass_fds=launch.pass_fds,
            close_fds=True,
            # Own session or process group: the terminal's Ctrl-C reaches the caller (the
            # foreground group), which kills runs itself.
            start_new_session=launch.own_session,
            process_group=None if launch.own_session else 0,
            # A root caller's unshare and env runs start as their leased uid, set by the C
            # side of the fork (no Python runs between fork and exec).
            user=launch.user,
            group=launch.user,
            extra_groups=[] if launch.user is not None else None,
            # What the run creates in places it shares with others (the host's /tmp and
            # /dev/shm under unshare and env) is its own uid's alone unless it says otherwise.
            umask=0o077,
        )
    except OSError as exc:
        return Execution(spawn_error=f"cannot start {launch.argv[0]}: {exc.strerror or exc}")
    finally:
        launch.spawned()


_STOP_GRACE_S = 1.0
"""How long the sandbox's own process may take to kill what the run left, once told to stop."""


def _stop_by_control(launch: Launch, pid: int) -> None:
    """Close the control pipe and give the sandbox's own process a moment to end the run."""
    assert launch.control_fd is not None
    with contextlib.suppress(OSError):
        os.close(launch.control_fd)
    launch.control_fd = None
    deadline = time.monotonic() + _STOP_GRACE_S
    while time.monotonic() < deadline:
        # WNOWAIT: seen to exit, left to be reaped where every run is.
        found = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if found is not None:
            return
        time.sleep(0.005)


def _finish(
    proc: subprocess.Popen[bytes],
    live: LiveRun,
    launch: Launch,
    *,
    result: Execution,
    status: bytearray,
    report: bytearray,
    start: float,
    exited: bool,
) -> None:
    """Make sure nothing of the run is left, reap it, and collect what it reported.

    ``exited``: the backend was seen to exit (else it is asked, and killed if it lives).
    """
    if not exited and not _exited(proc.pid):
        live.kill()
    result.returncode = live.reap()
    if launch.sweep_uid is not None:
        # Before the work dir goes: nothing of the run may race its removal.
        kill_uid(launch.sweep_uid)
    result.duration_s = time.monotonic() - start
    status_complete = False
    left: list[int] = []
    # One poll for both pipes: where no writer is left (the usual end), reads cannot block.
    ended = _writers_gone(launch.report_fd, launch.status_fd)
    if launch.report_fd is not None:
        if not _drain(launch.report_fd, report, ended=launch.report_fd in ended):
            left = _end_holders(launch.report_fd)
        result.report = bytes(report)
    if launch.status_fd is not None:
        status_complete = _drain(launch.status_fd, status, ended=launch.status_fd in ended)
        _parse_status(status, result)
    if live.killed and launch.sweep_uid is None:
        result.tree_confirmed = _tree_dead(live, result, status_complete)
    if not all(wait_gone(pid, _KILL_GRACE_S) for pid in left):
        result.tree_confirmed = False


def _supervise(
    proc: subprocess.Popen[bytes],
    *,
    live: LiveRun,
    launch: Launch,
    limits: Limits,
    cancel: threading.Event | None,
    start: float,
    result: Execution,
    on_stdout: Callable[[bytes], None] | None = None,
) -> bool:
    """Drain the output and wait for the backend's exit, killing it on timeout or cancel.

    Returns whether the backend was seen to exit.
    """
    assert proc.stdout is not None
    assert proc.stderr is not None
    out, err = _Capture(limits.output_bytes), _Capture(limits.output_bytes)
    stdout_fd = proc.stdout.fileno()
    captures = {stdout_fd: out, proc.stderr.fileno(): err}
    deadline = start + limits.timeout_s
    # None while the run goes on; then how long to keep draining before giving up on the pipes.
    stop_draining: float | None = None
    # poll(2) rather than a selector: no epoll descriptor to make and close in every run.
    # Not the status and report pipes: each gets a few short lines, far below a pipe's
    # capacity, which are read once the backend is gone (_finish). Every wakeup here costs
    # every run.
    poller = select.poll()
    for fd in captures:
        poller.register(fd, select.POLLIN)
    open_pipes = set(captures)
    grown: set[int] = set()
    with _ExitWatch(proc.pid) as exit_watch:
        if exit_watch.fd is not None:
            poller.register(exit_watch.fd, select.POLLIN)
        while True:
            now = time.monotonic()
            exited = exit_watch.exited()
            if stop_draining is None:
                if live.interrupted.is_set() or (cancel is not None and cancel.is_set()):
                    result.ended_by = "interrupt"
                elif now >= deadline:
                    result.ended_by = "timeout"
                if result.ended_by != "exit":
                    if launch.stop_by_control and launch.control_fd is not None:
                        _stop_by_control(launch, proc.pid)
                    live.kill(interrupt=result.ended_by == "interrupt")
                    stop_draining = now + _KILL_GRACE_S
                elif exited:
                    if launch.kill_group_on_exit:
                        # What stayed in the backend's process group dies with the run.
                        live.kill()
                    stop_draining = now + _EXIT_GRACE_S
            if exited and (not open_pipes or (stop_draining is not None and now >= stop_draining)):
                break
            if stop_draining is not None and now >= stop_draining:
                # Killed, yet not seen to exit: reaping below waits for it.
                break
            horizon = deadline if stop_draining is None else stop_draining
            wait = min(exit_watch.poll_s, max(0.0, horizon - now))
            # Rounded up: a wait rounded down to 0 ms would spin until the horizon.
            for fd, _ in poller.poll(math.ceil(wait * 1000)):
                if fd == exit_watch.fd:
                    poller.unregister(fd)
                    exit_watch.seen()
                    continue
                chunk = os.read(fd, _READ_BYTES)
                if not chunk:
                    poller.unregister(fd)
                    open_pipes.discard(fd)
                    continue
                captures[fd].feed(chunk)
                if on_stdout is not None and fd == stdout_fd:
                    on_stdout(chunk)
                if len(chunk) >= _DEFAULT_PIPE_BYTES and fd not in grown:
                    # A full pipe: a flood. A bigger one means fewer wakeups while it is
                    # drained (best effort); a quiet run never pays for it.
                    grown.add(fd)
                    with contextlib.suppress(OSError):
                        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    if live.interrupted.is_set():
        # Killed from another thread (kill_all) while this loop only saw the exit.
        result.ended_by = "interrupt"
    result.stdout, result.stderr = bytes(out.data), bytes(err.data)
    result.stdout_truncated, result.stderr_truncated = out.truncated, err.truncated
    return exited


class _ExitWatch:
    """Notices the backend's exit without reaping it.

    A pidfd in the poll set where the kernel has them (Linux 5.3), otherwise polling with
    waitid(WNOWAIT) every few milliseconds.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self.fd = os.pidfd_open(pid)
        self.poll_s = _POLL_S if self.fd is not None else 0.002
        self._exited = False

    def seen(self) -> None:
        """Record that the pidfd became readable: the backend has exited."""
        self._exited = True

    def exited(self) -> bool:
        """Tell whether the backend has exited (it stays unreaped)."""
        if not self._exited and self.fd is None:
            # Without a pidfd only waitid can tell; with one, its readability does.
            self._exited = _exited(self.pid)
        return self._exited

    def __enter__(self) -> _ExitWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)


def _exited(pid: int) -> bool:
    """Tell whether our child ``pid`` has exited, leaving it unreaped (its pid stays ours)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None and info.si_pid != 0


def _parse_status(status: bytearray, result: Execution) -> None:
    """Take ``child-pid`` and ``exit-code`` from bubblewrap's JSON reports.

    Two integer fields of a format bubblewrap fixes: a pattern reads them in a fraction of what
    decoding each line as JSON costs every run.
    """
    for key, value in _STATUS_FIELD.findall(status):
        result.status[key.decode("ascii")] = int(value)


def _await_child_pid(fd: int, status: bytearray, deadline: float) -> int | None:
    """Read bubblewrap's status until it names its child (milliseconds after the start).

    bubblewrap writes ``{ "child-pid": N`` with one write(), which a pipe delivers whole, and
    only then the namespaces, one write each: the first chunk that holds the key holds the
    whole number, so one wakeup is enough (the rest of the line is read in _finish).
    Neither the run's timeout nor cancel cuts this short: killing bubblewrap before its child
    is known could orphan the sandbox (see LiveRun); both take effect right after.
    """
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while (found := _CHILD_PID.search(status)) is None:
        now = time.monotonic()
        if now >= deadline:
            return None
        if poller.poll(math.ceil((deadline - now) * 1000)):
            chunk = os.read(fd, _READ_BYTES)
            if not chunk:
                return None
            status += chunk
    return int(found.group(1))


def _writers_gone(*fds: int | None) -> set[int]:
    """The pipes among ``fds`` that no process holds a write end of any more."""
    pipes = [fd for fd in fds if fd is not None]
    if not pipes:
        return set()
    poller = select.poll()
    for fd in pipes:
        poller.register(fd, select.POLLIN)
    return {fd for fd, events in poller.poll(0) if events & select.POLLHUP}


def _drain(fd: int, into: bytearray, *, ended: bool = False) -> bool:
    """Read what is left on a pipe without blocking; True if it reached its end.

    ``ended``: no writer is left, so a read returns at once (at worst the pipe's end).
    """
    if not ended:
        os.set_blocking(fd, False)
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, _READ_BYTES):
            into += chunk[: max(0, _REPORT_BYTES - len(into))]
        return True
    return False


def _end_holders(fd: int) -> list[int]:
    """SIGKILL every other process that holds the pipe ``fd`` is an end of; return their pids.

    Once the backend is reaped, nothing may hold the run's report pipe but this process: a
    holder is what the backend left behind. bubblewrap's child waits, as root and before it
    arms its parent-death signal, for its monitor to release it; a monitor killed in between
    would leave it waiting forever. Only this run's processes hold the pipe, so that is how
    they are found, and a pidfd makes sure the one checked is the one killed.
    """
    target = f"pipe:[{os.fstat(fd).st_ino}]"
    ended = []
    for process in Path("/proc").iterdir():
        if not process.name.isdigit() or int(process.name) == os.getpid():
            continue
        if not _holds(process, target):
            continue
        try:
            pidfd = os.pidfd_open(int(process.name))
        except OSError:
            continue  # gone already
        try:
            if _holds(process, target):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                ended.append(int(process.name))
        except OSError:
            pass  # gone in between, or not ours to kill
        finally:
            os.close(pidfd)
    return ended


def _holds(process: Path, target: str) -> bool:
    """Whether the process of /proc dir ``process`` has a descriptor whose link reads ``target``."""
    try:
        links = list((process / "fd").iterdir())
    except OSError:
        return False
    for link in links:
        with contextlib.suppress(OSError):
            if str(link.readlink()) == target:
                return True
    return False


def _tree_dead(live: LiveRun, result: Execution, status_complete: bool) -> bool:
    """After a kill: wait until the namespace's init is gone, which means its whole tree is."""
    init = live.namespace_init or result.status.get("child-pid")
    if init is not None:
        return wait_gone(init, _KILL_GRACE_S)
    # bubblewrap's status pipe closed without naming a child: it died before forking one.
    return status_complete
