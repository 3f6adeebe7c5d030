"""``dispositions update`` and ``remove``, the reason-code did-you-mean, and plain help metavars.

Both editors change one record in place and keep every other byte of the file (comments, other
records, the missing final newline); like ``add`` they write unless ``--dry-run`` is given, and
refuse with exit 2, writing nothing, when the change cannot be made.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from exampleguard.cli import main
from tests.support.project import REPOSITORY

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
OLD = "notes rm --tag draft"
NEW = "notes rm --tag draft --format json"
RECORDS = f"""\
# Reviewed dispositions for notes.delete.

[[disposition]]
tool = "notes.delete"   # the tool
example = 0
reason_code = "needs-service"
reason = "Deleting by id talks to the notes daemon, which CI does not run."
command = "notes delete 3 4 --dry-run"  # reviewed in issue 7

# The tag database is not shipped.
[[disposition]]
tool = "notes.delete"
example = 1
reason_code = "needs-fixture"
reason = 'Deleting by tag needs a notes database with tagged rows.'
evidence = ["issue 9"]
command = '{OLD}'
# trailing comment, no newline at the end"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sample project with two dispositions; the second is stale (its example changed)."""
    root = tmp_path / "project"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    (root / "dispositions" / "notes.delete.toml").write_text(RECORDS, encoding="utf-8")
    counts = json.loads((SAMPLE / "exampleguard-counts.json").read_text(encoding="utf-8"))
    counts.update(dry_run_narrowed=2)
    (root / "exampleguard-counts.json").write_text(json.dumps(counts), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _records(root: Path) -> str:
    return (root / "dispositions" / "notes.delete.toml").read_text(encoding="utf-8")


def _codes(capsys: pytest.CaptureFixture[str]) -> list[str]:
    _, out, _ = _run(capsys, "validate", "--format", "json")
    return [d["code"] for d in json.loads(out)["diagnostics"]]


def test_update_re_points_a_stale_record_and_keeps_every_other_byte(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "disposition-stale" in _codes(capsys)
    code, out, err = _run(capsys, "dispositions", "update", "notes.delete", "1")
    assert (code, err) == (0, "")
    assert out == (
        "updated dispositions/notes.delete.toml:11:1: disposition for notes.delete[1]\n"
        f'- command = "{OLD}"\n'
        f'+ command = "{NEW}"\n'
    )
    assert _records(project) == RECORDS.replace(f"'{OLD}'", f'"{NEW}"')
    assert _codes(capsys) == []


def test_update_dry_run_shows_the_change_and_writes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "dispositions", "update", "notes.delete", "1", "--dry-run")
    assert code == 0
    assert out.startswith("# would update\n")
    assert f"+ command = {json.dumps(NEW)}" in out
    assert _records(project) == RECORDS


def test_update_of_a_current_record_changes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "dispositions", "update", "notes.delete", "0")
    assert code == 0
    assert "already matches the example; nothing to update" in out
    assert _records(project) == RECORDS


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(["notes.delet", "1"], "Did you mean notes.delete?", id="a mistyped tool"),
        pytest.param(["notes.delete", "5"], "no disposition for notes.delete[5]", id="no record"),
    ],
)
def test_update_and_remove_refuse_what_is_not_there(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    for verb in ("update", "remove"):
        code, out, err = _run(capsys, "dispositions", verb, *args)
        assert (code, out) == (2, "")
        assert fragment in err
        assert "nothing was written" in err
    assert _records(project) == RECORDS


def test_update_refuses_a_record_whose_example_is_gone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog_path = project / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    del catalog["tools"][0]["examples"][1]
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    code, _, err = _run(capsys, "dispositions", "update", "notes.delete", "1")
    assert code == 2
    assert "exampleguard dispositions remove notes.delete 1" in err
    assert _records(project) == RECORDS


def test_remove_deletes_one_block_and_keeps_the_comments_of_the_next(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "dispositions", "remove", "notes.delete", "0")
    assert code == 0
    assert out.startswith(
        "removed the disposition for notes.delete[0] at dispositions/notes.delete.toml:3:1\n"
    )
    assert "counts --write" in out
    first = RECORDS.index("[[disposition]]")
    second = RECORDS.index("# The tag database")
    assert _records(project) == RECORDS[:first] + RECORDS[second:]


def test_remove_the_last_record_keeps_the_trailing_comment(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "dispositions", "remove", "notes.delete", "1", "--dry-run")[0] == 0
    assert _records(project) == RECORDS
    assert _run(capsys, "dispositions", "remove", "notes.delete", "1")[0] == 0
    start = RECORDS.index("[[disposition]]", RECORDS.index("# The tag database"))
    assert _records(project) == (RECORDS[:start] + "# trailing comment, no newline at the end")


def test_a_mistyped_reason_code_gets_a_did_you_mean(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reason = "Needs the tagged notes database, which is not shipped."
    assert _run(capsys, "dispositions", "remove", "notes.delete", "1")[0] == 0
    code, _, err = _run(
        capsys, "dispositions", "add", "notes.delete", "1", "--reason-code", "needs-fixtrue",
        "--reason", reason, "--dry-run",
    )  # fmt: skip
    assert code == 2
    assert "Did you mean 'needs-fixture'?" in err
    (project / "dispositions" / "notes.delete.toml").write_text(
        RECORDS.replace('"needs-service"', '"needs-servce"'), encoding="utf-8"
    )
    _, out, _ = _run(capsys, "validate", "--format", "json")
    [invalid] = [d for d in json.loads(out)["diagnostics"] if d["code"] == "disposition-invalid"]
    assert invalid["hint"].startswith("Did you mean 'needs-service'? Approved codes: ")


COMMANDS = [
    [],
    ["validate"],
    ["dryrun"],
    ["sandbox"],
    ["counts"],
    ["tree"],
    ["schema"],
    ["explain"],
    ["init"],
    ["dispositions"],
    ["dispositions", "add"],
    ["dispositions", "update"],
    ["dispositions", "remove"],
    ["dispositions", "exclude"],
    ["dispositions", "list"],
    ["dispositions", "check"],
    ["report"],
    ["report", "merge"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda words: " ".join(words) or "top")
def test_help_names_values_in_plain_words(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, _ = _run(capsys, *command, "--help")
    assert code == 0
    assert "<" not in out, out  # no <str>, <list[str]>, <file>, <int range>
    assert "Usage: exampleguard" in out
