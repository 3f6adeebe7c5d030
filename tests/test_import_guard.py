"""Importing the tree cannot change the project.

The child that imports a tree runs the application's code under a guard (an audit hook that
refuses writes outside a scratch directory, starting programs and network use) with a home of
its own in that scratch directory, and — with ``tree_isolation = "auto"``, where the machine
has bubblewrap — inside the sandbox too (project read-only, no network). A tree spec is checked
before anything is called: a Click command named with ``argparse:`` is refused with the right
spelling, and only a zero-argument factory is called. Each case ends in exit 2
``tree-unavailable`` with nothing in the project changed, with the sandbox and without it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import sandbox
from tests.support.project import app_project_files, run_cli
from tests.support.unguarded import UNGUARDED

MODULE = "app_module"

# A main() of the kind a formatter has: it rewrites the project's files and returns nothing.
WRITES_FILES = """
import pathlib


def main():
    for path in pathlib.Path(".").glob("*.py"):
        path.write_text("# reformatted\\n")
    pathlib.Path("created-by-main.txt").write_text("x")
"""

CLICK_THAT_WRITES = """
import pathlib

import click


@click.command()
def cli():
    pathlib.Path("created-by-main.txt").write_text("x")
"""

TAKES_ARGV = """
import pathlib


def main(argv):
    pathlib.Path("created-by-main.txt").write_text("x")
"""

ARGPARSE_APP = """
import argparse


def build():
    parser = argparse.ArgumentParser(prog="app")
    parser.add_argument("--x", type=int)
    return parser
"""

CLICK_TAIL = """
import click


@click.command()
@click.option("--x", type=int)
def cli(x):
    pass
