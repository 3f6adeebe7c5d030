"""A root caller's runs: never root in any backend, a uid of their own each, apart from each other.

Each escape is first shown to reach its target without the sandbox, then blocked with it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sbx_support import (
    BACKENDS,
    PROBE,
    REPO,
    ROOT_ONLY_ATTEMPTS,
    World,
    as_nobody,
    driver_spec,
    escaped,
    kill_token,
    needs_bwrap,
    needs_root,
    nobody_python,
    probe_argv,
    processes_with,
    run_as_nobody,
    run_unsandboxed,
    unshare_only_path,
    verdicts,
)

import sandbox
from sandbox import Guarantee, Isolation, Status
from sandbox._runuid import lease_uid

pytestmark = pytest.mark.sandbox

HOST_BACKENDS = BACKENDS[1:]


def _isolation(backend: str, world: World, tmp_path: Path) -> dict[str, Any]:
    if backend == "unshare":
        env = {**world.source_env, "PATH": unshare_only_path(tmp_path)}
        return {"isolation": Isolation.UNSHARE, "source_env": env}
    if backend == "env":
        return {"isolation": Isolation.ENV}
    return {}


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A directory only root may enter, outside every home (like /root, or a 0700 prefix)."""
    path = Path(tempfile.mkdtemp(prefix="sbx-private-", dir="/var/tmp"))
    path.chmod(0o700)
    try:
        yield path
    finally:
        subprocess.run(["rm", "-rf", str(path)], check=False)


@needs_root
@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_root_caller_s_unshare_and_env_runs_are_never_root(
    backend: str, world: World, tmp_path: Path
) -> None:
    attempts = list(ROOT_ONLY_ATTEMPTS)
    config = world.config(attempts)
    teeth = verdicts(run_unsandboxed(probe_argv("attempts", config), world))
    assert {name for name, v in teeth.items() if v["escaped"]} == set(attempts)
    policy = world.policy(probe_argv("attempts", config), **_isolation(backend, world, tmp_path))
    outcome = sandbox.run(policy)
    assert (outcome.backend, outcome.status) == (backend, Status.PASSED), outcome.stderr
    found = verdicts(outcome.stdout)
    assert set(found) == set(attempts)
    assert escaped(found) == {}
    assert Guarantee.NOT_HOST_ROOT in outcome.guarantees
    shown = sandbox.run(world.policy(("/usr/bin/id", "-u"), **_isolation(backend, world, tmp_path)))
    assert int(shown.stdout) in sandbox.RUN_UIDS


@needs_root
@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_non_root_caller_s_unshare_and_env_runs_are_not_root_either(
    backend: str, world: World
) -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")
    # Without teeth for this caller (nobody is refused these without a sandbox too), but the
    # run must neither gain root nor claim what it lacks.
    attempts = list(ROOT_ONLY_ATTEMPTS)
    spec = {
        "argv": probe_argv("attempts", world.config(attempts), python=python),
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "source_env": {"PATH": "/usr/bin:/bin", "HOME": str(world.home)},
        "isolation": backend,
    }
    outcome = run_as_nobody(spec, python)
    assert (outcome["backend"], outcome["status"]) == (backend, "passed"), outcome["stderr"]
    found = verdicts(outcome["stdout"])
    assert set(found) == set(attempts)
    assert escaped(found) == {}
    assert "not-host-root" in outcome["guarantees"]


@needs_root
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_the_run_s_uid_cannot_reach_is_not_started(
    backend: str, world: World, tmp_path: Path, private_dir: Path
) -> None:
    tool = private_dir / "tool"
    tool.write_text("#!/bin/sh\necho ran\n", encoding="utf-8")
    tool.chmod(0o755)
    assert subprocess.run([str(tool)], capture_output=True, text=True, check=True).stdout == "ran\n"
    outcome = sandbox.run(world.policy((str(tool),), **_isolation(backend, world, tmp_path)))
    assert outcome.status is Status.NOT_STARTED
    assert outcome.detail is not None
    assert f"the program {tool} cannot be used by the run: {private_dir} (mode 0o700" in (
        outcome.detail
    )
    assert "does not let other users search it" in outcome.detail
    assert "never as root" in outcome.detail


