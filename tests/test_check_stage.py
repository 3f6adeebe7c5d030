"""The check stage works on data: it is handed everything it reads and opens no file."""

from __future__ import annotations

import builtins
import io
import os
import pathlib
from pathlib import Path
from typing import Any, NoReturn

import pytest

from exampleguard.check import CheckSettings, evaluate
from exampleguard.config import load_config
from exampleguard.contract import build_contract
from exampleguard.pipeline import load_inputs
from tests.test_docs_examples import docs_project

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


def test_the_check_stage_opens_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = load_inputs(load_config(None, docs_project(tmp_path, README)))
    contract = build_contract(inputs.catalog, inputs.tree)
    settings = CheckSettings(max_example_chars=4096, bypass_flags=("--yes",))
    for where, name in (
        (builtins, "open"),
        (io, "open"),
        (os, "open"),
        (pathlib.Path, "open"),
        (pathlib.Path, "read_text"),
        (pathlib.Path, "read_bytes"),
    ):
        monkeypatch.setattr(where, name, _refuse)
    results = evaluate(contract, inputs.examples, inputs.verdicts, settings)
    monkeypatch.undo()
    assert len(results) == len(inputs.examples) + len(inputs.examples.named)
    located = [d for result in results for d in result.diagnostics if d.location is not None]
    assert "unknown-flag" in {d.code for d in located}
