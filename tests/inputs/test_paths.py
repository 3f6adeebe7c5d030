"""Paths are data, not commands.

A tool id, a reviewer name, a reason or an evidence string can never make a write land outside
``dispositions/``; a symlinked record file or a symlinked ``dispositions/`` folder that leads out
of the repository is refused; files that are not UTF-8 (and arguments that are not) give a clear
error; ``--output`` that cannot be written is a clear error. Every test walks the whole temporary
tree (symlinks by their target, never followed) before and after, so any stray write shows.

``tests/commands/test_records_write.py`` covers the first ids (``a/b``, ``../escape``, absolute
paths, ``..``, ``.hidden``, ``exclusions``) and a symlinked target file; these cases complement
them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from exampleguard.cli import main
from tests.support.project import FIXTURE_APPS, REPOSITORY, run_cli

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
REASON = "Deleting by tag needs a notes database with tagged rows."
EXCLUDE_REASON = "Purging rewrites the whole database; agents never purge."
PREVIEW = {"flag": None, "reviewed": True, "evidence": "the command is itself a preview"}


def snapshot(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under ``root``, never following links: files with bytes, links by target."""
    found: dict[str, tuple[str, bytes]] = {}
    for folder, directories, files in os.walk(root, followlinks=False):
        for name in [*directories, *files]:
            path = Path(folder, name)
            key = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[key] = ("symlink", str(path.readlink()).encode())
            elif stat.S_ISDIR(mode):
                found[key] = ("directory", b"")
            elif stat.S_ISREG(mode):
                found[key] = ("file", path.read_bytes())
            else:
                found[key] = ("special", b"")
    return found


