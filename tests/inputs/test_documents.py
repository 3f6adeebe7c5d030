"""Positions in JSON and TOML files: every key path and every character of an example.

The expected line and column are never hard-coded: each test text carries unique markers, and
the expectation is where the marker is in the text (1-based line, column in characters, as an
editor shows them).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exampleguard._catalogfile as catalog_module
from exampleguard._catalogfile import _load_whole, load_catalog
from exampleguard._diagnostics import Span
from exampleguard._documents import (
    Document,
    SourceError,
    load_document,
    parse_document,
)
from exampleguard._jsonread import JsonArrayStream, NotStreamable
from exampleguard._report import diagnostic_entry, located
from exampleguard._sources.catalog import catalog_examples
from tests.support.project import make_project, run_cli


def position_of(text: str, marker: str, nth: int = 0) -> tuple[int, int]:
    """1-based (line, column) of the ``nth`` occurrence of ``marker`` in ``text``."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(marker, start + 1)
    line = text.count("\n", 0, start) + 1
    return line, start - (text.rfind("\n", 0, start) + 1) + 1


def parse(text: str, kind: str, display: str = "catalog") -> Document:
    return parse_document(text, Path(f"catalog.{kind}"), f"{display}.{kind}", kind)  # type: ignore[arg-type]


def where(document: Document, key: tuple[str | int, ...], *, at_key: bool) -> tuple[int, int]:
    location = document.location(key, at_key=at_key)
    assert location.line is not None, f"no position for {key}"
    assert location.column is not None
    return location.line, location.column


def value_at(data: object, key: tuple[str | int, ...]) -> object:
    for part in key:
        data = data[part]  # type: ignore[index]
    return data


# -- JSON ---------------------------------------------------------------------------------------

JSON_TEXT = """\
{
  "format": "exampleguard.catalog/v1", "program": "notes",
  "tools": [
    {"id": "T0", "command": ["zero"], "examples": [{"command": "E00"}]},
    {"id": "T1", "command": ["one"],
     "examples": []},
    {"id": "T2", "nested": [[1, 2], [3, {"deep": "DEEP"}]]},
    {
      "id": "T3",
      "com\\u006dand": ["three"],
      "examples": [
        {"command": "E30"},
        {"description": "é😀 wide characters before", "command": "E31"}
      ]
    }
  ],
  "x": -1.5e3, "y": [true, null, "Y2"], "z": {}
}
"""

JSON_CASES = [
    # (key path, marker of the value, marker of the key or None)
    (("tools", 3, "examples", 1, "command"), '"E31"', '"command": "E31"'),
    (("tools", 3, "examples", 0, "command"), '"E30"', '"command": "E30"'),
    (("tools", 0, "examples", 0, "command"), '"E00"', '"command": "E00"'),
    (("tools", 3, "id"), '"T3"', '"id": "T3"'),
    (("tools", 3, "command"), '["three"]', '"com\\u006dand"'),
    (("tools", 3), '{\n      "id": "T3"', None),
    (("tools", 1, "examples"), "[]", '"examples": []'),
    (("tools", 2, "nested", 1, 1, "deep"), '"DEEP"', '"deep"'),
    (("program",), '"notes"', '"program"'),
    (("x",), "-1.5e3", '"x"'),
    (("y", 2), '"Y2"', None),
    (("z",), "{}", '"z"'),
]


@pytest.mark.parametrize(
    ("key", "value", "key_marker"),
    JSON_CASES,
    ids=[".".join(map(str, case[0])) for case in JSON_CASES],
)
def test_json_positions(key: tuple[str | int, ...], value: str, key_marker: str | None) -> None:
    document = parse(JSON_TEXT, "json")
    assert where(document, key, at_key=False) == position_of(JSON_TEXT, value)
    expected_key = position_of(JSON_TEXT, key_marker or value)
    assert where(document, key, at_key=True) == expected_key


def test_json_positions_with_crlf_line_endings() -> None:
    text = JSON_TEXT.replace("\n", "\r\n")
    document = parse(text, "json")
    assert where(document, ("tools", 3, "examples", 1, "command"), at_key=False) == position_of(
        text, '"E31"'
    )


