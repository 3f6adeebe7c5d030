"""Fuzzing: any input gives diagnostics and an exit code, never an escaping exception.

Three layers, each bounded in the normal suite and run far longer behind ``@pytest.mark.slow``
(``pytest --run-slow``):

* the binder, on every fixture tree (Click, Typer, argparse) and on catalog-only contracts of
  both dialects, with random word lists: NUL, lone surrogates, unicode dashes and quotes,
  right-to-left marks, ``=`` and bundles glued to real flags, 100k-character words;
* every loader (catalog JSON and TOML, configuration, reviewer records, counts, tree snapshot)
  on random bytes and on mutated valid files: only ``SourceError``/``ConfigError`` may come out,
  never a ``RecursionError``, ``ValueError`` or anything else, whatever the nesting or number;
* the whole ``validate`` command on hypothesis-built projects (random catalogs, parameters,
  example strings, trees, reviewer records and counts): exit 0, 1 or 2, a JSON report on stdout
  for 0 and 1, nothing on stdout for 2, and never a traceback. In-process for volume, and as a
  real subprocess for a smaller sample.

``tests/tokens/test_tokenize.py`` fuzzes the tokenizer on its own; it is the first step of every
example here.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from exampleguard._bind import bind
from exampleguard._catalogfile import load_catalog
from exampleguard._codes import CODES
from exampleguard._config import ConfigError, load_config
from exampleguard._contract import Contract
from exampleguard._contractbuild import build_contract
from exampleguard._counts import load_counts
from exampleguard._dispositions.load import load_dispositions
from exampleguard._documents import SourceError, load_document
from exampleguard._pipeline import load_inputs
from exampleguard._report import located
from exampleguard._tree import TreeSpec, load_tree
from exampleguard.cli import main
from tests.support.project import FIXTURE_APPS, REPOSITORY, assert_unusable_report, run_cli

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
FIXTURE_SPECS = {
    "click": "click:click_app:cli",
    "typer": "typer:typer_app:app",
    "argparse": "argparse:argparse_app:build_parser",
}
BOUNDED = settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
# The opt-in runs (--run-slow); --hypothesis-profile=long raises them further.
LONG = settings(
    max_examples=max(5_000, settings().max_examples),
    suppress_health_check=list(HealthCheck),
)


# -- hostile text -------------------------------------------------------------------------------

HOSTILE_WORDS = [
    "",
    " ",
    "-",
    "--",
    "---",
    "-=",
    "--=",
    "=",
    "\x00",
    "a\x00b",
    "\ud800",
    "--tag\udfff",
    "\u2014verbose",  # EM DASH, as word processors turn "--verbose" into
    "\u2013tag",  # EN DASH
    "\u201cx\u201d",  # curly quotes
    "\u200f",  # RIGHT-TO-LEFT MARK
    "-\u200f-format",
    "\u202e--all",  # RIGHT-TO-LEFT OVERRIDE
    "\ufeff--all",
    "--\u0430ll",  # CYRILLIC SMALL LETTER A
    "\u0661",  # ARABIC-INDIC DIGIT ONE
    "\uff15",  # FULLWIDTH DIGIT FIVE
    "-\uff15",
    "-1",
    "-1e999",
    "1e999",
    "nan",
    "-nan",
    "0x10",
    "1_000",
    "\\",
    "'",
    '"',
    "$(",
    "-" + "v" * 10_000,
    "x" * 100_000,
    "--" + "x" * 100_000,
    "9" * 5_000,
]
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=16)


def glued(vocabulary: list[str]) -> st.SearchStrategy[str]:
    """A real word with something glued on: ``--tag=<x>``, ``-t<x>``, ``<word><x>``."""
    return st.builds(
        lambda word, joint, tail: f"{word}{joint}{tail}",
        st.sampled_from(vocabulary),
        st.sampled_from(["", "=", "==", " ", "\x00", "\u200f"]),
        st.one_of(st.sampled_from(vocabulary), ANY_TEXT, st.sampled_from(HOSTILE_WORDS)),
    )


def words_for(vocabulary: list[str]) -> st.SearchStrategy[list[str]]:
    word = st.one_of(
        st.sampled_from(vocabulary),
        st.sampled_from(vocabulary),
        st.sampled_from(HOSTILE_WORDS),
        ANY_TEXT,
        glued(vocabulary),
    )
    return st.builds(
        lambda program, rest: ([program] if program is not None else []) + rest,
        st.sampled_from(["notes", "notes", "notes", "", "\ud800", None]),
        st.lists(word, max_size=14),
    )


# -- the contracts the binder is fuzzed on --------------------------------------------------------

CATALOG_ONLY_TOOLS: list[dict[str, Any]] = [
    {
        "id": "notes.delete",
        "command": ["delete"],
        "aliases": [["rm"]],
        "parameters": [
            {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
            {"name": "tag", "flags": ["--tag", "-t"], "multiple": True},
            {"name": "all", "flags": ["--all", "-a"], "type": "boolean"},
            {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
            {"name": "limit", "flags": ["--limit"], "type": "integer", "min": 1, "max": 10},
            {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"},
        ],
        "constraints": {
            "require_one_of": [["ids", "tag", "all"]],
            "mutually_exclusive": [["ids", "all"]],
            "require_together": [["format", "limit"]],
        },
    },
    {
        "id": "notes.add",
        "command": ["add"],
        "parameters": [
            {"name": "text", "positional": True},
            {"name": "rest", "positional": True, "nargs": "*"},
            {"name": "color", "flags": ["--color"], "negation_flags": ["--no-color"]},
            {"name": "verbose", "flags": ["-v", "--verbose"], "count": True},
            {"name": "point", "flags": ["--point"], "nargs": 2, "type": "number"},
            {"name": "when", "flags": ["--when"], "type": "datetime", "formats": ["%Y-%m-%d"]},
            {"name": "id", "flags": ["--id"], "type": "uuid"},
            {"name": "editor", "flags": ["--editor"], "nargs": "?"},
            {"name": "help", "flags": ["--help", "-h"], "type": "boolean", "eager": True},
        ],
    },
    {"id": "notes.tags.rename", "command": ["tags", "rename"], "parameters": []},
]


def write_project(
    root: Path, catalog: dict[str, Any], config: str, extra: dict[str, str] | None = None
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "catalog.json").write_text(
        json.dumps(catalog, ensure_ascii=False), encoding="utf-8", errors="surrogatepass"
    )
    for name, text in (extra or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    path = root / "exampleguard.toml"
    path.write_text(config, encoding="utf-8")
    return path


def contract_of(root: Path, catalog: dict[str, Any], config: str) -> Contract:
    """The contract ``validate`` would bind against, built through the real loaders."""
    inputs = load_inputs(load_config(write_project(root, catalog, config), root), with_counts=False)
    return build_contract(inputs.catalog, inputs.tree)


@dataclass(frozen=True)
class Subject:
    contract: Contract
    vocabulary: list[str]


def vocabulary_of(contract: Contract) -> list[str]:
    """Every command word, flag and choice of the contract (and the program)."""
    words = {contract.program}
    pending = [contract.root]
    while pending:
        node = pending.pop()
        words.update(node.children)
        for parameter in node.accepted():
            words.update(parameter.all_flags)
            words.update(str(choice) for choice in parameter.choices or ())
        pending.extend(node.children.values())
    return sorted(word for word in words if word)


@pytest.fixture(scope="module")
def subjects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Subject]:
    found: dict[str, Subject] = {}
    empty = {"format": "exampleguard.catalog/v1", "program": "notes", "tools": []}
    for name, spec in FIXTURE_SPECS.items():
        root = tmp_path_factory.mktemp(f"tree-{name}")
        # The snapshot comes from the real adapters, through the real CLI.
        result = run_cli(
            ["tree", "--tree", spec, "--program", "notes", "--format", "json"], cwd=root
        )
        assert result.returncode == 0, result.stderr
        (root / "tree.json").write_text(result.stdout, encoding="utf-8")
        contract = contract_of(root, empty, 'catalog = "catalog.json"\ntree = "tree.json"\n')
        found[name] = Subject(contract, [])
    for dialect in ("click", "argparse"):
        root = tmp_path_factory.mktemp(f"catalog-only-{dialect}")
        catalog = {**empty, "dialect": dialect, "tools": CATALOG_ONLY_TOOLS}
        found[f"catalog-only-{dialect}"] = Subject(
            contract_of(root, catalog, 'catalog = "catalog.json"\n'), []
        )
    for name, subject in found.items():
        found[name] = Subject(subject.contract, vocabulary_of(subject.contract))
        assert len(found[name].vocabulary) > 10, name
    return found


SUBJECTS = [*FIXTURE_SPECS, "catalog-only-click", "catalog-only-argparse"]


def check_binding(subject: Subject, words: list[str]) -> None:
    binding = bind(subject.contract, words)
    assert len(binding.roles) == len(words)
    for problem in binding.problems:
        assert problem.code in CODES, problem
        assert problem.word is None or 0 <= problem.word < len(words), problem
        assert problem.offset >= 0
        assert "internal error" not in problem.message
    if binding.path is not None:
        assert all(isinstance(word, str) for word in binding.path)


@pytest.mark.parametrize("name", SUBJECTS)
def test_bind_never_raises(subjects: dict[str, Subject], name: str) -> None:
    subject = subjects[name]

    @BOUNDED
    @given(st.data())
    def run(data: st.DataObject) -> None:
        check_binding(subject, data.draw(words_for(subject.vocabulary), label="words"))

    run()


@pytest.mark.slow
@pytest.mark.parametrize("name", SUBJECTS)
def test_bind_never_raises_long(subjects: dict[str, Subject], name: str) -> None:
    subject = subjects[name]

    @LONG
    @given(st.data())
    def run(data: st.DataObject) -> None:
        check_binding(subject, data.draw(words_for(subject.vocabulary), label="words"))

    run()


@pytest.mark.parametrize("name", SUBJECTS)
@pytest.mark.parametrize(
    "words",
    [
        pytest.param(["notes", *HOSTILE_WORDS], id="every-hostile-word"),
        pytest.param(["notes", "delete", *HOSTILE_WORDS], id="hostile-words-after-a-command"),
        pytest.param(["notes", "add", "x", "--", *HOSTILE_WORDS], id="hostile-words-after-dashes"),
        # As many words as the longest example allowed by default (4096 characters) can hold.
        pytest.param(["notes", *(["delete"] * 600)], id="a-command-word-600-times"),
        pytest.param(["notes", "delete", *(["--tag"] * 680)], id="an-option-680-times"),
        pytest.param(["notes", "add", *(["-v"] * 1_360)], id="a-short-flag-1360-times"),
        pytest.param(["notes", *(["-"] * 2_000)], id="2000-dashes"),
        pytest.param([], id="no-words"),
    ],
)
def test_bind_survives_pinned_hostile_argv(
    subjects: dict[str, Subject], name: str, words: list[str]
) -> None:
    check_binding(subjects[name], words)


# -- loaders ------------------------------------------------------------------------------------


def _sample(name: str) -> str:
    return (SAMPLE / name).read_text(encoding="utf-8")


DISPOSITION = """\
# Reviewed in issue 12.
[[disposition]]
tool = "notes.delete"
example = 1
reason_code = "needs-fixture"
reason = "Deleting by tag needs a notes database with tagged rows; none is shipped."
evidence = ["issue 12"]
command = "notes rm --tag draft --format json"
"""
CATALOG_TOML = """\
format = "exampleguard.catalog/v1"
program = "notes"
dialect = "click"

