"""The sandbox's own process (``_stage.py``): what it does before, around and after a run."""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from sbx_support import needs_bwrap, needs_root

import sandbox
import sandbox._bubblewrap
import sandbox._stage
from sandbox import Status
from sandbox._runuid import lease_uid

pytestmark = pytest.mark.sandbox

# The stage's own steps, run directly (no bubblewrap, no uid change, no Landlock): the fixture
# bounds and the report lines, which the host-side checks keep every sandboxed run from
# reaching, must fail closed.

_STAGE = [sys.executable, "-I", "-S", str(Path(sandbox._stage.__file__))]


def _run_stage(
    tmp_path: Path,
    settings: list[str],
    argv: list[str],
    high: int | None = None,
    around: tuple[str, ...] = (),
) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """Run the stage with ``settings`` around ``argv``; its report lines and its process.

    ``high``: the stage gets its report pipe as this descriptor and its control pipe below it.
    ``around``: the command that starts the stage (none: this process starts it).
    """
    work = tmp_path / "work"
    work.mkdir()
    report_read, report_write = os.pipe()
    control_read, control_write = os.pipe()
    try:
        if high is not None:
            for old, new in ((report_write, high), (control_read, high - 1)):
                os.dup2(old, new, inheritable=False)
                os.close(old)
            report_write, control_read = high, high - 1
        words = [f"report={report_write}", f"control={control_read}", f"work={work}"]
        done = subprocess.run(
            [*around, *_STAGE, *words, *settings, "--", *argv],
            pass_fds=(report_write, control_read),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=tmp_path,
        )
        os.close(report_write)
        report_write = -1
        with os.fdopen(report_read, "rb") as report:
            report_read = -1
            lines = report.read().decode("utf-8").splitlines()
    finally:
        for fd in (report_read, report_write, control_read, control_write):
            if fd >= 0:
                os.close(fd)
    return lines, done


def _fixtures(tmp_path: Path) -> Path:
    fixtures = tmp_path / "fixtures"
    (fixtures / "sub").mkdir(parents=True)
    (fixtures / "data.txt").write_text("data\n", encoding="utf-8")
    tool = fixtures / "sub" / "tool.sh"
    tool.write_text("#!/bin/sh\necho tool\n", encoding="utf-8")
    tool.chmod(0o755)
    return fixtures


def _bounds(entries: int = 100, size: int = 1 << 20) -> list[str]:
    return [f"max_entries={entries}", f"max_bytes={size}"]


def test_the_stage_lays_out_copies_and_reports_the_exit(tmp_path: Path) -> None:
    fixtures = _fixtures(tmp_path)
    settings = [f"fixtures={fixtures}", *_bounds(), "dir=.home/.config", "dir=.tmp"]
    lines, done = _run_stage(tmp_path, settings, ["/bin/sh", "-c", "sub/tool.sh; exit 3"])
    assert (lines, done.returncode, done.stdout) == (["exit 3"], 0, "tool\n")
    work = tmp_path / "work"
    assert (work / "data.txt").read_text(encoding="utf-8") == "data\n"
    assert (work / "sub" / "tool.sh").stat().st_mode & 0o111
    assert not (work / "data.txt").stat().st_mode & 0o111
    assert (work / ".home" / ".config").is_dir()
    assert (work / ".tmp").is_dir()
    assert work.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize(
    ("spoil", "error"),
    [
        ("entries", "fixtures: more than 2 entries"),
        ("bytes", "fixtures: more bytes than the limit allows"),
        ("symlink", "fixtures: link is not a regular file or directory"),
        ("fifo", "fixtures: pipe is not a regular file or directory"),
    ],
)
def test_a_fixture_the_stage_must_not_copy_stops_the_run(
    spoil: str, error: str, tmp_path: Path
) -> None:
    # The host checks the fixtures before a run; the stage checks again while copying
    # (a tree may change in between), and then nothing runs.
    fixtures = _fixtures(tmp_path)
    bounds = _bounds()
    if spoil == "entries":
        bounds = _bounds(entries=2)
    elif spoil == "bytes":
        bounds = _bounds(size=7)
    elif spoil == "symlink":
        (fixtures / "link").symlink_to("/etc/passwd")
    else:
        os.mkfifo(fixtures / "pipe")
    marker = tmp_path / "ran"
    settings = [f"fixtures={fixtures}", *bounds]
    lines, done = _run_stage(tmp_path, settings, ["/bin/sh", "-c", f"touch {marker}"])
    assert (lines, done.returncode) == ([f"error {error}"], 1)
    assert not marker.exists()


