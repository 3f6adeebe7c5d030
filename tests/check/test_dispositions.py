"""Reviewer records (SPEC 3.4-3.6): every invalid, stale and duplicate case of both kinds.

The table tests run the real loaders and checkers on in-memory folders (pyfakefs); the CLI tests
plant the same records in a copy of the sample project and run ``exampleguard validate`` in a
real subprocess, asserting what a reviewer reads: the code, the file, and the record's line.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem

from exampleguard._catalogfile import load_catalog
from exampleguard._contractbuild import build_contract
from exampleguard._diagnostics import Diagnostic
from exampleguard._dispositions.check import Review, check_dispositions, check_exclusions
from exampleguard._dispositions.load import load_dispositions
from exampleguard._documents import SourceError
from exampleguard._report import located
from exampleguard._sources.catalog import catalog_examples
from exampleguard._tree import load_tree, parse_tree_spec
from tests.support.project import REPOSITORY, run_cli

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"

DELETE_0 = "notes delete 3 4 --dry-run"
DELETE_1 = "notes rm --tag draft --format json"
GOOD_REASON = "Deleting by tag needs a notes database with tagged rows; none is shipped."
GOOD_EXCLUSION_REASON = "Export dumps every note at once; agents read notes one by one."

# -- rendering records as a reviewer would write them ---------------------------------------------


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(_toml(item) for item in value) + "]"


def records_text(kind: str, records: Sequence[Mapping[str, Any]]) -> tuple[str, list[int]]:
    """A records file with a leading comment; also the line of each record's header."""
    lines = ["# Reviewed by hand; keep one record per decision.", ""]
    headers: list[int] = []
    for record in records:
        headers.append(len(lines) + 1)
        lines.append(f"[[{kind}]]")
        lines += [f"{key} = {_toml(value)}" for key, value in record.items() if value is not None]
        lines.append("")
    return "\n".join(lines), headers


def disposition(example: int = 1, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "tool": "notes.delete",
        "example": example,
        "reason_code": "needs-fixture",
        "reason": GOOD_REASON,
        "reviewer": "a-reviewer",
        "command": DELETE_1 if example == 1 else DELETE_0,
    }
    record.update(fields)
    return record


def exclusion(*path: str, reason: str = GOOD_EXCLUSION_REASON) -> dict[str, Any]:
    return {"path": list(path), "reason": reason, "reviewer": "a-reviewer"}


# -- an in-memory project: catalog, tree snapshot, dispositions folder ----------------------------

CATALOG: dict[str, Any] = {
    "format": "exampleguard.catalog/v1",
    "program": "notes",
    "dialect": "click",
    "tools": [
        {
            "id": "notes.delete",
            "command": ["delete"],
            "aliases": [["rm"]],
            "dry_run": {"flag": "--dry-run", "reviewed": True, "evidence": "delete --dry-run"},
            "examples": [{"command": DELETE_0}, {"command": DELETE_1}],
        },
        {
            "id": "notes.add",
            "command": ["add"],
            "examples": [{"command": "notes add 'Buy milk'"}],
        },
        {"id": "notes.tags.rename", "command": ["tags", "rename"], "examples": []},
    ],
}


def _leaf(path: list[str], **extra: Any) -> dict[str, Any]:
    return {"path": path, "runnable": True, "parameters": [], **extra}


