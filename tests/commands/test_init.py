"""``exampleguard init`` on the fixture apps: a clean start, and a refusal that changes nothing."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.support.project import REPOSITORY, run_cli

CLICK = "click:click_app:cli"
CLICK_LEAVES = [
    ["add"],
    ["delete"],
    ["grep"],
    ["run"],
    ["tags", "merge"],
    ["tags", "rename"],
    ["view", "page"],
    ["view", "show"],
]
PYPROJECT = """\
[project]
name = "notes"   # the application
version = "1.0"

# Formatting, kept exactly as it was.
[tool.ruff]
line-length = 90"""


def _files(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root`` (folders as ``None``), with the files' bytes."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
    }


def _init(root: Path, spec: str = CLICK, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["init", "--tree", spec, "--program", "notes", *extra], cwd=root)


def test_init_in_an_empty_project_then_validate_is_clean(tmp_path: Path) -> None:
    result = _init(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "agent-catalog.json (8 tools, no examples yet)" in result.stdout
    config = tomllib.loads((tmp_path / "exampleguard.toml").read_text(encoding="utf-8"))
    assert config == {"catalog": "agent-catalog.json", "tree": CLICK}
    catalog = json.loads((tmp_path / "agent-catalog.json").read_text(encoding="utf-8"))
    assert catalog["format"] == "exampleguard.catalog/v1"
    assert catalog["program"] == "notes"
    # One tool per public runnable leaf: not the hidden `debug`, not the groups.
    assert [tool["command"] for tool in catalog["tools"]] == CLICK_LEAVES
    assert [tool["id"] for tool in catalog["tools"]][:2] == ["notes.add", "notes.delete"]
    assert all(tool["examples"] == [] for tool in catalog["tools"])
    # `delete` has -n/--dry-run: an unreviewed stub, which makes nothing eligible.
    stubs = {tool["id"]: tool["dry_run"] for tool in catalog["tools"] if "dry_run" in tool}
    assert stubs == {"notes.delete": {"flag": "--dry-run", "reviewed": False, "evidence": ""}}
    assert "program: notes (from --program)" in result.stdout
    # The next steps in the catalog's own syntax (JSON), with plurals a person writes.
    assert '"examples": [{"command": "notes ..."}]' in result.stdout
    assert "review: 1 tool has an unreviewed dry_run stub for its preview flag" in result.stdout
    assert '`"reviewed": true`' in result.stdout
    assert "(s)" not in result.stdout
    assert "reviewed = true" not in result.stdout
    assert (tmp_path / "dispositions").is_dir()
    assert [p.name for p in (tmp_path / "dispositions").iterdir()] == [".gitkeep"]
    counts = json.loads((tmp_path / "exampleguard-counts.json").read_text(encoding="utf-8"))
    assert counts == {
        "format": "exampleguard.counts/v1",
        "tools": 8,
        "examples": 0,
        "contract_validated": 0,
        "dry_run_eligible": 0,
        "dry_run_narrowed": 0,
        "excluded": 0,
    }
    # Nothing is wrong, and nothing looks greener than it is: every tool without an example
    # is named (a warning each), and the summary counts them.
    validated = run_cli(["validate", "--format", "concise"], cwd=tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    lines = validated.stdout.splitlines()
    assert lines[-1] == (
        "All checks passed: 0 examples of 8 tools, 8 tools without examples (8 warnings)."
    )
    warned = [line for line in lines if "tool-without-examples" in line]
    assert len(warned) == 8
    assert warned[0].startswith(
        "agent-catalog.json:11:7: tool-without-examples notes.add: no examples: agents get no "
        "worked example of 'notes add'"
    )


@pytest.mark.parametrize(
    ("spec", "tools"),
    [
        pytest.param("typer:typer_app:app", 3, id="typer"),
        pytest.param("argparse:argparse_app:build_parser", 6, id="argparse factory"),
        pytest.param("argparse:argparse_app:parser", 6, id="argparse parser"),
    ],
)
def test_init_on_other_frameworks_then_validate_is_clean(
    tmp_path: Path, spec: str, tools: int
) -> None:
    result = _init(tmp_path, spec)
    assert result.returncode == 0, result.stderr
    catalog = json.loads((tmp_path / "agent-catalog.json").read_text(encoding="utf-8"))
    assert len(catalog["tools"]) == tools
    validated = run_cli(["validate"], cwd=tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_the_starter_catalog_takes_examples(tmp_path: Path) -> None:
    assert _init(tmp_path).returncode == 0
    path = tmp_path / "agent-catalog.json"
    catalog = json.loads(path.read_text(encoding="utf-8"))
    delete = next(tool for tool in catalog["tools"] if tool["command"] == ["delete"])
    delete["examples"] = [{"command": "notes delete 3 4 --dry-run"}]
    path.write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    drift = run_cli(["validate"], cwd=tmp_path)
    assert drift.returncode == 1
    assert "counts-drift" in drift.stdout
    assert run_cli(["counts", "--write"], cwd=tmp_path).returncode == 0
    clean = run_cli(["validate"], cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout


@pytest.mark.parametrize("newline_at_end", [True, False], ids=["newline at end", "no newline"])
def test_init_keeps_every_line_of_an_existing_pyproject(
    tmp_path: Path, newline_at_end: bool
) -> None:
    old = PYPROJECT + ("\n" if newline_at_end else "")
    (tmp_path / "pyproject.toml").write_text(old, encoding="utf-8")
    result = _init(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "pyproject.toml [tool.exampleguard]" in result.stdout
    assert not (tmp_path / "exampleguard.toml").exists()
    new = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert new.startswith(old)
    data = tomllib.loads(new)
    assert data["project"] == {"name": "notes", "version": "1.0"}
    assert data["tool"]["ruff"] == {"line-length": 90}
    assert data["tool"]["exampleguard"] == {"catalog": "agent-catalog.json", "tree": CLICK}
    validated = run_cli(["validate"], cwd=tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr


@pytest.mark.parametrize(
    "existing", [None, PYPROJECT + "\n"], ids=["exampleguard.toml", "pyproject.toml"]
)
def test_init_twice_refuses_the_second_time_and_changes_nothing(
    tmp_path: Path, existing: str | None
) -> None:
    if existing is not None:
        (tmp_path / "pyproject.toml").write_text(existing, encoding="utf-8")
    assert _init(tmp_path).returncode == 0
    before = _files(tmp_path)
    again = _init(tmp_path)
    assert again.returncode == 2
    assert again.stdout == ""
    assert "changed nothing" in again.stderr
    assert "already exists" in again.stderr
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        pytest.param(
            "pyproject.toml",
            '[project]\nname = "notes"\n\n[tool.exampleguard]\ncatalog = "mine.json"\n',
            "already has a [tool.exampleguard] table",
            id="a [tool.exampleguard] table",
        ),
        pytest.param(
            "exampleguard.toml", 'catalog = "mine.json"\n', "exampleguard.toml", id="config"
        ),
        pytest.param("agent-catalog.json", "{}\n", "agent-catalog.json", id="catalog"),
        pytest.param("exampleguard-counts.json", "{}\n", "exampleguard-counts.json", id="counts"),
    ],
)
def test_init_refuses_when_anything_it_writes_exists(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    before = _files(tmp_path)
    result = _init(tmp_path)
    assert result.returncode == 2
    assert reason in result.stderr
    assert "changed nothing" in result.stderr
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        pytest.param("agent-catalog.json", "agent-catalog.json already exists", id="catalog"),
        pytest.param("exampleguard.toml", "exampleguard.toml already exists", id="config"),
        pytest.param("pyproject.toml", "pyproject.toml is a symlink", id="pyproject"),
    ],
)
@pytest.mark.parametrize("dangling", [True, False], ids=["dangling", "to-a-file"])
def test_init_never_replaces_a_symlink(
    tmp_path: Path, name: str, reason: str, dangling: bool
) -> None:
    # Written by rename, the link would become a file; the file it points to (or would) is
    # left as it was, and the repository loses the link.
    target = tmp_path / "elsewhere"
    if not dangling:
        target.write_text("[project]\nname = 'notes'\n", encoding="utf-8")
    (tmp_path / name).symlink_to("elsewhere")
    before = _files(tmp_path)
    result = _init(tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert reason in result.stderr
    assert "changes nothing" in result.stderr
    assert (tmp_path / name).is_symlink()
    assert _files(tmp_path) == before


BROKEN_SPECS = [
    pytest.param("click:no_such_module:cli", "tree-unavailable", id="module not found"),
    pytest.param("click:click_app:no_such_attribute", "tree-unavailable", id="no such attribute"),
    pytest.param("click:click_app", "config-invalid", id="no attribute part"),
    pytest.param("nonsense", "config-invalid", id="not a spec"),
    pytest.param("missing.tree.json", "file-unreadable", id="missing snapshot"),
]


@pytest.mark.parametrize(("spec", "code"), BROKEN_SPECS)
@pytest.mark.parametrize("existing", [None, PYPROJECT], ids=["empty project", "with pyproject"])
def test_init_with_a_broken_tree_spec_changes_nothing(
    tmp_path: Path, spec: str, code: str, existing: str | None
) -> None:
    if existing is not None:
        (tmp_path / "pyproject.toml").write_text(existing, encoding="utf-8")
    before = _files(tmp_path)
    result = _init(tmp_path, spec)
    assert result.returncode == 2
    assert code in result.stderr
    assert "changed nothing" in result.stderr
    assert "Traceback" not in result.stderr
    assert _files(tmp_path) == before


def test_init_that_fails_after_loading_the_tree_changes_nothing(tmp_path: Path) -> None:
    # An unreadable record in an existing dispositions/ folder stops the counts step, after the
    # catalog and configuration were written: they must be taken back.
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "dispositions").mkdir()
    (tmp_path / "dispositions" / "old.toml").write_text("[[disposition]\n", encoding="utf-8")
    before = _files(tmp_path)
    result = _init(tmp_path)
    assert result.returncode == 2
    assert "dispositions/old.toml" in result.stderr
    assert _files(tmp_path) == before


def test_a_reviewed_stub_becomes_eligible_and_changes_the_counts(tmp_path: Path) -> None:
    assert _init(tmp_path).returncode == 0
    catalog_path = tmp_path / "agent-catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    delete = next(tool for tool in catalog["tools"] if tool["id"] == "notes.delete")
    delete["examples"] = [{"command": "notes delete 3"}]
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    assert run_cli(["counts", "--write"], cwd=tmp_path).returncode == 0
    counts = json.loads((tmp_path / "exampleguard-counts.json").read_text(encoding="utf-8"))
    assert counts["dry_run_eligible"] == 0  # the stub does not count
    delete["dry_run"] = {"flag": "--dry-run", "reviewed": True, "evidence": "cli.py: only lists"}
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    result = run_cli(["validate", "--format", "concise"], cwd=tmp_path)
    assert result.returncode == 1
    assert "counts-drift" in result.stdout
    assert "dry_run_eligible: 0 -> 1" in result.stdout


@pytest.mark.parametrize(
    ("dry_run", "fragment"),
    [
        pytest.param(
            {"flag": "--dry-run", "reviewed": True, "evidence": " "},
            "needs evidence",
            id="reviewed without evidence",
        ),
        pytest.param(
            {"flag": "--dry-run", "reviewed": "false"},
            "tools[1].dry_run.reviewed",
            id="reviewed not a boolean",
        ),
    ],
)
def test_only_a_literal_true_with_evidence_is_a_capability(
    tmp_path: Path, dry_run: dict[str, object], fragment: str
) -> None:
    assert _init(tmp_path).returncode == 0
    catalog_path = tmp_path / "agent-catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["tools"][1]["dry_run"] = dry_run
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert fragment in result.stderr


def test_an_unreviewed_stub_with_a_flag_the_command_lacks_is_reported(tmp_path: Path) -> None:
    assert _init(tmp_path).returncode == 0
    catalog_path = tmp_path / "agent-catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["tools"][0]["dry_run"] = {"flag": "--preview", "reviewed": False}
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    result = run_cli(["validate", "--format", "concise"], cwd=tmp_path)
    assert result.returncode == 1
    assert "dryrun-flag-unknown" in result.stdout


def test_the_docs_complete_catalog_entry_passes(tmp_path: Path) -> None:
    page = (REPOSITORY / "docs" / "getting-started.md").read_text(encoding="utf-8")
    start = page.index("```json\n", page.index("A complete entry looks like this")) + 8
    entry = json.loads(page[start : page.index("```", start)])
    (tmp_path / "catalog.json").write_text(json.dumps(entry), encoding="utf-8")
    (tmp_path / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    assert run_cli(["counts", "--write"], cwd=tmp_path).returncode == 0
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    counts = json.loads((tmp_path / "exampleguard-counts.json").read_text(encoding="utf-8"))
    assert counts["dry_run_eligible"] == 2


# -- the program agents type, from the package's own entry points ---------------------------------

BUMP_CLI = """\
import click


