"""cloup's constraints, on a real cloup CLI and on cloup's own documented constraints.

``legacy-puyo-tools`` (a real third-party cloup CLI) binds ``require_one`` to the character
table options of ``convert mtx`` and ``create mtx``. ``cloup_docs_app`` holds the constraints
of cloup's documentation (``mutually_exclusive``, ``all_or_none``, ``RequireAtLeast(1)``,
``require_one``, a conditional ``If``). cloup checks them as it parses: the tree records them,
the model checks them too (no ``model-mismatch``), and a violation the framework reports is
named by its constraint's code, never ``bad-type``.

Every word of a generated argv names an existing file in the working directory, so that file
existence (not checked by exampleguard, SPEC 4) never decides cloup's verdict.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cloup_docs_app
import pytest
from legacy_puyo_tools.cli import app as puyo

import tests.differential.test_differential as generated
from exampleguard._verdicts import real_problem
from tests.support.click_field import (
    ACCEPTED,
    COMPARED,
    FALSE_ACCEPTS,
    MISMATCHES,
    REJECTED,
    FieldCLI,
    field_disagreement,
    run_table,
    unchecked_flags,
)
from tests.support.frameworks import Parsed
from tests.support.project import make_project, run_cli

# Click opens a `click.File("rb")` argument as it parses; when a constraint then fails, the
# context that would close it was never entered (Click's own behaviour, on the reference's
# side: exampleguard's judge opens no file), and the file is closed by the collector.
pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture
def files_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _touch(directory: Path, argv: Sequence[str]) -> None:
    # Each word, and each attached value (`--fpd=a b`), names an existing regular file.
    for whole in argv:
        for word in (whole, whole.partition("=")[2]):
            if word not in ("", ".", "..") and "/" not in word and "\0" not in word:
                (directory / word).touch()


def puyo_cli() -> FieldCLI:
    return FieldCLI("legacy-puyo-tools", "legacy-puyo-tools", puyo)


def docs_cli() -> FieldCLI:
    return FieldCLI("cloup-docs", "notes", cloup_docs_app.cli)


def test_the_tree_records_clouops_constraints() -> None:
    mtx = puyo_cli().tree.command(["convert", "mtx"])
    assert mtx is not None
    assert mtx.constraints.require_one_of == [["fpd", "unicode"]]
    assert mtx.constraints.mutually_exclusive == [["fpd", "unicode"]]
    send = docs_cli().tree.command(["send"])
    assert send is not None
    assert send.constraints.mutually_exclusive == [["file", "text"], ["as_json", "as_yaml"]]
    assert send.constraints.require_together == [["user", "password"]]
    assert send.constraints.require_one_of == [["email", "sms"], ["as_json", "as_yaml"]]
    # A conditional constraint cannot be stated: the framework's parser judges it alone.
    serve = docs_cli().tree.command(["serve"])
    assert serve is not None
    assert not serve.constraints.require_one_of
    assert not serve.constraints.require_together


PUYO_PINNED = (
    ("convert", "mtx", "in.mtx", "--fpd", "table.fpd"),
    ("convert", "mtx", "in.mtx", "--unicode", "table.txt", "-o", "out.xml"),
    ("convert", "mtx", "in.mtx"),
    ("convert", "mtx", "in.mtx", "--fpd", "a.fpd", "--unicode", "b.txt"),
    ("create", "mtx", "in.xml", "--fpd", "table.fpd"),
    ("create", "mtx", "in.xml"),
    ("create", "fmp", "in.png", "--size", "8"),
    ("create", "fmp", "in.png", "--size", "9"),
    ("create", "fmp", "in.png", "--padding", "5"),
    ("convert", "fpd", "in.fpd", "--bogus"),
)

DOCS_PINNED = (
    ("send", "--email", "--json"),
    ("send", "--sms", "--yaml", "--text", "hi"),
    ("send", "--email", "--json", "--file", "m.txt", "--text", "hi"),
    ("send", "--email", "--json", "--user", "me"),
    ("send", "--email", "--json", "--user", "me", "--password", "pw"),
    ("send", "--json"),
    ("send", "--email"),
    ("send", "--email", "--json", "--yaml"),
    ("serve", "--port", "8000"),
    ("serve", "--ssl", "--cert", "c", "--key", "k"),
)


@pytest.mark.parametrize("argv", PUYO_PINNED, ids=" ".join)
def test_puyo_command_lines_get_clouops_verdict(files_here: Path, argv: tuple[str, ...]) -> None:
    _touch(files_here, argv)
    message = field_disagreement(puyo_cli(), argv, Counter())
    assert message is None, message


@pytest.mark.parametrize("argv", DOCS_PINNED, ids=" ".join)
def test_documented_constraints_get_clouops_verdict(argv: tuple[str, ...]) -> None:
    message = field_disagreement(docs_cli(), argv, Counter())
    assert message is None, message


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (("send", "--email", "--json", "--file", "m", "--text", "hi"), "mutually-exclusive"),
        (("send", "--email", "--json", "--user", "me"), "require-together"),
        (("send", "--json"), "require-one-of"),
        (("send", "--email"), "require-one-of"),
        (("send", "--email", "--json", "--yaml"), "mutually-exclusive"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else value,
)
def test_a_violation_has_its_constraints_code_on_both_sides(
    argv: tuple[str, ...], code: str
) -> None:
    final = docs_cli().final(argv)
    assert (final.accepted, final.mismatch) == (False, False)
    assert code in final.codes
    # And where only the framework saw it, its rejection is named by the same code.
    assert real_problem(final.verdict, ["notes", *argv]).code == code


def test_a_conditional_constraint_is_the_frameworks_with_a_model_mismatch() -> None:
    final = docs_cli().final(["serve", "--ssl"])
    assert final.accepted is False
    assert final.mismatch is True
    assert real_problem(final.verdict, ["notes", "serve", "--ssl"]).code == "require-one-of"


def test_the_pinned_tables_agree_in_full(files_here: Path) -> None:
    for argv in PUYO_PINNED:
        _touch(files_here, argv)
    for cli, table in ((puyo_cli(), PUYO_PINNED), (docs_cli(), DOCS_PINNED)):
        tally, found = run_table(cli, table)
        assert found == [], found
        assert tally[MISMATCHES] == 0, tally
        print(json.dumps({"cli": f"{cli.name}-pinned", **tally}))


EXAMPLES = 400


@pytest.mark.parametrize("name", ["legacy-puyo-tools", "cloup-docs"])
def test_generated_command_lines_agree_with_cloup(files_here: Path, name: str) -> None:
    cli = puyo_cli() if name == "legacy-puyo-tools" else docs_cli()
    # Values of custom types and parameters with callbacks are not checked (SPEC 4); files
    # are, every word being one here. --version prints and exits through its callback.
    excluded = unchecked_flags(cli.command, cli.program, files=False) | {"--version"}
    app = generated.App(
        name,
        cli.program,
        cli.tree,
        # The check below compares with cloup's own parse; these two are not used.
        lambda _argv: Parsed(False),
        lambda _binding, _parsed: [],
        excluded_flags=excluded,
        bad_values=tuple(v for v in generated.BAD_VALUES if v.strip()),
        mutations=tuple(m for m in generated.MUTATIONS if m is not generated.m_empty),
    )

    def check(_app: generated.App, argv: Sequence[str], found: Counter[str]) -> str | None:
        _touch(files_here, argv)
        return field_disagreement(cli, argv, found)

    tally = generated.run_differential(app, examples=EXAMPLES, check=check)
    assert tally[FALSE_ACCEPTS] == 0, tally
    assert tally[ACCEPTED] >= EXAMPLES // 10, tally
    assert tally[REJECTED] >= EXAMPLES // 8, tally
    assert tally[COMPARED] >= tally[ACCEPTED] // 2, tally
    print(json.dumps({"cli": name, **tally}))


def test_validate_reports_a_broken_constraint_under_its_code(tmp_path: Path) -> None:
    tools: list[dict[str, Any]] = [
        {
            "id": "notes.send",
            "command": ["send"],
            "examples": [
                {"command": "notes send --email --json --text hi"},
                {"command": "notes send --email --json --yaml"},
            ],
        }
    ]
    root = make_project(tmp_path, tools, dialect=None, tree="click:cloup_docs_app:cli")
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    examples = {e["index"]: e for e in report["examples"] if e["tool"] == "notes.send"}
    assert examples[0]["ok"] is True
    assert examples[0]["diagnostics"] == []
    assert examples[1]["ok"] is False
    assert [d["code"] for d in examples[1]["diagnostics"]] == ["mutually-exclusive"]
