"""Malformed inputs through the real CLI: exit 2, one clear message, no traceback, no writes.

Every case starts from the same small, valid project (checked by ``test_base_project_passes``)
and breaks exactly one thing: a file that does not parse, a wrong type, an unknown or missing
key, a wrong ``format``, a missing file, a tree that cannot be imported. SPEC section 6: the run
could not be evaluated (exit 2), the message names the file and the key or line, nothing goes to
stdout in a machine format, and no input file is touched.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cases import collected_cases, run_in_parallel
from tests.support.project import assert_unusable_report, run_cli

# -- the valid project every case starts from ----------------------------------------------------

BASE_CONFIG = 'catalog = "catalog.json"\n'

BASE_CATALOG = """\
{
  "format": "exampleguard.catalog/v1",
  "program": "notes",
  "dialect": "click",
  "tools": [
    {
      "id": "notes.delete",
      "command": ["delete"],
      "summary": "Delete notes by id",
      "parameters": [
        {"name": "ids", "positional": true, "type": "integer", "nargs": -1},
        {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"}
      ],
      "dry_run": {"flag": "--dry-run", "reviewed": true, "evidence": "delete --dry-run only lists"},
      "examples": [
        {"command": "notes delete 3 --dry-run", "description": "Preview deleting a note"},
        {"command": "notes delete 4 5"}
      ]
    }
  ]
}
"""

BASE_COUNTS = """\
{
  "format": "exampleguard.counts/v1",
  "tools": 1,
  "examples": 2,
  "contract_validated": 2,
  "dry_run_eligible": 2,
  "dry_run_narrowed": 1,
  "excluded": 0
}
"""

BASE_DISPOSITION = """\
# Reviewed in issue 12.
[[disposition]]
tool = "notes.delete"
example = 1
reason_code = "needs-fixture"
reason = "Deleting two notes needs a notes database with those rows; none is shipped."
reviewer = "a-reviewer"
evidence = ["issue 12"]
command = "notes delete 4 5"
"""

BASE_FILES: dict[str, str] = {
    "exampleguard.toml": BASE_CONFIG,
    "catalog.json": BASE_CATALOG,
    "exampleguard-counts.json": BASE_COUNTS,
    "dispositions/notes.delete.toml": BASE_DISPOSITION,
}

SNAPSHOT = {
    "format": "exampleguard.tree/v1",
    "program": "notes",
    "dialect": "click",
    "commands": [
        {"path": [], "runnable": False, "parameters": []},
        {
            "path": ["delete"],
            "runnable": True,
            "parameters": [
                {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
                {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"},
            ],
        },
    ],
}
SNAPSHOT_TEXT = json.dumps(SNAPSHOT, indent=2) + "\n"
CATALOG_WITHOUT_DIALECT = BASE_CATALOG.replace('  "dialect": "click",\n', "")
TREE_CONFIG = 'catalog = "catalog.json"\ntree = "{}"\n'


def edit(text: str, old: str, new: str) -> str:
    """``text`` with the one occurrence of ``old`` replaced (the case is wrong if it is absent)."""
    assert text.count(old) == 1, f"{old!r} must occur exactly once"
    return text.replace(old, new)


def catalog(old: str, new: str) -> dict[str, str | bytes]:
    return {"catalog.json": edit(BASE_CATALOG, old, new)}


def counts(old: str, new: str) -> dict[str, str | bytes]:
    return {"exampleguard-counts.json": edit(BASE_COUNTS, old, new)}


def disposition(old: str, new: str) -> dict[str, str | bytes]:
    return {"dispositions/notes.delete.toml": edit(BASE_DISPOSITION, old, new)}


def config(old: str, new: str) -> dict[str, str | bytes]:
    return {"exampleguard.toml": edit(BASE_CONFIG, old, new)}


def with_tree(spec: str, extra: dict[str, str] | None = None) -> dict[str, str | bytes]:
    """A project whose `tree` is ``spec`` (the catalog then needs no dialect), plus ``extra``."""
    return {
        "exampleguard.toml": TREE_CONFIG.format(spec),
        "catalog.json": CATALOG_WITHOUT_DIALECT,
        **(extra or {}),
    }


@dataclass(frozen=True)
class At:
    """``file:line:column`` of ``marker`` (or of ``inner`` inside it) in the written file.

    With ``column=False`` only ``file:line:`` is expected (parsers report the column where they
    noticed the problem, which is not always the first offending character).
    """

    file: str
    marker: str
    inner: str = ""
    column: bool = True

    def resolve(self, text: str) -> str:
        start = text.index(self.marker) + (self.marker.index(self.inner) if self.inner else 0)
        line = text.count("\n", 0, start) + 1
        col = start - (text.rfind("\n", 0, start) + 1) + 1
        return f"{self.file}:{line}:{col}" if self.column else f"{self.file}:{line}:"


@dataclass(frozen=True)
class DecoderAt:
    """``file:line:`` where this interpreter's JSON decoder stops in the written file.

    CPython 3.13 names a trailing comma itself; 3.11 and 3.12 the token after it.
    """

    file: str

    def resolve(self, text: str) -> str:
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            return f"{self.file}:{error.lineno}:"
        raise AssertionError(f"{self.file} is valid JSON")


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, str | bytes]
    expect: tuple[str | At | DecoderAt, ...]
    remove: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    args: tuple[str, ...] = ("validate", "--format", "json")


CASES = [
    # -- the catalog: syntax -----------------------------------------------------------------
    Case(
        "catalog-json-trailing-comma",
        catalog('{"command": "notes delete 4 5"}\n', '{"command": "notes delete 4 5"},\n'),
        (DecoderAt("catalog.json"), "not valid JSON"),
    ),
    Case(
        "catalog-json-unterminated-string",
        catalog('"summary": "Delete notes by id",', '"summary": "Delete notes by id,'),
        ("catalog.json:9:", "not valid JSON"),
    ),
    Case("catalog-empty-file", {"catalog.json": ""}, ("catalog.json:1:", "not valid JSON")),
    Case(
        "catalog-json-nan",
        catalog('"nargs": -1}', '"nargs": NaN}'),
        ("catalog.json:11:", "NaN"),
    ),
    Case(
        "catalog-json-duplicate-key",
        catalog('"program": "notes",', '"program": "notes", "program": "notes",'),
        (At("catalog.json", '"program": "notes", "program"', '"program"', column=False), "program"),
    ),
    Case(
        "catalog-not-utf8",
        {"catalog.json": BASE_CATALOG.encode().replace(b"notes by id", b"notes by id\xff")},
        ("catalog.json:9:37", "UTF-8"),
    ),
    Case("catalog-missing-file", {}, ("catalog.json", "does not exist"), remove=("catalog.json",)),
    Case(
        "catalog-is-a-directory",
        {},
        ("catalog.json", "directory"),
        remove=("catalog.json",),
        directories=("catalog.json",),
    ),
    Case(
        "catalog-top-level-array",
        {"catalog.json": "[]\n"},
        ("catalog.json:1:1", "top level must be an object"),
    ),
    # -- the catalog: format ------------------------------------------------------------------
    Case(
        "catalog-format-missing",
        catalog('  "format": "exampleguard.catalog/v1",\n', ""),
        ("catalog.json", "'format'", "exampleguard.catalog/v1"),
    ),
    Case(
        "catalog-format-wrong-version",
        catalog('"exampleguard.catalog/v1"', '"exampleguard.catalog/v2"'),
        (At("catalog.json", '"exampleguard.catalog/v2"'), "exampleguard.catalog/v2"),
    ),
    # -- the catalog: types (strict: no coercion) -----------------------------------------------
    Case(
        "catalog-string-for-integer",
        catalog('"reviewed": true,', '"reviewed": true, "expect_exit": "0",'),
        (At("catalog.json", '"expect_exit": "0"', '"0"'), "tools[0].dry_run.expect_exit"),
    ),
    Case(
        "catalog-string-for-boolean",
        catalog('"positional": true,', '"positional": "true",'),
        (At("catalog.json", '"positional": "true"', '"true"'), "tools[0].parameters[0].positional"),
    ),
    Case(
        "catalog-number-for-string",
        catalog('{"command": "notes delete 4 5"}', '{"command": 45}'),
        (At("catalog.json", '"command": 45', "45"), "tools[0].examples[1].command"),
    ),
    Case(
        "catalog-reviewed-not-literally-true",
        catalog('"reviewed": true', '"reviewed": "yes"'),
        (At("catalog.json", '"reviewed": "yes"', '"yes"'), "tools[0].dry_run.reviewed"),
    ),
    Case(
        "catalog-dialect-unknown",
        catalog('"dialect": "click"', '"dialect": "bash"'),
        (At("catalog.json", '"bash"'), "dialect"),
    ),
    Case(
        "catalog-flag-value-on-an-option-with-a-value",
        catalog('"nargs": -1}', '"nargs": -1, "flag_value": false}'),
        ("tools[0].parameters[0]", "flag_value applies to a boolean switch"),
    ),
    # -- the catalog: unknown keys ------------------------------------------------------------
    Case(
        "catalog-unknown-top-level-key",
        catalog('"program": "notes",', '"program": "notes",\n  "programme": "notes",'),
        (At("catalog.json", '"programme"'), "'programme'"),
    ),
    Case(
        "catalog-unknown-key-in-tool",
        catalog('"summary": "Delete', '"summmary": "Delete'),
        (At("catalog.json", '"summmary"'), "'summmary'", "tools[0]"),
    ),
    Case(
        "catalog-unknown-key-in-parameter",
        catalog('"type": "boolean"}', '"type": "boolean", "flag": "--dry-run"}'),
        (At("catalog.json", '"flag": "--dry-run"'), "'flag'", "tools[0].parameters[1]"),
    ),
    Case(
        "catalog-unknown-key-in-dry-run",
        catalog('"reviewed": true,', '"reviewed": true, "reviewd": true,'),
        (At("catalog.json", '"reviewd"'), "'reviewd'", "tools[0].dry_run"),
    ),
    # -- the catalog: missing keys ------------------------------------------------------------
    Case(
        "catalog-missing-program",
        catalog('  "program": "notes",\n', ""),
        ("catalog.json", "'program'"),
    ),
    Case(
        "catalog-missing-tools",
        {
            "catalog.json": '{"format": "exampleguard.catalog/v1", "program": "notes",'
            ' "dialect": "click"}\n'
        },
        ("catalog.json", "'tools'"),
    ),
    Case(
        "catalog-example-without-command",
        catalog('{"command": "notes delete 4 5"}', '{"description": "delete two"}'),
        ("catalog.json", "'command'", "tools[0].examples[1]"),
    ),
    Case(
        "catalog-dialect-missing-without-tree",
        {"catalog.json": CATALOG_WITHOUT_DIALECT},
        ("catalog.json", "dialect"),
    ),
    # -- a TOML catalog -------------------------------------------------------------------------
    Case(
        "catalog-toml-syntax",
        {
            "exampleguard.toml": 'catalog = "catalog.toml"\n',
            "catalog.toml": 'format = "exampleguard.catalog/v1"\nprogram = "notes\n',
        },
        ("catalog.toml:2:", "not valid TOML"),
    ),
    Case(
        "catalog-toml-wrong-type",
        {
            "exampleguard.toml": 'catalog = "catalog.toml"\n',
            "catalog.toml": 'format = "exampleguard.catalog/v1"\nprogram = 5\ndialect = "click"\n'
            "tools = []\n",
        },
        ("catalog.toml:2:11", "program"),
    ),
    # -- the tree -------------------------------------------------------------------------------
    Case(
        "tree-snapshot-format-missing",
        with_tree(
            "tree.json", {"tree.json": edit(SNAPSHOT_TEXT, '"format": "exampleguard.tree/v1",', "")}
        ),
        ("tree.json", "'format'", "exampleguard.tree/v1"),
    ),
    Case(
        "tree-snapshot-format-wrong",
        with_tree("tree.json", {"tree.json": edit(SNAPSHOT_TEXT, "tree/v1", "tree/v9")}),
        (At("tree.json", '"exampleguard.tree/v9"'), "exampleguard.tree/v9"),
    ),
    Case(
        "tree-snapshot-unknown-key",
        with_tree(
            "tree.json",
            {
                "tree.json": edit(
                    SNAPSHOT_TEXT, '"runnable": true', '"runnable": true, "runable": true'
                )
            },
        ),
        (At("tree.json", '"runable"'), "'runable'", "commands[1]"),
    ),
    Case(
        "tree-snapshot-wrong-type",
        with_tree(
            "tree.json", {"tree.json": edit(SNAPSHOT_TEXT, '"runnable": true', '"runnable": "yes"')}
        ),
        (At("tree.json", '"yes"'), "commands[1].runnable"),
    ),
    Case(
        "tree-snapshot-missing-file",
        with_tree("missing.tree.json"),
        ("missing.tree.json", "does not exist"),
    ),
    Case(
        "tree-spec-malformed",
        with_tree("click:only_a_module"),
        ("exampleguard.toml:2:", "click:MODULE:ATTR"),
    ),
    Case(
        "tree-module-missing",
        with_tree("click:no_such_module_eg:cli"),
        ("tree-unavailable", "no_such_module_eg", "not found"),
    ),
    Case(
        "tree-attribute-missing",
        with_tree("click:click_app:no_such_cli"),
        ("tree-unavailable", "click_app", "no_such_cli"),
    ),
    Case(
        "tree-factory-raises",
        with_tree(
            "argparse:broken_factory:build_parser",
            {"broken_factory.py": 'def build_parser():\n    raise RuntimeError("no database")\n'},
        ),
        ("tree-unavailable", "broken_factory", "RuntimeError: no database"),
    ),
    Case(
        "tree-object-is-not-a-tree",
        with_tree("click:plain_values:VALUE", {"plain_values.py": "VALUE = 42\n"}),
        ("tree-unavailable", "plain_values", "not a Click command"),
    ),
    # -- the counts file ------------------------------------------------------------------------
    Case(
        "counts-bad-json",
        counts('"excluded": 0\n', '"excluded": 0,\n'),
        (DecoderAt("exampleguard-counts.json"), "not valid JSON"),
    ),
    Case(
        "counts-string-for-integer",
        counts('"tools": 1', '"tools": "1"'),
        (At("exampleguard-counts.json", '"tools": "1"', '"1"'), "tools"),
    ),
    Case(
        "counts-unknown-key",
        counts('"excluded": 0', '"excluded": 0,\n  "skipped": 0'),
        (At("exampleguard-counts.json", '"skipped"'), "'skipped'"),
    ),
    Case(
        "counts-missing-key",
        counts(',\n  "excluded": 0', ""),
        ("exampleguard-counts.json", "'excluded'"),
    ),
    Case(
        "counts-format-missing",
        counts('"format": "exampleguard.counts/v1",\n', ""),
        ("exampleguard-counts.json", "'format'", "exampleguard.counts/v1"),
    ),
    Case(
        "counts-format-wrong",
        counts('"exampleguard.counts/v1"', '"exampleguard.count/v1"'),
        (At("exampleguard-counts.json", '"exampleguard.count/v1"'), "exampleguard.count/v1"),
    ),
    # -- reviewer records -----------------------------------------------------------------------
    Case(
        "disposition-bad-toml",
        disposition("example = 1\n", "example = 1 1\n"),
        (At("dispositions/notes.delete.toml", "example = 1 1", column=False), "not valid TOML"),
    ),
    Case(
        "disposition-unknown-key",
        disposition("reviewer =", "reviewr ="),
        (At("dispositions/notes.delete.toml", "reviewr"), "'reviewr'", "disposition[0]"),
    ),
    Case(
        "disposition-string-for-integer",
        disposition("example = 1", 'example = "1"'),
        (At("dispositions/notes.delete.toml", '"1"'), "disposition[0].example"),
    ),
    Case(
        "disposition-missing-reason-code",
        disposition('reason_code = "needs-fixture"\n', ""),
        ("dispositions/notes.delete.toml", "'reason_code'", "disposition[0]"),
    ),
    Case(
        "exclusions-path-not-a-list",
        {
            "dispositions/exclusions.toml": '[[exclusion]]\npath = "delete"\n'
            'reason = "Internal command, never offered to agents."\n'
        },
        (At("dispositions/exclusions.toml", '"delete"'), "exclusion[0].path"),
    ),
    # -- the configuration ----------------------------------------------------------------------
    Case(
        "config-bad-toml",
        config('catalog = "catalog.json"', 'catalog = "catalog.json'),
        ("exampleguard.toml:1:", "not valid TOML"),
    ),
    Case(
        "config-unknown-key",
        {"exampleguard.toml": BASE_CONFIG + 'catalogue = "catalog.json"\n'},
        ("exampleguard.toml:2:1", "'catalogue'"),
    ),
    Case(
        "config-string-for-integer",
        {"exampleguard.toml": BASE_CONFIG + 'max_example_chars = "5"\n'},
        ("exampleguard.toml:2:21", "max_example_chars"),
    ),
    Case(
        "config-missing-catalog",
        {"exampleguard.toml": "max_example_chars = 100\n"},
        ("exampleguard.toml", "'catalog'"),
    ),
]


# -- running the cases -----------------------------------------------------------------------------
#
# Each case is its own test, but the CLI processes of the selected cases run concurrently (they
# are independent projects); each test waits for its own result.


@dataclass(frozen=True)
class Outcome:
    texts: dict[str, str]
    before: dict[str, str]
    after: dict[str, str]
    result: subprocess.CompletedProcess[str]


def write_project(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in {**BASE_FILES, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def fingerprint(root: Path) -> dict[str, str]:
    """Hash of every file under ``root`` (bytecode caches of imported apps aside)."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def run_case(root: Path, case: Case) -> Outcome:
    write_project(root, case.files)
    for name in case.remove:
        (root / name).unlink()
    for name in case.directories:
        (root / name).mkdir()
    texts = {
        name: (root / name).read_text(encoding="utf-8", errors="replace")
        for name in {**BASE_FILES, **case.files}
        if (root / name).is_file()
    }
    before = fingerprint(root)
    result = run_cli(list(case.args), cwd=root)
    return Outcome(texts, before, fingerprint(root), result)


@pytest.fixture(scope="module")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[Outcome]]]:
    selected = collected_cases(request, Case)
    with run_in_parallel(selected, run_case, tmp_path_factory.mktemp) as futures:
        yield futures


