"""The bubblewrap backend: every guarantee of the contract, measured on this machine."""

from __future__ import annotations

import functools
import os
import pwd
import signal
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sandbox._backend import (
    EXEC_FAILURES,
    ExitVerdict,
    Launch,
    Probe,
    Request,
    exit_verdict,
    first_line,
    signal_name,
)
from sandbox._host import NAMESPACE_KINDS, NOTHING, REPORT_NAMESPACES, HostInfo, try_run
from sandbox._limits import PidsCgroup, prlimit_prefix
from sandbox._process import Execution
from sandbox._seccomp import unix_socket_filter
from sandbox._types import CONTRACT_GUARANTEES, Guarantee, Isolation, Status
from sandbox._workdir import in_memory_dirs

G = Guarantee

# bwrap's own flags, shared by every run (the per-run mounts are added by the launch). These
# are the measured set: --unshare-pid with --die-with-parent and --new-session leaves no
# survivor; --unshare-user is forced (as root bwrap would otherwise skip the user namespace)
# and --cap-drop ALL removes what a root caller would keep.
BWRAP_FLAGS = (
    "--unshare-all",
    "--unshare-user",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
)
BWRAP_BASE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")

_ROOT = Path("/")
_TMP = Path("/tmp")
_BASE = frozenset(CONTRACT_GUARANTEES) - {G.MEMORY_LIMIT, G.PROCESS_LIMIT, G.NO_FS_UNIX_SOCKETS}
# Tasks bubblewrap adds to a run: its outer process and the namespace's init.
_RLIMIT_OVERHEAD = 1
_CGROUP_OVERHEAD = 2


@dataclass(frozen=True)
class BubblewrapProbe(Probe):
    """What bubblewrap can do here: the optional hardening flag and the seccomp filter."""

    disable_userns: bool = False
    seccomp: bool = False


class Bubblewrap:
    """Namespaces, a read-only root with a private /tmp and masked homes, no capabilities."""

    name = "bwrap"
    chosen_by = frozenset({Isolation.AUTO, Isolation.NAMESPACE})
    # bubblewrap mounts HOME and TMPDIR in memory inside the sandbox.
    makes_dirs_on_disk = False

    def probe(self, host: HostInfo) -> BubblewrapProbe:
        """Find bwrap on PATH and check that it really creates every namespace."""
        bwrap = host.which("bwrap")
        if bwrap is None:
            return BubblewrapProbe(host, False, None, "bwrap not found on PATH")
        argv = [bwrap, *BWRAP_BASE_MOUNTS, *BWRAP_FLAGS, "--", *REPORT_NAMESPACES]
        ok, detail = try_run(argv, host.own_namespaces, NAMESPACE_KINDS)
        if not ok:
            return BubblewrapProbe(host, False, None, detail)
        seccomp = _seccomp_loads(bwrap)
        return BubblewrapProbe(
            host,
            True,
            bwrap,
            None if seccomp else "no seccomp filter: filesystem unix sockets stay connectable",
            disable_userns=_accepts(bwrap, "--disable-userns"),
            seccomp=seccomp,
        )

    def guarantees(self, probe: Probe, *, memory: bool, processes: bool) -> frozenset[Guarantee]:
        """All of the contract; the socket filter and limits where this machine allows them."""
        assert isinstance(probe, BubblewrapProbe)
        held = set(_BASE)
        if probe.seccomp:
            held.add(G.NO_FS_UNIX_SOCKETS)
        # RLIMIT_AS holds: the run has no capability to raise it again.
        if memory and probe.host.prlimit is not None:
            held.add(G.MEMORY_LIMIT)
        if processes and _process_mechanism(probe.host) is not None:
            held.add(G.PROCESS_LIMIT)
        return frozenset(held)

    def launch(self, probe: Probe, request: Request) -> Launch:
        """Build bwrap's command line: mounts, masked homes, binds back, work dir, filters."""
        assert isinstance(probe, BubblewrapProbe)
        policy, work = request.policy, request.work
        assert probe.executable is not None
        host = probe.host
        limits = policy.limits
        guarantees = self.guarantees(
            probe,
            memory=limits.memory_mb is not None,
            processes=limits.max_processes is not None,
        )
        mechanism = _process_mechanism(host)
        nproc = None
        if limits.max_processes is not None and mechanism == "rlimit":
            nproc = limits.max_processes + _RLIMIT_OVERHEAD
        prefix = prlimit_prefix(host.prlimit, limits.memory_mb, nproc) if host.prlimit else []
        status_read, status_write = os.pipe()
        launch = Launch([], request.env, work.path, guarantees, status_fd=status_read)
        launch._close_after_spawn.append(status_write)
        try:
            homes = _homes(request.source)
            argv = [probe.executable, *BWRAP_BASE_MOUNTS]
            for home in homes:
                argv += ["--tmpfs", home]
            visible = [policy.project_dir, *policy.readable, Path(request.executable)]
            bound = _to_bind_back((p for p in visible if p is not None), homes)
            for path in bound:
                argv += ["--ro-bind-try", path, path]
            if any(
                Path(home) == Path(b) or Path(b) in Path(home).parents
                for home in homes
                for b in bound
            ):
                # The policy asked for a whole home (as project dir or readable path): say so.
                launch.guarantees -= {G.HOME_MASKED}
            argv += ["--bind", str(work.path), str(work.path), *in_memory_dirs(work.path)]
            argv += ["--chdir", str(work.path)]
            argv += [*BWRAP_FLAGS, "--json-status-fd", str(status_write)]
            pass_fds = [status_write]
            if probe.disable_userns:
                argv.append("--disable-userns")
            program = unix_socket_filter() if probe.seccomp else None
            if program is not None:
                seccomp_read, seccomp_write = os.pipe()
                launch._close_after_spawn.append(seccomp_read)
                # A few hundred bytes: far below a pipe's capacity, so this cannot block.
                os.write(seccomp_write, program)
                os.close(seccomp_write)
                argv += ["--seccomp", str(seccomp_read)]
                pass_fds.append(seccomp_read)
            if limits.max_processes is not None and mechanism == "cgroup":
                assert host.pids_cgroup is not None
                launch.cgroup = PidsCgroup(
                    host.pids_cgroup, limits.max_processes + _CGROUP_OVERHEAD
                )
                argv = [*launch.cgroup.wrapper(), *argv]
            launch.argv = [*argv, "--", *prefix, *policy.argv]
            launch.pass_fds = tuple(pass_fds)
        except BaseException:
            launch.release()
            raise
        return launch

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """Take the exit code from bubblewrap's status report; without one, bwrap failed."""
        if "exit-code" not in execution.status:
            # bubblewrap reports an exit code whenever the command ran; without one the sandbox
            # itself failed (or the exec did).
            first = first_line(execution.stderr)
            if first.startswith(EXEC_FAILURES):
                return ExitVerdict(Status.NOT_STARTED, None, first.decode("utf-8", "replace"))
            code = execution.returncode
            why = first.decode("utf-8", "replace") or f"exit status {code}"
            return ExitVerdict(Status.CRASHED, None, f"bubblewrap failed: {why}")
        code = execution.status["exit-code"]
        verdict = exit_verdict(code, execution.stderr, expect_exit)
        if verdict.status is Status.FAILED and 128 < code <= 128 + signal.SIGRTMAX:
            # bubblewrap folds "killed by signal N" into exit status 128+N; a program that
            # really exits with such a status is reported as crashed too (a failure either way).
            name = signal_name(code - 128)
            return ExitVerdict(Status.CRASHED, None, f"killed by {name} (exit status {code})")
        return verdict


