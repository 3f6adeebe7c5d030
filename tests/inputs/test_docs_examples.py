"""Examples in Markdown documentation: found as a Markdown renderer sees code, checked like any.

The tables feed real Markdown to the Markdown source and compare the examples found (where, and
their text); the projects run ``validate`` on the sample project's tree with a README beside it
and compare what a user sees in every output format. The third-party tests read the long
descriptions installed CLIs ship in their ``METADATA`` and plant errors at known places.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from email.message import Message
from importlib.metadata import metadata
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exampleguard._commands.validate import validate
from exampleguard._config import load_config
from exampleguard._report import Report, render
from exampleguard._sources.markdown import _may_hold_examples, doc_files, markdown_examples
from tests.support.project import REPOSITORY, assert_unusable_report, run_cli, write_config
from tests.support.sarif import sarif_errors

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"

pytest_plugins = ["pytester"]


def found(
    markdown: str, program: str = "notes", code: tuple[str, ...] = ("fenced",)
) -> list[tuple[str, str]]:
    """``(address, text)`` of every example of ``markdown``."""
    text = textwrap.dedent(markdown).lstrip("\n")
    return [(r.address, r.text) for r in markdown_examples(text, "README.md", program, code)]


# -- what is an example: one table per construct -------------------------------------------------

PROMPTS = [
    ("bare", "```sh\nnotes add x\n```\n", [("README.md:2", "notes add x")]),
    ("dollar", "```bash\n$ notes add x\n```\n", [("README.md:2", "notes add x")]),
    ("percent", "```zsh\n% notes add x\n```\n", [("README.md:2", "notes add x")]),
    ("indented", "```shell\n   $ notes add x\n```\n", [("README.md:2", "notes add x")]),
    ("no info string", "```\nnotes add x\n```\n", [("README.md:2", "notes add x")]),
    (
        "info with attributes",
        "```bash title=x\nnotes add x\n```\n",
        [("README.md:2", "notes add x")],
    ),
    ("other program", "```sh\nnotesx add\nnote add\n```\n", []),
    ("program in prose words", "```sh\necho notes add x\n```\n", []),
    ("comment line", "```sh\n# notes add x\n```\n", []),
]

CONTINUATIONS = [
    (
        "two lines",
        "```sh\nnotes add x \\\n  --priority 2\n```\n",
        [("README.md:2", "notes add x \\\n  --priority 2")],
    ),
    (
        "three lines",
        "```sh\n$ notes delete \\\n    --tag a \\\n    --format json\n```\n",
        [("README.md:2", "notes delete \\\n    --tag a \\\n    --format json")],
    ),
    (
        "session prompt on the continuation",
        "```console\n$ notes add x \\\n> --priority 2\nout\n```\n",
        [("README.md:2", "notes add x \\\n--priority 2")],
    ),
    (
        "no continuation",
        "```sh\nnotes add x\n--priority 2\n```\n",
        [("README.md:2", "notes add x")],
    ),
]

CONSOLE_OUTPUT = [
    (
        "output is never a command",
        "```console\n$ notes export\nnotes add x\n$ notes add y\n```\n",
        [("README.md:2", "notes export"), ("README.md:4", "notes add y")],
    ),
    (
        "shell-session too",
        "```shell-session\nnotes add x\n% notes add y\n```\n",
        [("README.md:3", "notes add y")],
    ),
    ("a prompt with another program", "```console\n$ pip install notes\nnotes 1.0\n```\n", []),
    (
        # A bash block with prompts is a session too: its other lines are the output, even
        # when the output starts with the program's name.
        "prompts make a bash block a session",
        "```bash\n$ notes doctor\nnotes is working!\n```\n",
        [("README.md:2", "notes doctor")],
    ),
    (
        "the >>> prompt of some CLI guides",
        "```bash\n>>> notes add x\nadded 1\n```\n",
        [("README.md:2", "notes add x")],
    ),
]

PARAGRAPHS = [
    (
        # Generated reference pages write prompted command lines in plain paragraphs.
        "a prompted line in a paragraph",
        "Usage:\n\n$ notes add x --tag y\n$ notes-other z\nprose $ notes not-at-start\n",
        [("README.md:3", "notes add x --tag y")],
    ),
    ("an unprompted line in a paragraph is prose", "notes add x is how you add\n", []),
]

COMPOUND = [
    (
        "if",
        "```sh\nif notes check --strict; then echo ok; fi\n```\n",
        [("README.md:2", "notes check --strict")],
    ),
    ("time", "```sh\ntime notes export\n```\n", [("README.md:2", "notes export")]),
    ("time -p", "```sh\ntime -p notes export\n```\n", [("README.md:2", "notes export")]),
    ("negation", "```sh\n! notes check\n```\n", [("README.md:2", "notes check")]),
    ("group", "```sh\n{ notes export; }\n```\n", [("README.md:2", "notes export")]),
    (
        "for loop",
        "```sh\nfor id in 1 2; do notes rm 4; done\n```\n",
        [("README.md:2", "notes rm 4")],
    ),
    (
        "while loop",
        "```sh\nwhile notes wait; do sleep 1; done\n```\n",
        [("README.md:2", "notes wait")],
    ),
    (
        "a reserved word as an argument",
        "```sh\nnotes add if\n```\n",
        [("README.md:2", "notes add if")],
    ),
    ("not in command position", "```sh\necho time notes\n```\n", []),
]

HEREDOCS = [
    (
        "a here-document's body is its input",
        "```sh\nnotes import <<EOF\nnotes add x\nEOF\nnotes list\n```\n",
        [("README.md:2", "notes import"), ("README.md:5", "notes list")],
    ),
    (
        "quoted delimiter, tabs stripped by <<-",
        "```sh\ncat <<-'END' | notes import\n\tnotes add x\n\tEND\nnotes list\n```\n",
        [("README.md:2", "notes import"), ("README.md:5", "notes list")],
    ),
    (
        "a here-string has no body",
        "```sh\nnotes import <<< 'x'\nnotes list\n```\n",
        [("README.md:2", "notes import"), ("README.md:3", "notes list")],
    ),
]

PIPES = [
    (
        "into jq",
        "```sh\nnotes export --format json | jq .\n```\n",
        [("README.md:2", "notes export --format json")],
    ),
    (
        "from cat",
        "```sh\ncat ids | notes delete --tag a\n```\n",
        [("README.md:2", "notes delete --tag a")],
    ),
    ("|&", "```sh\nnotes export |& less\n```\n", [("README.md:2", "notes export")]),
    ("quoted bar", "```sh\nnotes add 'a | b'\n```\n", [("README.md:2", "notes add 'a | b'")]),
    (
        "continued pipe",
        "```sh\ncurl https://x \\\n  | notes add -\n```\n",
        [("README.md:3", "notes add -")],
    ),
]

CHAINS = [
    ("after cd", "```sh\ncd repo && notes add x\n```\n", [("README.md:2", "notes add x")]),
    (
        "two of ours",
        "```sh\nnotes add x && notes export\n```\n",
        [("README.md:2", "notes add x"), ("README.md:2:16", "notes export")],
    ),
    ("or", "```sh\nnotes add x || true\n```\n", [("README.md:2", "notes add x")]),
    (
        "semicolon",
        "```sh\nnotes add x; notes export\n```\n",
        [("README.md:2", "notes add x"), ("README.md:2:14", "notes export")],
    ),
    ("subshell", "```sh\n(cd repo && notes add x)\n```\n", [("README.md:2", "notes add x")]),
    ("assignment", "```sh\nNOTES_HOME=/tmp notes add x\n```\n", [("README.md:2", "notes add x")]),
    ("redirect", "```sh\nnotes export > all.json 2>&1\n```\n", [("README.md:2", "notes export")]),
    (
        "trailing comment",
        "```sh\nnotes export  # all of them\n```\n",
        [("README.md:2", "notes export")],
    ),
    (
        "our command inside a substitution",
        "```sh\nkill $(notes export)\n```\n",
        [("README.md:2", "notes export")],
    ),
    (
        "a substitution inside our command stays in it",
        "```sh\nnotes delete $(cat ids)\n```\n",
        [("README.md:2", "notes delete $(cat ids)")],
    ),
]

PLACEHOLDERS = [
    ("angle", "```sh\nnotes add <text>\n```\n", [("README.md:2", "notes add <text>", ((10, 16),))]),
    (
        "brace",
        "```sh\nnotes delete {id}\n```\n",
        [("README.md:2", "notes delete {id}", ((13, 17),))],
    ),
    (
        "ellipsis after a placeholder",
        "```sh\nnotes delete <id>...\n```\n",
        [("README.md:2", "notes delete <id>...", ((13, 17), (17, 20)))],
    ),
    (
        "inside a word",
        "```sh\nnotes add --priority=<n> x\n```\n",
        [("README.md:2", "notes add --priority=<n> x", ((21, 24),))],
    ),
    (
        "single-quoted is text",
        "```sh\nnotes add '<text>'\n```\n",
        [("README.md:2", "notes add '<text>'", ())],
    ),
    ("not a placeholder", "```sh\nnotes add a<b\n```\n", [("README.md:2", "notes add a<b", ())]),
]

NESTING = [
    (
        "list item",
        "- Add one:\n\n  ```sh\n  notes add x\n  ```\n",
        [("README.md:4", "notes add x", (4, 3))],
    ),
    (
        "nested list item",
        "1. one\n   - two\n\n     ```sh\n     $ notes add x\n     ```\n",
        [("README.md:5", "notes add x", (5, 8))],
    ),
    (
        "blockquote",
        "> ```bash\n> notes add x --priority 2\n> ```\n",
        [("README.md:2", "notes add x --priority 2", (2, 3))],
    ),
    (
        "blockquote in a list",
        "- > ```sh\n  > notes add x\n  > ```\n",
        [("README.md:2", "notes add x", (2, 5))],
    ),
]


def _table(rows: list[tuple[Any, ...]]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        ("markdown", "expected"), [r[1:] for r in rows], ids=[r[0] for r in rows]
    )


@_table(PROMPTS)
def test_prompts(markdown: str, expected: list[tuple[str, str]]) -> None:
    assert found(markdown) == expected


@_table(CONTINUATIONS)
def test_continuations_are_joined(markdown: str, expected: list[tuple[str, str]]) -> None:
    assert found(markdown) == expected


@_table(CONSOLE_OUTPUT)
def test_console_output_is_not_a_command(markdown: str, expected: list[tuple[str, str]]) -> None:
    assert found(markdown) == expected


@_table(PARAGRAPHS)
def test_prompted_lines_in_paragraphs(markdown: str, expected: list[tuple[str, str]]) -> None:
    assert found(markdown) == expected


@_table(COMPOUND)
def test_commands_inside_compound_commands(markdown: str, expected: list[tuple[str, str]]) -> None:
    assert found(markdown) == expected


@_table(HEREDOCS)
def test_here_document_bodies_are_never_commands(
    markdown: str, expected: list[tuple[str, str]]
) -> None:
    assert found(markdown) == expected


@_table(PIPES)
def test_pipes_into_other_programs(markdown: str, expected: list[tuple[str, str]]) -> None:
    assert found(markdown) == expected


@_table(CHAINS)
def test_chains_assignments_and_substitutions(
    markdown: str, expected: list[tuple[str, str]]
) -> None:
    assert found(markdown) == expected


@_table(PLACEHOLDERS)
def test_placeholders_are_noted(markdown: str, expected: list[tuple[str, str, Any]]) -> None:
    text = textwrap.dedent(markdown)
    records = markdown_examples(text, "README.md", "notes")
    assert [
        (r.address, r.text, tuple((s.start, s.end) for s in r.placeholders)) for r in records
    ] == expected


@_table(NESTING)
def test_examples_inside_lists_and_blockquotes(
    markdown: str, expected: list[tuple[str, str, tuple[int, int]]]
) -> None:
    records = markdown_examples(markdown, "README.md", "notes")
    located = [(r.address, r.text, (r.location().line, r.location().column)) for r in records]
    assert located == expected
    for record in records:
        place = record.location()
        assert place.line is not None
        assert place.column is not None
        line = markdown.splitlines()[place.line - 1]
        assert line[place.column - 1 :].startswith(record.text.split("\n")[0])


def test_other_languages_prose_and_inline_code_are_left_alone() -> None:
    markdown = """
        Run `notes add x` to add one; notes add y is prose.

        ```python
        notes add --bogus
        ```

        ```json
        {"notes add": 1}
        ```

            notes add indented

        <pre>notes add html</pre>
        """
    assert found(markdown) == []


def test_indented_and_inline_code_when_configured() -> None:
    markdown = "Run `notes add x` now.\n\n    $ notes export\n"
    assert found(markdown, code=("indented",)) == [("README.md:3", "notes export")]
    assert found(markdown, code=("inline",)) == [("README.md:1", "notes add x")]
    inline = markdown_examples(markdown, "README.md", "notes", ("inline",))[0]
    assert (inline.location().line, inline.location().column) == (1, 6)


# -- the globs -----------------------------------------------------------------------------------


def test_globs_are_relative_to_the_config_and_skip_hidden_and_virtual_environments(
    tmp_path: Path,
) -> None:
    for name in (
        "README.md",
        "docs/a.md",
        "docs/deep/b.md",
        "docs/c.txt",
        "pkg/SKILL.md",
        ".hidden/SKILL.md",
        "venv/lib/SKILL.md",
        "node_modules/x/SKILL.md",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr", encoding="utf-8")
    files = doc_files(tmp_path, ["README.md", "docs/**/*.md", "**/SKILL.md", "missing.md"])
    assert [p.relative_to(tmp_path).as_posix() for p in files] == [
        "README.md",
        "docs/a.md",
        "docs/deep/b.md",
        "pkg/SKILL.md",
    ]
    # A named hidden directory is entered: only `**` skips them.
    assert doc_files(tmp_path, [".hidden/*.md"]) == [tmp_path / ".hidden" / "SKILL.md"]


# -- checked like any example, located in the Markdown file ---------------------------------------

README = """\
# notes

