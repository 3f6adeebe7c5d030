"""Configuration: discovery exactly as SPEC 3.1 says, ``--config`` everywhere, strict settings.

Discovery walks up from the current directory; in each directory ``exampleguard.toml`` wins over
a ``pyproject.toml`` with a ``[tool.exampleguard]`` table, a ``pyproject.toml`` without that table
is skipped, and the first file found is used. Relative paths resolve against that file.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from exampleguard._config import ConfigError, find_config, load_config
from exampleguard._report import located
from tests.support.project import REPOSITORY, run_cli
from tests.support.runuid import python_for, reachable_by_runs

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"
TABLE = '[tool.exampleguard]\ncatalog = "catalog.json"\n'
STANDALONE = 'catalog = "catalog.json"\n'
NO_TABLE = '[project]\nname = "app"\n\n[tool.ruff]\nline-length = 100\n'


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# -- discovery ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    id: str
    files: dict[str, str]
    start: str
    found: str
    directories: tuple[str, ...] = ()


LAYOUTS = [
    Layout("standalone-here", {"exampleguard.toml": STANDALONE}, ".", "exampleguard.toml"),
    Layout("pyproject-table-here", {"pyproject.toml": TABLE}, ".", "pyproject.toml"),
    Layout(
        "standalone-wins-over-pyproject-in-one-directory",
        {"pyproject.toml": TABLE, "exampleguard.toml": STANDALONE},
        ".",
        "exampleguard.toml",
    ),
    Layout(
        "pyproject-without-table-is-skipped",
        {"pyproject.toml": TABLE, "pkg/pyproject.toml": NO_TABLE},
        "pkg",
        "pyproject.toml",
    ),
    Layout(
        "pyproject-without-table-skipped-for-a-standalone-above",
        {"exampleguard.toml": STANDALONE, "pkg/pyproject.toml": NO_TABLE},
        "pkg/src",
        "exampleguard.toml",
    ),
    Layout(
        "nearer-pyproject-table-wins-over-standalone-above",
        {"exampleguard.toml": STANDALONE, "pkg/pyproject.toml": TABLE},
        "pkg/src",
        "pkg/pyproject.toml",
    ),
    Layout(
        "nearer-standalone-wins-over-pyproject-above",
        {"pyproject.toml": TABLE, "pkg/exampleguard.toml": STANDALONE},
        "pkg",
        "pkg/exampleguard.toml",
    ),
    Layout(
        "found-from-deep-below",
        {"exampleguard.toml": STANDALONE},
        "a/b/c/d",
        "exampleguard.toml",
        directories=("a/b/c/d",),
    ),
    Layout(
        "a-dryrun-subtable-alone-is-the-table",
        {"pyproject.toml": "[tool.exampleguard.dryrun]\ntimeout = 5\n"},
        ".",
        "pyproject.toml",
    ),
    Layout(
        "a-directory-named-exampleguard-toml-is-not-a-file",
        {"pyproject.toml": TABLE},
        "pkg",
        "pyproject.toml",
        directories=("pkg/exampleguard.toml",),
    ),
    Layout(
        "a-broken-pyproject-with-the-table-is-used-to-be-reported",
        {
            "exampleguard.toml": STANDALONE,
            "pkg/pyproject.toml": "[tool.exampleguard]\ncatalog = \n",
        },
        "pkg",
        "pkg/pyproject.toml",
    ),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout.id for layout in LAYOUTS])
def test_discovery(tmp_path: Path, layout: Layout) -> None:
    write(tmp_path, layout.files)
    for directory in layout.directories:
        (tmp_path / directory).mkdir(parents=True, exist_ok=True)
    start = tmp_path / layout.start
    start.mkdir(parents=True, exist_ok=True)
    assert find_config(start) == tmp_path / layout.found


def test_discovery_without_any_configuration_continues_past_the_project(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": NO_TABLE, "pkg/pyproject.toml": NO_TABLE})
    # Nothing in the project: the search goes on to the directories above it.
    assert find_config(tmp_path / "pkg") == find_config(tmp_path.parent)


def test_no_configuration_is_a_clear_error(tmp_path: Path) -> None:
    if find_config(tmp_path) is not None:
        pytest.skip("a configuration above the temporary directory would be found")
    write(tmp_path, {"pyproject.toml": NO_TABLE})
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert "no configuration found" in result.stderr
    assert "exampleguard.toml" in result.stderr
    assert "[tool.exampleguard]" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_broken_pyproject_with_the_table_is_reported_not_skipped(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "exampleguard.toml": STANDALONE,
            "pkg/pyproject.toml": '[project]\nname = "x"\n[tool.exampleguard]\ncatalog = \n',
        },
    )
    result = run_cli(["validate"], cwd=tmp_path / "pkg")
    assert result.returncode == 2
    assert "pyproject.toml:4:" in result.stderr
    assert "not valid TOML" in result.stderr


@pytest.mark.parametrize("table", [False, True], ids=["without-the-table", "with-the-table"])
def test_a_pyproject_nested_too_deeply_met_while_searching(tmp_path: Path, table: bool) -> None:
    # tomllib recurses once per nested array: a deep one raised RecursionError in the search.
    deep = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    head = "[tool.exampleguard]\ncatalog = 1\n" if table else '[project]\nname = "x"\n'
    write(tmp_path, {"exampleguard.toml": STANDALONE, "pkg/pyproject.toml": head + deep})
    if table:
        result = run_cli(["validate"], cwd=tmp_path / "pkg")
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode == 2
        assert "pyproject.toml" in result.stderr
        assert "nested too deeply" in result.stderr
    else:
        assert find_config(tmp_path / "pkg") == tmp_path / "exampleguard.toml"


# -- relative paths ------------------------------------------------------------------------------


def copy_sample(root: Path) -> Path:
    shutil.copytree(SAMPLE, root)
    return root


def nested_project(root: Path, *, pyproject: bool) -> None:
    """The sample project with every file moved away from the configuration's own directory."""
    copy_sample(root / "staging")
    write(
        root,
        {
            "specs/catalog.json": (root / "staging/catalog.json").read_text(),
            "specs/notes.tree.json": (root / "staging/notes.tree.json").read_text(),
            "meta/counts.json": (root / "staging/exampleguard-counts.json").read_text(),
            "review/exclusions.toml": (root / "staging/dispositions/exclusions.toml").read_text(),
        },
    )
    shutil.rmtree(root / "staging")
    keys = (
        'catalog = "specs/catalog.json"\n'
        'tree = "specs/notes.tree.json"\n'
        'counts = "meta/counts.json"\n'
        'dispositions = "review"\n'
    )
    if pyproject:
        write(root, {"pyproject.toml": '[project]\nname = "notes"\n\n[tool.exampleguard]\n' + keys})
    else:
        write(root, {"exampleguard.toml": keys})
    (root / "src" / "notes" / "deep").mkdir(parents=True)


