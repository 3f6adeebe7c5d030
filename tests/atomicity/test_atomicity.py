"""Interrupted writes: every file is either fully old or fully new.

Real processes are killed at random points: ``counts --write``, ``dispositions add``,
``dispositions exclude`` and ``init`` run in a child that has imported everything and waits on a
barrier; the test releases it, waits a random short delay (concentrated around the moment the
write happens), and sends SIGKILL or SIGTERM. Afterwards every file the command writes is parsed
and compared with both candidates — the bytes before the run and the bytes an uninterrupted run
produces — and must equal one of them.

SIGTERM is an interruption like Ctrl-C (SPEC section 6: exit 130): the run stops cleanly,
leaves no temporary file behind, and ``init`` takes back what it created. SIGKILL cannot be
handled by anyone: a temporary file may stay behind (named ``.<target>.<random>.tmp``, never
read as a record), but the target itself is still old or new.

In-process, a failure injected between the temporary write and the rename (or at the fsync)
leaves the old file and no temporary (``tests/commands/test_records_write.py`` does this for
``add`` and ``exclude`` at the rename; here ``counts --write``, ``init``, ``--output`` and the
fsync).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exampleguard._files import write_atomically
from exampleguard._report import json_format
from exampleguard.cli import main
from tests.support.barrier import release as release_at_barrier
from tests.support.barrier import start_at_barrier
from tests.support.project import FIXTURE_APPS, REPOSITORY, run_cli

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
REASON = "Deleting by tag needs a notes database with tagged rows."
EXCLUDE_REASON = "Purging rewrites the whole database; agents never purge."
PYPROJECT = '[project]\nname = "notes"  # kept as it is\nversion = "1.0"\n'


# -- the commands and what each one writes ---------------------------------------------------


def sample_project(root: Path) -> None:
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    tree_path = root / "notes.tree.json"
    tree = json.loads(tree_path.read_text(encoding="utf-8"))
    tree["commands"].append({"path": ["purge"], "runnable": True, "parameters": []})
    tree_path.write_text(json.dumps(tree, indent=2), encoding="utf-8")
    (root / "dispositions" / "notes.delete.toml").write_text(
        "# Reviewed by hand.\n\n[[disposition]]\n"
        'tool = "notes.delete"\nexample = 0\nreason_code = "needs-service"\n'
        'reason = "Deleting by id talks to the notes daemon, which CI does not run."\n'
        'command = "notes delete 3 4 --dry-run"\n',
        encoding="utf-8",
    )
    counts = root / "exampleguard-counts.json"
    old = json.loads(counts.read_text(encoding="utf-8"))
    old.update(examples=99, contract_validated=99)  # stale figures: --write changes the file
    counts.write_text(json.dumps(old, indent=2) + "\n", encoding="utf-8")


def init_project(root: Path) -> None:
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")


def parse(name: str, data: bytes) -> Any:
    """Parse a written file; a half-written one fails here."""
    text = data.decode("utf-8")
    return json.loads(text) if name.endswith(".json") else tomllib.loads(text)


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...]
    setup: Callable[[Path], None]
    targets: tuple[str, ...]
    """Files the command writes (relative to the project)."""


COMMANDS = {
    "counts-write": Command(("counts", "--write"), sample_project, ("exampleguard-counts.json",)),
    "dispositions-add": Command(
        ("dispositions", "add", "notes.delete", "1", "--reason-code", "needs-fixture",
         "--reason", REASON, "--reviewer", "a-reviewer"),
        sample_project,
        ("dispositions/notes.delete.toml",),
    ),
    "dispositions-exclude": Command(
        ("dispositions", "exclude", "purge", "--reason", EXCLUDE_REASON),
        sample_project,
        ("dispositions/exclusions.toml",),
    ),
    "init": Command(
        ("init", "--tree", "click:click_app:cli", "--program", "notes"),
        init_project,
        ("pyproject.toml", "agent-catalog.json", "exampleguard-counts.json"),
    ),
}  # fmt: skip


def read_targets(root: Path, command: Command) -> dict[str, bytes | None]:
    return {
        name: (root / name).read_bytes() if (root / name).exists() else None
        for name in command.targets
    }


def temporaries(root: Path) -> list[str]:
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.name.endswith(".tmp") or ".tmp" in path.name
    )


@dataclass(frozen=True)
class Reference:
    old: dict[str, bytes | None]
    new: dict[str, bytes | None]
    seconds: float
    """How long the uninterrupted command takes once released."""


def start(root: Path, command: Command) -> subprocess.Popen[str]:
    return start_at_barrier(root, command.args)


def release(process: subprocess.Popen[str]) -> float:
    """Release the command; return the moment it was released."""
    release_at_barrier(process)
    return time.monotonic()


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Reference]:
    """Each command run once without interruption: the new candidate and its duration."""
    found: dict[str, Reference] = {}
    for name, command in COMMANDS.items():
        root = tmp_path_factory.mktemp(f"reference-{name}") / "project"
        command.setup(root)
        old = read_targets(root, command)
        durations = []
        for attempt in range(2):
            if attempt:
                shutil.rmtree(root)
                command.setup(root)
            process = start(root, command)
            started = release(process)
            out, err = process.communicate(timeout=120)
            durations.append(time.monotonic() - started)
            assert process.returncode == 0, out + err
        new = read_targets(root, command)
        assert new != old, name
        for target, data in new.items():
            assert data is not None, target
            parse(target, data)
        assert temporaries(root) == []
        found[name] = Reference(old, new, min(durations))
    return found


# -- killing at random points ------------------------------------------------------------------


@dataclass(frozen=True)
class Kill:
    delay: float
    returncode: int
    files: dict[str, bytes | None]
    leftovers: list[str]
    stderr: str


def kill_once(root: Path, command: Command, signum: int, delay: float) -> Kill:
    command.setup(root)
    process = start(root, command)
    started = release(process)
    remaining = delay - (time.monotonic() - started)
    if remaining > 0:
        time.sleep(remaining)  # the random kill point, not a synchronisation
    if process.poll() is None:
        process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    return Kill(delay, process.returncode, read_targets(root, command), temporaries(root), err)


def delays(reference: Reference, count: int) -> list[float]:
    """Random kill points across the run, most of them in its second half, where it writes.

    The reference duration is measured from the release of an uninterrupted run; a killed run
    takes about as long, so these points fall before, during and just after the write.
    """
    chooser = random.Random()
    span = max(reference.seconds, 0.05)
    anywhere = [chooser.uniform(0, span) for _ in range(count // 3)]
    late = [chooser.uniform(0.3 * span, 0.95 * span) for _ in range(count - count // 3)]
    return sorted(anywhere + late)


def kill_many(
    tmp_path: Path, name: str, reference: Reference, signum: int, count: int
) -> list[Kill]:
    command = COMMANDS[name]
    points = delays(reference, count)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(
            pool.map(
                lambda item: kill_once(tmp_path / f"run-{item[0]}", command, signum, item[1]),
                enumerate(points),
            )
        )


def check_kills(name: str, reference: Reference, kills: list[Kill], signum: int) -> None:
    """Every written file is the old or the new one, whole; nothing else is left behind."""
    for kill in kills:
        where = f"{name}, {signal.Signals(signum).name} after {kill.delay * 1000:.0f} ms"
        for target, data in kill.files.items():
            assert data in (reference.old[target], reference.new[target]), (
                f"{where}: {target} is neither the old nor the new file"
            )
            if data is not None:
                parse(target, data)
        assert "Traceback" not in kill.stderr, f"{where}:\n{kill.stderr[-1500:]}"
        assert kill.returncode in (0, -signum, 130), f"{where}: exit {kill.returncode}"
        for leftover in kill.leftovers:
            # Only a temporary of one of the targets, next to it, hidden, never a *.toml.
            folder, _, leaf = leftover.rpartition("/")
            assert any(
                leaf.startswith(f".{Path(t).name}.")
                and leaf.endswith(".tmp")
                and Path(t).parent.as_posix() == (folder or ".")
                for t in COMMANDS[name].targets
            ), f"{where}: unexpected file {leftover}"


def check_interruptions(name: str, reference: Reference, kills: list[Kill]) -> None:
    """SIGTERM is an interruption (SPEC section 6): exit 130, nothing half-done left behind."""
    for kill in kills:
        where = f"{name}, SIGTERM after {kill.delay * 1000:.0f} ms"
        assert kill.leftovers == [], f"{where}: temporary files left: {kill.leftovers}"
        if kill.returncode == -signal.SIGTERM:
            # Outside the command itself (before it started, or while the interpreter exits
            # after it finished) the default action applies; the files are then all old or all
            # new, never a mixture.
            assert kill.files in (reference.old, reference.new), f"{where}: a mixture of files"
            continue
        assert kill.returncode in (0, 130), (
            f"{where}: exit {kill.returncode}; an interrupted run exits 130"
        )
        if name == "init" and kill.returncode == 130:
            assert kill.files == reference.old, f"{where}: init must take back what it wrote"


SIGNALS = [
    pytest.param(signal.SIGKILL, id="sigkill"),
    pytest.param(signal.SIGTERM, id="sigterm"),
]


@pytest.mark.parametrize("signum", SIGNALS)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_killed_at_random_points_every_file_is_old_or_new(
    tmp_path: Path, references: dict[str, Reference], name: str, signum: int
) -> None:
    kills = kill_many(tmp_path, name, references[name], signum, count=6)
    check_kills(name, references[name], kills, signum)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_sigterm_is_an_interruption_exit_130_and_nothing_half_done(
    tmp_path: Path, references: dict[str, Reference], name: str
) -> None:
    kills = kill_many(tmp_path, name, references[name], signal.SIGTERM, count=4)
    check_kills(name, references[name], kills, signal.SIGTERM)
    check_interruptions(name, references[name], kills)


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_killed_at_random_points_every_file_is_old_or_new_long(
    tmp_path: Path, references: dict[str, Reference], name: str, signum: int
) -> None:
    kills = kill_many(tmp_path, name, references[name], signum, count=60)
    check_kills(name, references[name], kills, signum)
    if signum == signal.SIGTERM:
        check_interruptions(name, references[name], kills)


def test_sigint_during_counts_write_is_exit_130_and_leaves_old_or_new(
    tmp_path: Path, references: dict[str, Reference]
) -> None:
    """Ctrl-C, for comparison: Python turns it into KeyboardInterrupt, which the CLI handles."""
    reference = references["counts-write"]
    target = "exampleguard-counts.json"
    kills = [
        kill_once(tmp_path / f"run-{i}", COMMANDS["counts-write"], signal.SIGINT, delay)
        for i, delay in enumerate(delays(reference, 4))
    ]
    for kill in kills:
        where = f"SIGINT after {kill.delay * 1000:.0f} ms"
        assert kill.files[target] in (reference.old[target], reference.new[target]), where
        assert kill.leftovers == [], where
        # Before the command starts or after it finishes, Python's default handling ends the
        # process with the signal itself; the file is then old or new, as asserted above.
        assert kill.returncode in (0, 130, -signal.SIGINT), f"{where}: exit {kill.returncode}"


# -- in-process: a failure between the temporary write and the rename ----------------------


class SimulatedCrash(BaseException):
    """The process dies at this point (nothing below it runs)."""


def failing_at(
    monkeypatch: pytest.MonkeyPatch, function: str, call: int, failure: BaseException
) -> list[str]:
    """Make the ``call``-th call of ``os.<function>`` raise ``failure``; record every call."""
    real = getattr(os, function)
    calls: list[str] = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[-1] if function == "replace" else args[0]))
        if len(calls) == call:
            raise failure
        return real(*args, **kwargs)

    monkeypatch.setattr(os, function, wrapper)
    return calls


def tree_of(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root`` (folders as ``None``)."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
        if "__pycache__" not in p.parts
    }


FAILURES = [
    pytest.param(OSError(28, "No space left on device"), id="rename-fails"),
    pytest.param(SimulatedCrash(), id="process-dies"),
]


@pytest.mark.parametrize("failure", FAILURES)
def test_counts_write_failing_before_the_rename_leaves_the_old_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: BaseException,
) -> None:
    root = tmp_path / "project"
    sample_project(root)
    before = tree_of(root)
    monkeypatch.chdir(root)
    calls = failing_at(monkeypatch, "replace", 1, failure)
    if isinstance(failure, OSError):
        assert main(["counts", "--write"]) == 2
        err = capsys.readouterr().err
        assert "cannot write exampleguard-counts.json: No space left on device" in err
    else:
        with pytest.raises(SimulatedCrash):
            main(["counts", "--write"])
    assert calls == [str(root / "exampleguard-counts.json")]
    assert tree_of(root) == before


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        pytest.param(
            "fifo", "cannot write exampleguard-counts.json: Not a regular file", id="a-fifo"
        ),
        pytest.param(
            "device",
            "exampleguard-counts.json is a symlink; refusing to replace it",
            id="a-link-to-a-device",
        ),
        pytest.param(
            "folder",
            "exampleguard-counts.json is a symlink; refusing to replace it",
            id="a-link-to-a-folder",
        ),
    ],
)
def test_counts_write_never_replaces_what_is_not_a_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    message: str,
) -> None:
    # Replacing the path by rename would destroy it: a counts path of /dev/full once turned
    # the device node into a regular file.
    root = tmp_path / "project"
    sample_project(root)
    counts = root / "exampleguard-counts.json"
    counts.unlink()
    if kind == "fifo":
        os.mkfifo(counts)
    elif kind == "device":
        counts.symlink_to(os.devnull)
    else:
        (root / "elsewhere").mkdir()
        counts.symlink_to("elsewhere")
    before = os.lstat(counts)
    monkeypatch.chdir(root)
    assert main(["counts", "--write"]) == 2
    err = capsys.readouterr().err
    assert f"file-unreadable {message}" in err
    assert "Traceback" not in err
    after = os.lstat(counts)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []


def test_counts_write_never_replaces_a_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The rename would put the counts where the link is: the link would be lost and the file
    # it points to (the one committed, say) keep the old figures.
    root = tmp_path / "project"
    sample_project(root)
    counts = root / "exampleguard-counts.json"
    target = root / "counts" / "exampleguard-counts.json"
    target.parent.mkdir()
    counts.rename(target)
    target.write_text("{}\n", encoding="utf-8")
    counts.symlink_to("counts/exampleguard-counts.json")
    monkeypatch.chdir(root)
    assert main(["counts", "--write"]) == 2
    err = capsys.readouterr().err
    assert "exampleguard-counts.json is a symlink; refusing to replace it" in err
    assert counts.is_symlink()
    assert target.read_text(encoding="utf-8") == "{}\n"


def _enter_project_with_a_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, dict[str, bytes | None]]:
    """Make a sample project holding an old ``report.json`` and enter it; give it and its tree."""
    root = tmp_path / "project"
    sample_project(root)
    (root / "report.json").write_text('{"old": "report"}\n', encoding="utf-8")
    monkeypatch.chdir(root)
    return root, tree_of(root)


@pytest.mark.parametrize(
    ("args", "target"),
    [
        pytest.param(["counts", "--write"], "exampleguard-counts.json", id="counts-write"),
        pytest.param(
            ["dispositions", "add", "notes.delete", "1", "--reason-code", "needs-fixture",
             "--reason", REASON],
            "dispositions/notes.delete.toml",
            id="dispositions-add",
        ),
        pytest.param(
            ["validate", "--format", "json", "--output", "report.json"],
            "report.json",
            id="validate-output",
        ),
    ],
)  # fmt: skip
def test_a_failing_fsync_leaves_the_old_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    target: str,
) -> None:
    root, before = _enter_project_with_a_report(tmp_path, monkeypatch)
    failing_at(monkeypatch, "fsync", 1, OSError(5, "Input/output error"))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Input/output error" in err
    assert "Traceback" not in err
    assert tree_of(root) == before, f"{target} changed, or a temporary file was left"


def test_a_cache_entry_is_replaced_in_one_step_without_waiting_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cache entry is worth nothing after a crash (its reader checks it): no fsync is waited
    # for, of the file or of its folder; a report is flushed as before.
    entry = tmp_path / "cache" / "entry.json"
    write_atomically(entry, "old")
    failing_at(monkeypatch, "fsync", 1, OSError(5, "Input/output error"))
    write_atomically(entry, ["n", "ew"], durable=False)
    assert entry.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in entry.parent.iterdir()) == ["entry.json"]
    with pytest.raises(OSError, match="Input/output error"):
        write_atomically(entry, "newer")
    assert entry.read_text(encoding="utf-8") == "new"


@pytest.mark.parametrize("failure", FAILURES)
def test_validate_output_failing_before_the_rename_keeps_the_old_report(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: BaseException,
) -> None:
    root, before = _enter_project_with_a_report(tmp_path, monkeypatch)
    failing_at(monkeypatch, "replace", 1, failure)
    if isinstance(failure, OSError):
        assert main(["validate", "--format", "json", "--output", "report.json"]) == 2
        assert "No space left on device" in capsys.readouterr().err
    else:
        with pytest.raises(SimulatedCrash):
            main(["validate", "--format", "json", "--output", "report.json"])
    assert tree_of(root) == before


def test_a_report_that_fails_halfway_through_rendering_keeps_the_old_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JSON report is written piece by piece as it is encoded, into the temporary file."""
    root, before = _enter_project_with_a_report(tmp_path, monkeypatch)
    real = json_format.json_pieces
    written: list[str] = []

    def dies_after_the_first_piece(data: Any) -> Iterator[str]:
        pieces = real(data)
        written.append(next(pieces))
        yield written[-1]
        raise SimulatedCrash

    monkeypatch.setattr(json_format, "json_pieces", dies_after_the_first_piece)
    with pytest.raises(SimulatedCrash):
        main(["validate", "--format", "json", "--output", "report.json"])
    assert written[0].startswith("{")
    assert tree_of(root) == before


