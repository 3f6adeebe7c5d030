"""Importing the user's tree runs their code (docs/live-tree.md).

The pipeline runs in this very process (``exampleguard._commands.validate.validate(...)``, as the
pytest plugin does), and the application's module misbehaves while it is imported: it raises,
hangs, prints, changes the working directory, clears or changes the environment, exits, starts
things that outlive the import. Each case either works (where it legitimately can) or gives one
clear ``tree-unavailable`` error that names the cause — and afterwards this process is exactly
as it was: working directory, environment, ``sys.modules``, ``sys.path``, signal handlers,
threads, child processes, and nothing written to its stdout or stderr.

``tests/tree/test_adapters.py`` covers the same failures through the CLI (exit 2, the message, no
traceback); this file proves the isolation of exampleguard's own process, and adds what
outlives an import (threads, forked and double-forked processes) and the memory a chatty
import can cost.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exampleguard._commands import validate as runner
from exampleguard._config import load_config
from tests.support.project import FIXTURE_APPS, REPOSITORY, app_project_files
from tests.support.unguarded import UNGUARDED


def project(root: Path, source: str, *, timeout: float = 20) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in app_project_files(source, timeout=timeout).items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def children_of(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


@dataclass(frozen=True)
class State:
    """What a run in this process must leave exactly as it was."""

    cwd: str
    environ: dict[str, str]
    modules: frozenset[str]
    path: list[str]
    handlers: dict[int, Any]
    threads: frozenset[int]
    children: frozenset[int]
    descriptors: frozenset[str]

    @classmethod
    def now(cls) -> State:
        return cls(
            cwd=str(Path.cwd()),
            # pytest itself updates PYTEST_CURRENT_TEST between the phases of a test.
            environ={k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"},
            modules=frozenset(sys.modules),
            path=list(sys.path),
            handlers={s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)},
            threads=frozenset(t.ident or 0 for t in threading.enumerate()),
            children=frozenset(children_of(os.getpid())),
            descriptors=frozenset(fd.name for fd in Path("/proc/self/fd").iterdir()),
        )


@pytest.fixture(scope="module")
def warmed_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One clean run first, so the lazy imports of exampleguard itself are done."""
    root = project(tmp_path_factory.mktemp("warm-up"), "")
    outcome = runner.validate(load_config(None, root))
    assert outcome.unusable == [], outcome.unusable
    assert outcome.report is not None
    assert outcome.report.ok is True