"""


def _bubblewrap() -> bool:
    return any(r.name == "bwrap" and r.available for r in sandbox.probe_backends())


# "auto" is the sandbox only where the machine has it; without it, auto is the guard alone.
ISOLATIONS = [
    pytest.param(
        "auto",
        marks=pytest.mark.skipif(not _bubblewrap(), reason="bubblewrap is not available here"),
        id="with-bubblewrap",
    ),
    pytest.param("guard", id="without-bubblewrap"),
]


def _project(root: Path, module: str, tree: str, isolation: str = "guard") -> dict[str, str]:
    files = app_project_files(module=MODULE, isolation=isolation)
    files[f"{MODULE}.py"] = module
    files["exampleguard.toml"] = (
        f'catalog = "catalog.json"\ntree = "{tree}"\ntree_timeout = 20\n'
        f'tree_isolation = "{isolation}"\n'
    )
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return files


def _unchanged(root: Path, files: dict[str, str]) -> None:
    assert sorted(p.name for p in root.iterdir()) == sorted(files)
    for name, text in files.items():
        assert (root / name).read_text(encoding="utf-8") == text, name


def _refused_unchanged(root: Path, files: dict[str, str], message: str) -> None:
    """``validate`` stops with exit 2 ``tree-unavailable`` saying ``message``; nothing changed."""
    result = run_cli(["validate"], cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "tree-unavailable" in result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    _unchanged(root, files)


@pytest.mark.parametrize(
    ("module", "tree", "message"),
    [
        (WRITES_FILES, "argparse:app_module:main", "refuses writing"),
        (CLICK_THAT_WRITES, "argparse:app_module:cli", "use tree = 'click:app_module:cli'"),
        (TAKES_ARGV, "argparse:app_module:main", "takes arguments (argv)"),
        (
            "import pathlib\npathlib.Path('created-at-import.txt').write_text('x')\n" + CLICK_TAIL,
            "click:app_module:cli",
            "refuses writing",
        ),
        (
            "import subprocess\nsubprocess.run(['touch', 'created-at-import.txt'])\n" + CLICK_TAIL,
            "click:app_module:cli",
            "refuses starting a program",
        ),
        (
            "import os\nos.remove('catalog.json')\n" + CLICK_TAIL,
            "click:app_module:cli",
            "refuses os.remove",
        ),
        (
            "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)\n" + CLICK_TAIL,
            "click:app_module:cli",
            "refuses network use",
        ),
        (ARGPARSE_APP, "click:app_module:build", "is not a Click command"),
    ],
    ids=[
        "a-main-that-writes-files",
        "a-click-command-named-as-argparse",
        "a-main-that-takes-argv",
        "an-import-that-writes-a-file",
        "an-import-that-runs-a-program",
        "an-import-that-removes-a-file",
        "an-import-that-opens-a-socket",
        "a-function-named-as-click",
    ],
)
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_what_would_change_the_project_is_refused_and_nothing_changes(
    tmp_path: Path, module: str, tree: str, message: str, isolation: str
) -> None:
    _refused_unchanged(tmp_path, _project(tmp_path, module, tree, isolation), message)


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_an_import_may_write_to_its_own_home_and_temporary_directory(
    tmp_path: Path, isolation: str
) -> None:
    module = (
        "import os, pathlib, tempfile\n"
        "cache = pathlib.Path.home() / '.cache' / 'app'\n"
        "cache.mkdir(parents=True)\n"
        "(cache / 'state').write_text('x')\n"
        "tempfile.NamedTemporaryFile(delete=False).write(b'x')\n"
        "assert not str(pathlib.Path.home()).startswith(os.getcwd())\n" + CLICK_TAIL
    )
    files = _project(tmp_path, module, "click:app_module:cli", isolation)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True
    _unchanged(tmp_path, files)


# A write through libc, which the guard's audit hook cannot see.
WRITES_BELOW_THE_GUARD = UNGUARDED + "write_file('created-below-the-guard.txt', 'x')\n" + CLICK_TAIL


@pytest.mark.skipif(not _bubblewrap(), reason="bubblewrap is not available here")
def test_the_sandbox_holds_where_the_guard_is_bypassed(tmp_path: Path) -> None:
    files = _project(tmp_path, WRITES_BELOW_THE_GUARD, "click:app_module:cli", "auto")
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # The project is read-only in the sandbox: the write failed, the import went on.
    _unchanged(tmp_path, files)


def test_the_guard_alone_does_not_see_below_python(tmp_path: Path) -> None:
    """The documented limit of the guard (why the sandbox is used where the machine has it)."""
    _project(tmp_path, WRITES_BELOW_THE_GUARD, "click:app_module:cli", "guard")
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "created-below-the-guard.txt").exists()


# Imports that need what the sandbox withholds, reached through libc below the guard, and that
# stop when they do not get it (as an application that cannot do without them would).
NEEDS_A_WRITE = (
    UNGUARDED
    + """
fd = _libc.open(b"created-below-the-guard.txt", os.O_WRONLY | os.O_CREAT, 0o644)
if fd < 0:
    raise OSError(ctypes.get_errno(), "the project could not be written")
_libc.close(fd)
"""
    + CLICK_TAIL
)
NEEDS_THE_NETWORK = (
    UNGUARDED
    + """
import socket, struct

PORT = {port}
connection = socket.socket()
address = struct.pack("=H", socket.AF_INET) + struct.pack("!H", PORT) + bytes([127, 0, 0, 1])
address += bytes(8)
if _libc.connect(connection.fileno(), address, len(address)) != 0:
    raise OSError(ctypes.get_errno(), "the network could not be reached")