def test_json_location_names_the_key_path() -> None:
    location = parse(JSON_TEXT, "json").location(("tools", 3, "examples", 1, "command"))
    assert location.key == "tools[3].examples[1].command"
    assert location.file == "catalog.json"
    assert str(location).startswith("catalog.json:13:")


def test_a_path_missing_from_the_file_falls_back_to_its_nearest_ancestor() -> None:
    document = parse(JSON_TEXT, "json")
    missing = ("tools", 1, "examples", 0, "command")
    assert where(document, missing, at_key=True) == position_of(JSON_TEXT, '"examples": []')


# -- TOML ---------------------------------------------------------------------------------------

TOML_TEXT = """\
# [[tools]] in a comment is not a table
format = "exampleguard.catalog/v1"   # nor [[tools]] after a value
"program" = 'notes'

[[tools]]
id = "T0"
command = ["zero"]
summary = \"\"\"
[[tools]]
id = "fake"
\"\"\"
literal = '''
[[tools.examples]] \\ is not an escape here
'''

[[tools]]
id = "T1"
dry_run.flag = "F1"
dry_run . "evidence" = "EV1"

[tools.safety]
effect = "SAFE1"

[[tools.examples]]
command = "E10"

[[tools]]
id = "T2"
inline = { a = { b = ["B0", "B1"] }, c = "C2" }
array = [
  "A0", # a comment with ] in it
  [ "A10", 'A11' ],
]
examples = [
  { command = "E20" },
  { command = 'E21' },
]

[[tools]]
id = "T3"
command = ["three"]
"quoted.key" = "QK"

[tools.constraints]
require_one_of = [["R0", "R1"]]

[[tools.examples]]
command = "E30"

[[tools.examples]]
"command" = "E31"
description = "D31"
"""

TOML_CASES = [
    (("tools", 3, "examples", 1, "command"), '"E31"', '"command" = "E31"'),
    (("tools", 3, "examples", 1, "description"), '"D31"', 'description = "D31"'),
    (("tools", 3, "examples", 0, "command"), '"E30"', 'command = "E30"'),
    (("tools", 3, "examples", 1), '[[tools.examples]]\n"command"', None),
    (("tools", 3), '[[tools]]\nid = "T3"', None),
    (("tools", 3, "quoted.key"), '"QK"', '"quoted.key"'),
    (("tools", 3, "constraints", "require_one_of", 0, 1), '"R1"', None),
    (("tools", 3, "constraints"), "[tools.constraints]", None),
    (("tools", 0, "id"), '"T0"', 'id = "T0"'),
    (("tools", 0, "literal"), "'''\n[[tools.examples]]", "literal ="),
    (("tools", 1, "id"), '"T1"', 'id = "T1"'),
    (("tools", 1, "dry_run", "flag"), '"F1"', None),
    (("tools", 1, "dry_run", "evidence"), '"EV1"', None),
    (("tools", 1, "safety", "effect"), '"SAFE1"', 'effect = "SAFE1"'),
    (("tools", 1, "examples", 0, "command"), '"E10"', 'command = "E10"'),
    (("tools", 2, "inline", "a", "b", 1), '"B1"', None),
    (("tools", 2, "inline", "c"), '"C2"', 'c = "C2"'),
    (("tools", 2, "array", 1, 1), "'A11'", None),
    (("tools", 2, "examples", 1, "command"), "'E21'", "command = 'E21'"),
    (("program",), "'notes'", '"program"'),
    (("format",), '"exampleguard.catalog/v1"', "format ="),
]


def test_toml_text_is_what_the_cases_assume() -> None:
    data = parse(TOML_TEXT, "toml").data
    assert len(data["tools"]) == 4, "text inside strings and comments made no tables"
    assert data["tools"][0]["summary"] == '[[tools]]\nid = "fake"\n'
    assert data["tools"][1]["dry_run"] == {"flag": "F1", "evidence": "EV1"}
    assert data["tools"][3]["examples"][1]["command"] == "E31"


@pytest.mark.parametrize(
    ("key", "value", "key_marker"),
    TOML_CASES,
    ids=[".".join(map(str, case[0])) for case in TOML_CASES],
)
def test_toml_positions(key: tuple[str | int, ...], value: str, key_marker: str | None) -> None:
    document = parse(TOML_TEXT, "toml")
    assert where(document, key, at_key=False) == position_of(TOML_TEXT, value)
    if key_marker is not None:
        assert where(document, key, at_key=True) == position_of(TOML_TEXT, key_marker)


