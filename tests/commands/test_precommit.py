"""``.pre-commit-hooks.yaml``: the ``exampleguard-validate`` hook, run by the real pre-commit.

The end-to-end tests make a user's project in a temporary git repository (a small Click CLI,
its catalog and configuration), point its ``.pre-commit-config.yaml`` at a repository holding
this checkout's hooks file, and commit as a user would: the hook must import the CLI (it runs in
the project's environment), run when the CLI's source changes, and fail when a flag the catalog
uses was renamed. The README's configuration and the docs' monorepo one are run as written.

The hooks file uses a small subset of YAML (a list of flat mappings with plain, single- or
double-quoted scalars and comments), parsed here in a few lines for the table tests.
"""

from __future__ import annotations

import json
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


def test_the_hook_is_declared_completely(hook: dict[str, str | bool]) -> None:
    assert set(hook) >= {"id", "name", "entry", "language", "files", "pass_filenames"}
    # The project's own environment: an isolated one cannot import the user's CLI.
    assert hook["language"] == "system"
    # validate reads its own inputs; file names passed as arguments would be bad usage.
    assert hook["pass_filenames"] is False
    assert shlex.split(str(hook["entry"]))[:2] == ["exampleguard", "validate"]


def test_the_entry_is_a_console_script_of_the_package() -> None:
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"]["exampleguard"] == "exampleguard.cli:entry_point"


def test_the_entry_runs_validate(hook: dict[str, str | bool], tmp_path: Path) -> None:
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
    # The CLI's source: renaming a flag there makes the catalog wrong.
    "src/app.py",
    "notes/cli.py",
    "notes/cli.pyi",
    "notes.tree.json",
    "snapshots/tree.json",
    # The Markdown docs and agent files, whose command examples are checked.
    "README.md",
    "dispositions/README.md",
    "docs/catalog/index.md",
    "AGENTS.md",
    "skills/notes/SKILL.md",
    "llms.txt",
]
NOT_MATCHED = [
    "my-pyproject.toml.bak",
    "setup.cfg",
    "data/records.json",
    "LICENSE",
    "docs/notes.txt",
    "README.md.orig",
]


@pytest.mark.parametrize("path", MATCHED)
def test_files_matches_the_inputs_of_validate(hook: dict[str, str | bool], path: str) -> None:
    # pre-commit applies `files` with re.search to repository-relative paths.
    assert re.search(str(hook["files"]), path), path


@pytest.mark.parametrize("path", NOT_MATCHED)
def test_files_does_not_match_unrelated_files(hook: dict[str, str | bool], path: str) -> None:
    assert not re.search(str(hook["files"]), path), path


# -- the real pre-commit --------------------------------------------------------------------------

CLI_SOURCE = """\
import click


@click.group()
def main():
    \"\"\"Keep notes.\"\"\"


@main.command()
@click.option("--colour", type=click.Choice(["red", "green"]))
@click.argument("text")
def add(colour, text):
    \"\"\"Add a note.\"\"\"
"""

CATALOG = {
    "format": "exampleguard.catalog/v1",
    "program": "notes",
    "tools": [
        {
            "id": "notes.add",
            "command": ["add"],
            "examples": [{"command": "notes add --colour red 'Buy milk'"}],
        }
    ],
}


