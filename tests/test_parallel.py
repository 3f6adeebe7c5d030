"""Checking on several cores changes nothing a user sees: a serial run's output, byte for byte.

A catalog with defects of every kind spread over many tools (so that each worker's share has
some) is validated with one job and with several, in every output format, and once with a
live Click tree whose own parser judges every example; the outputs and exit codes must be
identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from exampleguard.parallel import available_cores, idle_cores, runnable_now, split_work
from tests.support.project import make_project, run_cli

TOOLS = 40

DEFECTIVE = [
    "notes c{i} --limit 5 --format yaml",  # not a choice
    "notes c{i} --limt 5",  # unknown flag
    "notes c{i} --all 3",  # mutually exclusive
    "notes c{i} --limit zero",  # not an integer
    "notes c{i} --yes --all",  # a confirmation bypass
]


def tool(index: int) -> dict[str, Any]:
    """A command with typed options, a constraint, a good example and (mostly) a bad one."""
    examples = [{"command": f"notes c{index} --tag t{index} --limit {index + 1}"}]
    if index % 7:
        examples.append({"command": DEFECTIVE[index % len(DEFECTIVE)].format(i=index)})
    return {
        "id": f"notes.c{index}",
        "command": [f"c{index}"],
        "parameters": [
            {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
            {"name": "tag", "flags": ["--tag"], "multiple": True},
            {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
            {"name": "limit", "flags": ["--limit"], "type": "integer", "min": 1},
            {"name": "all", "flags": ["--all"], "type": "boolean"},
            {"name": "yes", "flags": ["--yes"], "type": "boolean"},
        ],
        "constraints": {"mutually_exclusive": [["ids", "all"]]},
        "examples": examples,
    }


CLICK_APP = """
import click


@click.group()
def cli():
    pass


for index in range({tools}):
    cli.add_command(
        click.Command(
            f"c{{index}}",
            params=[
                click.Argument(["ids"], nargs=-1, type=int),
                click.Option(["--tag"], multiple=True),
                click.Option(["--format"], type=click.Choice(["text", "json"])),
                click.Option(["--limit"], type=click.IntRange(min=1)),
                click.Option(["--all"], is_flag=True),
                click.Option(["--yes"], is_flag=True),
            ],
        )
    )
"""


def outputs(root: Path, jobs: int) -> list[tuple[int, str, str]]:
    """Exit code, stdout and stderr of ``validate --jobs JOBS`` in every output format."""
    results = []
    for output_format in ("text", "json", "junit", "sarif", "github"):
        result = run_cli(
            ["validate", "--jobs", str(jobs), "--format", output_format], cwd=root, process=True
        )
        results.append((result.returncode, result.stdout, result.stderr))
    return results


def test_parallel_output_is_the_serial_output_byte_for_byte(tmp_path: Path) -> None:
    make_project(tmp_path, [tool(i) for i in range(TOOLS)], counts=False)
    serial = outputs(tmp_path, 1)
    assert serial[0][0] == 1
    assert "unknown-flag" in serial[0][1]
    assert "mutually-exclusive" in serial[0][1] or "mutual" in serial[0][1]
    assert len(json.loads(serial[1][1])["diagnostics"]) > TOOLS // 2
    for jobs in (2, 3):
        assert outputs(tmp_path, jobs) == serial


@pytest.mark.parametrize("jobs", [2])
def test_parallel_output_with_a_live_tree_is_the_serial_output(tmp_path: Path, jobs: int) -> None:
    (tmp_path / "notes_app.py").write_text(CLICK_APP.format(tools=TOOLS), encoding="utf-8")
    make_project(
        tmp_path,
        [tool(i) for i in range(TOOLS)],
        tree="click:notes_app:cli",
        settings={"tree_timeout": 60},
        counts=False,
    )
    serial = run_cli(["validate", "--jobs", "1", "--format", "json"], cwd=tmp_path, process=True)
    assert serial.returncode == 1, serial.stderr
    parallel = run_cli(
        ["validate", "--jobs", str(jobs), "--format", "json"], cwd=tmp_path, process=True
    )
    assert (parallel.returncode, parallel.stdout, parallel.stderr) == (
        serial.returncode,
        serial.stdout,
        serial.stderr,
    )


def _tagged(chunk: Any) -> list[tuple[int, int]]:
    return [(os.getpid(), item) for item in chunk]


SHARED = """
import json, os
from exampleguard.parallel import split_work
results = split_work(
    list(range(10)),
    [1] * 10,
    2,
    run=lambda chunk: [(os.getpid(), item) for item in chunk],
    pack=lambda r: r,
    unpack=lambda _chunk, packed: packed,
)
print(json.dumps(results))
"""

ANOTHER_THREAD = """
import _thread, json, threading
from exampleguard.parallel import can_fork
alone = can_fork()
started, stop = threading.Event(), threading.Event()
def idle():
    started.set()
    stop.wait()