def test_toml_positions_with_crlf_line_endings() -> None:
    text = TOML_TEXT.replace("\n", "\r\n")
    document = parse(text, "toml")
    assert where(document, ("tools", 3, "examples", 1, "command"), at_key=False) == position_of(
        text, '"E31"'
    )
    assert where(document, ("tools", 2, "inline", "c"), at_key=False) == position_of(text, '"C2"')


# -- the same defect in a JSON and a TOML catalog -----------------------------------------------


def catalog_tools(bad: object) -> list[dict[str, object]]:
    return [
        {
            "id": f"notes.t{i}",
            "command": [f"t{i}"],
            "examples": [
                {"command": f"notes t{i}"},
                {"command": bad if i == 3 else f"notes t{i} x"},
            ],
        }
        for i in range(5)
    ]


def toml_catalog(tools: list[dict[str, object]]) -> str:
    lines = ['format = "exampleguard.catalog/v1"', 'program = "notes"', 'dialect = "click"']
    for tool in tools:
        lines += [
            "",
            "[[tools]]",
            f'id = "{tool["id"]}"',
            f"command = {json.dumps(tool['command'])}",
        ]
        for example in tool["examples"]:  # type: ignore[attr-defined]
            lines += ["[[tools.examples]]", f"command = {json.dumps(example['command'])}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind", ["json", "toml"])
def test_a_wrong_type_deep_in_a_catalog_names_key_line_and_column(
    tmp_path: Path, kind: str
) -> None:
    tools = catalog_tools(12345)
    if kind == "json":
        body = {"format": "exampleguard.catalog/v1", "program": "notes", "dialect": "click"}
        text = json.dumps({**body, "tools": tools}, indent=2)
    else:
        text = toml_catalog(tools)
    path = tmp_path / f"catalog.{kind}"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(SourceError) as raised:
        load_catalog(path, path.name)

    diagnostic = raised.value.diagnostic
    where = located(diagnostic)
    assert where is not None
    line, column = position_of(text, "12345")
    assert (where.line, where.column) == (line, column)
    assert where.file == path.name
    assert "tools[3].examples[1].command" in diagnostic.message


@pytest.mark.parametrize("kind", ["json", "toml"])
def test_every_loaded_example_keeps_its_position(tmp_path: Path, kind: str) -> None:
    tools = catalog_tools("notes t3 x")
    if kind == "json":
        body = {"format": "exampleguard.catalog/v1", "program": "notes", "dialect": "click"}
        text = json.dumps({**body, "tools": tools}, indent=2)
    else:
        text = toml_catalog(tools)
    path = tmp_path / f"catalog.{kind}"
    path.write_text(text, encoding="utf-8")

    loaded = load_catalog(path, path.name)

    records = list(catalog_examples(loaded))
    assert len(records) == sum(len(tool.examples) for tool in loaded.catalog.tools)
    for record in records:
        location = record.location()
        expected = position_of(text, json.dumps(record.text))
        assert (location.line, location.column) == expected, record.address


# -- characters inside strings ------------------------------------------------------------------

ESCAPED_JSON = (
    '{"a": "x\\"y\\u00e9\\ud83d\\ude00z\\\\w\\nv\\/Q",\n "b": "😀😀R", "c": "\\t\\u0041B"}'
)

JSON_STRING_CASES = [
    # (key, character offset in the decoded string, marker where it starts in the text)
    (("a",), 0, 'x\\"'),
    (("a",), 1, '\\"y'),
    (("a",), 2, "y\\u00e9"),
    (("a",), 3, "\\u00e9"),
    (("a",), 4, "\\ud83d"),
    (("a",), 5, "z\\\\"),
    (("a",), 6, "\\\\w"),
    (("a",), 7, "w\\n"),
    (("a",), 8, "\\nv"),
    (("a",), 9, "v\\/"),
    (("a",), 10, "\\/Q"),
    (("a",), 11, 'Q"'),
    (("b",), 2, "R"),
    (("c",), 1, "\\u0041"),
    (("c",), 2, 'B"'),
]


