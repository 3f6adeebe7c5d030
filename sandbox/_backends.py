"""The three backends, which one a policy gets, and what each guarantees on this machine."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from sandbox._host import HostInfo, host_info
from sandbox._types import (
    CONTRACT_GUARANTEES,
    BackendReport,
    Guarantee,
    Isolation,
    IsolationUnavailable,
)

BWRAP = "bwrap"
UNSHARE = "unshare"
ENV = "env"

G = Guarantee
_ALWAYS = frozenset({G.OWN_HOME, G.SCRUBBED_ENV, G.DEAD_PROXIES, G.OUTPUT_CAP, G.TIMEOUT})
_BWRAP = frozenset(CONTRACT_GUARANTEES) - {G.MEMORY_LIMIT, G.PROCESS_LIMIT, G.NO_FS_UNIX_SOCKETS}
# util-linux unshare gives namespaces but no mounts: the host filesystem stays as writable as
# it is for the caller, /tmp and the home stay shared.
_UNSHARE_MINIMAL = _ALWAYS | {G.NO_NETWORK, G.NO_CAPABILITIES}
_UNSHARE_FULL = _UNSHARE_MINIMAL | {G.OWN_PID_NAMESPACE, G.TREE_KILLED}
_ENV = _ALWAYS | {G.PYTHON_SOCKET_GUARD}

ProcessMechanism = Literal["rlimit", "cgroup"] | None


@dataclass(frozen=True)
class Mechanisms:
    """How a backend applies the limits on this machine, and whether they then hold."""

    memory: bool
    """RLIMIT_AS through prlimit is applied."""
    memory_holds: bool
    """...and the run cannot lift it (it lacks CAP_SYS_RESOURCE)."""
    processes: ProcessMechanism
    """How the process count is capped (None: it is not); where applied, it holds."""


def mechanisms(backend: str, host: HostInfo) -> Mechanisms:
    """Choose the limit mechanisms for a backend; say which of them the run cannot undo."""
    prlimit = host.prlimit is not None
    root = host.euid == 0
    # Host root is exempt from RLIMIT_NPROC, so a root caller needs the cgroup.
    rlimit_nproc: ProcessMechanism = "rlimit" if prlimit and not root else None
    if backend == BWRAP:
        processes: ProcessMechanism = "cgroup" if root and host.pids_cgroup else rlimit_nproc
        return Mechanisms(prlimit, prlimit, processes)
    if backend == UNSHARE:
        # No caps in the initial namespace, so RLIMIT_AS cannot be raised again; a pids cgroup
        # would not hold: /sys stays writable for the mapped host root.
        return Mechanisms(prlimit, prlimit, rlimit_nproc)
    # env as root: applied, but the root process could raise its own hard limit.
    return Mechanisms(prlimit, prlimit and not root, rlimit_nproc)


def backend_guarantees(
    backend: str, host: HostInfo, *, memory: bool, processes: bool
) -> frozenset[Guarantee]:
    """Compute what a run on ``backend`` is guaranteed, given which limits its policy sets."""
    if backend == BWRAP:
        base = _BWRAP | ({G.NO_FS_UNIX_SOCKETS} if host.bwrap_seccomp else set())
    elif backend == UNSHARE:
        base = _UNSHARE_FULL if host.unshare_full else _UNSHARE_MINIMAL
    else:
        base = _ENV
    mech = mechanisms(backend, host)
    limits = {
        G.MEMORY_LIMIT: memory and mech.memory_holds,
        G.PROCESS_LIMIT: processes and mech.processes is not None,
    }
    return base | {g for g, held in limits.items() if held}


def ordered(
    guarantees: frozenset[Guarantee],
) -> tuple[tuple[Guarantee, ...], tuple[Guarantee, ...]]:
    """Split into held and not-held guarantees, each in the enum's (documented) order."""
    held = tuple(g for g in Guarantee if g in guarantees)
    missing = tuple(g for g in CONTRACT_GUARANTEES if g not in guarantees)
    return held, missing


def _path_or_environ(path: str | None) -> str:
    return path if path is not None else os.environ.get("PATH", os.defpath)


def select_backend(isolation: Isolation, *, path: str | None = None) -> str:
    """Name the backend a policy with this isolation runs on: ``bwrap``, ``unshare`` or ``env``.

    ``path`` is the PATH searched for ``bwrap`` and ``unshare`` (default: this process's).
    ``auto`` and ``namespace`` take the strongest namespace backend that actually works and
    raise :class:`IsolationUnavailable` when none does; ``env`` is returned only for ``env``.
    """
    isolation = Isolation(isolation)
    if isolation is Isolation.ENV:
        return ENV
    host = host_info(_path_or_environ(path))
    if host.bwrap is not None:
        return BWRAP
    if host.unshare is not None:
        return UNSHARE
    raise IsolationUnavailable(
        tuple(reason for reason in (host.bwrap_detail, host.unshare_detail) if reason)
    )


def probe_backends(*, path: str | None = None) -> list[BackendReport]:
    """Every backend, strongest first: whether it works here and what it guarantees at best.

    ``path`` is the PATH searched for ``bwrap`` and ``unshare`` (default: this process's).
    """
    host = host_info(_path_or_environ(path))
    reports = []
    bwrap_detail = host.bwrap_detail
    if host.bwrap is not None and not host.bwrap_seccomp:
        bwrap_detail = "no seccomp filter: filesystem unix sockets stay connectable"
    for name, executable, detail in (
        (BWRAP, host.bwrap, bwrap_detail),
        (UNSHARE, host.unshare, host.unshare_detail),
        (ENV, None, "best effort, not a security boundary; used only when asked for by name"),
    ):
        available = name == ENV or executable is not None
        held, missing = ordered(
            backend_guarantees(name, host, memory=True, processes=True)
            if available
            else frozenset()
        )
        reports.append(BackendReport(name, available, executable, held, missing, detail))
    return reports
