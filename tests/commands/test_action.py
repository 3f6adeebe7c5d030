"""``action.yml``: the composite GitHub Action, its steps run for real on a scratch project.

There is no Actions runner here, so the runner's part is played as it is documented: each step's
``run:`` script is run with ``bash --noprofile --norc -eo pipefail`` (a composite step's ``shell:
bash``), its ``env:`` given the inputs (``${{ inputs.NAME }}``, the only expressions the action
uses, defaults from ``action.yml``), ``GITHUB_ACTION_PATH`` naming this checkout and the job's
Python first on PATH. That Python is a fresh virtualenv: the install step really installs
exampleguard from the action's checkout with pip, next to the user's project (a small Click CLI
whose catalog is right, then wrong), and the run step's exit code is what fails the job.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.project import REPOSITORY
from tests.support.sarif import sarif_errors

ACTION = REPOSITORY / "action.yml"
SHELL = ("bash", "--noprofile", "--norc", "-eo", "pipefail")
"""What a runner runs a composite step's ``shell: bash`` script with."""
_INPUT = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")

CLI = '''\
import click


@click.group()
def cli():
    """Keep notes."""


@cli.command()
@click.option("--colour", type=click.Choice(["red", "green"]))
@click.option("--dry-run", is_flag=True, help="Print the note; store nothing.")
@click.argument("text")
def add(colour, dry_run, text):
    """Add a note."""
    click.echo(f"would add {text!r}" if dry_run else f"added {text!r}")
'''
CATALOG: dict[str, Any] = {
    "format": "exampleguard.catalog/v1",
    "program": "notes",
    "tools": [
        {
            "id": "notes.add",
            "command": ["add"],
            "dry_run": {
                "flag": "--dry-run",
                "reviewed": True,
                "evidence": "notes_cli.py: add --dry-run only echoes the note",
            },
            "examples": [{"command": "notes add --colour red 'Buy milk'"}],
        }
    ],
}


def action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


@dataclass
class Job:
    """What the steps of one use of the action did: each step's exit code and output."""

    steps: list[subprocess.CompletedProcess[str]]

    @property
    def returncode(self) -> int:
        """The job's verdict: the first step that failed, else 0."""
        return next((s.returncode for s in self.steps if s.returncode), 0)

    @property
    def log(self) -> str:
        return "".join(s.stdout + s.stderr for s in self.steps)


