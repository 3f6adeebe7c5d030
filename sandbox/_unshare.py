"""The util-linux ``unshare`` backend: namespaces without mounts.

The host filesystem stays as writable as it is for the caller, and /tmp and the home stay
shared, so a run here is told exactly which guarantees it lacks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sandbox._backend import ExitVerdict, Launch, Probe, Request, exit_verdict
from sandbox._host import REPORT_NAMESPACES, HostInfo, try_run
from sandbox._limits import prlimit_prefix
from sandbox._process import Execution
from sandbox._types import Guarantee, Isolation

G = Guarantee

UNSHARE_FULL = ("--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--kill-child")
UNSHARE_MINIMAL = ("--net",)

_ALWAYS = frozenset({G.OWN_HOME, G.SCRUBBED_ENV, G.DEAD_PROXIES, G.OUTPUT_CAP, G.TIMEOUT})
_MINIMAL = _ALWAYS | {G.NO_NETWORK, G.NO_CAPABILITIES}
_FULL = _MINIMAL | {G.OWN_PID_NAMESPACE, G.TREE_KILLED}
# The unshare process itself, inside the user namespace once it has unshared.
_RLIMIT_OVERHEAD = 1


def unshare_mapping(euid: int) -> list[str]:
    """Map the caller to a non-root uid inside, so the command keeps no capability after exec.

    A root caller maps to nobody (65534) rather than to itself: in a user namespace, uid 0 keeps
    every capability across exec.
    """
    uid, gid = (65534, 65534) if euid == 0 else (os.getuid(), os.getgid())
    return ["--user", f"--map-user={uid}", f"--map-group={gid}"]


@dataclass(frozen=True)
class UnshareProbe(Probe):
    """Whether unshare gets a PID namespace here (``full``) or only the network one."""

    full: bool = False


class Unshare:
    """Own user, network and (where it works) PID namespaces; no mounts."""

    name = "unshare"
    chosen_by = frozenset({Isolation.UNSHARE})
    work_dir_on_host = True

    def probe(self, host: HostInfo) -> UnshareProbe:
        """Find unshare on PATH; try the full set of namespaces, then the network one alone."""
        unshare = host.which("unshare")
        if unshare is None:
            return UnshareProbe(host, False, None, "unshare not found on PATH")
        mapping = unshare_mapping(host.euid)
        own = host.own_namespaces
        full = [unshare, *mapping, *UNSHARE_FULL, "--", *REPORT_NAMESPACES]
        ok, why_not_full = try_run(full, own, ("net", "user", "pid"))
        if ok:
            return UnshareProbe(host, True, unshare, None, full=True)
        minimal = [unshare, *mapping, *UNSHARE_MINIMAL, "--", *REPORT_NAMESPACES]
        ok, detail = try_run(minimal, own, ("net", "user"))
        if ok:
            return UnshareProbe(host, True, unshare, f"no PID namespace ({why_not_full})")
        return UnshareProbe(host, False, None, detail)

    def guarantees(self, probe: Probe, *, memory: bool, processes: bool) -> frozenset[Guarantee]:
        """Namespaces only, and the limits that hold.

        RLIMIT_AS holds (no capability in the initial namespace raises it); RLIMIT_NPROC only
        for a non-root caller (host root is exempt, and a pids cgroup would not hold: /sys
        stays writable for the mapped host root).
        """
        assert isinstance(probe, UnshareProbe)
        held = set(_FULL if probe.full else _MINIMAL)
        if probe.host.euid != 0:
            # A root caller maps to nobody inside, but that is host uid 0 outside.
            held.add(G.NOT_HOST_ROOT)
        if probe.full:
            # unshare waits for its init from outside the run's PID namespace: invisible to it.
            held.add(G.TRUSTED_EXIT_STATUS)
        if memory and probe.host.prlimit is not None:
            held.add(G.MEMORY_LIMIT)
        if processes and _nproc_holds(probe.host):
            held.add(G.PROCESS_LIMIT)
        return frozenset(held)

    def launch(self, probe: Probe, request: Request) -> Launch:
        """Build ``[setpriv --pdeathsig KILL] unshare MAPPING FLAGS -- [prlimit ...] ARGV``."""
        assert isinstance(probe, UnshareProbe)
        policy = request.policy
        assert probe.executable is not None
        host = probe.host
        limits = policy.limits
        guarantees = self.guarantees(
            probe,
            memory=limits.memory_mb is not None,
            processes=limits.max_processes is not None,
        )
        nproc = None
        if limits.max_processes is not None and _nproc_holds(host):
            nproc = limits.max_processes + _RLIMIT_OVERHEAD
        prefix = prlimit_prefix(host.prlimit, limits.memory_mb, nproc) if host.prlimit else []
        flags = UNSHARE_FULL if probe.full else UNSHARE_MINIMAL
        # unshare, unlike bwrap, does not die with its parent by itself: setpriv arms it.
        argv = [*host.pdeathsig, probe.executable, *unshare_mapping(host.euid), *flags, "--"]
        argv += [*prefix, *policy.argv]
        return Launch(argv, request.env, request.work.path, guarantees, child_is_init=probe.full)

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """Judge unshare's exit status: its command's (a signal as 128+N is a plain code)."""
        assert execution.returncode is not None
        return exit_verdict(execution.returncode, execution.stderr, expect_exit)


def _nproc_holds(host: HostInfo) -> bool:
    return host.prlimit is not None and host.euid != 0


BACKEND = Unshare()