Add a note:

```sh
notes add "buy milk" --priority 2
notes add "x" --prio 3
cd somewhere && notes delete 3 --yes | head
```

- Export:

  ```console
  $ notes export --format yaml
  notes add --bogus
  $ notes delete \\
  >   --tag a --all
  ```

> ```bash
> notes add <text> --priority {level}
> notes delete <id>...
> ```
"""

# (line, column, code) of every planted error, the column of the offending word's first
# character in the file as written.
PLANTED = [
    (7, 15, "unknown-flag"),
    (7, 22, "extra-positional"),
    (8, 32, "bypass-flag"),
    (14, 27, "bad-choice"),
    (17, 15, "mutually-exclusive"),
]


def docs_project(root: Path, readme: str, **settings: Any) -> Path:
    """The sample project (a ``notes`` tree snapshot and catalog) with ``readme`` beside it."""
    for name in ("catalog.json", "notes.tree.json", "exampleguard-counts.json"):
        shutil.copy(SAMPLE / name, root / name)
    shutil.copytree(SAMPLE / "dispositions", root / "dispositions")
    (root / "README.md").write_text(readme, encoding="utf-8")
    write_config(root, {"catalog": "catalog.json", "tree": "notes.tree.json", **settings})
    return root


def report_of(root: Path) -> Report:
    outcome = validate(load_config(None, root))
    assert outcome.report is not None, outcome.unusable
    return outcome.report


def test_planted_errors_are_reported_at_their_line_and_column(tmp_path: Path) -> None:
    report = report_of(docs_project(tmp_path, README))
    located = [
        (d.location.line, d.location.column, d.code)
        for d in report.diagnostics
        if d.file == "README.md" and d.location is not None
    ]
    assert located == PLANTED
    docs = {e.address: e.ok for e in report.examples if e.source == "markdown"}
    assert docs == {
        "README.md:6": True,
        "README.md:7": False,
        "README.md:8": False,
        "README.md:14": False,
        "README.md:16": False,
        # Placeholders: their values are the reader's, and `<id>` gives the ids.
        "README.md:21": True,
        "README.md:22": True,
    }


def test_every_output_format_points_at_the_readme(tmp_path: Path) -> None:
    report = report_of(docs_project(tmp_path, README))
    text = render(report, "text")
    assert "README.md:7:15: unknown-flag --prio is not an option of 'notes add'" in text
    data = json.loads(render(report, "json"))
    first = next(d for d in data["diagnostics"] if d["file"] == "README.md")
    assert (first["location"]["line"], first["location"]["column"]) == (7, 15)
    assert (first["location"]["end_line"], first["location"]["end_column"]) == (7, 20)
    entry = next(e for e in data["examples"] if e["address"] == "README.md:7")
    assert (entry["source"], entry["command"], entry["ok"]) == (
        "markdown",
        'notes add "x" --prio 3',
        False,
    )
    github = render(report, "github").splitlines()
    assert "::error file=README.md,line=7,col=15,title=unknown-flag::" in github[0]
    sarif = json.loads(render(report, "sarif"))
    assert sarif_errors(sarif) == []
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] != "uncovered-command"]
    places = [
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in results
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "README.md"
    ]
    assert places == [("README.md", line, column) for line, column, _ in PLANTED]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["endLine"], region["endColumn"]) == (7, 21)
    junit = ET.fromstring(render(report, "junit"))
    cases = {case.get("name"): case for case in junit.iter("testcase")}
    assert cases["README.md:6"].find("failure") is None
    failure = cases["README.md:7"].find("failure")
    assert failure is not None
    assert "README.md:7:15: unknown-flag" in (failure.text or "")


def test_a_doc_example_gets_its_catalog_tools_rules(tmp_path: Path) -> None:
    # `notes delete` is the catalog's notes.delete: its require-one-of and its bypass flag apply
    # to a README example of that command as to the catalog's own.
    readme = "```sh\nnotes delete --format json\nnotes rm -y 3\n```\n"
    report = report_of(docs_project(tmp_path, readme))
    codes = [
        (d.location.line, d.code)
        for d in report.diagnostics
        if d.file == "README.md" and d.location is not None
    ]
    assert codes == [(2, "require-one-of"), (3, "bypass-flag")]


def test_a_doc_example_of_a_command_without_a_tool_gets_the_trees_rules(tmp_path: Path) -> None:
    readme = "```sh\nnotes export --format json\nnotes export --format xml\nnotes nope\n```\n"
    report = report_of(docs_project(tmp_path, readme))
    codes = [
        (d.location.line, d.code)
        for d in report.diagnostics
        if d.file == "README.md" and d.location is not None
    ]
    assert codes == [(3, "bad-choice"), (4, "unknown-command")]
    passing = next(e for e in report.examples if e.address == "README.md:2")
    assert passing.ok
    assert passing.path == ("export",)
    assert passing.arguments == {"format": "json"}


def test_the_policy_for_shell_constructs(tmp_path: Path) -> None:
    readme = (
        "```sh\n"
        "notes export --format json | jq .\n"  # 2: the pipe is the shell's
        "NOTES=1 notes add x && notes export\n"  # 3: two commands, both fine
        "notes delete $(cat ids)\n"  # 4: hides the arguments
        "notes add x > log 1\n"  # 5: a redirect before a word of ours
        "```\n"
    )
    report = report_of(docs_project(tmp_path, readme))
    codes = [
        (d.location.line, d.location.column, d.code)
        for d in report.diagnostics
        if d.file == "README.md" and d.location is not None
    ]
    assert codes[0] == (4, 14, "shell-construct")
    assert (5, 13, "shell-construct") in codes
    assert {line for line, _, _ in codes} == {4, 5}
    assert len([e for e in report.examples if e.source == "markdown"]) == 5


def test_placeholders_are_values_never_flags(tmp_path: Path) -> None:
    readme = (
        "```sh\n"
        "notes add <text> --priority <n>\n"  # 2: fine, the reader supplies both
        "notes add x <options>\n"  # 3: a second positional, not a flag
        "notes <command> x\n"  # 4: not a command word
        "notes add x --priority\n"  # 5: a real missing value stays one
        "notes delete ...\n"  # 6: nothing given: the catalog's require-one-of
        "```\n"
    )
    report = report_of(docs_project(tmp_path, readme))
    codes = [
        (d.location.line, d.code)
        for d in report.diagnostics
        if d.file == "README.md" and d.location is not None
    ]
    assert codes == [
        (3, "extra-positional"),
        (4, "unknown-command"),
        (5, "missing-value"),
        (6, "require-one-of"),
    ]
    message = next(d.message for d in report.diagnostics if d.location and d.location.line == 4)
    # The placeholder reads as written: the characters it is checked as are never shown.
    assert "'<command>' is not a command of 'notes'" in message


MASKS = ("\u1438", "\u1433")


@pytest.mark.parametrize("output_format", ["full", "concise", "json", "sarif", "junit", "github"])
def test_no_output_shows_how_a_placeholder_is_checked(tmp_path: Path, output_format: str) -> None:
    # Placeholders are checked as plain words written in look-alike letters; the words, the
    # arguments and the messages of every format name them as the document writes them.
    readme = (
        "```sh\n"
        "notes add <text> --priority {n}\n"  # valid: the reader supplies both
        "notes <command> x\n"  # not a command word
        "```\n"
    )
    project = docs_project(tmp_path, readme)
    result = run_cli(["validate", "--format", output_format], cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert not any(mask in result.stdout + result.stderr for mask in MASKS), result.stdout
    assert "<command>" in result.stdout.replace("&lt;", "<").replace("&gt;", ">")
    if output_format == "json":
        entry = next(
            e
            for e in json.loads(result.stdout)["examples"]
            if e["command"] == "notes add <text> --priority {n}"
        )
        assert entry["argv"] == ["notes", "add", "<text>", "--priority", "{n}"]
        assert entry["arguments"]["text"] == "<text>"


def test_a_session_block_without_a_prompt_is_noted_where_it_names_the_program(
    tmp_path: Path,
) -> None:
    readme = (
        "# notes\n\n```console\nnotes add --prio 3 x\n```\n\n```console\nno command here\n```\n"
    )
    report = report_of(docs_project(tmp_path, readme))
    noted = [
        (d.code, d.severity.value, d.location.line, d.location.column)
        for d in report.diagnostics
        if d.file == "README.md" and d.location is not None
    ]
    # The typo in the block is not checked: the block itself is what is reported.
    assert noted == [("doc-block-without-example", "warning", 4, 1)]
    assert not [e for e in report.examples if e.source == "markdown"]


def test_docs_can_be_turned_off(tmp_path: Path) -> None:
    report = report_of(docs_project(tmp_path, README, docs=[]))
    assert [e for e in report.examples if e.source != "catalog"] == []
    assert report.ok


def test_the_default_reads_the_readme_and_an_unreadable_doc_stops_the_run(tmp_path: Path) -> None:
    docs_project(tmp_path, README)
    (tmp_path / "AGENTS.md").write_bytes(b"\xff notes add")
    outcome = validate(load_config(None, tmp_path))
    assert outcome.report is None
    assert [(d.code, d.location.file if d.location else None) for d in outcome.unusable] == [
        ("file-unreadable", "AGENTS.md")
    ]


def test_a_bad_docs_setting_is_a_config_error(tmp_path: Path) -> None:
    docs_project(tmp_path, README, docs_code=["fenced", "html"])
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert "docs_code" in result.stderr


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("/etc/*", "is an absolute path"),
        ("../../**/*.md", "leaves the configuration's folder"),
        ("docs/../../README.md", "leaves the configuration's folder"),
    ],
)
def test_a_docs_glob_outside_the_project_is_a_config_error(
    tmp_path: Path, pattern: str, reason: str
) -> None:
    docs_project(tmp_path, README, docs=["README.md", pattern])
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stderr
    assert_unusable_report(result.stdout)
    assert "config-invalid" in result.stderr
    assert f"docs[1]: value error, {pattern!r} {reason}" in result.stderr


def test_a_folder_the_user_cannot_enter_is_passed_over(tmp_path: Path) -> None:
    """A data volume of another user (a container's) inside the project: the default globs walk
    every folder (`**/SKILL.md`), and one that cannot be looked into holds no docs of ours."""
    env = {**os.environ, "NO_COLOR": "1"}
    if os.geteuid() == 0:
        # Root enters every folder: the run is made as an unprivileged user.
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("needs setpriv to run as an unprivileged user")
        root = Path(tempfile.mkdtemp(prefix="eg-unenterable-"))
        cache = root / "cache"
        cache.mkdir()
        project = root / "project"
        project.mkdir()
        docs_project(project, "```sh\nnotes add x\n```\n")
        for path in (root, *root.rglob("*")):
            path.chmod(0o777 if path.is_dir() else 0o644)
        env.update(HOME=str(cache), XDG_CACHE_HOME=str(cache))
        prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", "pass"], check=False, capture_output=True
        )
        if probe.returncode != 0:
            # An interpreter that lives in root's home (a pyenv build's shared library).
            pytest.skip("this interpreter cannot run as an unprivileged user here")
    else:
        root = tmp_path
        project = docs_project(tmp_path, "```sh\nnotes add x\n```\n")
        prefix = []
    volume = project / "postgres-data" / "base"
    volume.mkdir(parents=True)
    (volume / "SKILL.md").write_text("```sh\nnotes bogus\n```\n", encoding="utf-8")
    (project / "postgres-data").chmod(0o700 if prefix else 0o000)
    env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY), env.get("PYTHONPATH", "")])
    try:
        result = subprocess.run(
            [*prefix, sys.executable, "-m", "exampleguard", "validate", "--format", "json"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        (project / "postgres-data").chmod(0o700)
        if prefix:
            shutil.rmtree(root)
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert [e["address"] for e in report["examples"] if e["source"] == "markdown"] == [
        "README.md:2"
    ]


# -- real Markdown of installed third-party CLIs ---------------------------------------------------


def _long_description(distribution: str) -> str:
    # The metadata is an email message; its body is the long description.
    body = cast(Message, metadata(distribution)).get_payload()
    assert isinstance(body, str)
    assert body
    return body


def _plant(text: str, line: int, old: str, new: str) -> str:
    lines = text.split("\n")
    assert old in lines[line - 1], lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines)


def _third_party(root: Path, program: str, tree: str, readme: str, **settings: Any) -> Report:
    (root / "catalog.json").write_text(
        json.dumps({"format": "exampleguard.catalog/v1", "program": program, "tools": []}),
        encoding="utf-8",
    )
    (root / "README.md").write_text(readme, encoding="utf-8")
    write_config(root, {"catalog": "catalog.json", "tree": tree, **settings})
    return report_of(root)


def _readme_findings(report: Report) -> list[tuple[int | None, int | None, str]]:
    return [
        (d.location.line, d.location.column, d.code)
        for d in report.diagnostics
        if d.file == "README.md" and d.location is not None
    ]


def test_sqlite_utils_readme(tmp_path: Path) -> None:
    # sqlite-utils' long description writes its examples as indented code with `$ ` prompts and
    # their output below them, a pipe from curl continued over two lines, and a default command.
    original = _long_description("sqlite-utils")
    settings = {"docs": ["README.md"], "docs_code": ["fenced", "indented"]}
    clean = _third_party(
        tmp_path, "sqlite-utils", "click:sqlite_utils.cli:cli", original, **settings
    )
    docs = [e for e in clean.examples if e.source == "markdown"]
    assert len(docs) >= 8
    assert all(e.ok for e in docs), [(e.address, e.diagnostics) for e in docs if not e.ok]
    assert _readme_findings(clean) == []
    # Output lines and the Python fence are never commands.
    assert all(e.command.startswith("sqlite-utils ") for e in docs)
    line = next(
        n for n, text in enumerate(original.split("\n"), 1) if "sqlite-utils tables dogs.db" in text
    )
    planted = _plant(original, line, "--counts", "--count")
    planted = _plant(planted, line + 3, "sqlite-utils dogs.db", "sqlite-utils dogs.db --nl=x")
    report = _third_party(
        tmp_path, "sqlite-utils", "click:sqlite_utils.cli:cli", planted, **settings
    )
    tables_column = original.split("\n")[line - 1].index("--counts") + 1
    query_column = original.split("\n")[line + 2].index("dogs.db") + len("dogs.db ") + 1
    assert _readme_findings(report) == [
        (line, tables_column, "unknown-flag"),
        (line + 3, query_column, "unexpected-value"),
    ]


CLICK_DEFAULT_GROUP_APP = """
import click
from click_default_group import DefaultGroup


@click.group(cls=DefaultGroup, default="foo", default_if_no_args=True)
def cli():
    pass


@cli.command()
def foo():
    click.echo("foo")


@cli.command()
def bar():
    click.echo("bar")
"""


def test_click_default_group_readme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its long description documents `cli.py`, the app of its own Python fence: that app is the
    # tree, and the console fence's prompted lines its examples.
    (tmp_path / "cdg_readme_app.py").write_text(CLICK_DEFAULT_GROUP_APP, encoding="utf-8")
    original = _long_description("click-default-group")
    settings = {"docs": ["README.md"]}
    tree = "click:cdg_readme_app:cli"
    clean = _third_party(tmp_path, "cli.py", tree, original, **settings)
    docs = [e for e in clean.examples if e.source == "markdown"]
    assert [e.command for e in docs] == ["cli.py --help", "cli.py", "cli.py foo", "cli.py bar"]
    assert all(e.ok for e in docs), [(e.address, e.diagnostics) for e in docs if not e.ok]
    line = next(n for n, text in enumerate(original.split("\n"), 1) if text == "$ cli.py bar")
    planted = _plant(original, line, "cli.py bar", "cli.py bar --loud")
    report = _third_party(tmp_path, "cli.py", tree, planted, **settings)
    assert _readme_findings(report) == [(line, 14, "unknown-flag")]


def test_typer_readme_takes_only_prompted_lines_of_its_console_fences() -> None:
    # Typer's long description mixes Python fences, console sessions with rich output that
    # names `typer`, `// comments`, and prose; only the prompted `typer` lines are commands.
    text = _long_description("typer")
    records = markdown_examples(text, "README.md", "typer")
    lines = text.split("\n")
    assert [r.text for r in records] == [
        "typer main.py run",
        "typer main.py run --help",
        "typer main.py run Camila",
    ]
    for record in records:
        place = record.location()
        assert place.line is not None
        assert place.column is not None
        assert lines[place.line - 1][place.column - 1 :] == record.text


def test_pytest_items_are_named_where_the_example_is(pytester: pytest.Pytester) -> None:
    docs_project(pytester.path, "```sh\nnotes add x\nnotes add x --prio 3\n```\n")
    result = pytester.runpytest("--exampleguard", "-v", "-p", "no:cacheprovider")
    outcomes = {
        report.nodeid: report.outcome
        for report in result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
        if report.when == "call"
    }
    assert outcomes["catalog.json::README.md:2"] == "passed"
    assert outcomes["catalog.json::README.md:3"] == "failed"
    assert "README.md:3:13: unknown-flag --prio" in result.stdout.str()


def test_pytest_items_of_a_monorepo_package_point_at_its_readme(
    pytester: pytest.Pytester,
) -> None:
    package = pytester.path / "packages" / "notes"
    package.mkdir(parents=True)
    docs_project(package, "```sh\nnotes add x\nnotes add x --prio 3\n```\n")
    result = pytester.runpytest(
        "--exampleguard",
        "--exampleguard-config",
        "packages/notes/exampleguard.toml",
        "-p",
        "no:cacheprovider",
    )
    failed = [
        report
        for report in result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
        if report.when == "call" and report.failed and "README" in report.nodeid
    ]
    # The file and line a failure header and an editor jump to: the package's README.
    assert [report.location[:2] for report in failed] == [("packages/notes/README.md", 2)]
    assert "packages/notes/README.md:3:13: unknown-flag --prio" in result.stdout.str()


# -- counts and the dogfood -----------------------------------------------------------------------


def test_counts_record_the_doc_examples_and_dropping_one_is_drift(tmp_path: Path) -> None:
    docs_project(tmp_path, "```sh\nnotes add x\nnotes export\n```\n")
    result = run_cli(["counts", "--write"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = json.loads((tmp_path / "exampleguard-counts.json").read_text(encoding="utf-8"))
    assert written["doc_examples"] == {"markdown": 2}
    assert report_of(tmp_path).ok
    (tmp_path / "README.md").write_text("```sh\nnotes add x\n```\n", encoding="utf-8")
    drift = [d for d in report_of(tmp_path).diagnostics if d.code == "counts-drift"]
    assert [d.message for d in drift] == [
        "the counts changed: doc_examples: {'markdown': 2} -> {'markdown': 1}"
    ]


def test_a_project_without_doc_examples_keeps_its_counts_file(tmp_path: Path) -> None:
    docs_project(tmp_path, "# no examples\n")
    before = (tmp_path / "exampleguard-counts.json").read_text(encoding="utf-8")
    assert run_cli(["counts", "--write"], cwd=tmp_path).returncode == 0
    assert (tmp_path / "exampleguard-counts.json").read_text(encoding="utf-8") == before
    assert "doc_examples" not in before


def test_exampleguards_own_readme_and_docs_examples_are_checked_and_pass() -> None:
    # The dogfood: `exampleguard validate` in CI reads the README and the documentation site
    # (`docs` in pyproject.toml).
    outcome = validate(load_config(None, REPOSITORY))
    assert outcome.report is not None, outcome.unusable
    docs = [e for e in outcome.report.examples if e.source == "markdown"]
    assert len(docs) >= 10
    files = {(e.address or "").split(":")[0] for e in docs}
    assert "README.md" in files
    assert "docs/getting-started.md" in files
    assert all(f.startswith("docs/") for f in files - {"README.md"}), files
    assert [(e.address, e.diagnostics) for e in docs if not e.ok] == []
    # Its own CLI's help shows examples too, checked against the same tree.
    helps = [e for e in outcome.report.examples if e.source == "help"]
    assert [(e.address or "").split(":")[0] for e in helps] == ["exampleguard/cli.py"] * len(helps)
    assert len(helps) >= 3
    assert [(e.address, e.diagnostics) for e in helps if not e.ok] == []
    assert outcome.report.counts.doc_examples == {"help": len(helps), "markdown": len(docs)}
    assert outcome.report.ok


@pytest.mark.parametrize(
    "line",
    [
        'notes add "another" \\\n    --priority 2',
        "notes add x \\\n--priority 2",
        'notes add "a \\\n b" x',
        "notes add 'a \\\n b' x",
        "notes add a\\\nb",
    ],
)
def test_continuations_checked_as_blanks_give_bashs_words(line: str) -> None:
    from exampleguard._tokenize import tokenize

    (record,) = markdown_examples(f"```sh\n{line}\n```\n", "README.md", "notes")
    assert tokenize(record.checked_text) == tokenize(record.text)


# -- the pre-filter: a file is left unparsed only when it cannot hold an example ----------------

FRAGMENTS = [
    "Talks to the notes service.\n",
    "```python\nprint('notes')\n```\n",
    "```sh\nnotes add x\n```\n",
    "~~~bash\n$ notes list\n~~~\n",
    "    notes add indented\n",
    "Run `notes add x` inline.\n",
    "> ```console\n> $ notes add quoted\n> ```\n",
    "1. item\n\n   ```\n   notes add listed\n   ```\n",
    "# Notes\n",
    "\n",
]


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.sampled_from(FRAGMENTS), max_size=6),
    code=st.sampled_from([("fenced",), ("fenced", "indented"), ("fenced", "inline"), ("inline",)]),
)
def test_the_prefilter_never_drops_an_example(parts: list[str], code: tuple[str, ...]) -> None:
    text = "".join(parts)
    found = markdown_examples(text, "README.md", "notes", code)
    if not _may_hold_examples(text, "notes", code):
        assert found == []


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_the_prefilter_keeps_a_fence_whatever_ends_its_lines(newline: str) -> None:
    # CommonMark ends a line at a lone carriage return too (files saved on classic Mac OS).
    text = newline.join(["# Notes", "```sh", "notes bogus", "```", ""])
    assert _may_hold_examples(text, "notes", ("fenced",))
    (record,) = markdown_examples(text, "README.md", "notes")
    assert (record.text, record.address) == ("notes bogus", "README.md:3")


def test_prose_that_names_the_program_before_any_fence_is_not_parsed() -> None:
    prose = "The notes service keeps notes.\n\n```python\nclient.add('x')\n```\n"
    assert not _may_hold_examples(prose, "notes", ("fenced",))
    # With indented or inline code read, any mention may be code: it is parsed.
    assert _may_hold_examples(prose, "notes", ("fenced", "inline"))
    assert _may_hold_examples(prose + "```sh\nnotes add x\n```\n", "notes", ("fenced",))
