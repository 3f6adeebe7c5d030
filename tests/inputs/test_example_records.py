"""Example records and their origins: any span of an example maps to its region in the file.

A region is checked against the file's own text: the characters from its start to its end
(inclusive) must be exactly the offending text as the file writes it — escapes, a line-ending
backslash, a multi-line string and all. Nothing is hard-coded but the example and the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from exampleguard._catalogfile import load_catalog
from exampleguard._config import load_config
from exampleguard._diagnostics import Location, Span
from exampleguard._pipeline import load_inputs, run
from exampleguard._report.build import located
from exampleguard._sources import SOURCES, ExampleList, ExampleRecord, Examples
from exampleguard._sources.catalog import CatalogOrigin, catalog_examples
from tests.support.project import make_project, run_cli


def region_text(text: str, location: Location) -> str:
    """The characters of ``text`` a location's region covers (its end inclusive)."""
    assert location.line is not None
    assert location.column is not None
    assert location.end_line is not None
    assert location.end_column is not None
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: location.line - 1]) + location.column - 1
    end = sum(len(line) for line in lines[: location.end_line - 1]) + location.end_column
    return text[start:end]


def json_catalog(command: str, *, ascii_only: bool = True) -> str:
    data = {
        "format": "exampleguard.catalog/v1",
        "program": "notes",
        "dialect": "click",
        "tools": [{"id": "notes.list", "command": ["list"], "examples": [{"command": command}]}],
    }
    return json.dumps(data, indent=2, ensure_ascii=ascii_only) + "\n"


def toml_catalog(command_line: str) -> str:
    """A TOML catalog whose one example is written as ``command_line`` (a TOML key/value)."""
    return (
        'format = "exampleguard.catalog/v1"\nprogram = "notes"\ndialect = "click"\n\n'
        '[[tools]]\nid = "notes.list"\ncommand = ["list"]\n\n'
        f"[[tools.examples]]\n{command_line}\n"
    )


@dataclass(frozen=True)
class Case:
    """An example written into a catalog, a stretch of its text, and how the file writes it."""

    kind: str
    text: str
    """The catalog file's text."""
    stretch: str
    """The stretch of the example (as decoded) to locate; its first occurrence."""
    written: str
    """The stretch as the file writes it."""


CASES = [
    pytest.param(
        Case("json", json_catalog("notes list --format yaml"), "yaml", "yaml"),
        id="json: plain",
    ),
    pytest.param(
        Case("json", json_catalog('notes list --format "yaml"'), '"yaml"', '\\"yaml\\"'),
        id="json: escaped quotes",
    ),
    pytest.param(
        Case("json", json_catalog('notes add "déjà" --recurse'), "--recurse", "--recurse"),
        id="json: after unicode escapes",
    ),
    pytest.param(
        Case("json", json_catalog('notes add "déjà" x'), '"déjà"', '\\"d\\u00e9j\\u00e0\\"'),
        id="json: unicode escapes inside",
    ),
    pytest.param(
        Case("json", json_catalog("notes add 😀 x"), "😀", "\\ud83d\\ude00"),
        id="json: a surrogate pair is one character",
    ),
    pytest.param(
        Case("json", json_catalog("notes add 😀 x", ascii_only=False), "😀 x", "😀 x"),
        id="json: an unescaped astral character",
    ),
    pytest.param(
        Case("json", json_catalog("notes add a\\\\b --x"), "a\\\\b", "a\\\\\\\\b"),
        id="json: escaped backslashes",
    ),
    pytest.param(
        Case(
            "toml",
            toml_catalog('command = "notes list --format \\"yaml\\""'),
            '"yaml"',
            '\\"yaml\\"',
        ),
        id="toml: basic string with escapes",
    ),
    pytest.param(
        Case(
            "toml",
            toml_catalog("command = 'notes list --format \"yaml\"'"),
            '"yaml"',
            '"yaml"',
        ),
        id="toml: literal string",
    ),
    pytest.param(
        Case(
            "toml",
            toml_catalog('command = """\nnotes list \\\n    --format yaml"""'),
            "list --format",
            "list \\\n    --format",
        ),
        id="toml: multi-line string across a line-ending backslash",
    ),
    pytest.param(
        Case(
            "toml",
            toml_catalog("command = '''\nnotes add 'two\nlines' --x'''"),
            "'two\nlines'",
            "'two\nlines'",
        ),
        id="toml: multi-line literal string across a newline",
    ),
    pytest.param(
        Case(
            "toml",
            toml_catalog('command = """notes add \\u00e9t\\u00e9 \\"q\\""""'),
            'été "q"',
            '\\u00e9t\\u00e9 \\"q\\"',
        ),
        id="toml: multi-line basic string with escapes",
    ),
]


