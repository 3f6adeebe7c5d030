"""Concurrent runs in one repository do not interfere.

Every scenario starts real ``exampleguard`` processes that have imported everything and wait on
a barrier, then releases them together, so their work overlaps. Each group of processes gets a
fresh ``TMPDIR``: whatever a run puts there must be its own (two runs never share a path) and
gone when it ends.

* two ``validate`` runs give exactly the output of a run on its own, and write nothing;
* two ``dryrun`` runs (``isolation = "env"``, and bubblewrap where available) give the same
  reports as a run on its own, each example in its own work dir;
* two ``counts --write`` leave one valid file with the right figures;
* many ``dispositions add`` (and ``exclude``) into the same records file all land.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.barrier import Result, barrier_env, run_together
from tests.support.project import REPOSITORY
from tests.support.runuid import python_for, reachable_by_runs

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
REASON = "Deleting by tag needs a notes database with tagged rows."


def together(root: Path, argvs: list[list[str]], tmpdir: Path) -> list[Result]:
    """Start one process per argv, let all of them reach the barrier, release them at once."""
    tmpdir.mkdir(parents=True, exist_ok=True)
    reachable_by_runs(tmpdir)
    return run_together(root, argvs, barrier_env(TMPDIR=str(tmpdir)))


def alone(root: Path, argv: list[str], tmpdir: Path) -> Result:
    return together(root, [argv], tmpdir)[0]


def files(root: Path) -> dict[str, bytes | None]:
    """Every file and folder of the project (bytecode caches aside)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
        if "__pycache__" not in path.parts
    }


def leftovers(tmpdir: Path) -> list[str]:
    return sorted(path.name for path in tmpdir.iterdir())


# -- projects ----------------------------------------------------------------------------------


def sample(root: Path) -> Path:
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    return root


def click_project(root: Path) -> Path:
    """A project whose tree is imported from the Click fixture app (a child process per run),
    with a few defects so the report has something to say."""
    root.mkdir(parents=True)
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "notes",
        "tools": [
            {"id": "notes.delete", "command": ["delete"], "examples": [
                {"command": "notes delete 3 --tag a"}, {"command": "notes delete --bogus"}]},
            {"id": "notes.add", "command": ["add"], "examples": [
                {"command": "notes add 'Buy milk' --priority 2"}, {"command": "notes add x"}]},
        ],
    }  # fmt: skip
    (root / "catalog.json").write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    (root / "exampleguard.toml").write_text(
        'catalog = "catalog.json"\ntree = "click:click_app:cli"\n', encoding="utf-8"
    )
    return root


def broken_project(root: Path) -> Path:
    """A project that cannot be evaluated (exit 2)."""
    sample(root)
    (root / "exampleguard-counts.json").write_text('{"format": "x"', encoding="utf-8")
    return root


PROJECTS = {"sample": (sample, 0), "click-tree": (click_project, 1), "broken": (broken_project, 2)}


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("name", list(PROJECTS))
def test_two_validate_runs_at_once_do_not_interfere(tmp_path: Path, name: str, fmt: str) -> None:
    build, expected = PROJECTS[name]
    root = build(tmp_path / "project")
    argv = ["validate", "--format", fmt]
    reference = alone(root, argv, tmp_path / "tmp-alone")
    assert reference.returncode == expected, reference.stderr
    before = files(root)
    for attempt in range(2):
        tmpdir = tmp_path / f"tmp-{attempt}"
        results = together(root, [argv, argv], tmpdir)
        for result in results:
            assert result == reference, "a concurrent run differs from a run on its own"
        assert leftovers(tmpdir) == [], "a run left something in TMPDIR"
    assert files(root) == before, "validate wrote into the repository"


# -- dry runs ----------------------------------------------------------------------------------

FAKE = """\
import json, os, sys
print(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "tmp": os.environ.get("TMPDIR")}))
"""


def dryrun_project(root: Path, isolation: str) -> Path:
    sample(root)
    (root / "fake_notes.py").write_text(FAKE, encoding="utf-8")
    executable = [python_for(isolation), str(root / "fake_notes.py")]
    with (root / "exampleguard.toml").open("a", encoding="utf-8") as config:
        config.write(
            f"\n[dryrun]\nexecutable = {json.dumps(executable)}"
            f'\nisolation = "{isolation}"\njobs = 2\n'
        )
    # A root caller's env runs (a uid of their own) read the project and their TMPDIR.
    reachable_by_runs(root)
    return root


