"""Projects whose documentation files are checked: the sample ``notes`` project, or a real CLI."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exampleguard._commands.validate import validate
from exampleguard._config import load_config
from exampleguard._report import Report
from tests.support.project import REPOSITORY, run_cli, write_config

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
DOC_FIXTURES = REPOSITORY / "tests" / "fixtures" / "docs"


def notes_docs_project(root: Path, files: Mapping[str, str], **settings: Any) -> Path:
    """The sample project (a ``notes`` tree snapshot and catalog) with ``files`` beside it."""
    for name in ("catalog.json", "notes.tree.json", "exampleguard-counts.json"):
        shutil.copy(SAMPLE / name, root / name)
    shutil.copytree(SAMPLE / "dispositions", root / "dispositions")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    write_config(root, {"catalog": "catalog.json", "tree": "notes.tree.json", **settings})
    return root


def tree_docs_project(
    root: Path, program: str, tree: str, files: Mapping[str, str], **settings: Any
) -> Path:
    """A project of a real CLI (``tree``) with no tools and ``files`` as its docs."""
    (root / "catalog.json").write_text(
        json.dumps({"format": "exampleguard.catalog/v1", "program": program, "tools": []}),
        encoding="utf-8",
    )
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    write_config(root, {"catalog": "catalog.json", "tree": tree, "docs": list(files), **settings})
    return root


def report_of(root: Path) -> Report:
    """The report of ``validate`` in ``root`` (the run must be evaluable)."""
    outcome = validate(load_config(None, root))
    assert outcome.report is not None, outcome.unusable
    return outcome.report


def located(report: Report, file: str) -> list[tuple[int, int | None, str]]:
    """``(line, column, code)`` of every diagnostic located in ``file``, in report order."""
    return [
        (d.location.line, d.location.column, d.code)
        for d in report.diagnostics
        if d.file == file and d.location is not None and d.location.line is not None
    ]


def doc_examples(report: Report, file: str) -> dict[str, str]:
    """``address -> command`` of the examples of ``file`` the run checked."""
    return {
        e.address: e.command
        for e in report.examples
        if e.address is not None and e.address.startswith(f"{file}:")
    }


def write_counts(root: Path) -> None:
    """Record the project's counts (its docs examples included), as a maintainer commits them."""
    result = run_cli(["counts", "--write"], cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
