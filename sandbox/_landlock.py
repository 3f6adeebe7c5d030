"""The ``landlock`` backend: a sandbox without namespaces, for hosts that refuse them.

Containers under a default seccomp profile refuse namespaces even to root, and Ubuntu's
AppArmor (GitHub's ubuntu-24.04 runners) refuses user namespaces to everyone else: bubblewrap
cannot run there. What needs no namespace still can. The sandbox's own process (the stage,
``_stage``) starts on the host, as the caller, and before it execs the run:

- makes itself undumpable and takes ``no_new_privs``; for a root caller hands the work dir to
  the run's leased uid and drops to it (no capability in any set, never host root);
- builds a Landlock domain (``landlock-fs``): writes only beneath the fresh work dir (and to
  ``/dev/null`` and its kind), reads only the system's directories, the project, the program and its
  interpreter, and what the caller vouched for (never a home, never the host's ``/tmp``);
  binding and connecting TCP refused; abstract unix sockets and signals scoped to the run;
- becomes the run's subreaper, so that whatever the run leaves (``setsid()`` daemons
  included) comes up to it and is killed when the run ends or the caller goes;
- forks the run, which takes its rlimits, enters the domain and, last, the seccomp filter
  (``_seccomp``, without a network namespace: datagram and raw inet sockets refused, unix
  sockets only as connected pairs), then execs the program;
- reports how the run ended on a pipe the run never holds.

It is available only where the kernel's Landlock ABI has signal and abstract-socket scoping
(6 and later): below that a run of the caller's uid could signal the caller's other processes.
What it cannot give is named, never claimed: its own PID namespace and ``/proc``, a private
``/tmp`` (the run cannot reach the host's at all), a read-only remount of the host, a work dir
that is its own ``nosuid`` in-memory mount (``work-dir-only-writable``: Landlock's rule is
``landlock-fs``; ``no_new_privs`` makes a setuid file the run makes harmless), a disk limit.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from sandbox._backend import ExitVerdict, Launch, Probe, Request, exit_verdict, first_line
from sandbox._bubblewrap import parse_report, stage_code, stage_loader
from sandbox._host import HostInfo
from sandbox._process import Execution
from sandbox._runuid import check_reachable, needed_by_run, shebang_interpreter
from sandbox._seccomp import syscall_filter
from sandbox._types import Guarantee, Isolation, Status
from sandbox._workdir import LAYOUT

__all__ = ["BACKEND", "MIN_ABI"]

G = Guarantee

MIN_ABI = 6
"""Landlock's scoping of signals and abstract unix sockets arrived in ABI 6 (Linux 6.12)."""

_SYSTEM = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/etc",
    "/opt",
    "/var/lib",
    "/proc",
    "/sys",
    "/dev",
)
"""What every run may read: the system's programs, libraries and configuration. Not /home,
/root, /tmp, /var/tmp, /run or /mnt: the homes and what other users leave there."""

_HELD = frozenset(
    {
        G.OWN_HOME,
        G.SCRUBBED_ENV,
        G.DEAD_PROXIES,
        G.NO_NETWORK,
        G.TREE_KILLED,
        G.HOME_MASKED,
        G.NO_CAPABILITIES,
        G.OUTPUT_CAP,
        G.TIMEOUT,
        G.NO_FS_UNIX_SOCKETS,
        G.NOT_HOST_ROOT,
        G.SYSCALL_FILTER,
        G.TRUSTED_EXIT_STATUS,
        G.LANDLOCK_FS,
        G.LANDLOCK_NET,
        G.LANDLOCK_SCOPE,
    }
)


