"""``dispositions add`` / ``exclude`` / ``list`` / ``check`` through the real CLI.

Writers validate first and refuse with exit 2 writing nothing; a written record is appended with
the example's current text as ``command``, keeping every existing byte; the write is atomic (a
crash before the rename leaves the old file and no temporary behind) and safe against concurrent
writers; no tool id can make a writer leave the ``dispositions/`` folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from exampleguard._codes import CODES, Stage
from exampleguard._dispositions.records import Disposition
from exampleguard._dispositions.write import disposition_file, render_disposition
from exampleguard.cli import main
from tests.support.barrier import run_together
from tests.support.project import REPOSITORY, run_cli

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
DELETE_1 = "notes rm --tag draft --format json"
REASON = "Deleting by tag needs a notes database with tagged rows."
EXCLUDE_REASON = "Purging rewrites the whole database; agents never purge."

EXISTING_DISPOSITIONS = """\
# Reviewed dispositions for notes.delete.
# Keep these comments: reviewers read them.

[[disposition]]
tool = "notes.delete"   # the tool
example = 0
reason_code = "needs-service"
reason = "Deleting by id talks to the notes daemon, which CI does not run."
reviewer = "first-reviewer"
evidence = ["issue 7"]
command = "notes delete 3 4 --dry-run"

# trailing comment, no newline at the end"""

EXISTING_EXCLUSIONS = """\
# Commands agents are not offered.

[[exclusion]]
path = ["export"]
reason = "Export writes every note to stdout in bulk; agents read notes one by one."
reviewer = "a-reviewer"  # signed off

[[exclusion]]
path = ["tags", "rename"]
reason = "Renaming tags rewrites every note; only people do it."
"""

EXTRA_COMMANDS = [
    {"path": ["tags"], "runnable": False, "parameters": []},
    {"path": ["tags", "rename"], "runnable": True, "parameters": []},
]


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (symlinks by their target)."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[path.relative_to(root).as_posix()] = str(path.readlink()).encode()
        elif path.is_file():
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def _add_commands(root: Path, commands: list[dict[str, Any]]) -> None:
    tree_path = root / "notes.tree.json"
    tree = json.loads(tree_path.read_text(encoding="utf-8"))
    tree["commands"].extend(commands)
    tree_path.write_text(json.dumps(tree, indent=2), encoding="utf-8")


