"""Where an example's diagnostics are: any span of an example maps to its region in the file.

A region is checked against the file's own text: the characters from its start to its end
(inclusive) must be exactly the offending text as the file writes it — escapes, a line-ending
backslash, a multi-line string and all. Nothing is hard-coded but the example and the file.
"""

from __future__ import annotations

from pathlib import Path

from exampleguard.config import load_config
from exampleguard.diagnostics import Location
from exampleguard.pipeline import evaluate, load_inputs
from tests.support.project import make_project


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


def test_a_diagnostic_region_covers_the_offending_word_as_written(tmp_path: Path) -> None:
    """Through the real pipeline: the region of a bad choice written with escaped quotes."""
    tool = {
        "id": "notes.list",
        "command": ["list"],
        "parameters": [
            {"name": "tag", "flags": ["--tag"]},
            {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
        ],
        "examples": [{"command": 'notes list --tag "a\\"b" --format "yaml"'}],
    }
    make_project(tmp_path, [tool])
    text = (tmp_path / "catalog.json").read_text(encoding="utf-8")
    evaluation = evaluate(load_inputs(load_config(None, tmp_path)))
    (found,) = [d for d in evaluation.diagnostics if d.code == "bad-choice"]
    assert found.location is not None
    assert region_text(text, found.location) == '\\"yaml\\"'
    assert found.location.end_line == found.location.line