@needs_root
@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_script_whose_interpreter_the_run_cannot_reach_is_not_started(
    backend: str, world: World, tmp_path: Path, private_dir: Path
) -> None:
    interpreter = private_dir / "sh"
    interpreter.symlink_to("/bin/sh")
    script = world.outside / "tool"
    script.write_text(f"#!{interpreter}\necho ran\n", encoding="utf-8")
    script.chmod(0o755)
    assert (
        subprocess.run([str(script)], capture_output=True, text=True, check=True).stdout == "ran\n"
    )
    outcome = sandbox.run(world.policy((str(script),), **_isolation(backend, world, tmp_path)))
    assert outcome.status is Status.NOT_STARTED
    assert outcome.detail is not None
    assert f"the program {interpreter} (" in outcome.detail
    assert f"{private_dir} (mode 0o700" in outcome.detail
    assert "isolation 'auto' (bubblewrap)" in outcome.detail


@needs_root
def test_concurrent_runs_each_get_a_uid_of_their_own(world: World) -> None:
    uids: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        outcome = sandbox.run(world.policy(("/bin/sh", "-c", "id -u; sleep 1"), isolation="env"))
        assert outcome.status is Status.PASSED, outcome.stderr
        with lock:
            uids.append(int(outcome.stdout))

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(uids) == 4
    assert len(set(uids)) == 4, uids
    assert all(uid in sandbox.RUN_UIDS for uid in uids)


def _uid_of(pid: int) -> int:
    return Path(f"/proc/{pid}").stat().st_uid


@needs_root
def test_a_killed_caller_s_uid_is_cleared_before_another_run_gets_it(world: World) -> None:
    # An env run has no PID namespace: a SIGKILLed caller leaves its processes behind, running
    # as the run's uid. Whoever leases that uid next must not share it with them.
    spec = driver_spec(world, "sleep", "env", jobs=1)
    driver = subprocess.Popen(
        [sys.executable, str(PROBE.with_name("interrupt_driver.py")), json.dumps(spec)],
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(world.host_tmp)},
    )
    deadline = time.monotonic() + 20
    while len(processes_with(world.token)) < 3:
        assert time.monotonic() < deadline, "the driver's run did not start"
        time.sleep(0.05)
    driver.kill()
    driver.wait()
    try:
        left = [pid for pid in processes_with(world.token) if pid != driver.pid]
        assert left, "nothing outlived the caller: the test proves nothing"
        uid = _uid_of(left[0])
        assert uid in sandbox.RUN_UIDS
        held = []
        try:
            while True:
                lease = lease_uid()
                held.append(lease)
                if lease.uid >= uid:
                    break
            # The lease (ours, or another root caller's that took the uid first) killed them:
            # a SIGKILLed process runs nothing more, but leaves /proc only once the kernel
            # has scheduled its exit, which a busy machine delays. Sleepers would stay.
            deadline = time.monotonic() + 5
            while processes_with(world.token) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert processes_with(world.token) == []
        finally:
            for lease in held:
                lease.release()
    finally:
        kill_token(world.token)