def _add_purge(root: Path) -> None:
    """A new runnable command that no tool covers: something to exclude."""
    _add_commands(root, [{"path": ["purge"], "runnable": True, "parameters": []}])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The sample project with a tags group, records with comments, and current counts."""
    root = tmp_path / "project"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    _add_commands(root, EXTRA_COMMANDS)
    (root / "dispositions" / "exclusions.toml").write_text(EXISTING_EXCLUSIONS, encoding="utf-8")
    (root / "dispositions" / "notes.delete.toml").write_text(
        EXISTING_DISPOSITIONS, encoding="utf-8"
    )
    # The committed counts: the sample's figures, with one disposition and two exclusions.
    counts = json.loads((SAMPLE / "exampleguard-counts.json").read_text(encoding="utf-8"))
    counts.update(dry_run_narrowed=1, excluded=2)
    (root / "exampleguard-counts.json").write_text(json.dumps(counts, indent=2), encoding="utf-8")
    return root


def _add(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["dispositions", "add", *args], cwd=root)


def _validate_codes(root: Path) -> tuple[int, list[str], dict[str, Any]]:
    result = run_cli(["validate", "--format", "json"], cwd=root)
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    return result.returncode, [d["code"] for d in report["diagnostics"]], report


# -- refusals: validate first, exit 2, nothing written --------------------------------------------

ADD_REFUSALS = [
    pytest.param(
        ["notes.gone", "0", "--reason-code", "needs-fixture", "--reason", REASON],
        "disposition-invalid",
        "no tool has the id 'notes.gone'",
        id="unknown tool",
    ),
    pytest.param(
        ["notes.add", "0", "--reason-code", "needs-fixture", "--reason", REASON],
        "disposition-invalid",
        "no reviewed dry-run capability",
        id="no dry-run capability",
    ),
    pytest.param(
        ["notes.delete", "2", "--reason-code", "needs-fixture", "--reason", REASON],
        "disposition-invalid",
        "there is no index 2",
        id="index out of range",
    ),
    pytest.param(
        ["notes.delete", "1", "--reason-code", "because", "--reason", REASON],
        "disposition-invalid",
        "reason code 'because' is not approved",
        id="unapproved reason code",
    ),
    *[
        pytest.param(
            ["notes.delete", "1", "--reason-code", "needs-fixture", "--reason", reason],
            "disposition-invalid",
            "is not concrete",
            id=f"placeholder reason {reason!r}",
        )
        for reason in ["", "n/a", "TODO", "needs fixture"]
    ],
    pytest.param(
        ["notes.delete", "0", "--reason-code", "needs-fixture", "--reason", REASON],
        "disposition-duplicate",
        "the same example already has a disposition in dispositions/notes.delete.toml:4:1",
        id="the example already has a record",
    ),
]


@pytest.mark.parametrize(("args", "code", "fragment"), ADD_REFUSALS)
def test_add_refuses_and_writes_nothing(
    project: Path, args: list[str], code: str, fragment: str
) -> None:
    before = _snapshot(project)
    result = _add(project, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"{code} " in result.stderr
    assert fragment in result.stderr
    assert "nothing was written" in result.stderr
    assert _snapshot(project) == before


# -- add and validate: one set of checks --------------------------------------------------------

SAME_CHECKS = [
    pytest.param("notes.delete", 1, "needs-fixture", REASON, id="a valid record"),
    pytest.param("notes.gone", 0, "needs-fixture", REASON, id="unknown tool"),
    pytest.param("notes.add", 0, "needs-fixture", REASON, id="no dry-run capability"),
    pytest.param("notes.delete", 2, "needs-fixture", REASON, id="index out of range"),
    pytest.param("notes.delete", 1, "because", REASON, id="unapproved reason code"),
    pytest.param("notes.delete", 1, "needs-fixture", "n/a", id="placeholder reason"),
    pytest.param("notes.delete", 1, "needs-fixture", "needs fixture", id="the code repeated"),
    pytest.param("notes.add", 5, "because", "tbd", id="everything wrong at once"),
    pytest.param("notes.delete", 0, "needs-fixture", REASON, id="the example already has one"),
]


def _review_findings(root: Path) -> list[tuple[str, str]]:
    """What ``validate`` says about the reviewer records: (code, message) in report order."""
    _, _, report = _validate_codes(root)
    return [
        (d["code"], d["message"])
        for d in report["diagnostics"]
        if CODES[d["code"]].stage is Stage.REVIEW
    ]


def _refusals(stderr: str) -> list[tuple[str, str]]:
    """What ``add`` refused with: (code, message) of each diagnostic line it printed."""
    found = []
    for line in stderr.splitlines():
        if line.startswith("dispositions/"):
            _, subject, message = line.split(": ", 2)
            found.append((subject.split(" ", 1)[0], message))
    return found


@pytest.mark.parametrize(("tool", "index", "reason_code", "reason"), SAME_CHECKS)
def test_add_refuses_exactly_what_validate_flags(
    project: Path, tool: str, index: int, reason_code: str, reason: str
) -> None:
    """The record ``add`` refuses is the record ``validate`` flags, with the same findings.

    The same record is written by hand (with the example text ``add`` would record) and
    validated. The one difference is by design: a record not written yet cannot be stale, so
    an index that does not exist makes it invalid instead.
    """
    assert _review_findings(project) == []
    records = project / "dispositions"
    before = _snapshot(records)
    added = _add(project, tool, str(index), "--reason-code", reason_code, "--reason", reason)
    refused = _refusals(added.stderr)

    for path in records.iterdir():
        if path.name not in before:
            path.unlink()
    for name, data in before.items():
        (records / name).write_bytes(data)
    catalog = json.loads((project / "catalog.json").read_text(encoding="utf-8"))
    texts = {t["id"]: [e["command"] for e in t["examples"]] for t in catalog["tools"]}
    command = dict(enumerate(texts.get(tool, []))).get(index, "")
    block = render_disposition(
        Disposition(
            tool=tool, example=index, reason_code=reason_code, reason=reason, command=command
        )
    )
    target = disposition_file(records, tool)
    old = target.read_text(encoding="utf-8") if target.exists() else ""
    target.write_text(f"{old}\n\n{block}" if old else block, encoding="utf-8")
    flagged = _review_findings(project)

    if not flagged:
        assert added.returncode == 0, added.stderr
        assert refused == []
        return
    assert added.returncode == 2
    assert "nothing was written" in added.stderr
    stale = f"index {index} no longer exists"
    assert refused == [
        ("disposition-invalid", message.replace(stale, f"there is no index {index}"))
        if code == "disposition-stale" and stale in message
        else (code, message)
        for code, message in flagged
    ]


EXCLUDE_REFUSALS = [
    pytest.param(["purg*"], EXCLUDE_REASON, "exclusion-invalid", "wildcard", id="wildcard"),
    pytest.param(["purge"], "todo", "exclusion-invalid", "not concrete", id="vague reason"),
    pytest.param(["import"], EXCLUDE_REASON, "exclusion-invalid", "no command", id="no such path"),
    pytest.param(["tags"], EXCLUDE_REASON, "exclusion-invalid", "a group", id="group path"),
    pytest.param(
        ["delete"], EXCLUDE_REASON, "exclusion-stale", "notes.delete covers", id="covered"
    ),
    pytest.param(
        ["tags", "rename"],
        EXCLUDE_REASON,
        "exclusion-duplicate",
        "already excluded at dispositions/exclusions.toml:8:1",
        id="already excluded",
    ),
]


@pytest.mark.parametrize(("path", "reason", "code", "fragment"), EXCLUDE_REFUSALS)
def test_exclude_refuses_and_writes_nothing(
    project: Path, path: list[str], reason: str, code: str, fragment: str
) -> None:
    _add_purge(project)
    before = _snapshot(project)
    result = run_cli(["dispositions", "exclude", *path, "--reason", reason], cwd=project)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"{code} " in result.stderr
    assert fragment in result.stderr
    assert _snapshot(project) == before


def test_exclude_without_a_tree_is_refused(project: Path) -> None:
    catalog_path = project / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["dialect"] = "click"
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    (project / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    _add_purge(project)
    before = _snapshot(project)
    result = run_cli(["dispositions", "exclude", "purge", "--reason", EXCLUDE_REASON], cwd=project)
    assert result.returncode == 2
    assert "exclusion-invalid" in result.stderr
    assert "configure `tree`" in result.stderr
    assert _snapshot(project) == before


# -- appending: the new record, every old byte ----------------------------------------------------


def test_add_appends_the_record_and_keeps_every_old_byte(project: Path) -> None:
    path = project / "dispositions" / "notes.delete.toml"
    old = path.read_bytes()
    others = {k: v for k, v in _snapshot(project).items() if not k.startswith("dispositions/")}
    result = _add(
        project,
        "notes.delete",
        "1",
        "--reason-code",
        "needs-fixture",
        "--reason",
        REASON,
        "--reviewer",
        "a-reviewer",
        "--evidence",
        "issue 12",
        "--evidence",
        "https://example.invalid/review/3",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("appended to dispositions/notes.delete.toml:\n")
    new = path.read_bytes()
    assert new.startswith(old)
    records = tomllib.loads(new.decode("utf-8"))["disposition"]
    assert records[-1] == {
        "tool": "notes.delete",
        "example": 1,
        "reason_code": "needs-fixture",
        "reason": REASON,
        "reviewer": "a-reviewer",
        "evidence": ["issue 12", "https://example.invalid/review/3"],
        "command": DELETE_1,
    }
    assert len(records) == 2
    # Nothing else in the project changed; the record applies and is a visible counts change.
    assert {
        k: v for k, v in _snapshot(project).items() if not k.startswith("dispositions/")
    } == others
    code, codes, report = _validate_codes(project)
    assert (code, codes) == (1, ["counts-drift"])
    assert "dry_run_narrowed: 1 -> 2" in report["diagnostics"][0]["message"]


def test_add_records_the_example_text_as_it_is_now(project: Path) -> None:
    catalog_path = project / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    current = 'notes rm --tag "needs review" --format json'
    catalog["tools"][0]["examples"][1]["command"] = current
    catalog_path.write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    result = _add(
        project, "notes.delete", "1", "--reason-code", "needs-fixture", "--reason", REASON
    )
    assert result.returncode == 0, result.stderr
    text = (project / "dispositions" / "notes.delete.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text)["disposition"][-1]["command"] == current


def test_add_creates_the_file_and_the_folder(project: Path) -> None:
    shutil.rmtree(project / "dispositions")
    result = _add(
        project, "notes.delete", "1", "--reason-code", "nondeterministic", "--reason", REASON
    )
    assert result.returncode == 0, result.stderr
    data = tomllib.loads(
        (project / "dispositions" / "notes.delete.toml").read_text(encoding="utf-8")
    )
    assert [(r["tool"], r["example"]) for r in data["disposition"]] == [("notes.delete", 1)]


def test_add_keeps_crlf_line_endings_byte_for_byte(project: Path) -> None:
    path = project / "dispositions" / "notes.delete.toml"
    old = EXISTING_DISPOSITIONS.replace("\n", "\r\n").encode("utf-8")
    path.write_bytes(old)
    result = _add(
        project, "notes.delete", "1", "--reason-code", "needs-fixture", "--reason", REASON
    )
    assert result.returncode == 0, result.stderr
    new = path.read_bytes()
    assert new.startswith(old), "existing CRLF lines were rewritten"
    assert len(tomllib.loads(new.decode("utf-8"))["disposition"]) == 2


def test_exclude_appends_the_record_and_keeps_every_old_byte(project: Path) -> None:
    _add_purge(project)
    path = project / "dispositions" / "exclusions.toml"
    old = path.read_bytes()
    result = run_cli(
        ["dispositions", "exclude", "purge", "--reason", EXCLUDE_REASON, "--reviewer", "r2"],
        cwd=project,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("appended to dispositions/exclusions.toml:\n")
    new = path.read_bytes()
    assert new.startswith(old)
    records = tomllib.loads(new.decode("utf-8"))["exclusion"]
    assert records[-1] == {"path": ["purge"], "reason": EXCLUDE_REASON, "reviewer": "r2"}
    code, codes, report = _validate_codes(project)
    assert (code, codes) == (1, ["counts-drift"])
    assert "excluded: 2 -> 3" in report["diagnostics"][0]["message"]


@pytest.mark.parametrize(
    ("args", "file"),
    [
        pytest.param(
            ["add", "notes.delete", "1", "--reason-code", "needs-fixture", "--reason", REASON],
            "dispositions/notes.delete.toml",
            id="add",
        ),
        pytest.param(
            ["exclude", "purge", "--reason", EXCLUDE_REASON],
            "dispositions/exclusions.toml",
            id="exclude",
        ),
    ],
)
def test_dry_run_prints_the_record_and_writes_nothing(
    project: Path, args: list[str], file: str
) -> None:
    _add_purge(project)
    before = _snapshot(project)
    result = run_cli(["dispositions", *args, "--dry-run"], cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"# would append to {file}\n")
    printed = tomllib.loads(result.stdout)
    (kind,) = printed
    assert len(printed[kind]) == 1
    assert _snapshot(project) == before


# -- atomicity: a crash between the temporary write and the rename --------------------------------


class SimulatedCrash(BaseException):
    """The process dies between writing the temporary file and renaming it."""


@pytest.mark.parametrize(
    ("failure", "args", "file"),
    [
        pytest.param(
            OSError(28, "No space left on device"),
            ["add", "notes.delete", "1", "--reason-code", "needs-fixture", "--reason", REASON],
            "notes.delete.toml",
            id="add, rename fails",
        ),
        pytest.param(
            SimulatedCrash(),
            ["add", "notes.delete", "1", "--reason-code", "needs-fixture", "--reason", REASON],
            "notes.delete.toml",
            id="add, process dies",
        ),
        pytest.param(
            OSError(28, "No space left on device"),
            ["exclude", "purge", "--reason", EXCLUDE_REASON],
            "exclusions.toml",
            id="exclude, rename fails",
        ),
        pytest.param(
            SimulatedCrash(),
            ["exclude", "purge", "--reason", EXCLUDE_REASON],
            "exclusions.toml",
            id="exclude, process dies",
        ),
    ],
)
def test_a_crash_before_the_rename_leaves_the_old_file(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: BaseException,
    args: list[str],
    file: str,
) -> None:
    _add_purge(project)
    path = project / "dispositions" / file
    old = path.read_bytes()
    listing = sorted(p.name for p in path.parent.iterdir())
    calls: list[tuple[str, str]] = []

    def replace(source: Any, target: Any) -> None:
        calls.append((str(source), str(target)))
        assert Path(source).read_bytes().startswith(old)  # the temporary file was written
        raise failure

    monkeypatch.chdir(project)
    monkeypatch.setattr(os, "replace", replace)
    if isinstance(failure, OSError):
        assert main(["dispositions", *args]) == 2
        assert "No space left on device" in capsys.readouterr().err
    else:
        with pytest.raises(SimulatedCrash):
            main(["dispositions", *args])
    assert len(calls) == 1
    assert calls[0][1] == str(path)
    assert path.read_bytes() == old
    left = sorted(p.name for p in path.parent.iterdir())
    assert [name for name in left if name.endswith(".tmp")] == []
    assert left == listing


# -- two writers at once --------------------------------------------------------------------------


@pytest.mark.parametrize("iteration", range(4))
def test_two_concurrent_adds_both_land(tmp_path: Path, iteration: int) -> None:
    root = tmp_path / f"project-{iteration}"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    path = root / "dispositions" / "notes.delete.toml"
    path.parent.mkdir(exist_ok=True)
    header = "# both writers append below\n"
    path.write_text(header, encoding="utf-8")
    results = run_together(
        root,
        [
            ["dispositions", "add", "notes.delete", str(index), "--reason-code", code,
             "--reason", f"{REASON} (writer {index})"]
            for index, code in ((0, "needs-service"), (1, "needs-fixture"))
        ],
    )  # fmt: skip
    for result in results:
        assert result.returncode == 0, result.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith(header)
    records = tomllib.loads(text)["disposition"]
    assert sorted((r["example"], r["reason"]) for r in records) == [
        (0, f"{REASON} (writer 0)"),
        (1, f"{REASON} (writer 1)"),
    ]
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


# -- tool ids are data, never paths ---------------------------------------------------------------


def test_tool_ids_never_write_outside_the_dispositions_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    ids = [
        "a/b",
        "../escape",
        "../../escape",
        f"{outside}/evil",
        "..",
        ".",
        ".hidden",
        "exclusions",
        "x/../../y",
        "dir\\..\\win",
    ]
    dry_run = {"flag": None, "reviewed": True, "evidence": "the command is itself a preview"}
    tools = [
        {
            "id": tool_id,
            "command": [f"c{i}"],
            "dry_run": dry_run,
            "examples": [{"command": f"notes c{i}"}],
        }
        for i, tool_id in enumerate(ids)
    ]
    catalog = {"format": "exampleguard.catalog/v1", "program": "notes", "dialect": "click"}
    (root / "catalog.json").write_text(json.dumps({**catalog, "tools": tools}), encoding="utf-8")
    (root / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    assert run_cli(["counts", "--write"], cwd=root).returncode == 0
    before = _snapshot(tmp_path)
    written: list[str] = []
    monkeypatch.chdir(root)
    for tool_id in ids:
        args = [tool_id, "0", "--reason-code", "needs-fixture", "--reason", REASON]
        assert main(["dispositions", "add", *args]) == 0, capsys.readouterr().err
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith("appended to dispositions/")
        written.append(first.removeprefix("appended to ").removesuffix(":"))
    changed = {name for name, data in _snapshot(tmp_path).items() if before.get(name) != data}
    assert changed == {f"project/{name}" for name in written}
    for name in written:
        file = root / name
        assert file.parent == root / "dispositions"
        assert not file.is_symlink()
        assert file.name != "exclusions.toml"
    assert list(outside.iterdir()) == []
    # Every record is read back and applies to its own tool.
    code, codes, report = _validate_codes(root)
    assert codes == ["counts-drift"]
    assert f"dry_run_narrowed: 0 -> {len(ids)}" in report["diagnostics"][0]["message"]
    assert code == 1


def test_add_refuses_to_replace_a_symlinked_file(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("# not the project's\n", encoding="utf-8")
    path = project / "dispositions" / "notes.delete.toml"
    path.unlink()
    path.symlink_to(outside)
    result = _add(
        project, "notes.delete", "1", "--reason-code", "needs-fixture", "--reason", REASON
    )
    assert result.returncode == 2
    assert outside.read_text(encoding="utf-8") == "# not the project's\n"
    assert path.is_symlink()


# -- list and check -------------------------------------------------------------------------------


def _make_one_record_stale(root: Path) -> None:
    catalog_path = root / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["tools"][0]["examples"][0]["command"] = "notes delete 3 --dry-run"
    catalog_path.write_text(json.dumps(catalog, indent=2), encoding="utf-8")


def test_list_text_shows_each_record_with_its_place_and_status(project: Path) -> None:
    _make_one_record_stale(project)
    result = run_cli(["dispositions", "list"], cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "dispositions/notes.delete.toml:4: notes.delete[0]  needs-service  [disposition-stale]",
        "    Deleting by id talks to the notes daemon, which CI does not run.",
        "dispositions/exclusions.toml:3: exclude 'export'  [applies]",
        "    Export writes every note to stdout in bulk; agents read notes one by one.",
        "dispositions/exclusions.toml:8: exclude 'tags rename'  [applies]",
        "    Renaming tags rewrites every note; only people do it.",
    ]


def test_list_json_has_every_field(project: Path) -> None:
    _make_one_record_stale(project)
    result = run_cli(["dispositions", "list", "--format", "json"], cwd=project)
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    by_kind = sorted(entries, key=lambda e: (e["kind"], e["line"]))
    assert by_kind == [
        {
            "kind": "disposition",
            "tool": "notes.delete",
            "example": 0,
            "reason_code": "needs-service",
            "reason": "Deleting by id talks to the notes daemon, which CI does not run.",
            "reviewer": "first-reviewer",
            "evidence": ["issue 7"],
            "command": "notes delete 3 4 --dry-run",
            "file": "dispositions/notes.delete.toml",
            "line": 4,
            "status": "disposition-stale",
        },
        {
            "kind": "exclusion",
            "path": ["export"],
            "reason": "Export writes every note to stdout in bulk; agents read notes one by one.",
            "reviewer": "a-reviewer",
            "file": "dispositions/exclusions.toml",
            "line": 3,
            "status": "applies",
        },
        {
            "kind": "exclusion",
            "path": ["tags", "rename"],
            "reason": "Renaming tags rewrites every note; only people do it.",
            "reviewer": None,
            "file": "dispositions/exclusions.toml",
            "line": 8,
            "status": "applies",
        },
    ]


DOC_EXCEPTIONS = """\
[[doc_exception]]
file = "README.md"
command = "notes add x --prio 3"
reason_code = "counter-example"
reason = "Shows the misspelled --prio flag that the next line corrects."