@pytest.fixture
def untouched(
    warmed_up: None, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Assert that the test leaves this process as it found it, and prints nothing."""
    del warmed_up
    # The child finds exampleguard and click through PYTHONPATH, as an installed tool would.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)]))
    before = State.now()
    yield
    # A helper thread or a killed child may take a moment to finish; give them that moment.
    deadline = time.monotonic() + 5
    after = State.now()
    while time.monotonic() < deadline and not (
        after.threads <= before.threads
        and after.children <= before.children
        and after.descriptors <= before.descriptors
    ):
        time.sleep(0.05)
        after = State.now()
    assert after.cwd == before.cwd, "the working directory changed"
    assert after.environ == before.environ, "the environment changed"
    assert after.modules == before.modules, sorted(after.modules ^ before.modules)
    assert after.path == before.path, "sys.path changed"
    assert after.handlers == before.handlers, "a signal handler changed"
    assert after.threads <= before.threads, "a thread was left running"
    assert after.children <= before.children, "a child process was left running"
    assert after.descriptors <= before.descriptors, "a file descriptor was left open"
    out, err = capfd.readouterr()
    assert out == "", f"the application's output reached this process's stdout: {out[:200]!r}"
    assert err == "", f"the application's output reached this process's stderr: {err[:200]!r}"


def validate_here(root: Path) -> runner.ValidateOutcome:
    return runner.validate(load_config(None, root))


def unavailable(outcome: runner.ValidateOutcome) -> str:
    """The one ``tree-unavailable`` message of an outcome that could not be evaluated."""
    assert outcome.evaluation is None
    codes = [d.code for d in outcome.unusable]
    assert codes == ["tree-unavailable"], codes
    message = outcome.unusable[0].message
    assert message.startswith("tree click:app_module:cli: "), message
    return message


# -- failures: one clear error naming the cause ----------------------------------------------

FAILING = {
    "raises": ('raise RuntimeError("no database")\n', "raised RuntimeError: no database"),
    "raises-system-exit-0": ("import sys\nsys.exit(0)\n", "called sys.exit(0) while importing"),
    "exits-with-a-message": (
        'import sys\nsys.exit("cannot start: no config")\n',
        "called sys.exit('cannot start: no config')",
    ),
    "os-exit-0": ("import os\nos._exit(0)\n", "exited with status 0 while importing"),
    "reads-stdin": ("answer = input('Password: ')\n", "EOFError"),
    "kills-itself": ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n", "signal 15"),
    "recursion": ("def f():\n    return f()\nf()\n", "RecursionError"),
    "floods-stderr-then-exits": (
        "import os, sys\nsys.stderr.write('noise\\n' * 200_000 + 'fatal: no config\\n')\n"
        "sys.stderr.flush()\nos._exit(3)\n",
        "exited with status 3 while importing, before producing a tree: noise / noise / fatal: "
        "no config",
    ),
    "raises-after-printing": (
        "print('starting up')\nraise ImportError('optional dependency missing')\n",
        "raised ImportError: optional dependency missing",
    ),
}


@pytest.mark.parametrize("name", list(FAILING))
def test_a_failing_import_is_one_clear_error_and_this_process_is_untouched(
    tmp_path: Path, untouched: None, name: str
) -> None:
    source, cause = FAILING[name]
    outcome = validate_here(project(tmp_path, source))
    assert cause in unavailable(outcome)


def test_a_tree_over_the_size_limit_is_refused(
    tmp_path: Path, untouched: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound that keeps a hostile import from filling exampleguard's memory (64 MiB in use,
    lowered here so that a small application crosses it)."""
    monkeypatch.setattr("exampleguard._treechild.MAX_FRAME_BYTES", 300)
    outcome = validate_here(project(tmp_path, ""))
    assert "produced an answer larger than the 300 B limit" in unavailable(outcome)


def test_a_hanging_import_is_bounded_by_tree_timeout(tmp_path: Path, untouched: None) -> None:
    root = project(tmp_path, "import time\ntime.sleep(300)\n", timeout=1)
    started = time.monotonic()
    outcome = validate_here(root)
    assert time.monotonic() - started < 15, "bounded by tree_timeout (1 s), with room to spare"
    assert "did not finish importing within 1 seconds" in unavailable(outcome)


# -- misbehaviour that still yields a tree ----------------------------------------------------

WORKING = {
    "prints": "import sys\nprint('x' * 1_000_000)\nprint('warning', file=sys.stderr)\n",
    "prints-fake-json": 'print(\'{"format": "exampleguard.tree/v1", "program": "evil"}\')\n',
    "changes-directory": "import os\nos.chdir('/')\n",
    "clears-the-environment": "import os\nos.environ.clear()\n",
    "changes-the-environment": (
        "import os\nos.environ['PATH'] = '/nonexistent'\nos.environ['HOME'] = '/nonexistent'\n"
        "os.putenv('PYTHONPATH', '/nonexistent')\n"
    ),
    "changes-sys-path-and-modules": (
        "import sys\nsys.path.insert(0, '/nonexistent')\nsys.modules['json'] = None\n"
    ),
    "ignores-signals": (
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    ),
    "registers-atexit-output": "import atexit\natexit.register(print, 'bye')\n",
    "well-behaved-daemon": (
        UNGUARDED + "import os, time\n"
        "if fork() == 0:\n"
        "    os.setsid()\n"
        "    if fork() == 0:\n"
        "        os.closerange(0, 65536)\n"
        "        time.sleep(3)\n"
        "        os._exit(0)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    ),
}


@pytest.mark.parametrize("name", list(WORKING))
def test_a_misbehaving_import_that_yields_a_tree_works_and_this_process_is_untouched(
    tmp_path: Path, untouched: None, name: str
) -> None:
    outcome = validate_here(project(tmp_path, WORKING[name]))
    assert outcome.unusable == [], [d.message for d in outcome.unusable]
    assert outcome.report is not None
    assert outcome.report.ok is True
    assert outcome.report.examples[0].arguments == {"x": 1}


# -- what outlives the import --------------------------------------------------------------------

# Each leaves something running for a while after the module has been imported; the tree was
# produced, so the run must not wait for it (nor blame the import for it).
OUTLIVING = {
    "a-background-thread": (
        "import threading, time\nthreading.Thread(target=time.sleep, args=(20,)).start()\n"
    ),
    "a-forked-child-holding-the-pipes": (
        UNGUARDED + "import os, time\n"
        "pid = fork()\n"
        "if pid == 0:\n"
        "    time.sleep(20)\n"
        "    os._exit(0)\n"
        "write_file('lingering.pid', str(pid))\n"
    ),
    "a-detached-daemon-holding-a-descriptor": (
        UNGUARDED + "import os, time\n"
        "if fork() == 0:\n"
        "    os.setsid()\n"
        "    pid = fork()\n"
        "    if pid == 0:\n"
        "        null = os.open('/dev/null', os.O_RDWR)\n"
        "        for fd in (0, 1, 2):\n"
        "            os.dup2(null, fd)\n"
        "        time.sleep(20)\n"
        "        os._exit(0)\n"
        "    write_file('lingering.pid', str(pid))\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    ),
}


def stop_lingering(root: Path) -> None:
    """Stop the process a case left behind (this test started it, through the module)."""
    marker = root / "lingering.pid"
    if marker.exists():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(marker.read_text(encoding="utf-8")), signal.SIGKILL)


@pytest.mark.parametrize("name", list(OUTLIVING))
def test_what_outlives_the_import_does_not_hold_up_the_run(tmp_path: Path, name: str) -> None:
    """Through the CLI, bounded: with tree_timeout = 5 a run must end well before the 20 s the
    leftover lives; its result is the tree, or at worst an error that does not blame the import.
    """
    root = project(tmp_path, OUTLIVING[name], timeout=5)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)])}
    started = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "exampleguard", "validate", "--format", "json"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run was still waiting after 15 s (tree_timeout is 5 s): {name}")
    finally:
        stop_lingering(root)
    elapsed = time.monotonic() - started
    assert "Traceback" not in result.stderr
    assert result.returncode == 0, (
        f"after {elapsed:.1f} s, exit {result.returncode}: {result.stderr.strip()[-300:]}"
    )
    assert json.loads(result.stdout)["ok"] is True