[[tools]]
id = "notes.add"
command = ["add"]
parameters = [{name = "text", positional = true}, {name = "p", flags = ["--p"], type = "integer"}]
examples = [{command = "notes add 'Buy milk' --p 2"}]
"""
PYPROJECT = """\
[project]
name = "notes"

[tool.exampleguard]
catalog = "catalog.json"
max_example_chars = 100
bypass_flags = ["--yes"]
reason_codes = {needs-gpu = "The preview needs a GPU."}

[tool.exampleguard.dryrun]
timeout = 5.5
isolation = "env"
"""


@dataclass(frozen=True)
class Loader:
    """A file kind: where it lives, a valid seed, and the real function that loads it."""

    name: str
    seed: str
    load: Callable[[Path], object]


def _load_catalog(path: Path) -> object:
    return load_catalog(path, path.name)


def _load_config(path: Path) -> object:
    return load_config(path, path.parent)


def _load_records(path: Path) -> object:
    return load_dispositions(path.parent, path.parent.parent, "dispositions")


def _load_counts(path: Path) -> object:
    return load_counts(path, path.name)


def _load_tree(path: Path) -> object:
    return load_tree(TreeSpec("snapshot", path=path), root=path.parent, display=path.name)


def _load_document(path: Path) -> object:
    return load_document(path, path.name)


LOADERS = {
    "catalog-json": Loader("catalog.json", _sample("catalog.json").replace(
        '"program": "notes",', '"program": "notes", "dialect": "click",'), _load_catalog),
    "catalog-toml": Loader("catalog.toml", CATALOG_TOML, _load_catalog),
    "config": Loader("exampleguard.toml", _sample("exampleguard.toml"), _load_config),
    "pyproject": Loader("pyproject.toml", PYPROJECT, _load_config),
    "disposition": Loader("dispositions/notes.delete.toml", DISPOSITION, _load_records),
    "exclusions": Loader(
        "dispositions/exclusions.toml", _sample("dispositions/exclusions.toml"), _load_records
    ),
    "counts": Loader("exampleguard-counts.json", _sample("exampleguard-counts.json"), _load_counts),
    "tree-snapshot": Loader("notes.tree.json", _sample("notes.tree.json"), _load_tree),
    "document-json": Loader("any.json", _sample("notes.tree.json"), _load_document),
    "document-toml": Loader("any.toml", PYPROJECT, _load_document),
}  # fmt: skip


@pytest.fixture(scope="module")
def loader_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("loaders")


def load_only_cleanly(root: Path, kind: str, content: bytes) -> None:
    """Write ``content`` as a file of ``kind`` and load it: success, or one clear diagnostic."""
    loader = LOADERS[kind]
    folder = root / kind
    if folder.exists():
        shutil.rmtree(folder)
    path = folder / loader.name
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    try:
        loader.load(path)
    except (SourceError, ConfigError) as error:
        diagnostic = error.diagnostic
        assert diagnostic.code in {"file-invalid", "file-unreadable", "config-invalid"}, diagnostic
        assert diagnostic.message
        where = located(diagnostic)
        assert where is not None
        assert Path(loader.name).name in str(where.file), diagnostic
    # Anything else (RecursionError, ValueError, IndexError, ...) escapes and fails the test.


def test_every_seed_loads(loader_root: Path) -> None:
    """The mutations start from valid files: a failure below comes from the mutation."""
    for kind, loader in LOADERS.items():
        folder = loader_root / f"seed-{kind}"
        path = folder / loader.name
        path.parent.mkdir(parents=True)
        path.write_text(loader.seed, encoding="utf-8")
        loader.load(path)


Mutation = Callable[[bytes], bytes]


@st.composite
def mutation(draw: st.DrawFn, size: int) -> Mutation:
    """One edit of a file's bytes, at a drawn place."""
    at = draw(st.integers(0, size))
    width = draw(st.integers(0, 12))
    kind = draw(
        st.sampled_from(
            [
                "insert",
                "delete",
                "duplicate",
                "huge-number",
                "deep-arrays",
                "deep-tables",
                "bom",
                "cr",
                "nul",
                "surrogate-escape",
                "latin-1",
                "truncate",
            ]
        )
    )
    noise = draw(st.binary(min_size=1, max_size=8))
    depth = draw(st.sampled_from([2, 50, 500, 900, 990, 1_000, 3_000, 100_000]))
    replacements: dict[str, Mutation] = {
        "insert": lambda raw: raw[:at] + noise + raw[at:],
        "delete": lambda raw: raw[:at] + raw[at + width :],
        "duplicate": lambda raw: raw[:at] + raw[at : at + width] * 2 + raw[at + width :],
        "huge-number": lambda raw: raw[:at] + b"9" * 5_000 + raw[at + width :],
        "deep-arrays": lambda raw: raw[:at] + b"[" * depth + b"]" * depth + raw[at + width :],
        "deep-tables": lambda raw: raw[:at] + b"{a=" * depth + b"1" + b"}" * depth + raw[at:],
        "bom": lambda raw: b"\xef\xbb\xbf" + raw,
        "cr": lambda raw: raw.replace(b"\n", b"\r"),
        "nul": lambda raw: raw[:at] + b"\x00" + raw[at:],
        "surrogate-escape": lambda raw: raw[:at] + b"\\ud800" + raw[at:],
        "latin-1": lambda raw: raw[:at] + b"\xe9" + raw[at:],
        "truncate": lambda raw: raw[:at],
    }
    return replacements[kind]


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> bytes:
    raw = seed.encode("utf-8")
    for edit in draw(st.lists(mutation(len(raw)), min_size=1, max_size=3)):
        raw = edit(raw)
    return raw