def changes(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The sample project (snapshot tree, reviewed dry run on notes.delete) with an uncovered
    ``purge`` command to exclude, inside a workspace that also has an ``outside/`` folder."""
    root = tmp_path / "project"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.lock"))
    tree_path = root / "notes.tree.json"
    tree = json.loads(tree_path.read_text(encoding="utf-8"))
    tree["commands"].append({"path": ["purge"], "runnable": True, "parameters": []})
    tree_path.write_text(json.dumps(tree, indent=2), encoding="utf-8")
    (tmp_path / "outside").mkdir()
    return root


def add_args(tool: str, index: int, *extra: str) -> list[str]:
    # Options first and the tool id after `--`: an id that starts with "-" stays an id.
    return [
        "dispositions",
        "add",
        "--reason-code",
        "needs-fixture",
        "--reason",
        REASON,
        *extra,
        "--",
        tool,
        str(index),
    ]


# -- tool ids --------------------------------------------------------------------------------------

# Complementing tests/commands/test_records_write.py (a/b, ../escape, absolute paths, .., .hidden).
TOOL_IDS = [
    "../../outside/planted",  # the workspace has a real outside/ folder
    "/",
    "..\x00/x",
    "a\x00b",
    "line\nbreak",
    "tab\there",
    "a\u2215b",  # DIVISION SLASH
    "a\uff0fb",  # FULLWIDTH SOLIDUS
    "a\u2044b",  # FRACTION SLASH
    "\\",
    "C:\\Windows\\evil",
    "\\\\server\\share\\x",
    "....//....//x",
    "%2e%2e%2fx",
    "~",
    "~/.bashrc",
    "$HOME/x",
    "$(touch pwned)",
    "`touch pwned`",
    "*",
    "...",
    ".toml",
    "x.toml/../../y",
    "exclusions.toml",
    "-",
    "--help",  # an option, were it not after --
    "\u202eexe.toml",  # RIGHT-TO-LEFT OVERRIDE
]


def add_for_each(
    root: Path,
    ids: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One tool per id (each with a reviewed preview), then ``dispositions add`` for each, in
    this process (a NUL cannot travel in argv). Every write lands in ``dispositions/``, every
    record reads back and applies to its own tool."""
    root.mkdir()
    tools = [
        {
            "id": tool_id,
            "command": [f"c{i}"],
            "dry_run": PREVIEW,
            "examples": [{"command": f"n c{i}"}],
        }
        for i, tool_id in enumerate(ids)
    ]
    catalog = {"format": "exampleguard.catalog/v1", "program": "n", "dialect": "click"}
    (root / "catalog.json").write_text(json.dumps({**catalog, "tools": tools}), encoding="utf-8")
    (root / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    monkeypatch.chdir(root)
    assert main(["counts", "--write"]) == 0
    capsys.readouterr()
    workspace = root.parent
    before = snapshot(workspace)
    refused: dict[str, str] = {}
    for tool_id in ids:
        code = main(add_args(tool_id, 0))
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        if code != 0:
            refused[tool_id] = captured.err
    after = snapshot(workspace)
    changed = changes(before, after)
    folder = f"{root.name}/dispositions"
    assert after[folder][0] == "directory"
    written = {Path(name) for name in changed - {folder}}
    assert all(path.parent == Path(folder) for path in written), sorted(changed)
    for path in written:
        assert after[path.as_posix()][0] == "file"
        assert not path.name.startswith("."), "a hidden record file is easy to miss in review"
        assert path.name != "exclusions.toml"
    assert refused == {}, "every valid tool id can get its disposition; refused:\n" + "\n".join(
        f"{tool_id[:40]!r}: {err.strip()[-200:]}" for tool_id, err in refused.items()
    )
    assert main(["validate", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in report["diagnostics"]] == ["counts-drift"]
    assert f"dry_run_narrowed: 0 -> {len(ids)}" in report["diagnostics"][0]["message"]


def test_hostile_tool_ids_write_only_inside_dispositions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    add_for_each(tmp_path / "project", TOOL_IDS, monkeypatch, capsys)


@pytest.mark.parametrize(
    "tool_id",
    [
        pytest.param("t" * 200, id="200-characters"),
        pytest.param("t" * 240, id="240-characters"),
        pytest.param("t" * 1000, id="1000-characters"),
        pytest.param("../" * 100 + "x", id="300-characters-of-dots"),
    ],
)
def test_very_long_tool_ids_still_get_their_disposition(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tool_id: str,
) -> None:
    """A tool id is any non-empty string; the file name made from it must still be one the
    file system accepts (at most 255 bytes, with room for the temporary file's affixes)."""
    add_for_each(tmp_path / "project", [tool_id], monkeypatch, capsys)


# -- reviewer names, reasons and evidence ----------------------------------------------------------

TEXTS = [
    pytest.param("../../etc/passwd", id="relative-path"),
    pytest.param("/tmp/evil", id="absolute-path"),
    pytest.param("$(touch pwned)", id="command-substitution"),
    pytest.param('x"\nreviewer = "mallory', id="toml-key-injection"),
    pytest.param(
        'x"\n[[disposition]]\ntool = "notes.delete"\nexample = 0\n#', id="record-injection"
    ),
    pytest.param("'''\n\"\"\"", id="triple-quotes"),
    pytest.param("back\\slash\\", id="backslashes"),
    pytest.param("del\x7fchar", id="del-character"),
    pytest.param("\u202ereversed", id="right-to-left-override"),
    pytest.param("# not a comment", id="hash"),
]


@pytest.mark.parametrize("text", TEXTS)
def test_reviewer_reason_and_evidence_are_recorded_as_data(project: Path, text: str) -> None:
    workspace = project.parent
    before = snapshot(workspace)
    reason = f"Needs a notes database with tagged rows: {text}"
    result = run_cli(
        [
            "dispositions",
            "add",
            "notes.delete",
            "1",
            "--reason-code",
            "needs-fixture",
            "--reason",
            reason,
            "--reviewer",
            text,
            "--evidence",
            text,
        ],
        cwd=project,
    )
    assert result.returncode == 0, result.stderr
    assert changes(before, snapshot(workspace)) == {"project/dispositions/notes.delete.toml"}
    records = tomllib.loads(
        (project / "dispositions" / "notes.delete.toml").read_text(encoding="utf-8")
    )["disposition"]
    assert len(records) == 1, records
    assert records[0]["reviewer"] == text
    assert records[0]["evidence"] == [text]
    assert records[0]["reason"] == reason
    assert records[0]["example"] == 1
    check = run_cli(["dispositions", "list", "--format", "json"], cwd=project)
    assert check.returncode == 0, check.stderr
    statuses = {entry.get("tool"): entry["status"] for entry in json.loads(check.stdout)}
    assert statuses["notes.delete"] == "applies"


NOT_UTF8_ARGUMENTS = [
    pytest.param("add", "--reviewer", id="add-reviewer"),
    pytest.param("add", "--reason", id="add-reason"),
    pytest.param("add", "--evidence", id="add-evidence"),
    pytest.param("exclude", "--reason", id="exclude-reason"),
    pytest.param("exclude", "--reviewer", id="exclude-reviewer"),
]


@pytest.mark.parametrize(("command", "option"), NOT_UTF8_ARGUMENTS)
def test_arguments_that_are_not_utf8_are_a_clear_error(
    project: Path, command: str, option: str
) -> None:
    """Bytes that are not UTF-8 (a Latin-1 terminal) are refused, never written as a records
    file that no later run can read."""
    workspace = project.parent
    before = snapshot(workspace)
    if command == "add":
        values = {"--reason": REASON, "--reviewer": "a-reviewer", "--evidence": "issue 12"}
        argv = ["dispositions", "add", "notes.delete", "1", "--reason-code", "needs-fixture"]
    else:
        values = {"--reason": EXCLUDE_REASON, "--reviewer": "a-reviewer"}
        argv = ["dispositions", "exclude", "purge"]
    encoded = [sys.executable.encode(), b"-m", b"exampleguard", *(a.encode() for a in argv)]
    for name, value in values.items():
        raw = value.encode() + (b" \xff\xfe" if name == option else b"")
        encoded += [name.encode(), raw]
    result = subprocess.run(
        encoded,
        cwd=project,
        env={**os.environ, "PYTHONPATH": f"{FIXTURE_APPS}{os.pathsep}{REPOSITORY}"},
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err[-1500:]
    assert result.returncode == 2, err
    assert option.removeprefix("--") in err, err
    assert "nothing was written" in err
    assert changes(before, snapshot(workspace)) == set()


# -- symlinks out of the repository ----------------------------------------------------------------


def _outside_records(workspace: Path) -> Path:
    target = workspace / "outside" / "records.toml"
    target.write_text(
        '[[disposition]]\ntool = "notes.delete"\nexample = 1\nreason_code = "needs-fixture"\n'
        f'reason = "{REASON}"\ncommand = "notes rm --tag draft --format json"\n',
        encoding="utf-8",
    )
    return target


@pytest.mark.parametrize(
    "how",
    ["relative", "chain-through-the-project", "exclusions-file"],
)
def test_a_symlinked_record_file_leading_outside_is_refused(project: Path, how: str) -> None:
    workspace = project.parent
    target = _outside_records(workspace)
    folder = project / "dispositions"
    if how == "relative":
        (folder / "notes.delete.toml").symlink_to(Path("..", "..", "outside", "records.toml"))
        shown = "dispositions/notes.delete.toml"
    elif how == "chain-through-the-project":
        (project / "records-link.toml").symlink_to(target)
        (folder / "notes.delete.toml").symlink_to(Path("..", "records-link.toml"))
        shown = "dispositions/notes.delete.toml"
    else:
        (folder / "exclusions.toml").unlink()
        target.write_text('[[exclusion]]\npath = ["export"]\nreason = "Not for agents, ever."\n')
        (folder / "exclusions.toml").symlink_to(target)
        shown = "dispositions/exclusions.toml"
    before = snapshot(workspace)
    for args in (
        ["validate"],
        ["dispositions", "list"],
        [
            "dispositions",
            "add",
            "notes.delete",
            "0",
            "--reason-code",
            "needs-fixture",
            "--reason",
            REASON,
        ],
        ["dispositions", "exclude", "purge", "--reason", EXCLUDE_REASON],
    ):
        result = run_cli(args, cwd=project)
        assert "Traceback" not in result.stderr, result.stderr[-1500:]
        assert result.returncode == 2, (args, result.stdout + result.stderr)
        assert f"{shown} is a symlink to" in result.stderr
        assert "outside the project" in result.stderr
    assert changes(before, snapshot(workspace)) == set()


def test_a_symlink_inside_the_repository_is_followed(project: Path) -> None:
    shared = project / "shared"
    shared.mkdir()
    (shared / "records.toml").write_text("# shared records\n", encoding="utf-8")
    (project / "dispositions" / "notes.delete.toml").symlink_to(
        Path("..", "shared", "records.toml")
    )
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 1, result.stderr  # counts drift from the new command only
    assert "uncovered-command" in result.stdout


def test_a_hardlinked_record_file_is_replaced_never_written_through(project: Path) -> None:
    """Appending writes a new file and renames it: a hard link to a file outside (which no path
    check can see) keeps its old bytes."""
    workspace = project.parent
    outside = workspace / "outside" / "linked.toml"
    outside.write_text("# a file outside the repository\n", encoding="utf-8")
    os.link(outside, project / "dispositions" / "notes.delete.toml")
    result = run_cli(add_args("notes.delete", 1), cwd=project)
    assert result.returncode == 0, result.stderr
    assert outside.read_text(encoding="utf-8") == "# a file outside the repository\n"
    inside = (project / "dispositions" / "notes.delete.toml").read_text(encoding="utf-8")
    assert inside.startswith("# a file outside the repository\n\n[[disposition]]\n")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(add_args("notes.delete", 1), id="add"),
        pytest.param(
            ["dispositions", "exclude", "purge", "--reason", EXCLUDE_REASON], id="exclude"
        ),
        pytest.param(["validate"], id="validate"),
    ],
)
@pytest.mark.parametrize("outside_has_records", [False, True], ids=["empty", "with-records"])
def test_a_dispositions_folder_symlinked_outside_is_refused(
    project: Path, args: list[str], outside_has_records: bool
) -> None:
    workspace = project.parent
    shutil.rmtree(project / "dispositions")
    (project / "dispositions").symlink_to(workspace / "outside")
    if outside_has_records:
        _outside_records(workspace)
    before = snapshot(workspace)
    result = run_cli(args, cwd=project)
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output[-1500:]
    assert changes(before, snapshot(workspace)) == set(), "nothing is written outside"
    if args[0] == "validate" and not outside_has_records:
        # An empty folder holds no records to refuse: the run is evaluated (the exclusion of
        # `export` is gone, so `export` and `purge` are uncovered).
        assert result.returncode == 1, output
        return
    assert result.returncode == 2, output
    assert "outside the project" in result.stderr, result.stderr


def test_a_dispositions_folder_symlinked_inside_the_repository_is_used(project: Path) -> None:
    records = project / "review" / "records"
    records.parent.mkdir()
    (project / "dispositions").rename(records)
    (project / "dispositions").symlink_to(Path("review", "records"))
    result = run_cli(add_args("notes.delete", 1), cwd=project)
    assert result.returncode == 0, result.stderr
    assert (records / "notes.delete.toml").is_file()
    assert (project / "dispositions").is_symlink()


# -- files that are not UTF-8 -------------------------------------------------------------------

NOT_UTF8 = {
    "latin-1": "# R\xe9vis\xe9 par l'\xe9quipe\n".encode("latin-1"),
    "utf-16": "# reviewed\n".encode("utf-16"),
    "invalid-continuation": b"# ok\n\xc3\x28\n",
}


RECORD_COMMANDS = {
    "validate": ["validate"],
    "check": ["dispositions", "check"],
    "list": ["dispositions", "list"],
    "add": add_args("notes.delete", 1),
    "exclude": ["dispositions", "exclude", "purge", "--reason", EXCLUDE_REASON],
}
NOT_UTF8_CASES = [
    *(
        pytest.param("latin-1", file, command, id=f"latin-1-{file}-{command}")
        for file in ("notes.delete.toml", "exclusions.toml")
        for command in RECORD_COMMANDS
    ),
    *(
        pytest.param(encoding, "exclusions.toml", "validate", id=f"{encoding}-exclusions.toml")
        for encoding in ("utf-16", "invalid-continuation")
    ),
]


@pytest.mark.parametrize(("encoding", "file", "command"), NOT_UTF8_CASES)
def test_records_that_are_not_utf8_are_a_clear_error(
    project: Path, encoding: str, file: str, command: str
) -> None:
    args = RECORD_COMMANDS[command]
    path = project / "dispositions" / file
    path.write_bytes(NOT_UTF8[encoding] + (path.read_bytes() if path.exists() else b""))
    before = snapshot(project.parent)
    result = run_cli(args, cwd=project)
    assert "Traceback" not in result.stderr, result.stderr[-1500:]
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"dispositions/{file}" in result.stderr
    assert "is not UTF-8" in result.stderr
    assert result.stdout == ""
    assert changes(before, snapshot(project.parent)) == set()


# -- --output ----------------------------------------------------------------------------------


def _merge_args(project: Path) -> list[str]:
    report = run_cli(["validate", "--format", "json"], cwd=project)
    assert report.returncode in (0, 1), report.stderr
    (project.parent / "outside" / "shard.json").write_text(report.stdout, encoding="utf-8")
    return ["report", "merge", str(project.parent / "outside" / "shard.json")]


@pytest.mark.parametrize("command", ["validate", "report-merge"])
@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        pytest.param("dispositions", "is a directory", id="a-directory"),
        pytest.param("dispositions/", "is a directory", id="a-directory-with-a-slash"),
        pytest.param("catalog.json/report.json", "catalog.json", id="under-a-regular-file"),
    ],
)
def test_output_that_cannot_be_written_is_a_clear_error(
    project: Path, command: str, target: str, fragment: str
) -> None:
    base = ["validate"] if command == "validate" else _merge_args(project)
    before = snapshot(project.parent)
    result = run_cli([*base, "--format", "json", "--output", target], cwd=project)
    assert "Traceback" not in result.stderr, result.stderr[-1500:]
    assert result.returncode == 2, result.stdout + result.stderr
    assert fragment in result.stderr
    assert result.stdout == ""
    assert changes(before, snapshot(project.parent)) == set(), "nothing is created"


