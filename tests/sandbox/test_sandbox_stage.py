"""The sandbox's own process: the compiled stage is used when it is built, and only then.

conftest runs every bubblewrap test with each stage; these tests check which one really ran,
how the compiled one is built and cached, and that the Python one takes over where it cannot be.
"""

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
from sbx_support import REPO, needs_bwrap, needs_root

import sandbox
import sandbox._bubblewrap
import sandbox._stage
import sandbox._stagebin
from sandbox import Status
from sandbox._runuid import lease_uid
from sandbox._stagebin import _FLAGS, _SOURCE, CompiledStage, compiled_stage, locate

CC = shutil.which("cc", path="/usr/local/bin:/usr/bin:/bin")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this host")

pytestmark = pytest.mark.sandbox

_PID1 = ("/bin/sh", "-c", "tr '\\0' ' ' < /proc/1/cmdline")


def _pid1_argv0() -> str:
    outcome = sandbox.run(
        sandbox.Policy(argv=_PID1, source_env={"PATH": "/usr/bin:/bin", "HOME": "/"})
    )
    assert outcome.status is Status.PASSED, outcome
    return outcome.stdout.split()[0]


@needs_bwrap
@needs_cc
def test_the_compiled_stage_is_the_one_used_when_built(sandbox_stage: str) -> None:
    built = compiled_stage()
    assert built.fd is not None, built.detail
    assert built.path is not None
    report = sandbox.probe_host()
    # conftest chose the stage: unset (the default) or SANDBOX_STAGE=python.
    if sandbox_stage == "compiled":
        assert report.stage == "compiled"
        assert _pid1_argv0().startswith("/proc/self/fd/")
    else:
        assert report.stage == "python"
        assert Path(_pid1_argv0()).name.startswith("python")
    assert report.stage_detail == built.detail
    # The command builds (or finds) the same stage in its own process: the same compiler and
    # key, in the cache dir of its environment (the suite gives runs a cache dir of their own,
    # which this process may have looked up before it was set).
    line = next(x for x in _cli_text().splitlines() if x.startswith("sandbox stage: "))
    compiler = built.detail.split(" into ", 1)[0]
    assert line.startswith(f"sandbox stage: {report.stage} ({compiler} into "), line
    assert line.endswith(f"/{Path(built.path).name})"), line


