"""The ``env`` backend: a fresh work dir, a scrubbed environment and limits; no isolation.

Used only when asked for by name. Python children get a socket guard (best effort, not a
security boundary, see ``_pyguard``).
"""

from __future__ import annotations

import os

from sandbox._backend import ExitVerdict, Launch, Probe, Request, exit_verdict
from sandbox._host import HostInfo
from sandbox._limits import prlimit_prefix
from sandbox._process import Execution
from sandbox._pyguard import install_guard
from sandbox._types import Guarantee, Isolation

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
        """The environment, output and timeout, and the limits the run cannot lift.

        A root run could raise its own hard limit, and root is exempt from RLIMIT_NPROC.
        """
        host = probe.host
        holds = host.prlimit is not None and host.euid != 0
        held = set(_HELD)
        if host.euid != 0:
            held.add(G.NOT_HOST_ROOT)
        if memory and holds:
            held.add(G.MEMORY_LIMIT)
        if processes and holds:
            held.add(G.PROCESS_LIMIT)
        return frozenset(held)

    def launch(self, probe: Probe, request: Request) -> Launch:
        """Build ``[prlimit ...] ARGV`` with the socket guard first on PYTHONPATH."""
        host = probe.host
        policy, work, env = request.policy, request.work, request.env
        limits = policy.limits
        guarantees = self.guarantees(
            probe,
            memory=limits.memory_mb is not None,
            processes=limits.max_processes is not None,
        )
        nproc = limits.max_processes if host.euid != 0 else None
        prefix = prlimit_prefix(host.prlimit, limits.memory_mb, nproc) if host.prlimit else []
        guard = install_guard(work.path)
        prior = env.get("PYTHONPATH")
        env["PYTHONPATH"] = f"{guard}{os.pathsep}{prior}" if prior else str(guard)
        return Launch([*prefix, *policy.argv], env, work.path, guarantees, kill_group_on_exit=True)

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """The run is our direct child: its wait status is the verdict."""
        assert execution.returncode is not None
        return exit_verdict(execution.returncode, execution.stderr, expect_exit)


BACKEND = Env()