# A thread that the kernel counts and the threading module does not know of.
_thread.start_new_thread(idle, ())
started.wait()
print(json.dumps([alone, can_fork()]))
stop.set()
"""


def in_a_process(code: str) -> Any:
    """What ``code``, run by a process of its own, prints as JSON.

    A process of its own, as a run is: a test worker has threads, and is never forked.
    """
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


def test_the_work_is_shared_between_processes_and_comes_back_in_order() -> None:
    results = in_a_process(SHARED)
    assert [item for _, item in results] == list(range(10))
    assert len({pid for pid, _ in results}) == 2


def test_a_process_with_another_thread_is_never_forked() -> None:
    assert in_a_process(ANOTHER_THREAD) == [True, False]


def test_a_worker_that_fails_is_replaced_by_a_serial_check() -> None:
    parent = os.getpid()

    def run(chunk: Any) -> list[tuple[int, int]]:
        if os.getpid() != parent:
            raise RuntimeError("a worker that breaks")
        return _tagged(chunk)

    results = split_work(
        list(range(6)), [1] * 6, 3, run=run, pack=lambda r: r, unpack=lambda _chunk, packed: packed
    )
    assert results == [(parent, item) for item in range(6)]


# -- how many workers: the cores idle at this moment ----------------------------------------------

needs_two_cores = pytest.mark.skipif(available_cores() < 2, reason="one core: never parallel")


@needs_two_cores
def test_every_core_is_idle_when_nothing_else_is_ready_to_run() -> None:
    assert idle_cores(lambda: 1) == available_cores()


@needs_two_cores
def test_no_worker_is_started_when_other_processes_fill_every_other_core() -> None:
    cores = available_cores()
    machine = max(cores, os.cpu_count() or cores)
    # This process and one other process per core of the machine.
    assert idle_cores(lambda: machine + 1) == 1


@needs_two_cores
def test_a_process_that_ran_for_a_moment_does_not_take_a_core() -> None:
    counts = iter([available_cores() + 5, 1, 1])
    assert idle_cores(lambda: next(counts)) == available_cores()


@needs_two_cores
def test_without_a_count_the_load_average_judges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 9.0, 9.0))
    assert idle_cores(lambda: None) == available_cores()
    monkeypatch.setattr(os, "getloadavg", lambda: (99.0, 0.0, 0.0))
    assert idle_cores(lambda: None) == 1


@pytest.mark.skipif(
    sys.platform != "linux" or not 2 <= (os.cpu_count() or 1) <= 8,
    reason="Linux's count of runnable processes, on a machine small enough to fill",
)
def test_processes_busy_on_every_core_leave_none_idle() -> None:
    spin = "import sys; print(flush=True); sys.stdout.close()\nwhile True: pass"
    spinners = [
        subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE)
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        for spinner in spinners:
            assert spinner.stdout is not None
            spinner.stdout.readline()
        assert runnable_now() is not None
        assert idle_cores() == 1
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.communicate()
