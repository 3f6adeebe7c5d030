"""Every shell construct, through ``exampleguard validate``: its code and the exact span it offends.

An example must be exactly one simple command. Each row is one example of a tool of its own (all
in one catalog, validated once); the JSON report must carry the code, the severity and the exact
character span of the offending text, and nothing else for that example. The text output's
column points at the offending character in the catalog file, escapes included. The tokenizer
has its own unit tests; these check what a user of ``validate`` sees.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import make_project, run_cli

PARAMETERS: list[dict[str, Any]] = [
    {"name": "words", "positional": True, "nargs": -1},
    {"name": "verbose", "flags": ["-v", "--verbose"], "type": "boolean"},
    {"name": "tag", "flags": ["--tag"]},
]


@dataclass(frozen=True)
class Row:
    """An example (its tool is ``notes.NAME``) and the (code, offending text) pairs it must get.

    An offending text may be given as ``(text, occurrence)`` when it occurs more than once.
    """

    name: str
    example: str
    expected: tuple[tuple[str, str | tuple[str, int]], ...]


CONSTRUCT = "shell-construct"
COMMENT = "shell-comment"
EXPANSION = "shell-expansion"
PARSE = "parse-error"

ROWS: tuple[Row, ...] = (
    # lists and pipelines
    Row("pipe", "notes pipe x | cat", ((CONSTRUCT, "|"),)),
    Row("pipe-tight", "notes pipe-tight x|cat", ((CONSTRUCT, "|"),)),
    Row("pipe-stderr", "notes pipe-stderr x |& cat", ((CONSTRUCT, "|&"),)),
    Row("semicolon", "notes semicolon x; notes semicolon y", ((CONSTRUCT, ";"),)),
    Row("trailing-semicolon", "notes trailing-semicolon x ;", ((CONSTRUCT, ";"),)),
    Row("and", "notes and x && notes and y", ((CONSTRUCT, "&&"),)),
    Row("or", "notes or x || true", ((CONSTRUCT, "||"),)),
    Row("background", "notes background x &", ((CONSTRUCT, "&"),)),
    Row("newline", "notes newline x\nnotes newline y", ((CONSTRUCT, "\n"),)),
    # redirects and here-documents
    Row("redirect-out", "notes redirect-out x > out.txt", ((CONSTRUCT, "> out.txt"),)),
    Row("redirect-in", "notes redirect-in x < in.txt", ((CONSTRUCT, "< in.txt"),)),
    Row("redirect-append", "notes redirect-append x >> log", ((CONSTRUCT, ">> log"),)),
    Row("redirect-fd", "notes redirect-fd x 2>&1", ((CONSTRUCT, "2>&1"),)),
    Row("redirect-both", "notes redirect-both x &> all.log", ((CONSTRUCT, "&> all.log"),)),
    Row("here-doc", "notes here-doc x <<EOF\nhello\nEOF", ((CONSTRUCT, "<<EOF\nhello\nEOF"),)),
    Row("here-string", "notes here-string x <<< hello", ((CONSTRUCT, "<<< hello"),)),
    # compound commands
    Row("subshell", "(notes subshell x)", ((CONSTRUCT, "(notes subshell x)"),)),
    Row("group", "{ notes group x; }", ((CONSTRUCT, "{ notes group x; }"),)),
    # substitutions and expansions
    Row("command-substitution", "notes command-substitution $(date)", ((CONSTRUCT, "$(date)"),)),
    Row("backticks", "notes backticks `date`", ((CONSTRUCT, "`date`"),)),
    Row("process-in", "notes process-in <(ls)", ((CONSTRUCT, "<(ls)"),)),
    Row("process-out", "notes process-out >(cat)", ((CONSTRUCT, ">(cat)"),)),
    Row("parameter", "notes parameter $HOME", ((CONSTRUCT, "$HOME"),)),
    Row("parameter-braced", "notes parameter-braced ${HOME}", ((CONSTRUCT, "${HOME}"),)),
    Row(
        "parameter-in-double-quotes",
        'notes parameter-in-double-quotes "$HOME"',
        ((CONSTRUCT, "$HOME"),),
    ),
    Row("parameter-in-option", "notes parameter-in-option --tag=$USER", ((CONSTRUCT, "$USER"),)),
    Row("arithmetic", "notes arithmetic $((1+2))", ((CONSTRUCT, "$((1+2))"),)),
    Row("assignment", "FOO=1 notes assignment x", ((CONSTRUCT, "FOO=1"),)),
    Row(
        "two-constructs",
        "notes two-constructs $HOME | cat",
        ((CONSTRUCT, "$HOME"), (CONSTRUCT, "|")),
    ),
    # comments
    Row("comment", "notes comment x # urgent", ((COMMENT, "# urgent"),)),
    Row("comment-bare", "notes comment-bare x #", ((COMMENT, "#"),)),
    Row("comment-after-tab", "notes comment-after-tab x\t#note", ((COMMENT, "#note"),)),
    # parse errors
    Row("single-quote", "notes single-quote 'abc", ((PARSE, "'abc"),)),
    Row("double-quote", 'notes double-quote "abc', ((PARSE, '"abc'),)),
    Row("dangling-pipe", "notes dangling-pipe x |", ((PARSE, "|"),)),
    # warnings: the shell would expand these
    Row("glob-star", "notes glob-star *.md", ((EXPANSION, "*"),)),
    Row("glob-question", "notes glob-question a?b", ((EXPANSION, "?"),)),
    Row("glob-bracket", "notes glob-bracket [ab].txt", ((EXPANSION, "[ab]"),)),
    Row("brace", "notes brace {a,b}", ((EXPANSION, "{a,b}"),)),
    Row("brace-range", "notes brace-range {1..3}", ((EXPANSION, "{1..3}"),)),
    Row("tilde", "notes tilde ~/notes", ((EXPANSION, "~"),)),
    # plain words: nothing to report
    Row("quoted-hash", "notes quoted-hash '#urgent'", ()),
    Row("hash-inside-word", "notes hash-inside-word a#b", ()),
    Row("hash-in-option-value", "notes hash-in-option-value --tag=#b", ()),
    Row("escaped-hash", "notes escaped-hash \\#b", ()),
    Row("quoted-pipe", "notes quoted-pipe 'a|b'", ()),
    Row("escaped-semicolon", "notes escaped-semicolon a\\;b", ()),
    Row("single-quoted-dollar", "notes single-quoted-dollar '$HOME'", ()),
    Row("quoted-newline", "notes quoted-newline 'a\nb'", ()),
    Row("continuation", "notes continuation x \\\n y", ()),
    Row("quoted-glob", "notes quoted-glob '*.md'", ()),
    Row("tilde-inside-word", "notes tilde-inside-word a~b", ()),
)


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str, Path]:
    """One project holding every row; its JSON report, text output and catalog."""
    root = tmp_path_factory.mktemp("shell")
    tools = [
        {
            "id": f"notes.{row.name}",
            "command": [row.name],
            "parameters": PARAMETERS,
            "examples": [{"command": row.example}],
        }
        for row in ROWS
    ]
    make_project(root, tools, dialect="click")
    as_json = run_cli(["validate", "--format", "json"], cwd=root)
    as_text = run_cli(["validate"], cwd=root)
    assert as_json.returncode == as_text.returncode == 1, as_json.stderr
    return as_json.returncode, json.loads(as_json.stdout), as_text.stdout, root


def _span(example: str, offending: str | tuple[str, int]) -> dict[str, int]:
    text, occurrence = offending if isinstance(offending, tuple) else (offending, 0)
    starts = [m.start() for m in re.finditer(re.escape(text), example)]
    assert len(starts) > occurrence, f"{text!r} is not in {example!r}"
    return {"start": starts[occurrence], "end": starts[occurrence] + len(text)}


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_shell_construct(validated: tuple[int, dict[str, Any], str, Path], row: Row) -> None:
    _, report, _, _ = validated
    entry = next(e for e in report["examples"] if e["tool"] == f"notes.{row.name}")
    assert entry["command"] == row.example
    got = sorted(
        (d["code"], d["severity"], d["span"]["start"], d["span"]["end"])
        for d in entry["diagnostics"]
    )
    wanted = sorted(
        (
            code,
            "warning" if code == EXPANSION else "error",
            *_span(row.example, offending).values(),
        )
        for code, offending in row.expected
    )
    assert got == wanted, entry["diagnostics"]
    # A warning never fails an example; anything else does.
    assert entry["ok"] is all(code == EXPANSION for code, _ in row.expected)
    for diagnostic in entry["diagnostics"]:
        assert diagnostic["file"] == "catalog.json"
        assert diagnostic["location"]["key"].endswith(".examples[0].command")


def test_plain_words_keep_their_text(validated: tuple[int, dict[str, Any], str, Path]) -> None:
    """What passes is bound as the words bash would pass, not as raw text."""
    _, report, _, _ = validated
    argv = {e["tool"]: e["argv"] for e in report["examples"]}
    assert argv["notes.quoted-hash"] == ["notes", "quoted-hash", "#urgent"]
    assert argv["notes.hash-inside-word"] == ["notes", "hash-inside-word", "a#b"]
    assert argv["notes.escaped-semicolon"] == ["notes", "escaped-semicolon", "a;b"]
    assert argv["notes.quoted-newline"] == ["notes", "quoted-newline", "a\nb"]
    assert argv["notes.continuation"] == ["notes", "continuation", "x", "y"]
    arguments = {e["tool"]: e["arguments"] for e in report["examples"]}
    assert arguments["notes.quoted-hash"] == {"words": ["#urgent"]}
    assert arguments["notes.hash-in-option-value"] == {"tag": "#b"}


def _column_in_file(catalog: str, needle: str, char: str) -> tuple[int, int]:
    """1-based line and column of ``char`` on the one line of the file that contains ``needle``."""
    lines = catalog.splitlines()
    (number,) = [i for i, line in enumerate(lines, start=1) if needle in line]
    line = lines[number - 1]
    return number, line.index(char, line.index(needle)) + 1


def test_text_output_column_points_at_the_pipe(
    validated: tuple[int, dict[str, Any], str, Path],
) -> None:
    _, _, text, root = validated
    catalog = (root / "catalog.json").read_text(encoding="utf-8")
    line, column = _column_in_file(catalog, "notes pipe x | cat", "|")
    assert (
        f"catalog.json:{line}:{column}: shell-construct notes.pipe[0]: a pipe '|' makes this two "
        "commands" in text
    )


def test_text_output_column_counts_escapes_in_the_file(tmp_path: Path) -> None:
    """In the JSON file ``"`` is written ``\\"``: the column is the pipe's, in the editor's view."""
    example = 'notes quoted "a b" | cat'
    tools = [
        {
            "id": "notes.quoted",
            "command": ["quoted"],
            "parameters": PARAMETERS,
            "examples": [{"command": example}],
        }
    ]
    make_project(tmp_path, tools, dialect="click")
    catalog = (tmp_path / "catalog.json").read_text(encoding="utf-8")
    assert '\\"a b\\" | cat' in catalog
    line, column = _column_in_file(catalog, "notes quoted", "|")
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 1
    assert f"catalog.json:{line}:{column}: shell-construct notes.quoted[0]:" in result.stdout
    report = json.loads(run_cli(["validate", "--format", "json"], cwd=tmp_path).stdout)
    (diagnostic,) = report["diagnostics"]
    assert diagnostic["span"] == {"start": example.index("|"), "end": example.index("|") + 1}
    assert diagnostic["location"]["column"] == column


def test_a_lone_surrogate_is_a_parse_error_not_a_crash(tmp_path: Path) -> None:
    """JSON can spell a lone surrogate (``\\ud800``); it is not Unicode text, so no shell word."""
    example = "notes lone x \ud800"
    tools = [
        {
            "id": "notes.lone",
            "command": ["lone"],
            "parameters": PARAMETERS,
            "examples": [{"command": example}],
        }
    ]
    make_project(tmp_path, tools, dialect="click")
    assert "\\ud800" in (tmp_path / "catalog.json").read_text(encoding="utf-8")
    as_text = run_cli(["validate"], cwd=tmp_path)
    as_json = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    for result in (as_text, as_json):
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode == 1
    assert "parse-error notes.lone[0]:" in as_text.stdout
    report = json.loads(as_json.stdout)
    (diagnostic,) = report["diagnostics"]
    assert diagnostic["code"] == PARSE
    assert diagnostic["span"] == {"start": len(example) - 1, "end": len(example)}