@pytest.mark.parametrize("call", [1, 2, 3], ids=["catalog", "configuration", "counts"])
@pytest.mark.parametrize("existing", [None, PYPROJECT], ids=["empty", "with-pyproject"])
@pytest.mark.parametrize("failure", FAILURES)
def test_init_failing_at_any_write_changes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    call: int,
    existing: str | None,
    failure: BaseException,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    if existing is not None:
        (root / "pyproject.toml").write_text(existing, encoding="utf-8")
    before = tree_of(root)
    monkeypatch.chdir(root)
    # The tree is imported in a child process, which finds the fixture app on PYTHONPATH.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)]))
    calls = failing_at(monkeypatch, "replace", call, failure)
    args = ["init", "--tree", "click:click_app:cli", "--program", "notes"]
    if isinstance(failure, OSError):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "No space left on device" in err
        assert "changed nothing" in err
    else:
        with pytest.raises(SimulatedCrash):
            main(args)
    assert len(calls) >= call
    assert tree_of(root) == before, "init must take back every file and folder it created"


def test_the_barrier_child_runs_the_real_command(tmp_path: Path) -> None:
    """The killed processes run exactly what the CLI runs (same output as ``python -m``)."""
    root = tmp_path / "barrier"
    sample_project(root)
    process = start(root, COMMANDS["counts-write"])
    release(process)
    out, _ = process.communicate(timeout=120)
    other = tmp_path / "cli"
    sample_project(other)
    assert run_cli(["counts", "--write"], cwd=other).stdout == out
    assert process.returncode == 0
