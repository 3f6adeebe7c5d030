"""A live tree's child started ahead: used only for its own tree, on time, and never wasted.

``validate`` starts the sandboxed child from the raw ``tree`` setting before it reads the
catalog (:mod:`exampleguard.treechild`); the child imports the application, then waits for its
questions. These tests run the real sandbox (bubblewrap) on a project with a live Click
application, and check what a user would see: the same verdicts as a child started afresh,
time limits that count the child's own time only, and no child left behind.
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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

import sandbox
from exampleguard import treechild
from exampleguard.tree import PendingVerdicts
from exampleguard.treecache import TreeCache
from sandbox._registry import process_gone
from tests.support.ahead_driver import load_app_tree
from tests.support.processes import host_processes, kill_processes_with
from tests.support.project import REPOSITORY, run_cli

pytestmark = pytest.mark.skipif(
    not any(r.name == "bwrap" and r.available for r in sandbox.probe_backends()),
    reason="bubblewrap is not available here",
)

APP = """
import time

import click

time.sleep({delay})


@click.command()
@click.option("--x", type=int)
def cli(x):
    \"\"\"An app.\"\"\"
"""


def make(root: Path, *, delay: float = 0.0, timeout: float = 30) -> Path:
    """A project whose tree ``click:app_module:cli`` takes ``delay`` seconds to import."""
    root.mkdir()
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "app",
        "tools": [
            {
                "id": "app",
                "command": [],
                "examples": [{"command": "app --x 1"}, {"command": "app --x one"}],
            }
        ],
    }
    (root / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (root / "exampleguard.toml").write_text(
        f'catalog = "catalog.json"\ntree = "click:app_module:cli"\ntree_timeout = {timeout}\n',
        encoding="utf-8",
    )
    (root / "app_module.py").write_text(APP.format(delay=delay), encoding="utf-8")
    return root


def ask(
    root: Path, *, timeout: float = 30, cache: TreeCache | None = None
) -> dict[tuple[str, ...], bool]:
    """Load the tree as ``validate`` does: each example's acceptance."""
    judged = load_app_tree(root, timeout=timeout, cache=cache)
    return {argv: verdict.accepted for argv, verdict in judged.verdicts.items()}


def cached_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose tree the tree cache holds, every input of it a minute old."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = make(tmp_path / "project")
    moment = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (moment, moment))
    assert not TreeCache().inputs_unchanged("click:app_module:cli", root.resolve())
    ask(root.resolve(), cache=TreeCache())
    assert TreeCache().inputs_unchanged("click:app_module:cli", root.resolve())
    return root


def children_of(pid: int) -> set[int]:
    """The processes ``pid`` started that the kernel still lists (zombies among them)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text(encoding="ascii")
        found.update(int(child) for child in text.split())
    return found


def own_children() -> set[int]:
    """The processes this process started that are still there."""
    return {pid for pid in children_of(os.getpid()) if Path(f"/proc/{pid}").exists()}


@pytest.fixture(autouse=True)
def _no_child_left() -> object:
    yield
    treechild.close_ahead()


def test_a_child_started_ahead_answers_as_a_child_started_afresh(tmp_path: Path) -> None:
    root = make(tmp_path / "project")
    fresh = ask(root)
    treechild.start_ahead(None, root, cached=False)
    child = treechild._ahead
    assert child is not None, "no child was started ahead for a live tree"
    assert ask(root) == fresh == {("--x", "1"): True, ("--x", "one"): False}
    assert treechild._ahead is None, "the child started ahead was not claimed"


def test_its_wait_for_the_questions_does_not_count_against_the_time_limit(
    tmp_path: Path,
) -> None:
    # The import takes 1.5 s of a 3 s limit; the catalog is read for 2.5 s more meanwhile.
    root = make(tmp_path / "project", delay=1.5, timeout=3)
    treechild.start_ahead(None, root, cached=False)
    assert treechild._ahead is not None
    time.sleep(2.5)
    assert ask(root, timeout=3) == {("--x", "1"): True, ("--x", "one"): False}


def test_an_import_past_the_time_limit_fails_as_it_would_without_it(tmp_path: Path) -> None:
    root = make(tmp_path / "project", delay=4, timeout=2)
    treechild.start_ahead(None, root, cached=False)
    assert treechild._ahead is not None
    result = run_cli(["validate", "--no-cache"], cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "did not finish importing within 2 seconds" in result.stderr


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param({"timeout": 29.0}, id="time limit"),
        pytest.param({"attribute": "other"}, id="tree"),
        pytest.param({"inputs": True}, id="caching"),
    ],
)
def test_a_child_started_for_anything_else_is_stopped_unused(
    tmp_path: Path, changed: dict[str, object]
) -> None:
    root = make(tmp_path / "project")
    before = own_children()
    treechild.start_ahead(None, root, cached=False)
    assert own_children() - before, "no child was started"
    wanted: dict[str, object] = {
        "framework": "click",
        "module": "app_module",
        "attribute": "cli",
        "root": root.resolve(),
        "timeout": 30.0,
        "inputs": False,
        **changed,
    }
    assert treechild.take_ahead(**wanted) is None  # type: ignore[arg-type]
    assert own_children() - before == set()


def test_a_run_that_needs_no_child_leaves_none(tmp_path: Path) -> None:
    root = make(tmp_path / "project")
    (root / "catalog.json").write_text("{", encoding="utf-8")
    before = own_children()
    result = run_cli(["validate", "--no-cache"], cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert own_children() - before == set()
    assert not [t for t in threading.enumerate() if t.name == "exampleguard-tree"]


def test_no_child_is_started_when_the_cached_tree_is_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = cached_project(tmp_path, monkeypatch)
    treechild.start_ahead(None, root, cached=True, current=TreeCache().inputs_unchanged)
    assert treechild._ahead is None
    (root / "app_module.py").write_text(APP.format(delay=0.1), encoding="utf-8")
    assert not TreeCache().inputs_unchanged("click:app_module:cli", root.resolve())
    treechild.start_ahead(None, root, cached=True, current=TreeCache().inputs_unchanged)
    assert treechild._ahead is not None


# A validate run has one thread when it starts the child ahead: a helper process is forked to
# run it (the sandbox's setup then takes the other core). These run that in a process of its
# own (tests/support/ahead_driver.py), as a run does; the tests above run in the test process,
# through the sandbox in a thread where the process has threads of its own.


@contextlib.contextmanager
def driver_for(root: Path, action: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """The driver process for ``action`` on ``root``, and the pid of the helper it forked."""
    driver = subprocess.Popen(
        [sys.executable, "-m", "tests.support.ahead_driver", str(root), action],
        cwd=REPOSITORY,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert driver.stdout is not None
    with driver:
        try:
            started = json.loads(driver.stdout.readline())
            assert isinstance(started["helper"], int), "no helper process was forked"
            yield driver, started["helper"]
        finally:
            driver.kill()
            kill_processes_with(str(root))


def all_end(pids: Iterable[int], token: str, within: float = 15.0) -> bool:
    """Whether every process of ``pids``, and every one whose command line has ``token``, ends."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if all(process_gone(pid) for pid in pids) and not host_processes(token):
            return True
        time.sleep(0.05)
    return False