@pytest.mark.parametrize(
    ("target", "role"),
    [
        pytest.param("catalog.json", "the catalog", id="the-catalog"),
        pytest.param("exampleguard.toml", "the configuration", id="the-configuration"),
        pytest.param("exampleguard-counts.json", "the committed counts", id="the-counts"),
        pytest.param("notes.tree.json", "the tree snapshot", id="the-snapshot"),
        pytest.param("dispositions/exclusions.toml", "a disposition record", id="a-record"),
        pytest.param("README.md", "a file examples are read from", id="a-document"),
        pytest.param("docs/../catalog.json", "the catalog", id="another-spelling"),
    ],
)
def test_output_never_replaces_what_the_run_reads(project: Path, target: str, role: str) -> None:
    # A report written over the catalog (or any input) loses the file and passes the next run.
    (project / "README.md").write_text("```sh\nnotes list\n```\n", encoding="utf-8")
    (project / "docs").mkdir()
    before = snapshot(project.parent)
    result = run_cli(["validate", "--format", "json", "--output", target], cwd=project)
    assert "Traceback" not in result.stderr, result.stderr[-1500:]
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"--output {target} would replace {role}" in result.stderr
    assert result.stdout == ""
    assert changes(before, snapshot(project.parent)) == set(), "nothing is written"


