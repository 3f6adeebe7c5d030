"""The run cache: a run whose inputs are unchanged is answered from it, and nothing else is.

Each test runs the real CLI with the caches in a directory of the test's own. A project's files
are dated a minute back first (``settle``): a run does not keep what changed as it began. Whether
a run was answered from the cache is seen from what the process imported (the models, which a
replayed run never needs); whether an answer is true, by comparing it with ``--no-cache``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.project import NOTES_TREE as TREE
from tests.support.project import REPOSITORY, make_project, run_main

TOOL = {
    "id": "notes.add",
    "command": ["add"],
    "examples": [
        {"command": "notes add 'buy milk' --tag home --limit 3 --format json"},
        {"command": "notes add todo -t work"},
    ],
}

README = """# notes

```sh
notes add 'call the bank' --limit 2
```
"""

# Prints the exit code, then whether the run imported the models or the pipeline. (pydantic
# itself is no sign of the models: Typer converts the command line's own values through it.)
PROBE = """
import json, sys
from exampleguard.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("exampleguard.model", "exampleguard.pipeline") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}))
"""


def settle(root: Path) -> None:
    """Date every file and folder of the project a minute back."""
    moment = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (moment, moment), follow_symlinks=False)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's cache directory, for the runs in this process and in processes of its own."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(directory))
    return directory


@pytest.fixture
def project(tmp_path: Path, cache: Path) -> Path:
    """A project checked against a tree snapshot, with a README holding one more example."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "tree.json").write_text(json.dumps(TREE), encoding="utf-8")
    (root / "README.md").write_text(README, encoding="utf-8")
    make_project(root, [TOOL], dialect=None, tree="tree.json")
    settle(root)
    return root


def validate(root: Path, *args: str) -> tuple[int, str, str]:
    """``exampleguard validate ARGS`` in ``root``: exit code, stdout, stderr."""
    result = run_main(["validate", *args], cwd=root)
    return result.returncode, result.stdout, result.stderr


def entries(cache: Path) -> list[Path]:
    """The run cache's entries."""
    return sorted((cache / "exampleguard" / "runs").glob("*.json"))


def probe(root: Path, *args: str, package: Path = REPOSITORY) -> tuple[int, list[str]]:
    """A run of ``validate`` in a process of its own: its exit code and the heavy imports.

    ``package`` is where exampleguard is imported from; bytecode is written as by default.
    """
    environment = {**os.environ, "PYTHONPATH": str(package), "NO_COLOR": "1"}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "validate", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )
    report = json.loads(result.stdout.splitlines()[-1])
    return report["code"], report["heavy"]


def test_a_second_run_with_nothing_changed_is_answered_without_the_models(project: Path) -> None:
    code, heavy = probe(project)
    assert (code, heavy) == (0, ["exampleguard.model", "exampleguard.pipeline"])
    assert probe(project) == (0, [])


def test_a_first_run_that_writes_the_bytecode_of_a_fresh_checkout_is_kept(
    project: Path, tmp_path: Path
) -> None:
    # A clean checkout has no bytecode: the first run's imports make every package's
    # __pycache__, which renews the times of the folders the import system listed.
    checkout = tmp_path / "checkout"
    shutil.copytree(
        REPOSITORY / "exampleguard",
        checkout / "exampleguard",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    assert probe(project, package=checkout) == (0, ["exampleguard.model", "exampleguard.pipeline"])
    assert list(checkout.rglob("__pycache__")), "the first run wrote no bytecode"
    assert probe(project, package=checkout) == (0, [])


def test_a_replayed_run_writes_what_the_run_wrote(project: Path, cache: Path) -> None:
    first = validate(project)
    assert first[0] == 0, first
    assert "All checks passed: 3 examples of 1 tool." in first[1]
    assert len(entries(cache)) == 1
    assert validate(project) == first
    assert validate(project, "--no-cache") == first


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((), id="full"),
        pytest.param(("--format", "concise"), id="concise"),
        pytest.param(("--format", "json"), id="json"),
        pytest.param(("--format", "junit"), id="junit"),
        pytest.param(("--format", "sarif"), id="sarif"),
        pytest.param(("--format", "github"), id="github"),
        pytest.param(("--statistics",), id="statistics"),
        pytest.param(("--quiet",), id="quiet"),
        pytest.param(("--exit-zero",), id="exit-zero"),
    ],
)
def test_every_format_of_a_failing_run_is_replayed_as_written(
    project: Path, cache: Path, args: tuple[str, ...]
) -> None:
    catalog = project / "catalog.json"
    catalog.write_text(catalog.read_text(encoding="utf-8").replace("--limit 3", "--limit 0"))
    settle(project)
    fresh = validate(project, "--no-cache", *args)
    assert fresh[0] == (0 if "--exit-zero" in args else 1), fresh
    assert validate(project, *args) == fresh
    assert entries(cache), "the run was not kept"
    assert validate(project, *args) == fresh


