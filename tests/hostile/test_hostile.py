"""Hostile inputs across every file kind, through the real CLI.

Each case starts from one of two small, valid projects (checked by ``test_each_base_passes``) and
plants one hostile thing: a huge, deep, oddly encoded or oddly typed file, a file that is really
a directory, a FIFO or a symlink loop, or a tree module that misbehaves when imported. Every case
names the exit code and the diagnostic code a user must see. Whatever the input:

* the run ends (bounded by a timeout: a FIFO or a forking tree module must not hang it),
* nothing prints a ``Traceback``,
* a machine format's stdout is a JSON report (exit 0/1) or empty (exit 2),
* and every file of the project is byte-identical afterwards (hashed before and after; symlinks by
  their target, FIFOs by their kind, bytecode caches of the imported tree module aside).

``tests/hostile/test_malformed.py`` covers the plainly malformed files (bad syntax, unknown or
missing keys, wrong formats); the cases here are the hostile ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from exampleguard._documents import MAX_FILE_BYTES
from tests.support.cases import collected_cases, workers
from tests.support.project import (
    REPOSITORY,
    _environment,
    app_project_files,
    assert_unusable_report,
    run_cli,
)
from tests.support.unguarded import UNGUARDED

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"

# -- the two projects every case starts from ------------------------------------------------------

SAMPLE_CATALOG: dict[str, Any] = json.loads((SAMPLE / "catalog.json").read_text(encoding="utf-8"))
SAMPLE_TREE: dict[str, Any] = json.loads((SAMPLE / "notes.tree.json").read_text(encoding="utf-8"))

NOTES_CONFIG = 'catalog = "catalog.json"\ntree = "notes.tree.json"\n'
NOTES_CATALOG = json.dumps(SAMPLE_CATALOG, indent=2, ensure_ascii=False) + "\n"
NOTES_TREE = json.dumps(SAMPLE_TREE, indent=2) + "\n"
NOTES_COUNTS = """\
{
  "format": "exampleguard.counts/v1",
  "tools": 2,
  "examples": 3,
  "contract_validated": 3,
  "dry_run_eligible": 2,
  "dry_run_narrowed": 1,
  "excluded": 1
}
"""
NOTES_DISPOSITION = """\
# Reviewed in issue 12.
[[disposition]]
tool = "notes.delete"
example = 1
reason_code = "needs-fixture"
reason = "Deleting by tag needs a notes database with tagged rows; none is shipped."
reviewer = "a-reviewer"
evidence = ["issue 12"]
command = "notes rm --tag draft --format json"
"""
NOTES_EXCLUSIONS = """\
[[exclusion]]
path = ["export"]
reason = "Export writes every note to stdout in bulk; agents read notes one by one instead."
reviewer = "a-reviewer"
"""

NOTES_CATALOG_TOML = """\
format = "exampleguard.catalog/v1"
program = "notes"

[[tools]]
id = "notes.delete"
command = ["delete"]
aliases = [["rm"]]
summary = "Delete notes by id or by tag"
parameters = [{name = "ids", positional = true, type = "integer", nargs = -1}]
constraints = {require_one_of = [["ids", "tag", "all"]], mutually_exclusive = [["ids", "all"]]}
dry_run = {flag = "--dry-run", reviewed = true, evidence = "delete --dry-run lists and exits"}
examples = [
  {command = "notes delete 3 4 --dry-run"},
  {command = "notes rm --tag draft --format json"},
]

