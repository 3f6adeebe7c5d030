"""Progress on a terminal, and nothing of it anywhere else.

On a real pseudo-terminal, validating a long catalog shows how many examples of how many are
checked, and dry runs show a bar that knows its total, the time so far and what is running.
Into a pipe (CI logs, ``| jq``) nothing is drawn: stderr stays empty and machine formats on
stdout are exactly the report.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import FIXTURE_APPS, REPOSITORY, make_project, run_process
from tests.support.terminal import Terminal

TOOLS = 1500


@pytest.fixture(scope="module")
def long_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalog of 1500 tools with two examples each, one of them wrong."""
    tools: list[dict[str, Any]] = [
        {
            "id": f"notes.c{i}",
            "command": [f"c{i}"],
            "parameters": [
                {"name": "text", "positional": True},
                {"name": "tag", "flags": ["--tag"]},
            ],
            "examples": [
                {"command": f"notes c{i} 'note {i}' --tag t{i}"},
                {"command": f"notes c{i} 'other {i}'"},
            ],
        }
        for i in range(TOOLS)
    ]
    tools[-1]["examples"][1]["command"] = "notes c1499 'other' --tga x"
    return make_project(tmp_path_factory.mktemp("long"), tools)


def _terminal_env() -> dict[str, str]:
    env = dict(os.environ, TERM="xterm-256color")
    env["PYTHONPATH"] = os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)])
    env.pop("NO_COLOR", None)
    return env


def test_validating_a_long_catalog_shows_progress_on_a_terminal(long_catalog: Path) -> None:
    terminal = Terminal(
        [sys.executable, "-m", "exampleguard", "validate", "-f", "json", "-o", "report.json"],
        cwd=long_catalog,
        env=_terminal_env(),
    )
    try:
        code = terminal.wait(timeout=300)
    finally:
        terminal.close()
    assert code == 1, terminal.output
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.output)
    assert "checking examples" in shown, shown
    assert re.search(rf"\b\d+/{2 * TOOLS}\b", shown), shown
    # The report itself is untouched by it.
    report = json.loads((long_catalog / "report.json").read_text(encoding="utf-8"))
    assert report["ok"] is False


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_nothing_is_drawn_into_a_pipe(long_catalog: Path, output_format: str) -> None:
    result = run_process(["validate", "-f", output_format], cwd=long_catalog, env=_terminal_env())
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert "\x1b" not in result.stdout
    if output_format != "text":
        json.loads(result.stdout)