def _edit(name: str, old: str, new: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / name
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return change


def _write(name: str, text: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    return change


def _remove(name: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        (root / name).unlink()

    return change


def _link(name: str, target: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)

    return change


def _replace_folder_with_link(name: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        folder = root / name
        copy = root.parent / "elsewhere"
        folder.rename(copy)
        folder.symlink_to(copy, target_is_directory=True)

    return change


BAD_DISPOSITION = """[[disposition]]
tool = "notes.nope"
example = 0
reason_code = "needs-fixture"
reason = "Needs a database the tests do not ship."
reviewer = "a-reviewer"
"""


def _nothing(root: Path) -> None:
    del root


def _counts_written(root: Path) -> None:
    assert run_main(["counts", "--write", "--no-cache"], cwd=root).returncode == 0


# Each change alters what validate says; the run after it must say what a fresh run says. The
# project's docs globs never list its root folder, so a file that appears there is seen only
# through the question the run asked about it ("is there a README?"), never a listing.
CHANGES: dict[str, tuple[Callable[[Path], None], Callable[[Path], None]]] = {
    # The same length: only the content tells.
    "catalog, same size": (_nothing, _edit("catalog.json", "--limit 3", "--limit 0")),
    "tree snapshot": (_nothing, _edit("tree.json", '"--format"', '"--output-format"')),
    "configuration": (
        _nothing,
        _edit(
            "exampleguard.toml", 'tree = "tree.json"', 'tree = "tree.json"\nbypass_flags = ["-t"]'
        ),
    ),
    "a disposition folder that appears": (
        _nothing,
        _write("dispositions/more.toml", BAD_DISPOSITION),
    ),
    "the counts file removed": (_nothing, _remove("exampleguard-counts.json")),
    "a counts file that appears": (
        _remove("exampleguard-counts.json"),
        _counts_written,
    ),
    "the README": (_nothing, _edit("README.md", "--limit 2", "--limit x")),
    "the README removed": (_nothing, _remove("README.md")),
    "a README that appears": (_remove("README.md"), _write("README.md", README.replace("2", "x"))),
    "a new document the docs globs name": (
        _nothing,
        _write("docs/guide/usage.md", "```sh\nnotes add x --colour red\n```\n"),
    ),
    "a folder of documents that becomes a link": (
        _write("docs/guide/usage.md", "```sh\nnotes add x --colour red\n```\n"),
        _replace_folder_with_link("docs/guide"),
    ),
    "a linked document whose target appears": (
        _link("docs/guide/gen.md", "../../build/gen.md"),
        _write("build/gen.md", "```sh\nnotes add x --colour red\n```\n"),
    ),
    "a dangling link where the counts file was": (
        _remove("exampleguard-counts.json"),
        _link("exampleguard-counts.json", "nowhere.json"),
    ),
    "a file where the dispositions folder would be": (_nothing, _write("dispositions", "junk\n")),
    "a folder of documents that becomes a virtual environment": (
        _write("docs/guide/usage.md", "```sh\nnotes add x --colour red\n```\n"),
        _write("docs/guide/pyvenv.cfg", "home = /usr/bin\n"),
    ),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_change_to_any_input_is_seen_by_the_next_run(
    project: Path, cache: Path, name: str
) -> None:
    setup, change = CHANGES[name]
    config = project / "exampleguard.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + 'docs = ["README.md", "docs/**/*.md"]\n',
        encoding="utf-8",
    )
    (project / "docs" / "guide").mkdir(parents=True)
    setup(project)
    settle(project)
    before = validate(project)
    assert entries(cache), "the run was not kept"
    change(project)
    after = validate(project)
    assert after != before
    assert after == validate(project, "--no-cache")
    # Settled, the changed project is kept and replayed like any other.
    settle(project)
    assert validate(project) == after
    assert validate(project) == after


def test_a_configuration_nearer_the_working_directory_is_another_run(project: Path) -> None:
    assert validate(project)[0] == 0
    inner = project / "inner"
    inner.mkdir()
    before = run_main(["validate"], cwd=inner)
    assert before.returncode == 0, before.stderr
    (inner / "exampleguard.toml").write_text('catalog = "missing.json"\n', encoding="utf-8")
    after = run_main(["validate"], cwd=inner)
    assert after.returncode == 2
    assert "missing.json" in after.stderr


def test_an_edited_live_tree_is_seen(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    (root / "live_notes.py").write_text(
        "import click\n\n\n@click.group()\ndef cli():\n    pass\n\n\n"
        "@cli.command()\n@click.option('--limit', type=int)\ndef add(limit):\n    pass\n",
        encoding="utf-8",
    )
    tool = {"id": "notes.add", "command": ["add"], "examples": [{"command": "notes add --limit 3"}]}
    make_project(root, [tool], dialect=None, tree="click:live_notes:cli")
    settle(root)
    env = {**os.environ, "PYTHONPATH": str(root)}
    first = run_in(root, env)
    assert first.returncode == 0, first.stderr
    assert entries(cache)
    _edit("live_notes.py", "'--limit'", "'--max'")(root)
    after = run_in(root, env)
    assert after.returncode == 1
    assert "--limit" in after.stdout
    assert after.stdout == run_in(root, env, "--no-cache").stdout


def run_in(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m exampleguard validate ARGS`` in ``root`` with ``env``."""
    return subprocess.run(
        [sys.executable, "-m", "exampleguard", "validate", *args],
        cwd=root,
        env={**env, "PYTHONPATH": os.pathsep.join([env["PYTHONPATH"], str(REPOSITORY)])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_run_whose_inputs_just_changed_is_not_kept(project: Path, cache: Path) -> None:
    (project / "catalog.json").touch()
    assert validate(project)[0] == 0
    assert entries(cache) == []


def test_no_cache_neither_reads_nor_keeps(project: Path, cache: Path) -> None:
    assert validate(project, "--no-cache")[0] == 0
    assert entries(cache) == []


def test_a_damaged_entry_is_ignored_and_replaced(project: Path, cache: Path) -> None:
    first = validate(project)
    [entry] = entries(cache)
    entry.write_text('{"format": "exampleguard.run-cache/v1", "output": 1', encoding="utf-8")
    assert validate(project) == first
    assert json.loads(entry.read_text(encoding="utf-8"))["output"] == first[1]


def test_an_entry_whose_output_was_altered_is_replayed_only_as_stored(
    project: Path, cache: Path
) -> None:
    # The entry is the user's own file, as trusted as the project: what matters is that a
    # replay writes exactly the stored text and nothing of the inputs is skipped.
    validate(project)
    [entry] = entries(cache)
    data = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_text(json.dumps({**data, "ok": "yes"}), encoding="utf-8")
    assert validate(project)[0] == 0
    assert json.loads(entry.read_text(encoding="utf-8"))["ok"] is True


def test_output_naming_an_input_is_refused_on_a_replay_too(project: Path, cache: Path) -> None:
    first = validate(project)
    assert entries(cache)
    catalog = (project / "catalog.json").read_text(encoding="utf-8")
    result = run_main(["validate", "--output", "catalog.json"], cwd=project)
    assert result.returncode == 2
    assert "would replace the catalog" in result.stderr
    assert (project / "catalog.json").read_text(encoding="utf-8") == catalog
    assert validate(project) == first


def test_output_to_a_file_is_replayed_into_the_file(project: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    assert (
        run_main(["validate", "--format", "json", "--output", str(report)], cwd=project).returncode
        == 0
    )
    written = report.read_text(encoding="utf-8")
    report.unlink()
    assert (
        run_main(["validate", "--format", "json", "--output", str(report)], cwd=project).returncode
        == 0
    )
    assert report.read_text(encoding="utf-8") == written


def test_a_file_rewritten_as_the_run_read_it_is_not_kept_even_with_its_times_put_back(
    tmp_path: Path,
) -> None:
    # As cp -p, rsync -t or a restored cache do: the content changes, the modification time
    # does not. The run may have read the old content; its output is not kept for the new.
    from exampleguard.fingerprint import Recording

    read = tmp_path / "catalog.json"
    read.write_text("old", encoding="utf-8")
    moment = time.time() - 60
    os.utime(read, (moment, moment))
    with Recording() as recording:
        read.read_text(encoding="utf-8")
    assert not recording.changed_while_read()
    read.write_text("new", encoding="utf-8")
    os.utime(read, (moment, moment))
    assert recording.changed_while_read()


def test_a_folder_listed_during_the_run_is_compared_by_its_names_and_not_its_bytecode(
    tmp_path: Path,
) -> None:
    from exampleguard.fingerprint import Recording

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# guide", encoding="utf-8")
    with Recording() as recording:
        assert [entry.name for entry in os.scandir(folder)] == ["guide.md"]
    (folder / "__pycache__").mkdir()
    assert not recording.changed_while_read()
    (folder / "usage.md").write_text("# usage", encoding="utf-8")
    assert recording.changed_while_read()


def test_a_run_s_identity_holds_where_it_imports_from() -> None:
    # An editable install re-pointed at another checkout of the same version: other code,
    # from other files, under the same version and PYTHONPATH.
    from exampleguard.fingerprint import interpreted

    assert interpreted({})["path"] == sys.path