def check(outcome: Outcome, case: Case) -> None:
    result = outcome.result
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode == 2, output
    assert_unusable_report(result.stdout, case.args)
    for item in case.expect:
        text = item.resolve(outcome.texts[item.file]) if isinstance(item, At | DecoderAt) else item
        assert text in result.stderr, f"{text!r} not in stderr:\n{result.stderr}"
    assert outcome.after == outcome.before, "an input file was changed or a file was created"


def test_base_project_passes(tmp_path: Path) -> None:
    """The starting point is valid: every failure below comes from the one thing a case breaks."""
    write_project(tmp_path, {})
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["counts"]["dry_run_narrowed"] == 1


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 25
    assert len({case.id for case in CASES + COMMAND_CASES}) == len(CASES + COMMAND_CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_malformed_input_is_reported_cleanly(
    case: Case, outcomes: dict[str, Future[Outcome]]
) -> None:
    check(outcomes[case.id].result(), case)


# -- one malformed catalog, every command that reads it --------------------------------------------

BROKEN_TOOL = catalog('"summary": "Delete', '"summmary": "Delete')
BROKEN_TOOL_EXPECT = (At("catalog.json", '"summmary"'), "'summmary'")
COMMANDS = {
    "validate-text": ("validate",),
    "validate-sarif": ("validate", "--format", "sarif"),
    "counts-write": ("counts", "--write"),
    "schema-tool": ("schema", "tool", "notes.delete"),
    "dispositions-list": ("dispositions", "list", "--format", "json"),
    "dispositions-add": (
        "dispositions",
        "add",
        "notes.delete",
        "0",
        "--reason-code",
        "needs-fixture",
        "--reason",
        "Deleting needs a notes database with that row.",
    ),
    "dryrun-json": ("dryrun", "--format", "json"),
}
COMMAND_CASES = [
    Case(f"broken-tool-{name}", BROKEN_TOOL, BROKEN_TOOL_EXPECT, args=args)
    for name, args in COMMANDS.items()
]


@pytest.mark.parametrize("case", COMMAND_CASES, ids=list(COMMANDS))
def test_every_command_stops_on_a_malformed_catalog(
    case: Case, outcomes: dict[str, Future[Outcome]]
) -> None:
    check(outcomes[case.id].result(), case)