def comparable(report: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The report without what legitimately differs between runs (durations, work dir names),
    and the work dirs each example ran in."""
    work_dirs = []
    runs = []
    for entry in report["dry_runs"]:
        echoed = json.loads(entry["stdout"])
        work_dirs.append(echoed["cwd"])
        assert echoed["tmp"].startswith(echoed["cwd"]), "TMPDIR of a run lies in its work dir"
        # The work dir lies in each group's own TMPDIR: compare what the command received.
        runs.append({**entry, "duration_s": None, "stdout": echoed["argv"]})
    return {**report, "dry_runs": runs}, work_dirs


ISOLATIONS = [
    pytest.param("env", id="env"),
    pytest.param(
        "auto",
        id="bubblewrap",
        marks=pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
    ),
]


@pytest.mark.sandbox
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_two_dryrun_runs_at_once_do_not_interfere(tmp_path: Path, isolation: str) -> None:
    root = dryrun_project(tmp_path / "project", isolation)
    argv = ["dryrun", "--format", "json"]
    alone_result = alone(root, argv, tmp_path / "tmp-alone")
    assert alone_result.returncode == 0, alone_result.stderr
    reference, _ = comparable(json.loads(alone_result.stdout))
    assert len(reference["dry_runs"]) == 2
    before = files(root)
    for attempt in range(2):
        tmpdir = tmp_path / f"tmp-{attempt}"
        results = together(root, [argv, argv], tmpdir)
        seen: list[str] = []
        for result in results:
            assert result.returncode == 0, result.stderr
            report, work_dirs = comparable(json.loads(result.stdout))
            assert report == reference, "a concurrent dry run differs from a run on its own"
            seen += work_dirs
        assert len(set(seen)) == len(seen) == 4, f"two runs shared a work dir: {seen}"
        assert leftovers(tmpdir) == [], "a dry run left its work dir behind"
    assert files(root) == before, "dryrun wrote into the repository"


# -- writers -------------------------------------------------------------------------------------


def test_two_counts_writes_at_once_leave_one_valid_file(tmp_path: Path) -> None:
    root = sample(tmp_path / "project")
    counts = root / "exampleguard-counts.json"
    expected = counts.read_bytes()
    for attempt in range(4):
        counts.write_text('{"format": "exampleguard.counts/v1", "stale": true}\n', encoding="utf-8")
        tmpdir = tmp_path / f"tmp-{attempt}"
        results = together(root, [["counts", "--write"], ["counts", "--write"]], tmpdir)
        assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
        assert counts.read_bytes() == expected
        assert json.loads(expected)["format"] == "exampleguard.counts/v1"
        assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []
        assert leftovers(tmpdir) == []


# Tool ids that all map to the same records file (every character outside [A-Za-z0-9._-] becomes
# "_"), so every writer appends to one file under the folder lock.
SAME_FILE_IDS = ["t/1", "t:1", "t 1", "t\\1"]


def test_many_dispositions_added_at_once_all_land(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    preview = {"flag": None, "reviewed": True, "evidence": "the command is itself a preview"}
    ids = [*SAME_FILE_IDS, "solo.a", "solo.b"]
    tools = [
        {
            "id": tool_id,
            "command": [f"c{i}"],
            "dry_run": preview,
            "examples": [{"command": f"n c{i} one"}, {"command": f"n c{i} two"}],
        }
        for i, tool_id in enumerate(ids)
    ]
    catalog = {"format": "exampleguard.catalog/v1", "program": "n", "dialect": "click"}
    (root / "catalog.json").write_text(json.dumps({**catalog, "tools": tools}), encoding="utf-8")
    (root / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    header = "# Every writer appends below; keep this comment.\n"
    (root / "dispositions").mkdir()
    (root / "dispositions" / "t_1.toml").write_text(header, encoding="utf-8")
    writers = [
        ["dispositions", "add", "--reason-code", "needs-fixture",
         "--reason", f"{REASON} ({tool_id} {index})", "--", tool_id, str(index)]
        for tool_id in ids
        for index in (0, 1)
    ]  # fmt: skip
    results = together(root, writers, tmp_path / "tmp")
    assert [r.returncode for r in results] == [0] * len(writers), [r.stderr for r in results]
    shared = (root / "dispositions" / "t_1.toml").read_text(encoding="utf-8")
    assert shared.startswith(header)
    landed = []
    for path in sorted((root / "dispositions").iterdir()):
        assert path.suffix == ".toml", f"left behind: {path.name}"
        for record in tomllib.loads(path.read_text(encoding="utf-8"))["disposition"]:
            landed.append((record["tool"], record["example"], record["reason"]))
    assert sorted(landed) == sorted(
        (tool_id, index, f"{REASON} ({tool_id} {index})") for tool_id in ids for index in (0, 1)
    )
    assert leftovers(tmp_path / "tmp") == []


def test_exclusions_added_at_once_all_land(tmp_path: Path) -> None:
    root = sample(tmp_path / "project")
    tree_path = root / "notes.tree.json"
    tree = json.loads(tree_path.read_text(encoding="utf-8"))
    new = [f"purge{i}" for i in range(4)]
    tree["commands"] += [{"path": [name], "runnable": True, "parameters": []} for name in new]
    tree_path.write_text(json.dumps(tree, indent=2), encoding="utf-8")
    exclusions = root / "dispositions" / "exclusions.toml"
    old = exclusions.read_text(encoding="utf-8")
    writers = [
        ["dispositions", "exclude", name, "--reason", f"Purging ({name}) is never for agents."]
        for name in new
    ]
    results = together(root, writers, tmp_path / "tmp")
    assert [r.returncode for r in results] == [0] * len(writers), [r.stderr for r in results]
    text = exclusions.read_text(encoding="utf-8")
    assert text.startswith(old)
    paths = [record["path"] for record in tomllib.loads(text)["exclusion"]]
    assert sorted(paths) == sorted([["export"], *([name] for name in new)])
    check = alone(root, ["dispositions", "check"], tmp_path / "tmp-check")
    assert check.returncode == 0, check.stdout + check.stderr
