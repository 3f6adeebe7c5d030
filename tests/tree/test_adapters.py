"""The tree adapters: Click, Typer and argparse trees read field by field, in a child process.

Every tree here is extracted the way a run extracts it — the application is imported in a child
process and only the snapshot comes back — and compared with a hand-written expectation of what
each framework really accepts. ``required`` is compared as the effective requirement
(``Parameter.is_required``), so an explicit ``false`` and an omitted default are the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from exampleguard._model import Parameter
from exampleguard._snapshot import Tree, TreeCommand
from exampleguard._tree import TreeSpec, load_tree, parse_tree_spec
from tests.support.frameworks import argparse_accepts, click_accepts
from tests.support.project import FIXTURE_APPS, REPOSITORY, assert_unusable_report, run_cli
from tests.support.unguarded import UNGUARDED


def extract(spec: str, root: Path = FIXTURE_APPS, program: str | None = "notes") -> Tree:
    tree, _ = load_tree(
        parse_tree_spec(spec, root), root=root, display=spec, timeout=60, program=program
    )
    return tree


def shape(command: TreeCommand) -> dict[str, Any]:
    return command.model_dump(exclude_defaults=True, exclude={"parameters"})


def param(parameter: Parameter) -> dict[str, Any]:
    data = parameter.model_dump(exclude_defaults=True, exclude={"required"})
    return {**data, "required": parameter.is_required}


def check_tree(
    tree: Tree, expected: dict[tuple[str, ...], tuple[dict[str, Any], list[Any]]]
) -> None:
    assert [tuple(c.path) for c in tree.commands] == list(expected)


def check_command(
    tree: Tree,
    path: tuple[str, ...],
    expected: dict[tuple[str, ...], tuple[dict[str, Any], list[dict[str, Any]]]],
) -> None:
    command = tree.command(list(path))
    assert command is not None, f"no command {path}"
    fields, parameters = expected[path]
    assert shape(command) == {"path": list(path), **fields}
    actual = [param(p) for p in command.parameters]
    assert len(actual) == len(parameters), [p["flags"] or p["name"] for p in actual]
    for got, want in zip(actual, parameters, strict=True):
        assert got == want


def option(name: Any, *flags: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "flags": list(flags), "required": False, **fields}


def positional(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "positional": True, "required": True, **fields}


# -- Click -----------------------------------------------------------------------------------------

CLICK_HELP = option(
    ANY, "-h", "--help", type="boolean", eager=True, description="Show this message and exit."
)
COMMAND = {"allow_interspersed_args": True}  # a command's settings are all defaults
GROUP = {"allow_interspersed_args": False, "allow_extra_args": True, "no_args_is_help": True}

CLICK: dict[tuple[str, ...], tuple[dict[str, Any], list[dict[str, Any]]]] = {
    (): (
        {"runnable": False, "description": "Manage notes.", "settings": GROUP},
        [
            option("profile", "--profile", description="Profile to use.", default="default"),
            option("quiet", "-q", "--quiet", type="boolean"),
            option(
                "version",
                "--version",
                type="boolean",
                eager=True,
                description="Show the version and exit.",
            ),
            CLICK_HELP,
        ],
    ),
    ("add",): (
        {"runnable": True, "description": "Add a note."},
        [
            positional("text"),
            option("color", "--color", type="boolean", negation_flags=["--no-color"], default=True),
            option("verbose", "-v", "--verbose", type="integer", count=True, default=0),
            option("priority", "--priority", type="integer", required=True),
            option("point", "--point", type="number", nargs=2),
            option("pair", "--pair", type=["string", "integer"], nargs=2),
            # flag_value options sharing one destination: each a valueless flag that records
            # the destination; the one chosen by default has no boolean default to invert.
            option(ANY, "--upper", type="boolean", destination="transform"),
            option(ANY, "--lower", type="boolean", destination="transform"),
            option("archived", "--archived", type="boolean", nargs=1),
            option("when", "--when", type="datetime", formats=["%Y-%m-%d"]),
            option("note_id", "--id", type="uuid"),
            option("editor", "--editor", nargs="?"),
            option("source", "-s", type="path"),
            CLICK_HELP,
        ],
    ),
    ("debug",): (
        {"runnable": True, "hidden": True, "description": "Dump internal state."},
        [CLICK_HELP],
    ),
    ("delete",): (
        {"aliases": [["rm"]], "runnable": True, "description": "Delete notes by id or by tag."},
        [
            positional("ids", type="integer", nargs=-1, required=False),
            option("tag", "--tag", "-t", multiple=True, description="Tag to match."),
            option("all_", "--all", type="boolean"),
            option("format", "--format", choices=["text", "json"], case_sensitive=False),
            option("dry_run", "--dry-run", type="boolean"),
            option("yes", "-y", "--yes", type="boolean"),
            option("limit", "--limit", type="integer", min=1, max=10),
            option("ratio", "--ratio", type="number", min=0, max=1, min_open=True),
            CLICK_HELP,
        ],
    ),
    ("grep",): (
        {"runnable": True, "description": "Search notes."},
        [
            option("exclude", "-x", "--exclude", choices=["a", "b"], multiple=True),
            option("wide", "+w", type="boolean"),
            option("depth", "-depth", type="integer"),
            positional("pattern"),
            positional("paths", nargs=-1),
            CLICK_HELP,
        ],
    ),
    ("run",): (
        {
            "runnable": True,
            "description": "Run a command with notes in the environment.",
            "settings": {"ignore_unknown_options": True, "allow_extra_args": True},
        },
        [
            option("shell", "--shell", default="sh"),
            positional("args", nargs=-1, required=False),
            CLICK_HELP,
        ],
    ),
    ("tags",): (
        {
            "runnable": True,  # invoke_without_command
            "description": "List or edit tags.",
            "settings": {"allow_interspersed_args": False, "allow_extra_args": True},
        },
        [option("sort", "--sort", choices=["name", "count"]), CLICK_HELP],
    ),
    ("tags", "merge"): (
        {"runnable": True, "description": "Merge two tags into one."},
        [positional("pair", nargs=2), positional("into"), CLICK_HELP],
    ),
    ("tags", "rename"): (
        {"runnable": True, "description": "Rename a tag."},
        [positional("old"), positional("new"), CLICK_HELP],
    ),
    ("view",): (
        {
            "runnable": False,
            "description": "View notes.",
            "default_command": "show",
            "default_if_no_args": True,
            "settings": {**GROUP, "ignore_unknown_options": True},
            # click-default-group routes unknown words with a get_command of its own.
            "own_lookup": "DefaultGroup.get_command",
        },
        [CLICK_HELP],
    ),
    ("view", "page"): (
        {"runnable": True, "description": "Page through notes."},
        [option("width", "--width", type="integer", default=80), CLICK_HELP],
    ),
    ("view", "show"): (
        {"runnable": True, "description": "Show a note."},
        [positional("note", required=False), option("raw", "--raw", type="boolean"), CLICK_HELP],
    ),
}


@pytest.fixture(scope="module")
def click_tree() -> Tree:
    return extract("click:click_app:cli")


def test_click_tree_header(click_tree: Tree) -> None:
    assert (click_tree.format, click_tree.program, click_tree.dialect) == (
        "exampleguard.tree/v1",
        "notes",
        "click",
    )
    assert click_tree.value_syntax == "python"
    check_tree(click_tree, CLICK)


@pytest.mark.parametrize("path", list(CLICK), ids=[" ".join(p) or "(root)" for p in CLICK])
def test_click_command(click_tree: Tree, path: tuple[str, ...]) -> None:
    check_command(click_tree, path, CLICK)


PROMPT_APP = '''\
import click


@click.command()
@click.option("--name", prompt=True)
@click.option("--token", prompt=True, hide_input=True, required=True)
@click.option("--city", prompt="City", default="Paris")
@click.option("--nick", prompt=True, prompt_required=False)
@click.option("--level", type=click.IntRange(0, clamp=True))
@click.option("--ratio", type=click.FloatRange(max=1.0, max_open=True))
@click.option("--shout/--no-shout", " /-S", default=False)
@click.option("--secret", hidden=True)
@click.option("--mode", type=click.Choice(["Fast", "slow"], case_sensitive=False), required=True)
@click.argument("files", nargs=-1, type=click.Path())
def cli(name, token, city, nick, level, ratio, shout, secret, mode, files):
    """Prompted."""
'''


def test_click_prompts_ranges_and_secondary_flags(tmp_path: Path) -> None:
    (tmp_path / "prompt_app.py").write_text(PROMPT_APP, encoding="utf-8")
    tree = extract("click:prompt_app:cli", root=tmp_path, program="prompted")
    (command,) = tree.commands
    assert shape(command) == {"path": [], "runnable": True, "description": "Prompted."}
    assert [param(p) for p in command.parameters] == [
        option("name", "--name", prompt=True),
        option("token", "--token", prompt=True, required=True),
        option("city", "--city", prompt=True, default="Paris"),
        # prompt_required=False: Click prompts only for a bare `--nick`, never when it is absent.
        option("nick", "--nick", nargs="?"),
        # clamp=True: out-of-range values are clamped, never rejected, so no bounds.
        option("level", "--level", type="integer"),
        option("ratio", "--ratio", type="number", max=1.0, max_open=True),
        option(
            "shout", "--shout", type="boolean", negation_flags=["--no-shout", "-S"], default=False
        ),
        option("secret", "--secret", hidden=True),
        option("mode", "--mode", choices=["Fast", "slow"], case_sensitive=False, required=True),
        positional("files", type="path", nargs=-1, required=False),
        option(
            ANY, "--help", type="boolean", eager=True, description="Show this message and exit."
        ),
    ]


# -- Typer (0.26 and later: the bundled typer._click, type descriptors) ----------------------------

TYPER_HELP = option(
    "help", "--help", type="boolean", eager=True, description="Show this message and exit."
)

TYPER: dict[tuple[str, ...], tuple[dict[str, Any], list[dict[str, Any]]]] = {
    (): (
        {"runnable": False, "description": "Manage notes.", "settings": GROUP},
        [
            option("profile", "--profile", description="Profile to use.", default="default"),
            option("verbose", "--verbose", "-v", type="integer", count=True, default=0),
            option(
                "install_completion",
                "--install-completion",
                type="boolean",
                description="Install completion for the current shell.",
            ),
            option(
                "show_completion",
                "--show-completion",
                type="boolean",
                description="Show completion for the current shell, to copy it or customize "
                "the installation.",
            ),
            TYPER_HELP,
        ],
    ),
    ("delete",): (
        {"runnable": True, "description": "Delete notes by id or by tag."},
        [
            positional("ids", type="integer", nargs=-1, required=False),
            option("tag", "--tag", "-t", multiple=True),
            option("all_", "--all", type="boolean", default=False),
            # An Enum's values are the choices.
            option(
                "format", "--format", choices=["text", "json"], case_sensitive=False, default="text"
            ),
            option("dry_run", "--dry-run", type="boolean", default=False),
            option("yes", "--yes", "-y", type="boolean", default=False),
            option("limit", "--limit", type="integer", min=1, max=10),
            TYPER_HELP,
        ],
    ),
    ("add",): (
        {"runnable": True, "description": "Add a note."},
        [
            positional("text"),
            option("priority", "--priority", type="integer", required=True),
            option("color", "--color", type="boolean", negation_flags=["--no-color"], default=True),
            option("ratio", "--ratio", type="number", min=0.0, max=1.0, default=0.5),
            option("point", "--point", type=["number", "number"], nargs=2),
            # A Literal's values are the choices.
            option("level", "--level", choices=["low", "high"], default="low"),
            option("out", "--out", "-o", type="path"),
            TYPER_HELP,
        ],
    ),
    ("tags",): (
        {
            "runnable": False,
            "description": "Manage tags.",
            "settings": {"allow_interspersed_args": False, "allow_extra_args": True},
        },
        [TYPER_HELP],
    ),
    ("tags", "rename"): (
        {"runnable": True, "description": "Rename a tag."},
        [
            positional("old"),
            positional("new"),
            option(
                "force", "--force", type="boolean", negation_flags=["--no-force"], default=False
            ),
            TYPER_HELP,
        ],
    ),
    ("tags", "list"): (
        {"runnable": True, "hidden": True, "description": "List tags."},
        [option("limit", "--limit", type="integer", min=0, default=10), TYPER_HELP],
    ),
}


@pytest.fixture(scope="module")
def typer_tree() -> Tree:
    return extract("typer:typer_app:app")


def test_typer_tree_header(typer_tree: Tree) -> None:
    assert (typer_tree.program, typer_tree.dialect) == ("notes", "click")
    # Typer 0.26+ converts values through pydantic.
    assert typer_tree.value_syntax == "pydantic"
    check_tree(typer_tree, TYPER)


def test_a_tree_names_the_installed_frameworks_version(typer_tree: Tree) -> None:
    # Typer's version is read from its module, Click's from its distribution: both must be
    # the installed one, which picks the dialect's rules for that version.
    import importlib.metadata

    assert (typer_tree.framework, typer_tree.framework_version) == (
        "typer",
        importlib.metadata.version("typer"),
    )
    click_tree = extract("click:click_app:cli")
    assert (click_tree.framework, click_tree.framework_version) == (
        "click",
        importlib.metadata.version("click"),
    )


@pytest.mark.parametrize("path", list(TYPER), ids=[" ".join(p) or "(root)" for p in TYPER])
def test_typer_command(typer_tree: Tree, path: tuple[str, ...]) -> None:
    check_command(typer_tree, path, TYPER)


def test_typer_tree_needs_no_click_package(tmp_path: Path) -> None:
    """SPEC 2: exampleguard reads Typer 0.26+ (bundled Click) with `click` not importable."""
    script = (
        "import sys, json\n"
        "sys.modules['click'] = None  # any `import click` now fails\n"
        "from exampleguard._adapters.clickfamily import as_click_command, extract_click\n"
        "import typer_app\n"
        "print(json.dumps(extract_click(as_click_command(typer_app.app), 'notes')))\n"
    )
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(FIXTURE_APPS), str(REPOSITORY)]),
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert Tree.model_validate(json.loads(result.stdout)).value_syntax == "pydantic"


# -- argparse -------------------------------------------------------------------------------------

ARGPARSE_HELP = option(
    "help",
    "-h",
    "--help",
    type="boolean",
    eager=True,
    description="show this help message and exit",
)

ARGPARSE: dict[tuple[str, ...], tuple[dict[str, Any], list[dict[str, Any]]]] = {
    (): (
        {"runnable": False, "description": "Manage notes."},
        [
            ARGPARSE_HELP,
            option(
                "version",
                "--version",
                type="boolean",
                eager=True,
                description="show program's version number and exit",
            ),
            option("verbose", "-v", "--verbose", type="integer", count=True, default=0),
            option("profile", "--profile", default="default"),
        ],
    ),
    ("delete",): (
        {
            "aliases": [["rm"]],
            "runnable": True,
            "constraints": {"mutually_exclusive": [["all", "older_than"]]},
        },
        [
            ARGPARSE_HELP,
            # nargs="*" matches zero words: argparse never requires it.
            positional("ids", type="integer", nargs="*", required=False),
            option("tag", "-t", "--tag", multiple=True),
            option("dry_run", "--dry-run", type="boolean", default=False),
            option("yes", "-y", "--yes", type="boolean", default=False),
            option("all", "--all", type="boolean", default=False),
            option("older_than", "--older-than", type="integer", default=5),
            option("format", "--format", choices=["text", "json"], default="text"),
        ],
    ),
    ("add",): (
        {"runnable": True, "settings": {"allow_abbrev": False}},
        [
            ARGPARSE_HELP,
            positional("text"),
            option("priority", "--priority", type="integer", choices=[1, 2, 3], required=True),
            option("ratio", "--ratio", type="number"),
            option("point", "--point", type="number", nargs=2),
            option("color", "--color", type="boolean", negation_flags=["--no-color"], default=True),
            option("loud", "--quiet", type="boolean", default=True),
            option("label", "--label", nargs="?"),
            option("tags", "--tags", nargs="+"),
            option("extra", "--extra", multiple=True, nargs="*"),
            # Two store_const actions sharing one dest get one name each.
            option("mode", "--mode", type="boolean", destination="mode"),
            option("slow", "--slow", type="boolean", destination="mode"),
        ],
    ),
    ("sync",): (
        {
            "runnable": True,
            "constraints": {
                "require_one_of": [["push", "pull", "branch"]],
                "mutually_exclusive": [["push", "pull", "branch"]],
            },
            "settings": {"prefix_chars": "-+"},
        },
        [
            ARGPARSE_HELP,
            positional("remote", nargs="?", default="origin", required=False),
            option("force", "+f", "++force", type="boolean", default=False),
            option("push", "--push", type="boolean", default=False),
            option("pull", "--pull", type="boolean", default=False),
            option("branch", "--branch", default="x"),
        ],
    ),
    ("tags",): ({"runnable": True}, [ARGPARSE_HELP]),
    ("tags", "rename"): (
        {"aliases": [["tags", "mv"]], "runnable": True},
        [ARGPARSE_HELP, positional("old"), positional("new")],
    ),
    ("tags", "merge"): (
        {"runnable": True},
        [
            ARGPARSE_HELP,
            positional("pair", nargs=2),
            positional("into", choices=["a", "b", "c"]),
            option("one", "-1", type="boolean", default=False),
        ],
    ),
    ("run",): (
        {"runnable": True},
        [
            ARGPARSE_HELP,
            option("shell", "--shell", default="sh"),
            # REMAINDER matches zero words too.
            positional("argv", nargs="...", required=False),
        ],
    ),
    ("grep",): (
        {"runnable": True, "hidden": True},
        [
            ARGPARSE_HELP,
            positional("pattern"),
            positional("paths", nargs="+"),
            option("max_count", "-n", "--max-count", type="integer"),
            option("kind", "--kind", choices=["md", "txt"], nargs="*"),
        ],
    ),
}


@pytest.fixture(scope="module")
def argparse_tree() -> Tree:
    return extract("argparse:argparse_app:build_parser", program=None)


def test_argparse_tree_header(argparse_tree: Tree) -> None:
    # No --program: the parser's own prog.
    assert (argparse_tree.program, argparse_tree.dialect) == ("notes", "argparse")
    assert argparse_tree.value_syntax == "python"
    check_tree(argparse_tree, ARGPARSE)


@pytest.mark.parametrize("path", list(ARGPARSE), ids=[" ".join(p) or "(root)" for p in ARGPARSE])
def test_argparse_command(argparse_tree: Tree, path: tuple[str, ...]) -> None:
    check_command(argparse_tree, path, ARGPARSE)


def test_argparse_parser_object_and_factory_give_the_same_tree(argparse_tree: Tree) -> None:
    assert extract("argparse:argparse_app:parser", program=None) == argparse_tree


# -- requiredness agrees with the real parsers -----------------------------------------------------

REQUIREDNESS = [
    # (framework, command path, positional, the argv that leaves it out)
    ("argparse", ("delete",), "ids", ["delete", "--all"]),
    ("argparse", ("run",), "argv", ["run"]),
    ("argparse", ("sync",), "remote", ["sync", "--push"]),
    ("argparse", ("grep",), "paths", ["grep", "pattern"]),
    ("argparse", ("tags", "merge"), "into", ["tags", "merge", "x", "y"]),
    ("click", ("delete",), "ids", ["delete", "--all"]),
    ("click", ("grep",), "paths", ["grep", "pattern"]),
    ("click", ("view", "show"), "note", ["view", "show"]),
    ("click", ("run",), "args", ["run"]),
]


@pytest.mark.parametrize(
    ("framework", "path", "name", "argv"),
    REQUIREDNESS,
    ids=[f"{f}-{' '.join(p)}-{n}" for f, p, n, _ in REQUIREDNESS],
)
def test_positional_requiredness_agrees_with_the_parser(
    framework: str,
    path: tuple[str, ...],
    name: str,
    argv: list[str],
    click_tree: Tree,
    argparse_tree: Tree,
) -> None:
    if framework == "argparse":
        import argparse_app

        accepted = argparse_accepts(argparse_app.build_parser(), argv)
        tree = argparse_tree
    else:
        import click_app

        accepted = click_accepts(click_app.cli, argv)
        tree = click_tree
    command = tree.command(list(path))
    assert command is not None
    parameter = next(p for p in command.parameters if p.name == name)
    assert parameter.is_required is not accepted


def test_parameter_names_are_unique_in_each_command(
    click_tree: Tree, typer_tree: Tree, argparse_tree: Tree
) -> None:
    """SPEC 3.2: a parameter's name is unique in its command (constraints refer to it)."""
    for tree in (click_tree, typer_tree, argparse_tree):
        for command in tree.commands:
            names = [p.name for p in command.parameters]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            assert duplicates == [], f"{tree.dialect} {command.path}: {duplicates}"