def _record(tmp_path: Path, case: Case) -> ExampleRecord:
    path = tmp_path / f"catalog.{case.kind}"
    path.write_text(case.text, encoding="utf-8")
    (record,) = catalog_examples(load_catalog(path, path.name))
    return record


@pytest.mark.parametrize("case", CASES)
def test_a_span_maps_to_exactly_its_text_in_the_file(tmp_path: Path, case: Case) -> None:
    record = _record(tmp_path, case)
    start = record.text.index(case.stretch)
    location = record.location(Span(start, start + len(case.stretch)))
    assert location.file == f"catalog.{case.kind}"
    assert location.key == "tools[0].examples[0].command"
    assert region_text(case.text, location) == case.written


@pytest.mark.parametrize("case", CASES)
def test_every_single_character_maps_to_its_own_text(tmp_path: Path, case: Case) -> None:
    """Character by character, the regions follow one another through the file's text."""
    record = _record(tmp_path, case)
    start = record.text.index(case.stretch)
    pieces = [
        region_text(case.text, record.location(Span(offset, offset + 1)))
        for offset in range(start, start + len(case.stretch))
    ]
    joined = "".join(pieces)
    # A line-ending backslash belongs to no character: it is what lies between two of them.
    assert joined == case.written.replace("\\\n    ", "")


@pytest.mark.parametrize("case", CASES)
def test_the_whole_example_is_located_at_its_string(tmp_path: Path, case: Case) -> None:
    record = _record(tmp_path, case)
    location = record.location()
    assert location.line is not None
    assert location.column is not None
    line = case.text.splitlines()[location.line - 1]
    assert line[location.column - 1 :].startswith(("'", '"'))
    assert (location.end_line, location.end_column) == (None, None)


def test_a_record_knows_its_tool_index_text_and_address(tmp_path: Path) -> None:
    make_project(
        tmp_path,
        [
            {"id": "notes.a", "command": ["a"], "examples": [{"command": "notes a"}]},
            {"id": "notes.b", "command": ["b"], "examples": [{"command": "notes b 1"}] * 2},
        ],
        counts=False,
    )
    loaded = load_catalog(tmp_path / "catalog.json", "catalog.json")
    examples = catalog_examples(loaded)
    assert [(r.tool, r.index, r.text, r.address) for r in examples] == [
        ("notes.a", 0, "notes a", "notes.a[0]"),
        ("notes.b", 0, "notes b 1", "notes.b[0]"),
        ("notes.b", 1, "notes b 1", "notes.b[1]"),
    ]
    assert len(examples) == 3
    # The examples of one tool share one origin: a record costs a reference to it.
    first, second = examples.of_tool(1)
    assert first.origin is second.origin
    assert isinstance(first.origin, CatalogOrigin)
    assert examples.of_tool(7) == ()
    assert [examples.count(position) for position in (0, 1, 7)] == [1, 2, 0]


