"""The public surface is small, and every module says what it offers in an ``__all__``.

Public: the package (``main``), the console script's module, the pytest plugin, the schemas and
the sandbox's package. Everything else is a module whose name starts with an underscore.
"""

from __future__ import annotations

import ast
import gc
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.project import REPOSITORY

PACKAGES = ("exampleguard", "sandbox")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPOSITORY / package).rglob("*.py")):
            parts = list(path.relative_to(REPOSITORY).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported_names() -> list[tuple[str, str, str]]:
    """(importing file, module, name) for every ``from MODULE import name`` between modules."""
    taken = []
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" not in MODULES:
                        shown = str(path.relative_to(REPOSITORY))
                        taken.append((shown, node.module, alias.name))
    return taken


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_module_exports_only_public_names_it_defines(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    for item in exported:
        assert not item.startswith("_") or item == "__version__", f"{name} exports {item}"
        assert hasattr(module, item), f"{name}.__all__ names {item}, which it does not define"


def test_what_a_module_imports_from_another_is_exported_there() -> None:
    missing = [
        f"{where} imports {name} from {module}"
        for where, module, name in _imported_names()
        if name not in importlib.import_module(module).__all__
    ]
    assert missing == []


PUBLIC = {
    "exampleguard",
    "exampleguard.__main__",
    "exampleguard.cli",
    "exampleguard.pytest_plugin",
    "exampleguard.schemas",
    "sandbox",
}


def _private(name: str) -> bool:
    return any(part.startswith("_") and part != "__main__" for part in name.split("."))


def test_every_module_but_the_public_surface_is_private() -> None:
    public = {name for name in MODULES if not _private(name)}
    assert public == PUBLIC


def test_main_runs_the_command_line_in_this_process_and_returns_its_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import exampleguard

    # Counted before: CPython 3.12 starts with objects in the permanent generation already.
    frozen = gc.get_freeze_count()
    assert exampleguard.main(["explain", "unknown-flag"]) == 0
    assert "unknown-flag" in capsys.readouterr().out
    assert exampleguard.main(["explain", "no-such-code"]) != 0
    # An embedding program keeps its collector as it was: only the console script's own
    # process, as it ends, leaves its objects to the operating system.
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_the_console_script_ends_as_any_program(tmp_path: Path) -> None:
    # An exit handler of the process (as coverage or a profiler installs) still runs, after
    # the whole output, and the exit code is main's.
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('exit handler ran', flush=True))\n"
        "from exampleguard.cli import entry_point\n"
        "sys.argv = ['exampleguard', 'explain', 'unknown-flag']\n"
        "entry_point()\n"
    )
    ended = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY), "NO_COLOR": "1"},
    )
    assert ended.returncode == 0, ended.stderr
    *output, last = ended.stdout.splitlines()
    assert "unknown-flag" in "\n".join(output)
    assert last == "exit handler ran"
