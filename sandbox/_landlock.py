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
  (``_seccomp`` without namespaces: only TCP of the inet sockets, netlink only for routing,
  unix sockets only as connected pairs, no ``listen``, no SysV IPC or POSIX queues; and for an
  unprivileged caller, whose uid the run shares, no change to any file's mode, owner, times
  or attributes, which Landlock does not guard), then execs the program;
- reports how the run ended on a pipe the run never holds.

It is available only where the kernel's Landlock ABI has signal and abstract-socket scoping
(6 and later): below that a run of the caller's uid could signal the caller's other processes.
Landlock does not hide a path's existence and status (``stat`` of a file in a home works,
reading it does not), nor the host's sockets listed in ``/proc/net``; both are information,
not access. What it cannot give is named, never claimed: its own PID namespace and ``/proc``,
a private ``/tmp`` (the run cannot reach the host's at all), a read-only remount of the host,
a work dir that is its own ``nosuid`` in-memory mount (``work-dir-only-writable``: Landlock's
rule is ``landlock-fs``; ``no_new_privs`` makes a setuid file the run makes harmless), a disk
limit.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from sandbox._backend import (
    Execution,
    ExitVerdict,
    Launch,
    Probe,
    Request,
    exit_verdict,
    first_line,
)
from sandbox._host import HostInfo
from sandbox._limits import open_files
from sandbox._runuid import check_reachable, needed_by_run, shebang_interpreter
from sandbox._seccomp import syscall_filter
from sandbox._stagecode import parse_report, stage_code, stage_loader
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
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
)
"""What every run may read: the system's programs, libraries and configuration, and the
harmless devices. Not /home, /root, /tmp, /var/tmp, /dev/shm, /dev/pts, /run or /mnt: the homes,
what other users leave there, and their terminals."""
_SHARED = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")
"""World-writable places: what lies in them is other users', never shown whole."""

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
        if not Path(f"/proc/self/task/{os.getpid()}/children").exists():
            # Without it the subreaper cannot find what the run left (CONFIG_PROC_CHILDREN).
            return Probe(host, False, None, "landlock: this kernel lists no children in /proc")
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
        # A root caller's run is a uid that owns nothing outside it; anyone else's run is the
        # caller's own uid, whose files' modes and owners Landlock does not guard.
        program = syscall_filter(own_network=False, own_files=request.run_uid is not None)
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
        stage.append(f"files={open_files()}")
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
    """What the run may read: the system, the project, the program and what was vouched for.

    Every path is resolved first. A home, a world-writable place or anything that holds one
    is never shown whole: inside them only the project dir and vouched paths are, and a
    program's installation (its directory's parent) is shown only outside them.
    """
    policy = request.policy
    homes = _homes(request)
    shared = [Path(p) for p in _SHARED]
    private = [*homes, *shared]

    def holds_private(path: Path) -> bool:
        return path == Path("/") or any(path == p or path in p.parents for p in private)

    def inside_private(path: Path) -> bool:
        return any(p in path.parents for p in private)

    kept: list[Path] = [Path(p) for p in _SYSTEM if Path(p).exists()]
    programs = [request.executable]
    interpreter = shebang_interpreter(request.executable, request.env["PATH"])
    if interpreter is not None:
        programs.append(interpreter)
    for program in programs:
        real = Path(os.path.realpath(program))
        kept.append(real)
        prefix = real.parent.parent
        # A tool's or a Python's own tree, where it is not someone's home or /tmp.
        if not holds_private(prefix) and not inside_private(prefix):
            kept.append(prefix)
    vouched = [Path(os.path.realpath(p)) for p in policy.trusted_readable]
    if policy.project_dir is not None:
        vouched.append(Path(os.path.realpath(policy.project_dir)))
    kept += [p for p in vouched if not holds_private(p)]
    for path in policy.readable:
        real = Path(os.path.realpath(path))
        # From a file's content: shown only outside homes and /tmp, or inside the project.
        within_project = any(v == real or v in real.parents for v in vouched)
        if not holds_private(real) and (within_project or not inside_private(real)):
            kept.append(real)
    return [str(p) for p in dict.fromkeys(kept) if p.exists()]


def _homes(request: Request) -> list[Path]:
    """The homes no run may read whole: the caller's $HOME (both kinds) and its passwd entry's."""
    import pwd  # noqa: PLC0415 - only a launch needs it

    found = [request.source.get("HOME", ""), os.environ.get("HOME", "")]
    with contextlib.suppress(KeyError):
        found.append(pwd.getpwuid(os.geteuid()).pw_dir)
    return [Path(os.path.realpath(home)) for home in found if home and home != "/"]


BACKEND = Landlock()