@pytest.mark.parametrize("pyproject", [False, True], ids=["exampleguard-toml", "pyproject-toml"])
def test_relative_paths_resolve_against_the_config_file_from_a_subdirectory(
    tmp_path: Path, pyproject: bool
) -> None:
    nested_project(tmp_path, pyproject=pyproject)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path / "src" / "notes" / "deep")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    # The exclusion in review/ applies, the tree in specs/ is read (the tool's overlays bind to
    # it), and the counts in meta/ match (no counts-drift, no counts-missing).
    assert report["ok"] is True, report["diagnostics"]
    assert report["counts"]["excluded"] == 1
    assert report["counts"]["examples"] == 3


def test_relative_paths_resolve_against_an_explicit_config_elsewhere(tmp_path: Path) -> None:
    nested_project(tmp_path / "project", pyproject=False)
    (tmp_path / "elsewhere").mkdir()
    result = run_cli(
        ["validate", "--config", "../project/exampleguard.toml"], cwd=tmp_path / "elsewhere"
    )
    assert result.returncode == 0, result.stderr
    assert "All checks passed" in result.stdout


def test_a_defect_is_located_in_the_file_the_config_names(tmp_path: Path) -> None:
    nested_project(tmp_path, pyproject=False)
    catalog = tmp_path / "specs/catalog.json"
    catalog.write_text(catalog.read_text().replace("--priority 2", "--priority 9"))
    result = run_cli(["validate"], cwd=tmp_path / "src")
    assert result.returncode == 1
    line = next(
        number
        for number, text in enumerate(catalog.read_text().splitlines(), 1)
        if "--priority 9" in text
    )
    assert f"specs/catalog.json:{line}:" in result.stdout


# -- --config on every command ------------------------------------------------------------------


def config_project(root: Path) -> Path:
    """The sample project with its configuration under a name discovery never finds."""
    project = copy_sample(root / "project")
    text = (project / "exampleguard.toml").read_text()
    (project / "exampleguard.toml").unlink()
    executable = json.dumps([python_for("env"), "-c", "pass"])
    config = project / "ci-config.toml"
    config.write_text(
        f'{text}\n[dryrun]\nexecutable = {executable}\nisolation = "env"\n', encoding="utf-8"
    )
    (root / "elsewhere").mkdir()
    # A root caller's env runs (a uid of their own) read the project.
    reachable_by_runs(project)
    return config