def _process_mechanism(host: HostInfo) -> str | None:
    """Say how the process count is capped.

    RLIMIT_NPROC binds everyone but host root, whom a pids cgroup caps instead (the read-only
    /sys and the dropped capabilities keep the run in it).
    """
    if host.euid == 0:
        return "cgroup" if host.pids_cgroup is not None else None
    return "rlimit" if host.prlimit is not None else None


def _accepts(bwrap: str, *flags: str) -> bool:
    """Tell whether bwrap accepts an optional hardening flag (``--disable-userns`` is 0.8+)."""
    return try_run([bwrap, *BWRAP_BASE_MOUNTS, *BWRAP_FLAGS, *flags, "--", *NOTHING])[0]


def _seccomp_loads(bwrap: str) -> bool:
    """Tell whether bwrap can load the unix-socket filter on this kernel and architecture."""
    program = unix_socket_filter()
    if program is None:
        return False
    read_end, write_end = os.pipe()
    try:
        # A few hundred bytes: far below a pipe's capacity, so this write cannot block.
        os.write(write_end, program)
        os.close(write_end)
        argv = [bwrap, *BWRAP_BASE_MOUNTS, *BWRAP_FLAGS, "--seccomp", str(read_end)]
        return try_run([*argv, "--", *NOTHING], pass_fds=(read_end,))[0]
    finally:
        os.close(read_end)


@functools.cache
def _passwd_home(uid: int) -> str | None:
    """Look up the password database's home of ``uid`` once (each lookup parses a file)."""
    try:
        return pwd.getpwuid(uid).pw_dir
    except KeyError:
        return None


def _homes(source: Mapping[str, str]) -> list[str]:
    """List the invoking user's homes to mask: $HOME (ours, the source's) and the passwd one."""
    candidates = [source.get("HOME"), os.environ.get("HOME"), _passwd_home(os.getuid())]
    homes: list[str] = []
    for candidate in candidates:
        if not candidate or not Path(candidate).is_absolute():
            continue
        real = Path(candidate).resolve()
        # "/" cannot be masked without masking everything; /tmp is private already; a home
        # that does not exist (nobody's /nonexistent) has nothing to hide and no mount point.
        if real in (_ROOT, _TMP) or _TMP in real.parents or not real.is_dir():
            continue
        if str(real) not in homes:
            homes.append(str(real))
    return homes


def _to_bind_back(paths: Iterable[Path], homes: list[str]) -> list[str]:
    """Pick the paths (and real targets of symlinks) that a masked home or the private /tmp hides.

    Everything else is already visible through the read-only root; binding it again would only
    add mounts (and fail on a symlink whose target is hidden). Parents come before children, and
    a path inside one already bound is left out.
    """
    hiding = [Path(home) for home in homes] + [_TMP]
    chosen: list[Path] = []
    for path in paths:
        absolute = Path(path).absolute()
        for candidate in (absolute, absolute.resolve()):
            if any(h == candidate or h in candidate.parents for h in hiding):
                chosen.append(candidate)
    chosen.sort(key=lambda p: len(p.parts))
    kept: list[Path] = []
    for candidate in chosen:
        if not any(k == candidate or k in candidate.parents for k in kept):
            kept.append(candidate)
    return [str(k) for k in kept]


BACKEND = Bubblewrap()