@pytest.mark.parametrize(
    ("key", "offset", "marker"),
    JSON_STRING_CASES,
    ids=[f"{case[0][0]}[{case[1]}]" for case in JSON_STRING_CASES],
)
def test_json_string_location_counts_escapes(
    key: tuple[str, ...], offset: int, marker: str
) -> None:
    document = parse(ESCAPED_JSON, "json")
    assert (
        value_at(document.data, key)
        == {
            "a": 'x"yé😀z\\w\nv/Q',
            "b": "😀😀R",
            "c": "\tAB",
        }[key[0]]
    )
    location = document.string_location(key, offset)
    assert (location.line, location.column) == position_of(ESCAPED_JSON, marker)
    assert location.key == key[0]


ESCAPED_TOML = (
    'a = "p\\"q\\u00e9\\U0001F600Z\\\\"\n'
    "b = 'lit\\n\\\"L'\n"
    'c = """\nline1\n  K\\t"""\n'
    "d = '''\nraw\\tE'''\n"
    'e = """notes delete \\\n    --tag x"""\n'
    'f = """notes delete \\\r\n    --all"""\n'
)

TOML_STRING_CASES = [
    (("a",), 1, '\\"q'),
    (("a",), 2, "q\\u00e9"),
    (("a",), 3, "\\u00e9"),
    (("a",), 4, "\\U0001F600"),
    (("a",), 5, "Z\\\\"),
    (("a",), 6, '\\\\"'),
    (("b",), 3, '\\n\\"L'),
    (("b",), 6, "\"L'"),
    (("b",), 7, "L'"),
    (("c",), 0, "line1"),
    (("c",), 6, "  K"),
    (("c",), 8, "K\\t"),
    (("c",), 9, '\\t"""'),
    (("d",), 0, "raw"),
    (("d",), 3, "\\tE"),
    (("d",), 5, "E'''"),
    # A line-ending backslash swallows the newline and the indentation after it.
    (("e",), 12, " \\\n"),
    (("e",), 13, "--tag"),
    (("e",), 19, 'x"""'),
    (("f",), 13, "--all"),
]


@pytest.mark.parametrize(
    ("key", "offset", "marker"),
    TOML_STRING_CASES,
    ids=[f"{case[0][0]}[{case[1]}]" for case in TOML_STRING_CASES],
)
def test_toml_string_location_counts_escapes(
    key: tuple[str, ...], offset: int, marker: str
) -> None:
    document = parse(ESCAPED_TOML, "toml")
    assert document.data == {
        "a": 'p"qé😀Z\\',
        "b": 'lit\\n\\"L',
        "c": "line1\n  K\t",
        "d": "raw\\tE",
        "e": "notes delete --tag x",
        "f": "notes delete --all",
    }
    location = document.string_location(key, offset)
    assert (location.line, location.column) == position_of(ESCAPED_TOML, marker)


def test_string_location_in_a_loaded_catalog_points_at_the_offending_word(tmp_path: Path) -> None:
    text = (
        '{"format": "exampleguard.catalog/v1", "program": "notes", "dialect": "click",\n'
        ' "tools": [{"id": "a", "command": [],\n'
        '   "examples": [{"command": "notes \\"d\\u00e9j\\u00e0\\" --recurse"}]}]}\n'
    )
    path = tmp_path / "catalog.json"
    path.write_text(text, encoding="utf-8")
    loaded = load_catalog(path, "catalog.json")
    command = loaded.catalog.tools[0].examples[0].command
    assert command == 'notes "déjà" --recurse'
    (record,) = catalog_examples(loaded)
    location = record.location(Span(command.index("--"), command.index("--") + 1))
    assert (location.line, location.column) == position_of(text, "--recurse")


# -- what the standard parsers accept but exampleguard must not ---------------------------------


def parse_error(text: str, kind: str = "json") -> SourceError:
    with pytest.raises(SourceError) as raised:
        parse(text, kind)
    return raised.value