[[tools]]
id = "notes.add"
command = ["add"]
examples = [{command = "notes add 'Buy milk' --priority 2"}]
"""
TOML_CONFIG = NOTES_CONFIG.replace("catalog.json", "catalog.toml")


def toml_catalog(text: str) -> dict[str, Content]:
    return {"exampleguard.toml": TOML_CONFIG, "catalog.toml": text}


class Fifo:
    """A named pipe nobody writes to: opening it for reading blocks forever."""


class Directory:
    """An empty directory where a file is expected."""


@dataclass(frozen=True)
class Symlink:
    """A symbolic link to ``target`` (relative to the link's folder, or absolute)."""

    target: str


Content = str | bytes | Callable[[], bytes] | Fifo | Directory | Symlink

BASES: dict[str, dict[str, Content]] = {
    "notes": {
        "exampleguard.toml": NOTES_CONFIG,
        "catalog.json": NOTES_CATALOG,
        "notes.tree.json": NOTES_TREE,
        "exampleguard-counts.json": NOTES_COUNTS,
        "dispositions/notes.delete.toml": NOTES_DISPOSITION,
        "dispositions/exclusions.toml": NOTES_EXCLUSIONS,
    },
    "app": {**app_project_files()},
}


# -- building the hostile variants -----------------------------------------------------------------


def edit(text: str, old: str, new: str) -> str:
    """``text`` with the one occurrence of ``old`` replaced (the case is wrong if it is absent)."""
    assert text.count(old) == 1, f"{old!r} must occur exactly once"
    return text.replace(old, new)


def catalog_with(change: Callable[[dict[str, Any]], None]) -> str:
    data = json.loads(NOTES_CATALOG)
    change(data)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def set_example(command: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["tools"][1]["examples"][0]["command"] = command

    return change


def padded(text: str, size: int) -> Callable[[], bytes]:
    """``text`` followed by spaces up to exactly ``size`` bytes (built when the case runs)."""

    def build() -> bytes:
        raw = text.encode("utf-8")
        assert len(raw) <= size
        return raw + b" " * (size - len(raw))

    return build


def nested(opening: str, closing: str, depth: int) -> str:
    return opening * depth + closing * depth


def module(source: str, *, timeout: float = 20) -> dict[str, Content]:
    """The ``app`` project whose tree module runs ``source`` before defining the command."""
    files = app_project_files(source, timeout=timeout)
    return {name: files[name] for name in ("exampleguard.toml", "app_module.py")}


HUGE_INTEGER = "9" * 5000
DEEP = 200_000
DEEP_OBJECT = '{"a": ' * DEEP + "1" + "}" * DEEP

# A tree module that leaves a process behind: the import itself finishes at once. The pid is
# recorded so the test can stop it afterwards.
# Through libc, below the import guard's audit hook (which refuses os.fork and writes): the
# process handling must hold where the guard is bypassed.
FORKS_GRANDCHILD = (
    UNGUARDED
    + """
import os, time
pid = fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
write_file("grandchild.pid", str(pid))
"""
)


IGNORES_SIGTERM = """
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(300)
"""


@dataclass(frozen=True)
class Case:
    id: str
    exit: int
    code: str | None
    files: Mapping[str, Content] = field(default_factory=dict)
    base: str = "notes"
    message: str = ""
    args: tuple[str, ...] = ("validate", "--format", "json")
    timeout: float = 60
    alternatives: tuple[tuple[int, str | None], ...] = ()
    """Other outcomes the contract allows (where it does not pin down one)."""
    created: tuple[str, ...] = ()
    """Files the case's own tree module creates (not exampleguard's writes)."""


MIB = 1024 * 1024

CASES = [
    # -- limits: huge text is a diagnostic, never a slow or unbounded run ----------------------
    Case(
        "example-of-100k-characters",
        1,
        "example-too-long",
        {"catalog.json": catalog_with(set_example("notes add " + "x" * 100_000))},
        message="the limit is 4096",
    ),
    Case(
        "example-of-a-million-open-substitutions",
        1,
        "example-too-long",
        {"catalog.json": catalog_with(set_example("notes add " + "$(" * 500_000))},
    ),
    Case(
        "catalog-of-10-mb-whitespace",
        2,
        "file-invalid",
        {"catalog.json": lambda: b" \n\t" * (10 * MIB // 3)},
        message="catalog.json:",
    ),
    Case(
        "catalog-padded-with-10-mb-whitespace",
        0,
        None,
        {"catalog.json": padded(NOTES_CATALOG, 10 * MIB)},
    ),
    Case(
        "catalog-exactly-at-the-size-limit",
        0,
        None,
        {"catalog.json": padded(NOTES_CATALOG, MAX_FILE_BYTES)},
    ),
    Case(
        "catalog-one-byte-over-the-size-limit",
        2,
        "file-unreadable",
        {"catalog.json": padded(NOTES_CATALOG, MAX_FILE_BYTES + 1)},
        message="catalog.json is larger than the",
    ),
    Case(
        "config-one-byte-over-the-size-limit",
        2,
        "file-unreadable",
        {"exampleguard.toml": padded(NOTES_CONFIG, MAX_FILE_BYTES + 1)},
        message="exampleguard.toml is larger than the",
    ),
    # -- a TOML catalog ---------------------------------------------------------------------------
    Case("catalog-toml-with-a-bom", 0, None, toml_catalog("\ufeff" + NOTES_CATALOG_TOML)),
    Case(
        "catalog-toml-with-cr-only-line-endings",
        2,
        "file-invalid",
        toml_catalog(NOTES_CATALOG_TOML.replace("\n", "\r")),
        message="catalog.toml",
    ),
    Case(
        "catalog-toml-example-with-an-escaped-nul",
        1,
        "parse-error",
        toml_catalog(NOTES_CATALOG_TOML.replace("'Buy milk'", "'Buy\\u0000milk'")),
    ),
    Case(
        "catalog-toml-with-deep-inline-tables",
        2,
        "file-invalid",
        toml_catalog(
            NOTES_CATALOG_TOML.replace(
                'program = "notes"', "x = " + "{a=" * 50_000 + "1" + "}" * 50_000
            )
        ),
        message="nested too deeply",
    ),
    Case(
        "catalog-toml-with-a-duplicate-tool-key",
        2,
        "file-invalid",
        toml_catalog(NOTES_CATALOG_TOML.replace('id = "notes.add"', 'id = "notes.add"\nid = "x"')),
        message="catalog.toml:",
    ),
    # -- encodings ------------------------------------------------------------------------------
    Case("catalog-with-a-bom", 0, None, {"catalog.json": "\ufeff" + NOTES_CATALOG}),
    Case("config-with-a-bom", 0, None, {"exampleguard.toml": "\ufeff" + NOTES_CONFIG}),
    Case(
        "disposition-with-a-bom",
        0,
        None,
        {"dispositions/notes.delete.toml": "\ufeff" + NOTES_DISPOSITION},
    ),
    Case(
        "catalog-with-two-boms",
        2,
        "file-invalid",
        {"catalog.json": "\ufeff\ufeff" + NOTES_CATALOG},
        message="catalog.json:1:",
    ),
    Case(
        "catalog-in-utf-16",
        2,
        "file-unreadable",
        {"catalog.json": NOTES_CATALOG.encode("utf-16")},
        message="catalog.json is not UTF-8",
    ),
    Case(
        "catalog-mixing-utf-8-and-latin-1",
        2,
        "file-unreadable",
        {
            "catalog.json": edit(NOTES_CATALOG, "Add a note", "Ajoute une note é").encode()
            + b"\n".join([b"", "caf\xe9".encode("latin-1")])
        },
        message="catalog.json is not UTF-8",
    ),
    Case(
        "exclusions-in-latin-1",
        2,
        "file-unreadable",
        {
            "dispositions/exclusions.toml": NOTES_EXCLUSIONS.replace("bulk", "b\xfclk").encode(
                "latin-1"
            )
        },
        message="dispositions/exclusions.toml is not UTF-8",
    ),
    Case(
        "config-in-latin-1",
        2,
        "file-unreadable",
        {"exampleguard.toml": ("# r\xe9sum\xe9\n" + NOTES_CONFIG).encode("latin-1")},
        message="exampleguard.toml is not UTF-8",
    ),
    # -- NUL bytes and control characters -------------------------------------------------------
    Case(
        "catalog-with-a-raw-nul-in-a-string",
        2,
        "file-invalid",
        {"catalog.json": edit(NOTES_CATALOG, "Add a note", "Add a\x00note")},
        message="catalog.json:",
    ),
    Case(
        "catalog-example-with-an-escaped-nul",
        1,
        "parse-error",
        {"catalog.json": catalog_with(set_example("notes add 'a\x00b' --priority 2"))},
    ),
    Case(
        "config-with-a-raw-nul",
        2,
        "file-invalid",
        {"exampleguard.toml": NOTES_CONFIG + "# \x00\n"},
        message="exampleguard.toml:3:",
    ),
    Case(
        "counts-with-a-nul-after-the-object",
        2,
        "file-invalid",
        {"exampleguard-counts.json": NOTES_COUNTS + "\x00"},
        message="exampleguard-counts.json:",
    ),
    # -- line endings ---------------------------------------------------------------------------
    Case(
        "catalog-with-cr-only-line-endings",
        0,
        None,
        {"catalog.json": NOTES_CATALOG.replace("\n", "\r")},
    ),
    Case(
        "config-with-cr-only-line-endings",
        2,
        "file-invalid",
        {"exampleguard.toml": NOTES_CONFIG.replace("\n", "\r")},
        message="not valid TOML",
    ),
    Case(
        "records-with-crlf-line-endings",
        0,
        None,
        {
            "dispositions/notes.delete.toml": NOTES_DISPOSITION.replace("\n", "\r\n"),
            "dispositions/exclusions.toml": NOTES_EXCLUSIONS.replace("\n", "\r\n"),
        },
    ),
    # -- nesting: never a RecursionError -------------------------------------------------------
    Case(
        "catalog-of-200k-nested-brackets",
        2,
        "file-invalid",
        {"catalog.json": nested("[", "]", DEEP)},
        message="nested too deeply",
    ),
    Case(
        "catalog-unknown-key-200k-deep",
        2,
        "file-invalid",
        {
            "catalog.json": edit(
                NOTES_CATALOG, '"program": "notes",', f'"x": {nested("[", "]", DEEP)},'
            )
        },
        message="nested too deeply",
    ),
    Case(
        "tree-snapshot-200k-deep",
        2,
        "file-invalid",
        {"notes.tree.json": edit(NOTES_TREE, '"program": "notes",', f'"x": {DEEP_OBJECT},')},
        message="nested too deeply",
    ),
    Case(
        "counts-200k-deep",
        2,
        "file-invalid",
        {
            "exampleguard-counts.json": edit(
                NOTES_COUNTS, '"tools": 2', f'"tools": {nested("[", "]", DEEP)}'
            )
        },
        message="nested too deeply",
    ),
    Case(
        "config-with-deep-inline-tables",
        2,
        "file-invalid",
        {
            "exampleguard.toml": NOTES_CONFIG
            + "x = "
            + "{a = " * 50_000
            + "1"
            + " }" * 50_000
            + "\n"
        },
        message="nested too deeply",
    ),
    Case(
        "disposition-with-deep-inline-tables",
        2,
        "file-invalid",
        {
            "dispositions/notes.delete.toml": NOTES_DISPOSITION
            + "x = "
            + "{a=" * 50_000
            + "1"
            + "}" * 50_000
            + "\n"
        },
        message="nested too deeply",
    ),
    Case(
        "exclusions-with-100k-nested-arrays",
        2,
        "file-invalid",
        {
            "dispositions/exclusions.toml": NOTES_EXCLUSIONS
            + "x = "
            + nested("[", "]", 100_000)
            + "\n"
        },
        message="nested too deeply",
    ),
    # -- duplicate keys -------------------------------------------------------------------------
    Case(
        "catalog-duplicate-key-in-a-parameter",
        2,
        "file-invalid",
        {
            "catalog.json": edit(
                NOTES_CATALOG, '"type": "integer",', '"type": "integer", "type": "string",'
            )
        },
        message="twice",
    ),
    Case(
        "tree-duplicate-key",
        2,
        "file-invalid",
        {
            "notes.tree.json": edit(
                NOTES_TREE, '"dialect": "click",', '"dialect": "click", "dialect": "argparse",'
            )
        },
        message="twice",
    ),
    Case(
        "counts-duplicate-key",
        2,
        "file-invalid",
        {
            "exampleguard-counts.json": edit(
                NOTES_COUNTS, '"excluded": 1', '"excluded": 1,\n  "excluded": 0'
            )
        },
        message="twice",
    ),
    Case(
        "config-duplicate-key",
        2,
        "file-invalid",
        {"exampleguard.toml": NOTES_CONFIG + 'catalog = "other.json"\n'},
        message="exampleguard.toml:3:",
    ),
    Case(
        "disposition-duplicate-key",
        2,
        "file-invalid",
        {"dispositions/notes.delete.toml": NOTES_DISPOSITION + "example = 0\n"},
        message="dispositions/notes.delete.toml:",
    ),
    # -- lone surrogates (unicode escapes that are not characters) ------------------------------
    Case(
        "catalog-example-with-a-lone-surrogate",
        1,
        "parse-error",
        {"catalog.json": edit(NOTES_CATALOG, "Buy milk", "Buy \\ud800 milk")},
    ),
    Case(
        "catalog-tool-id-with-a-lone-surrogate",
        2,
        "file-invalid",
        {"catalog.json": edit(NOTES_CATALOG, '"id": "notes.add"', '"id": "notes.\\udfff"')},
        message="tools[1].id",
    ),
    Case(
        "catalog-key-with-a-lone-surrogate",
        2,
        "file-invalid",
        {
            "catalog.json": edit(
                NOTES_CATALOG, '"program": "notes",', '"program": "notes", "\\ud83d": 1,'
            )
        },
        message="catalog.json:",
    ),
    Case(
        "tree-flag-with-a-lone-surrogate",
        2,
        "file-invalid",
        {"notes.tree.json": edit(NOTES_TREE, '"--profile"', '"--pro\\udc80file"')},
        message="notes.tree.json:",
    ),
    # -- formats and types that are almost right ------------------------------------------------
    Case(
        "catalog-format-with-a-trailing-space",
        2,
        "file-invalid",
        {
            "catalog.json": edit(
                NOTES_CATALOG, '"exampleguard.catalog/v1"', '"exampleguard.catalog/v1 "'
            )
        },
        message="expected 'exampleguard.catalog/v1'",
    ),
    Case(
        "counts-format-with-a-trailing-space",
        2,
        "file-invalid",
        {
            "exampleguard-counts.json": edit(
                NOTES_COUNTS, '"exampleguard.counts/v1"', '"exampleguard.counts/v1  "'
            )
        },
        message="expected 'exampleguard.counts/v1'",
    ),
    Case(
        "tree-format-with-a-leading-newline",
        2,
        "file-invalid",
        {
            "notes.tree.json": edit(
                NOTES_TREE, '"exampleguard.tree/v1"', '"\\nexampleguard.tree/v1"'
            )
        },
        message="expected 'exampleguard.tree/v1'",
    ),
    Case(
        "catalog-nargs-as-a-string",
        2,
        "file-invalid",
        {"catalog.json": edit(NOTES_CATALOG, '"nargs": -1', '"nargs": "-1"')},
        message="tools[0].parameters[0].nargs",
    ),
    Case(
        "catalog-boolean-as-a-string",
        2,
        "file-invalid",
        {
            "catalog.json": edit(
                NOTES_CATALOG, '"positional": true', '"positional": true, "multiple": "false"'
            )
        },
        message="tools[0].parameters[0].multiple",
    ),
    Case(
        "config-number-as-a-string",
        2,
        "config-invalid",
        {"exampleguard.toml": NOTES_CONFIG + 'tree_timeout = "5"\n'},
        message="exampleguard.toml:3:",
    ),
    Case(
        "config-boolean-as-a-string",
        2,
        "config-invalid",
        {"exampleguard.toml": NOTES_CONFIG + 'pytest = "true"\n'},
        message="exampleguard.toml:3:",
    ),
    Case(
        "tree-boolean-as-a-string",
        2,
        "file-invalid",
        {
            "notes.tree.json": edit(
                NOTES_TREE, '"runnable": false,', '"runnable": false, "hidden": "false",'
            )
        },
        message="commands[0].hidden",
    ),
    Case(
        "counts-negative",
        2,
        "file-invalid",
        {"exampleguard-counts.json": edit(NOTES_COUNTS, '"excluded": 1', '"excluded": -1')},
        message="excluded",
    ),
    Case(
        "counts-float-for-an-integer",
        2,
        "file-invalid",
        {"exampleguard-counts.json": edit(NOTES_COUNTS, '"tools": 2', '"tools": 2.0')},
        message="tools",
    ),
    Case(
        "counts-integer-of-5000-digits",
        2,
        "file-invalid",
        {"exampleguard-counts.json": edit(NOTES_COUNTS, '"tools": 2', f'"tools": {HUGE_INTEGER}')},
        message="exampleguard-counts.json",
    ),
    Case(
        "catalog-integer-of-5000-digits",
        2,
        "file-invalid",
        {"catalog.json": edit(NOTES_CATALOG, '"nargs": -1', f'"nargs": {HUGE_INTEGER}')},
        message="catalog.json",
    ),
    Case(
        "config-integer-of-5000-digits",
        2,
        "config-invalid",
        {"exampleguard.toml": NOTES_CONFIG + f"max_example_chars = {HUGE_INTEGER}\n"},
        message="exampleguard.toml",
        alternatives=((2, "file-invalid"),),
    ),
    Case(
        "disposition-negative-example-index",
        2,
        "file-invalid",
        {"dispositions/notes.delete.toml": edit(NOTES_DISPOSITION, "example = 1", "example = -1")},
        message="disposition[0].example",
    ),
    Case(
        "disposition-example-index-beyond-any-tool",
        1,
        "disposition-stale",
        {
            "dispositions/notes.delete.toml": edit(
                NOTES_DISPOSITION, "example = 1", "example = 9223372036854775807"
            )
        },
    ),
    Case(
        "disposition-tool-that-looks-like-a-path",
        1,
        "disposition-invalid",
        {
            "dispositions/notes.delete.toml": edit(
                NOTES_DISPOSITION, '"notes.delete"', '"../../etc/passwd"'
            )
        },
    ),
    Case(
        "tree-snapshot-with-an-empty-alias",
        2,
        "file-invalid",
        {"notes.tree.json": NOTES_TREE.replace('"rm"\n', '"rm"\n        ],\n        [\n', 1)},
        message="notes.tree.json",
    ),
    Case(
        "config-pyproject-whose-tool-is-not-a-table",
        2,
        "config-invalid",
        {"pyproject.toml": 'tool = 1\n\n[project]\nname = "notes"\n'},
        args=("validate", "--format", "json", "--config", "pyproject.toml"),
        message="pyproject.toml",
    ),
    Case(
        "config-counts-naming-the-catalog",
        2,
        "file-invalid",
        {"exampleguard.toml": NOTES_CONFIG + 'counts = "catalog.json"\n'},
        message="expected 'exampleguard.counts/v1'",
    ),
    # -- files that are not regular files --------------------------------------------------------
    Case(
        "disposition-file-that-is-a-directory",
        2,
        "file-unreadable",
        {"dispositions/more.toml": Directory()},
        message="dispositions/more.toml is a directory",
    ),
    Case(
        "exclusions-file-that-is-a-directory",
        2,
        "file-unreadable",
        {"dispositions/exclusions.toml": Directory()},
        message="dispositions/exclusions.toml",
    ),
    Case(
        "dispositions-folder-that-is-a-file",
        2,
        "file-unreadable",
        {
            "exampleguard.toml": NOTES_CONFIG + 'dispositions = "records"\n',
            "records": "[[disposition]]\n",
        },
        message="records is not a folder",
    ),
    Case(
        "symlink-loop-in-dispositions",
        2,
        "file-unreadable",
        {"dispositions/a.toml": Symlink("b.toml"), "dispositions/b.toml": Symlink("a.toml")},
        message="dispositions/a.toml",
    ),
    Case(
        "dangling-symlink-in-dispositions",
        2,
        "file-unreadable",
        {"dispositions/gone.toml": Symlink("nowhere.toml")},
        message="dispositions/gone.toml",
    ),
    Case(
        "counts-file-that-is-a-fifo",
        2,
        "file-unreadable",
        {"exampleguard-counts.json": Fifo()},
        message="exampleguard-counts.json",
        timeout=10,
    ),
    Case(
        "catalog-that-is-a-fifo",
        2,
        "file-unreadable",
        {"catalog.json": Fifo()},
        message="catalog.json is not a regular file\n",
        timeout=10,
    ),
    Case(
        "disposition-file-that-is-a-fifo",
        2,
        "file-unreadable",
        {"dispositions/pipe.toml": Fifo()},
        message="dispositions/pipe.toml",
        timeout=10,
    ),
    Case(
        "counts-symlinked-to-dev-zero",
        2,
        "file-unreadable",
        {"exampleguard-counts.json": Symlink("/dev/zero")},
        message="exampleguard-counts.json is not a regular file\n",
    ),
    # -- tree modules that misbehave while imported ---------------------------------------------
    Case(
        "module-forks-a-grandchild-that-lingers",
        0,
        None,
        module(FORKS_GRANDCHILD, timeout=10),
        base="app",
        created=("grandchild.pid",),
    ),
    Case(
        "module-writes-32-mb-to-stdout",
        0,
        None,
        module("import sys\nfor _ in range(512):\n    sys.stdout.write('x' * 65536)\n"),
        base="app",
    ),
    Case(
        "module-floods-stderr",
        0,
        None,
        module("import sys\nfor _ in range(20_000):\n    print('noisy', file=sys.stderr)\n"),
        base="app",
    ),
    Case(
        "module-changes-directory",
        0,
        None,
        module("import os\nos.chdir('/')\n"),
        base="app",
    ),
    Case(
        "module-clears-the-environment",
        0,
        None,
        module("import os\nos.environ.clear()\n"),
        base="app",
    ),
    Case(
        "module-calls-sys-exit-0-without-a-tree",
        2,
        "tree-unavailable",
        {"app_module.py": "import sys\nsys.exit(0)\n"},
        base="app",
        message="called sys.exit(0)",
    ),
    Case(
        "module-hangs",
        2,
        "tree-unavailable",
        module("import time\ntime.sleep(300)\n", timeout=1),
        base="app",
        message="did not finish importing within 1 seconds",
    ),
    Case(
        "module-ignores-sigterm-and-hangs",
        2,
        "tree-unavailable",
        module(IGNORES_SIGTERM, timeout=1),
        base="app",
        message="did not finish importing within 1 seconds",
    ),
    Case(
        "module-reads-stdin",
        2,
        "tree-unavailable",
        module("answer = input('Database password: ')\n"),
        base="app",
        message="EOFError",
    ),
    Case(
        "module-closes-every-inherited-descriptor",
        2,
        "tree-unavailable",
        module("import os\nos.closerange(3, 4096)\n"),
        base="app",
        message="click:app_module:cli",
    ),
    Case(
        "config-tree-timeout-infinite",
        2,
        "config-invalid",
        module("", timeout=float("inf")),
        base="app",
        message="tree_timeout",
        # An infinite timeout may also simply mean "no limit" for a module that imports at once.
        alternatives=((0, None),),
    ),
]


# -- running the cases -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    before: dict[str, tuple[str, ...]]
    after: dict[str, tuple[str, ...]]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float


def write_project(root: Path, case: Case) -> None:
    files = {**BASES[case.base], **case.files}
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Fifo):
            os.mkfifo(path)
        elif isinstance(content, Directory):
            path.mkdir()
        elif isinstance(content, Symlink):
            path.symlink_to(content.target)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_bytes(content.encode("utf-8", "surrogatepass"))
        else:
            path.write_bytes(content())


def fingerprint(root: Path) -> dict[str, tuple[str, ...]]:
    """Every entry under ``root`` without following links: files by hash, links by target."""
    found: dict[str, tuple[str, ...]] = {}

    def visit(folder: Path) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name == "__pycache__":
                    continue
                path = Path(entry.path)
                name = path.relative_to(root).as_posix()
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISLNK(mode):
                    found[name] = ("symlink", str(path.readlink()))
                elif stat.S_ISDIR(mode):
                    found[name] = ("directory",)
                    visit(path)
                elif stat.S_ISREG(mode):
                    digest = hashlib.sha256()
                    with path.open("rb") as handle:
                        while block := handle.read(1 << 20):
                            digest.update(block)
                    found[name] = ("file", digest.hexdigest())
                else:
                    found[name] = ("special", oct(stat.S_IFMT(mode)))

    visit(root)
    return found


def run_case(root: Path, case: Case) -> Outcome:
    write_project(root, case)
    before = fingerprint(root)
    started = time.monotonic()
    try:
        result = run_cli(list(case.args), cwd=root, timeout=case.timeout)
        returncode, stdout, stderr = result.returncode, result.stdout, result.stderr
    except subprocess.TimeoutExpired as expired:
        returncode = None
        stdout = (expired.stdout or b"").decode("utf-8", "replace")
        stderr = (expired.stderr or b"").decode("utf-8", "replace")
    seconds = time.monotonic() - started
    after = fingerprint(root)
    for name in case.created:
        after.pop(name, None)
    return Outcome(before, after, returncode, stdout, stderr, seconds)


def stop_grandchild(root: Path) -> None:
    """Stop the process a ``module-forks-...`` case left behind (this test started it)."""
    marker = root / "grandchild.pid"
    if marker.exists():
        pid = int(marker.read_text(encoding="utf-8"))
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[Outcome]]]:
    selected = collected_cases(request, Case)
    roots = {case.id: tmp_path_factory.mktemp(case.id) for case in selected}
    # The slow ones (bounded hangs, tree imports) start first, so they overlap with the rest.
    selected.sort(key=lambda case: not (case.timeout < 60 or case.base == "app"))
    with ThreadPoolExecutor(max_workers=workers(6)) as pool:
        futures = {case.id: pool.submit(run_case, roots[case.id], case) for case in selected}
        try:
            yield futures
        finally:
            for future in futures.values():
                future.exception()
            for root in roots.values():
                stop_grandchild(root)


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 40
    assert len({case.id for case in CASES}) == len(CASES)
    kinds = {case.id.split("-")[0] for case in CASES}
    assert kinds >= {"catalog", "config", "tree", "counts", "disposition", "exclusions", "module"}


@pytest.mark.parametrize("base", list(BASES))
def test_each_base_passes(tmp_path: Path, base: str) -> None:
    """The starting points are valid: every failure below comes from the one planted thing."""
    write_project(tmp_path, Case(f"base-{base}", 0, None, base=base))
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["ok"] is True


def codes_seen(outcome: Outcome) -> tuple[set[str], str]:
    """The diagnostic codes the user sees: from the JSON report, or from the stderr lines."""
    if outcome.returncode in (0, 1):
        report = json.loads(outcome.stdout)
        return {d["code"] for d in report["diagnostics"]}, json.dumps(report["diagnostics"])
    return set(), outcome.stderr


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_input(case: Case, outcomes: dict[str, Future[Outcome]]) -> None:
    outcome = outcomes[case.id].result()
    output = outcome.stdout + outcome.stderr
    assert outcome.returncode is not None, (
        f"the run did not end within {case.timeout:g} s (killed); output so far:\n{output[-2000:]}"
    )
    assert "Traceback" not in output, output[-1200:]
    accepted = [(case.exit, case.code), *case.alternatives]
    assert outcome.returncode in {code for code, _ in accepted}, (
        f"exit {outcome.returncode}, expected {case.exit}:\n{output[-3000:]}"
    )
    if outcome.returncode == 2:
        assert_unusable_report(outcome.stdout, case.args)
        expected = [code for exit_code, code in accepted if exit_code == 2]
        assert any(f": {code} " in outcome.stderr for code in expected if code), outcome.stderr
        assert case.message in outcome.stderr, outcome.stderr
    else:
        seen, shown = codes_seen(outcome)
        expected = [code for exit_code, code in accepted if exit_code == outcome.returncode]
        if outcome.returncode == 0:
            assert None in expected
            assert json.loads(outcome.stdout)["ok"] is True
        else:
            assert seen & set(expected), f"expected {expected}, saw {sorted(seen)}"
            assert case.message in shown, shown
    assert outcome.after == outcome.before, "an input file was changed, or a file was created"


def test_huge_inputs_are_refused_quickly(outcomes: dict[str, Future[Outcome]]) -> None:
    """Size limits bound the work: refusing a file over the limit costs about reading it once."""
    for name in ("catalog-one-byte-over-the-size-limit", "example-of-a-million-open-substitutions"):
        if name in outcomes:
            outcome = outcomes[name].result()
            assert outcome.returncode is not None
            assert outcome.seconds < 20, f"{name} took {outcome.seconds:.1f} s"


ENORMOUS_NARGS = 2**63
"""A count no command line could fill, small enough to be a plain JSON integer."""


@pytest.mark.parametrize("dialect", ["click", "argparse"])
def test_an_enormous_nargs_costs_no_more_than_the_words_given(tmp_path: Path, dialect: str) -> None:
    # The binder, the tool schema and argparse's patterns once built one item per declared
    # value: a hostile catalog's nargs took memory without bound. Run under an address-space
    # limit a dozen times what a run needs, the examples are judged, and fail, as a run with
    # nargs = 3 would.
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "notes",
        "dialect": dialect,
        "tools": [
            {
                "id": "notes.pair",
                "command": ["pair"],
                "summary": "Pair notes",
                "parameters": [
                    {"name": "ids", "positional": True, "nargs": ENORMOUS_NARGS},
                    {"name": "tag", "flags": ["--tag"], "nargs": ENORMOUS_NARGS},
                ],
                "examples": [
                    {"command": "notes pair 1 2"},
                    {"command": "notes pair --tag a b"},
                ],
            }
        ],
    }
    (tmp_path / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    done = subprocess.run(
        [
            "prlimit",
            f"--as={1536 * MIB}",
            sys.executable,
            "-m",
            "exampleguard",
            "validate",
            "--format",
            "json",
        ],
        cwd=tmp_path,
        env=_environment(None),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    failed = [example for example in report["examples"] if not example["ok"]]
    assert len(failed) == 2
    codes = {d["code"] for example in failed for d in example["diagnostics"]}
    assert "missing-value" in codes, codes