"""
    + CLICK_TAIL
)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP listener on loopback, for an import to connect to."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.setblocking(False)
    yield server
    server.close()


def _connections(server: socket.socket) -> int:
    count = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            server.accept()[0].close()
            count += 1
    return count


@pytest.mark.skipif(not _bubblewrap(), reason="bubblewrap is not available here")
@pytest.mark.enable_socket
@pytest.mark.parametrize(
    ("needs", "message"),
    [
        ("write", "the project could not be written"),
        ("network", "the network could not be reached"),
    ],
)
def test_an_import_below_the_guard_fails_cleanly_in_the_sandbox(
    tmp_path: Path, listener: socket.socket, needs: str, message: str
) -> None:
    port = listener.getsockname()[1]
    module = NEEDS_A_WRITE if needs == "write" else NEEDS_THE_NETWORK.replace("{port}", str(port))
    files = _project(tmp_path, module, "click:app_module:cli", "auto")
    # The application's own error, as it stopped: what it needed was not there.
    _refused_unchanged(tmp_path, files, message)
    assert _connections(listener) == 0


@pytest.mark.enable_socket
@pytest.mark.parametrize("needs", ["write", "network"])
def test_the_guard_alone_lets_an_import_below_it_through(
    tmp_path: Path, listener: socket.socket, needs: str
) -> None:
    """What the test above would see without the sandbox: the import gets what it needs."""
    port = listener.getsockname()[1]
    module = NEEDS_A_WRITE if needs == "write" else NEEDS_THE_NETWORK.replace("{port}", str(port))
    _project(tmp_path, module, "click:app_module:cli", "guard")
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    if needs == "write":
        assert (tmp_path / "created-below-the-guard.txt").exists()
    else:
        assert _connections(listener) == 1


def test_a_zero_argument_factory_is_called(tmp_path: Path) -> None:
    files = _project(tmp_path, ARGPARSE_APP, "argparse:app_module:build")
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["examples"][0]["arguments"] == {"x": 1}
    _unchanged(tmp_path, files)


@pytest.mark.parametrize(
    ("module", "tree", "message"),
    [
        (WRITES_FILES, "argparse:app_module:main", "refuses writing"),
        (CLICK_THAT_WRITES, "argparse:app_module:cli", "use tree = 'click:app_module:cli'"),
        (TAKES_ARGV, "argparse:app_module:main", "takes arguments (argv)"),
    ],
    ids=["a-main-that-writes-files", "a-click-command-named-as-argparse", "a-main-that-takes-argv"],
)
def test_init_refuses_what_is_not_a_parser_and_changes_nothing(
    tmp_path: Path, module: str, tree: str, message: str
) -> None:
    files = {f"{MODULE}.py": module, "pyproject.toml": '[project]\nname = "app"\n'}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = run_cli(["init", "--tree", tree, "--program", "app"], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "tree-unavailable" in result.stderr
    assert message in result.stderr
    assert "changed nothing" in result.stderr
    assert "Traceback" not in result.stderr
    _unchanged(tmp_path, files)


@pytest.mark.skipif(not _bubblewrap(), reason="bubblewrap is not available here")
def test_a_run_reports_the_same_with_the_sandbox_and_without(tmp_path: Path) -> None:
    files = app_project_files()
    catalog = json.loads(files["catalog.json"])
    # A defect the real parser finds, so that the reports have something to say.
    catalog["tools"][0]["examples"].append({"command": "app --x one"})
    files["catalog.json"] = json.dumps(catalog)
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    config = tmp_path / "exampleguard.toml"
    for output_format in ("text", "json", "sarif"):
        outputs = []
        for isolation in ("auto", "guard"):
            config.write_text(
                files["exampleguard.toml"].replace('"guard"', f'"{isolation}"'), encoding="utf-8"
            )
            result = run_cli(["validate", "--no-cache", "--format", output_format], cwd=tmp_path)
            assert result.returncode == 1, result.stderr
            outputs.append((result.stdout, result.stderr))
        assert outputs[0] == outputs[1]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_module_on_a_pythonpath_entry_in_tmp_is_imported_as_without_a_sandbox(
    tmp_path: Path, isolation: str
) -> None:
    # The user's own import path is shown to the import as it is, wherever it lies: only paths
    # derived from file content are kept to installations (a folder of modules in /tmp is none).
    elsewhere = Path(tempfile.mkdtemp(prefix="exampleguard-test-path-", dir="/tmp"))
    try:
        elsewhere.chmod(0o755)
        (elsewhere / "option_name.py").write_text('NAME = "--x"\n', encoding="utf-8")
        (elsewhere / "option_name.py").chmod(0o644)
        module = "from option_name import NAME\n" + CLICK_TAIL.replace('"--x"', "NAME")
        assert "NAME" in module
        _project(tmp_path, module, f"click:{MODULE}:cli", isolation)
        env = {**os.environ, "PYTHONPATH": str(elsewhere)}
        result = run_cli(["validate", "--no-cache"], cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)
