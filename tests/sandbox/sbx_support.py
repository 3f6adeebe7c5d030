"""Helpers of the sandbox tests: the probe's argv and verdicts, host listeners, process scans."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import selectors
import shutil
import socket
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import sandbox
from sandbox._landlock import MIN_ABI
from tests.support.processes import host_processes, kill_processes_with

PROBE = Path(__file__).with_name("probe.py")
REPO = Path(__file__).resolve().parents[2]
BWRAP = shutil.which("bwrap")
UNSHARE = shutil.which("unshare")

needs_bwrap = pytest.mark.skipif(
    BWRAP is None, reason="bubblewrap is not installed (CI: apt-get install -y bubblewrap)"
)
needs_unshare = pytest.mark.skipif(UNSHARE is None, reason="util-linux unshare is not installed")

needs_landlock = pytest.mark.skipif(
    sandbox.probe_host().landlock_abi < MIN_ABI,
    reason=f"the kernel's Landlock is older than ABI {MIN_ABI}",
)

BACKENDS = [
    pytest.param("bwrap", marks=needs_bwrap),
    pytest.param("unshare", marks=needs_unshare),
    "env",
]
"""Every backend by its isolation name, each skipped where this host cannot run it."""
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (CI runs as root)")

CREDENTIALS = {
    "LC_API_TOKEN": "planted",
    "GITHUB_TOKEN": "ghp_planted",
    "AWS_SECRET_ACCESS_KEY": "planted",
    "DATABASE_PASSWORD": "planted",
    "NPM_AUTH": "planted",
}
PROXIES = {
    "HTTP_PROXY": "http://proxy.invalid:3128",
    "https_proxy": "http://proxy.invalid:3128",
    "ALL_PROXY": "socks5://proxy.invalid:1080",
    "NO_PROXY": "example.com",
}
DNS_NAME = "pypi.org"


def interpreter_readable() -> tuple[Path, ...]:
    """What this Python needs visible in a sandbox: its prefixes, its real location, the probe."""
    real = Path(sys.executable).resolve()
    return tuple(
        sorted({Path(sys.prefix), Path(sys.base_prefix), real.parent.parent, PROBE.parent})
    )


def probe_argv(mode: str, config: dict[str, Any], python: str | None = None) -> tuple[str, ...]:
    """The argv that runs the probe in ``mode`` with ``config``."""
    return (python or sys.executable, str(PROBE), mode, json.dumps(config))


def verdicts(stdout: str) -> dict[str, dict[str, Any]]:
    """Parse the probe's JSON lines into {attempt: verdict}."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            verdict = json.loads(line)
            found[verdict["attempt"]] = verdict
    return found


def processes_with(token: str) -> list[int]:
    """Host pids whose command line contains ``token`` (zombies excluded: already dead)."""
    return list(host_processes(token))


def kill_token(token: str) -> None:
    """Kill whatever an unsandboxed probe left behind."""
    kill_processes_with(token)


@dataclass
class Listeners:
    """Servers on the host: TCP, UDP and DNS on loopback, an abstract and two path unix sockets.

    Each answers ``ping`` with ``pong`` (DNS answers any A query with 192.0.2.53) and counts
    the requests it saw, so a test can prove that nothing reached the host.
    """

    tcp_port: int = 0
    udp_port: int = 0
    dns_port: int = 0
    abstract_name: str = ""
    fs_socket: str = ""
    fs_dgram_socket: str = ""
    hits: dict[str, int] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        return {
            "tcp_port": self.tcp_port,
            "udp_port": self.udp_port,
            "dns_port": self.dns_port,
            "abstract_name": self.abstract_name,
            "fs_socket": self.fs_socket,
            "fs_dgram_socket": self.fs_dgram_socket,
        }

    def total(self) -> int:
        return sum(self.hits.values())


def serve(socks: dict[str, socket.socket], listeners: Listeners, stop: threading.Event) -> None:
    with selectors.DefaultSelector() as selector:
        for name, sock in socks.items():
            selector.register(sock, selectors.EVENT_READ, name)
        while not stop.is_set():
            for key, _ in selector.select(0.05):
                with contextlib.suppress(OSError):
                    _answer(key.data, socks[key.data], listeners)


