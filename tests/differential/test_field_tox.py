"""tox, a real argparse CLI that rewrites its argv before its parser reads it.

tox's ``get_options`` keeps the words after ``--`` for the test command, and its parser's
``parse_known_args`` moves the first command word to the front or, with none, puts ``legacy``
there. The project states the first with ``[argv_rewrite] unparsed_after = "--"``; the second
runs inside the parse, as the live parser's own code. The oracle is tox's ``get_options``
with the check tox makes of the leftover words afterwards (``unrecognized arguments``).
"""

from __future__ import annotations

import pytest

from exampleguard._config import load_config
from exampleguard._pipeline import load_inputs
from exampleguard._pipeline import run as run_pipeline
from tests.support.argparse_field import FieldRun, field_project, field_run

FILES = {
    "toxtree.py": """
        from tox.config.cli.parse import _get_parser
        from tox.plugin.manager import MANAGER


        def parser():
            MANAGER.load_plugins(None)
            return _get_parser()
        """,
}
REWRITE = """
    [argv_rewrite]
    note = "tox moves its command word first (or puts legacy there); words after -- are its own"
    unparsed_after = "--"
    """

DOCUMENTED = [
    [],
    ["-e", "py311"],
    ["-e", "py311", "--", "-k", "test_foo"],
    ["run", "-e", "py311", "--", "-k", "test_foo"],
    ["r", "-e", "py312"],
    ["p", "-p", "auto"],
    ["run-parallel", "-e", "py311,py312"],
    ["list"],
    ["l"],
    ["config", "-e", "py311", "-k", "commands"],
    ["devenv", "-e", "py311", "venv"],
    ["-r", "-e", "py311"],
    ["exec", "-e", "py311", "--", "python", "--version"],
    ["--version"],
    ["-h"],
    ["depends"],
    ["-e", "lint,type"],
    ["quickstart"],
    ["run", "-e", "docs", "--", "--keep-going"],
    ["-q", "run", "-e", "py"],
    ["--colored", "no", "list"],
    ["-e", "py311", "run"],
]
PLANTED = [
    ["bogus"],
    ["-e", "py311", "lint"],
    ["run", "-e", "py311", "--bogus"],
    ["run", "-e"],
    ["--colored", "maybe", "list"],
    ["list", "extra-word"],
    ["run", "--no-such"],
]
CORPUS = DOCUMENTED + PLANTED

ORACLE = """
    from tox.config.cli.parse import get_options


    def accepts(argv):
        options = get_options(*argv)
        # tox fails on the words its parser left over (tox.provision), before running anything.
        return not options.parsed.remainder
    """


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> FieldRun:
    root = field_project(
        tmp_path_factory.mktemp("tox"),
        program="tox",
        tree="argparse:toxtree:parser",
        corpus=CORPUS,
        files=FILES,
        tables=REWRITE,
    )
    return field_run("tox", root, CORPUS, ORACLE)


def test_every_verdict_is_toxs_own(run: FieldRun) -> None:
    print(run.summary())
    assert run.disagreements == []
    assert run.false_accepts == []


def test_the_corpus_has_teeth(run: FieldRun) -> None:
    rejected = {each.argv for each in run.judged if not each.real}
    assert rejected == {tuple(argv) for argv in PLANTED}


def test_a_word_the_parser_does_not_know_names_the_rewriting(run: FieldRun) -> None:
    judged = {each.argv: each for each in run.judged}
    # Not "unknown-command: 'bogus'": tox would take it for an argument of legacy.
    assert "argv-rewritten" in judged["bogus",].codes
    assert "unknown-command" not in judged["bogus",].codes


def test_without_the_statement_a_rewritten_command_line_is_not_a_plain_unknown_command(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    corpus = [["-e", "py311", "--", "-k", "test_foo"]]
    root = field_project(
        tmp_path_factory.mktemp("tox-plain"),
        program="tox",
        tree="argparse:toxtree:parser",
        corpus=corpus,
        files=FILES,
    )
    evaluation = run_pipeline(load_inputs(load_config(None, root), with_counts=False))
    found = [d for d in evaluation.diagnostics if d.code == "unknown-command"]
    assert len(found) == 1
    assert found[0].hint is not None
    assert "argv_rewrite" in found[0].hint