def test_a_name_cannot_start_a_report_line_of_its_own(tmp_path: Path) -> None:
    fixtures = _fixtures(tmp_path)
    (fixtures / "x\nexit 0").symlink_to("/etc/passwd")
    lines, done = _run_stage(tmp_path, [f"fixtures={fixtures}", *_bounds()], ["true"])
    assert lines == ["error fixtures: x?exit 0 is not a regular file or directory"]
    assert done.returncode == 1


def test_the_stage_reports_a_signal_and_a_missing_program(tmp_path: Path) -> None:
    lines, _ = _run_stage(tmp_path, [], ["/bin/sh", "-c", "kill -9 $$"])
    assert lines == ["signal 9"]
    (tmp_path / "work").rmdir()
    lines, done = _run_stage(tmp_path, [], ["no-such-program-for-stage-tests"])
    assert lines == ["error execvp no-such-program-for-stage-tests: No such file or directory"]
    assert done.stderr == ""


def test_a_run_that_prints_the_exec_failure_line_still_ran(tmp_path: Path) -> None:
    # What the stage once wrote when it could not exec, printed by a program that did run:
    # the report says how it exited, and the text is the run's own output.
    forged = "echo 'sandbox: execvp python3: No such file or directory' >&2; exit 127"
    lines, done = _run_stage(tmp_path, [], ["/bin/sh", "-c", forged])
    assert lines == ["exit 127"]
    assert done.stderr.startswith("sandbox: execvp python3")


def test_settings_the_stage_cannot_use_start_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    lines, done = _run_stage(
        tmp_path, ["fixtures=/nonexistent-fixtures", *_bounds()], ["touch", str(marker)]
    )
    assert len(lines) == 1
    assert lines[0].startswith("error "), lines
    assert "nonexistent-fixtures" in lines[0]
    assert done.returncode == 1
    assert not marker.exists()


# Descriptors numbered past 65535 (a caller with many files open): the run must hold none of
# the stage's, and could write its own "exit 0" on the report before the stage writes the real
# status (the caller takes the first) if it held that one.
_HIGH_FD = 70000
_FORGE = (
    "import os\n"
    "held = []\n"
    "for fd in sorted(int(name) for name in os.listdir('/proc/self/fd')):\n"
    "    try:\n"
    "        os.fstat(fd)\n"
    "    except OSError:\n"
    "        continue  # the listing's own, closed by now\n"
    "    if fd > 2:\n"
    "        held.append(fd)\n"
    "        try:\n"
    "            os.write(fd, b'exit 0\\n')\n"
    "        except OSError:\n"
    "            pass\n"
    "print(held)\n"
    "raise SystemExit(3)\n"
)


def test_the_run_holds_no_descriptor_of_the_stage_however_high(tmp_path: Path) -> None:
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    # As high as this host lets a process go (raising a hard limit takes CAP_SYS_RESOURCE,
    # which a container may withhold): past 65535 where it can.
    hard = limits[1] if limits[1] != resource.RLIM_INFINITY else _HIGH_FD + 1
    number = min(_HIGH_FD, hard - 1)
    try:
        # This process's own soft limit, restored below; no host setting.
        resource.setrlimit(resource.RLIMIT_NOFILE, (number + 1, limits[1]))
        argv = [sys.executable, "-I", "-c", _FORGE]
        lines, done = _run_stage(tmp_path, [], argv, high=number)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    assert (done.stdout, lines) == ("[]\n", ["exit 3"]), done.stderr


@needs_bwrap
def test_the_run_starts_with_no_signal_ignored_or_blocked() -> None:
    # An interpreter ignores SIGPIPE and SIGXFSZ for itself; a program it starts must not
    # inherit that, or a writer into a closed pipe fails loudly where it would end quietly.
    # Nor what the caller ignores: exampleguard run under nohup ignores SIGHUP.
    script = "yes | head -n 1; grep -E '^Sig(Blk|Ign)' /proc/self/status"
    policy = sandbox.Policy(
        argv=("/bin/sh", "-c", script), source_env={"PATH": "/usr/bin:/bin", "HOME": "/"}
    )
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        outcome = sandbox.run(policy)
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert outcome.status is Status.PASSED, outcome
    zero = "0" * 16
    assert (outcome.stdout, outcome.stderr) == (f"y\nSigBlk:\t{zero}\nSigIgn:\t{zero}\n", "")


_RT_SIGACTION = {"x86_64": 13, "aarch64": 134}.get(os.uname().machine)


