"""The exampleguard tree protocol (``tree = "exec:PROGRAM"``), spoken by small shell programs.

A program in any language prints its tree for ``__exampleguard tree`` and judges one argv per
line for ``__exampleguard judge``. These programs are sh scripts: the protocol, its errors and
its cache are exampleguard's whatever the language; the cobra helper has tests of its own
(``test_cobra_*``). Every run here goes through the sandbox, as a Python tree's import does.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from exampleguard._snapshot import JudgeVerdict
from exampleguard._tree import TreeSpec, load_judged_tree, parse_tree_spec
from exampleguard._treecache import TreeCache
from exampleguard._treechild import Containment
from tests.support.project import make_project, run_cli

pytestmark = pytest.mark.sandbox

TREE = {
    "format": "exampleguard.tree/v1",
    "program": "app",
    "dialect": "click",
    "commands": [
        {"path": [], "runnable": False},
        {
            "path": ["hello"],
            "runnable": True,
            "parameters": [
                {"name": "n", "flags": ["--n"], "type": "integer"},
                {"name": "help", "flags": ["--help"], "type": "boolean", "eager": True},
            ],
        },
    ],
}

# Accepts `hello --n 1` (and `hello --help`), rejects the rest with a cobra-like message.
JUDGE = """\
while IFS= read -r line; do
  case "$line" in
  '["hello","--n","1"]') echo '{"accepted": true, "path": ["hello"], "given": {"n": 1}}';;
  '["hello","--help"]') echo '{"accepted": true, "path": ["hello"], "given": {"help": true}}';;
  *) echo '{"accepted": false, "path": ["hello"], "error": "unknown flag: --bogus"}';;
  esac