def _git(cwd: Path, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


@pytest.fixture
def git_env(tmp_path: Path) -> dict[str, str]:
    """An environment with exampleguard on PATH (as in the project's own) and git to itself."""
    scripts = Path(sys.executable).parent
    env = dict(os.environ, PATH=os.pathsep.join([str(scripts), os.environ.get("PATH", "")]))
    env.update(
        NO_COLOR="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="A User",
        GIT_AUTHOR_EMAIL="user@example.org",
        GIT_COMMITTER_NAME="A User",
        GIT_COMMITTER_EMAIL="user@example.org",
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
    )
    env.pop("PYTHONPATH", None)
    return env


# The one thing the documented configuration leaves to fill in: where exampleguard comes from.
PLACEHOLDER = "https://github.com/<owner>/exampleguard"


def _documented_rev(config: str) -> str:
    revs = {str(rev) for rev in re.findall(r"^\s*rev: (\S+)", config, re.MULTILINE)}
    assert len(revs) == 1, f"one rev in the documented configuration: {revs}"
    (rev,) = revs
    assert re.fullmatch(r"[0-9a-f]{40}", rev), f"rev {rev!r} is not a full commit hash"
    return rev


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's clone of exampleguard's repository: what the documented `repo:` may name."""
    if not (REPOSITORY / ".git").exists():
        pytest.skip("not a git checkout: there is no history to clone")
    shallow = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=False,
    )
    if shallow.stdout.strip() == "true":
        pytest.skip("a shallow clone has not the history the documented rev is in")
    target = tmp_path_factory.mktemp("clone") / "exampleguard"
    done = subprocess.run(
        ["git", "clone", "--quiet", "--no-checkout", str(REPOSITORY), str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target


@pytest.mark.parametrize(
    ("document", "after"),
    [("README.md", "### pre-commit"), ("docs/ci.md", "## pre-commit")],
)
def test_the_documented_rev_exists_and_has_the_hooks_as_they_are(
    clone: Path, document: str, after: str
) -> None:
    config = _doc_block(document, after)
    assert f"repo: {PLACEHOLDER}" in config
    rev = _documented_rev(config)
    shown = subprocess.run(
        ["git", "show", f"{rev}:.pre-commit-hooks.yaml"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, f"{document}: rev {rev} is no commit with the hooks file"
    assert shown.stdout == HOOKS.read_text(encoding="utf-8"), (
        f"{document}: the hooks file changed since {rev}; name a commit that has it as it is"
    )


def _doc_block(document: str, after: str) -> str:
    """The first ``yaml`` block after the words ``after`` in ``document`` (README, docs page)."""
    text = (REPOSITORY / document).read_text(encoding="utf-8")
    start = text.index("```yaml\n", text.index(after)) + len("```yaml\n")
    return text[start : text.index("```", start)]


def _user_project(root: Path, package: str, clone: Path, config: str, env: dict[str, str]) -> Path:
    """A git repository with the notes CLI in ``package``, its catalog, counts and hooks."""
    project = root / package if package else root
    project.mkdir(parents=True, exist_ok=True)
    (project / "cli.py").write_text(CLI_SOURCE, encoding="utf-8")
    (project / "agent-catalog.json").write_text(json.dumps(CATALOG, indent=2), encoding="utf-8")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "notes"\n\n[tool.exampleguard]\ncatalog = "agent-catalog.json"\n'
        'tree = "click:cli:main"\n',
        encoding="utf-8",
    )
    written = subprocess.run(
        ["exampleguard", "counts", "--write"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert written.returncode == 0, written.stdout + written.stderr
    # The documented configuration as written, with its one blank filled in: the clone.
    assert config.count(PLACEHOLDER) >= 1
    config = config.replace(PLACEHOLDER, str(clone))
    (root / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    (root / "README.md").write_text("# notes\n", encoding="utf-8")
    _git(root, "init", "-q", env=env)
    _git(root, "add", ".", env=env)
    _git(root, "commit", "-q", "-m", "notes", "--no-verify", env=env)
    return project


def _pre_commit(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``pre-commit run`` on what is staged, as ``git commit`` runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--color", "never"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _rename_the_flag(project: Path, root: Path, env: dict[str, str]) -> None:
    source = project / "cli.py"
    source.write_text(source.read_text(encoding="utf-8").replace("--colour", "--color"), "utf-8")
    _git(root, "add", str(source.relative_to(root)), env=env)


def test_the_hook_imports_the_cli_and_fails_when_a_flag_is_renamed_in_its_source(
    tmp_path: Path, git_env: dict[str, str], clone: Path
) -> None:
    root = tmp_path / "notes"
    config = _doc_block("README.md", "### pre-commit")
    project = _user_project(root, "", clone, config, git_env)

    # Everything as committed: the hook imports the CLI and passes.
    passing = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=root,
        env=git_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "exampleguard validate" in passing.stdout
    assert "Passed" in passing.stdout

    # A change to an unrelated file does not run it.
    (root / "LICENSE").write_text("All rights reserved.\n", encoding="utf-8")
    _git(root, "add", "LICENSE", env=git_env)
    skipped = _pre_commit(root, git_env)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "Skipped" in skipped.stdout
    _git(root, "commit", "-q", "-m", "licence", "--no-verify", env=git_env)

    # A README change runs it: its command examples are checked.
    readme = "# notes\n\n```sh\nnotes add --color red x\n```\n"
    (root / "README.md").write_text(readme, encoding="utf-8")
    _git(root, "add", "README.md", env=git_env)
    documented = _pre_commit(root, git_env)
    assert documented.returncode == 1, documented.stdout + documented.stderr
    assert "README.md:4:11: unknown-flag --color is not an option of 'notes add'" in (
        documented.stdout
    )
    _git(root, "checkout", "HEAD", "--", "README.md", env=git_env)

    # The flag renamed in the CLI's source: the hook runs and the catalog fails.
    _rename_the_flag(project, root, git_env)
    failing = _pre_commit(root, git_env)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "Failed" in failing.stdout
    assert "agent-catalog.json:" in failing.stdout
    assert "unknown-flag notes.add[0]: --colour is not an option of 'notes add'" in (failing.stdout)
    assert "tree-unavailable" not in failing.stdout


def test_the_docs_monorepo_setup_checks_its_package(
    tmp_path: Path, git_env: dict[str, str], clone: Path
) -> None:
    root = tmp_path / "monorepo"
    config = _doc_block("docs/ci.md", "In a monorepo, give each package")
    project = _user_project(root, "packages/tool", clone, config, git_env)

    _rename_the_flag(project, root, git_env)
    failing = _pre_commit(root, git_env)

    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "exampleguard validate (packages/tool)" in failing.stdout
    # Named from the repository root, where pre-commit runs: the file of the pull request.
    assert "packages/tool/agent-catalog.json:" in failing.stdout
    assert "unknown-flag notes.add[0]" in failing.stdout
