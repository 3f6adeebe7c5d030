"""The ``landlock`` backend: every escape attempt, where no namespace can be made.

The same attempts as ``test_sandbox_escapes`` (writes outside the work dir, the caller's home,
loopback TCP, UDP and abstract sockets, signals, ptrace, another process's memory and
environment, a root caller's sysctl, /etc/shadow and setuid attempts, a double-forked
daemon), run through the backend that Landlock, seccomp, rlimits and a subreaper make. Each
attempt that reaches its target must be one whose guarantee the outcome does not claim.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from sbx_support import (
    NONAMESPACES,
    PROBE,
    PW_ATTEMPTS,
    REPO,
    ROOT_ONLY_ATTEMPTS,
    Listeners,
    World,
    disagreements,
    escape_attempts,
    escaped,
    kill_token,
    needs_landlock,
    needs_root,
    nobody_python,
    probe_argv,
    processes_with,
    run_as_nobody,
    verdicts,
)

import sandbox
from sandbox import Guarantee, Status
from tests.support.runuid import python_for

NOT_HELD = {
    Guarantee.WORK_DIR_ONLY_WRITABLE,
    Guarantee.OWN_PID_NAMESPACE,
    Guarantee.PRIVATE_TMP,
    Guarantee.READ_ONLY_ROOT,
    Guarantee.DISK_LIMIT,
    Guarantee.MEMORY_CGROUP,
}


@needs_landlock
@pytest.mark.enable_socket
def test_landlock_blocks_every_escape_it_claims(
    world: World, listeners: Listeners, host_dns: bool
) -> None:
    attempts = escape_attempts(world, dns=host_dns)
    config = world.config(attempts, **listeners.config())
    # A root caller's run is another uid: it needs an interpreter every user may run.
    python = python_for("landlock")
    argv = probe_argv("attempts", config, python=python)
    outcome = sandbox.run(world.policy(argv, isolation="landlock"))
    assert (outcome.backend, outcome.status) == ("landlock", Status.PASSED), (
        outcome.detail,
        outcome.stderr,
    )
    found = verdicts(outcome.stdout)
    assert set(found) == set(attempts)
    wrong = disagreements(found, outcome.guarantees)
    # Blocked without being claimed is on the safe side (Landlock's own rules hold more than
    # the guarantees that name them); escaped although claimed never is.
    assert {k: v for k, v in wrong.items() if v.startswith("escaped")} == {}
    assert listeners.total() == 0
    assert set(outcome.not_guaranteed) <= NOT_HELD | {Guarantee.PYTHON_SOCKET_GUARD}
    assert NOT_HELD & set(outcome.guarantees) == set()
    # The attempts that matter most, by name: nothing of the host was reached.
    for name in ("write_home", "read_home_secret", "tcp", "udp", "abstract_unix", "ptrace"):
        if name in found:
            assert name not in escaped(found), found[name]


@needs_landlock
def test_landlock_kills_a_double_forked_setsid_daemon(world: World) -> None:
    marker = world.host_tmp / "marker"
    config = world.config([], marker=str(marker), delay=0.5)
    argv = probe_argv("grandchild", config, python=python_for("landlock"))
    try:
        outcome = sandbox.run(world.policy(argv, isolation="landlock"))
        assert (outcome.backend, outcome.status) == ("landlock", Status.PASSED), outcome.stderr
        assert Guarantee.TREE_KILLED in outcome.guarantees
        assert processes_with(world.token) == []
        time.sleep(1.0)
        assert not marker.exists()
    finally:
        kill_token(world.token)


@needs_landlock
def test_under_landlock_the_run_cannot_forge_its_exit_status(world: World) -> None:
    # It signals, stops and traces its parent (the sandbox's own process) where it can, and
    # prints the sandbox's old exec-failure line; then exits 3: the verdict stays 3.
    script = (
        "import ctypes, os, signal, sys\n"
        "parent = os.getppid()\n"
        "for sig in (signal.SIGSTOP, signal.SIGKILL, signal.SIGTERM):\n"
        "    try: os.kill(parent, sig)\n"
        "    except OSError: pass\n"
        "libc = ctypes.CDLL(None)\n"
        "libc.syscall(101, 16, parent, 0, 0)\n"  # PTRACE_ATTACH
        "sys.stderr.write('sandbox: execvp python3: No such file or directory\\n')\n"
        "raise SystemExit(3)\n"
    )
    python = python_for("landlock")
    outcome = sandbox.run(world.policy((python, "-c", script), isolation="landlock"))
    assert (outcome.status, outcome.exit_code) == (Status.FAILED, 3), outcome
    assert Guarantee.TRUSTED_EXIT_STATUS in outcome.guarantees


@needs_landlock
def test_a_guarantee_only_namespaces_give_fails_closed_under_landlock(world: World) -> None:
    policy = world.policy(
        ("/bin/true",), isolation="landlock", require=frozenset({Guarantee.OWN_PID_NAMESPACE})
    )
    with pytest.raises(sandbox.IsolationUnavailable, match="own-pid-namespace"):
        sandbox.run(policy)


HOSTS = ["userns", "all"]


@needs_landlock
@needs_root
@pytest.mark.enable_socket
@pytest.mark.parametrize("refused", HOSTS)
def test_where_namespaces_are_refused_auto_takes_landlock_for_a_non_root_caller(
    world: World, listeners: Listeners, host_dns: bool, refused: str
) -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")
    attempts = [a for a in escape_attempts(world, dns=host_dns) if a not in PW_ATTEMPTS]
    attempts = [a for a in attempts if a not in ROOT_ONLY_ATTEMPTS]
    config = world.config(attempts, **listeners.config())
    spec = {
        "argv": probe_argv("attempts", config, python=python),
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "pass_env": ["EXAMPLE_SETTING"],
        "source_env": {**world.source_env, "PATH": "/usr/bin:/bin"},
    }
    outcome = run_as_nobody(spec, python, refused=refused)
    assert (outcome["backend"], outcome["status"]) == ("landlock", "passed"), outcome
    found = verdicts(outcome["stdout"])
    assert set(found) == set(attempts)
    wrong = disagreements(found, tuple(Guarantee(g) for g in outcome["guarantees"]))
    assert {k: v for k, v in wrong.items() if v.startswith("escaped")} == {}
    assert listeners.total() == 0


@needs_landlock
@needs_root
@pytest.mark.enable_socket
@pytest.mark.parametrize("refused", HOSTS)
def test_where_namespaces_are_refused_auto_takes_landlock_for_root(
    world: World, listeners: Listeners, host_dns: bool, refused: str
) -> None:
    attempts = escape_attempts(world, dns=host_dns)
    config = world.config(attempts, **listeners.config())
    spec = {
        "argv": probe_argv("attempts", config, python=python_for("landlock")),
        "project_dir": str(world.project),
        "probe_dir": str(PROBE.parent),
        "pass_env": ["EXAMPLE_SETTING"],
        "source_env": {**world.source_env, "PATH": "/usr/bin:/bin"},
    }
    command = [sys.executable, str(NONAMESPACES), refused, "--", sys.executable]
    done = subprocess.run(
        [*command, str(PROBE.with_name("nobody_driver.py")), json.dumps(spec)],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    # Root makes namespaces without a user namespace: only a seccomp profile stops bubblewrap.
    assert outcome["backend"] == ("bwrap" if refused == "userns" else "landlock"), outcome
    assert outcome["status"] == "passed", outcome
    found = verdicts(outcome["stdout"])
    wrong = disagreements(found, tuple(Guarantee(g) for g in outcome["guarantees"]))
    assert {k: v for k, v in wrong.items() if v.startswith("escaped")} == {}
    assert listeners.total() == 0


def _setsid_sleepers(seconds: str) -> list[str]:
    found = ["pgrep", "-f", f"sleep {seconds}"]
    done = subprocess.run(found, capture_output=True, text=True, check=False)
    return done.stdout.split()


@needs_landlock
@pytest.mark.parametrize("caller", ["this user", "nobody"])
def test_a_timed_out_run_leaves_no_setsid_daemon_behind(world: World, caller: str) -> None:
    # A daemon in a session of its own is out of reach of a signal to the run's process group;
    # without a PID namespace only the subreaper can end it.
    seconds = f"{os.getpid() % 1000}.{time.monotonic_ns() % 1000:03d}"
    script = f"setsid sleep {seconds} & sleep 60"
    if caller == "nobody":
        python = nobody_python()
        if python is None:
            pytest.skip("no Python 3.11+ that uid 65534 can run")
        spec = {
            "argv": ["/bin/sh", "-c", script],
            "project_dir": str(world.project),
            "probe_dir": str(PROBE.parent),
            "source_env": {"PATH": "/usr/bin:/bin"},
            "limits": {"timeout_s": 1},
            "isolation": "landlock",
        }
        outcome = run_as_nobody(spec, python)
        status, backend = outcome["status"], outcome["backend"]
    else:
        policy = world.policy(
            ("/bin/sh", "-c", script), isolation="landlock", limits=sandbox.Limits(timeout_s=1)
        )
        result = sandbox.run(policy)
        status, backend = result.status.value, result.backend
    try:
        assert (backend, status) == ("landlock", "timed-out")
        assert _setsid_sleepers(seconds) == []
    finally:
        subprocess.run(["pkill", "-f", f"sleep {seconds}"], check=False)


# What a review of this backend found open, each tried the way it was found: the run prints
# one word per attempt, "blocked" or what it reached.
HOLES = r"""
import ctypes, os, socket, sys
port = int(sys.argv[1])
def attempt(name, action):
    try:
        action()
    except OSError:
        print(name, "blocked")
    else:
        print(name, "reached")
def mptcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
def autobind():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.listen(1)
def sysv():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.shmget(0x5BD1E5, 4096, 0o1600) < 0:
        raise OSError(ctypes.get_errno(), "shmget")
def sock_diag():
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4)
def dev_shm():
    os.listdir("/dev/shm")
def inotify():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.inotify_init1(0) < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
def abstract_name():
    a, b = socket.socketpair()
    a.bind("\0exampleguard-squat")
attempt("mptcp", mptcp)
attempt("autobind", autobind)
attempt("sysv", sysv)
attempt("sock_diag", sock_diag)
attempt("dev_shm", dev_shm)
attempt("inotify", inotify)
attempt("abstract_name", abstract_name)
"""


@needs_landlock
@pytest.mark.enable_socket
def test_what_a_review_found_open_is_closed(world: World, listeners: Listeners) -> None:
    python = python_for("landlock")
    port = listeners.config()["tcp_port"]
    argv = (python, "-c", HOLES, str(port))
    outcome = sandbox.run(world.policy(argv, isolation="landlock"))
    assert (outcome.backend, outcome.status) == ("landlock", Status.PASSED), outcome.stderr
    found = dict(line.split() for line in outcome.stdout.splitlines())
    holes = ("mptcp", "autobind", "sysv", "sock_diag", "dev_shm", "inotify", "abstract_name")
    assert found == dict.fromkeys(holes, "blocked")
    assert listeners.total() == 0


@needs_landlock
@needs_root
def test_an_unprivileged_callers_run_changes_none_of_its_files(world: World) -> None:
    # The run is the caller's own uid: Landlock guards writes, not modes, owners or times, nor
    # what a path that leads into the home through ".." or a program's tree would uncover.
    python = nobody_python()
    if python is None:
        pytest.skip("no Python 3.11+ that uid 65534 can run")
    home = world.host_tmp / "nobody-home"
    (home / ".cargo" / "bin").mkdir(parents=True)
    secret = home / "secret"
    secret.write_text("topsecret", encoding="utf-8")
    secret.chmod(0o600)
    (home / ".cargo" / "credentials.toml").write_text("token", encoding="utf-8")
    for path in [home, *home.rglob("*")]:
        os.chown(path, 65534, 65534)
    script = (
        f"import os\n"
        f"for what in ('chmod', 'read', 'cargo'):\n"
        f"    try:\n"
        f"        if what == 'chmod': os.chmod({str(secret)!r}, 0o666)\n"
        f"        elif what == 'read': open({str(home / '..' / home.name / 'secret')!r}).read()\n"
        f"        else: open({str(home / '.cargo' / 'credentials.toml')!r}).read()\n"
        f"    except OSError: print(what, 'blocked')\n"
        f"    else: print(what, 'reached')\n"
    )
    spec = {
        "argv": [python, "-c", script],
        "project_dir": str(home / ".." / home.name),
        "probe_dir": str(PROBE.parent),
        "source_env": {"PATH": "/usr/bin:/bin", "HOME": str(home)},
        "isolation": "landlock",
    }
    outcome = run_as_nobody(spec, python)
    assert outcome["status"] == "passed", outcome
    found = dict(line.split() for line in outcome["stdout"].splitlines())
    assert found == {"chmod": "blocked", "read": "blocked", "cargo": "blocked"}
    assert secret.stat().st_mode & 0o777 == 0o600