def _kernel_sigaction(number: int, handler: int) -> int:
    """Set signal ``number``'s handler with the kernel's call; the previous handler."""
    libc = ctypes.CDLL(None, use_errno=True)
    new = struct.pack("QQQQ", handler, 0, 0, 0)
    old = ctypes.create_string_buffer(32)
    assert libc.syscall(_RT_SIGACTION, number, new, old, 8) == 0, ctypes.get_errno()
    previous: int = struct.unpack("QQQQ", old.raw)[0]
    return previous


@needs_bwrap
@pytest.mark.skipif(_RT_SIGACTION is None, reason="no rt_sigaction number for this machine")
def test_the_run_starts_with_the_c_library_s_own_signals_not_ignored() -> None:
    # Signal 32, which the C library keeps for its threads and refuses to set: a caller can
    # still ignore it through the kernel (some runtimes do), and the run inherits that.
    policy = sandbox.Policy(
        argv=("/bin/sh", "-c", "grep '^SigIgn' /proc/self/status"),
        source_env={"PATH": "/usr/bin:/bin", "HOME": "/"},
    )
    previous = _kernel_sigaction(32, 1)  # SIG_IGN
    try:
        outcome = sandbox.run(policy)
    finally:
        _kernel_sigaction(32, previous)
    assert outcome.status is Status.PASSED, outcome
    assert outcome.stdout == f"SigIgn:\t{'0' * 16}\n"


def _tool(name: str) -> str:
    """The path of program ``name``; the test is skipped where there is none."""
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"no {name} here")
    return found


@needs_root
def test_the_run_cannot_interrupt_the_stage(tmp_path: Path) -> None:
    # As pid 1 of its namespace the stage gets only the signals it handles from inside: none.
    # (Landlock's signal scoping is a second layer where the kernel has it; this is the first.)
    around = (_tool("unshare"), "--pid", "--fork", "--kill-child", "--")
    script = "kill -INT 1; kill -TERM 1; kill -HUP 1; sleep 0.2; exit 4"
    lines, done = _run_stage(tmp_path, [], ["/bin/sh", "-c", script], around=around)
    assert (lines, done.stderr) == (["exit 4"], "")


@needs_root
def test_a_bounding_set_the_stage_cannot_drop_starts_nothing(tmp_path: Path) -> None:
    # Started without CAP_SETPCAP, a root caller's stage cannot empty the bounding set: the
    # run must not start as the leased uid with every capability still in it.
    around = (_tool("bwrap"), "--dev-bind", "/", "/", "--cap-drop", "CAP_SETPCAP", "--")
    # A place the leased uid can reach (the test's own dirs are root's alone), as in a run.
    reachable = Path(tempfile.mkdtemp(prefix="sbx-stage-", dir="/var/tmp"))
    reachable.chmod(0o755)
    marker = reachable / "ran"
    lease = lease_uid()
    try:
        settings = [f"uid={lease.uid}", f"gid={lease.uid}"]
        argv = ["/bin/sh", "-c", f"grep CapBnd /proc/self/status; : > {marker}"]
        lines, done = _run_stage(reachable, settings, argv, around=around)
        assert not marker.exists()
    finally:
        lease.release()
        shutil.rmtree(reachable, ignore_errors=True)
    assert (lines, done.stdout) == (
        ["error prctl PR_CAPBSET_DROP: Operation not permitted"],
        "",
    )


# Every signal whose default action ends a process (SIGKILL and SIGSTOP aside: the one is
# tested above, the other stops rather than ends).
_ENDING = sorted(
    {
        signal.SIGHUP,
        signal.SIGINT,
        signal.SIGQUIT,
        signal.SIGILL,
        signal.SIGTRAP,
        signal.SIGABRT,
        signal.SIGBUS,
        signal.SIGFPE,
        signal.SIGUSR1,
        signal.SIGSEGV,
        signal.SIGUSR2,
        signal.SIGPIPE,
        signal.SIGALRM,
        signal.SIGTERM,
        signal.SIGXCPU,
        signal.SIGXFSZ,
        signal.SIGVTALRM,
        signal.SIGPROF,
        signal.SIGSYS,
    }
)


@needs_bwrap
def test_a_run_that_kills_itself_with_any_signal_is_reported_killed_by_it() -> None:
    # One run per signal: the shell kills itself, which its default action must end.
    found = {}
    for number in _ENDING:
        policy = sandbox.Policy(
            argv=("/bin/sh", "-c", f"kill -{int(number)} $$; exit 99"),
            source_env={"PATH": "/usr/bin:/bin", "HOME": "/"},
        )
        outcome = sandbox.run(policy)
        found[number.name] = (outcome.status, outcome.detail)
    assert found == {
        number.name: (Status.CRASHED, f"killed by {number.name}") for number in _ENDING
    }
