"""The tree cache: a live tree is imported again exactly when something it came from changed.

Each test runs the real CLI on a project whose tree is a live Click application, with the
cache in a directory of the test's own (``XDG_CACHE_HOME``), and the import contained as it is
by default (in the sandbox where the machine has bubblewrap). Whether a run imported the
application is seen from outside: the application refuses to be imported while a file
``.control/refuse`` exists in the project, which is not part of the cache key (the import never
lists that directory), so a run with it there succeeds only from the cache. A file, not an
environment variable: the sandbox gives the import an environment of its own.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tests.support.project import run_cli

APP = """
import os

import click

from app_options import NAME

if os.path.exists(os.path.join(os.path.dirname(__file__), ".control", "refuse")):
    raise RuntimeError("imported although cached")


@click.command()
@click.option(NAME, type=int)
def cli(x):
    \"\"\"An app.\"\"\"
"""


def settle(root: Path) -> None:
    """Date the project's files a minute back: a run does not cache what changed as it began."""
    moment = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (moment, moment))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose tree is ``click:app_module:cli``, its option named in another module."""
    root = tmp_path / "project"
    root.mkdir()
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "app",
        "tools": [{"id": "app", "command": [], "examples": [{"command": "app --x 1"}]}],
    }
    (root / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (root / "exampleguard.toml").write_text(
        'catalog = "catalog.json"\ntree = "click:app_module:cli"\ntree_timeout = 30\n',
        encoding="utf-8",
    )
    (root / "app_module.py").write_text(APP, encoding="utf-8")
    (root / "app_options.py").write_text('NAME = "--x"\n', encoding="utf-8")
    (root / ".control").mkdir()
    counts = run_cli(["counts", "--write", "--no-cache"], cwd=root)
    assert counts.returncode == 0, counts.stderr
    settle(root)
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """The cache directory of this test."""
    return tmp_path / "cache"


def validate(root: Path, cache: Path, *args: str, refuse: bool = False) -> tuple[int, str]:
    """Run ``validate`` in ``root``; its exit code and its output, stdout then stderr."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    marker = root / ".control" / "refuse"
    if refuse:
        marker.write_text("", encoding="utf-8")
    try:
        result = run_cli(["validate", *args], cwd=root, env=env)
    finally:
        marker.unlink(missing_ok=True)
    return result.returncode, result.stdout + result.stderr


def entries(cache: Path) -> list[Path]:
    """The cache's entries."""
    return sorted((cache / "exampleguard" / "trees").glob("*.json"))


def test_a_second_run_with_nothing_changed_does_not_import_again(
    project: Path, cache: Path
) -> None:
    first = validate(project, cache)
    assert first[0] == 0, first[1]
    assert len(entries(cache)) == 1
    assert validate(project, cache, refuse=True) == first


def test_an_application_whose_help_shows_examples_is_not_imported_again(
    project: Path, cache: Path
) -> None:
    # Each example of the help text comes back with a verdict of its own, after the catalog's.
    source = (project / "app_module.py").read_text(encoding="utf-8")
    helped = source.replace(
        '"""An app."""', '"""An app.\n\n    Examples:\n\n      app --x 2\n    """'
    )
    assert helped != source
    (project / "app_module.py").write_text(helped, encoding="utf-8")
    counts = run_cli(["counts", "--write", "--no-cache"], cwd=project)
    assert counts.returncode == 0, counts.stderr
    settle(project)
    first = validate(project, cache)
    assert first[0] == 0, first[1]
    [entry] = entries(cache)
    assert len(json.loads(entry.read_text(encoding="utf-8"))["verdicts"]) == 2
    assert validate(project, cache, refuse=True) == first


def test_no_cache_imports_afresh(project: Path, cache: Path) -> None:
    assert validate(project, cache)[0] == 0
    code, output = validate(project, cache, "--no-cache", refuse=True)
    assert code == 2
    assert "tree-unavailable" in output
    assert "imported although cached" in output


def test_an_edit_of_the_application_is_seen_by_the_next_run(project: Path, cache: Path) -> None:
    assert validate(project, cache)[0] == 0
    app = project / "app_module.py"
    app.write_text(APP.replace("@click.option(NAME", "@click.option('--y'"), encoding="utf-8")
    code, output = validate(project, cache)
    assert code == 1
    assert "unknown-flag app[0]: --x is not an option of 'app'" in output