def test_two_tools_with_one_id_keep_their_examples_apart(tmp_path: Path) -> None:
    twin = {"id": "notes.a", "command": ["a"], "examples": [{"command": "notes a"}]}
    make_project(tmp_path, [twin, {**twin, "command": ["b"]}], counts=False)
    examples = catalog_examples(load_catalog(tmp_path / "catalog.json", "catalog.json"))
    assert [len(examples.of_tool(position)) for position in (0, 1)] == [1, 1]
    keys = [record.location().key for record in examples]
    assert keys == ["tools[0].examples[0].command", "tools[1].examples[0].command"]


def test_examples_of_two_sources_merge_tool_by_tool() -> None:
    class Origin:
        file = "doc.md"
        kind = "markdown"

        def address(self, index: int) -> str:
            return f"doc.md:{index}"

        def location(self, index: int, span: Span | None = None) -> Location:
            return Location(self.file, index, span.start + 1 if span is not None else None)

    origin = Origin()
    ours = ExampleList([(ExampleRecord("t.a", 0, "t a", origin),), ()])
    theirs = ExampleList([(), (ExampleRecord(None, 42, "t b", origin),), ()])
    merged = ours.merge(theirs)
    assert len(merged) == 2
    assert merged.positions == 3
    assert [r.text for r in merged] == ["t a", "t b"]
    assert [r.address for r in merged.of_tool(0)] == ["doc.md:0"]
    assert [r.address for r in merged.of_tool(1)] == ["doc.md:42"]
    assert ours.merge(Examples()) is ours
    assert Examples().merge(theirs) is theirs


def test_the_catalog_the_docs_and_the_help_text_are_registered_sources() -> None:
    assert [source.name for source in SOURCES] == ["catalog", "docs", "help_examples"]
    # Only the help text comes with the tree, which is loaded after the others are read.
    assert [source.reads_tree for source in SOURCES] == [False, False, True]


ESCAPED_CHOICE = {
    "id": "notes.list",
    "command": ["list"],
    "parameters": [
        {"name": "tag", "flags": ["--tag"]},
        {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
    ],
    # Escapes before the offending word and inside it: the JSON file writes \"yaml\".
    "examples": [{"command": 'notes list --tag "a\\"b" --format "yaml"'}],
}


def test_a_diagnostic_region_covers_the_offending_word_as_written(tmp_path: Path) -> None:
    """Through the real pipeline: the region of a bad choice written with escaped quotes."""
    make_project(tmp_path, [ESCAPED_CHOICE])
    text = (tmp_path / "catalog.json").read_text(encoding="utf-8")
    evaluation = run(load_inputs(load_config(None, tmp_path)))
    (found,) = [d for d in evaluation.diagnostics if d.code == "bad-choice"]
    # The check stage leaves lines and columns to the report builder.
    assert found.location is None
    location = located(found)
    assert location is not None
    assert region_text(text, location) == '\\"yaml\\"'
    assert location.end_line == location.line


def test_sarif_and_json_regions_cover_the_offending_word_as_written(tmp_path: Path) -> None:
    """What CI sees: SARIF's region (end exclusive) and the JSON location (end inclusive)."""
    make_project(tmp_path, [ESCAPED_CHOICE])
    text = (tmp_path / "catalog.json").read_text(encoding="utf-8")
    sarif = run_cli(["validate", "--format", "sarif"], cwd=tmp_path)
    assert sarif.returncode == 1, sarif.stderr
    (result,) = [
        r for r in json.loads(sarif.stdout)["runs"][0]["results"] if r["ruleId"] == "bad-choice"
    ]
    region = result["locations"][0]["physicalLocation"]["region"]
    written = region_text(
        text,
        Location(
            "catalog.json",
            region["startLine"],
            region["startColumn"],
            end_line=region["endLine"],
            end_column=region["endColumn"] - 1,
        ),
    )
    assert written == '\\"yaml\\"'
    report = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    (entry,) = [d for d in json.loads(report.stdout)["diagnostics"] if d["code"] == "bad-choice"]
    where = entry["location"]
    located = Location(
        entry["file"],
        where["line"],
        where["column"],
        end_line=where["end_line"],
        end_column=where["end_column"],
    )
    assert region_text(text, located) == '\\"yaml\\"'