KINDS = list(LOADERS)


def hostile_file(kind: str) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=400),
        mutated(LOADERS[kind].seed),
        mutated(LOADERS[kind].seed),
        mutated(LOADERS[kind].seed),
    )


@pytest.mark.parametrize("kind", KINDS)
def test_loaders_raise_only_their_own_errors(loader_root: Path, kind: str) -> None:
    @BOUNDED
    @given(hostile_file(kind))
    @example(b"")
    @example(b"\xef\xbb\xbf")
    @example(b"\x00" * 10)
    def run(content: bytes) -> None:
        load_only_cleanly(loader_root, kind, content)

    run()


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_loaders_raise_only_their_own_errors_long(loader_root: Path, kind: str) -> None:
    @LONG
    @given(hostile_file(kind))
    def run(content: bytes) -> None:
        load_only_cleanly(loader_root, kind, content)

    run()


def _json_in(kind: str, value: str) -> bytes:
    """The seed of ``kind`` with ``value`` (raw JSON or TOML text) as an extra top-level key."""
    seed = LOADERS[kind].seed
    if LOADERS[kind].name.endswith(".json"):
        return seed.replace("{", '{"zz": ' + value + ",", 1).encode()
    if kind in ("disposition", "exclusions", "pyproject"):
        # Before the first table header, so the key is top-level (or the [project] table's).
        head, _, tail = seed.partition("[")
        return (head + f"zz = {value}\n[" + tail).encode()
    return (f"zz = {value}\n" + seed).encode()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "value",
    [
        pytest.param("[" * 100_000 + "]" * 100_000, id="100k-nested-arrays"),
        pytest.param("9" * 5_000, id="5000-digit-integer"),
        pytest.param("-" + "9" * 4_301, id="4301-digit-negative-integer"),
        pytest.param("1" + "0" * 400 + ".5", id="400-digit-float"),
    ],
)
def test_pinned_hostile_values(loader_root: Path, kind: str, value: str) -> None:
    load_only_cleanly(loader_root, kind, _json_in(kind, value))


