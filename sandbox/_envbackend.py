"""The ``env`` backend: a fresh work dir, a scrubbed environment and limits; no isolation.

Used only when asked for by name. Python children get a socket guard (best effort, not a
security boundary, see ``_pyguard``). A root caller's run starts as the uid leased for it (no
groups), so it is never host root and its rlimits bind; it then shares the host's namespaces
with every process of the host, but no uid with any of them.

Known gaps, never claimed (``work-dir-only-writable`` is not held): a file the run leaves in a
world-writable host directory (/tmp, /var/tmp, /dev/shm) outlives it, readable by a later run
that leases the same uid; an unprivileged caller's concurrent runs all execute as that caller's
uid and can read what each other leaves there, and signal each other (no PID namespace).
"""

from __future__ import annotations

import os
from pathlib import Path

from sandbox._backend import Execution, ExitVerdict, Launch, Probe, Request, exit_verdict
from sandbox._host import HostInfo
from sandbox._limits import prlimit_prefix
from sandbox._pyguard import install_guard
from sandbox._runuid import HOST_BACKEND_HINT, check_reachable, needed_by_run
from sandbox._types import Guarantee, Isolation

__all__ = ["BACKEND"]

G = Guarantee

_HELD = frozenset(
    {
        G.OWN_HOME,
        G.SCRUBBED_ENV,
        G.DEAD_PROXIES,
        G.OUTPUT_CAP,
        G.TIMEOUT,
        G.PYTHON_SOCKET_GUARD,
    }
)


class Env:
    """The run in this process's namespaces, with the environment and limits of a sandbox."""

    name = "env"
    chosen_by = frozenset({Isolation.ENV})
    work_dir_on_host = True

    def probe(self, host: HostInfo) -> Probe:
        """Always available: it needs nothing but this process."""
        return Probe(
            host,
            True,
            None,
            "best effort, not a security boundary; used only when asked for by name",
        )

    def guarantees(self, probe: Probe, *, memory: bool, processes: bool) -> frozenset[Guarantee]:
        """The environment, output and timeout, never host root, and the limits.

        The run is never root (a root caller's starts as its leased uid), so it can neither
        raise its hard limits nor escape RLIMIT_NPROC.
        """
        holds = probe.host.prlimit is not None
        held = set(_HELD) | {G.NOT_HOST_ROOT}
        if probe.host.euid == 0:
            # A root caller's run has a uid of its own: when the run ends, every process of
            # that uid is killed (Launch.sweep_uid), setsid() daemons included.
            held.add(G.TREE_KILLED)
        if memory and holds:
            held.add(G.MEMORY_LIMIT)
        if processes and holds:
            held.add(G.PROCESS_LIMIT)
        return frozenset(held)

    def launch(self, probe: Probe, request: Request) -> Launch:
        """Build ``[prlimit ...] ARGV`` with the socket guard first on PYTHONPATH.

        A root caller's starts as its leased uid; OSError when that uid cannot reach what the
        run needs (prlimit included: it runs as that uid too).
        """
        host = probe.host
        policy, work, env = request.policy, request.work, request.env
        limits = policy.limits
        guarantees = self.guarantees(
            probe,
            memory=limits.memory_mb is not None,
            processes=limits.max_processes is not None,
        )
        # The real file: a root caller's run execs it as its own uid, which may not be able to
        # walk the PATH entry that named it.
        prlimit = os.path.realpath(host.prlimit) if host.prlimit else None
        prefix = prlimit_prefix(prlimit, limits.memory_mb, limits.max_processes) if prlimit else []
        if request.run_uid is not None:
            needed = needed_by_run(
                request.executable,
                env["PATH"],
                policy.project_dir,
                (*policy.readable, *policy.trusted_readable),
            )
            if prefix:
                needed.insert(0, (Path(prefix[0]), "program"))
            check_reachable(needed, request.run_uid, also=(HOST_BACKEND_HINT,))
        guard = install_guard(work.path)
        prior = env.get("PYTHONPATH")
        env["PYTHONPATH"] = f"{guard}{os.pathsep}{prior}" if prior else str(guard)
        return Launch(
            [*prefix, *policy.argv],
            env,
            work.path,
            guarantees,
            user=request.run_uid,
            kill_group_on_exit=True,
            sweep_uid=request.run_uid,
        )

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """The run is our direct child: its wait status is the verdict."""
        assert execution.returncode is not None
        return exit_verdict(execution.returncode, expect_exit)


BACKEND = Env()