def finished_report(root: Path, action: str) -> Any:
    """What the driver for ``action`` reports, once it has exited cleanly.

    Its helper, and the helper's child, must have ended too.
    """
    with driver_for(root, action) as (driver, helper):
        assert driver.stdout is not None
        report = json.loads(driver.stdout.readline())
        assert driver.wait(timeout=60) == 0
        assert all_end([helper], str(root))
    return report


def test_a_helper_process_runs_the_child_and_it_answers_as_one_started_afresh(
    tmp_path: Path,
) -> None:
    root = make(tmp_path / "project")
    answered = finished_report(root, "ask")
    assert answered == {"--x 1": True, "--x one": False}
    assert answered == {" ".join(argv): ok for argv, ok in ask(root).items()}


def test_a_helper_whose_child_is_not_claimed_is_stopped_and_reaped(tmp_path: Path) -> None:
    root = make(tmp_path / "project")
    dropped = finished_report(root, "drop")
    assert dropped == {"helper_alive": False}


def test_the_helper_and_its_child_end_with_the_process_that_forked_it(tmp_path: Path) -> None:
    root = make(tmp_path / "project")
    with driver_for(root, "wait") as (driver, helper):
        assert driver.stdout is not None
        assert driver.stdout.readline().strip() == "waiting"
        assert host_processes(str(root)), "the child is not running"
        driver.kill()
        driver.wait(timeout=30)
        assert all_end([helper], str(root)), "the helper or its child outlived the run"


def test_ctrl_c_stops_a_run_whose_child_a_helper_runs(tmp_path: Path) -> None:
    # The import takes 30 s: the run is interrupted while it waits for the child.
    root = make(tmp_path / "project", delay=30)
    with subprocess.Popen(
        [sys.executable, "-m", "exampleguard", "validate", "--no-cache"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as run:
        try:
            deadline = time.monotonic() + 30
            while not host_processes(str(root)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert host_processes(str(root)), "the child never started"
            helpers = {pid for pid in children_of(run.pid) if not process_gone(pid)}
            assert helpers, "no helper process was forked"
            os.killpg(run.pid, signal.SIGINT)
            _, stderr = run.communicate(timeout=30)
            assert run.returncode == 130, stderr
            assert "interrupted" in stderr
            assert all_end(helpers, str(root))
        finally:
            run.kill()
            kill_processes_with(str(root))


def test_the_caller_s_work_meanwhile_overlaps_the_child_s_import(tmp_path: Path) -> None:
    # A 1.5 s import: what the caller does meanwhile is done long before the tree comes back.
    root = make(tmp_path / "project", delay=1.5)
    called: list[float] = []
    judged = load_app_tree(
        root, argvs=[["--x", "1"]], stream=True, meanwhile=lambda: called.append(time.monotonic())
    )
    returned = time.monotonic()
    assert isinstance(judged.verdicts, PendingVerdicts)
    assert judged.verdicts.finish()[("--x", "1")].accepted
    assert len(called) == 1
    assert returned - called[0] > 0.75, "the work waited for the tree"


def test_the_work_meanwhile_is_done_once_for_a_cached_tree_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = cached_project(tmp_path, monkeypatch)
    called: list[int] = []
    judged = load_app_tree(root, cache=TreeCache(), stream=True, meanwhile=lambda: called.append(1))
    assert isinstance(judged.verdicts, PendingVerdicts)
    assert judged.verdicts.finish()[("--x", "one")].accepted is False
    assert called == [1]
