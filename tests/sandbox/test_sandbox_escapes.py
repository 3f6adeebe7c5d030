"""The escape suite: each attempt succeeds without a sandbox and is blocked (or honestly reported).

Every attempt of ``probe.py`` is first run with plain subprocess in the planted host (secrets
in $HOME and in the password database's home, credentials and proxies in the environment,
listeners on loopback), proving that it reaches its target; then under each backend.
"""

from __future__ import annotations

import runpy
import time
from pathlib import Path

import pytest
from sbx_support import (
    ATTEMPT_GUARANTEES,
    PROBE,
    PW_ATTEMPTS,
    Listeners,
    World,
    disagreements,
    escape_attempts,
    escaped,
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
from sandbox import Guarantee, Isolation, Status

pytestmark = pytest.mark.sandbox

# Not part of any attempt: limits that these policies do not set, and the stretch goal
# (checked on its own in test_sandbox_stretch.py).
_NOT_PROBED = {Guarantee.MEMORY_LIMIT, Guarantee.PROCESS_LIMIT}


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
    others = {Guarantee.TREE_KILLED, Guarantee.OUTPUT_CAP, Guarantee.TIMEOUT, *_NOT_PROBED}
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


@needs_unshare
@needs_root
@pytest.mark.enable_socket
def test_unshare_lists_exactly_what_held(
    world: World, listeners: Listeners, host_dns: bool, tmp_path: Path
) -> None:
    attempts = escape_attempts(world, dns=host_dns)
    config = world.config(attempts, **listeners.config())
    env = {**world.source_env, "PATH": unshare_only_path(tmp_path)}
    outcome = sandbox.run(world.policy(probe_argv("attempts", config), source_env=env))
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
    network |= {"fs_unix_stream", "fs_unix_dgram"}
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
    attempts.remove("capabilities")  # an unprivileged caller has none to lose
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
    outcome, marker = _grandchild(world, source_env=env)
    assert (outcome.backend, outcome.status) == ("unshare", Status.PASSED), outcome.stderr
    assert Guarantee.TREE_KILLED in outcome.guarantees
    assert processes_with(world.token) == []
    time.sleep(1.0)
    assert not marker.exists()


def test_env_backend_does_not_claim_the_tree(world: World) -> None:
    outcome, _ = _grandchild(world, isolation=Isolation.ENV)
    assert (outcome.backend, outcome.status) == ("env", Status.PASSED), outcome.stderr
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
