"""Stretch goal: a filesystem unix socket outside the work dir is not connectable.

The sockets live in the project dir, which every run sees read-only: a read-only bind does not
stop connect(), so only the seccomp filter (no AF_UNIX sockets, no datagram socketpairs) does.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from sbx_support import (
    BWRAP,
    Listeners,
    World,
    escaped,
    needs_bwrap,
    probe_argv,
    verdicts,
)

import sandbox
from sandbox import Guarantee, Status

pytestmark = [pytest.mark.sandbox, needs_bwrap]

_ATTEMPTS = ["fs_unix_stream", "fs_unix_dgram"]


@pytest.mark.enable_socket
def test_plain_bubblewrap_leaves_a_filesystem_socket_connectable(
    world: World, listeners: Listeners
) -> None:
    # The measured fact behind the filter: namespaces and a read-only root are not enough.
    assert BWRAP is not None
    argv = probe_argv("attempts", world.config(_ATTEMPTS, **listeners.config()))
    plain = [BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    plain += ["--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent"]
    done = subprocess.run(
        [*plain, "--", *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert set(escaped(verdicts(done.stdout))) == set(_ATTEMPTS)
    assert listeners.hits.keys() >= {"fs", "fs_dgram"}


@pytest.mark.enable_socket
def test_the_sandbox_makes_filesystem_sockets_unreachable(
    world: World, listeners: Listeners
) -> None:
    argv = probe_argv("attempts", world.config(_ATTEMPTS, **listeners.config()))
    outcome = sandbox.run(world.policy(argv))
    assert (outcome.backend, outcome.status) == ("bwrap", Status.PASSED), outcome.stderr
    if Guarantee.NO_FS_UNIX_SOCKETS not in outcome.guarantees:
        pytest.skip("this kernel or bubblewrap cannot load the seccomp filter (reported)")
    found = verdicts(outcome.stdout)
    assert escaped(found) == {}
    assert all("Operation not permitted" in v["detail"] for v in found.values())
    assert listeners.total() == 0


def test_the_filter_keeps_stream_socketpairs_working(world: World) -> None:
    script = "import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())"
    outcome = sandbox.run(world.policy((sys.executable, "-c", script)))
    assert (outcome.status, outcome.stdout) == (Status.PASSED, "ok\n"), outcome.stderr
