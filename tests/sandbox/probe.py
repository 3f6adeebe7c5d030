"""Escape probe: attempts each escape a sandbox must block and prints one JSON verdict per attempt.

Run as a program (standard library only): ``python probe.py MODE CONFIG_JSON``. The config is
passed inline so that nothing but the interpreter and this file must be visible in a sandbox,
and it carries a unique token so that every process of the probe (forks included) can be found
in the host's /proc afterwards.

Modes:
- ``attempts``: run each attempt in ``config["attempts"]``; print ``{"attempt", "escaped",
  "detail"}`` per line. ``escaped`` is true when the attempt reached what it aimed at.
- ``grandchild``: double-fork a SIGTERM-ignoring daemon that writes ``config["marker"]`` after
  ``config["delay"]`` seconds, then lingers; the probe itself exits at once.
- ``sleep``: ignore SIGTERM, fork a child that does too, and sleep forever.
- ``flood``: write ``config["bytes"]`` bytes to stdout.
- ``alloc``: allocate ``config["mb"]`` MiB and print ``allocated``.
- ``fork``: try to start ``config["count"]`` sleeping children; print how many started.
- ``crash``: dereference a null pointer.
- ``fill``: write ``config["mb"]`` MiB into each of ``config["places"]``; print how much each took.
- ``hold``: under an address-space limit of ``config["as_mb"]`` MiB, make the kernel hold
  ``config["mb"]`` MiB outside it, the way ``config["way"]`` names (``memfd``, ``sysv_shm``,
  ``socket_buffers``); print ``held N`` after each MiB, then ``held all``.
- ``fds``: print the descriptors it inherited.
- ``limits``: print its core-dump limit.
- ``victim``: leave secrets in the work dir, $TMPDIR, /tmp and /dev/shm, print ``ready``, linger.
- ``attack_sibling``: try to reach a ``victim`` run (``config["sibling"]``); one verdict each.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEAD_PROXY = "http://127.0.0.1:9"
PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
TIMEOUT_S = 3.0


def _ping(sock: socket.socket) -> bool:
    sock.sendall(b"ping")
    return sock.recv(4) == b"pong"


def tcp(cfg: dict[str, Any]) -> tuple[bool, str]:
    with socket.create_connection(("127.0.0.1", cfg["tcp_port"]), timeout=TIMEOUT_S) as sock:
        return _ping(sock), "connected"


def udp(cfg: dict[str, Any]) -> tuple[bool, str]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(TIMEOUT_S)
        # Connected, so that a closed port fails at once (ECONNREFUSED) instead of timing out.
        sock.connect(("127.0.0.1", cfg["udp_port"]))
        sock.send(b"ping")
        data = sock.recv(16)
        return data == b"pong", "answered"


def abstract_unix(cfg: dict[str, Any]) -> tuple[bool, str]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT_S)
        sock.connect("\0" + cfg["abstract_name"])
        return _ping(sock), "connected"


def dns_loopback(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Resolve a name through a DNS server listening on the host's loopback."""
    query = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    query += b"".join(bytes([len(p)]) + p.encode() for p in ["probe", "test"]) + b"\0"
    query += struct.pack(">HH", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(TIMEOUT_S)
        sock.connect(("127.0.0.1", cfg["dns_port"]))
        sock.send(query)
        answer = sock.recv(512)
    address = socket.inet_ntoa(answer[-4:])
    return address == "192.0.2.53", f"resolved to {address}"


def dns_system(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Resolve a public name through the system resolver."""
    found = socket.getaddrinfo(cfg["dns_name"], 443, type=socket.SOCK_STREAM)
    return bool(found), f"resolved to {found[0][4][0]}"


def read_home_secret(cfg: dict[str, Any]) -> tuple[bool, str]:
    text = Path(cfg["home_secret"]).read_text(encoding="utf-8")
    return text == cfg["secret"], "read the secret planted in $HOME"


def read_pw_home_secret(cfg: dict[str, Any]) -> tuple[bool, str]:
    text = Path(cfg["pw_home_secret"]).read_text(encoding="utf-8")
    return text == cfg["secret"], "read the secret planted in the password database's home"


def list_pw_home(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Entries of the passwd home other than those the run was allowed to see."""
    allowed = set(cfg.get("pw_home_allowed", ()))
    extra = sorted({p.name for p in Path(cfg["pw_home"]).iterdir()} - allowed)
    return bool(extra), f"visible: {extra[:8]}"


def _write(path: str) -> tuple[bool, str]:
    Path(path).write_text("escaped", encoding="utf-8")
    return True, f"wrote {path}"


def write_project(cfg: dict[str, Any]) -> tuple[bool, str]:
    return _write(cfg["project_file"])


def write_home(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Write into $HOME as the host has it (in a sandbox: where the mask lies over it)."""
    return _write(cfg["home_file"])


def write_host_tmp(cfg: dict[str, Any]) -> tuple[bool, str]:
    return _write(cfg["host_tmp_file"])


def write_var_tmp(cfg: dict[str, Any]) -> tuple[bool, str]:
    return _write(cfg["var_tmp_file"])


def env_credentials(cfg: dict[str, Any]) -> tuple[bool, str]:
    visible = [name for name in cfg["credential_names"] if name in os.environ]
    return bool(visible), f"visible: {visible}"


def proxies(cfg: dict[str, Any]) -> tuple[bool, str]:
    live = {name: os.environ.get(name) for name in PROXY_NAMES}
    live = {name: value for name, value in live.items() if value != DEAD_PROXY}
    no_proxy = os.environ.get("NO_PROXY"), os.environ.get("no_proxy")
    escaped = bool(live) or no_proxy != ("", "")
    return escaped, f"not dead: {live}, NO_PROXY={no_proxy}"


def own_home(cfg: dict[str, Any]) -> tuple[bool, str]:
    cwd = Path.cwd().resolve()
    names = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
    outside = {
        name: os.environ.get(name)
        for name in (*names, "TMPDIR")
        if cwd not in Path(os.environ.get(name, "/")).resolve().parents
    }
    if "XDG_RUNTIME_DIR" in os.environ:
        outside["XDG_RUNTIME_DIR"] = os.environ["XDG_RUNTIME_DIR"]
    return bool(outside), f"outside the work dir: {outside}"


def host_process_visible(cfg: dict[str, Any]) -> tuple[bool, str]:
    pid = cfg["host_pid"]
    return Path(f"/proc/{pid}").exists(), f"/proc/{pid} of the host's test process"


def capabilities(cfg: dict[str, Any]) -> tuple[bool, str]:
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith(("CapEff:", "CapPrm:", "CapInh:", "CapAmb:")) and int(
            line.split()[1], 16
        ):
            return True, line
    return False, "no effective, permitted, inheritable or ambient capability"


def fs_unix_stream(cfg: dict[str, Any]) -> tuple[bool, str]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT_S)
        sock.connect(cfg["fs_socket"])
        return _ping(sock), f"connected to {cfg['fs_socket']}"


def fs_unix_dgram(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Reach a datagram socket through a socketpair, which socket(AF_UNIX) filters miss."""
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with left, right:
        left.sendto(b"ping", cfg["fs_dgram_socket"])
    return True, f"sent a datagram to {cfg['fs_dgram_socket']}"


def sysctl_writable(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Open a global sysctl for writing, and close it again without writing a byte."""
    fd = os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY)
    os.close(fd)
    return True, "opened /proc/sys/kernel/core_pattern for writing (nothing written)"


def read_shadow(cfg: dict[str, Any]) -> tuple[bool, str]:
    data = Path("/etc/shadow").read_bytes()
    return bool(data), "read /etc/shadow"


def setuid_in_work_dir(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Make a setuid file in the working directory, on a mount where setuid would count."""
    target = Path.cwd() / f"setuid-{cfg['token']}"
    target.write_bytes(b"#!/bin/sh\n")
    target.chmod(0o4755)
    cwd = Path.cwd().stat()
    options = ""
    for line in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
        fields = line.split()
        # The last mount whose device is the cwd's is the one the cwd is on.
        major, minor = (int(n) for n in fields[2].split(":"))
        if os.makedev(major, minor) == cwd.st_dev:
            options = fields[5]
    setuid = bool(target.stat().st_mode & 0o4000)
    return setuid and "nosuid" not in options.split(","), f"setuid file on a mount with {options}"


def setuid_root_file(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Make a setuid-root file where any local user could run it (the work dir on the host)."""
    target = Path.cwd() / f"setuid-root-{cfg['token']}"
    target.write_bytes(b"#!/bin/sh\n")
    target.chmod(0o4755)
    info = target.stat()
    return info.st_uid == 0 and bool(info.st_mode & 0o4000), f"setuid file of uid {info.st_uid}"


def unix_raw_socketpair(cfg: dict[str, Any]) -> tuple[bool, str]:
    """SOCK_RAW unix pairs are datagram pairs in disguise: sendto() reaches a socket file."""
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)
    with left, right:
        left.sendto(b"ping", cfg["fs_dgram_socket"])
    return True, f"sent a datagram to {cfg['fs_dgram_socket']} through a SOCK_RAW pair"


def write_root_fifo(cfg: dict[str, Any]) -> tuple[bool, str]:
    """A FIFO on the read-only root still opens for writing: a read-only mount does not stop it."""
    fd = os.open(cfg["fifo"], os.O_WRONLY | os.O_NONBLOCK)
    with contextlib.suppress(OSError):
        os.write(fd, b"escaped")
    os.close(fd)
    return True, f"opened {cfg['fifo']} for writing"


_KEYCTL = {"x86_64": 250, "aarch64": 219}
_KEYCTL_GET_KEYRING_ID = 0
_KEY_SPEC_USER_KEYRING = -4


def keyring(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Look up the calling user's keyring, shared by all of the user's processes."""
    libc = ctypes.CDLL(None, use_errno=True)
    import platform

    number = _KEYCTL[platform.machine()]
    found = libc.syscall(number, _KEYCTL_GET_KEYRING_ID, _KEY_SPEC_USER_KEYRING, 0)
    if found < 0:
        return False, f"keyctl: {os.strerror(ctypes.get_errno())}"
    return True, f"the user keyring is {found}"


def vsock(cfg: dict[str, Any]) -> tuple[bool, str]:
    with socket.socket(40, socket.SOCK_STREAM):  # AF_VSOCK: a channel to the hypervisor
        return True, "created an AF_VSOCK socket"


_PTRACE = {"x86_64": 101, "aarch64": 117}
_PTRACE_SEIZE = 0x4206
_PTRACE_DETACH = 17


def trace_parent(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Reach the parent (inside: the sandbox's own process) through /proc/PID/mem or ptrace."""
    parent = os.getppid()
    reached = []
    with contextlib.suppress(OSError):
        os.close(os.open(f"/proc/{parent}/mem", os.O_RDONLY))
        reached.append("opened its /proc/PID/mem")
    import platform

    libc = ctypes.CDLL(None, use_errno=True)
    number = _PTRACE[platform.machine()]
    # SEIZE does not stop the tracee; detaching at once leaves it as it was.
    if libc.syscall(number, _PTRACE_SEIZE, parent, 0, 0) == 0:
        libc.syscall(number, _PTRACE_DETACH, parent, 0, 0)
        reached.append("attached with ptrace")
    return bool(reached), f"parent {parent}: {reached or 'unreachable'}"


def parent_fds(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Open the parent's descriptors through /proc (inside: the report pipe of the sandbox's
    own process, which would let the run forge its verdict)."""
    parent = os.getppid()
    if parent == 0:
        return False, "the parent is outside this PID namespace"
    opened = []
    for fd in range(64):
        for flags in (os.O_WRONLY, os.O_RDONLY):
            try:
                os.close(os.open(f"/proc/{parent}/fd/{fd}", flags | os.O_NONBLOCK | os.O_NOCTTY))
            except OSError:
                continue
            opened.append(fd)
            break
    return bool(opened), f"opened descriptors {opened[:8]} of its parent {parent}"


def tcp_bind(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Listen on a TCP port (any address: a namespace whose loopback is down still has one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("0.0.0.0", 0))
        sock.listen()
        return True, f"listening on port {sock.getsockname()[1]}"


def signal_parent(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Signal 0 (no effect) to the parent: outside the sandbox, another process's business."""
    parent = os.getppid()
    if parent == 0:
        # kill(0) would signal our own process group: the parent is outside this namespace.
        return False, "the parent is outside this PID namespace"
    os.kill(parent, 0)
    return True, f"may signal its parent {parent}"


_PRLIMIT64 = {"x86_64": 302, "aarch64": 261}
_RLIMIT_NOFILE = 7
_PRIO_PROCESS = 0


def parent_rlimits(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Read the parent's rlimits (inside: the sandbox's own process's), which a same-uid
    process may also lower; reading changes nothing."""
    import platform

    parent = os.getppid()
    if parent == 0:
        return False, "the parent is outside this PID namespace"
    libc = ctypes.CDLL(None, use_errno=True)
    limits = (ctypes.c_uint64 * 2)()
    number = _PRLIMIT64[platform.machine()]
    if libc.syscall(number, parent, _RLIMIT_NOFILE, None, ctypes.byref(limits)) != 0:
        return False, f"prlimit64 on {parent}: {os.strerror(ctypes.get_errno())}"
    return True, f"read the open-files limit of its parent {parent}: {list(limits)}"


def parent_priority(cfg: dict[str, Any]) -> tuple[bool, str]:
    """Set the parent's nice value and CPU affinity (inside: the sandbox's own process's) to
    what they already are: allowed means any other value a same-uid process may set is too."""
    parent = os.getppid()
    if parent == 0:
        return False, "the parent is outside this PID namespace"
    reached = []
    with contextlib.suppress(OSError):
        os.setpriority(_PRIO_PROCESS, parent, os.getpriority(_PRIO_PROCESS, parent))
        reached.append("set its nice value")
    with contextlib.suppress(OSError):
        os.sched_setaffinity(parent, os.sched_getaffinity(parent))
        reached.append("set its CPU affinity")
    return bool(reached), f"parent {parent}: {reached or 'unreachable'}"


def locale_credential(cfg: dict[str, Any]) -> tuple[bool, str]:
    value = os.environ.get("LC_API_TOKEN")
    return value is not None, f"LC_API_TOKEN={value!r}"


def loader_env(cfg: dict[str, Any]) -> tuple[bool, str]:
    found = {n: v for n, v in os.environ.items() if n.startswith("LD_") or n == "BASH_ENV"}
    return bool(found), f"loader variables: {found}"


ATTEMPTS: dict[str, Callable[[dict[str, Any]], tuple[bool, str]]] = {
    fn.__name__: fn
    for fn in (
        tcp,
        udp,
        abstract_unix,
        dns_loopback,
        dns_system,
        read_home_secret,
        read_pw_home_secret,
        list_pw_home,
        write_project,
        write_host_tmp,
        write_var_tmp,
        write_home,
        env_credentials,
        proxies,
        own_home,
        host_process_visible,
        capabilities,
        fs_unix_stream,
        fs_unix_dgram,
        sysctl_writable,
        read_shadow,
        setuid_in_work_dir,
        unix_raw_socketpair,
        write_root_fifo,
        keyring,
        vsock,
        trace_parent,
        parent_fds,
        tcp_bind,
        signal_parent,
        parent_rlimits,
        parent_priority,
        locale_credential,
        loader_env,
        setuid_root_file,
    )
}


def attempts(cfg: dict[str, Any]) -> None:
    for name in cfg["attempts"]:
        try:
            escaped, detail = ATTEMPTS[name](cfg)
        except Exception as exc:
            escaped, detail = False, f"{type(exc).__name__}: {exc}"
        print(json.dumps({"attempt": name, "escaped": escaped, "detail": detail}), flush=True)


def fds(cfg: dict[str, Any]) -> None:
    """Print the descriptors this process inherited, as a JSON list (the listing's excluded)."""
    entries = list(Path("/proc/self/fd").iterdir())
    targets = {}
    for entry in entries:
        with contextlib.suppress(OSError):
            targets[int(entry.name)] = str(entry.readlink())
    # The listing's own descriptor is gone by now: it is the one whose link no longer reads.
    found = sorted(targets)
    print(json.dumps({"fds": found, "targets": targets}), flush=True)


def limits(cfg: dict[str, Any]) -> None:
    """Print the core-dump limit the run got: ``{"core": [soft, hard]}`` (-1: unlimited)."""
    import resource

    print(json.dumps({"core": list(resource.getrlimit(resource.RLIMIT_CORE))}), flush=True)


def victim(cfg: dict[str, Any]) -> None:
    """Leave secrets where a run keeps its files, then wait to be looked at.

    In the work dir, in $TMPDIR, in /tmp and in /dev/shm, each with the default modes a
    program gets; then print ``ready`` and sleep ``linger`` seconds.
    """
    secret = cfg["secret"]
    places = {
        "work_dir": Path.cwd() / "victim-secret.txt",
        "tmpdir": Path(os.environ.get("TMPDIR", "/tmp")) / "victim-secret.txt",
        "tmp": Path("/tmp") / f"victim-{cfg['token']}",
        "dev_shm": Path("/dev/shm") / f"victim-{cfg['token']}",
    }
    for path in places.values():
        with contextlib.suppress(OSError):
            path.write_text(secret, encoding="utf-8")
    print("ready", flush=True)
    time.sleep(cfg.get("linger", 30))


def attack_sibling(cfg: dict[str, Any]) -> None:
    """Reach another live run: its files, its /proc entries, signals and ptrace.

    ``cfg["sibling"]`` gives the victim's host pid and the paths its files have on the host.
    Prints one verdict per attempt, like ``attempts``.
    """
    sibling = cfg["sibling"]
    pid = sibling["pid"]

    def read(path: str) -> tuple[bool, str]:
        return Path(path).read_text(encoding="utf-8") == cfg["secret"], f"read {path}"

    def signal_it() -> tuple[bool, str]:
        os.kill(pid, 0)
        return True, f"may signal {pid}"

    def environ() -> tuple[bool, str]:
        data = Path(f"/proc/{pid}/environ").read_bytes()
        return bool(data), f"read /proc/{pid}/environ"

    def trace() -> tuple[bool, str]:
        import platform

        libc = ctypes.CDLL(None, use_errno=True)
        number = _PTRACE[platform.machine()]
        if libc.syscall(number, _PTRACE_SEIZE, pid, 0, 0) == 0:
            libc.syscall(number, _PTRACE_DETACH, pid, 0, 0)
            return True, f"attached to {pid}"
        return False, f"ptrace: {os.strerror(ctypes.get_errno())}"

    checks: dict[str, Callable[[], tuple[bool, str]]] = {
        f"sibling_{name}": functools.partial(read, path) for name, path in sibling["files"].items()
    }
    checks.update(sibling_signal=signal_it, sibling_environ=environ, sibling_ptrace=trace)
    for name, check in checks.items():
        try:
            escaped, detail = check()
        except Exception as exc:
            escaped, detail = False, f"{type(exc).__name__}: {exc}"
        print(json.dumps({"attempt": name, "escaped": escaped, "detail": detail}), flush=True)


def grandchild(cfg: dict[str, Any]) -> None:
    if os.fork() > 0:
        return
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    time.sleep(cfg["delay"])
    with contextlib.suppress(OSError):
        Path(cfg["marker"]).write_text("survived", encoding="utf-8")
    time.sleep(cfg.get("linger", 30))
    os._exit(0)


def sleep(cfg: dict[str, Any]) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.fork()  # both processes ignore SIGTERM and sleep
    print("sleeping", flush=True)
    while True:
        time.sleep(3600)


def flood(cfg: dict[str, Any]) -> None:
    chunk = b"x" * (1 << 20)
    remaining = cfg["bytes"]
    out = sys.stdout.buffer
    while remaining > 0:
        out.write(chunk[: min(remaining, len(chunk))])
        remaining -= len(chunk)
    out.flush()


def alloc(cfg: dict[str, Any]) -> None:
    block = bytearray(cfg["mb"] * 1024 * 1024)
    print("allocated", len(block), flush=True)


def fork(cfg: dict[str, Any]) -> None:
    started = []
    for _ in range(cfg["count"]):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        started.append(pid)
    print(len(started), flush=True)
    for pid in started:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def crash(cfg: dict[str, Any]) -> None:
    ctypes.string_at(0)


def fill(cfg: dict[str, Any]) -> None:
    """Write up to ``mb`` MiB into a file in each place; print {place: MiB written}."""
    chunk = b"x" * (1 << 20)
    written = {}
    for place in cfg["places"]:
        target = Path(os.path.expandvars(place)) / f"fill-{cfg['token']}"
        count = 0
        try:
            with target.open("wb") as out:
                for _ in range(cfg["mb"]):
                    out.write(chunk)
                    out.flush()
                    count += 1
        except OSError:
            pass
        written[place] = count
        with contextlib.suppress(OSError):
            target.unlink()
    print(json.dumps(written), flush=True)


def _memfd_chunks(mb: int) -> Any:
    fd = os.memfd_create("probe")
    chunk = b"x" * (1 << 20)
    for _ in range(mb):
        # Written, never mapped: the pages are the file's, in no address space.
        os.write(fd, chunk)
        yield fd


def _sysv_shm_chunks(mb: int) -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
    libc.shmdt.argtypes = (ctypes.c_void_p,)
    ipc_private, ipc_creat, ipc_rmid = 0, 0o1000, 0
    segments = []
    try:
        for _ in range(mb):
            segment = libc.shmget(ipc_private, 1 << 20, ipc_creat | 0o600)
            if segment < 0:
                raise OSError(ctypes.get_errno(), "shmget")
            segments.append(segment)
            # Attached for a moment to touch its pages, then detached: they stay the
            # segment's, which outlives its creator unless removed.
            address = libc.shmat(segment, None, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "shmat")
            ctypes.memset(address, 0x78, 1 << 20)
            libc.shmdt(address)
            yield segment
    finally:
        # Unsandboxed, the host would keep them: the test leaves nothing behind.
        for segment in segments:
            libc.shmctl(segment, ipc_rmid, None)


def _socket_buffer_chunks(mb: int) -> Any:
    pairs = []
    queued = 0
    while queued < mb << 20:
        sender, receiver = socket.socketpair()
        sender.setblocking(False)
        pairs.append((sender, receiver))
        with contextlib.suppress(BlockingIOError):
            while True:
                queued += sender.send(b"x" * 65536)
                if queued >> 20 > (queued - 65536) >> 20:
                    yield pairs


def hold(cfg: dict[str, Any]) -> None:
    """Hold memory outside the address space, reporting each MiB held."""
    import resource

    limit = cfg["as_mb"] << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    chunks = {
        "memfd": _memfd_chunks,
        "sysv_shm": _sysv_shm_chunks,
        "socket_buffers": _socket_buffer_chunks,
    }[cfg["way"]]
    held = 0
    kept = []
    with contextlib.closing(chunks(cfg["mb"])) as chunk_by_chunk:
        for kept_alive in chunk_by_chunk:
            kept.append(kept_alive)
            held += 1
            print("held", held, flush=True)
            if held == cfg["mb"]:
                break
        print("held all", flush=True)


MODES: dict[str, Callable[[dict[str, Any]], None]] = {
    fn.__name__: fn
    for fn in (
        attempts,
        grandchild,
        sleep,
        flood,
        alloc,
        fork,
        crash,
        fill,
        hold,
        fds,
        limits,
        victim,
        attack_sibling,
    )
}

if __name__ == "__main__":
    MODES[sys.argv[1]](json.loads(sys.argv[2]))
