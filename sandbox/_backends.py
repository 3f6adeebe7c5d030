"""The registry of backends, strongest first, and the choice of one for a policy.

Adding a backend is one module implementing :class:`sandbox._backend.Backend` plus one entry
in :data:`BACKENDS`.
"""

from __future__ import annotations

import functools
import os

from sandbox import _bubblewrap, _envbackend, _landlock, _unshare
from sandbox._backend import Backend, Probe
from sandbox._host import HostInfo, cached, host_info
from sandbox._runuid import LEASE_DIR, RUN_UID, RUN_UIDS
from sandbox._seccomp import syscall_filter
from sandbox._types import (
    CONTRACT_GUARANTEES,
    BackendReport,
    Guarantee,
    HostReport,
    Isolation,
    IsolationUnavailable,
    Limits,
    Policy,
)

__all__ = [
    "BACKENDS",
    "choose",
    "ordered",
    "probe_backends",
    "probe_host",
    "probe_of",
    "require",
    "select_backend",
]

BACKENDS: tuple[Backend, ...] = (
    _bubblewrap.BACKEND,
    _landlock.BACKEND,
    _unshare.BACKEND,
    _envbackend.BACKEND,
)
"""Every backend, strongest first: selection takes the first that works and may be chosen."""


def probe_of(backend: Backend, host: HostInfo) -> Probe:
    """The backend's probe of this host, measured once per PATH and euid."""
    return cached(("backend", backend.name, host.path, host.euid), lambda: backend.probe(host))


@functools.lru_cache(maxsize=256)
def ordered(
    guarantees: frozenset[Guarantee],
) -> tuple[tuple[Guarantee, ...], tuple[Guarantee, ...]]:
    """Split into held and not-held guarantees, each in the enum's (documented) order.

    Cached: every run asks, and a backend's runs hold one of a few sets.
    """
    held = tuple(g for g in Guarantee if g in guarantees)
    missing = tuple(g for g in CONTRACT_GUARANTEES if g not in guarantees)
    return held, missing


def _path_or_environ(path: str | None) -> str:
    return path if path is not None else os.environ.get("PATH", os.defpath)


def choose(isolation: Isolation, path: str) -> tuple[Backend, Probe]:
    """The first backend that ``isolation`` may pick and that works here, with its probe."""
    isolation = Isolation(isolation)
    host = host_info(path)
    reasons = []
    for backend in BACKENDS:
        if isolation not in backend.chosen_by:
            continue
        probe = probe_of(backend, host)
        if probe.available:
            return backend, probe
        if probe.detail:
            reasons.append(probe.detail)
    # Where namespaces are refused, that is the reason, whatever else was missing.
    raise IsolationUnavailable(tuple(reasons), host.refusal)


def require(backend: Backend, probe: Probe, policy: Policy) -> None:
    """Raise :class:`IsolationUnavailable` unless ``backend`` gives ``policy.require``."""
    _require(backend, probe, policy.require, policy.limits)


def _require(backend: Backend, probe: Probe, wanted: frozenset[Guarantee], limits: Limits) -> None:
    if not wanted:
        return
    held = backend.guarantees(
        probe, memory=limits.memory_mb is not None, processes=limits.max_processes is not None
    )
    missing = [g.value for g in Guarantee if g in wanted - held]
    if missing:
        raise IsolationUnavailable(
            (f"the {backend.name} backend cannot guarantee {', '.join(missing)}",)
        )


def select_backend(
    isolation: Isolation,
    *,
    path: str | None = None,
    require: frozenset[Guarantee] = frozenset(),
    limits: Limits | None = None,
) -> str:
    """Name the backend a policy with this isolation runs on: ``bwrap``, ``unshare`` or ``env``.

    ``path`` is the PATH searched for ``bwrap`` and ``unshare`` (default: this process's).
    ``auto`` and ``namespace`` take bubblewrap with the full guarantee set and raise
    :class:`IsolationUnavailable` without it; ``unshare`` and ``env`` are returned only when
    named (``unshare`` raises when it does not work here). With ``require`` (and the
    ``limits`` runs will have, default :class:`Limits`), it also raises when that backend
    cannot give every guarantee named, as :func:`sandbox.run` would: a caller checks before
    its first run.
    """
    backend, probe = choose(isolation, _path_or_environ(path))
    _require(backend, probe, frozenset(Guarantee(g) for g in require), limits or Limits())
    return backend.name


def probe_backends(*, path: str | None = None) -> list[BackendReport]:
    """Every backend, strongest first: whether it works here and what it guarantees at best.

    ``path`` is the PATH searched for ``bwrap`` and ``unshare`` (default: this process's).
    """
    host = host_info(_path_or_environ(path))
    reports = []
    for backend in BACKENDS:
        probe = probe_of(backend, host)
        held, missing = ordered(
            backend.guarantees(probe, memory=True, processes=True)
            if probe.available
            else frozenset()
        )
        reports.append(
            BackendReport(
                backend.name, probe.available, probe.executable, held, missing, probe.detail
            )
        )
    return reports


def probe_host(*, path: str | None = None) -> HostReport:
    """Measure what this host allows a sandbox (cached per PATH and euid); changes nothing.

    ``path`` is the PATH searched for ``bwrap`` (default: this process's).
    """
    host = host_info(path if path is not None else os.environ.get("PATH", os.defpath))
    probe = probe_of(_bubblewrap.BACKEND, host)
    assert isinstance(probe, _bubblewrap.BubblewrapProbe)
    if probe.available:
        probe = _bubblewrap.with_memory_cgroup(probe)
    return HostReport(
        euid=host.euid,
        full_isolation=probe.available,
        bwrap=probe.executable,
        bwrap_version=probe.version,
        bwrap_candidates=probe.candidates,
        run_uid=RUN_UID if host.euid == 0 else None,
        run_uids=(RUN_UIDS.start, RUN_UIDS.stop - 1) if host.euid == 0 else None,
        lease_dir=str(LEASE_DIR) if host.euid == 0 else None,
        namespaces_refused=None
        if host.refusal is None
        else f"{host.refusal.cause}; what you can do: {host.refusal.options}",
        unprivileged_userns=host.unprivileged_userns,
        landlock_abi=host.landlock_abi,
        seccomp=syscall_filter() is not None,
        pids_cgroup=str(host.pids_cgroup) if host.pids_cgroup else None,
        memory_cgroup=str(probe.memory_cgroup) if probe.memory_cgroup else None,
        detail=probe.detail,
        memory_cgroup_detail=probe.memory_cgroup_detail,
    )
