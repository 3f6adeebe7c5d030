"""The records that go in and out of a sandboxed run, and the errors a bad policy raises."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sandbox._env import check_pass_env


class Isolation(enum.StrEnum):
    """How strongly a run is isolated.

    ``auto`` takes the strongest namespace backend this machine has (bubblewrap, then util-linux
    ``unshare``); ``namespace`` demands one in the same order. Both fail closed with
    :class:`IsolationUnavailable` when there is none: neither ever falls back to ``env``, which is
    used only when asked for by name.
    """

    AUTO = "auto"
    NAMESPACE = "namespace"
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
    PROCESS_LIMIT = "process-limit"
    OUTPUT_CAP = "output-cap"
    TIMEOUT = "timeout"
    NO_FS_UNIX_SOCKETS = "no-fs-unix-sockets"
    PYTHON_SOCKET_GUARD = "python-socket-guard"

    @property
    def description(self) -> str:
        """One line saying what holds when this guarantee is listed."""
        return _DESCRIPTIONS[self]


_DESCRIPTIONS: dict[Guarantee, str] = {
    Guarantee.WORK_DIR_ONLY_WRITABLE: (
        "the fresh work dir is the only writable place of the host's filesystem (the private "
        "/tmp and /dev are in memory and vanish with the run)"
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
    Guarantee.READ_ONLY_ROOT: "the host's filesystem is mounted read-only",
    Guarantee.PRIVATE_TMP: "/tmp is a private, empty tmpfs",
    Guarantee.HOME_MASKED: (
        "the invoking user's home ($HOME and the password database's) is hidden, except the "
        "project dir and the readable paths"
    ),
    Guarantee.NO_CAPABILITIES: (
        "the run holds no capability, also when the caller is root, so it cannot undo the "
        "other guarantees"
    ),
    Guarantee.MEMORY_LIMIT: "the address space of each process is capped at Limits.memory_mb",
    Guarantee.PROCESS_LIMIT: "the run cannot have more than Limits.max_processes tasks at once",
    Guarantee.OUTPUT_CAP: (
        "stdout and stderr are each kept up to Limits.output_bytes; the rest is drained and "
        "discarded"
    ),
    Guarantee.TIMEOUT: "the run is killed after Limits.timeout_s seconds",
    Guarantee.NO_FS_UNIX_SOCKETS: (
        "filesystem unix sockets outside the work dir (e.g. /run/docker.sock) are not "
        "connectable: a seccomp filter refuses socket(AF_UNIX)"
    ),
    Guarantee.PYTHON_SOCKET_GUARD: (
        "best effort, not a security boundary: Python children refuse socket connects, "
        "datagrams and name lookups through an audit hook"
    ),
}

CONTRACT_GUARANTEES: tuple[Guarantee, ...] = tuple(
    g for g in Guarantee if g is not Guarantee.PYTHON_SOCKET_GUARD
)
"""The guarantees of the dry-run contract (SPEC 5); what a run lacks of them is not guaranteed.

``python-socket-guard`` is the ``env`` backend's best-effort stand-in for ``no-network`` and is
not itself part of the contract.
"""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run.

    ``output_bytes`` applies to stdout and stderr separately. ``memory_mb`` caps each process's
    address space (RLIMIT_AS). ``max_processes`` counts tasks (threads included) of the run at
    once; under the ``env`` backend, where RLIMIT_NPROC is all there is, it counts every process
    of the calling user, so it is stricter there. ``None`` leaves a limit off, and the outcome
    then does not list it as a guarantee.
    """

    timeout_s: float = 30.0
    output_bytes: int = 1_048_576
    memory_mb: int | None = None
    max_processes: int | None = None

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number, not {self.timeout_s}")
        if self.output_bytes < 0:
            raise ValueError(f"output_bytes must not be negative, not {self.output_bytes}")
        if self.memory_mb is not None and self.memory_mb <= 0:
            raise ValueError(f"memory_mb must be positive, not {self.memory_mb}")
        if self.max_processes is not None and self.max_processes <= 0:
            raise ValueError(f"max_processes must be positive, not {self.max_processes}")


@dataclass(frozen=True)
class Policy:
    """Everything one run needs: what to run and how to isolate it.

    ``argv[0]`` is looked up on the run's PATH; the file found is made visible read-only. An
    interpreter it needs (a shebang's, a virtualenv and its base installation) belongs in
    ``readable``. ``fixtures`` is a folder whose contents are copied into the fresh work dir.
    ``project_dir`` and ``readable`` stay visible read-only even under a masked home.
    ``source_env`` is where PATH, locale, TERM and the ``pass_env`` values are read from
    (``None``: ``os.environ``, read only); its PATH also decides which backends are found. The
    homes masked are its HOME, this process's HOME and the password database's home. A
    ``pass_env`` name that looks like a credential raises ``CredentialEnvError`` here, so such
    a policy never exists.
    """

    argv: tuple[str, ...]
    fixtures: Path | None = None
    project_dir: Path | None = None
    readable: tuple[Path, ...] = ()
    pass_env: tuple[str, ...] = ()
    isolation: Isolation = Isolation.AUTO
    limits: Limits = field(default_factory=Limits)
    expect_exit: int = 0
    source_env: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        # Tuples even when a caller hands lists: the record is frozen and shared across threads.
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "readable", tuple(Path(p) for p in self.readable))
        object.__setattr__(self, "pass_env", tuple(self.pass_env))
        object.__setattr__(self, "isolation", Isolation(self.isolation))
        if not self.argv or not self.argv[0]:
            raise ValueError("argv must name a program")
        if any("\0" in arg for arg in self.argv):
            raise ValueError("argv must not contain NUL characters")
        check_pass_env(self.pass_env)


@dataclass(frozen=True)
class Outcome:
    """What happened in one run. Errors are data: a run that fails never raises.

    ``exit_code`` is ``None`` when the run did not exit by itself (timed out, killed by a signal,
    not started). ``guarantees`` lists what held for this run; ``not_guaranteed`` lists the rest
    of the contract (:data:`CONTRACT_GUARANTEES`). ``detail`` says why a run did not start or
    crashed (signal name, ``interrupted``, the sandbox's own error).
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


class IsolationUnavailable(RuntimeError):
    """No namespace backend works here, so ``auto``/``namespace`` refuse to run anything."""

    def __init__(self, reasons: tuple[str, ...]) -> None:
        self.reasons = reasons
        super().__init__(
            "isolation-unavailable: no namespace backend works on this machine ("
            + "; ".join(reasons)
            + "); nothing was run. Install bubblewrap (bwrap), or ask for isolation 'env' by name."
        )