def _answer(name: str, sock: socket.socket, listeners: Listeners) -> None:
    if sock.type == socket.SOCK_STREAM:
        conn, _ = sock.accept()
        with conn:
            conn.settimeout(2)
            if conn.recv(4) == b"ping":
                conn.sendall(b"pong")
    else:
        data, peer = sock.recvfrom(512)
        if name == "dns":
            # Echo the question with one A record pointing at 192.0.2.53.
            header = data[:2] + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0)
            record = struct.pack(">HHHIH", 0xC00C, 1, 1, 60, 4) + socket.inet_aton("192.0.2.53")
            sock.sendto(header + data[12:] + record, peer)
        elif peer:
            sock.sendto(b"pong", peer)
    listeners.hits[name] = listeners.hits.get(name, 0) + 1


@dataclass
class World:
    """The host around a probe: a planted HOME, a project dir, places it must not write."""

    token: str
    root: Path
    home: Path
    project: Path
    outside: Path
    host_tmp: Path
    secret: str
    pw_home: Path | None
    pw_secret: Path | None
    source_env: dict[str, str]
    fifo: Path

    def config(self, attempts: list[str], **extra: Any) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "token": self.token,
            "attempts": attempts,
            "secret": self.secret,
            "home_secret": str(self.home / "secret.txt"),
            "project_file": str(self.project / "escaped.txt"),
            "home_file": str(self.home / "escaped.txt"),
            "host_tmp_file": str(self.host_tmp / "escaped.txt"),
            "var_tmp_file": str(self.outside / "escaped.txt"),
            "credential_names": sorted(CREDENTIALS),
            "host_pid": os.getpid(),
            "dns_name": DNS_NAME,
            "fifo": str(self.fifo),
        }
        if self.pw_home is not None and self.pw_secret is not None:
            cfg["pw_home"] = str(self.pw_home)
            cfg["pw_home_secret"] = str(self.pw_secret)
            cfg["pw_home_allowed"] = pw_home_allowed(self.pw_home, interpreter_readable())
        cfg.update(extra)
        return cfg

    def policy(self, argv: tuple[str, ...], **overrides: Any) -> sandbox.Policy:
        """A policy for ``argv``; a root caller's unshare and env runs get an interpreter that
        their unprivileged uid can run (this one may live in root's 0700 home)."""
        fields: dict[str, Any] = {
            "argv": argv,
            "project_dir": self.project,
            # The test's own interpreter and probe: vouched for, wherever the checkout lies
            # (a clone in /tmp included); ``readable`` is left to the tests of its rule.
            "trusted_readable": interpreter_readable(),
            "pass_env": ("EXAMPLE_SETTING",),
            "source_env": self.source_env,
            "limits": sandbox.Limits(timeout_s=30),
        }
        fields.update(overrides)
        isolation = sandbox.Isolation(fields.get("isolation", "auto"))
        host_backend = isolation in (sandbox.Isolation.UNSHARE, sandbox.Isolation.ENV)
        if os.geteuid() == 0 and host_backend:
            if argv[0] == sys.executable:
                fields["argv"] = (run_uid_python(), *argv[1:])
            if "trusted_readable" not in overrides:
                fields["trusted_readable"] = (PROBE.parent,)
        return sandbox.Policy(**fields)


def pw_home_allowed(pw_home: Path, readable: tuple[Path, ...]) -> list[str]:
    """Entries of the passwd home that the run may see: the first step towards each readable."""
    allowed = set()
    for path in readable:
        for candidate in (path, path.resolve()):
            if pw_home in candidate.parents:
                allowed.add(candidate.relative_to(pw_home).parts[0])
    return sorted(allowed)