# -- snapshot round trip --------------------------------------------------------------------------

SPECS = {
    "click": "click:click_app:cli",
    "typer": "typer:typer_app:app",
    "argparse": "argparse:argparse_app:build_parser",
}


@pytest.mark.parametrize("name", list(SPECS))
def test_snapshot_round_trip(
    tmp_path: Path, name: str, click_tree: Tree, typer_tree: Tree, argparse_tree: Tree
) -> None:
    live = {"click": click_tree, "typer": typer_tree, "argparse": argparse_tree}[name]
    result = run_cli(
        ["tree", "--tree", SPECS[name], "--format", "json", "--program", "notes"], cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    snapshot = tmp_path / "tree.json"
    snapshot.write_text(result.stdout, encoding="utf-8")
    assert json.loads(result.stdout)["format"] == "exampleguard.tree/v1"

    loaded, _ = load_tree(TreeSpec("snapshot", path=snapshot), root=tmp_path, display="tree.json")
    assert loaded == live

    again = run_cli(["tree", "--tree", "tree.json", "--format", "json"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == result.stdout


def test_tree_text_output_shows_the_commands(tmp_path: Path) -> None:
    result = run_cli(["tree", "--tree", SPECS["click"], "--program", "notes"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for words in ("notes delete", "notes tags rename", "notes view show", "--tag"):
        assert words in result.stdout


def test_the_program_defaults_to_the_module_name(tmp_path: Path) -> None:
    result = run_cli(["tree", "--tree", SPECS["click"], "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["program"] == "click-app"


# -- the child process --------------------------------------------------------------------------

CHILD_CATALOG = {
    "format": "exampleguard.catalog/v1",
    "program": "app",
    "tools": [{"id": "app", "command": [], "examples": [{"command": "app --x 1"}]}],
}
CLI_TAIL = '''
import click


@click.command()
@click.option("--x", type=int)
def cli(x):
    """An app."""
'''


def child_project(root: Path, source: str, timeout: float = 30) -> None:
    (root / "app_module.py").write_text(source, encoding="utf-8")
    (root / "catalog.json").write_text(json.dumps(CHILD_CATALOG), encoding="utf-8")
    (root / "exampleguard.toml").write_text(
        f'catalog = "catalog.json"\ntree = "click:app_module:cli"\ntree_timeout = {timeout}\n',
        encoding="utf-8",
    )


FAILING_CHILDREN = {
    "raises": (
        'raise RuntimeError("database is not configured")\n',
        "raised RuntimeError: database is not configured",
    ),
    "sys-exit": ("import sys\nsys.exit(3)\n", "called sys.exit(3) while importing"),
    "keyboard-interrupt": ("raise KeyboardInterrupt\n", "interrupted while importing"),
    "os-exit-failure": ("import os\nos._exit(3)\n", "exited with status 3"),
    "os-exit-success": ("import os\nos._exit(0)\n", "before producing a tree"),
    "killed": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "killed by signal 9"),
    "not-a-command": ("cli = print\n", "not a Click command"),
}


@pytest.mark.parametrize("name", list(FAILING_CHILDREN))
def test_an_application_that_fails_to_import(tmp_path: Path, name: str) -> None:
    source, message = FAILING_CHILDREN[name]
    child_project(tmp_path, source)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "tree-unavailable" in result.stderr
    assert "click:app_module:cli" in result.stderr
    assert message in result.stderr
    assert_unusable_report(result.stdout)
    assert "Traceback" not in result.stderr


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


HANGS = (
    UNGUARDED
    + """
import os, time

helper = spawn("sleep", "300")
write_file("pids", f"{os.getpid()} {helper}")
time.sleep(300)
"""
)


def test_a_hanging_import_is_bounded_by_tree_timeout(tmp_path: Path) -> None:
    child_project(tmp_path, HANGS + CLI_TAIL, timeout=1)
    started = time.monotonic()
    result = run_cli(["tree"], cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stdout + result.stderr
    assert "did not finish importing within 1 seconds" in result.stderr
    # What the import started dies with the sandbox's run (tests/sandbox: tree-killed).
    assert elapsed < 30, "bounded by tree_timeout (1 s), with room for a slow machine"


NOISY = """
import os, sys, atexit

print('{"format": "exampleguard.tree/v1", "program": "fake", "commands": []}')
print("x" * 200_000)
sys.stderr.write("warning: something on stderr\\n" * 1000)
os.chdir("/")
os.environ["HOME"] = "/nonexistent"
os.environ["PYTHONPATH"] = "/nonexistent"
sys.path.insert(0, "/nonexistent")
atexit.register(print, "bye from atexit")
"""


def test_an_application_that_prints_and_changes_global_state_still_works(tmp_path: Path) -> None:
    child_project(tmp_path, NOISY + CLI_TAIL)
    result = run_cli(["counts", "--write"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # Relative paths still resolve: exampleguard's own working directory is untouched.
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["examples"][0]["arguments"] == {"x": 1}

    tree = run_cli(["tree", "--format", "json"], cwd=tmp_path)
    assert tree.returncode == 0, tree.stderr
    snapshot = json.loads(tree.stdout)
    assert snapshot["program"] == "app"
    assert snapshot["commands"][0]["parameters"][0]["flags"] == ["--x"]


# -- a real third-party Click CLI ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sqlite_utils_tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    cwd = tmp_path_factory.mktemp("sqlite-utils")
    result = run_cli(["tree", "--tree", "click:sqlite_utils.cli:cli", "--format", "json"], cwd=cwd)
    assert result.returncode == 0, result.stderr
    return Tree.model_validate(json.loads(result.stdout))


def test_sqlite_utils_routes_unknown_words_to_query(sqlite_utils_tree: Tree) -> None:
    import sqlite_utils.cli

    root = sqlite_utils_tree.command([])
    assert root is not None
    assert sqlite_utils_tree.program == "sqlite-utils"
    assert root.runnable is False
    assert root.default_command == sqlite_utils.cli.cli.default_cmd_name == "query"
    assert root.default_if_no_args is bool(sqlite_utils.cli.cli.default_if_no_args)


def test_sqlite_utils_has_every_command(sqlite_utils_tree: Tree) -> None:
    import click
    import sqlite_utils.cli

    group = sqlite_utils.cli.cli
    context = click.Context(group, info_name="sqlite-utils")
    names = group.list_commands(context)
    assert {"insert", "query", "rows", "tables", "create-table"} <= set(names)
    assert [c.path for c in sqlite_utils_tree.commands[1:]] == [[name] for name in names]
    for name in names:
        command = sqlite_utils_tree.command([name])
        assert command is not None
        assert command.runnable is True
        assert command.hidden is bool(group.get_command(context, name).hidden)


@pytest.mark.parametrize("name", ["insert", "query", "create-table"])
def test_sqlite_utils_parameters_match_click(sqlite_utils_tree: Tree, name: str) -> None:
    import click
    import sqlite_utils.cli

    group = sqlite_utils.cli.cli
    context = click.Context(group, info_name="sqlite-utils", **group.context_settings)
    real = group.get_command(context, name)
    command = sqlite_utils_tree.command([name])
    assert command is not None
    by_name = {p.name: p for p in command.parameters}
    for source in real.get_params(click.Context(real, info_name=name, parent=context)):
        extracted = by_name[source.name]
        if isinstance(source, click.Argument):
            assert extracted.positional
            assert extracted.is_required is bool(source.required)
            continue
        assert extracted.flags == list(source.opts)
        assert extracted.negation_flags == [o for o in source.secondary_opts if o]
        assert extracted.multiple is bool(source.multiple)
        assert extracted.is_flag is bool(source.is_flag or source.count)
        assert extracted.is_required is bool(source.required)


def test_sqlite_utils_insert_facts(sqlite_utils_tree: Tree) -> None:
    insert = sqlite_utils_tree.command(["insert"])
    assert insert is not None
    params = {p.name: p for p in insert.parameters}
    assert [p.name for p in insert.parameters if p.positional][:2] == ["path", "table"]
    assert params["path"].type == "path"
    assert (params["pk"].flags, params["pk"].multiple) == (["--pk"], True)
    assert (params["csv"].flags, params["csv"].type) == (["-c", "--csv"], "boolean")
    assert (params["batch_size"].type, params["batch_size"].default) == ("integer", 100)
    assert (params["default"].nargs, params["default"].multiple) == (2, True)