def stale_counts_for_merge(root: Path, config: Path) -> None:
    """A JSON report to merge, and committed counts that disagree with it."""
    result = run_cli(
        ["validate", "--format", "json", "--output", "report.json", "--config", str(config)],
        cwd=root / "elsewhere",
    )
    assert result.returncode == 0, result.stderr
    counts = root / "project" / "exampleguard-counts.json"
    data = json.loads(counts.read_text())
    counts.write_text(json.dumps({**data, "examples": data["examples"] + 1}), encoding="utf-8")


def no_exclusions(root: Path, _config: Path) -> None:
    (root / "project" / "dispositions" / "exclusions.toml").unlink()


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...]
    exit_code: int
    stdout: str
    reads_config: bool = True
    prepare: Callable[[Path, Path], None] | None = None


COMMANDS = {
    "validate": Command(("validate",), 0, "All checks passed: 3 examples of 2 tools"),
    "dryrun": Command(("dryrun",), 0, "2 of 2 dry runs passed"),
    "counts": Command(("counts",), 0, '"excluded": 1'),
    # Run from elsewhere, the file is named by its absolute path (like every path outside the
    # current directory).
    "counts-write": Command(("counts", "--write"), 0, "/project/exampleguard-counts.json\n"),
    "tree": Command(("tree",), 0, "notes delete"),
    "schema-catalog": Command(("schema", "catalog"), 0, "exampleguard.catalog/v1", False),
    "schema-tool": Command(("schema", "tool", "notes.delete"), 0, '"title": "notes.delete"'),
    "explain": Command(("explain", "unknown-flag"), 0, "unknown-flag (error", False),
    "sandbox": Command(("sandbox",), 0, "env:", False),
    "init": Command(
        ("init", "--tree", "../project/notes.tree.json", "--program", "notes"),
        0,
        "wrote exampleguard.toml",
        False,
    ),
    "dispositions-add": Command(
        (
            "dispositions",
            "add",
            "notes.delete",
            "1",
            "--reason-code",
            "needs-fixture",
            "--reason",
            "Deleting by tag needs a notes database with tagged rows.",
            "--dry-run",
        ),
        0,
        'command = "notes rm --tag draft --format json"',
    ),
    "dispositions-exclude": Command(
        (
            "dispositions",
            "exclude",
            "export",
            "--reason",
            "Bulk export is not offered to agents.",
            "--dry-run",
        ),
        0,
        'path = ["export"]',
        prepare=no_exclusions,
    ),
    "dispositions-list": Command(("dispositions", "list"), 0, "exclude 'export'  [applies]"),
    "dispositions-check": Command(("dispositions", "check"), 0, "All checks passed"),
    "report-merge": Command(
        ("report", "merge", "report.json"), 1, "counts-drift", prepare=stale_counts_for_merge
    ),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_takes_config(tmp_path: Path, name: str) -> None:
    command = COMMANDS[name]
    config = config_project(tmp_path)
    if command.prepare is not None:
        command.prepare(tmp_path, config)
    elsewhere = tmp_path / "elsewhere"

    result = run_cli([*command.args, "--config", str(config)], cwd=elsewhere)

    assert "No such option" not in result.stderr
    assert result.returncode == command.exit_code, result.stdout + result.stderr
    assert command.stdout in result.stdout, result.stdout
    if command.reads_config and find_config(elsewhere) is None:
        # Without --config nothing is found from here: the option is what made it work.
        without = run_cli(list(command.args), cwd=elsewhere)
        assert (without.returncode, without.stdout) != (result.returncode, result.stdout)


def test_config_is_an_option_of_every_command_in_help() -> None:
    leaves = [
        ["validate"],
        ["dryrun"],
        ["counts"],
        ["tree"],
        ["schema"],
        ["explain"],
        ["sandbox"],
        ["init"],
        ["dispositions", "add"],
        ["dispositions", "update"],
        ["dispositions", "remove"],
        ["dispositions", "exclude"],
        ["dispositions", "list"],
        ["dispositions", "check"],
        ["report", "merge"],
    ]
    from typer.main import get_command

    from exampleguard.cli import app

    root = get_command(app)
    found: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, [*path, name])
            return
        found.append(path)
        options = {opt for param in command.params for opt in param.opts}  # type: ignore[attr-defined]
        assert "--config" in options, f"{' '.join(path)} has no --config"

    walk(root, [])
    assert sorted(found) == sorted(leaves), "a command was added: add it to COMMANDS above"


def test_config_naming_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    result = run_cli(["validate", "--config", "nowhere.toml"], cwd=tmp_path)
    assert result.returncode == 2
    assert "nowhere.toml does not exist" in result.stderr