@pytest.mark.parametrize("kind", ["config", "disposition", "exclusions", "catalog-toml"])
def test_100k_nested_inline_tables(loader_root: Path, kind: str) -> None:
    load_only_cleanly(loader_root, kind, _json_in(kind, "{a=" * 100_000 + "1" + "}" * 100_000))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param("pyproject.toml", "tool = 1\n", id="pyproject-tool-is-a-number"),
        pytest.param("pyproject.toml", 'tool = "exampleguard"\n', id="pyproject-tool-is-a-string"),
        pytest.param("pyproject.toml", "[tool]\nexampleguard = [1]\n", id="table-is-an-array"),
        pytest.param("settings.toml", 'tool = ["x"]\ncatalog = "c.json"\n', id="other-tool-array"),
        pytest.param("settings.json", "[]", id="json-array"),
        pytest.param("settings.json", '{"tool": 1}', id="json-tool-number"),
    ],
)
def test_configuration_files_of_the_wrong_shape(loader_root: Path, name: str, text: str) -> None:
    folder = loader_root / f"config-shape-{name}-{abs(hash(text))}"
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(folder / name, folder)
    assert name in str(located(raised.value.diagnostic))


# Where a deep value sits: under a key the format does not have (reported as unknown), or as
# the value of a key whose type it breaks (reported with the value quoted).
TYPED_PLACES = {
    "catalog-json": '{"format": "exampleguard.catalog/v1", "program": "n", "dialect": "click", '
    '"tools": %s}',
    "counts": '{"format": "exampleguard.counts/v1", "tools": %s, "examples": 0, '
    '"contract_validated": 0, "dry_run_eligible": 0, "dry_run_narrowed": 0, "excluded": 0}',
    "tree-snapshot": '{"format": "exampleguard.tree/v1", "program": "n", "dialect": "click", '
    '"commands": %s}',
    "document-json": "%s",
}