@click.group()
def cli():
    \"\"\"Bump versions.\"\"\"


@cli.command()
@click.option("--new-version")
@click.argument("part")
def bump(new_version, part):
    \"\"\"Bump a part of the version.\"\"\"


def main():
    cli(obj={})
"""


def _bump_project(root: Path, scripts: str, *, source_folder: str = "") -> Path:
    """A package `bumpversion` whose Click group is `cli`, and a pyproject with ``scripts``."""
    package = root / source_folder / "bumpversion" if source_folder else root / "bumpversion"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "cli.py").write_text(BUMP_CLI, encoding="utf-8")
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "bump-my-version"\nversion = "1.0"\n\n{scripts}', encoding="utf-8"
    )
    (root / "README.md").write_text(
        "# bump\n\n```sh\nbump-my-version bump --new 2.0 patch\n```\n", encoding="utf-8"
    )
    return root


def test_init_takes_the_program_from_the_script_that_runs_the_tree(tmp_path: Path) -> None:
    # The group is called `cli` in a package called `bumpversion`; people and agents type the
    # script's name. Without --program, init must use the script, and say so.
    _bump_project(
        tmp_path,
        '[project.scripts]\nbump-my-version = "bumpversion.cli:cli"\nother = "elsewhere:cli"\n',
    )
    result = run_cli(["init", "--tree", "click:bumpversion.cli:cli"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        'program: bump-my-version (from [project.scripts] bump-my-version = "bumpversion.cli:cli"'
        in result.stdout
    )
    catalog = json.loads((tmp_path / "agent-catalog.json").read_text(encoding="utf-8"))
    assert catalog["program"] == "bump-my-version"
    assert [tool["id"] for tool in catalog["tools"]] == ["bump-my-version.bump"]
    # The README's example names the script: it is checked, not silently passed over.
    validated = run_cli(["validate", "--format", "concise"], cwd=tmp_path)
    assert validated.returncode == 1, validated.stdout + validated.stderr
    assert (
        "README.md:4:22: unknown-flag --new is not an option of 'bump-my-version bump' "
        "(did you mean --new-version?)" in validated.stdout
    )


@pytest.mark.parametrize(
    ("scripts", "source_folder"),
    [
        pytest.param(
            '[project.scripts]\nbump-my-version = "bumpversion.cli:main"\n', "", id="main()"
        ),
        pytest.param(
            '[project.scripts]\nbump-my-version = "bumpversion.cli:main"\n',
            "src",
            id="src layout",
        ),
        pytest.param(
            '[project.gui-scripts]\nbump-my-version = "bumpversion.cli:cli"\n', "", id="gui"
        ),
        pytest.param(
            '[project.scripts]\nbump-my-version = "bumpversion.cli:cli [extra]"\n',
            "",
            id="with extras",
        ),
    ],
)
def test_init_finds_the_script_in_every_form(
    tmp_path: Path, scripts: str, source_folder: str
) -> None:
    _bump_project(tmp_path, scripts, source_folder=source_folder)
    if source_folder:
        # The tree is imported from the project's root: put the source folder on its path.
        (tmp_path / "bumpversion").symlink_to(tmp_path / source_folder / "bumpversion")
    result = run_cli(["init", "--tree", "click:bumpversion.cli:cli"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "program: bump-my-version (from [project." in result.stdout
    catalog = json.loads((tmp_path / "agent-catalog.json").read_text(encoding="utf-8"))
    assert catalog["program"] == "bump-my-version"


def test_init_names_every_script_that_runs_the_tree(tmp_path: Path) -> None:
    _bump_project(
        tmp_path,
        '[project.scripts]\nbump-my-version = "bumpversion.cli:cli"\n'
        'bumpversion = "bumpversion.cli:main"\n',
    )
    result = run_cli(["init", "--tree", "click:bumpversion.cli:cli"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "bumpversion also runs it; pass --program to choose another" in result.stdout
    catalog = json.loads((tmp_path / "agent-catalog.json").read_text(encoding="utf-8"))
    assert catalog["program"] == "bump-my-version"


def test_init_says_when_no_script_runs_the_tree(tmp_path: Path) -> None:
    # `show` is a function of the module, but it does not run the group: not the tree's script.
    _bump_project(tmp_path, '[project.scripts]\nbump-show = "bumpversion.cli:bump"\n')
    result = run_cli(["init", "--tree", "click:bumpversion.cli:cli"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "program: bumpversion (the tree's own name: no [project.scripts] entry" in result.stdout
    assert "pass --program if agents type another name" in result.stdout


def test_an_explicit_program_wins_over_the_scripts(tmp_path: Path) -> None:
    _bump_project(tmp_path, '[project.scripts]\nbump-my-version = "bumpversion.cli:cli"\n')
    result = run_cli(
        ["init", "--tree", "click:bumpversion.cli:cli", "--program", "bmv"], cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "program: bmv (from --program)" in result.stdout
    catalog = json.loads((tmp_path / "agent-catalog.json").read_text(encoding="utf-8"))
    assert catalog["program"] == "bmv"


# -- init --cobra ---------------------------------------------------------------------------------


def go_module(root: Path, module: str = "example.com/app") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "go.mod").write_text(f"module {module}\n\ngo 1.19\n", encoding="utf-8")
    return root


def test_init_cobra_writes_the_helper_at_the_module_root(tmp_path: Path) -> None:
    module = go_module(tmp_path / "app")
    below = module / "cmd" / "app"
    below.mkdir(parents=True)
    result = run_cli(["init", "--cobra"], cwd=below)
    assert result.returncode == 0, result.stderr
    helper = module / "internal" / "exampleguard" / "exampleguard.go"
    shipped = REPOSITORY / "exampleguard" / "go" / "exampleguard.go"
    assert helper.read_text(encoding="utf-8") == shipped.read_text(encoding="utf-8")
    assert 'import "example.com/app/internal/exampleguard"' in result.stdout
    assert "exampleguard.Register(rootCmd)" in result.stdout
    # Nothing else is written: the configuration waits for a built program.
    assert sorted(p.name for p in module.iterdir()) == ["cmd", "go.mod", "internal"]
    again = run_cli(["init", "--cobra"], cwd=module)
    assert again.returncode == 0
    assert "is up to date" in again.stdout


def test_init_cobra_replaces_an_older_helper_but_no_other_file(tmp_path: Path) -> None:
    module = go_module(tmp_path / "app")
    helper = module / "internal" / "exampleguard" / "exampleguard.go"
    helper.parent.mkdir(parents=True)
    shipped = (REPOSITORY / "exampleguard" / "go" / "exampleguard.go").read_text("utf-8")
    helper.write_text(shipped.split("\n", 1)[0] + "\n// an older version\n", encoding="utf-8")
    assert run_cli(["init", "--cobra"], cwd=module).returncode == 0
    assert helper.read_text(encoding="utf-8") == shipped
    helper.write_text("package exampleguard // the maintainer's own\n", encoding="utf-8")
    refused = run_cli(["init", "--cobra"], cwd=module)
    assert refused.returncode == 2
    assert "is not exampleguard's helper" in refused.stderr
    assert helper.read_text(encoding="utf-8") == "package exampleguard // the maintainer's own\n"


def test_init_cobra_outside_a_go_module_changes_nothing(tmp_path: Path) -> None:
    result = run_cli(["init", "--cobra"], cwd=tmp_path)
    assert result.returncode == 2
    assert "no go.mod" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_init_needs_a_tree_or_cobra(tmp_path: Path) -> None:
    result = run_cli(["init"], cwd=tmp_path)
    assert result.returncode == 2
    assert "init needs --tree SPEC, or --cobra" in result.stderr
