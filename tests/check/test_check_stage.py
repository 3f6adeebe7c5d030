"""The check stage works on data: it is handed everything it reads and opens no file."""

from __future__ import annotations

import builtins
import io
import os
import pathlib
from pathlib import Path
from typing import Any, NoReturn

import pytest

from exampleguard._check import CheckSettings, evaluate
from exampleguard._config import load_config
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._pipeline import load_inputs, run
from exampleguard._report import build_report
from exampleguard._sources._records import Layout
from tests.inputs.test_docs_examples import docs_project

# A README with a good example, an unknown option, a bad choice and a placeholder: every kind of
# diagnostic a catalog or document example can carry, each needing a place in its file.
README = """# notes

```console
$ notes add --title "x" --body y
$ notes add --titel "x"
$ notes list --format yaml
$ notes show <id>
```
"""


def _refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError(f"the check stage opened a file: {args!r}")


def _no_lines(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError(f"the check stage computed a line and column: {args!r}")


def test_the_check_stage_opens_no_file_and_places_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(None, docs_project(tmp_path, README))
    inputs = load_inputs(config)
    contract = build_contract(inputs.catalog, inputs.tree)
    settings = CheckSettings(max_example_chars=4096, bypass_flags=("--yes",))
    for where, name, refusal in (
        (builtins, "open", _refuse),
        (io, "open", _refuse),
        (os, "open", _refuse),
        (pathlib.Path, "open", _refuse),
        (pathlib.Path, "read_text", _refuse),
        (pathlib.Path, "read_bytes", _refuse),
        # Lines and columns are the report builder's: every way of computing one is refused.
        (Document, "line_column", _no_lines),
        (Document, "location", _no_lines),
        (Document, "string_location", _no_lines),
        (Layout, "location", _no_lines),
    ):
        monkeypatch.setattr(where, name, refusal)
    results = evaluate(contract, inputs.examples, inputs.verdicts, settings)
    monkeypatch.undo()
    assert len(results) == len(inputs.examples) + len(inputs.examples.named)
    found = [d for result in results for d in result.diagnostics]
    assert "unknown-flag" in {d.code for d in found}
    assert all(d.location is None and d.region is not None for d in found)


def test_the_report_builder_places_each_region_once(tmp_path: Path) -> None:
    """The report gives every example diagnostic its line, and an example's is the report's."""
    evaluation = run(load_inputs(load_config(None, docs_project(tmp_path, README))))
    report = build_report(evaluation)
    placed = [d for d in report.diagnostics if d.file == "README.md"]
    assert placed
    assert all(d.location is not None and d.location.line is not None for d in placed)
    by_example = [d for example in report.examples for d in example.diagnostics]
    assert all(any(d is entry for entry in report.diagnostics) for d in by_example)