def run_action(
    workspace: Path, python: Path, scratch: Path, inputs: Mapping[str, str] | None = None
) -> Job:
    """Run the action's steps in order, as a runner does, until one fails."""
    spec = action()
    given = dict(inputs or {})
    values = {name: str(entry.get("default", "")) for name, entry in spec["inputs"].items()}
    assert set(given) <= set(values), f"not inputs of the action: {set(given) - set(values)}"
    values.update(given)
    base = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    base.update(
        PATH=os.pathsep.join([str(python.parent), base.get("PATH", "")]),
        GITHUB_ACTION_PATH=str(REPOSITORY),
        GITHUB_WORKSPACE=str(workspace),
        XDG_CACHE_HOME=str(scratch / "cache"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        NO_COLOR="1",
    )
    steps = []
    for number, step in enumerate(spec["runs"]["steps"]):
        env = dict(base)
        for name, value in (step.get("env") or {}).items():
            env[name] = _INPUT.sub(lambda match: values[match.group(1)], str(value))
        script = scratch / f"step-{number}.sh"
        script.write_text(step["run"], encoding="utf-8")
        done = subprocess.run(
            [*SHELL, str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        steps.append(done)
        if done.returncode:
            break
    return Job(steps)


# -- the action file ------------------------------------------------------------------------------


def test_the_action_is_composite_and_takes_the_documented_inputs() -> None:
    spec = action()
    assert spec["runs"]["using"] == "composite"
    assert set(spec["inputs"]) == {"config", "format", "sarif", "dryrun", "install"}
    for name, entry in spec["inputs"].items():
        assert entry.get("description"), name
        assert isinstance(entry.get("default"), str), name
    for step in spec["runs"]["steps"]:
        assert step["shell"] == "bash"
        # Inputs reach a script through env only: an expression inside a script would be
        # pasted into it before bash reads it (a quote in an input would end the string).
        assert "${{" not in step["run"], step["name"]
        for value in (step.get("env") or {}).values():
            assert _INPUT.fullmatch(str(value)), value


def test_the_docs_workflow_uses_only_the_action_s_inputs() -> None:
    page = (REPOSITORY / "docs" / "ci.md").read_text(encoding="utf-8")
    start = page.index("```yaml\n", page.index("## GitHub Actions")) + len("```yaml\n")
    workflow = yaml.safe_load(page[start : page.index("```", start)])
    steps = workflow["jobs"]["exampleguard"]["steps"]
    ours = [s for s in steps if str(s.get("uses", "")).split("@")[0].endswith("/exampleguard")]
    assert ours, "the documented workflow uses the action"
    inputs = set(action()["inputs"])
    for step in ours:
        assert set(step.get("with") or {}) <= inputs, step
        # Pinned to a commit until the first release tag.
        assert re.fullmatch(r"[^@]+@[0-9a-f]{40}|[^@]+@<commit>", step["uses"]), step["uses"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action"))
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["if"] == "always()"
    assert upload["with"]["sarif_file"] == next(s["with"]["sarif"] for s in ours)


# -- the steps, run ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def job_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The job's Python: a fresh virtualenv with pip, and Click (the user's dependency)."""
    venv = tmp_path_factory.mktemp("job") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "click"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    # The action's own install step, once for the module: the tests that do not test it run
    # with install "false" on what it installed.
    (install, *_) = action()["runs"]["steps"]
    script = venv.parent / "install.sh"
    script.write_text(install["run"], encoding="utf-8")
    done = subprocess.run(
        [*SHELL, str(script)],
        env={
            **os.environ,
            "PATH": os.pathsep.join([str(python.parent), os.environ.get("PATH", "")]),
            "GITHUB_ACTION_PATH": str(REPOSITORY),
            "EXAMPLEGUARD_INSTALL": "true",
        },
        cwd=venv.parent,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return python


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The user's checkout: the notes CLI, its catalog, configuration and counts."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "notes_cli.py").write_text(CLI, encoding="utf-8")
    (root / "agent-catalog.json").write_text(json.dumps(CATALOG, indent=2), encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "notes"\nversion = "1.0"\n\n[project.scripts]\n'
        'notes = "notes_cli:cli"\n\n[tool.exampleguard]\ncatalog = "agent-catalog.json"\n'
        'tree = "click:notes_cli:cli"\n',
        encoding="utf-8",
    )
    written = subprocess.run(
        [sys.executable, "-m", "exampleguard", "counts", "--write"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert written.returncode == 0, written.stdout + written.stderr
    return root


def _break_the_example(workspace: Path) -> None:
    catalog = workspace / "agent-catalog.json"
    text = catalog.read_text(encoding="utf-8")
    catalog.write_text(text.replace("--colour red", "--color red"), encoding="utf-8")


def test_a_valid_catalog_passes_and_writes_sarif(
    workspace: Path, job_python: Path, tmp_path: Path
) -> None:
    job = run_action(workspace, job_python, tmp_path, {"sarif": "exampleguard.sarif"})

    assert job.returncode == 0, job.log
    assert len(job.steps) == 2
    # Installed from the action's checkout into the job's Python, which runs it.
    assert (job_python.parent / "exampleguard").exists()
    assert job.steps[0].stdout.startswith("exampleguard ")
    assert "::notice title=exampleguard::1 example checked; the run passed" in job.log
    log = json.loads((workspace / "exampleguard.sarif").read_text(encoding="utf-8"))
    assert sarif_errors(log) == []
    assert log["runs"][0]["results"] == []


def test_a_wrong_example_fails_the_job_with_an_annotation_and_a_sarif_result(
    workspace: Path, job_python: Path, tmp_path: Path
) -> None:
    _break_the_example(workspace)

    job = run_action(
        workspace, job_python, tmp_path, {"sarif": "exampleguard.sarif", "install": "false"}
    )

    assert job.returncode == 1, job.log
    assert re.search(r"^::error file=agent-catalog\.json,line=\d+.*unknown-flag", job.log, re.M)
    log = json.loads((workspace / "exampleguard.sarif").read_text(encoding="utf-8"))
    # `--color red 'Buy milk'`: an unknown flag, and its value left over as a second argument.
    rules = [r["ruleId"] for r in log["runs"][0]["results"]]
    assert rules == ["unknown-flag", "extra-positional"]
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "agent-catalog.json"


def test_the_inputs_reach_exampleguard(workspace: Path, job_python: Path, tmp_path: Path) -> None:
    # A configuration named by `config` (run from elsewhere), a format of the user's, and the
    # exampleguard already installed (install: "false").
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _break_the_example(workspace)
    job = run_action(
        elsewhere,
        job_python,
        tmp_path,
        {"config": str(workspace / "pyproject.toml"), "format": "concise", "install": "false"},
    )
    assert job.returncode == 1, job.log
    assert f"{workspace}/agent-catalog.json:" in job.log
    assert "unknown-flag notes.add[0]: --color is not an option of 'notes add'" in job.log
    assert job.log.rstrip().endswith("(1 example failed).")


def test_a_run_that_cannot_be_evaluated_is_exit_2(
    workspace: Path, job_python: Path, tmp_path: Path
) -> None:
    (workspace / "agent-catalog.json").write_text("{", encoding="utf-8")
    job = run_action(workspace, job_python, tmp_path, {"install": "false"})
    assert job.returncode == 2, job.log
    assert "file-invalid" in job.log


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_dryrun_runs_the_reviewed_preview(
    workspace: Path, job_python: Path, tmp_path: Path
) -> None:
    # The user's project installed in the job's Python: its `notes` script is what runs.
    installed = subprocess.run(
        [str(job_python), "-m", "pip", "install", "--quiet", "--no-deps", str(workspace)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    job = run_action(
        workspace, job_python, tmp_path, {"dryrun": "true", "format": "json", "install": "false"}
    )
    assert job.returncode == 0, job.log
    report = json.loads(job.steps[-1].stdout)
    (run,) = report["dry_runs"]
    assert run["status"] == "passed", run
    assert run["stdout"] == "would add 'Buy milk'\n"