def test_config_naming_a_pyproject_without_the_table(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": NO_TABLE})
    result = run_cli(["validate", "--config", "pyproject.toml"], cwd=tmp_path)
    assert result.returncode == 2
    assert "pyproject.toml has no [tool.exampleguard] table" in result.stderr


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("settings.toml", STANDALONE),
        ("tools.toml", '[project]\nname = "x"\n\n' + TABLE),
    ],
    ids=["top-level-keys", "tool-table"],
)
def test_config_may_have_any_name(tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path, {name: text})
    config = load_config(Path(name), tmp_path)
    assert config.source == tmp_path / name
    assert config.catalog_path == tmp_path / "catalog.json"


# -- strict settings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    id: str
    keys: str
    dryrun: str
    shown_key: str
    marker: str


BAD_SETTINGS = [
    Bad("unknown-key", 'catalogue = "other.json"\n', "", "'catalogue'", "catalogue"),
    Bad("string-for-integer", 'max_example_chars = "5"\n', "", "max_example_chars", '"5"'),
    Bad("string-for-timeout", "", 'timeout = "30"\n', "dryrun.timeout", '"30"'),
]


def settings_text(bad: Bad, *, pyproject: bool) -> str:
    prefix = "tool.exampleguard" if pyproject else ""
    head = f"[{prefix}]\n" if pyproject else ""
    dryrun = f"\n[{prefix + '.' if prefix else ''}dryrun]\n{bad.dryrun}" if bad.dryrun else ""
    return f'{head}catalog = "catalog.json"\n{bad.keys}{dryrun}'


@pytest.mark.parametrize("pyproject", [False, True], ids=["exampleguard-toml", "pyproject-toml"])
@pytest.mark.parametrize("bad", BAD_SETTINGS, ids=[bad.id for bad in BAD_SETTINGS])
def test_strict_settings_name_the_key(tmp_path: Path, bad: Bad, pyproject: bool) -> None:
    copy_sample(tmp_path / "p")
    root = tmp_path / "p"
    (root / "exampleguard.toml").unlink()
    name = "pyproject.toml" if pyproject else "exampleguard.toml"
    text = settings_text(bad, pyproject=pyproject)
    (root / name).write_text(text, encoding="utf-8")
    offset = text.index(bad.marker)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1

    result = run_cli(["validate"], cwd=root)

    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{name}:{line}:{column}:" in result.stderr, result.stderr
    assert bad.shown_key in result.stderr
    assert "config-invalid" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


MORE_BAD = {
    "bypass-flags-a-string": ('bypass_flags = "--yes"\n', "bypass_flags"),
    "tree-timeout-zero": ("tree_timeout = 0\n", "tree_timeout"),
    "pytest-a-string": ('pytest = "true"\n', "pytest"),
    "integer-given-as-float": ("max_example_chars = 4096.0\n", "max_example_chars"),
    "reason-code-not-a-code": ('reason_codes = { "Needs Network" = "x" }\n', "reason_codes"),
    "isolation-unknown": ('[dryrun]\nisolation = "none"\n', "dryrun.isolation"),
    "jobs-a-string": ('[dryrun]\njobs = "2"\n', "dryrun.jobs"),
    "jobs-a-float": ("[dryrun]\njobs = 2.0\n", "dryrun.jobs"),
    "output-kb-a-boolean": ("[dryrun]\noutput_kb = true\n", "dryrun.output_kb"),
    "unknown-dryrun-key": ("[dryrun]\nmemory = 100\n", "'memory'"),
}


@pytest.mark.parametrize(("extra", "key"), list(MORE_BAD.values()), ids=list(MORE_BAD))
def test_more_strict_settings(tmp_path: Path, extra: str, key: str) -> None:
    write(tmp_path, {"exampleguard.toml": STANDALONE + extra})
    with pytest.raises(ConfigError) as raised:
        load_config(None, tmp_path)
    diagnostic = raised.value.diagnostic
    assert diagnostic.code == "config-invalid"
    assert key in diagnostic.message
    where = located(diagnostic)
    assert where is not None
    assert where.file == "exampleguard.toml"
    assert where.line is not None


def test_defaults() -> None:
    config = load_config(SAMPLE / "exampleguard.toml", REPOSITORY)
    settings = config.settings
    assert settings.bypass_flags == ["--yes", "--assume-yes", "--no-confirm"]
    assert settings.max_example_chars == 4096
    assert settings.dispositions == "dispositions"
    assert settings.counts == "exampleguard-counts.json"
    assert settings.dryrun.timeout == 30
    assert settings.dryrun.isolation == "auto"
    assert config.root == SAMPLE
    assert config.counts_path == SAMPLE / "exampleguard-counts.json"
