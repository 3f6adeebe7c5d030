"""The text forms people read: ruff's full form with code frames, concise lines, and the switches.

``--format full`` (the default) frames each diagnostic with the lines of the file it points at;
``--format concise`` (and ``text``) keep one line each. ``--quiet``, ``--exit-zero``,
``--statistics`` and ``--version`` behave as ruff users expect. The whole-report snapshots of both
forms are in ``tests/snapshots/`` (``test_renderers.py``); these cases pin the frame itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import exampleguard
from exampleguard._report.data import LocationEntry
from exampleguard._report.frame import code_frame
from tests.support.project import make_project, run_cli

DELETE_TOOL = {
    "id": "notes.delete",
    "command": ["delete"],
    "parameters": [
        {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
        {"name": "recursive", "flags": ["--recursive"], "type": "boolean"},
        {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
    ],
}


@pytest.mark.parametrize(
    ("text", "location", "expected"),
    [
        pytest.param(
            '{"command": "notes delete --recurse"}',
            LocationEntry(line=1, column=27, end_line=1, end_column=35),
            [
                "  |",
                '1 | {"command": "notes delete --recurse"}',
                "  |                           ^^^^^^^^^ did you mean --recursive?",
                "  |",
            ],
            id="one line",
        ),
        pytest.param(
            'a\n\t"x": "\\"q\\" --bad"\n',
            LocationEntry(line=2, column=15, end_line=2, end_column=19),
            [
                "  |",
                '2 |  "x": "\\"q\\" --bad"',
                "  |               ^^^^^ did you mean --recursive?",
                "  |",
            ],
            id="a tab and escapes before the span",
        ),
        pytest.param(
            '"札幌 --bad"',
            LocationEntry(line=1, column=5, end_line=1, end_column=9),
            [
                "  |",
                '1 | "札幌 --bad"',
                "  |       ^^^^^ did you mean --recursive?",
                "  |",
            ],
            id="wide characters before the span",
        ),
        pytest.param(
            "[[exclusion]]\npath = []\n",
            LocationEntry(line=1, column=1),
            ["  |", "1 | [[exclusion]]", "  | ^ did you mean --recursive?", "  |"],
            id="only the start is known",
        ),
        pytest.param(
            "x = '''one\ntwo'''\n",
            LocationEntry(line=1, column=8, end_line=2, end_column=3),
            [
                "  |",
                "1 | x = '''one",
                "  |        ^^^",
                "2 | two'''",
                "  | ^^^ did you mean --recursive?",
                "  |",
            ],
            id="over two lines",
        ),
        pytest.param("one\n", LocationEntry(line=9, column=1), [], id="a line not in the file"),
        pytest.param("one line\n", LocationEntry(), [], id="no line"),
    ],
)
def test_code_frame(text: str, location: LocationEntry, expected: list[str]) -> None:
    assert code_frame(text.split("\n"), location, "did you mean --recursive?") == expected


def test_a_long_line_is_cut_to_a_window_around_the_span() -> None:
    line = "x" * 5000 + " --bad " + "y" * 5000
    frame = code_frame([line], LocationEntry(line=1, column=5002, end_line=1, end_column=5006), "")
    shown, carets = frame[1], frame[2]
    assert len(shown) < 300
    assert shown.startswith("1 | …")
    assert shown.endswith("…")
    assert shown[carets.index("^") : carets.index("^") + 5] == "--bad"
    assert carets.count("^") == 5


def _defective(tmp_path: Path) -> Path:
    return make_project(
        tmp_path,
        [
            {
                **DELETE_TOOL,
                "examples": [
                    {"command": "notes delete 3 --recurse"},
                    {"command": "notes delete 4 --format yaml"},
                ],
            }
        ],
    )


def test_full_is_the_default_and_shows_the_catalog_line_with_carets(tmp_path: Path) -> None:
    project = _defective(tmp_path)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    catalog = (project / "catalog.json").read_text(encoding="utf-8").splitlines()
    number = next(i for i, text in enumerate(catalog, 1) if "--recurse" in text)
    header = next(i for i, text in enumerate(lines) if text.startswith("catalog.json:"))
    assert lines[header].startswith(f"catalog.json:{number}:")
    gutter = f"{number} | "
    assert lines[header + 2] == gutter + catalog[number - 1]
    carets = lines[header + 3]
    start = carets.index("^") - len(gutter)
    assert catalog[number - 1][start : start + len("--recurse")] == "--recurse"
    assert carets.count("^") == len("--recurse")
    assert carets.endswith("did you mean --recursive?")
    assert "  = help: Choose from: text, json" in lines
    assert lines[-1] == "Found 2 errors in 2 examples of 1 tool (2 examples failed)."
    concise = run_cli(["validate", "--format", "concise"], cwd=project)
    text = run_cli(["validate", "--output-format", "text"], cwd=project)
    assert concise.stdout == text.stdout
    assert len(concise.stdout.splitlines()) == 4  # two lines, one help line, the summary


def test_quiet_prints_the_diagnostics_only(tmp_path: Path) -> None:
    project = _defective(tmp_path)
    result = run_cli(["validate", "--quiet", "--format", "concise"], cwd=project)
    assert result.returncode == 1
    assert [line.split(":")[0] for line in result.stdout.splitlines() if line[0] != " "] == [
        "catalog.json",
        "catalog.json",
    ]
    assert "Found" not in result.stdout
    (tmp_path / "clean").mkdir()
    clean = make_project(
        tmp_path / "clean", [{**DELETE_TOOL, "examples": [{"command": "notes delete 3"}]}]
    )
    assert run_cli(["validate", "-q"], cwd=clean).stdout == ""
    # A warning is a diagnostic: --quiet prints it, and no summary.
    (tmp_path / "bare").mkdir()
    bare = make_project(tmp_path / "bare", [{**DELETE_TOOL, "examples": []}])
    warned = run_cli(["validate", "-q", "--format", "concise"], cwd=bare)
    assert warned.returncode == 0
    assert warned.stdout.startswith("catalog.json:")
    assert "tool-without-examples notes.delete" in warned.stdout
    assert "All checks passed" not in warned.stdout


def test_exit_zero_reports_and_exits_0_but_not_for_a_run_it_cannot_evaluate(
    tmp_path: Path,
) -> None:
    project = _defective(tmp_path)
    result = run_cli(["validate", "--exit-zero", "--format", "json"], cwd=project)
    assert result.returncode == 0
    assert json.loads(result.stdout)["ok"] is False
    (project / "catalog.json").write_text("{", encoding="utf-8")
    assert run_cli(["validate", "--exit-zero"], cwd=project).returncode == 2


def test_statistics_counts_diagnostics_by_code(tmp_path: Path) -> None:
    project = _defective(tmp_path)
    result = run_cli(["validate", "--statistics"], cwd=project)
    assert result.returncode == 1
    rows = [line.split() for line in result.stdout.splitlines()]
    assert [(row[0], row[1]) for row in rows] == [("1", "bad-choice"), ("1", "unknown-flag")]
    as_json = run_cli(["validate", "--statistics", "--format", "json"], cwd=project)
    entries = json.loads(as_json.stdout)
    assert [(e["code"], e["count"], e["severity"]) for e in entries] == [
        ("bad-choice", 1, "error"),
        ("unknown-flag", 1, "error"),
    ]
    refused = run_cli(["validate", "--statistics", "--format", "sarif"], cwd=project)
    assert refused.returncode == 2
    assert "--statistics" in refused.stderr


def test_version() -> None:
    result = run_cli(["--version"], cwd=Path.cwd())
    assert result.returncode == 0
    assert result.stdout == f"exampleguard {exampleguard.__version__}\n"