def run_unsandboxed(argv: tuple[str, ...], world: World, timeout: float = 60) -> str:
    """Run the probe with plain subprocess, in the planted environment: the teeth check."""
    done = subprocess.run(
        argv,
        env=world.source_env,
        cwd=world.outside,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def driver_spec(world: World, mode: str, isolation: str = "auto", **extra: Any) -> dict[str, Any]:
    """The spec of interrupt_driver.py running the probe in ``mode`` under ``isolation``.

    A root caller's unshare and env runs get an interpreter their unprivileged uid can run.
    """
    python, readable = None, [str(p) for p in interpreter_readable()]
    if os.geteuid() == 0 and isolation in ("unshare", "env"):
        python, readable = run_uid_python(), [str(PROBE.parent)]
    argv = probe_argv(mode, world.config([]), python=python)
    return {"argv": argv, "readable": readable, "isolation": isolation, **extra}


def run_uid_python() -> str:
    """An interpreter that a root caller's run (an unprivileged uid) can run; skip without."""
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that an unprivileged uid can run (setpriv missing?)")
    return python


@functools.cache
def nobody_python() -> str | None:
    """An interpreter (3.11+) that uid 65534 can run and that can import ``sandbox``."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return None
    candidates = [shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin"), sys.executable]
    for candidate in candidates:
        if candidate is None:
            continue
        check = subprocess.run(
            [
                *as_nobody(),
                candidate,
                "-c",
                "import sandbox, sys; print(sys.version_info >= (3, 11))",
            ],
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
            cwd="/",
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if check.stdout.strip() == "True":
            return candidate
    return None


def as_nobody() -> list[str]:
    """The prefix that runs a command as nobody:nogroup with no supplementary groups."""
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


G = sandbox.Guarantee
ATTEMPT_GUARANTEES: dict[str, tuple[sandbox.Guarantee, ...]] = {
    "tcp": (G.NO_NETWORK,),
    "udp": (G.NO_NETWORK,),
    "abstract_unix": (G.NO_NETWORK,),
    "dns_loopback": (G.NO_NETWORK,),
    "dns_system": (G.NO_NETWORK,),
    "read_home_secret": (G.HOME_MASKED,),
    "read_pw_home_secret": (G.HOME_MASKED,),
    "list_pw_home": (G.HOME_MASKED,),
    "write_project": (G.READ_ONLY_ROOT, G.WORK_DIR_ONLY_WRITABLE),
    "write_var_tmp": (G.READ_ONLY_ROOT, G.WORK_DIR_ONLY_WRITABLE),
    "write_home": (G.HOME_MASKED, G.WORK_DIR_ONLY_WRITABLE),
    "write_host_tmp": (G.PRIVATE_TMP, G.WORK_DIR_ONLY_WRITABLE),
    "env_credentials": (G.SCRUBBED_ENV,),
    "proxies": (G.DEAD_PROXIES,),
    "own_home": (G.OWN_HOME,),
    "host_process_visible": (G.OWN_PID_NAMESPACE,),
    "capabilities": (G.NO_CAPABILITIES,),
    "fs_unix_stream": (G.NO_FS_UNIX_SOCKETS,),
    "fs_unix_dgram": (G.NO_FS_UNIX_SOCKETS,),
    "sysctl_writable": (G.NOT_HOST_ROOT,),
    "read_shadow": (G.NOT_HOST_ROOT,),
    "setuid_in_work_dir": (G.WORK_DIR_ONLY_WRITABLE,),
    "unix_raw_socketpair": (G.NO_FS_UNIX_SOCKETS, G.SYSCALL_FILTER),
    "write_root_fifo": (G.LANDLOCK_FS,),
    "keyring": (G.SYSCALL_FILTER,),
    "vsock": (G.SYSCALL_FILTER,),
    "trace_parent": (G.TRUSTED_EXIT_STATUS,),
    "parent_fds": (G.TRUSTED_EXIT_STATUS,),
    "tcp_bind": (G.LANDLOCK_NET,),
    "signal_parent": (G.LANDLOCK_SCOPE,),
    "parent_rlimits": (G.SYSCALL_FILTER,),
    "parent_priority": (G.SYSCALL_FILTER,),
    "locale_credential": (G.SCRUBBED_ENV,),
    "loader_env": (G.SCRUBBED_ENV,),
    "setuid_root_file": (G.NOT_HOST_ROOT,),
}
"""Which guarantees block each attempt of the probe (all of them must hold)."""

BLOCKED_BY_RUN_UID = {
    "read_pw_home_secret": (G.NOT_HOST_ROOT,),
    "list_pw_home": (G.NOT_HOST_ROOT,),
    "capabilities": (G.NOT_HOST_ROOT,),
    "trace_parent": (G.NOT_HOST_ROOT,),
    "parent_fds": (G.NOT_HOST_ROOT,),
    "signal_parent": (G.NOT_HOST_ROOT,),
    "parent_rlimits": (G.NOT_HOST_ROOT,),
    "parent_priority": (G.NOT_HOST_ROOT,),
}
"""For a root caller, the other guarantee that blocks these: the run's uid is not root's, so
root's 0700 home, root's processes and capabilities are out of its reach by permission."""

PW_ATTEMPTS = ("read_pw_home_secret", "list_pw_home")
ROOT_ONLY_ATTEMPTS = ("capabilities", "sysctl_writable", "read_shadow", "setuid_root_file")
"""Attempts that have teeth only for a root caller (anyone else is refused without a sandbox)."""


def vsock_available() -> bool:
    """Whether this kernel creates AF_VSOCK sockets at all (without it that attempt is moot)."""
    try:
        socket.socket(40, socket.SOCK_STREAM).close()
    except OSError:
        return False
    return True


def host_resolves(name: str = DNS_NAME) -> bool:
    """Whether the host itself can resolve ``name`` (without it, the DNS attempt has no teeth)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import socket; socket.getaddrinfo({name!r}, 443)"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return done.returncode == 0


def escape_attempts(world: World, *, dns: bool) -> list[str]:
    """The attempts that have teeth on this host for this caller."""
    skip = set()
    if not dns:
        skip.add("dns_system")
    if world.pw_secret is None:
        skip.update(PW_ATTEMPTS)
    if os.geteuid() != 0:
        skip.update(ROOT_ONLY_ATTEMPTS)
    if not vsock_available():
        skip.add("vsock")
    return [name for name in ATTEMPT_GUARANTEES if name not in skip]


def escaped(found: dict[str, dict[str, Any]]) -> dict[str, str]:
    """{attempt: detail} of the attempts that reached their target."""
    return {name: v["detail"] for name, v in found.items() if v["escaped"]}


def disagreements(
    found: dict[str, dict[str, Any]], guarantees: tuple[sandbox.Guarantee, ...]
) -> dict[str, str]:
    """Attempts whose result contradicts the claimed guarantees, either way."""
    wrong = {}
    for name, verdict in found.items():
        claimed = all(g in guarantees for g in ATTEMPT_GUARANTEES[name])
        if os.geteuid() == 0 and name in BLOCKED_BY_RUN_UID:
            claimed = claimed or all(g in guarantees for g in BLOCKED_BY_RUN_UID[name])
        if claimed == verdict["escaped"]:
            state = "escaped although claimed" if claimed else "blocked although not claimed"
            wrong[name] = f"{state}: {verdict['detail']}"
    return wrong


def only_on_path(directory: Path, *programs: str) -> str:
    """A PATH holding only ``programs`` (symlinked from the host's): hides the others."""
    directory.mkdir(parents=True, exist_ok=True)
    for program in programs:
        found = shutil.which(program)
        if found is not None and not (directory / program).exists():
            (directory / program).symlink_to(found)
    return str(directory)


def unshare_only_path(tmp_path: Path) -> str:
    """A PATH on which util-linux is found but bubblewrap is not: ``auto`` picks unshare."""
    return only_on_path(tmp_path / "bin", "unshare", "prlimit", "setpriv")


NONAMESPACES = REPO / "tests" / "support" / "nonamespaces.py"


def run_as_nobody(
    spec: dict[str, Any], python: str, *, refused: str | None = None
) -> dict[str, Any]:
    """Run ``sandbox.run`` as uid 65534 through the driver; return the outcome as a dict.

    ``refused`` (``userns`` or ``all``): on a host that refuses those namespaces, as the
    namespace-refusing launcher simulates it.
    """
    launcher = [sys.executable, str(NONAMESPACES), refused, "--"] if refused else []
    driver = [python, str(PROBE.with_name("nobody_driver.py")), json.dumps(spec)]
    done = subprocess.run(
        [*launcher, *as_nobody(), *driver],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    outcome: dict[str, Any] = json.loads(done.stdout)
    return outcome


class RssSampler:
    """Samples this process's resident set size while a run is going on."""

    def __init__(self) -> None:
        self.baseline = self.rss()
        self.peak = self.baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def rss() -> int:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS in /proc/self/status")

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self.rss())

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.rss())