@pytest.mark.parametrize("kind", list(TYPED_PLACES))
@pytest.mark.parametrize("place", ["unknown-key", "typed-value"])
@pytest.mark.parametrize("container", ["arrays", "objects"])
def test_json_nesting_right_at_the_parsers_limit(
    loader_root: Path, kind: str, place: str, container: str
) -> None:
    """Every depth around the recursion limit: the parser's, the locator's and pydantic's.

    The JSON parser stops at the recursion limit (counted from wherever it is called); the
    position index that builds a diagnostic's line and column, and the message that quotes the
    value, walk the same nesting again from deeper in the stack. No depth may make one raise.
    """
    limit = sys.getrecursionlimit()
    failures: dict[int, str] = {}
    for depth in range(max(2, limit - 300), limit + 5):
        if container == "arrays":
            value = "[" * depth + "]" * depth
        else:
            value = '{"a": ' * depth + "1" + "}" * depth
        if place == "typed-value":
            content = (TYPED_PLACES[kind] % value).encode()
        else:
            content = _json_in(kind, value)
        try:
            load_only_cleanly(loader_root, kind, content)
        except Exception as error:  # every escaping exception is the finding
            failures[depth] = f"{type(error).__name__}: {error}"[:200]
    assert failures == {}, f"{len(failures)} depth(s) raised, e.g. {next(iter(failures.items()))}"