def test_merge_output_never_replaces_a_report_it_merges(project: Path) -> None:
    base = _merge_args(project)
    shard = Path(base[-1])
    text = shard.read_text(encoding="utf-8")
    result = run_cli([*base, "--output", str(shard)], cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "would replace a report being merged" in result.stderr
    assert shard.read_text(encoding="utf-8") == text


def test_a_diff_never_replaces_the_catalog_it_fixes(project: Path) -> None:
    catalog = project / "catalog.json"
    text = catalog.read_text(encoding="utf-8")
    result = run_cli(["validate", "--diff", "--output", "catalog.json"], cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "would replace the catalog" in result.stderr
    assert catalog.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("command", ["validate", "report-merge"])
def test_output_into_a_missing_directory_creates_it(project: Path, command: str) -> None:
    """CI writes reports into folders such as ``reports/`` that a fresh clone does not have."""
    base = ["validate"] if command == "validate" else _merge_args(project)
    result = run_cli([*base, "--format", "json", "--output", "reports/ci/eg.json"], cwd=project)
    assert "Traceback" not in result.stderr, result.stderr[-1500:]
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout == ""
    written = json.loads((project / "reports" / "ci" / "eg.json").read_text(encoding="utf-8"))
    assert written["format"] == "exampleguard.report/v1"


def test_output_to_a_fifo_writes_into_it_or_refuses_but_never_replaces_it(project: Path) -> None:
    """Root in a CI container must not turn ``--output /dev/stdout``-like special files into
    regular files; a FIFO in the project stands in for them."""
    fifo = project / "report.pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        result = run_cli(["validate", "--format", "json", "--output", "report.pipe"], cwd=project)
        chunks = []
        while True:
            try:
                block = os.read(reader, 65536)
            except BlockingIOError:
                break
            if not block:
                break
            chunks.append(block)
    finally:
        os.close(reader)
    assert "Traceback" not in result.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode), "the FIFO was replaced by a regular file"
    if result.returncode == 2:
        assert "report.pipe" in result.stderr
    else:
        assert result.returncode == 1, result.stderr
        assert json.loads(b"".join(chunks))["format"] == "exampleguard.report/v1"
