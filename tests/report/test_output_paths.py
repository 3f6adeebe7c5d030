"""Every output names files from where the run started; SARIF from the repository root.

A monorepo runs exampleguard from its root with ``--config packages/tool/pyproject.toml``: the
annotations, the text and the JSON must say ``packages/tool/agent-catalog.json`` (what GitHub
attaches to the pull request's file), and SARIF the same path relative to the repository root it
declares in ``originalUriBaseIds``, wherever in the repository the run started.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import make_project, run_main
from tests.support.sarif import sarif_errors

CATALOG_FILE = "packages/tool/agent-catalog.json"

TOOLS: list[dict[str, Any]] = [
    {
        "id": "notes.add",
        "command": ["add"],
        "parameters": [{"name": "text", "positional": True}],
        "examples": [{"command": "notes add --colour red hello"}],
    }
]


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose one tool lives in ``packages/tool``, with one planted defect."""
    root = tmp_path_factory.mktemp("monorepo")
    (root / ".git").mkdir()
    package = root / "packages" / "tool"
    (package / "src").mkdir(parents=True)
    make_project(package, TOOLS)
    (package / "catalog.json").rename(package / "agent-catalog.json")
    (package / "exampleguard.toml").unlink()
    (package / "pyproject.toml").write_text(
        '[project]\nname = "tool"\n\n[tool.exampleguard]\ncatalog = "agent-catalog.json"\n',
        encoding="utf-8",
    )
    return root


def _validate(monorepo: Path, cwd: Path, output_format: str) -> str:
    config = monorepo / "packages" / "tool" / "pyproject.toml"
    result = run_main(
        ["validate", "--config", os.path.relpath(config, cwd), "-f", output_format],
        cwd=cwd,
    )
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_text_names_the_catalog_from_the_repository_root(monorepo: Path) -> None:
    first = _validate(monorepo, monorepo, "text").splitlines()[0]
    assert first.startswith(f"{CATALOG_FILE}:19:33:"), first
    assert "unknown-flag notes.add[0]" in first


def test_github_annotations_attach_to_the_file_of_the_pull_request(monorepo: Path) -> None:
    annotations = _validate(monorepo, monorepo, "github").splitlines()
    assert annotations[0].startswith(f"::error file={CATALOG_FILE},line=19,col=33,"), annotations[0]


def test_json_names_the_catalog_and_each_file_from_the_current_directory(monorepo: Path) -> None:
    report = json.loads(_validate(monorepo, monorepo, "json"))
    assert report["catalog"] == CATALOG_FILE
    assert {d["file"] for d in report["diagnostics"]} == {CATALOG_FILE}


def test_junit_names_the_catalog_from_the_current_directory(monorepo: Path) -> None:
    suite = ET.fromstring(_validate(monorepo, monorepo, "junit"))
    failures = list(suite.iter("failure"))
    assert failures
    assert all(CATALOG_FILE in (f.text or "") for f in failures)
    assert {case.get("classname") for case in suite.iter("testcase")} == {CATALOG_FILE}


def test_inside_the_package_paths_are_relative_to_it(monorepo: Path) -> None:
    package = monorepo / "packages" / "tool"
    first = _validate(monorepo, package, "text").splitlines()[0]
    assert first.startswith("agent-catalog.json:19:33:"), first


def test_below_the_project_paths_are_absolute_like_ruff(monorepo: Path) -> None:
    source = monorepo / "packages" / "tool" / "src"
    first = _validate(monorepo, source, "text").splitlines()[0]
    assert first.startswith(f"{monorepo / CATALOG_FILE}:19:33:"), first


@pytest.mark.parametrize("start", ["", "packages/tool", "packages/tool/src"])
def test_sarif_is_relative_to_the_repository_root_wherever_the_run_starts(
    monorepo: Path, start: str
) -> None:
    log = json.loads(_validate(monorepo, monorepo / start, "sarif"))
    assert sarif_errors(log) == []
    run = log["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": monorepo.as_uri() + "/"}}
    places = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert places
    assert all(p == {"uri": CATALOG_FILE, "uriBaseId": "%SRCROOT%"} for p in places)


def test_sarif_outside_a_repository_is_relative_to_the_current_directory(
    tmp_path: Path,
) -> None:
    make_project(tmp_path, TOOLS)
    result = run_main(["validate", "-f", "sarif"], cwd=tmp_path)
    run = json.loads(result.stdout)["runs"][0]
    # tmp_path is not inside a repository: the current directory is the base.
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "catalog.json", "uriBaseId": "%SRCROOT%"}