# -- the whole validate command ---------------------------------------------------------------

PROGRAMS = ["notes", "notes", "n", "x-y", "\u00e9"]
TYPES = ["string", "integer", "number", "boolean", "path", "datetime", "uuid"]
FLAG_NAMES = ["--a", "-a", "--bee", "-b", "--no-a", "--c-d", "-1", "--", "-", "+p", "a", "--\u00e9"]


@st.composite
def plausible_parameter(draw: st.DrawFn, index: int) -> dict[str, Any]:
    """A parameter as a catalog author would write one (valid, or nearly)."""
    name = f"p{index}"
    if draw(st.booleans()):
        data: dict[str, Any] = {"name": name, "positional": True}
        data["type"] = draw(st.sampled_from(["string", "integer", "number", "path"]))
        if draw(st.booleans()):
            data["nargs"] = draw(st.sampled_from([-1, "?", 2]))
        return data
    flags = [f"--opt{index}", *draw(st.sampled_from([[], [f"-{'abcdefgh'[index % 8]}"]]))]
    data = {"name": name, "flags": flags}
    kind = draw(st.sampled_from(["value", "boolean", "negatable", "count", "choice"]))
    if kind == "boolean":
        data["type"] = "boolean"
    elif kind == "negatable":
        data["type"] = "boolean"
        data["negation_flags"] = [f"--no-opt{index}"]
    elif kind == "count":
        data["count"] = True
        data["type"] = "integer"
    elif kind == "choice":
        data["choices"] = ["text", "json", "1"]
    else:
        data["type"] = draw(st.sampled_from(["string", "integer", "number", "uuid", "datetime"]))
        data["multiple"] = draw(st.booleans())
        data["required"] = draw(st.booleans())
    return data


@st.composite
def parameter(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(["a", "b", "c", "ids", "help", "x"]) | ANY_TEXT)
    positional = draw(st.booleans())
    data: dict[str, Any] = {"name": name}
    if positional:
        data["positional"] = True
    else:
        data["flags"] = draw(st.lists(st.sampled_from(FLAG_NAMES), min_size=1, max_size=3))
    optional = {
        "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=2),
        "choices": st.lists(st.text(max_size=4) | st.integers(-3, 3), max_size=3),
        "required": st.booleans(),
        "multiple": st.booleans(),
        "nargs": st.integers(-2, 3) | st.sampled_from(["?", "*", "+", "..."]),
        "negation_flags": st.lists(st.sampled_from(FLAG_NAMES), max_size=2),
        "count": st.booleans(),
        "default": st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
        "eager": st.booleans(),
        "prompt": st.booleans(),
        "min": st.integers(-3, 3),
        "max": st.integers(-3, 3),
        "hidden": st.booleans(),
    }
    for key in draw(st.lists(st.sampled_from(sorted(optional)), max_size=3, unique=True)):
        data[key] = draw(optional[key])
    return data


def example_text(program: str, vocabulary: list[str]) -> st.SearchStrategy[str]:
    word = st.one_of(
        st.sampled_from(vocabulary or ["x"]),
        st.sampled_from(["1", "x", "'a b'", '"q"', "--", "-", "|", ";", "$(x)", "*", "~", "#"]),
        st.sampled_from(HOSTILE_WORDS[:30]),
        ANY_TEXT,
    )
    return st.one_of(
        st.builds(lambda rest: " ".join([program, *rest]), st.lists(word, max_size=8)),
        ANY_TEXT,
        st.just("x" * 5_000),
    )