def _cli_text() -> str:
    """What ``exampleguard sandbox`` prints, run as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "exampleguard", "sandbox"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )
    return done.stdout


@needs_cc
def test_the_stage_compiles_without_a_warning() -> None:
    assert CC is not None
    done = subprocess.run(
        [CC, *_FLAGS, "-fsyntax-only", str(_SOURCE)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")


def _built_in(cache: Path) -> Path:
    """Build the stage into ``cache``; its path (the descriptor is closed)."""
    built = locate([cache])
    assert built.fd is not None, built.detail
    assert built.path is not None
    os.close(built.fd)
    return Path(built.path)


@needs_cc
def test_a_build_is_cached_and_reused(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = locate([cache])
    assert first.fd is not None, first.detail
    assert first.path is not None
    binary = Path(first.path)
    assert binary.parent == cache
    assert (cache.stat().st_mode & 0o777, binary.stat().st_mode & 0o777) == (0o700, 0o700)
    # No temporary left: the binary, and beside a static one the record of its C library.
    record = binary.with_name(binary.name + ".libc")
    assert not [p for p in cache.iterdir() if p not in (binary, record)]
    mtime = binary.stat().st_mtime_ns
    second = locate([cache])
    assert (second.path, binary.stat().st_mtime_ns) == (first.path, mtime)
    for found in (first, second):
        assert found.fd is not None
        os.close(found.fd)


@needs_cc
@pytest.mark.parametrize("spoil", ["group-writable file", "world-writable dir"])
def test_a_cache_that_others_can_write_is_never_run(spoil: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    binary = _built_in(cache)
    if spoil == "group-writable file":
        binary.chmod(0o770)
    else:
        cache.chmod(0o777)
    refused = locate([cache])
    assert refused.fd is None
    assert refused.detail.startswith("compiled stage refused:"), refused.detail
    # The next place is tried, and checked the same way.
    fallback = locate([cache, tmp_path / "other"])
    assert fallback.fd is not None
    assert fallback.path == str(tmp_path / "other" / binary.name)
    os.close(fallback.fd)


@needs_cc
@needs_root
def test_a_cached_binary_of_another_owner_is_never_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    binary = _built_in(cache)
    os.chown(binary, 65534, 65534)
    refused = locate([cache])
    assert (refused.fd, refused.detail) == (
        None,
        f"compiled stage refused: {binary} is not a file of this user's alone",
    )


def test_without_a_compiler_there_is_no_compiled_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox._stagebin, "_COMPILER_PATH", str(tmp_path))
    found = locate([tmp_path / "cache"])
    assert found == CompiledStage(None, None, f"no C compiler (cc) on {tmp_path}")
    assert not (tmp_path / "cache").exists()


@needs_cc
def test_a_failed_build_leaves_nothing_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "_stage.c"
    broken.write_text("int main(void) { int unused; return 0; }\n", encoding="utf-8")
    monkeypatch.setattr(sandbox._stagebin, "_SOURCE", broken)
    found = locate([tmp_path / "cache"])
    assert found.fd is None
    assert "failed:" in found.detail, found.detail
    assert "error: unused variable" in found.detail, found.detail
    assert list((tmp_path / "cache").iterdir()) == []


@needs_bwrap
def test_the_python_stage_runs_where_none_is_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    why = "no C compiler (cc) on /nowhere"
    monkeypatch.setattr(
        sandbox._bubblewrap, "compiled_stage", lambda: CompiledStage(None, None, why)
    )
    # A PATH of its own: a fresh probe, which finds no compiled stage.
    path = f"/usr/bin:/bin:{tmp_path}"
    report = sandbox.probe_host(path=path)
    assert (report.full_isolation, report.stage, report.stage_detail) == (True, "python", why)
    outcome = sandbox.run(sandbox.Policy(argv=_PID1, source_env={"PATH": path, "HOME": "/"}))
    assert outcome.status is Status.PASSED, outcome
    assert Path(outcome.stdout.split()[0]).name.startswith("python")


# The stage's own steps, run directly (no bubblewrap, no uid change, no Landlock): the fixture
# bounds and the report lines, which the host-side checks keep every sandboxed run from
# reaching, must fail closed the same way in both stages.

STAGE_KINDS = [pytest.param("compiled", marks=needs_cc), "python"]


def _stage_command(kind: str) -> list[str]:
    if kind == "python":
        return [sys.executable, "-I", "-S", str(Path(sandbox._stage.__file__))]
    built = compiled_stage()
    assert built.path is not None, built.detail
    return [built.path]


def _run_stage(
    kind: str,
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
            [*around, *_stage_command(kind), *words, *settings, "--", *argv],
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


@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_the_stage_lays_out_copies_and_reports_the_exit(kind: str, tmp_path: Path) -> None:
    fixtures = _fixtures(tmp_path)
    settings = [f"fixtures={fixtures}", *_bounds(), "dir=.home/.config", "dir=.tmp"]
    lines, done = _run_stage(kind, tmp_path, settings, ["/bin/sh", "-c", "sub/tool.sh; exit 3"])
    assert (lines, done.returncode, done.stdout) == (["exit 3"], 0, "tool\n")
    work = tmp_path / "work"
    assert (work / "data.txt").read_text(encoding="utf-8") == "data\n"
    assert (work / "sub" / "tool.sh").stat().st_mode & 0o111
    assert not (work / "data.txt").stat().st_mode & 0o111
    assert (work / ".home" / ".config").is_dir()
    assert (work / ".tmp").is_dir()
    assert work.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("kind", STAGE_KINDS)
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
    kind: str, spoil: str, error: str, tmp_path: Path
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
    lines, done = _run_stage(kind, tmp_path, settings, ["/bin/sh", "-c", f"touch {marker}"])
    assert (lines, done.returncode) == ([f"error {error}"], 1)
    assert not marker.exists()


@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_a_name_cannot_start_a_report_line_of_its_own(kind: str, tmp_path: Path) -> None:
    fixtures = _fixtures(tmp_path)
    (fixtures / "x\nexit 0").symlink_to("/etc/passwd")
    lines, done = _run_stage(kind, tmp_path, [f"fixtures={fixtures}", *_bounds()], ["true"])
    assert lines == ["error fixtures: x?exit 0 is not a regular file or directory"]
    assert done.returncode == 1


@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_the_stage_reports_a_signal_and_a_missing_program(kind: str, tmp_path: Path) -> None:
    lines, _ = _run_stage(kind, tmp_path, [], ["/bin/sh", "-c", "kill -9 $$"])
    assert lines == ["signal 9"]
    (tmp_path / "work").rmdir()
    lines, done = _run_stage(kind, tmp_path, [], ["no-such-program-for-stage-tests"])
    assert lines == ["error execvp no-such-program-for-stage-tests: No such file or directory"]
    assert done.stderr == ""


@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_a_run_that_prints_the_exec_failure_line_still_ran(kind: str, tmp_path: Path) -> None:
    # What the stage once wrote when it could not exec, printed by a program that did run:
    # the report says how it exited, and the text is the run's own output.
    forged = "echo 'sandbox: execvp python3: No such file or directory' >&2; exit 127"
    lines, done = _run_stage(kind, tmp_path, [], ["/bin/sh", "-c", forged])
    assert lines == ["exit 127"]
    assert done.stderr.startswith("sandbox: execvp python3")


@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_settings_the_stage_cannot_use_start_nothing(kind: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    lines, done = _run_stage(
        kind, tmp_path, ["fixtures=/nonexistent-fixtures", *_bounds()], ["touch", str(marker)]
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


@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_the_run_holds_no_descriptor_of_the_stage_however_high(kind: str, tmp_path: Path) -> None:
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    # As high as this host lets a process go (raising a hard limit takes CAP_SYS_RESOURCE,
    # which a container may withhold): past 65535 where it can.
    hard = limits[1] if limits[1] != resource.RLIM_INFINITY else _HIGH_FD + 1
    number = min(_HIGH_FD, hard - 1)
    try:
        # This process's own soft limit, restored below; no host setting.
        resource.setrlimit(resource.RLIMIT_NOFILE, (number + 1, limits[1]))
        argv = [sys.executable, "-I", "-c", _FORGE]
        lines, done = _run_stage(kind, tmp_path, [], argv, high=number)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    assert (done.stdout, lines) == ("[]\n", ["exit 3"]), done.stderr


@needs_bwrap
def test_the_run_starts_with_no_signal_ignored_or_blocked(sandbox_stage: str) -> None:
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
def test_the_run_starts_with_the_c_library_s_own_signals_not_ignored(sandbox_stage: str) -> None:
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
@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_the_run_cannot_interrupt_the_stage(kind: str, tmp_path: Path) -> None:
    # As pid 1 of its namespace the stage gets only the signals it handles from inside: none.
    # (Landlock's signal scoping is a second layer where the kernel has it; this is the first.)
    around = (_tool("unshare"), "--pid", "--fork", "--kill-child", "--")
    script = "kill -INT 1; kill -TERM 1; kill -HUP 1; sleep 0.2; exit 4"
    lines, done = _run_stage(kind, tmp_path, [], ["/bin/sh", "-c", script], around=around)
    assert (lines, done.stderr) == (["exit 4"], "")


def _wrapped_cc(directory: Path, before: str, mode: int = 0o755) -> Path:
    """A ``cc`` in ``directory`` that runs ``before`` (sh), then the real compiler."""
    assert CC is not None
    directory.mkdir(mode=0o755, exist_ok=True)
    wrapper = directory / "cc"
    wrapper.write_text(f'#!/bin/sh\n{before}\nexec {CC} "$@"\n', encoding="utf-8")
    wrapper.chmod(mode)
    return wrapper


def _first_on_path(directory: Path) -> str:
    """A compiler search path with ``directory`` first (the real one's as and ld after it)."""
    return f"{directory}:/usr/bin:/bin"


def _static_name(compiler: str) -> str:
    """The cache name of the static build by ``compiler`` (as the stage names it)."""
    source = _SOURCE.read_bytes()
    return f"stage-{sandbox._stagebin._key(source, compiler, (*_FLAGS, '-static'))}"


@needs_cc
def test_a_static_stage_is_built_anew_when_its_c_library_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A static binary carries the C library it was linked with: after a security update of the
    # library, the stage must be linked again. The compiler here names an archive of the test's
    # own as the one it links (the real one is linked; the host's is never touched).
    archive = tmp_path / "libc.a"
    archive.write_bytes(b"!<arch>\n")
    bin_dir = tmp_path / "bin"
    wrapper = _wrapped_cc(
        bin_dir,
        'for word in "$@"; do [ "$word" = -print-file-name=libc.a ] '
        f"&& echo {archive} && exit 0; done",
    )
    monkeypatch.setattr(sandbox._stagebin, "_COMPILER_PATH", _first_on_path(bin_dir))
    cache = tmp_path / "cache"
    binary = _built_in(cache)
    if binary.name != _static_name(str(wrapper)):
        pytest.skip("the C library cannot be linked statically here")
    record = binary.with_name(binary.name + ".libc")
    assert record.read_bytes().split(b"\0")[0] == str(archive).encode()
    first = binary.stat().st_ino

    assert (_built_in(cache), binary.stat().st_ino) == (binary, first)  # unchanged: reused

    archive.write_bytes(b"!<arch>\nupdated\n")
    assert _built_in(cache) == binary
    second = binary.stat().st_ino
    assert second != first  # linked again
    assert _built_in(cache) == binary
    assert binary.stat().st_ino == second  # and reused from then on

    # A record that is missing, or not this user's alone, counts as a changed library.
    record.unlink()
    assert _built_in(cache) == binary
    third = binary.stat().st_ino
    assert third != second
    assert record.is_file()
    record.chmod(0o622)
    assert _built_in(cache) == binary
    assert binary.stat().st_ino != third


@needs_cc
def test_a_compiler_that_names_no_archive_builds_the_dynamic_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the archive's name no later process could tell it changed: no static build.
    bin_dir = tmp_path / "bin"
    wrapper = _wrapped_cc(
        bin_dir,
        'for word in "$@"; do [ "$word" = -print-file-name=libc.a ] && echo libc.a && exit 0; done',
    )
    monkeypatch.setattr(sandbox._stagebin, "_COMPILER_PATH", _first_on_path(bin_dir))
    cache = tmp_path / "cache"
    binary = _built_in(cache)
    source = _SOURCE.read_bytes()
    assert binary.name == f"stage-{sandbox._stagebin._key(source, str(wrapper), _FLAGS)}"
    assert [p.name for p in cache.iterdir()] == [binary.name]


@needs_cc
@pytest.mark.parametrize("spoil", ["world-writable dir", "group-writable compiler"])
def test_a_compiler_others_could_have_replaced_is_never_run(
    spoil: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CC is not None
    marker = tmp_path / "ran"
    bin_dir = tmp_path / "bin"
    wrapper = _wrapped_cc(bin_dir, f"touch {marker}")
    if spoil == "world-writable dir":
        bin_dir.chmod(0o777)
    else:
        wrapper.chmod(0o775)
    monkeypatch.setattr(sandbox._stagebin, "_COMPILER_PATH", _first_on_path(bin_dir))
    found = locate([tmp_path / "cache"])
    if spoil == "world-writable dir":
        # Nothing in that dir is looked at: the next dir's compiler builds it.
        assert found.fd is not None, found.detail
        os.close(found.fd)
        assert found.detail.startswith(f"compiled with {os.path.realpath(CC)} into ")
    else:
        assert found.fd is None
        assert found.detail == (
            "no C compiler (cc) this user can trust on "
            f"{_first_on_path(bin_dir)}: {wrapper} or a dir above it is writable by others"
        )
    assert not marker.exists()
    # The same compiler where only its owner can change it is used.
    bin_dir.chmod(0o755)
    wrapper.chmod(0o755)
    trusted = locate([tmp_path / "other-cache"])
    assert trusted.fd is not None, trusted.detail
    os.close(trusted.fd)
    assert marker.exists()


@needs_cc
def test_a_compiler_that_warns_leaves_the_python_stage_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    _wrapped_cc(bin_dir, "echo 'cc: warning: this compiler is not the one it claims' >&2")
    monkeypatch.setattr(sandbox._stagebin, "_COMPILER_PATH", _first_on_path(bin_dir))
    found = locate([tmp_path / "cache"])
    assert found.fd is None
    assert found.detail.endswith("warned: cc: warning: this compiler is not the one it claims"), (
        found.detail
    )
    assert list((tmp_path / "cache").iterdir()) == []


@needs_cc
def test_the_build_lands_in_the_checked_dir_when_its_path_is_swapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whoever can write the cache dir's parent can rename the checked dir away and put a dir of
    # their own, with a link to a victim file, at its path while the compiler runs.
    cache = tmp_path / "cache"
    victim = tmp_path / "victim"
    victim.write_text("untouched\n", encoding="utf-8")
    swap = (
        'out=; next=; for word in "$@"; do [ "$next" ] && out=$word; '
        'next=; [ "$word" = -o ] && next=1; done\n'
        f'mv {cache} {cache}.checked && mkdir {cache} && ln -s {victim} "{cache}/${{out##*/}}"'
    )
    _wrapped_cc(tmp_path / "bin", swap)
    monkeypatch.setattr(sandbox._stagebin, "_COMPILER_PATH", _first_on_path(tmp_path / "bin"))
    found = locate([cache])
    assert found.fd is not None, found.detail
    os.close(found.fd)
    assert victim.read_text(encoding="utf-8") == "untouched\n"
    built = Path(f"{cache}.checked") / Path(str(found.path)).name
    assert built.is_file()
    # The swapped-in dir holds its planted link and nothing the build wrote.
    assert [entry.is_symlink() for entry in cache.iterdir()] == [True]


@needs_root
@pytest.mark.parametrize("kind", STAGE_KINDS)
def test_a_bounding_set_the_stage_cannot_drop_starts_nothing(kind: str, tmp_path: Path) -> None:
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
        lines, done = _run_stage(kind, reachable, settings, argv, around=around)
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
def test_a_run_that_kills_itself_with_any_signal_is_reported_killed_by_it(
    sandbox_stage: str,
) -> None:
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