def test_an_import_that_kills_its_process_group_kills_only_itself(tmp_path: Path) -> None:
    """``os.killpg(0, SIGKILL)`` in the application: the child has its own session, so only it
    dies. (Run in a fresh session here, so a regression could not take the test runner down.)"""
    root = project(tmp_path, "import os, signal\nos.killpg(0, signal.SIGKILL)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)])}
    result = subprocess.run(
        [sys.executable, "-m", "exampleguard", "validate"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        start_new_session=True,
    )
    assert result.returncode == 2, result.stderr
    assert "tree-unavailable" in result.stderr
    assert "killed by signal 9" in result.stderr


# -- memory ------------------------------------------------------------------------------------


def peak_memory_mib(root: Path, args: list[str]) -> tuple[int, float, str]:
    """Run the CLI; return its exit code and its peak resident memory (MiB), with stderr."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)])}
    err_path = root / ".stderr"
    with err_path.open("wb") as err, Path(os.devnull).open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "exampleguard", *args],
            cwd=root,
            env=env,
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    text = err_path.read_text(encoding="utf-8", errors="replace")
    err_path.unlink()
    return process.returncode, usage.ru_maxrss / 1024, text


def test_a_chatty_import_does_not_grow_exampleguards_memory(tmp_path: Path) -> None:
    """The application writes 256 MiB to stdout while imported. exampleguard never needs that
    output (the tree travels on its own pipe): its memory must not grow with it."""
    quiet = project(tmp_path / "quiet", "")
    chatty = project(
        tmp_path / "chatty",
        "import sys\nblock = 'x' * (1 << 20)\nfor _ in range(256):\n    sys.stdout.write(block)\n",
    )
    code, baseline, err = peak_memory_mib(quiet, ["validate"])
    assert code == 0, err
    code, peak, err = peak_memory_mib(chatty, ["validate"])
    assert code == 0, err
    assert peak < baseline + 64, (
        f"peak {peak:.0f} MiB against {baseline:.0f} MiB for a quiet import: the application's "
        "output is held in memory"
    )