@st.composite
def tool(
    draw: st.DrawFn, program: str, paths: list[list[str]], flags: list[str], index: int
) -> dict[str, Any]:
    words = st.sampled_from(["add", "delete", "tags", "rm", "-x", "notes"]) | ANY_TEXT
    command = draw(st.sampled_from(paths) if paths else st.lists(words, max_size=2))
    data: dict[str, Any] = {
        "id": draw(st.sampled_from([f"t{index}", f"t{index}", f"t{index}", "t0", "a/../b", ""])),
        "command": command,
    }
    if paths:
        parameters: list[
            dict[str, Any]
        ] = []  # the tree declares them; catalog overlays are fuzzed without a tree
    else:
        plausible = [draw(plausible_parameter(i)) for i in range(draw(st.integers(0, 5)))]
        parameters = draw(st.sampled_from([plausible, plausible, plausible])) or []
        if draw(st.integers(0, 3)) == 0:
            parameters = parameters + draw(st.lists(parameter(), min_size=1, max_size=2))
    names = [p["name"] for p in parameters] + ["zz"]
    vocabulary = [
        *command,
        *flags,
        *(f for p in parameters for f in [*p.get("flags", []), *p.get("negation_flags", [])]),
    ]
    if parameters:
        data["parameters"] = parameters
    if draw(st.booleans()):
        group = st.lists(st.sampled_from(names), max_size=3)
        data["constraints"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "require_one_of": st.lists(group, max_size=2),
                    "require_together": st.lists(group, max_size=2),
                    "mutually_exclusive": st.lists(group, max_size=2),
                },
            )
        )
    if draw(st.booleans()):
        data["safety"] = {"bypass_flags": draw(st.lists(st.sampled_from(FLAG_NAMES), max_size=2))}
    if draw(st.booleans()):
        data["dry_run"] = {
            "flag": draw(st.none() | st.sampled_from(FLAG_NAMES)),
            "reviewed": True,
            "evidence": "a reviewed preview",
        }
    data["examples"] = [
        {"command": text} for text in draw(st.lists(example_text(program, vocabulary), max_size=3))
    ]
    return data


TREES: dict[str, str] = {}


def tree_snapshot(name: str) -> str:
    """The fixture app's snapshot, extracted once by the real CLI."""
    if name not in TREES:
        with tempfile.TemporaryDirectory() as folder:
            # The sandbox's uid (a root caller's) reads the project as every user may.
            Path(folder).chmod(0o755)
            result = run_cli(
                ["tree", "--tree", FIXTURE_SPECS[name], "--program", "notes", "--format", "json"],
                cwd=Path(folder),
            )
        assert result.returncode == 0, result.stderr
        TREES[name] = result.stdout
    return TREES[name]


@dataclass(frozen=True)
class Project:
    catalog: dict[str, Any]
    config: str
    files: dict[str, str]


@st.composite
def project(draw: st.DrawFn) -> Project:
    tree = draw(st.sampled_from([None, None, "click", "argparse"]))
    files: dict[str, str] = {}
    config = 'catalog = "catalog.json"\n'
    paths: list[list[str]] = []
    flags: list[str] = []
    program = draw(st.sampled_from(PROGRAMS))
    if tree is not None:
        snapshot = tree_snapshot(tree)
        files["tree.json"] = snapshot
        config += 'tree = "tree.json"\n'
        commands = json.loads(snapshot)["commands"]
        paths = [command["path"] for command in commands]
        flags = sorted(
            {f for c in commands for p in c.get("parameters", []) for f in p.get("flags", [])}
        )
        program = "notes"
    tools = [draw(tool(program, paths, flags, i)) for i in range(draw(st.integers(0, 4)))]
    catalog: dict[str, Any] = {"format": "exampleguard.catalog/v1", "program": program}
    if tree is None or draw(st.booleans()):
        catalog["dialect"] = draw(st.sampled_from(["click", "argparse"]))
    catalog["tools"] = tools
    config += draw(
        st.sampled_from(["", "max_example_chars = 40\n", 'bypass_flags = ["--a", "-b"]\n'])
    )
    if draw(st.booleans()):
        ids = [t["id"] for t in tools] or ["t0"]
        records = []
        for _ in range(draw(st.integers(1, 3))):
            record = {
                "tool": draw(st.sampled_from(ids)),
                "example": draw(st.sampled_from([0, 1, 1, 2, -1])),
                "reason_code": draw(st.sampled_from(["needs-fixture", "needs-gpu", "x"])),
                "reason": draw(st.sampled_from(["A concrete reason, in words.", "todo", ""])),
                "command": draw(st.sampled_from(["", f"{program} x"])),
            }
            records.append(
                "[[disposition]]\n"
                + "".join(f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in record.items())
            )
        files["dispositions/records.toml"] = "\n".join(records)
    if draw(st.booleans()):
        path = draw(st.sampled_from(paths or [["x"]]))
        files["dispositions/exclusions.toml"] = (
            f"[[exclusion]]\npath = {json.dumps(path)}\nreason = "
            + json.dumps(draw(st.sampled_from(["Internal only, never for agents.", "n/a"])))
            + "\n"
        )
    if draw(st.booleans()):
        figures: dict[str, object] = {
            k: draw(st.integers(0, 3))
            for k in (
                "tools",
                "examples",
                "contract_validated",
                "dry_run_eligible",
                "dry_run_narrowed",
                "excluded",
            )
        }
        if draw(st.integers(0, 5)) == 0:
            figures["tools"] = draw(st.sampled_from([-1, 2.0, "2", None, 10**30]))
        files["exampleguard-counts.json"] = json.dumps(
            {"format": "exampleguard.counts/v1", **figures}
        )
    return Project(catalog, config, files)


