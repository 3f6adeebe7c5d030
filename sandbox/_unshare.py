"""The util-linux ``unshare`` backend: namespaces without mounts.

The host filesystem stays as writable as it is for the run's uid, and /tmp and the home stay
shared, so a run here is told exactly which guarantees it lacks.

An unprivileged caller's run gets a user namespace that maps the caller to itself. A root
caller's run is never host uid 0: unshare (as root, without a user namespace, which the host
may not even allow) creates the namespaces, ``prlimit`` sets the limits, and util-linux
``setpriv`` drops to the uid leased for the run (no groups, no capabilities, no new
privileges) right before the program's exec. That uid owns nothing but the run's work dir, so
/proc/sys, root-only files and root's homes are out of reach by permission, and a setuid file
the run makes is setuid to that uid alone. What it cannot reach (an interpreter in a 0700 home)
stops the run before it starts, with the path and what to do.

Known gaps, never claimed (``work-dir-only-writable`` is not held): a file the run leaves in a
world-writable host directory (/tmp, /var/tmp, /dev/shm) outlives it, readable by a later run
that leases the same uid; an unprivileged caller's concurrent runs all execute as that caller's
uid and can read what each other leaves there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sandbox._backend import Execution, ExitVerdict, Launch, Probe, Request, exit_verdict
from sandbox._host import REPORT_NAMESPACES, HostInfo, try_run
from sandbox._limits import prlimit_prefix
from sandbox._runuid import HOST_BACKEND_HINT, check_reachable, needed_by_run
from sandbox._types import Guarantee, Isolation

__all__ = ["BACKEND", "UnshareProbe"]

G = Guarantee

UNSHARE_FULL = ("--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--kill-child")
UNSHARE_MINIMAL = ("--net",)

_ALWAYS = frozenset({G.OWN_HOME, G.SCRUBBED_ENV, G.DEAD_PROXIES, G.OUTPUT_CAP, G.TIMEOUT})
_MINIMAL = _ALWAYS | {G.NO_NETWORK, G.NO_CAPABILITIES}
_FULL = _MINIMAL | {G.OWN_PID_NAMESPACE, G.TREE_KILLED}
# An unprivileged caller's unshare process itself, of the caller's uid once it has unshared.
_RLIMIT_OVERHEAD = 1


def unshare_mapping(euid: int) -> list[str]:
    """The user namespace of an unprivileged caller's run: the caller mapped to itself.

    A non-root uid inside keeps no capability across exec. A root caller gets none: it needs
    none to unshare, and its run drops to a leased uid instead (see :func:`drop_to`).
    """
    if euid == 0:
        return []
    return ["--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}"]


def drop_to(setpriv: str, uid: int) -> list[str]:
    """The ``setpriv`` words that make the rest of the command uid ``uid``, and nothing more."""
    return [
        setpriv,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        # A uid change clears the parent-death signal that unshare --kill-child armed.
        "--pdeathsig=KILL",
        "--",
    ]


@dataclass(frozen=True)
class UnshareProbe(Probe):
    """Whether unshare gets a PID namespace here (``full``) or only the network one."""

    full: bool = False
    setpriv: str | None = None
    """A root caller's: the setpriv that drops the run to its uid."""


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
        user = () if host.euid == 0 else ("user",)
        own = host.own_namespaces
        full = [unshare, *mapping, *UNSHARE_FULL, "--", *REPORT_NAMESPACES]
        ok, why_not_full = try_run(full, own, ("net", *user, "pid"))
        minimal = [unshare, *mapping, *UNSHARE_MINIMAL, "--", *REPORT_NAMESPACES]
        ok_minimal, detail = (True, None) if ok else try_run(minimal, own, ("net", *user))
        if not ok_minimal:
            return UnshareProbe(host, False, None, detail)
        setpriv = host.which("setpriv") if host.euid == 0 else None
        if host.euid == 0 and setpriv is None:
            missing = "setpriv not found on PATH: a root caller's run could not leave root"
            return UnshareProbe(host, False, None, missing)
        lacks = None if ok else f"no PID namespace ({why_not_full})"
        return UnshareProbe(host, True, unshare, lacks, full=ok, setpriv=setpriv)

    def guarantees(self, probe: Probe, *, memory: bool, processes: bool) -> frozenset[Guarantee]:
        """Namespaces only, never host root, and the limits (which bind: the run is not root).

        RLIMIT_AS holds (no capability in the initial namespace raises it), and so does
        RLIMIT_NPROC: a root caller's run counts its own uid's processes, an unprivileged
        caller's every process of the caller.
        """
        assert isinstance(probe, UnshareProbe)
        held = set(_FULL if probe.full else _MINIMAL) | {G.NOT_HOST_ROOT}
        if not probe.full and probe.host.euid == 0:
            # Without a PID namespace, a root caller's run is still the only user of its uid:
            # every process of it is killed when the run ends (Launch.sweep_uid).
            held.add(G.TREE_KILLED)
        if probe.full:
            # unshare waits for its init from outside the run's PID namespace: invisible to it.
            held.add(G.TRUSTED_EXIT_STATUS)
        if memory and probe.host.prlimit is not None:
            held.add(G.MEMORY_LIMIT)
        if processes and probe.host.prlimit is not None:
            held.add(G.PROCESS_LIMIT)
        return frozenset(held)

    def launch(self, probe: Probe, request: Request) -> Launch:
        """Build ``[setpriv --pdeathsig KILL] unshare MAPPING FLAGS -- [prlimit ...] ARGV``.

        A root caller's gets ``setpriv --reuid UID ...`` right before ARGV (after prlimit,
        which root may still run from anywhere); OSError when that uid cannot reach what the
        run needs.
        """
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
        drop: list[str] = []
        overhead = _RLIMIT_OVERHEAD
        if request.run_uid is not None:
            assert probe.setpriv is not None
            needed = needed_by_run(
                request.executable,
                request.env["PATH"],
                policy.project_dir,
                (*policy.readable, *policy.trusted_readable),
            )
            check_reachable(needed, request.run_uid, also=(HOST_BACKEND_HINT,))
            drop = drop_to(probe.setpriv, request.run_uid)
            # unshare itself stays root: the run's uid counts the run alone.
            overhead = 0
        nproc = None
        if limits.max_processes is not None and host.prlimit is not None:
            nproc = limits.max_processes + overhead
        prefix = prlimit_prefix(host.prlimit, limits.memory_mb, nproc) if host.prlimit else []
        flags = UNSHARE_FULL if probe.full else UNSHARE_MINIMAL
        # unshare, unlike bwrap, does not die with its parent by itself: setpriv arms it.
        argv = [*host.pdeathsig, probe.executable, *unshare_mapping(host.euid), *flags, "--"]
        argv += [*prefix, *drop, *policy.argv]
        return Launch(
            argv,
            request.env,
            request.work.path,
            guarantees,
            child_is_init=probe.full,
            sweep_uid=None if probe.full else request.run_uid,
        )

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """Judge unshare's exit status: its command's (a signal as 128+N is a plain code)."""
        assert execution.returncode is not None
        return exit_verdict(execution.returncode, expect_exit)


BACKEND = Unshare()