class Landlock:
    """Landlock, seccomp, rlimits and a subreaper, without namespaces (see the module)."""

    name = "landlock"
    chosen_by = frozenset({Isolation.AUTO, Isolation.LANDLOCK})
    work_dir_on_host = True

    def probe(self, host: HostInfo) -> Probe:
        """Available where the kernel's Landlock has scoping and the filter fits the machine."""
        if host.landlock_abi < MIN_ABI:
            found = f"ABI {host.landlock_abi}" if host.landlock_abi else "no Landlock"
            return Probe(
                host,
                False,
                None,
                f"landlock needs Landlock ABI {MIN_ABI} or later (signal and abstract-socket "
                f"scoping); this kernel has {found}",
            )
        if syscall_filter(own_network=False) is None:
            return Probe(host, False, None, "landlock: no seccomp filter for this architecture")
        return Probe(host, True, sys.executable)

    def guarantees(self, probe: Probe, *, memory: bool, processes: bool) -> frozenset[Guarantee]:
        """The set above, and the limits the policy sets (rlimits the run cannot raise)."""
        del probe  # the same on every host where it is available
        held = set(_HELD)
        if memory:
            held.add(G.MEMORY_LIMIT)
        if processes:
            held.add(G.PROCESS_LIMIT)
        return frozenset(held)

    def launch(self, probe: Probe, request: Request) -> Launch:
        """The stage on the host, with its settings; OSError when the run cannot reach a path."""
        policy, work, env = request.policy, request.work, request.env
        limits = policy.limits
        readable = _readable(request)
        if request.run_uid is not None:
            # The program and the project must be the run's to use; a readable path it cannot
            # reach by permission stays out of its reach, as any other path of root's.
            needed = needed_by_run(request.executable, env["PATH"], policy.project_dir, ())
            check_reachable(needed, request.run_uid)
        guarantees = self.guarantees(
            probe,
            memory=limits.memory_mb is not None,
            processes=limits.max_processes is not None,
        )
        report_read, report_write = os.pipe()
        control_read, control_write = os.pipe()
        program = syscall_filter(own_network=False)
        assert program is not None
        filter_read, filter_write = os.pipe()
        os.write(filter_write, program)
        os.close(filter_write)
        stage = [
            f"report={report_write}",
            f"control={control_read}",
            f"work={work.path}",
            f"seccomp={filter_read}",
            "subreaper=1",
            f"landlock={probe.host.landlock_abi}",
            f"write={work.path}",
            *(f"read={path}" for path in readable),
            *(f"dir={d}" for d in LAYOUT),
        ]
        if request.run_uid is not None:
            stage += [f"uid={request.run_uid}", f"gid={request.run_uid}"]
        if limits.memory_mb is not None:
            stage.append(f"memory={limits.memory_mb * 1024 * 1024}")
        if limits.max_processes is not None:
            # The stage and the run share the count: the stage is one more task.
            stage.append(f"nproc={limits.max_processes + 1}")
        # The stage's code, compiled once per process, read from a pipe (as under bubblewrap).
        code_read, code_write = os.pipe()
        os.write(code_write, stage_code())
        os.close(code_write)
        launch = Launch(
            [sys.executable, "-I", "-S", "-c", stage_loader(code_read), *stage, "--", *policy.argv],
            env,
            work.path,
            guarantees,
            pass_fds=(report_write, control_read, filter_read, code_read),
            report_fd=report_read,
            control_fd=control_write,
            kill_group_on_exit=True,
            stop_by_control=True,
            sweep_uid=request.run_uid,
        )
        launch._close_after_spawn += [report_write, control_read, filter_read, code_read]
        return launch

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """Judge by the stage's report alone (the run never holds its pipe)."""
        report = parse_report(execution.report)
        if "error" in report:
            return ExitVerdict(Status.NOT_STARTED, None, f"sandbox: {report['error']}")
        if "signal" in report:
            verdict = exit_verdict(-int(report["signal"]), expect_exit)
            return ExitVerdict(verdict.status, None, verdict.detail)
        if "exit" in report:
            return exit_verdict(int(report["exit"]), expect_exit)
        first = first_line(execution.stderr).decode("utf-8", "replace")
        detail = "the sandbox's own process reported no exit status"
        return ExitVerdict(Status.CRASHED, None, f"{detail} ({first})" if first else detail)


def _readable(request: Request) -> list[str]:
    """What the run may read: the system, the project, the program and what was vouched for."""
    policy = request.policy
    paths = [p for p in _SYSTEM if Path(p).exists()]
    programs = [request.executable]
    interpreter = shebang_interpreter(request.executable, request.env["PATH"])
    if interpreter is not None:
        programs.append(interpreter)
    for program in programs:
        real = Path(os.path.realpath(program))
        # The program's own installation: a virtualenv's or a Python's prefix, a tool's tree.
        paths += [str(real), str(real.parent.parent)]
    if policy.project_dir is not None:
        paths.append(str(policy.project_dir))
    paths += [str(p) for p in (*policy.readable, *policy.trusted_readable)]
    homes = _homes(request)
    kept = []
    for path in dict.fromkeys(paths):
        resolved = Path(path)
        if not resolved.exists() or resolved == Path("/"):
            continue
        # A home, or what holds one, would show all of it; a path inside one is shown alone.
        if any(resolved == home or resolved in home.parents for home in homes):
            continue
        kept.append(path)
    return kept


def _homes(request: Request) -> list[Path]:
    """The homes no run may read whole: the caller's $HOME (both kinds) and its passwd entry's."""
    import pwd  # noqa: PLC0415 - only a launch needs it

    found = [request.source.get("HOME", ""), os.environ.get("HOME", "")]
    with contextlib.suppress(KeyError):
        found.append(pwd.getpwuid(os.geteuid()).pw_dir)
    return [Path(home) for home in found if home and home != "/"]


BACKEND = Landlock()