@contextlib.contextmanager
def captured() -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """Swap in byte-backed stdout and stderr (``cli`` writes bytes to their buffers)."""
    out, err = io.BytesIO(), io.BytesIO()
    old = sys.stdout, sys.stderr
    wrappers = [
        io.TextIOWrapper(stream, encoding="utf-8", write_through=True) for stream in (out, err)
    ]
    sys.stdout, sys.stderr = wrappers
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = old
        for wrapper in wrappers:
            wrapper.flush()
            wrapper.detach()  # closing the wrapper would close the bytes it collected


def check_validate_result(code: int | None, stdout: bytes, stderr: bytes) -> None:
    output = stdout.decode("utf-8", "replace") + stderr.decode("utf-8", "replace")
    assert "Traceback" not in output, output[-3000:]
    assert code in (0, 1, 2), output[-3000:]
    if code == 2:
        assert_unusable_report(stdout.decode("utf-8"))
        assert b"exampleguard could not evaluate the run" in stderr
        return
    report = json.loads(stdout)
    assert report["format"] == "exampleguard.report/v1"
    assert report["ok"] is (code == 0)
    for diagnostic in report["diagnostics"]:
        assert diagnostic["code"] in CODES, diagnostic


@pytest.fixture(scope="module")
def validate_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("validate")


def validate_in_process(root: Path, generated: Project) -> None:
    if root.exists():
        shutil.rmtree(root)
    config = write_project(root, generated.catalog, generated.config, generated.files)
    with captured() as (out, err):
        code = main(["validate", "--format", "json", "--config", str(config)])
    event(f"exit {code}")
    check_validate_result(code, out.getvalue(), err.getvalue())


def test_validate_in_process_on_random_projects(validate_root: Path) -> None:
    @settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
    @given(project())
    def run(generated: Project) -> None:
        validate_in_process(validate_root / "p", generated)

    run()


@pytest.mark.slow
def test_validate_in_process_on_random_projects_long(validate_root: Path) -> None:
    @settings(max_examples=3_000, suppress_health_check=list(HealthCheck))
    @given(project())
    def run(generated: Project) -> None:
        validate_in_process(validate_root / "long", generated)

    run()


def validate_subprocess(root: Path, generated: Project, fmt: str) -> None:
    if root.exists():
        shutil.rmtree(root)
    config = write_project(root, generated.catalog, generated.config, generated.files)
    command = [sys.executable, "-m", "exampleguard", "validate", "--format", fmt]
    result = subprocess.run(
        [*command, "--config", str(config)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": f"{FIXTURE_APPS}:{REPOSITORY}", "NO_COLOR": "1"},
        capture_output=True,
        timeout=120,
        check=False,
    )
    if fmt == "json":
        check_validate_result(result.returncode, result.stdout, result.stderr)
    else:
        output = result.stdout + result.stderr
        assert b"Traceback" not in output, output[-3000:]
        assert result.returncode in (0, 1, 2), output[-3000:]


@pytest.mark.parametrize(("fmt", "runs"), [("json", 8), ("sarif", 3), ("junit", 3)])
def test_validate_cli_on_random_projects(validate_root: Path, fmt: str, runs: int) -> None:
    """The real command in a real process, for a smaller sample (each run starts Python)."""

    @settings(max_examples=runs, suppress_health_check=[HealthCheck.too_slow])
    @given(project())
    def run(generated: Project) -> None:
        validate_subprocess(validate_root / f"cli-{fmt}", generated, fmt)

    run()


@pytest.mark.slow
def test_validate_cli_on_random_projects_long(validate_root: Path) -> None:
    @settings(max_examples=300, suppress_health_check=list(HealthCheck))
    @given(project())
    def run(generated: Project) -> None:
        validate_subprocess(validate_root / "cli-long", generated, "json")

    run()