[[doc_exception]]
file = "README.md"
command = "notes add x --colour red"
reason_code = "migration-note"
reason = "Shows the flag the 2.0 release removed, next to its replacement."
"""


def _with_doc_exceptions(root: Path) -> None:
    """A README with one wrong-on-purpose example, and two doc exceptions: one of them stale."""
    (root / "README.md").write_text("```sh\nnotes add x --prio 3\n```\n", encoding="utf-8")
    (root / "dispositions" / "doc-exceptions.toml").write_text(DOC_EXCEPTIONS, encoding="utf-8")


def test_list_shows_doc_exceptions_with_their_status(project: Path) -> None:
    _with_doc_exceptions(project)
    result = run_cli(["dispositions", "list"], cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-4:] == [
        "dispositions/doc-exceptions.toml:1: except README.md: 'notes add x --prio 3'  "
        "counter-example  [applies]",
        "    Shows the misspelled --prio flag that the next line corrects.",
        "dispositions/doc-exceptions.toml:7: except README.md: 'notes add x --colour red'  "
        "migration-note  [doc-exception-stale]",
        "    Shows the flag the 2.0 release removed, next to its replacement.",
    ]
    entries = json.loads(run_cli(["dispositions", "list", "-f", "json"], cwd=project).stdout)
    assert [e for e in entries if e["kind"] == "doc_exception"] == [
        {
            "kind": "doc_exception",
            "example_file": "README.md",
            "command": "notes add x --prio 3",
            "reason_code": "counter-example",
            "reason": "Shows the misspelled --prio flag that the next line corrects.",
            "reviewer": None,
            "file": "dispositions/doc-exceptions.toml",
            "line": 1,
            "status": "applies",
        },
        {
            "kind": "doc_exception",
            "example_file": "README.md",
            "command": "notes add x --colour red",
            "reason_code": "migration-note",
            "reason": "Shows the flag the 2.0 release removed, next to its replacement.",
            "reviewer": None,
            "file": "dispositions/doc-exceptions.toml",
            "line": 7,
            "status": "doc-exception-stale",
        },
    ]


def test_check_fails_on_a_stale_doc_exception_and_names_it(project: Path) -> None:
    _with_doc_exceptions(project)
    result = run_cli(["dispositions", "check"], cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    found = [line for line in result.stdout.splitlines() if "doc-exceptions.toml:" in line]
    assert found == [
        "dispositions/doc-exceptions.toml:7:1: doc-exception-stale doc exception for "
        "'notes add x --colour red' in README.md: no documentation example of the file has "
        "exactly this text"
    ]
    # The example the other record excepts is not checked here, or anywhere.
    assert "unknown-flag" not in result.stdout


def test_list_with_no_records(project: Path) -> None:
    shutil.rmtree(project / "dispositions")
    result = run_cli(["dispositions", "list"], cwd=project)
    assert (result.returncode, result.stdout) == (
        0,
        "no dispositions, exclusions or doc exceptions\n",
    )
    result = run_cli(["dispositions", "list", "--format", "json"], cwd=project)
    assert (result.returncode, json.loads(result.stdout)) == (0, [])


def test_check_passes_on_clean_records(project: Path) -> None:
    result = run_cli(["dispositions", "check"], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_fails_on_a_stale_record_and_names_it(project: Path) -> None:
    _make_one_record_stale(project)
    result = run_cli(["dispositions", "check"], cwd=project)
    assert result.returncode == 1
    assert "dispositions/notes.delete.toml:4:1: disposition-stale notes.delete[0]:" in (
        result.stdout
    )


def test_check_ignores_example_defects(project: Path) -> None:
    catalog_path = project / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["tools"][1]["examples"][0]["command"] = "notes add 'Buy milk' --bogus"
    catalog_path.write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    result = run_cli(["dispositions", "check"], cwd=project)
    assert result.returncode == 0, result.stdout


def test_check_fails_on_an_uncovered_command(project: Path) -> None:
    path = project / "dispositions" / "exclusions.toml"
    path.write_text(EXISTING_EXCLUSIONS.partition('\n[[exclusion]]\npath = ["tags"')[0], "utf-8")
    result = run_cli(["dispositions", "check"], cwd=project)
    assert result.returncode == 1
    assert "uncovered-command the command 'notes tags rename' has no tool" in result.stdout


def test_check_on_a_malformed_file_is_exit_2(project: Path) -> None:
    (project / "dispositions" / "broken.toml").write_text(
        '[[disposition]]\ntool = "notes.delete"\nexample = "one"\nreason_code = "needs-fixture"\n'
        'reason = "It needs a notes database with rows."\n',
        encoding="utf-8",
    )
    result = run_cli(["dispositions", "check"], cwd=project)
    assert result.returncode == 2
    assert "dispositions/broken.toml:3:" in result.stderr
    assert "Traceback" not in result.stderr