@pytest.mark.parametrize(
    ("text", "first", "second"),
    [
        (
            '{\n  "program": "a",\n  "format": "f",\n  "program": "b"\n}',
            '"program": "a"',
            '"program": "b"',
        ),
        (
            '{"tools": [\n  {"id": "a",\n   "command": [],\n   "id": "b"}\n]}',
            '"id": "a"',
            '"id": "b"',
        ),
        ('{"a": {"x": 0},\n "b": {"x": 1,\n       "x": 2}}', '"x": 1', '"x": 2'),
    ],
    ids=["top-level", "in-a-tool", "nested-same-name-elsewhere"],
)
def test_duplicate_json_keys_are_an_error_located_in_their_object(
    text: str, first: str, second: str
) -> None:
    """The location is one of the two occurrences (the message says which key, "twice")."""
    diagnostic = parse_error(text).diagnostic
    assert diagnostic.code == "file-invalid"
    assert "twice" in diagnostic.message
    where = located(diagnostic)
    assert where is not None
    found = (where.line, where.column)
    assert found in {position_of(text, first), position_of(text, second)}


def test_the_same_key_in_two_objects_is_not_a_duplicate() -> None:
    document = parse('{"a": {"x": 1}, "b": {"x": 2}}', "json")
    assert document.data == {"a": {"x": 1}, "b": {"x": 2}}


def test_duplicate_toml_keys_are_an_error_with_a_line() -> None:
    text = 'program = "a"\nformat = "f"\nprogram = "b"\n'
    diagnostic = parse_error(text, "toml").diagnostic
    assert diagnostic.code == "file-invalid"
    where = located(diagnostic)
    assert where is not None
    assert where.line == 3


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_constants_that_are_not_json_are_rejected_with_a_position(constant: str) -> None:
    text = f'{{"format": "f",\n "tools": [{{"nargs": {constant}}}]}}'
    diagnostic = parse_error(text).diagnostic
    assert diagnostic.code == "file-invalid"
    assert constant.lstrip("-") in diagnostic.message
    where = located(diagnostic)
    assert where is not None
    assert where.line == 2


def test_non_utf8_bytes_are_reported_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_bytes(b'{"format": "f",\n "program": "n\xc3\xa9\xff"}')
    with pytest.raises(SourceError) as raised:
        load_document(path, "catalog.json")
    diagnostic = raised.value.diagnostic
    assert "UTF-8" in diagnostic.message
    where = located(diagnostic)
    assert where is not None
    # Line 2: ` "program": "né` is 15 characters (é is one character, two bytes).
    assert (where.line, where.column) == (2, 16)


