"""Text from another process is data in every output format (SPEC 6).

An import's error and a dry run's output carry what a hostile or careless program printed:
GitHub Actions workflow commands (``::error``, ``::add-mask::``, ``::stop-commands::``), OSC 52
(the clipboard) and window-title sequences, C0 controls that XML cannot hold. Whatever the
format, no line of exampleguard's output starts such a command, no escape sequence or control
character gets through, and the JUnit, SARIF and JSON reports parse.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from tests.support.project import make_project, run_cli

FORMATS = ["full", "concise", "github", "junit", "json", "sarif"]
# What a hostile program prints: each line would be obeyed by a terminal or a CI runner.
HOSTILE_LINES = [
    "::error file=README.md::forged",
    "  ::add-mask::secret",
    "::stop-commands::token",
    "\x1b]52;c;Y2xpcGJvYXJk\x07",
    "\x1b]0;forged title\x07\x1b[2J",
    "nul\x00 and bell\x07 and vertical tab\x0b",
]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# The annotations exampleguard writes itself: a command name, then properties or the data.
OWN_COMMAND = re.compile(r"^::(error|warning|notice) (file=|title=)")


def assert_inert(output: str, output_format: str) -> None:
    """No control character, no line a runner obeys but exampleguard's own annotations."""
    assert not CONTROL.search(output), repr(CONTROL.search(output))
    for line in output.splitlines():
        if line.lstrip().startswith("::"):
            assert output_format == "github", line
            assert OWN_COMMAND.match(line), line
    if output_format == "junit":
        ET.fromstring(output)
    elif output_format in ("json", "sarif"):
        json.loads(output)


def hostile_import(root: Path) -> Path:
    message = json.dumps("\n".join(HOSTILE_LINES))
    (root / "loud_app.py").write_text(
        f"import sys\nsys.stderr.write({message})\nraise RuntimeError({message})\n",
        encoding="utf-8",
    )
    tool = {"id": "loud", "command": [], "examples": [{"command": "loud"}]}
    return make_project(
        root, [tool], program="loud", dialect=None, tree="click:loud_app:cli", counts=False
    )


@pytest.mark.parametrize("output_format", FORMATS)
def test_an_imports_words_are_data_in_every_format(tmp_path: Path, output_format: str) -> None:
    root = hostile_import(tmp_path)
    result = run_cli(["validate", "--no-cache", "--format", output_format], cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "RuntimeError" in result.stdout + result.stderr
    assert_inert(result.stdout, output_format)
    assert_inert(result.stderr, "text")


def hostile_dry_run(root: Path) -> Path:
    printed = "\\n".join(HOSTILE_LINES).replace("\x1b", "\\033").replace("\x07", "\\007")
    printed = printed.replace("\x00", "\\000").replace("\x0b", "\\013").replace("%", "%%")
    script = f"printf '{printed}\\n' >&2; printf '{printed}\\n'; exit 1"
    tool: dict[str, Any] = {
        "id": "loud.go",
        "command": ["go"],
        "dry_run": {"flag": None, "reviewed": True, "evidence": "the test's own script"},
        "examples": [{"command": "loud go"}],
    }
    settings = {"dryrun": {"executable": ["/bin/sh", "-c", script, "sh"]}}
    return make_project(root, [tool], program="loud", settings=settings)


@pytest.mark.sandbox
@pytest.mark.parametrize("output_format", [*FORMATS, "text"])
def test_a_dry_runs_output_is_data_in_every_format(tmp_path: Path, output_format: str) -> None:
    root = hostile_dry_run(tmp_path)
    result = run_cli(["dryrun", "--format", output_format], cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "dryrun-failed" in result.stdout + result.stderr
    assert_inert(result.stdout, output_format)
    assert_inert(result.stderr, "text")


def test_the_failure_line_is_the_message_not_a_panels_border(tmp_path: Path) -> None:
    # rich-click frames its errors: the last line of its output is the panel's bottom border.
    panel = (
        "Usage: loud go [OPTIONS]\\n╭─ Error ─────────╮\\n│ No such option: --frob │\\n╰─────────╯"
    )
    tool: dict[str, Any] = {
        "id": "loud.go",
        "command": ["go"],
        "dry_run": {"flag": None, "reviewed": True, "evidence": "the test's own script"},
        "examples": [{"command": "loud go"}],
    }
    missing = "cat: settings.toml: No such file or directory"
    script = f"printf '{panel}\\n{missing}\\n' >&2; exit 2"
    settings = {"dryrun": {"executable": ["/bin/sh", "-c", script, "sh"]}}
    root = make_project(tmp_path, [tool], program="loud", settings=settings)
    result = run_cli(["dryrun", "--format", "json"], cwd=root)
    [failed] = [d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "dryrun-failed"]
    assert failed["message"].endswith(missing), failed
    assert "fixtures" in failed["hint"]
    # Without the missing file, the reason is the panel's message, not its border.
    settings["dryrun"]["executable"][2] = f"printf '{panel}\\n' >&2; exit 2"
    root = make_project(tmp_path, [tool], program="loud", settings=settings)
    result = run_cli(["dryrun", "--format", "json"], cwd=root)
    [failed] = [d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "dryrun-failed"]
    assert failed["message"].endswith("No such option: --frob"), failed
    assert "fixtures" not in failed["hint"]