done
"""


def program(root: Path, *, tree: str | None = None, judge: str = JUDGE, name: str = "app") -> Path:
    """An sh program in ``root/bin`` that speaks the protocol with ``tree`` and ``judge``."""
    text = json.dumps(TREE) if tree is None else tree
    path = root / "bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    script = f"""\
        #!/bin/sh
        [ "$1" = __exampleguard ] || exit 64
        case "$2" in
        tree) cat <<'EOF'
        {text}
        EOF
        ;;
        judge)
        {textwrap.indent(judge, "        ").strip()}
        ;;
        *) exit 65;;
        esac
        """
    path.write_text(textwrap.dedent(script), encoding="utf-8")
    path.chmod(0o755)
    return path


def project(root: Path, examples: list[str], **settings: object) -> Path:
    tool = {"id": "app.hello", "command": ["hello"], "examples": [{"command": e} for e in examples]}
    make_project(
        root,
        [tool],
        program="app",
        dialect=None,
        tree="exec:./bin/app",
        settings=settings,
        counts=False,
    )
    return root


def validate(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli(["validate", "--format", "json", *args], cwd=root)
    return result.returncode, json.loads(result.stdout)


def codes(report: dict[str, Any]) -> list[str]:
    return [d["code"] for d in report["diagnostics"]]


# -- the setting ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "command"),
    [
        ("exec:./bin/app", ("/p/bin/app",)),
        ("exec:bin/app --profile ci", ("/p/bin/app", "--profile", "ci")),
        ("exec:/usr/bin/tool", ("/usr/bin/tool",)),
        ("exec:'./my app' 'a b'", ("/p/my app", "a b")),
    ],
)
def test_a_relative_program_is_the_projects(value: str, command: tuple[str, ...]) -> None:
    spec = parse_tree_spec(value, Path("/p"))
    assert spec == TreeSpec(
        "exec", command=tuple(str(Path(w)) if w.startswith("/") else w for w in command), text=value
    )
    assert str(spec) == value


@pytest.mark.parametrize("value", ["exec:", "exec:  ", "exec:'unclosed"])
def test_an_exec_setting_without_a_program_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match=r"exec:PROGRAM"):
        parse_tree_spec(value, Path("/p"))


# -- a run ---------------------------------------------------------------------------------------


def test_the_programs_verdict_is_the_verdict(tmp_path: Path) -> None:
    program(tmp_path)
    project(tmp_path, ["app hello --n 1", "app hello --bogus"])
    code, report = validate(tmp_path)
    assert code == 1
    examples = report["examples"]
    assert examples[0]["ok"]
    assert examples[0]["arguments"] == {"n": 1}
    assert not examples[1]["ok"]
    # The model finds the unknown flag itself; the program agrees: no mismatch.
    assert "unknown-flag" in codes(report)
    assert "model-mismatch" not in codes(report)


def test_a_disagreement_is_flagged_and_the_program_wins(tmp_path: Path) -> None:
    program(tmp_path)
    # The model accepts `--n 2`; the program's parser rejects it.
    project(tmp_path, ["app hello --n 2"])
    code, report = validate(tmp_path)
    assert code == 1
    assert "model-mismatch" in codes(report)
    assert "unknown-flag" in codes(report)


def test_a_given_eager_parameter_ends_the_parse(tmp_path: Path) -> None:
    program(tmp_path)
    project(tmp_path, ["app hello --help"])
    _, report = validate(tmp_path)
    assert codes(report) == ["counts-missing"], report
    assert report["examples"][0]["ok"]


def test_a_relative_program_runs_from_the_config_not_the_cwd(tmp_path: Path) -> None:
    program(tmp_path)
    project(tmp_path, ["app hello --n 1"])
    below = tmp_path / "deep" / "er"
    below.mkdir(parents=True)
    result = run_cli(["tree", "--config", str(tmp_path / "exampleguard.toml")], cwd=below)
    assert result.returncode == 0, result.stderr
    assert "app hello" in result.stdout


@pytest.mark.parametrize(
    ("tree", "judge", "message"),
    [
        ("not json at all", JUDGE, "not valid JSON"),
        (json.dumps({**TREE, "extra": 1}), JUDGE, "produced an invalid snapshot"),
        (json.dumps(TREE), "read -r line; echo '{\"accepted\": true}'", "verdict line(s) for 2"),
        (json.dumps(TREE), "while read -r l; do echo '{\"accepted\": 1}'; done", "does not read"),
        (
            json.dumps(TREE),
            'while read -r l; do echo \'{"accepted": true, "path": ["nope"], '
            '"given": {"n": 1}}\'; done',
            "not a command of the tree",
        ),
        (
            json.dumps(TREE),
            'while read -r l; do echo \'{"accepted": true, "path": ["hello"], '
            '"given": {"zz": 1}}\'; done',
            "which no command on its path declares",
        ),
        (json.dumps(TREE), "echo oops >&2; exit 3", "exited with status 3 answering"),
    ],
    ids=[
        "tree-not-json",
        "tree-invalid",
        "too-few-verdicts",
        "verdict-invalid",
        "verdict-unknown-path",
        "verdict-unknown-name",
        "judge-fails",
    ],
)
def test_an_answer_that_does_not_read_stops_the_run(
    tmp_path: Path, tree: str, judge: str, message: str
) -> None:
    program(tmp_path, tree=tree, judge=judge)
    project(tmp_path, ["app hello --n 1", "app hello --n 3"])
    code, report = validate(tmp_path)
    assert code == 2
    assert codes(report) == ["tree-unavailable"], report
    assert message in report["diagnostics"][0]["message"]


def test_a_missing_program_says_to_build_it(tmp_path: Path) -> None:
    project(tmp_path, ["app hello --n 1"])
    code, report = validate(tmp_path)
    assert code == 2
    assert codes(report) == ["tree-unavailable"]
    assert "Build the program first" in report["diagnostics"][0]["hint"]


# -- the cache -----------------------------------------------------------------------------------


def load(root: Path, cache: TreeCache) -> dict[tuple[str, ...], object]:
    spec = parse_tree_spec("exec:./bin/app", root)
    judged = load_judged_tree(
        spec,
        root=root,
        display=str(spec),
        argvs=[["hello", "--n", "1"]],
        cache=cache,
        containment=Containment(),
    )
    return {argv: verdict.accepted for argv, verdict in judged.verdicts.items()}


def test_the_cache_is_keyed_by_the_programs_content(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    cache = TreeCache(tmp_path / "cache")
    path = program(root)
    # Settled long ago: an input that changes while a tree is read is never cached.
    os.utime(path, (1_000_000_000, 1_000_000_000))
    size = path.stat().st_size
    assert load(root, cache) == {("hello", "--n", "1"): True}
    assert len(list((tmp_path / "cache" / "trees").iterdir())) == 1
    assert load(root, cache) == {("hello", "--n", "1"): True}
    # Another build of the program, the same in size and time: judged again, not served.
    rejecting = JUDGE.replace(
        '"accepted": true, "path": ["hello"], "given": {"n": 1}',
        '"accepted": false, "path": ["hello"], "error": "r"',
    )
    path = program(root, judge=rejecting)
    with path.open("a", encoding="utf-8") as padded:
        padded.write("#" * (size - path.stat().st_size - 1) + "\n")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    assert path.stat().st_size == size
    assert load(root, cache) == {("hello", "--n", "1"): False}


def test_the_verdict_schema_is_the_model() -> None:
    record = {"accepted": False, "path": ["a"], "given": {"x": [1, "y"]}, "error": "no"}
    assert JudgeVerdict.model_validate(record).model_dump() == record
    with pytest.raises(ValueError, match="Extra inputs"):
        JudgeVerdict.model_validate({"accepted": True, "level": []})
