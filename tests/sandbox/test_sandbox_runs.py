"""Runs through the real backends: statuses, limits, output cap, cancel, kill_all, threads."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sbx_support import (
    BACKENDS,
    PROBE,
    REPO,
    RssSampler,
    World,
    driver_spec,
    needs_bwrap,
    needs_landlock,
    needs_root,
    nobody_python,
    probe_argv,
    processes_with,
    run_as_nobody,
    unshare_only_path,
)

import sandbox
import sandbox._backend
import sandbox._process
from sandbox import Guarantee, Isolation, Limits, Status
from sandbox._limits import OPEN_FILES
from sandbox._registry import wait_gone

pytestmark = pytest.mark.sandbox

NAMESPACE_BACKENDS = BACKENDS[:2]


def _policy(
    backend: str, world: World, tmp_path: Path, argv: tuple[str, ...], **kw: Any
) -> sandbox.Policy:
    """A policy that lands on ``backend``: unshare and env are used only when named."""
    if backend == "unshare":
        path = unshare_only_path(tmp_path)
        kw.setdefault("source_env", {**world.source_env, "PATH": path})
        kw.setdefault("isolation", Isolation.UNSHARE)
    elif backend == "env":
        kw.setdefault("isolation", Isolation.ENV)
    return world.policy(argv, **kw)


def _run(
    backend: str, world: World, tmp_path: Path, argv: tuple[str, ...], **kw: Any
) -> sandbox.Outcome:
    outcome = sandbox.run(_policy(backend, world, tmp_path, argv, **kw))
    assert outcome.backend == backend
    return outcome


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("code", "expect", "status"),
    [(0, 0, Status.PASSED), (3, 3, Status.PASSED), (3, 0, Status.FAILED), (0, 5, Status.FAILED)],
)
def test_exit_status_is_judged_against_expect_exit(
    backend: str, *, code: int, expect: int, status: Status, world: World, tmp_path: Path
) -> None:
    argv = ("/bin/sh", "-c", f"echo out; echo err >&2; exit {code}")
    outcome = _run(backend, world, tmp_path, argv, expect_exit=expect)
    assert (outcome.status, outcome.exit_code) == (status, code)
    assert (outcome.stdout, outcome.stderr) == ("out\n", "err\n")
    assert not outcome.stdout_truncated
    assert outcome.detail is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_segfault_is_a_crash_with_the_signal(backend: str, world: World, tmp_path: Path) -> None:
    outcome = _run(backend, world, tmp_path, probe_argv("crash", world.config([])))
    assert outcome.status is Status.CRASHED
    assert outcome.exit_code is None
    assert outcome.detail is not None
    assert "SIGSEGV" in outcome.detail


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_missing_executable_is_not_started(backend: str, world: World, tmp_path: Path) -> None:
    outcome = _run(backend, world, tmp_path, ("no-such-program-for-sandbox-tests",))
    assert outcome.status is Status.NOT_STARTED
    assert outcome.detail == "executable not found: no-such-program-for-sandbox-tests"
    assert outcome.guarantees == ()


@needs_bwrap
def test_an_executable_invisible_inside_is_not_started(world: World, tmp_path: Path) -> None:
    # Found on the host, but inside the sandbox only through a readable path it lacks.
    script = world.home / "tool"
    script.write_text("#!/var/tmp/no-such-interpreter\n", encoding="utf-8")
    script.chmod(0o755)
    outcome = sandbox.run(world.policy((str(script),)))
    assert outcome.status is Status.NOT_STARTED, outcome
    assert outcome.detail is not None
    assert "no-such-interpreter" in outcome.detail or "execvp" in outcome.detail


@pytest.mark.parametrize("backend", BACKENDS)
def test_timeout_kills_the_whole_tree(backend: str, world: World, tmp_path: Path) -> None:
    # The probe and its child both ignore SIGTERM and sleep forever.
    argv = probe_argv("sleep", world.config([]))
    outcome = _run(backend, world, tmp_path, argv, limits=Limits(timeout_s=1.0))
    assert outcome.status is Status.TIMED_OUT
    assert outcome.exit_code is None
    assert 1.0 <= outcome.duration_s < 6
    assert "sleeping" in outcome.stdout
    assert Guarantee.TIMEOUT in outcome.guarantees
    assert processes_with(world.token) == []


@pytest.mark.parametrize("backend", [*NAMESPACE_BACKENDS[:1], "env"])
def test_a_flood_is_capped_and_memory_stays_flat(
    backend: str, world: World, tmp_path: Path
) -> None:
    cap = 1 << 20
    argv = probe_argv("flood", world.config([], bytes=200 * 2**20))
    with RssSampler() as rss:
        outcome = _run(
            backend, world, tmp_path, argv, limits=Limits(timeout_s=120, output_bytes=cap)
        )
    assert outcome.status is Status.PASSED, outcome.stderr
    assert outcome.stdout_truncated
    assert not outcome.stderr_truncated
    assert len(outcome.stdout) == cap
    assert Guarantee.OUTPUT_CAP in outcome.guarantees
    assert rss.peak - rss.baseline < 32 * 2**20, (rss.baseline, rss.peak)


@pytest.mark.parametrize("backend", NAMESPACE_BACKENDS)
def test_memory_limit(backend: str, world: World, tmp_path: Path) -> None:
    argv = probe_argv("alloc", world.config([], mb=384))
    free = _run(backend, world, tmp_path, argv, limits=Limits(memory_mb=None))
    assert free.status is Status.PASSED, free.stderr
    assert Guarantee.MEMORY_LIMIT in free.not_guaranteed
    capped = _run(backend, world, tmp_path, argv, limits=Limits(memory_mb=128))
    assert capped.status is Status.FAILED
    assert "MemoryError" in capped.stderr
    assert Guarantee.MEMORY_LIMIT in capped.guarantees


@needs_bwrap
def test_process_limit(world: World, tmp_path: Path) -> None:
    argv = probe_argv("fork", world.config([], count=64))
    free = _run("bwrap", world, tmp_path, argv)
    assert (free.status, free.stdout.strip()) == (Status.PASSED, "64"), free.stderr
    capped = _run("bwrap", world, tmp_path, argv, limits=Limits(max_processes=16))
    assert capped.status is Status.PASSED, capped.stderr
    assert Guarantee.PROCESS_LIMIT in capped.guarantees
    assert int(capped.stdout) < 16


@needs_bwrap
@needs_root
def test_process_limit_for_a_non_root_caller(world: World) -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")
    spec = {
        "argv": probe_argv("fork", world.config([], count=64), python=python),
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "source_env": {"PATH": "/usr/bin:/bin", "HOME": str(world.home)},
        "limits": {"max_processes": 16, "memory_mb": 512},
    }
    outcome = run_as_nobody(spec, python)
    assert (outcome["backend"], outcome["status"]) == ("bwrap", "passed"), outcome["stderr"]
    assert {"process-limit", "memory-limit"} <= set(outcome["guarantees"])
    assert int(outcome["stdout"]) < 16


@needs_bwrap
def test_the_oom_killer_takes_the_run_before_the_sandbox_s_own_process(world: World) -> None:
    # The run starts with the highest score; the stage, pid 1, keeps the caller's. The stage
    # lowers its own back right after the run's exec, which the run may outpace on a busy
    # machine: the run looks at it a moment later.
    caller = Path("/proc/self/oom_score_adj").read_text(encoding="ascii").strip()
    script = "cat /proc/self/oom_score_adj; sleep 0.3; cat /proc/1/oom_score_adj"
    outcome = sandbox.run(world.policy(("/bin/sh", "-c", script)))
    assert outcome.status is Status.PASSED, outcome.stderr
    assert outcome.stdout.split() == ["1000", caller]


@needs_root
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_process_limit_binds_a_root_caller_s_run(
    backend: str, world: World, tmp_path: Path
) -> None:
    # Host root is exempt from RLIMIT_NPROC; the run's leased uid is not, and counts it alone.
    argv = probe_argv("fork", world.config([], count=8))
    free = _run(backend, world, tmp_path, argv)
    assert (free.status, free.stdout.strip()) == (Status.PASSED, "8"), free.stderr
    outcome = _run(backend, world, tmp_path, argv, limits=Limits(max_processes=4))
    assert outcome.status is Status.PASSED, outcome.stderr
    assert Guarantee.PROCESS_LIMIT in outcome.guarantees
    assert int(outcome.stdout) < 4


def _start(
    policy: sandbox.Policy, **kw: Any
) -> tuple[threading.Thread, dict[str, sandbox.Outcome]]:
    found: dict[str, sandbox.Outcome] = {}

    def target() -> None:
        found["outcome"] = sandbox.run(policy, **kw)

    thread = threading.Thread(target=target)
    thread.start()
    return thread, found


def _wait_for(predicate: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_stops_a_run_promptly(backend: str, world: World, tmp_path: Path) -> None:
    cancel = threading.Event()
    argv = probe_argv("sleep", world.config([]))
    thread, found = _start(_policy(backend, world, tmp_path, argv), cancel=cancel)
    _wait_for(lambda: len(processes_with(world.token)) >= 2)
    started = time.monotonic()
    cancel.set()
    thread.join(5)
    assert not thread.is_alive()
    assert time.monotonic() - started < 2
    outcome = found["outcome"]
    assert (outcome.status, outcome.detail) == (Status.CRASHED, "interrupted")
    assert processes_with(world.token) == []


def test_cancel_before_the_start_runs_nothing(world: World) -> None:
    cancel = threading.Event()
    cancel.set()
    marker = world.host_tmp / "ran"
    outcome = sandbox.run(
        world.policy(("/bin/sh", "-c", f"touch {marker}"), isolation=Isolation.ENV),
        cancel=cancel,
    )
    assert (outcome.status, outcome.detail) == (Status.NOT_STARTED, "interrupted")
    assert not marker.exists()


@needs_bwrap
def test_kill_all_ends_every_live_run(world: World) -> None:
    registry = sandbox.ProcessRegistry()
    argv = probe_argv("sleep", world.config([]))
    runs = [_start(world.policy(argv), registry=registry) for _ in range(3)]
    _wait_for(lambda: registry.live_count() == 3 and len(processes_with(world.token)) >= 6)
    assert registry.kill_all() == 3
    assert registry.live_count() == 0
    for thread, found in runs:
        thread.join(5)
        assert not thread.is_alive()
        assert (found["outcome"].status, found["outcome"].detail) == (Status.CRASHED, "interrupted")
    assert processes_with(world.token) == []


def test_module_kill_all_uses_the_default_registry(world: World) -> None:
    argv = probe_argv("sleep", world.config([]))
    thread, found = _start(world.policy(argv, isolation=Isolation.ENV))
    _wait_for(lambda: len(processes_with(world.token)) >= 2)
    assert sandbox.kill_all() == 1
    thread.join(5)
    assert found["outcome"].detail == "interrupted"
    assert processes_with(world.token) == []


@needs_bwrap
def test_parallel_runs_get_their_own_work_dirs(world: World, tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    (fixtures / "sub").mkdir(parents=True)
    (fixtures / "sub" / "data.txt").write_text("fixture\n", encoding="utf-8")
    script = 'cat sub/data.txt; echo "$PWD $HOME $TMPDIR"; touch "$TMPDIR/mine"; ls -A "$TMPDIR"'
    policy = world.policy(("/bin/sh", "-c", script), fixtures=fixtures)
    runs = [_start(policy) for _ in range(6)]
    outcomes = []
    for thread, found in runs:
        thread.join(30)
        outcomes.append(found["outcome"])
    assert {o.status for o in outcomes} == {Status.PASSED}
    lines = [o.stdout.splitlines() for o in outcomes]
    assert {line[0] for line in lines} == {"fixture"}
    assert {line[2] for line in lines} == {"mine"}
    work_dirs = [line[1].split()[0] for line in lines]
    assert len(set(work_dirs)) == 6
    for work_dir, line in zip(work_dirs, lines, strict=True):
        _, home, tmp = line[1].split()
        assert (home, tmp) == (f"{work_dir}/.home", f"{work_dir}/.tmp")
        assert not Path(work_dir).exists()  # removed after the run


_LOCKING = "mkdir -p locked/inner && touch locked/inner/f && chmod 000 locked/inner locked; pwd"


def test_the_work_dir_is_removed_even_when_the_run_locks_it(world: World) -> None:
    outcome = sandbox.run(world.policy(("/bin/sh", "-c", _LOCKING), isolation=Isolation.ENV))
    assert outcome.status is Status.PASSED
    assert not Path(outcome.stdout.strip()).exists()


@pytest.mark.parametrize("isolation", ["env", "unshare"])
def test_a_non_root_caller_removes_a_work_dir_the_run_locked(world: World, isolation: str) -> None:
    # An unprivileged caller must give itself its rights back to remove what the run locked;
    # a run that fails that way still ends in an outcome, and the next run is not affected.
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")
    spec = {
        "argv": ["/bin/sh", "-c", _LOCKING],
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "source_env": {"PATH": "/usr/bin:/bin"},
        "isolation": isolation,
    }
    for _ in range(2):
        outcome = run_as_nobody(spec, python)
        assert outcome["status"] == "passed", outcome
        assert not Path(outcome["stdout"].strip()).exists()


def _driver(world: World, jobs: int, per_run: int = 4, **extra: Any) -> subprocess.Popen[bytes]:
    """Start interrupt_driver.py with ``jobs`` sleeping runs; return once all are running."""
    spec = driver_spec(world, "sleep", jobs=jobs, **extra)
    driver = subprocess.Popen(
        [sys.executable, str(PROBE.with_name("interrupt_driver.py")), json.dumps(spec)],
        # The driver's work dirs go to the world's temp dir: a SIGKILLed driver cannot remove them.
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(world.host_tmp)},
    )
    # Per run under bwrap: bwrap, its init, the probe and its child (unshare: the probe is the
    # init, so 3); plus the driver itself.
    _wait_for(lambda: len(processes_with(world.token)) >= per_run * jobs + 1)
    return driver


@needs_bwrap
@pytest.mark.parametrize("jobs", [1, 3])
def test_sigterm_kills_every_run_before_exit_130(world: World, jobs: int) -> None:
    driver = _driver(world, jobs)
    try:
        driver.send_signal(signal.SIGTERM)
        assert driver.wait(15) == 130
    finally:
        driver.kill()
        driver.wait()
    assert processes_with(world.token) == []


@pytest.mark.parametrize("backend", NAMESPACE_BACKENDS)
def test_a_killed_caller_takes_its_runs_along(backend: str, world: World, tmp_path: Path) -> None:
    if backend == "unshare":
        path = unshare_only_path(tmp_path)
        driver = _driver(world, 3, per_run=3, path=path, isolation="unshare")
    else:
        driver = _driver(world, 3)
    driver.kill()  # SIGKILL: no handler, no cleanup; only parent-death signals remain
    driver.wait()
    _wait_for(lambda: processes_with(world.token) == [], timeout=5)


@needs_bwrap
def test_a_sandbox_whose_monitor_died_before_releasing_it_is_ended(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bubblewrap's child waits, as root and with no parent-death signal yet, for its monitor
    # to release it. A monitor that dies first (killed, out of memory) would leave it waiting
    # forever; the run must end it. --userns-block-fd holds the monitor at exactly that point.
    info_read, info_write = os.pipe()
    block_read, block_write = os.pipe()
    spawned: list[int] = []
    started = threading.Event()
    original = sandbox._process._spawn

    def held_before_release(launch: sandbox._backend.Launch) -> Any:
        at = launch.argv.index("--json-status-fd")
        launch.argv[at:at] = [
            "--unshare-user",
            "--info-fd",
            str(info_write),
            "--userns-block-fd",
            str(block_read),
        ]
        launch.pass_fds = (*launch.pass_fds, info_write, block_read)
        proc = original(launch)
        if not isinstance(proc, sandbox._backend.Execution):
            spawned.append(proc.pid)
        started.set()
        return proc

    def kill_the_monitor() -> None:
        info = b""
        while b"}" not in info and (chunk := os.read(info_read, 4096)):
            info += chunk
        child.append(json.loads(info)["child-pid"])
        started.wait(10)
        os.kill(spawned[0], signal.SIGKILL)

    policy = world.policy(("/bin/true",))
    assert sandbox.run(policy).status is Status.PASSED  # the host's probe, before the patch
    monkeypatch.setattr(sandbox._process, "_spawn", held_before_release)
    child: list[int] = []
    killer = threading.Thread(target=kill_the_monitor, daemon=True)
    killer.start()
    try:
        outcome = sandbox.run(policy)
        killer.join(10)
        assert child, "the monitor never reported its child"
        assert outcome.status is not Status.PASSED, outcome
        assert wait_gone(child[0], 5), "the sandbox's child outlived its run"
    finally:
        for pid in child:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for fd in (info_read, info_write, block_read, block_write):
            os.close(fd)


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_stdout_hears_the_output_while_the_run_goes_on(
    backend: str, world: World, tmp_path: Path
) -> None:
    cancel = threading.Event()
    heard: list[bytes] = []

    def hear(chunk: bytes) -> None:
        heard.append(chunk)
        if b"sleeping" in b"".join(heard):
            # The program sleeps for ever after printing: only output heard while it runs can
            # end the run before its timeout.
            cancel.set()

    argv = probe_argv("sleep", world.config([]))
    policy = _policy(backend, world, tmp_path, argv, limits=Limits(timeout_s=30))
    outcome = sandbox.run(policy, cancel=cancel, on_stdout=hear)
    assert (outcome.status, outcome.detail) == (Status.CRASHED, "interrupted")
    assert b"".join(heard).decode() == outcome.stdout
    assert processes_with(world.token) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_start_is_told_once_the_run_is_under_way_before_it_ends(
    backend: str, world: World, tmp_path: Path
) -> None:
    # A caller that runs the sandbox in a thread waits for this, not for the run: by then the
    # setup before the run's process is done, and the process is started (its program may not
    # have begun yet).
    events: list[str] = []
    caller = threading.get_ident()

    def started() -> None:
        events.append("started" if threading.get_ident() == caller else "elsewhere")

    argv = probe_argv("sleep", world.config([]))
    policy = _policy(backend, world, tmp_path, argv, limits=Limits(timeout_s=30))
    cancel = threading.Event()

    def stop_on_output(chunk: bytes) -> None:
        del chunk
        events.append("output")
        cancel.set()

    outcome = sandbox.run(policy, cancel=cancel, on_stdout=stop_on_output, on_start=started)
    assert (outcome.status, outcome.detail) == (Status.CRASHED, "interrupted")
    assert events[0] == "started"
    assert events.count("started") == 1
    assert "output" in events[1:]


_OPEN_ALL = (
    "import resource, os\n"
    "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
    "try:\n"
    "    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))\n"
    "except (ValueError, OSError):\n"
    "    pass\n"
    "count = 0\n"
    "try:\n"
    "    while count < 6000:\n"
    "        os.open('/dev/null', os.O_RDONLY)\n"
    "        count += 1\n"
    "except OSError:\n"
    "    pass\n"
    "print(count)\n"
)


@pytest.mark.parametrize("backend", [*BACKENDS, pytest.param("landlock", marks=needs_landlock)])
def test_a_run_cannot_hold_more_open_files_than_the_sandbox_allows(
    backend: str, world: World, tmp_path: Path
) -> None:
    if not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("no /usr/bin/python3")
    # Each descriptor pins kernel memory that no address-space limit counts.
    # A Python every uid can run: a root caller's run has a uid of its own.
    argv = ("/usr/bin/python3", "-I", "-c", _OPEN_ALL)
    free = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    if int(free.stdout) < 6000:
        pytest.skip(f"this process may hold only {free.stdout.strip()} files itself")
    if backend == "landlock":
        policy = world.policy(argv, isolation=Isolation.LANDLOCK)
        outcome = sandbox.run(policy)
    else:
        outcome = _run(backend, world, tmp_path, argv)
    assert outcome.status is Status.PASSED, outcome.stderr
    assert int(outcome.stdout) < OPEN_FILES


def _orphaned_bwrap(bwrap: str, work: str, token: str) -> int:
    """A bubblewrap whose caller is gone: started by a shell that exits at once; its pid."""
    flags = "--unshare-pid" if os.geteuid() == 0 else "--unshare-user --unshare-pid"
    script = (
        f"{bwrap} --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs {work} {flags} "
        "--as-pid-1 "
        f"-- sleep {token} >/dev/null 2>&1 & echo $!"
    )
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    return int(done.stdout)


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and _parent(int(proc.name)) == pid:
            found.append(int(proc.name))
    return found


def _sleeps(token: str) -> list[int]:
    wanted = b"sleep\0" + token.encode() + b"\0"
    found = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == wanted:
                found.append(int(proc.name))
    return found


def _kill_sleeps(token: str) -> None:
    for pid in _sleeps(token):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@needs_bwrap
def test_a_monitor_an_earlier_caller_left_behind_is_killed_and_nothing_else() -> None:
    from sandbox._bubblewrap import sweep_orphaned_monitors

    bwrap = sandbox.probe_host().bwrap
    assert bwrap is not None
    token = f"{os.getpid() % 1000 + 60}.25"
    ours = _orphaned_bwrap(bwrap, "/tmp/sandbox-run-0123456789abcdef", token)
    other = _orphaned_bwrap(bwrap, "/tmp/not-a-sandbox-run", token)
    try:
        # Both families whole: each shell's child has become bubblewrap and started its sleep.
        _wait_for(lambda: len(_sleeps(token)) == 2)
        if _parent(ours) != 1:
            pytest.skip("orphans are reparented to a subreaper here, not to init")
        # The monitor's own child (the namespace's first process) is orphaned once the monitor
        # dies, and is bubblewrap's until it has started the command: the sweep may take it
        # too. Nothing else.
        family = {ours, *_children(ours)}
        killed = sweep_orphaned_monitors(bwrap)
        assert set(killed) <= family
        # Ours is gone: this sweep killed it, or another worker's probe swept it first (and it
        # may still be dying, unlisted by this sweep, as this sweep looks).
        _wait_for(lambda: _parent(ours) is None)
        assert _parent(other) == 1
    finally:
        for pid in (ours, other):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _kill_sleeps(token)