TREE: dict[str, Any] = {
    "format": "exampleguard.tree/v1",
    "program": "notes",
    "dialect": "click",
    "commands": [
        {"path": [], "runnable": False, "parameters": []},
        _leaf(
            ["delete"],
            aliases=[["rm"]],
            parameters=[
                {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
                {"name": "tag", "flags": ["--tag", "-t"], "multiple": True},
                {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
                {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"},
            ],
        ),
        _leaf(["add"], parameters=[{"name": "text", "positional": True}]),
        _leaf(["export"]),
        {"path": ["tags"], "runnable": False, "parameters": []},
        _leaf(["tags", "rename"]),
        _leaf(["debug"], hidden=True),
    ],
}

ROOT = Path("/project")


def _write_project(fs: Any, *, files: Mapping[str, str]) -> None:
    fs.create_file(ROOT / "catalog.json", contents=json.dumps(CATALOG, indent=2))
    fs.create_file(ROOT / "notes.tree.json", contents=json.dumps(TREE, indent=2))
    for name, text in files.items():
        fs.create_file(ROOT / "dispositions" / name, contents=text)


def _review(
    fs: Any,
    files: Mapping[str, str],
    *,
    tree: bool = True,
    reason_codes: Mapping[str, str] | None = None,
) -> tuple[Review, Review]:
    _write_project(fs, files=files)
    loaded_catalog = load_catalog(ROOT / "catalog.json", "catalog.json")
    loaded_tree = None
    if tree:
        spec = parse_tree_spec("notes.tree.json", ROOT)
        loaded_tree, _ = load_tree(spec, root=ROOT, display="notes.tree.json")
    contract = build_contract(loaded_catalog, loaded_tree)
    if tree:
        assert contract.diagnostics == []
    records = load_dispositions(ROOT / "dispositions", ROOT, "dispositions")
    dispositions = check_dispositions(
        records, contract.tools, catalog_examples(loaded_catalog), reason_codes or {}
    )
    exclusions = check_exclusions(records, contract)
    return dispositions, exclusions


def _found(
    diagnostics: Iterable[Diagnostic],
) -> list[tuple[str, str | None, int | None, str | None]]:
    places = [(d, located(d)) for d in diagnostics]
    return [
        (
            d.code,
            where.file if where else None,
            where.line if where else None,
            where.key if where else None,
        )
        for d, where in places
    ]


# -- dispositions: the table ----------------------------------------------------------------------

PLACEHOLDERS = ["", "n/a", "TODO", "tbd", "skip", "needs-fixture", "needs fixture"]

DISPOSITION_CASES = [
    pytest.param([disposition(1)], [], id="a valid record applies"),
    pytest.param(
        [disposition(1, tool="notes.gone")],
        [("disposition-invalid", 0, "no tool has the id 'notes.gone'")],
        id="unknown tool",
    ),
    pytest.param(
        [disposition(0, tool="notes.add", command="notes add 'Buy milk'")],
        [("disposition-invalid", 0, "no reviewed dry-run capability")],
        id="tool without a dry-run capability",
    ),
    pytest.param(
        [disposition(1, reason_code="needs-gpu")],
        [("disposition-invalid", 0, "reason code 'needs-gpu' is not approved")],
        id="unapproved reason code",
    ),
    *[
        pytest.param(
            [disposition(1, reason=reason)],
            [("disposition-invalid", 0, "is not concrete")],
            id=f"placeholder reason {reason!r}",
        )
        for reason in PLACEHOLDERS
    ],
    pytest.param(
        [disposition(1, command=None)],
        [("disposition-invalid", 0, "(`command`)")],
        id="missing command",
    ),
    pytest.param(
        [disposition(2, command="notes delete --all")],
        [("disposition-stale", 0, "index 2 no longer exists")],
        id="stale: the index is gone",
    ),
    pytest.param(
        [disposition(1, command="notes rm --tag old --format json")],
        [("disposition-stale", 0, f"the example is now {DELETE_1!r}")],
        id="stale: the example text changed",
    ),
    pytest.param(
        [disposition(1), disposition(1, reviewer="another-reviewer")],
        [
            (
                "disposition-duplicate",
                1,
                "already has a disposition in dispositions/notes.delete.toml:",
            )
        ],
        id="duplicate: two records for one example",
    ),
    pytest.param(
        [disposition(0), disposition(1)],
        [],
        id="two examples of one tool, one record each",
    ),
]


@pytest.mark.parametrize(("records", "expected"), DISPOSITION_CASES)
def test_disposition_table(
    fs: FakeFilesystem, records: list[dict[str, Any]], expected: list[tuple[str, int, str]]
) -> None:
    text, headers = records_text("disposition", records)
    review, _ = _review(fs, {"notes.delete.toml": text})
    found = review.diagnostics
    assert _found(found) == [
        (code, "dispositions/notes.delete.toml", headers[index], f"disposition[{index}]")
        for code, index, _ in expected
    ]
    for diagnostic, (_, index, fragment) in zip(found, expected, strict=True):
        record = records[index]
        assert fragment in diagnostic.message
        assert diagnostic.message.startswith(
            f"disposition for {record['tool']}[{record['example']}]:"
        )
        assert (diagnostic.tool, diagnostic.example) == (record["tool"], record["example"])
    # A record without a defect applies (the first of two duplicates does).
    defective = {index for _, index, _ in expected}
    applying = {(r["tool"], r["example"]) for i, r in enumerate(records) if i not in defective}
    assert review.narrowed == applying


def test_duplicate_across_two_files_names_the_first_file(fs: FakeFilesystem) -> None:
    first, first_headers = records_text("disposition", [disposition(1)])
    second, second_headers = records_text("disposition", [disposition(1, reviewer="b")])
    review, _ = _review(fs, {"a-first.toml": first, "notes.delete.toml": second})
    assert _found(review.diagnostics) == [
        (
            "disposition-duplicate",
            "dispositions/notes.delete.toml",
            second_headers[0],
            "disposition[0]",
        )
    ]
    assert f"dispositions/a-first.toml:{first_headers[0]}:1" in review.diagnostics[0].message
    assert review.narrowed == {("notes.delete", 1)}


def test_reason_codes_from_the_configuration_are_approved(fs: FakeFilesystem) -> None:
    text, _ = records_text("disposition", [disposition(1, reason_code="needs-gpu")])
    review, _ = _review(
        fs, {"notes.delete.toml": text}, reason_codes={"needs-gpu": "The preview needs a GPU."}
    )
    assert review.diagnostics == []
    assert review.narrowed == {("notes.delete", 1)}


def test_several_defects_of_one_record_are_all_reported(fs: FakeFilesystem) -> None:
    record = disposition(1, tool="notes.add", reason_code="because", reason="tbd", command=None)
    text, headers = records_text("disposition", [record])
    review, _ = _review(fs, {"notes.delete.toml": text})
    assert [(d.code, (where := located(d)) and where.line) for d in review.diagnostics] == [
        ("disposition-invalid", headers[0])
    ] * 4
    messages = " | ".join(d.message for d in review.diagnostics)
    for fragment in ("no reviewed dry-run", "'because' is not approved", "'tbd'", "`command`"):
        assert fragment in messages
    assert review.narrowed == set()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param(
            '[[disposition]]\ntool = "notes.delete"\nexample = -1\nreason_code = "needs-fixture"\n'
            'reason = "A sentence of reason."\n',
            "example",
            id="negative index",
        ),
        pytest.param(
            '[[disposition]]\ntool = "notes.delete"\nexample = "1"\nreason_code = "needs-fixture"\n'
            'reason = "A sentence of reason."\n',
            "example",
            id="index given as a string",
        ),
        pytest.param(
            '[[disposition]]\ntool = "notes.delete"\nexample = 1\nreason_code = "needs-fixture"\n'
            'reason = "A sentence of reason."\nskip_validation = true\n',
            "skip_validation",
            id="unknown key",
        ),
        pytest.param("[[disposition]\n", "not valid TOML", id="broken TOML"),
        pytest.param(
            '[[disposition]]\ntool = "notes.delete"\nexample = 1\nreason = "A good reason."\n',
            "missing required key 'reason_code'",
            id="missing reason_code",
        ),
    ],
)
def test_malformed_disposition_file_is_a_structure_error(
    fs: FakeFilesystem, text: str, fragment: str
) -> None:
    with pytest.raises(SourceError) as raised:
        _review(fs, {"notes.delete.toml": text})
    diagnostic = raised.value.diagnostic
    where = located(diagnostic)
    assert where is not None
    assert where.file == "dispositions/notes.delete.toml"
    assert fragment in diagnostic.message


# -- exclusions: the table ------------------------------------------------------------------------

UNCOVERED_EXPORT = ("uncovered-command", None, None, None)

EXCLUSION_CASES = [
    pytest.param([exclusion("export")], [], {("export",)}, id="a valid exclusion applies"),
    *[
        pytest.param(
            [exclusion("export", reason=reason)],
            [("exclusion-invalid", 0), UNCOVERED_EXPORT],
            set(),
            id=f"vague reason {reason!r}",
        )
        for reason in ["", "n/a", "TODO", "tbd", "skip", "internal"]
    ],
    *[
        pytest.param(
            [exclusion(word)],
            [("exclusion-invalid", 0), UNCOVERED_EXPORT],
            set(),
            id=f"wildcard {word!r}",
        )
        for word in ["exp*", "expor?", "[e]xport", "{export}"]
    ],
    pytest.param(
        [exclusion("export"), exclusion("tags")],
        [("exclusion-invalid", 1)],
        {("export",)},
        id="group path",
    ),
    pytest.param(
        [exclusion("export"), exclusion()],
        [("exclusion-invalid", 1)],
        {("export",)},
        id="the program itself (a group)",
    ),
    pytest.param(
        [exclusion("export"), exclusion("import")],
        [("exclusion-stale", 1)],
        {("export",)},
        id="stale: the path is gone",
    ),
    pytest.param(
        [exclusion("export"), exclusion("tags", "merge")],
        [("exclusion-stale", 1)],
        {("export",)},
        id="stale: a nested path is gone",
    ),
    pytest.param(
        [exclusion("export"), exclusion("delete")],
        [("exclusion-stale", 1)],
        {("export",)},
        id="stale: a tool now covers the path",
    ),
    pytest.param(
        [exclusion("export"), exclusion("export", reason="Bulk export is not offered to agents.")],
        [("exclusion-duplicate", 1)],
        {("export",)},
        id="duplicate",
    ),
]

EXCLUSION_MESSAGES = {
    "exclusion-invalid": ("wildcards", "not concrete", "not a runnable command"),
    "exclusion-stale": ("no longer has this command", "now covers this command"),
    "exclusion-duplicate": ("already excluded at dispositions/exclusions.toml:",),
}


@pytest.mark.parametrize(("records", "expected", "excluded"), EXCLUSION_CASES)
def test_exclusion_table(
    fs: FakeFilesystem,
    records: list[dict[str, Any]],
    # (code, record index), or the four fields of an uncovered-command finding.
    expected: list[tuple[Any, ...]],
    excluded: set[tuple[str, ...]],
) -> None:
    text, headers = records_text("exclusion", records)
    _, review = _review(fs, {"exclusions.toml": text})
    wanted = [
        item
        if item == UNCOVERED_EXPORT
        else (item[0], "dispositions/exclusions.toml", headers[item[1]], f"exclusion[{item[1]}]")
        for item in expected
    ]
    assert _found(review.diagnostics) == wanted
    for diagnostic, item in zip(review.diagnostics, expected, strict=True):
        if item == UNCOVERED_EXPORT:
            assert "'notes export' has no tool and no exclusion" in diagnostic.message
            continue
        shown = " ".join(records[item[1]]["path"]) or "(the program itself)"
        assert diagnostic.message.startswith(f"exclusion of '{shown}':")
        assert any(fragment in diagnostic.message for fragment in EXCLUSION_MESSAGES[item[0]])
    assert review.excluded == excluded


def test_a_covering_tool_is_named_in_the_stale_exclusion(fs: FakeFilesystem) -> None:
    text, _ = records_text("exclusion", [exclusion("export"), exclusion("tags", "rename")])
    _, review = _review(fs, {"exclusions.toml": text})
    (stale,) = review.diagnostics
    assert stale.code == "exclusion-stale"
    assert "the tool notes.tags.rename now covers this command" in stale.message


def test_exclusions_without_a_tree_are_invalid(fs: FakeFilesystem) -> None:
    text, headers = records_text("exclusion", [exclusion("export"), exclusion("purge")])
    _, review = _review(fs, {"exclusions.toml": text}, tree=False)
    assert _found(review.diagnostics) == [
        ("exclusion-invalid", "dispositions/exclusions.toml", line, f"exclusion[{index}]")
        for index, line in enumerate(headers)
    ]
    assert all("none is configured" in d.message for d in review.diagnostics)
    assert review.excluded == set()


def test_uncovered_command_names_the_command_and_the_fix(fs: FakeFilesystem) -> None:
    _, review = _review(fs, {})
    (uncovered,) = review.diagnostics
    assert uncovered.code == "uncovered-command"
    assert uncovered.message == "the command 'notes export' has no tool and no exclusion"
    assert uncovered.hint is not None
    assert "exampleguard dispositions exclude export" in uncovered.hint


def test_hidden_commands_and_groups_need_no_coverage(fs: FakeFilesystem) -> None:
    text, _ = records_text("exclusion", [exclusion("export")])
    _, review = _review(fs, {"exclusions.toml": text})
    assert review.diagnostics == []


def test_a_missing_dispositions_folder_means_no_records(fs: FakeFilesystem) -> None:
    _write_project(fs, files={})
    loaded = load_dispositions(ROOT / "dispositions", ROOT, "dispositions")
    assert loaded.dispositions == []
    assert loaded.exclusions == []


# -- the real CLI on a copy of the sample project -------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    return root


def _plant(root: Path, name: str, kind: str, records: Sequence[Mapping[str, Any]]) -> list[int]:
    text, headers = records_text(kind, records)
    (root / "dispositions" / name).write_text(text, encoding="utf-8")
    return headers


def _write_counts(root: Path) -> None:
    result = run_cli(["counts", "--write"], cwd=root)
    assert result.returncode == 0, result.stderr


def _validate_json(root: Path) -> tuple[int, dict[str, Any]]:
    result = run_cli(["validate", "--format", "json"], cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


CLI_DISPOSITION_CASES = [
    pytest.param(
        disposition(1, tool="notes.gone"), "disposition-invalid", "notes.gone[1]", id="unknown tool"
    ),
    pytest.param(
        disposition(0, tool="notes.add", command="notes add 'Buy milk' --priority 2"),
        "disposition-invalid",
        "notes.add[0]",
        id="no dry-run capability",
    ),
    pytest.param(
        disposition(1, reason_code="needs-gpu"),
        "disposition-invalid",
        "notes.delete[1]",
        id="unapproved code",
    ),
    pytest.param(
        disposition(1, reason="TODO"), "disposition-invalid", "notes.delete[1]", id="placeholder"
    ),
    pytest.param(
        disposition(1, command=None), "disposition-invalid", "notes.delete[1]", id="no command"
    ),
    pytest.param(
        disposition(2, command="notes delete --all"),
        "disposition-stale",
        "notes.delete[2]",
        id="index gone",
    ),
    pytest.param(
        disposition(1, command="notes rm --tag old"),
        "disposition-stale",
        "notes.delete[1]",
        id="text changed",
    ),
]


@pytest.mark.parametrize(("record", "code", "subject"), CLI_DISPOSITION_CASES)
def test_validate_reports_the_record_by_file_and_line(
    project: Path, record: dict[str, Any], code: str, subject: str
) -> None:
    (header,) = _plant(project, "notes.delete.toml", "disposition", [record])
    # An invalid or stale record narrows nothing, so the committed counts still hold.
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    expected = f"dispositions/notes.delete.toml:{header}:1: {code} {subject}: disposition for"
    assert expected in result.stdout
    assert result.stdout.count(code) == 1
    assert "counts-drift" not in result.stdout
    assert "Traceback" not in result.stderr


def test_validate_reports_a_duplicate_disposition(project: Path) -> None:
    headers = _plant(
        project,
        "notes.delete.toml",
        "disposition",
        [disposition(1), disposition(1, reason_code="needs-service")],
    )
    _write_counts(project)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 1
    assert (
        f"dispositions/notes.delete.toml:{headers[1]}:1: disposition-duplicate notes.delete[1]:"
        in result.stdout
    )
    assert f"dispositions/notes.delete.toml:{headers[0]}:1" in result.stdout


def test_validate_accepts_reason_codes_from_the_configuration(project: Path) -> None:
    config = project / "exampleguard.toml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + '\n[reason_codes]\nneeds-gpu = "The preview needs a GPU, which CI machines lack."\n',
        encoding="utf-8",
    )
    _plant(project, "notes.delete.toml", "disposition", [disposition(1, reason_code="needs-gpu")])
    _write_counts(project)
    code, report = _validate_json(project)
    assert code == 0, report["diagnostics"]
    assert report["counts"]["dry_run_narrowed"] == 1


CLI_EXCLUSION_CASES = [
    pytest.param([exclusion("export", reason="n/a")], "exclusion-invalid", 0, id="vague reason"),
    pytest.param([exclusion("exp*")], "exclusion-invalid", 0, id="wildcard"),
    pytest.param([exclusion("export"), exclusion()], "exclusion-invalid", 1, id="group path"),
    pytest.param([exclusion("export"), exclusion("import")], "exclusion-stale", 1, id="gone"),
    pytest.param([exclusion("export"), exclusion("add")], "exclusion-stale", 1, id="covered"),
    pytest.param(
        [exclusion("export"), exclusion("export")], "exclusion-duplicate", 1, id="duplicate"
    ),
]


@pytest.mark.parametrize(("records", "code", "index"), CLI_EXCLUSION_CASES)
def test_validate_reports_the_exclusion_by_file_and_line(
    project: Path, records: list[dict[str, Any]], code: str, index: int
) -> None:
    headers = _plant(project, "exclusions.toml", "exclusion", records)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    shown = " ".join(records[index]["path"]) or "(the program itself)"
    expected = f"dispositions/exclusions.toml:{headers[index]}:1: {code} exclusion of '{shown}':"
    assert expected in result.stdout


def test_validate_reports_uncovered_commands(project: Path) -> None:
    (project / "dispositions" / "exclusions.toml").unlink()
    _write_counts(project)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 1
    assert "uncovered-command the command 'notes export' has no tool and no exclusion" in (
        result.stdout
    )


def test_exclusions_without_a_tree_fail_validate(project: Path) -> None:
    catalog = json.loads((project / "catalog.json").read_text(encoding="utf-8"))
    catalog["dialect"] = "click"
    (project / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (project / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    _write_counts(project)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 1
    assert "dispositions/exclusions.toml:1:1: exclusion-invalid exclusion of 'export':" in (
        result.stdout
    )


def test_a_disposition_never_removes_an_example_from_contract_validation(project: Path) -> None:
    broken = "notes rm --tag draft --format yaml"
    catalog_path = project / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["tools"][0]["examples"][1]["command"] = broken
    catalog_path.write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    _plant(project, "notes.delete.toml", "disposition", [disposition(1, command=broken)])
    _write_counts(project)
    code, report = _validate_json(project)
    assert code == 1
    assert [d["code"] for d in report["diagnostics"]] == ["bad-choice"]
    assert (report["diagnostics"][0]["tool"], report["diagnostics"][0]["example"]) == (
        "notes.delete",
        1,
    )
    narrowed = next(e for e in report["examples"] if (e["tool"], e["index"]) == ("notes.delete", 1))
    assert narrowed["ok"] is False
    assert report["counts"]["contract_validated"] == report["counts"]["examples"] == 3
    assert report["counts"]["dry_run_narrowed"] == 1
    text = run_cli(["validate"], cwd=project)
    assert "bad-choice notes.delete[1]:" in text.stdout


COUNTS_CASES = [
    pytest.param(
        lambda root: _plant(root, "notes.delete.toml", "disposition", [disposition(1)]),
        ["dry_run_narrowed: 0 -> 1"],
        [],
        id="a new disposition narrows one more",
    ),
    pytest.param(
        lambda root: _plant(
            root, "notes.delete.toml", "disposition", [disposition(0), disposition(1)]
        ),
        ["dry_run_narrowed: 0 -> 2"],
        [],
        id="two new dispositions",
    ),
    pytest.param(
        lambda root: (root / "dispositions" / "exclusions.toml").unlink(),
        ["excluded: 1 -> 0"],
        ["uncovered-command"],
        id="a removed exclusion",
    ),
    pytest.param(
        lambda root: _plant(
            root, "notes.delete.toml", "disposition", [disposition(1, command="notes rm")]
        ),
        [],
        ["disposition-stale"],
        id="a stale disposition narrows nothing",
    ),
]


@pytest.mark.parametrize(("change", "drift", "other_codes"), COUNTS_CASES)
def test_counts_follow_the_records(
    project: Path, change: Callable[[Path], object], drift: list[str], other_codes: list[str]
) -> None:
    change(project)
    code, report = _validate_json(project)
    assert code == 1
    codes = [d["code"] for d in report["diagnostics"]]
    if drift:
        assert sorted(codes) == sorted([*other_codes, "counts-drift"])
        (message,) = [d["message"] for d in report["diagnostics"] if d["code"] == "counts-drift"]
        for figure in drift:
            assert figure in message
    else:
        assert codes == other_codes


def test_symlinked_disposition_file_outside_the_project_is_refused(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "records.toml"
    outside.parent.mkdir()
    outside.write_text(records_text("disposition", [disposition(1)])[0], encoding="utf-8")
    (project / "dispositions" / "notes.delete.toml").symlink_to(outside)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    assert "dispositions/notes.delete.toml" in result.stderr
    assert "outside the project" in result.stderr
    assert "Traceback" not in result.stderr


def test_symlinked_disposition_file_inside_the_project_is_read(project: Path) -> None:
    target = project / "reviews" / "delete.toml"
    target.parent.mkdir()
    target.write_text(records_text("disposition", [disposition(1)])[0], encoding="utf-8")
    (project / "dispositions" / "notes.delete.toml").symlink_to(target)
    _write_counts(project)
    code, report = _validate_json(project)
    assert code == 0, report["diagnostics"]
    assert report["counts"]["dry_run_narrowed"] == 1


def test_non_utf8_disposition_file_is_a_clear_error(project: Path) -> None:
    (project / "dispositions" / "notes.delete.toml").write_bytes(
        b'[[disposition]]\ntool = "notes.delete"\nreason = "caf\xe9 needs a database"\n'
    )
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 2
    assert "dispositions/notes.delete.toml:3:" in result.stderr
    assert "is not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_record_missing_a_required_key_is_exit_2_naming_the_key(project: Path) -> None:
    (project / "dispositions" / "notes.delete.toml").write_text(
        '# one record\n[[disposition]]\ntool = "notes.delete"\nexample = 1\n', encoding="utf-8"
    )
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "dispositions/notes.delete.toml" in result.stderr
    assert "missing required key 'reason_code'" in result.stderr
