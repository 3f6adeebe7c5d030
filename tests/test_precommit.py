"""``.pre-commit-hooks.yaml``: the ``exampleguard-validate`` hook, its entry and its file filter.

PyYAML is not a dependency; the hooks file uses a small subset of YAML (a list of flat
mappings with plain, single- or double-quoted scalars and comments), parsed here in a few lines.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.project import REPOSITORY

HOOKS = REPOSITORY / ".pre-commit-hooks.yaml"
SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"


def _scalar(text: str) -> str | bool:
    text = text.strip()
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        return text[1:-1].encode().decode("unicode_escape")
    text = re.sub(r"\s+#.*$", "", text)
    if text in ("true", "false"):
        return text == "true"
    return text


def parse_hooks(text: str) -> list[dict[str, str | bool]]:
    """A list of flat mappings: ``- key: value`` starts an item, ``  key: value`` continues it."""
    hooks: list[dict[str, str | bool]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = re.fullmatch(r"(- |  )([A-Za-z_]+):(?: (.*))?", line)
        assert match, f"line {number} is outside the YAML subset: {line!r}"
        marker, key, value = match.groups()
        if marker == "- ":
            hooks.append({})
        assert hooks, f"line {number} continues no item"
        assert key not in hooks[-1], f"line {number} repeats {key}"
        hooks[-1][key] = _scalar(value or "")
    return hooks


@pytest.fixture(scope="module")
def hook() -> dict[str, str | bool]:
    hooks = parse_hooks(HOOKS.read_text(encoding="utf-8"))
    by_id = {h["id"]: h for h in hooks}
    assert len(by_id) == len(hooks), "hook ids must be unique"
    return by_id["exampleguard-validate"]


def test_the_parser_reads_the_subset() -> None:
    text = "- id: a\n  name: 'A: b'  \n  files: '(^|/)x\\.json$'\n  pass_filenames: false\n# c\n"
    assert parse_hooks(text) == [
        {"id": "a", "name": "A: b", "files": "(^|/)x\\.json$", "pass_filenames": False}
    ]


def test_the_hook_is_declared_completely(hook) -> None:
    assert set(hook) >= {"id", "name", "entry", "language", "files", "pass_filenames"}
    assert hook["language"] == "python"
    # validate reads its own inputs; file names passed as arguments would be bad usage.
    assert hook["pass_filenames"] is False
    assert shlex.split(str(hook["entry"]))[:2] == ["exampleguard", "validate"]


def test_the_entry_is_a_console_script_of_the_package() -> None:
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"]["exampleguard"] == "exampleguard.cli:entry_point"


def test_the_entry_runs_validate(hook, tmp_path) -> None:
    project = tmp_path / "project"
    shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns("*.lock"))
    argv = shlex.split(str(hook["entry"]))
    scripts = Path(sys.executable).parent
    assert (scripts / argv[0]).exists(), "the console script is installed next to the interpreter"
    env = dict(os.environ, PATH=os.pathsep.join([str(scripts), os.environ.get("PATH", "")]))
    env["NO_COLOR"] = "1"
    result = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("All checks passed")
    # And a defect makes the hook fail.
    catalog = project / "catalog.json"
    catalog.write_text(
        catalog.read_text(encoding="utf-8").replace("--format json", "--format yaml"), "utf-8"
    )
    failing = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert failing.returncode == 1
    assert "bad-choice" in failing.stdout


def _configured_catalog() -> str:
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    return str(pyproject["tool"]["exampleguard"]["catalog"])


MATCHED = [
    _configured_catalog(),
    "agent-catalog.json",
    "catalog.json",
    "catalog.toml",
    "tests/fixtures/sample-project/catalog.json",
    "dispositions/x.toml",
    "dispositions/exclusions.toml",
    "sub/project/dispositions/notes.delete.toml",
    "pyproject.toml",
    "tools/cli/pyproject.toml",
    "exampleguard.toml",
    "exampleguard-counts.json",
    "sub/exampleguard-counts.json",
]
NOT_MATCHED = [
    "src/app.py",
    "README.md",
    "dispositions/README.md",
    "notes/cli.py",
    "my-pyproject.toml.bak",
    "setup.cfg",
]


@pytest.mark.parametrize("path", MATCHED)
def test_files_matches_the_inputs_of_validate(hook, path) -> None:
    # pre-commit applies `files` with re.search to repository-relative paths.
    assert re.search(str(hook["files"]), path), path


@pytest.mark.parametrize("path", NOT_MATCHED)
def test_files_does_not_match_unrelated_files(hook, path) -> None:
    assert not re.search(str(hook["files"]), path), path