def test_an_edit_of_a_module_the_application_imports_is_seen(project: Path, cache: Path) -> None:
    assert validate(project, cache)[0] == 0
    (project / "app_options.py").write_text('NAME = "--z"\n', encoding="utf-8")
    code, output = validate(project, cache)
    assert code == 1
    assert "--x is not an option of 'app'" in output
    # And back: the cache never answers with the tree of an edit that was undone.
    (project / "app_options.py").write_text('NAME = "--x"\n', encoding="utf-8")
    assert validate(project, cache)[0] == 0


def test_a_module_added_where_it_shadows_an_imported_one_is_seen(
    project: Path, cache: Path
) -> None:
    # The options come from a package directory on the import path; a module of the same name
    # added to the project directory, earlier on the path, takes its place.
    (project / "app_options.py").unlink()
    library = project / "lib"
    library.mkdir()
    (library / "app_options.py").write_text('NAME = "--x"\n', encoding="utf-8")
    settle(project)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(library)}
    assert run_cli(["validate"], cwd=project, env=env).returncode == 0
    (project / "app_options.py").write_text('NAME = "--w"\n', encoding="utf-8")
    result = run_cli(["validate"], cwd=project, env=env)
    assert result.returncode == 1, result.stderr
    assert "--x is not an option of 'app'" in result.stdout


def test_an_edit_that_keeps_the_size_and_modification_time_is_seen(
    project: Path, cache: Path
) -> None:
    # Over a settling second after the project's files last changed, the entry keeps their
    # status and does not hash them again while it holds; an edit of the same size with the
    # modification time put back still renews the change time, and is seen.
    time.sleep(1.2)
    assert validate(project, cache)[0] == 0
    options = project / "app_options.py"
    [entry] = entries(cache)
    assert str(options) in json.loads(entry.read_text(encoding="utf-8"))["statuses"]
    assert validate(project, cache, refuse=True)[0] == 0
    before = options.stat()
    options.write_text('NAME = "--z"\n', encoding="utf-8")
    os.utime(options, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = options.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    code, output = validate(project, cache)
    assert code == 1
    assert "--x is not an option of 'app'" in output


def test_an_edited_example_asks_the_parser_again(project: Path, cache: Path) -> None:
    assert validate(project, cache)[0] == 0
    catalog_path = project / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["tools"][0]["examples"][0]["command"] = "app --x 2"
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    code, output = validate(project, cache, refuse=True)
    assert code == 2
    assert "imported although cached" in output


def test_an_unreadable_entry_is_ignored_and_replaced(project: Path, cache: Path) -> None:
    first = validate(project, cache)
    [entry] = entries(cache)
    entry.write_text('{"format": "exampleguard.tree-cache/v2", "tree": 1', encoding="utf-8")
    assert validate(project, cache) == first
    assert json.loads(entry.read_text(encoding="utf-8"))["format"] == "exampleguard.tree-cache/v2"
    assert validate(project, cache, refuse=True) == first


def test_an_entry_that_lost_verdicts_is_not_trusted(project: Path, cache: Path) -> None:
    first = validate(project, cache)
    [entry] = entries(cache)
    data = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_text(json.dumps({**data, "verdicts": []}), encoding="utf-8")
    assert validate(project, cache) == first
    assert len(json.loads(entry.read_text(encoding="utf-8"))["verdicts"]) == 1


def test_a_cache_directory_that_cannot_be_written_changes_nothing(
    project: Path, cache: Path
) -> None:
    cache.write_text("a file, not a directory", encoding="utf-8")
    first = validate(project, cache)
    assert first[0] == 0, first[1]
    assert validate(project, cache, "--no-cache") == first


def test_cached_and_uncached_output_is_identical_byte_for_byte(project: Path, cache: Path) -> None:
    # A defect in the catalog, so that the report has something to say.
    catalog_path = project / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    catalog["tools"][0]["examples"].append({"command": "app --x one"})
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")
    settle(project)
    # One entry serves every format: the output is not the tree's to know.
    assert validate(project, cache)[0] == 1
    for output_format in ("text", "json", "sarif"):
        uncached = validate(project, cache, "--no-cache", "--format", output_format)
        cached = validate(project, cache, "--format", output_format, refuse=True)
        assert cached == uncached
        assert uncached[0] == 1


def test_an_entry_is_tied_to_where_the_interpreter_imports_from() -> None:
    # An editable install re-pointed at another checkout of the same version: other code,
    # from other files, under the same version and PYTHONPATH.
    from exampleguard._fingerprint import interpreted

    assert interpreted({})["path"] == sys.path