def test_a_byte_order_mark_does_not_shift_positions(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text('\ufeff{"program": "notes"}', encoding="utf-8")
    document = load_document(path, "catalog.json")
    assert document.data == {"program": "notes"}
    assert where(document, ("program",), at_key=False) == (1, 13)


@pytest.mark.parametrize(
    ("text", "kind", "line"),
    [
        ('{\n  "a": 1,\n  "b": [1, 2,]\n}', "json", 3),
        ('{\n  "a": "unterminated\n}', "json", 2),
        ("a = 1\nb = [1, 2\nc = 3\n", "toml", 3),
        ("a = 1\n[[tools]\n", "toml", 2),
    ],
    ids=["json-trailing-comma", "json-unterminated", "toml-unclosed-array", "toml-bad-header"],
)
def test_syntax_errors_carry_the_line(text: str, kind: str, line: int) -> None:
    diagnostic = parse_error(text, kind).diagnostic
    assert diagnostic.code == "file-invalid"
    where = located(diagnostic)
    assert where is not None
    assert where.line == line


# -- large files --------------------------------------------------------------------------------

LARGE_TOOLS = 10_000  # two examples each: 20,000 examples
# Every JSON catalog is streamed whatever its size: a defect's report needs a few tools, the
# defect after the first, not twenty thousand examples.
SMALL_TOOLS = 40


def large_catalog(kind: str, count: int = LARGE_TOOLS) -> str:
    if kind == "json":
        tools = [
            {
                "id": f"notes.c{i}",
                "command": [f"c{i}"],
                "parameters": [{"name": "x", "flags": ["--x"], "type": "integer"}],
                "examples": [{"command": f"notes c{i} --x {j}"} for j in range(2)],
            }
            for i in range(count)
        ]
        catalog = {"format": "exampleguard.catalog/v1", "program": "notes", "dialect": "click"}
        return json.dumps({**catalog, "tools": tools}, indent=2)
    lines = ['format = "exampleguard.catalog/v1"', 'program = "notes"', 'dialect = "click"']
    for i in range(count):
        lines += ["[[tools]]", f'id = "notes.c{i}"', f'command = ["c{i}"]']
        lines += ["[[tools.parameters]]", 'name = "x"', 'flags = ["--x"]', 'type = "integer"']
        for j in range(2):
            lines += ["[[tools.examples]]", f'command = "notes c{i} --x {j}"']
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind", ["json", "toml"])
def test_a_20k_example_catalog_loads_and_indexes_in_linear_time(tmp_path: Path, kind: str) -> None:
    """Not a benchmark: a generous bound that a quadratic index would blow through.

    CPU time of this process is measured, so other load on the machine does not count. On a
    2-CPU container this takes about 1 s for JSON and 4 s for TOML (tomllib itself is pure
    Python); a quadratic position index would take minutes.
    """
    text = large_catalog(kind)
    path = tmp_path / f"catalog.{kind}"
    path.write_text(text, encoding="utf-8")
    last = LARGE_TOOLS - 1

    started = time.process_time()
    loaded = load_catalog(path, path.name)
    examples = catalog_examples(loaded)
    first = examples.of_tool(0)[0].location()
    final = examples.of_tool(last)[1].location()
    middle = examples.of_tool(last // 2)[1].location(Span(6, 7))
    elapsed = time.process_time() - started

    assert sum(len(tool.examples) for tool in loaded.catalog.tools) == 20_000
    assert (first.line, first.column) == position_of(text, '"notes c0 --x 0"')
    assert (final.line, final.column) == position_of(text, f'"notes c{last} --x 1"')
    assert (middle.line, middle.column) == position_of(text, f"c{last // 2} --x 1")
    assert elapsed < 10.0, f"loading and indexing took {elapsed:.2f} s of CPU"


# -- reading a JSON catalog one tool at a time ---------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(
    head=st.dictionaries(
        st.text(max_size=6).filter(lambda k: k != "tools"), JSON_VALUES, max_size=4
    ),
    tools=st.lists(JSON_VALUES, max_size=5),
    indent=st.sampled_from([None, 0, 2]),
    tools_first=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_the_streamed_items_are_what_json_loads_reads(
    head: dict[str, object], tools: list[object], indent: int | None, tools_first: bool
) -> None:
    document = {"tools": tools, **head} if tools_first else {**head, "tools": tools}
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    stream = JsonArrayStream(text, "tools")
    assert list(stream) == json.loads(text)["tools"]
    assert stream.head == head


@pytest.mark.parametrize(
    "text",
    [
        '{"tools": [{"id": "a", "id": "b"}]}',
        '{"tools": [], "program": "a", "program": "b"}',
        '{"tools": [], "tools": []}',
        '{"tools": [{"nargs": NaN}]}',
        '{"tools": [1, 2,]}',
        '{"tools": [1]} trailing',
        '{"tools": [1] "program": "a"}',
        '{"tools": [{"id": "a"}',
        '{"program": "a"}',
        '{"tools": {"id": "a"}}',
        '["tools"]',
        "{}",
        "",
    ],
    ids=[
        "duplicate-in-a-tool",
        "duplicate-at-the-top",
        "two-tools-arrays",
        "nan",
        "trailing-comma",
        "trailing-text",
        "missing-comma",
        "unterminated",
        "no-tools",
        "tools-not-an-array",
        "not-an-object",
        "empty-object",
        "empty-text",
    ],
)
def test_text_that_json_would_not_read_as_a_catalog_is_not_streamed(text: str) -> None:
    with pytest.raises(NotStreamable):
        list(JsonArrayStream(text, "tools"))


def test_a_streamed_catalog_equals_the_catalog_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = large_catalog("json").replace(
        '"type": "integer"', '"type": "integer", "choices": ["1", "2"]', 3
    )
    path = tmp_path / "catalog.json"
    path.write_text(text, encoding="utf-8")
    whole = _load_whole(parse_document(text, path, path.name, "json"))

    def not_read_whole(*_: object) -> None:
        raise AssertionError("a regular catalog was read whole")

    monkeypatch.setattr(catalog_module, "parse_document", not_read_whole)
    streamed = load_catalog(path, path.name)

    assert streamed.catalog == whole.catalog
    assert streamed.stated == whole.stated
    assert streamed.stated_keys(2, 0) == {"type", "choices"}
    assert streamed.stated_keys(3, 0) == {"type"}


@pytest.mark.parametrize(
    ("fragment", "replacement"),
    [
        ('"id": "notes.c7"', '"id": "notes.c7", "id": "again"'),
        ('"--x"', '"--x", NaN'),
        ('"id": "notes.c7"', '"id": "notes.c7", "extra": 1'),
        ('"id": "notes.c7"', '"id": ["notes.c7"]'),
        ('"format": "exampleguard.catalog/v1"', '"format": "exampleguard.catalog/v9"'),
    ],
    ids=["duplicate-key", "nan", "unknown-key", "wrong-type", "wrong-format"],
)
def test_a_defect_found_while_streaming_is_reported_exactly_as_when_read_whole(
    tmp_path: Path, fragment: str, replacement: str
) -> None:
    text = large_catalog("json", SMALL_TOOLS).replace(fragment, replacement, 1)
    assert replacement in text
    path = tmp_path / "catalog.json"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(SourceError) as streamed:
        load_catalog(path, path.name)
    with pytest.raises(SourceError) as whole:
        _load_whole(parse_document(text, path, path.name, "json"))

    # As reported: the two readings' documents are two objects, their places the same.
    assert diagnostic_entry(streamed.value.diagnostic) == diagnostic_entry(whole.value.diagnostic)
    location = located(streamed.value.diagnostic)
    assert location is not None
    assert location.line is not None
    assert location.line > 1 or "format" in replacement


# -- one record for a parameter that tools state identically ------------------------------------

LIMIT = {"name": "limit", "flags": ["--limit"], "type": "integer", "min": 1}


def _catalog_of(tmp_path: Path, tools: list[dict[str, object]]) -> Path:
    path = tmp_path / "catalog.json"
    catalog = {"format": "exampleguard.catalog/v1", "program": "notes", "tools": tools}
    path.write_text(json.dumps(catalog), encoding="utf-8")
    return path


def test_commands_stating_a_parameter_alike_share_one_record(tmp_path: Path) -> None:
    other = {**LIMIT, "min": 1.0}
    path = _catalog_of(
        tmp_path,
        [
            {"id": "a", "command": ["a"], "parameters": [LIMIT, LIMIT]},
            {"id": "b", "command": ["b"], "parameters": [LIMIT, other]},
        ],
    )
    a, b = load_catalog(path, path.name).catalog.tools

    assert a.parameters[0] is b.parameters[0]
    # Never twice in one command, and only for data that is identical (1.0 is not 1).
    assert a.parameters[1] is not a.parameters[0]
    assert a.parameters[1] == a.parameters[0]
    assert b.parameters[1] is not b.parameters[0]
    assert b.parameters[1].min == 1.0


def test_a_group_and_its_command_stating_one_option_alike_keep_their_levels_apart(
    tmp_path: Path,
) -> None:
    examples = [
        {"command": "notes g --limit 5 c --limit 7"},
        {"command": "notes g c --limit 5 --limit 9"},
    ]
    make_project(
        tmp_path,
        [
            {"id": "g", "command": ["g"], "parameters": [LIMIT]},
            {"id": "g.c", "command": ["g", "c"], "parameters": [LIMIT], "examples": examples},
        ],
    )
    group, command = load_catalog(tmp_path / "catalog.json", "catalog.json").catalog.tools
    assert group.parameters[0] is not command.parameters[0]

    result = run_cli(["validate", "--format", "concise"], cwd=tmp_path)

    # Once at each level is fine; twice at the command's level repeats a single-valued option.
    # (The group's tool has no examples: its warning is not what this test is about.)
    lines = result.stdout.splitlines()[:-1]
    assert [line for line in lines if "tool-without-examples" not in line and line[0] != " "] == [
        "catalog.json:43:43: repeated-option g.c[1]: --limit is given more than once; only the "
        "last value takes effect"
    ]
