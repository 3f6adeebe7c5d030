"""``validate`` imports only what it uses: a pre-commit gate pays for nothing else.

Run as a real process on a project with a tree snapshot and plain text output, ``validate``
must not import the terminal renderer, the JSON Schema validator (no run validates with it; the
schemas' agreement with the binder is a differential test), the shell parser (the fast
tokenizer handles plain command lines), a standalone Click, the tree adapters and the judges
(only the child that imports a live tree runs them), the sandbox, the dry-run stage or the
strict report models (only ``report merge`` reads with them). What is imported is read from
``sys.modules`` at the end of the run, never timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.project import NOTES_TREE as TREE
from tests.support.project import make_project

HEAVY = (
    "rich",
    "jsonschema",
    "referencing",
    "bashlex",
    "click",
    "exampleguard._adapters._child",
    "exampleguard._adapters.argparser",
    "exampleguard._adapters.clickfamily",
    "exampleguard._adapters.judge_argparse",
    "exampleguard._adapters.judge_click",
    "sandbox",
    "exampleguard._dryrun",
    "exampleguard._report.model",
)

PROBE = """
import json, sys
from exampleguard.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded_modules(root: Path, *args: str) -> tuple[int, str, list[str]]:
    """Run the CLI with ``args`` in ``root``; its exit code, its output and the modules loaded."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "NO_COLOR": "1"},
    )
    *text, last = result.stdout.splitlines()
    probe = json.loads(last)
    return probe["code"], "\n".join(text), probe["modules"]


def heavy_among(modules: list[str]) -> list[str]:
    """The listed heavy modules (or their submodules) among ``modules``."""
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_validate_on_a_snapshot_with_text_output_imports_no_heavy_module(tmp_path: Path) -> None:
    (tmp_path / "tree.json").write_text(json.dumps(TREE), encoding="utf-8")
    tool = {
        "id": "notes.add",
        "command": ["add"],
        "examples": [
            {"command": "notes add 'buy milk' --tag home --limit 3 --format json"},
            {"command": "notes add todo -t work"},
        ],
    }
    make_project(tmp_path, [tool], dialect=None, tree="tree.json")
    code, text, modules = loaded_modules(tmp_path, "validate")
    assert code == 0, text
    assert "All checks passed: 2 examples of 1 tool." in text
    assert heavy_among(modules) == []


def test_the_probe_sees_a_heavy_module_when_one_is_used(tmp_path: Path) -> None:
    # The tree listing draws with rich: the same probe must notice it there.
    (tmp_path / "tree.json").write_text(json.dumps(TREE), encoding="utf-8")
    make_project(tmp_path, [{"id": "notes.add", "command": ["add"]}], tree="tree.json")
    code, text, modules = loaded_modules(tmp_path, "tree")
    assert code == 0, text
    assert "add" in text
    assert "rich" in heavy_among(modules)
