"""``validate --shard K/N`` and ``report merge``: the union of the shards is the unsharded run.

The project is the Click fixture app (as a committed snapshot of its tree) with a tool per
command, passing and failing examples, a warning, and repository-wide findings (a stale
disposition, a stale exclusion); counts are committed.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import assert_unusable_report, run_cli

DRY_RUN = {"flag": "--dry-run", "reviewed": True, "evidence": "click_app.py: delete --dry-run"}
TOOLS: list[dict[str, Any]] = [
    {
        "id": "notes.add",
        "command": ["add"],
        "examples": [
            {"command": "notes add 'Buy milk' --priority 2"},
            {"command": "notes add 'Buy milk' --priority high"},
        ],
    },
    {
        "id": "notes.delete",
        "command": ["delete"],
        "dry_run": DRY_RUN,
        "examples": [{"command": "notes delete 3 --dry-run"}, {"command": "notes delete 3 --yes"}],
    },
    {"id": "notes.grep", "command": ["grep"], "examples": [{"command": "notes grep todo *.txt"}]},
    {"id": "notes.run", "command": ["run"], "examples": [{"command": "notes run -- ls -la"}]},
    {
        "id": "notes.tags.merge",
        "command": ["tags", "merge"],
        "examples": [{"command": "notes tags merge a b"}],
    },
    {
        "id": "notes.tags.rename",
        "command": ["tags", "rename"],
        "examples": [{"command": "notes tags rename old new"}],
    },
    {
        "id": "notes.view.page",
        "command": ["view", "page"],
        "examples": [{"command": "notes view page --width 100"}, {"command": "notes view page"}],
    },
    {
        "id": "notes.view.show",
        "command": ["view", "show"],
        "examples": [{"command": "notes view n1 --raw"}, {"command": "notes view show --wide"}],
    },
]
STALE_DISPOSITION = """\
[[disposition]]
tool = "notes.delete"
example = 1
reason_code = "needs-fixture"
reason = "Deleting needs a notes database with rows in it."
command = "notes delete 4 --yes"
"""
STALE_EXCLUSION = """\
[[exclusion]]
path = ["tags", "rename"]
reason = "Renaming tags rewrites every note; only people do it."
"""
REPOSITORY_CODES = {"disposition-stale", "exclusion-stale", "counts-drift", "counts-missing"}
SHARD_COUNTS = [1, 2, 3, 4]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shards") / "project"
    root.mkdir()
    tree = run_cli(
        ["tree", "--tree", "click:click_app:cli", "--format", "json", "--program", "notes"],
        cwd=root,
    )
    assert tree.returncode == 0, tree.stderr
    (root / "notes.tree.json").write_text(tree.stdout, encoding="utf-8")
    catalog = {"format": "exampleguard.catalog/v1", "program": "notes", "tools": TOOLS}
    (root / "catalog.json").write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    (root / "exampleguard.toml").write_text(
        'catalog = "catalog.json"\ntree = "notes.tree.json"\n', encoding="utf-8"
    )
    (root / "dispositions").mkdir()
    (root / "dispositions" / "notes.delete.toml").write_text(STALE_DISPOSITION, "utf-8")
    (root / "dispositions" / "exclusions.toml").write_text(STALE_EXCLUSION, "utf-8")
    assert run_cli(["counts", "--write"], cwd=root).returncode == 0
    return root


def _validate(root: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = run_cli(["validate", "--format", "json", *args], cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout), result.stdout


@pytest.fixture(scope="module")
def unsharded(project: Path) -> tuple[int, dict[str, Any]]:
    code, report, _ = _validate(project)
    return code, report


@pytest.fixture(scope="module")
def shards(project: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Any]]:
    """For each N: the (exit code, report, path of the saved JSON) of every shard K/N."""
    folder = tmp_path_factory.mktemp("shard-reports")
    found: dict[int, list[Any]] = {}
    for total in SHARD_COUNTS:
        found[total] = []
        for index in range(1, total + 1):
            code, report, text = _validate(project, "--shard", f"{index}/{total}")
            path = folder / f"shard-{index}-of-{total}.json"
            path.write_text(text, encoding="utf-8")
            found[total].append((code, report, path))
    return found


def _per_example(report: dict[str, Any]) -> dict[tuple[str, int], tuple[bool, list[str]]]:
    return {
        (e["tool"], e["index"]): (e["ok"], sorted(d["code"] for d in e["diagnostics"]))
        for e in report["examples"]
    }


def _diagnostics(report: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    return Counter(
        (d["code"], d["tool"], d["example"], d["message"], d["file"]) for d in report["diagnostics"]
    )


def test_the_project_has_what_sharding_must_preserve(unsharded: tuple[int, dict[str, Any]]) -> None:
    code, report = unsharded
    assert code == 1
    per_example = _per_example(report)
    assert len(per_example) == 12
    assert {codes[0] for ok, codes in per_example.values() if not ok and codes} >= {
        "bad-type",
        "bypass-flag",
        "unknown-flag",
    }
    assert any(ok and codes for ok, codes in per_example.values())  # a warning on a pass
    codes = {d["code"] for d in report["diagnostics"]}
    assert {"disposition-stale", "exclusion-stale"} <= codes
    assert "counts-drift" not in codes


@pytest.mark.parametrize("total", SHARD_COUNTS)
def test_the_union_of_the_shards_is_the_unsharded_run(
    unsharded: tuple[int, dict[str, Any]], shards: dict[int, list[Any]], total: int
) -> None:
    _, whole = unsharded
    union: dict[tuple[str, int], tuple[bool, list[str]]] = {}
    for _, report, _ in shards[total]:
        for key, verdict in _per_example(report).items():
            assert key not in union, f"{key} is in two shards"
            union[key] = verdict
    assert union == _per_example(whole)


@pytest.mark.parametrize("total", SHARD_COUNTS)
def test_every_diagnostic_is_in_exactly_one_shard(
    unsharded: tuple[int, dict[str, Any]], shards: dict[int, list[Any]], total: int
) -> None:
    _, whole = unsharded
    combined: Counter[tuple[Any, ...]] = Counter()
    for _, report, _ in shards[total]:
        combined += _diagnostics(report)
    assert combined == _diagnostics(whole)


@pytest.mark.parametrize("total", SHARD_COUNTS)
def test_a_tool_is_never_split_across_shards(shards: dict[int, list[Any]], total: int) -> None:
    owner: dict[str, int] = {}
    for index, (_, report, _) in enumerate(shards[total], start=1):
        for example in report["examples"]:
            assert owner.setdefault(example["tool"], index) == index
    if total > 1:
        assert len(set(owner.values())) > 1, "every tool landed in one shard"


@pytest.mark.parametrize("total", [2, 3, 4])
def test_repository_wide_checks_run_in_shard_one_only(
    shards: dict[int, list[Any]], total: int
) -> None:
    for index, (_, report, _) in enumerate(shards[total], start=1):
        assert report["shard"] == {"index": index, "total": total}
        repository = [
            d["code"]
            for d in report["diagnostics"]
            if d["example"] is None or d["code"] in REPOSITORY_CODES
        ]
        if index == 1:
            assert sorted(repository) == ["disposition-stale", "exclusion-stale"]
        else:
            assert repository == []


@pytest.mark.parametrize("total", SHARD_COUNTS)
def test_shard_exit_codes_follow_their_own_findings(
    shards: dict[int, list[Any]], total: int
) -> None:
    for code, report, _ in shards[total]:
        assert code == (0 if report["ok"] else 1)
        assert report["ok"] == (not any(d["severity"] == "error" for d in report["diagnostics"]))


def test_shards_are_stable_across_runs(project: Path, shards: dict[int, list[Any]]) -> None:
    _, first, _ = shards[3][1]
    _, again, _ = _validate(project, "--shard", "2/3")
    assert again == first


@pytest.mark.parametrize("total", SHARD_COUNTS)
def test_merging_the_shards_gives_the_unsharded_verdict(
    project: Path, unsharded: tuple[int, dict[str, Any]], shards: dict[int, list[Any]], total: int
) -> None:
    whole_code, whole = unsharded
    paths = [str(path) for _, _, path in reversed(shards[total])]
    result = run_cli(["report", "merge", *paths], cwd=project)
    assert result.returncode == whole_code, result.stderr
    merged = json.loads(result.stdout)
    assert merged["ok"] == whole["ok"]
    assert merged["counts"] == whole["counts"]
    assert _per_example(merged) == _per_example(whole)
    assert _diagnostics(merged) == _diagnostics(whole)
    assert merged["shard"] is None


@pytest.mark.parametrize("total", [1, 3])
def test_merge_compares_the_committed_counts(
    project: Path, shards: dict[int, list[Any]], tmp_path: Path, total: int
) -> None:
    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    counts_path = copy / "exampleguard-counts.json"
    counts = json.loads(counts_path.read_text(encoding="utf-8"))
    counts["examples"] += 1
    counts["dry_run_narrowed"] = 1
    counts_path.write_text(json.dumps(counts, indent=2), encoding="utf-8")
    _, whole, _ = _validate(copy)
    (drift,) = [d for d in whole["diagnostics"] if d["code"] == "counts-drift"]
    paths = [str(path) for _, _, path in shards[total]]
    result = run_cli(["report", "merge", *paths], cwd=copy)
    assert result.returncode == 1, result.stderr
    merged = json.loads(result.stdout)
    (merged_drift,) = [d for d in merged["diagnostics"] if d["code"] == "counts-drift"]
    assert merged_drift["message"] == drift["message"]
    assert "examples: 13 -> 12" in drift["message"]
    assert "dry_run_narrowed: 1 -> 0" in drift["message"]
    assert merged["ok"] is False


@pytest.mark.parametrize(
    ("picked", "fragment"),
    [
        pytest.param([(3, 1), (3, 2)], "missing", id="a shard missing"),
        pytest.param([(2, 2)], "missing", id="only the last shard"),
        pytest.param([(2, 1), (2, 1), (2, 2)], "twice", id="a shard given twice"),
        pytest.param([(2, 1), (3, 2), (3, 3)], "different shard counts", id="mixed totals"),
    ],
)
def test_merging_incomplete_shards_is_exit_2(
    project: Path, shards: dict[int, list[Any]], picked: list[tuple[int, int]], fragment: str
) -> None:
    paths = [str(shards[total][index - 1][2]) for total, index in picked]
    result = run_cli(["report", "merge", *paths], cwd=project)
    assert result.returncode == 2
    assert_unusable_report(result.stdout, ["report", "merge", "--format", "json"])
    assert fragment in result.stderr


@pytest.mark.parametrize(
    ("claimed", "fragment"),
    [
        pytest.param(
            {"index": 1, "total": 10**30},
            f"shards [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ...] ({10**30 - 1} in all) of {10**30} "
            "are missing",
            id="an absurd shard count",
        ),
        pytest.param({"index": 5, "total": 2}, "shard [5] of 2 cannot exist", id="beyond"),
    ],
)
def test_a_hand_edited_shard_claim_is_exit_2_at_once(
    project: Path,
    shards: dict[int, list[Any]],
    tmp_path: Path,
    claimed: dict[str, int],
    fragment: str,
) -> None:
    report = json.loads(Path(shards[2][0][2]).read_text(encoding="utf-8"))
    report["shard"] = claimed
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(report), encoding="utf-8")
    # Listing the missing shards one by one would never end.
    result = run_cli(["report", "merge", str(edited)], cwd=project, timeout=60)
    assert result.returncode == 2, result.stderr
    assert_unusable_report(result.stdout, ["report", "merge", "--format", "json"])
    assert fragment in result.stderr
