"""The escape suite: each attempt succeeds without a sandbox and is blocked (or honestly reported).

Every attempt of ``probe.py`` is first run with plain subprocess in the planted host (secrets
in $HOME and in the password database's home, credentials and proxies in the environment,
listeners on loopback), proving that it reaches its target; then under each backend.
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from sbx_support import (
    ATTEMPT_GUARANTEES,
    PROBE,
    PW_ATTEMPTS,
    REPO,
    ROOT_ONLY_ATTEMPTS,
    Listeners,
    World,
    as_nobody,
    disagreements,
    driver_spec,
    escape_attempts,
    escaped,
    interpreter_readable,
    kill_token,
    needs_bwrap,
    needs_root,
    needs_unshare,
    nobody_python,
    probe_argv,
    processes_with,
    run_as_nobody,
    run_unsandboxed,
    unshare_only_path,
    verdicts,
)

import sandbox
import sandbox._host
import sandbox._limits
import sandbox._types
from sandbox import Guarantee, Isolation, Limits, Status
from tests.support.terminal import Terminal

pytestmark = pytest.mark.sandbox

# Not part of any attempt: limits that these policies do not set or that a host may not offer
# (a memory cgroup), each checked by a test of its own below.
_NOT_PROBED = {Guarantee.MEMORY_LIMIT, Guarantee.MEMORY_CGROUP, Guarantee.PROCESS_LIMIT}


@pytest.mark.enable_socket
def test_every_attempt_escapes_without_a_sandbox(
    world: World, listeners: Listeners, host_dns: bool
) -> None:
    attempts = escape_attempts(world, dns=host_dns)
    config = world.config(attempts, **listeners.config())
    found = verdicts(run_unsandboxed(probe_argv("attempts", config), world))
    assert set(found) == set(attempts)
    blocked = {name: v["detail"] for name, v in found.items() if not v["escaped"]}
    assert blocked == {}
    assert listeners.hits.keys() >= {"tcp", "udp", "dns", "abstract", "fs", "fs_dgram"}


def test_every_attempt_is_mapped_to_a_guarantee() -> None:
    probe = runpy.run_path(str(PROBE))
    assert set(ATTEMPT_GUARANTEES) == set(probe["ATTEMPTS"])
    covered = {g for gs in ATTEMPT_GUARANTEES.values() for g in gs}
    # Proven by the grandchild, limits and output tests instead of by an attempt.
    others = {
        Guarantee.TREE_KILLED,
        Guarantee.OUTPUT_CAP,
        Guarantee.TIMEOUT,
        Guarantee.DISK_LIMIT,
        *_NOT_PROBED,
    }
    assert covered | others == set(sandbox.CONTRACT_GUARANTEES)


@needs_bwrap
@pytest.mark.enable_socket
def test_bubblewrap_blocks_every_escape(world: World, listeners: Listeners, host_dns: bool) -> None:
    attempts = escape_attempts(world, dns=host_dns)
    config = world.config(attempts, **listeners.config())
    outcome = sandbox.run(world.policy(probe_argv("attempts", config)))
    assert (outcome.backend, outcome.status) == ("bwrap", Status.PASSED), outcome.stderr
    found = verdicts(outcome.stdout)
    assert set(found) == set(attempts)
    assert escaped(found) == {}
    assert listeners.total() == 0
    assert set(outcome.not_guaranteed) <= _NOT_PROBED | {Guarantee.NO_FS_UNIX_SOCKETS}
    assert disagreements(found, outcome.guarantees) == {}


@needs_bwrap
@pytest.mark.enable_socket
def test_bubblewrap_without_landlock_claims_exactly_what_held(
    world: World, listeners: Listeners, host_dns: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on a kernel without Landlock (the probe finds ABI 0, a fresh probe is made): what the
    # mounts, the uid and the filter hold alone is still claimed, and must hold.
    monkeypatch.setattr(sandbox._host, "landlock_abi", lambda: 0)
    monkeypatch.setattr(sandbox._host, "_cache", {})
    # Not signal_parent: under bubblewrap the parent is the sandbox's own init, which only
    # Landlock's scoping keeps from a signal of the run (its uid is the run's), and which
    # ignores every signal of its namespace (test_the_run_cannot_forge_its_exit_status).
    attempts = [a for a in escape_attempts(world, dns=host_dns) if a != "signal_parent"]
    config = world.config(attempts, **listeners.config())
    outcome = sandbox.run(world.policy(probe_argv("attempts", config)))
    assert (outcome.backend, outcome.status) == ("bwrap", Status.PASSED), outcome.stderr
    assert set(sandbox._types.LANDLOCK_GUARANTEES) <= set(outcome.not_guaranteed)
    found = verdicts(outcome.stdout)
    assert set(found) == set(attempts)
    assert disagreements(found, outcome.guarantees) == {}
    assert listeners.total() == 0


@needs_unshare
@needs_root
@pytest.mark.enable_socket
def test_unshare_lists_exactly_what_held(
    world: World, listeners: Listeners, host_dns: bool, tmp_path: Path
) -> None:
    attempts = escape_attempts(world, dns=host_dns)
    config = world.config(attempts, **listeners.config())
    env = {**world.source_env, "PATH": unshare_only_path(tmp_path)}
    policy = world.policy(probe_argv("attempts", config), source_env=env, isolation="unshare")
    outcome = sandbox.run(policy)
    assert (outcome.backend, outcome.status) == ("unshare", Status.PASSED), outcome.stderr
    found = verdicts(outcome.stdout)
    assert set(found) == set(attempts)
    assert disagreements(found, outcome.guarantees) == {}
    # What util-linux unshare gives, measured: namespaces, no mounts.
    assert Guarantee.NO_NETWORK in outcome.guarantees
    assert Guarantee.OWN_PID_NAMESPACE in outcome.guarantees
    assert {Guarantee.READ_ONLY_ROOT, Guarantee.HOME_MASKED, Guarantee.PRIVATE_TMP} <= set(
        outcome.not_guaranteed
    )
    assert listeners.hits.keys() == {"fs"} | ({"fs_dgram"} if "fs_unix_dgram" in found else set())


@pytest.mark.enable_socket
def test_env_backend_is_honest_and_guards_python_sockets(
    world: World, listeners: Listeners, host_dns: bool
) -> None:
    attempts = escape_attempts(world, dns=host_dns)
    config = world.config(attempts, **listeners.config())
    outcome = sandbox.run(world.policy(probe_argv("attempts", config), isolation=Isolation.ENV))
    assert (outcome.backend, outcome.status) == ("env", Status.PASSED), outcome.stderr
    assert Guarantee.PYTHON_SOCKET_GUARD in outcome.guarantees
    assert Guarantee.NO_NETWORK in outcome.not_guaranteed
    found = verdicts(outcome.stdout)
    # The audit hook refuses every socket attempt although the network namespace is shared.
    network = {"tcp", "udp", "abstract_unix", "dns_loopback", "dns_system"} & set(found)
    network |= {"fs_unix_stream", "fs_unix_dgram", "unix_raw_socketpair"}
    assert {name for name in network if found[name]["escaped"]} == set()
    assert all("network access is blocked" in found[name]["detail"] for name in network)
    assert listeners.total() == 0
    # Everything else is honestly not claimed, and really does escape.
    rest = {name: v for name, v in found.items() if name not in network}
    assert disagreements(rest, outcome.guarantees) == {}


@needs_bwrap
@needs_root
@pytest.mark.enable_socket
def test_bubblewrap_blocks_every_escape_for_a_non_root_caller(
    world: World, listeners: Listeners, host_dns: bool
) -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run (setpriv missing or home-only)")
    attempts = [a for a in escape_attempts(world, dns=host_dns) if a not in PW_ATTEMPTS]
    # An unprivileged caller has no capability to lose and no root-only file to read.
    attempts = [a for a in attempts if a not in ROOT_ONLY_ATTEMPTS]
    config = world.config(attempts, **listeners.config())
    spec = {
        "argv": probe_argv("attempts", config, python=python),
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "pass_env": ["EXAMPLE_SETTING"],
        "source_env": {**world.source_env, "PATH": "/usr/bin:/bin"},
    }
    outcome = run_as_nobody(spec, python)
    assert (outcome["backend"], outcome["status"]) == ("bwrap", "passed"), outcome["stderr"]
    found = verdicts(outcome["stdout"])
    assert set(found) == set(attempts)
    assert escaped(found) == {}
    assert listeners.total() == 0
    assert "no-capabilities" in outcome["guarantees"]
    assert "home-masked" in outcome["guarantees"]


def _grandchild(world: World, **overrides: object) -> tuple[sandbox.Outcome, Path]:
    marker = world.host_tmp / "marker"
    config = world.config([], marker=str(marker), delay=0.5)
    outcome = sandbox.run(world.policy(probe_argv("grandchild", config), **overrides))
    return outcome, marker


def test_grandchild_survives_without_a_sandbox(world: World) -> None:
    marker = world.host_tmp / "marker"
    config = world.config([], marker=str(marker), delay=0.5)
    run_unsandboxed(probe_argv("grandchild", config), world)
    try:
        assert processes_with(world.token)
        deadline = time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.read_text(encoding="utf-8") == "survived"
    finally:
        kill_token(world.token)


@needs_bwrap
def test_bubblewrap_kills_a_double_forked_grandchild(world: World) -> None:
    outcome, marker = _grandchild(world)
    assert (outcome.backend, outcome.status) == ("bwrap", Status.PASSED), outcome.stderr
    assert Guarantee.TREE_KILLED in outcome.guarantees
    assert processes_with(world.token) == []
    time.sleep(1.0)
    assert not marker.exists()


@needs_unshare
@needs_root
def test_unshare_kills_a_double_forked_grandchild(world: World, tmp_path: Path) -> None:
    env = {**world.source_env, "PATH": unshare_only_path(tmp_path)}
    outcome, marker = _grandchild(world, source_env=env, isolation=Isolation.UNSHARE)
    assert (outcome.backend, outcome.status) == ("unshare", Status.PASSED), outcome.stderr
    assert Guarantee.TREE_KILLED in outcome.guarantees
    assert processes_with(world.token) == []
    time.sleep(1.0)
    assert not marker.exists()


def test_env_backend_claims_the_tree_only_where_it_kills_it(world: World) -> None:
    outcome, marker = _grandchild(world, isolation=Isolation.ENV)
    assert (outcome.backend, outcome.status) == ("env", Status.PASSED), outcome.stderr
    if os.geteuid() == 0:
        # A root caller's run has a uid of its own: every process of it dies with the run.
        assert Guarantee.TREE_KILLED in outcome.guarantees
        assert processes_with(world.token) == []
        time.sleep(1.0)
        assert not marker.exists()
    else:
        # A setsid() daemon leaves the process group: env says so instead of claiming the tree.
        assert Guarantee.TREE_KILLED in outcome.not_guaranteed
        assert processes_with(world.token)


@needs_bwrap
def test_a_home_given_whole_as_project_dir_is_not_called_masked(world: World) -> None:
    config = world.config(["read_home_secret", "write_project"], project_file=str(world.home / "x"))
    outcome = sandbox.run(world.policy(probe_argv("attempts", config), project_dir=world.home))
    assert outcome.status is Status.PASSED, outcome.stderr
    assert Guarantee.HOME_MASKED in outcome.not_guaranteed
    found = verdicts(outcome.stdout)
    assert found["read_home_secret"]["escaped"]  # visible, as asked, and honestly reported
    assert not found["write_project"]["escaped"]  # but read-only
    assert disagreements(found, outcome.guarantees) == {}


# -- the escapes a root caller, the kernel's other channels and the limits opened ----


def test_the_caller_s_loader_variables_reach_the_unsandboxed_program(world: World) -> None:
    done = subprocess.run(
        probe_argv("attempts", world.config(["loader_env"])),
        env=world.source_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "cannot be preloaded" in done.stderr  # the loader read the caller's LD_PRELOAD
    assert verdicts(done.stdout)["loader_env"]["escaped"]


@needs_bwrap
def test_loader_variables_reach_neither_the_run_nor_the_sandbox_s_helpers(world: World) -> None:
    outcome = sandbox.run(world.policy(probe_argv("attempts", world.config(["loader_env"]))))
    assert outcome.status is Status.PASSED, outcome.stderr
    # bwrap, the sandbox's init and the interpreter would each have complained.
    assert "preloaded" not in outcome.stderr
    assert not verdicts(outcome.stdout)["loader_env"]["escaped"]


_FILL_MB = 160


def _fill_places(world: World) -> list[str]:
    return ["$TMPDIR", "/tmp", "/dev/shm", "."]


def test_memory_files_and_disk_fill_without_a_sandbox(world: World) -> None:
    places = [str(world.host_tmp), str(world.outside)]
    config = world.config([], mb=_FILL_MB, places=places)
    written = json.loads(run_unsandboxed(probe_argv("fill", config), world).splitlines()[-1])
    assert written == dict.fromkeys(places, _FILL_MB)


@needs_bwrap
def test_in_memory_files_and_the_work_dir_are_bounded(world: World) -> None:
    # 64 MiB of memory: each writable place is sized within it (or charged to the memory
    # cgroup); the work dir is a 16 MiB disk.
    limits = Limits(timeout_s=60, memory_mb=64, disk_mb=16)
    config = world.config([], mb=_FILL_MB, places=_fill_places(world))
    outcome = sandbox.run(world.policy(probe_argv("fill", config), limits=limits))
    assert outcome.status is Status.PASSED, outcome.stderr
    written = json.loads(outcome.stdout.splitlines()[-1])
    assert written["."] <= 16
    assert written["$TMPDIR"] <= 16
    assert all(mb <= 16 for mb in written.values()), written
    assert {Guarantee.DISK_LIMIT, Guarantee.MEMORY_LIMIT} <= set(outcome.guarantees)


_HELD_OUTSIDE = ("memfd", "sysv_shm", "socket_buffers")
_HOLD = {"as_mb": 64, "mb": 192}


@pytest.mark.parametrize("way", _HELD_OUTSIDE)
def test_memory_outside_the_address_space_is_held_without_a_sandbox(world: World, way: str) -> None:
    # Three times the address-space limit, held by the kernel for the process.
    config = world.config([], way=way, **_HOLD)
    assert run_unsandboxed(probe_argv("hold", config), world).splitlines()[-1] == "held all"


def _run_cgroups(base: Path) -> set[str]:
    return {p.name for p in base.iterdir() if p.name.startswith(f"sandbox-run-{os.getpid()}-")}


@needs_bwrap
@pytest.mark.parametrize("way", _HELD_OUTSIDE)
def test_the_run_s_memory_cgroup_bounds_memory_outside_the_address_space(
    world: World, way: str
) -> None:
    base = sandbox.probe_host().memory_cgroup
    if base is None:
        pytest.skip("this host delegates no memory cgroup to this caller")
    before = _run_cgroups(Path(base))
    config = world.config([], way=way, **_HOLD)
    limits = Limits(timeout_s=60, memory_mb=_HOLD["as_mb"])
    outcome = sandbox.run(world.policy(probe_argv("hold", config), limits=limits))
    assert outcome.status is Status.CRASHED, (outcome.status, outcome.stdout[-200:])
    assert "held all" not in outcome.stdout
    held = [int(line.split()[1]) for line in outcome.stdout.splitlines() if line[5:].isdigit()]
    assert max(held, default=0) < _HOLD["as_mb"]
    assert outcome.detail is not None
    assert "killed at its memory limit (memory cgroup)" in outcome.detail
    assert Guarantee.MEMORY_CGROUP in outcome.guarantees
    # The run's cgroup is gone with it.
    assert _run_cgroups(Path(base)) == before


@needs_bwrap
def test_a_dead_caller_s_run_cgroup_is_removed_at_the_next_start(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = sandbox.probe_host().memory_cgroup
    if base is None:
        pytest.skip("this host delegates no memory cgroup to this caller")
    ended = subprocess.Popen(["true"])
    ended.wait()
    left = Path(base) / f"sandbox-run-{ended.pid}-0123456789ab"
    alive = Path(base) / f"sandbox-run-{os.getpid()}-ba9876543210"
    left.mkdir()
    alive.mkdir()
    try:
        # As a fresh process: the sweep runs once per process.
        monkeypatch.setattr(sandbox._limits, "_swept", set())
        outcome = sandbox.run(world.policy(("true",)))
        assert outcome.status is Status.PASSED, outcome.stderr
        assert not left.exists()
        assert alive.exists()
    finally:
        for path in (left, alive):
            with contextlib.suppress(FileNotFoundError):
                path.rmdir()


@needs_bwrap
def test_a_memory_cgroup_the_trial_cannot_use_is_left_out_not_bubblewrap(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A "delegated" cgroup that is a plain directory: making a run's cgroup there fails.
    monkeypatch.setattr(sandbox._host, "find_memory_cgroup", lambda: tmp_path)
    monkeypatch.setattr(sandbox._host, "_cache", {})
    report = sandbox.probe_host()
    assert report.full_isolation
    assert report.memory_cgroup is None
    assert report.memory_cgroup_detail is not None
    assert f"memory cgroup {tmp_path} not used" in report.memory_cgroup_detail
    outcome = sandbox.run(world.policy(("true",)))
    assert outcome.status is Status.PASSED, outcome.stderr
    assert Guarantee.MEMORY_CGROUP in outcome.not_guaranteed
    assert Guarantee.MEMORY_LIMIT in outcome.guarantees


@needs_bwrap
@needs_root
def test_in_memory_files_are_bounded_for_a_non_root_caller(world: World) -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")
    config = world.config([], mb=_FILL_MB, places=_fill_places(world))
    spec = {
        "argv": probe_argv("fill", config, python=python),
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "source_env": {"PATH": "/usr/bin:/bin", "HOME": str(world.home)},
        "limits": {"memory_mb": 64, "disk_mb": 16, "timeout_s": 60},
    }
    outcome = run_as_nobody(spec, python)
    assert outcome["status"] == "passed", outcome["stderr"]
    written = json.loads(outcome["stdout"].splitlines()[-1])
    assert all(mb <= 16 for mb in written.values()), written


@needs_bwrap
def test_a_root_caller_s_run_is_the_sandbox_uid_and_its_work_dir_is_private(
    world: World, tmp_path: Path
) -> None:
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    fixtures.chmod(0o777)  # whatever the fixtures' modes, the work dir stays 0700
    (fixtures / "data.txt").write_text("fixture", encoding="utf-8")
    script = 'id -u; stat -c "%a %u" .; grep " $PWD " /proc/self/mountinfo'
    outcome = sandbox.run(world.policy(("/bin/sh", "-c", script), fixtures=fixtures))
    assert outcome.status is Status.PASSED, outcome.stderr
    uid, mode, mount = outcome.stdout.splitlines()
    if os.geteuid() == 0:
        assert int(uid) in sandbox.RUN_UIDS
    else:
        assert int(uid) == os.getuid()
    assert mode == f"700 {uid}"
    assert {"nosuid", "nodev"} <= set(mount.split()[5].split(","))
    assert Guarantee.NOT_HOST_ROOT in outcome.guarantees


def test_a_killed_caller_s_host_work_dirs_are_removed_at_the_next_start(world: World) -> None:
    # The env backend's work dir is on the host; a SIGKILLed caller cannot remove it.
    tmpdir = world.host_tmp / "tmpdir"
    tmpdir.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmpdir)}
    spec = driver_spec(world, "sleep", "env", jobs=1)
    driver = subprocess.Popen(
        [sys.executable, str(PROBE.with_name("interrupt_driver.py")), json.dumps(spec)], env=env
    )
    deadline = time.monotonic() + 20
    while len(processes_with(world.token)) < 3:
        assert time.monotonic() < deadline, "the driver's run did not start"
        time.sleep(0.05)
    driver.kill()
    driver.wait()
    kill_token(world.token)  # env's runs are not in a PID namespace: nothing kills them
    left = [p.name for p in tmpdir.iterdir()]
    assert left
    assert all(name.startswith(f"sandbox-run-{driver.pid}-") for name in left)
    # A symlink that looks like a leftover is never followed.
    decoy = world.outside / "decoy"
    decoy.mkdir()
    (tmpdir / "sandbox-run-1-decoy").symlink_to(decoy)
    spec = {"argv": ["true"], "readable": [], "jobs": 1, "isolation": "env"}
    done = subprocess.run(
        [sys.executable, str(PROBE.with_name("interrupt_driver.py")), json.dumps(spec)],
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert [p.name for p in tmpdir.iterdir()] == ["sandbox-run-1-decoy"]
    assert decoy.is_dir()


@needs_bwrap
def test_readable_paths_never_uncover_a_home_beyond_an_installation(world: World) -> None:
    # As a committed pyvenv.cfg ("home = ~") or a shebang could ask for: the home, its secrets.
    venv = world.home / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (venv / "bin" / "tool").write_text("installed", encoding="utf-8")
    asked = (*interpreter_readable(), world.home, venv)
    config = world.config(["read_home_secret"])
    script = f"cat {venv / 'bin' / 'tool'}"
    outcome = sandbox.run(world.policy(probe_argv("attempts", config), readable=asked))
    assert outcome.status is Status.PASSED, outcome.stderr
    assert not verdicts(outcome.stdout)["read_home_secret"]["escaped"]
    assert str(world.home) in outcome.refused
    assert str(venv) in outcome.bound
    assert Guarantee.HOME_MASKED in outcome.guarantees
    shown = sandbox.run(world.policy(("/bin/sh", "-c", script), readable=asked))
    assert (shown.status, shown.stdout) == (Status.PASSED, "installed"), shown.stderr


@needs_bwrap
def test_readable_paths_never_uncover_the_host_tmp_beyond_an_installation(world: World) -> None:
    # A shebang's word (``#!/usr/bin/env -S head -- /tmp/other/secret``) asked for as readable:
    # another user's file in the host's /tmp. A virtualenv there is still an interpreter's.
    host_tmp = Path("/tmp")
    place = Path(tempfile.mkdtemp(prefix="sandbox-test-secret-", dir=host_tmp))
    try:
        place.chmod(0o755)
        secret = place / "secret.txt"
        secret.write_text("the host's secret", encoding="utf-8")
        secret.chmod(0o644)
        venv = place / "venv"
        (venv / "bin").mkdir(parents=True)
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
        (venv / "bin" / "tool").write_text("installed", encoding="utf-8")
        for path in (venv, venv / "bin"):
            path.chmod(0o755)
        (venv / "bin" / "tool").chmod(0o644)
        shown = subprocess.run(
            ["/bin/cat", str(secret)], capture_output=True, text=True, check=False
        )
        assert shown.stdout == "the host's secret"  # without the sandbox, it is read
        asked = (*interpreter_readable(), secret, venv)
        script = f"cat {secret}; cat {venv / 'bin' / 'tool'}"
        outcome = sandbox.run(world.policy(("/bin/sh", "-c", script), readable=asked))
        assert "the host's secret" not in outcome.stdout
        assert outcome.stdout == "installed", outcome.stderr
        assert str(secret) in outcome.refused
        assert str(venv) in outcome.bound
        assert Guarantee.PRIVATE_TMP in outcome.guarantees
    finally:
        shutil.rmtree(place, ignore_errors=True)


@needs_bwrap
def test_the_run_cannot_forge_its_exit_status(world: World) -> None:
    # It stops, kills and traces its init where it can, then exits 3: the verdict stays 3.
    script = (
        "import ctypes, os, signal\n"
        "for sig in (signal.SIGSTOP, signal.SIGKILL, signal.SIGTERM):\n"
        "    try: os.kill(1, sig)\n"
        "    except OSError: pass\n"
        "libc = ctypes.CDLL(None)\n"
        "libc.syscall(101, 16, 1, 0, 0)\n"  # PTRACE_ATTACH (x86_64; EPERM or ENOSYS elsewhere)
        "try: open('/proc/1/mem', 'rb')\n"
        "except OSError: pass\n"
        "raise SystemExit(3)\n"
    )
    outcome = sandbox.run(world.policy((sys.executable, "-c", script)))
    assert (outcome.status, outcome.exit_code) == (Status.FAILED, 3), outcome
    assert Guarantee.TRUSTED_EXIT_STATUS in outcome.guarantees


@needs_root
@pytest.mark.enable_socket
def test_every_attempt_escapes_without_a_sandbox_for_a_non_root_caller(
    world: World, listeners: Listeners, host_dns: bool
) -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")
    attempts = [
        a
        for a in escape_attempts(world, dns=host_dns)
        if a not in PW_ATTEMPTS and a not in ROOT_ONLY_ATTEMPTS
    ]
    config = world.config(attempts, **listeners.config())
    # A shell of the same uid as parent, as the caller's own process would be.
    command = " ".join(shlex.quote(word) for word in probe_argv("attempts", config, python))
    done = subprocess.run(
        [*as_nobody(), "/bin/sh", "-c", f"{command}; true"],
        env=world.source_env,
        cwd=world.outside,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = verdicts(done.stdout)
    assert set(found) == set(attempts)
    assert {name: v["detail"] for name, v in found.items() if not v["escaped"]} == {}


# Ignores SIGTERM and sends it to its whole process group (kill(0)), then waits for whatever it
# reached to die: exit 3 unless something of that group outside the run took the run down.
_SIGNAL_GROUP = "trap '' TERM; kill -TERM 0; sleep 0.3; exit 3"
# Exit 5 when its process group is led by a process its PID namespace cannot see (the id reads
# 0): a kill(0) then reaches beyond the sandbox wherever uids and Landlock would let it.
_GROUP_LED_FROM_OUTSIDE = 'read -r _ _ _ _ group _ < /proc/self/stat; [ "$group" != 0 ] || exit 5'
# Exit 4 when the controlling terminal opens (it could read what is typed there, or write).
_OPEN_TERMINAL = "if (exec 3</dev/tty) 2>/dev/null; then exit 4; fi; exit 3"


def test_a_program_reaches_its_process_group_and_terminal_without_a_sandbox(
    tmp_path: Path,
) -> None:
    # A process of the group that is no part of the program's tree: it was there first.
    canary = subprocess.Popen(["sleep", "30"], process_group=0)
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", _SIGNAL_GROUP], process_group=canary.pid, timeout=30, check=False
        )
        assert done.returncode == 3
        assert canary.wait(timeout=10) == -signal.SIGTERM
    finally:
        canary.kill()
        canary.wait()
    terminal = Terminal(["/bin/sh", "-c", _OPEN_TERMINAL], cwd=tmp_path, env=_DRIVER_ENV)
    try:
        assert terminal.wait(timeout=30) == 4
    finally:
        terminal.close()


_DRIVER_ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"}


@needs_bwrap
@pytest.mark.parametrize("caller", ["root", "unprivileged"])
@pytest.mark.parametrize("on_terminal", [False, True], ids=["no terminal", "on a terminal"])
def test_a_run_s_process_group_and_terminal_are_never_the_caller_s(
    caller: str, on_terminal: bool, world: World
) -> None:
    # As the unprivileged caller, bubblewrap runs as the run's own uid: were it in the run's
    # process group, the run's SIGTERM would end it (Landlock's signal scoping aside), and with
    # it the run before its exit 3.
    prefix: list[str] = []
    python = sys.executable
    if caller == "unprivileged":
        found = nobody_python() if os.geteuid() == 0 else None
        if found is None:
            pytest.skip("no Python 3.11+ that uid 65534 can run (or not root)")
        prefix, python = as_nobody(), found
    elif os.geteuid() != 0:
        pytest.skip("the root caller needs root")
    spec = {
        "argv": [
            "/bin/sh",
            "-c",
            f"{_GROUP_LED_FROM_OUTSIDE}; {_SIGNAL_GROUP.removesuffix('exit 3')}{_OPEN_TERMINAL}",
        ],
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "source_env": {**world.source_env, "PATH": "/usr/bin:/bin"},
    }
    argv = [*prefix, python, str(PROBE.with_name("nobody_driver.py")), json.dumps(spec)]
    env = dict(_DRIVER_ENV)
    if on_terminal:
        terminal = Terminal(argv, cwd=Path("/"), env=env)
        try:
            assert terminal.wait(timeout=120) == 0, terminal.output
            printed = terminal.output
        finally:
            terminal.close()
    else:
        # A session of its own: the caller has no terminal at all.
        done = subprocess.run(
            argv, env=env, cwd="/", capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        printed = done.stdout
    outcome = json.loads(printed.strip().splitlines()[-1])
    assert (outcome["backend"], outcome["exit_code"]) == ("bwrap", 3), outcome


# The kernel gives each session one scheduling group (autogroup), whose nice value any member
# may raise by writing its own /proc/self/autogroup: every process of that session then gets
# less CPU, also after the run. Exit 4 when the group is the caller's, named in $1, and opens
# for writing (opened, never written); exit 3 otherwise.
_CALLER_S_AUTOGROUP = (
    'read -r group _ < /proc/self/autogroup; if [ "$group" = "$1" ] && '
    "(: >>/proc/self/autogroup) 2>/dev/null; then exit 4; fi; exit 3"
)
_AUTOGROUP = Path("/proc/self/autogroup")


def _own_autogroup() -> str:
    if not _AUTOGROUP.exists():
        pytest.skip("this kernel has no autogroups")
    # The kernel prints nothing for a process left in the root group (autogroups turned off,
    # or the session began before they were): that group's weight cannot be set from there.
    words = _AUTOGROUP.read_text(encoding="ascii").split()
    if not words:
        pytest.skip("this process is in no autogroup of its own")
    return words[0]


def test_a_program_can_set_its_caller_s_scheduling_group_without_a_sandbox() -> None:
    group = _own_autogroup()
    done = subprocess.run(
        ["/bin/sh", "-c", _CALLER_S_AUTOGROUP, "sh", group], timeout=30, check=False
    )
    assert done.returncode == 4


@needs_bwrap
@pytest.mark.parametrize("caller", ["root", "unprivileged"])
@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "no landlock"])
def test_a_run_cannot_set_its_caller_s_scheduling_group(
    caller: str, landlock: bool, world: World
) -> None:
    # Without a terminal the run need not get a session of its own: it then shares the
    # caller's scheduling group. Landlock keeps it from writing there; on a kernel without
    # Landlock (the probe told ABI 0), nothing else would.
    group = _own_autogroup()
    prefix: list[str] = []
    python = sys.executable
    if caller == "unprivileged":
        found = nobody_python() if os.geteuid() == 0 else None
        if found is None:
            pytest.skip("no Python 3.11+ that uid 65534 can run (or not root)")
        prefix, python = as_nobody(), found
    elif os.geteuid() != 0:
        pytest.skip("the root caller needs root")
    spec = {
        "argv": ["/bin/sh", "-c", _CALLER_S_AUTOGROUP, "sh", group],
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "source_env": {**world.source_env, "PATH": "/usr/bin:/bin"},
        "landlock": landlock,
    }
    # In this process's session, as a caller without a terminal is.
    done = subprocess.run(
        [*prefix, python, str(PROBE.with_name("nobody_driver.py")), json.dumps(spec)],
        env=dict(_DRIVER_ENV),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert (outcome["backend"], outcome["exit_code"]) == ("bwrap", 3), outcome
    assert "own-pid-namespace" in outcome["guarantees"]
    assert ("landlock-fs" in outcome["guarantees"]) is landlock