def _is_probe(pid: int) -> bool:
    """Whether ``pid`` is the probe itself (not bwrap, unshare or the stage around it)."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return len(words) > 1 and words[1] == str(PROBE).encode()


def _victim_and_attacker(
    world: World, start: Any, linger: float = 20
) -> tuple[dict[str, dict[str, Any]], Any]:
    """Start a victim, find it on the host, aim an attacker at it; return the verdicts."""
    victim_token = f"{world.token}v"
    victim_config = {**world.config([]), "token": victim_token, "linger": linger}
    victim = start(probe_argv("victim", victim_config))
    try:
        deadline = time.monotonic() + 20
        pid = None
        while pid is None:
            assert time.monotonic() < deadline, "the victim did not start"
            found = [p for p in processes_with(victim_token) if _is_probe(p)]
            cwd = None
            for candidate in found:
                try:
                    cwd = Path(f"/proc/{candidate}/cwd").readlink()
                    marker = Path(f"/proc/{candidate}/root{cwd}/victim-secret.txt")
                    if marker.exists():
                        pid = candidate
                        break
                except OSError:
                    continue
            time.sleep(0.05)
        assert cwd is not None
        files = {
            "work_dir": str(cwd / "victim-secret.txt"),
            "tmpdir": str(cwd / ".tmp" / "victim-secret.txt"),
            "tmp": f"/tmp/victim-{victim_token}",
            "dev_shm": f"/dev/shm/victim-{victim_token}",
        }
        attacker = world.config([], sibling={"pid": pid, "files": files})
        return attacker, victim
    except BaseException:
        kill_token(victim_token)
        raise


@needs_root
def test_two_runs_of_one_uid_reach_each_other_without_a_sandbox(world: World) -> None:
    def start(argv: tuple[str, ...]) -> subprocess.Popen[bytes]:
        workdir = world.outside / "victim-cwd"
        (workdir / ".tmp").mkdir(parents=True)
        env = {**world.source_env, "TMPDIR": str(workdir / ".tmp")}
        return subprocess.Popen(argv, cwd=workdir, env=env, stdout=subprocess.DEVNULL)

    config, victim = _victim_and_attacker(world, start)
    try:
        found = verdicts(run_unsandboxed(probe_argv("attack_sibling", config), world))
        assert {name for name, v in found.items() if not v["escaped"]} == set(), found
    finally:
        victim.kill()
        victim.wait()
        kill_token(world.token)


@needs_root
@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_runs_of_a_root_caller_cannot_reach_each_other(
    backend: str, world: World, tmp_path: Path
) -> None:
    isolation = _isolation(backend, world, tmp_path)
    outcomes: dict[str, sandbox.Outcome] = {}

    def start(argv: tuple[str, ...]) -> threading.Thread:
        def target() -> None:
            outcomes["victim"] = sandbox.run(world.policy(argv, **isolation), cancel=stop)

        thread = threading.Thread(target=target)
        thread.start()
        return thread

    stop = threading.Event()
    config, victim = _victim_and_attacker(world, start)
    try:
        outcome = sandbox.run(world.policy(probe_argv("attack_sibling", config), **isolation))
        assert (outcome.backend, outcome.status) == (backend, Status.PASSED), outcome.stderr
        found = verdicts(outcome.stdout)
        assert len(found) == 7
        assert escaped(found) == {}
    finally:
        stop.set()
        victim.join(30)
        kill_token(world.token)


@needs_root
@pytest.mark.parametrize("backend", BACKENDS)
def test_no_descriptor_of_the_caller_reaches_the_run(
    backend: str, world: World, tmp_path: Path
) -> None:
    # A directory descriptor would let the run write outside its work dir (openat).
    leaked = os.open(world.outside, os.O_RDONLY | os.O_DIRECTORY)
    os.set_inheritable(leaked, True)
    try:
        plain = subprocess.run(
            probe_argv("fds", world.config([])),
            close_fds=False,
            capture_output=True,
            text=True,
            check=True,
        )
        assert leaked in json.loads(plain.stdout)["fds"]
        policy = world.policy(
            probe_argv("fds", world.config([])), **_isolation(backend, world, tmp_path)
        )
        outcome = sandbox.run(policy)
        assert outcome.status is Status.PASSED, outcome.stderr
        assert json.loads(outcome.stdout)["fds"] == [0, 1, 2], outcome.stdout
    finally:
        os.close(leaked)


@needs_bwrap
@needs_root
def test_concurrent_runs_of_a_non_root_caller_cannot_reach_each_other(world: World) -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")

    def spec(argv: tuple[str, ...]) -> dict[str, Any]:
        return {
            "argv": argv,
            "project_dir": str(world.project),
            "probe_dir": str(PROBE.parent),
            "source_env": {"PATH": "/usr/bin:/bin", "HOME": str(world.home)},
        }

    def start(argv: tuple[str, ...]) -> subprocess.Popen[bytes]:
        argv = (python, *argv[1:])
        return subprocess.Popen(
            [
                *as_nobody(),
                python,
                str(PROBE.with_name("nobody_driver.py")),
                json.dumps(spec(argv)),
            ],
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"},
            cwd="/",
            stdout=subprocess.DEVNULL,
        )

    config, victim = _victim_and_attacker(world, start)
    try:
        outcome = run_as_nobody(spec(probe_argv("attack_sibling", config, python=python)), python)
        assert (outcome["backend"], outcome["status"]) == ("bwrap", "passed"), outcome["stderr"]
        found = verdicts(outcome["stdout"])
        assert len(found) == 7
        assert escaped(found) == {}
    finally:
        kill_token(world.token)
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_run_can_dump_core(backend: str, world: World, tmp_path: Path) -> None:
    # A crash's core goes to the host's core handler (a "|program" core_pattern runs as root)
    # or fills the disk: the run may not even raise its soft limit.
    plain = run_unsandboxed(probe_argv("limits", world.config([])), world)
    if json.loads(plain)["core"][1] == 0:
        pytest.skip("this host forbids core dumps already: the attempt has no teeth")
    policy = world.policy(
        probe_argv("limits", world.config([])), **_isolation(backend, world, tmp_path)
    )
    outcome = sandbox.run(policy)
    assert outcome.status is Status.PASSED, outcome.stderr
    assert json.loads(outcome.stdout)["core"] == [0, 0]


def _swap_forever(fixtures: Path, target: Path, stop: threading.Event) -> None:
    """Flip ``fixtures/sub`` between a real directory and a symlink to ``target``."""
    real, parked = fixtures / "sub", fixtures / "sub.parked"
    while not stop.is_set():
        real.rename(parked)
        real.symlink_to(target, target_is_directory=True)
        real.unlink()
        parked.rename(real)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_fixture_dir_swapped_for_a_symlink_mid_copy_is_never_followed(
    backend: str, world: World, tmp_path: Path
) -> None:
    # The host-side copy runs as the caller (root, in CI): following a symlink swapped in
    # after the check would copy any directory of the host into the run.
    fixtures = world.outside / "fixtures"
    (fixtures / "sub").mkdir(parents=True)
    for index in range(200):
        (fixtures / "sub" / f"file-{index}.txt").write_text("fixture", encoding="utf-8")
    naive = tmp_path / "naive"
    (fixtures / "sub").rename(fixtures / "sub.parked")
    (fixtures / "sub").symlink_to(world.home, target_is_directory=True)
    shutil.copytree(fixtures, naive, symlinks=False)  # what a plain copy does at that moment
    assert (naive / "sub" / "secret.txt").read_text(encoding="utf-8") == world.secret
    (fixtures / "sub").unlink()
    (fixtures / "sub.parked").rename(fixtures / "sub")
    stop = threading.Event()
    swapper = threading.Thread(target=_swap_forever, args=(fixtures, world.home, stop))
    swapper.start()
    statuses = set()
    try:
        for _ in range(40):
            outcome = sandbox.run(
                world.policy(
                    ("/bin/cat", "sub/secret.txt"),
                    fixtures=fixtures,
                    **_isolation(backend, world, tmp_path),
                )
            )
            statuses.add(outcome.status)
            assert world.secret not in outcome.stdout
    finally:
        stop.set()
        swapper.join()
    # The swaps were seen: some copies were refused, some found no secret to print.
    assert statuses <= {Status.NOT_STARTED, Status.FAILED}
