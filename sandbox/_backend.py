"""The ``Backend`` protocol and the records every backend shares.

A backend owns four things: its probe of this machine (does it work here, with what), the
guarantees a run on it gets, the launch of a run (argv, environment, descriptors) and the
interpretation of how that launch ended. Nothing outside a backend's own module asks which
backend it is dealing with; the rest of the package talks to this protocol.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from sandbox._types import Guarantee, Isolation, Policy, Status

if TYPE_CHECKING:
    from sandbox._host import HostInfo
    from sandbox._workdir import WorkDir

__all__ = [
    "Backend",
    "EndedBy",
    "Execution",
    "ExitVerdict",
    "Launch",
    "Probe",
    "Request",
    "exit_verdict",
    "first_line",
    "signal_name",
]


EndedBy = Literal["exit", "timeout", "interrupt"]


@dataclass
class Execution:
    """The raw facts of one execution, before they are judged into an outcome."""

    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_s: float = 0.0
    ended_by: EndedBy = "exit"
    spawn_error: str | None = None
    report: bytes = b""
    """What the sandbox's own process reported (bubblewrap backend)."""
    status: dict[str, int] = field(default_factory=dict)
    """bubblewrap's --json-status-fd reports: ``child-pid`` and, if the child ran, ``exit-code``."""
    tree_confirmed: bool = True
    """False when a killed tree could not be seen to die within the grace period."""


@dataclass(frozen=True)
class Probe:
    """What one backend found on this machine: whether it works, with which executable, why not.

    Backends subclass it to carry what else they measured (optional flags, filters).
    """

    host: HostInfo
    available: bool
    executable: str | None
    detail: str | None = None


@dataclass(frozen=True)
class ExitVerdict:
    """How a run ended, as far as its backend can tell: status, exit code, why."""

    status: Status
    exit_code: int | None
    detail: str | None = None
    withheld: frozenset[Guarantee] = frozenset()
    """Guarantees the launch promised that this run turned out not to get."""


@dataclass(frozen=True)
class Request:
    """What a backend launches: the policy, its work dir and environment, the program found."""

    policy: Policy
    work: WorkDir
    env: dict[str, str]
    executable: str
    """``argv[0]`` resolved on the run's PATH."""
    source: Mapping[str, str]
    """The environment the run's was built from (its HOME is one of the homes to mask)."""
    run_uid: int | None = None
    """The uid (and gid) leased for a root caller's run (see ``_runuid``); None otherwise."""


@dataclass
class Launch:
    """One process to start: argv, environment, the descriptors it inherits, what it promises.

    ``pass_fds`` are the only descriptors the backend inherits: pipes, never anything that
    reaches the host filesystem (an inherited directory descriptor defeats a read-only bind).
    """

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    guarantees: frozenset[Guarantee]
    pass_fds: tuple[int, ...] = ()
    user: int | None = None
    """The uid (and gid, with no supplementary groups) the backend process is started as."""
    status_fd: int | None = None
    """A pipe on which the backend reports its child's pid and exit (bubblewrap's JSON)."""
    report_fd: int | None = None
    """A pipe on which the sandbox's own process reports how the run ended."""
    control_fd: int | None = None
    """A pipe the caller holds open until the run is over: its end tells the sandbox's own
    process that the caller is gone, and nothing may go on."""
    bound: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    child_is_init: bool = False
    """The backend forks the namespace's init as its only child (util-linux unshare --fork)."""
    kill_group_on_exit: bool = False
    """Whatever stayed in the backend's process group dies with it (no PID namespace does it)."""
    stop_by_control: bool = False
    """Ended by closing ``control_fd`` before any signal: the sandbox's own process then kills
    what the run left (a subreaper without a PID namespace, whose daemons a signal to its
    process group would miss), and exits."""
    sweep_uid: int | None = None
    """A uid the run has alone, without a PID namespace: every process of it is killed when the
    run ends, which kills the whole tree (setsid() daemons included)."""
    own_session: bool = True
    """Start the backend in a session of its own, away from the caller's terminal. False when
    the backend keeps the run apart itself (bubblewrap: --new-session where the caller has a
    terminal or the kernel no Landlock, else a process group the stage leads, and Landlock
    keeping it from the session's scheduling group): the backend then only gets a process
    group of its own, which keeps the terminal's Ctrl-C away just the same and spares every
    run a scheduler group (the kernel makes one per session) that waits its turn behind the
    machine's other sessions."""
    oom_kills: Callable[[], int] | None = None
    """How many of the run's processes the kernel killed for its memory cgroup's limit (read
    before :meth:`release`); None where the run has no cgroup of its own."""
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    """What to undo once the run is over (a run's cgroup), called by :meth:`release`."""
    _close_after_spawn: list[int] = field(default_factory=list)

    def spawned(self) -> None:
        """Close this side's copies of the descriptors the child now holds."""
        for fd in self._close_after_spawn:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._close_after_spawn.clear()

    def release(self) -> None:
        """Free everything the launch holds (after the run, or when it never started)."""
        self.spawned()
        for name in ("status_fd", "report_fd", "control_fd"):
            fd = getattr(self, name)
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
                setattr(self, name, None)
        while self.cleanups:
            self.cleanups.pop()()


class Backend(Protocol):
    """One way of isolating a run. Register a new one in ``sandbox._backends.BACKENDS``."""

    @property
    def name(self) -> str:
        """The name outcomes and reports carry (``bwrap``, ``unshare``, ``env``)."""
        ...

    @property
    def chosen_by(self) -> frozenset[Isolation]:
        """The isolation settings that may select this backend."""
        ...

    @property
    def work_dir_on_host(self) -> bool:
        """Whether the run's work dir is made on the host (else only inside the sandbox)."""
        ...

    def probe(self, host: HostInfo) -> Probe:
        """Measure whether this backend works on this machine (cached by the caller)."""
        ...

    def guarantees(self, probe: Probe, *, memory: bool, processes: bool) -> frozenset[Guarantee]:
        """What a run gets here, given which limits its policy sets."""
        ...

    def launch(self, probe: Probe, request: Request) -> Launch:
        """Build the launch of a request; OSError if a resource cannot be made."""
        ...

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """Judge how a launch that exited by itself ended.

        Timeouts and cancels are judged before this is asked.
        """
        ...


def first_line(data: bytes) -> bytes:
    """The first line of a stream, stripped."""
    return data.split(b"\n", 1)[0].strip()


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; ``signal N`` for numbers without a name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def exit_verdict(code: int, expect_exit: int) -> ExitVerdict:
    """Judge a plain wait status: negative for a signal, else an exit code.

    The run's output is never read here: a program can print anything, so whether it started
    is known only from the sandbox's own side (a program not found before the launch, or the
    stage's report), never from what the run wrote.
    """
    if code < 0:
        return ExitVerdict(Status.CRASHED, None, f"killed by {signal_name(-code)}")
    if code == expect_exit:
        return ExitVerdict(Status.PASSED, code)
    return ExitVerdict(Status.FAILED, code)
