"""pytest, a real argparse CLI that parses with ``parse_intermixed_args`` and reads ``@file``s.

pytest's own ``Parser.parse`` calls ``parse_intermixed_args`` (``_pytest/config/argparsing.py``),
so positionals may follow options anywhere, and ``--`` is consumed by the first pass. The
project says so with ``argparse_parse = "parse_intermixed_args"``; the oracle is pytest's own
``Parser.parse`` on a freshly configured parser.
"""

from __future__ import annotations

import pytest

from tests.support.field import FieldRun, field_project, field_run

FILES = {
    "pytesttree.py": """
        from _pytest.config import get_config


        def parser():
            return get_config()._parser.optparser
        """,
    "flags.txt": "-x\n--maxfail=3\n",
    "bad-flags.txt": "--no-such-flag\n",
}

DOCUMENTED = [
    ["test_mod.py"],
    ["testing/"],
    ["-k", "MyClass and not method"],
    ["tests/test_mod.py::test_func"],
    ["tests/test_mod.py::TestClass"],
    ["tests/test_mod.py::TestClass::test_method"],
    ["tests/test_mod.py::test_func[x1,y2]"],
    ["-m", "slow"],
    ["--pyargs", "pkg.testing"],
    ["-x"],
    ["--maxfail=2"],
    ["-rA"],
    ["-ra"],
    ["--durations=10", "--durations-min=1.0"],
    ["-p", "no:doctest"],
    ["--showlocals"],
    ["-l"],
    ["--tb=short"],
    ["--tb=no"],
    ["--full-trace"],
    ["-q"],
    ["-vv"],
    ["-x", "--pdb"],
    ["--pdb", "--maxfail=3"],
    ["--trace"],
    ["--capture=no"],
    ["-s"],
    ["--junit-xml=path"],
    ["--version"],
    ["-h"],
    ["tests", "-x", "more_tests"],
    ["-x", "tests", "-k", "foo", "more"],
    ["tests", "--", "-weird-test-file.py"],
    ["@flags.txt", "tests"],
    ["tests", "@flags.txt", "more_tests"],
]
PLANTED = [
    ["--", "-weird-test-file.py"],
    ["@bad-flags.txt"],
    ["@missing.txt"],
    ["--no-such-flag"],
    ["--tb=bogus"],
    ["--maxfail"],
    ["--maxfail=two"],
    ["-x", "--maxf=2"],
    ["tests", "--durations"],
]
CORPUS = DOCUMENTED + PLANTED

ORACLE = """
    from _pytest.config import get_config
    from _pytest.config.exceptions import PrintHelp, UsageError

    config = get_config()


    def accepts(argv):
        try:
            config._parser.parse(argv)
        except UsageError:
            return False
        except PrintHelp:
            return True
        return True
    """


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> FieldRun:
    root = field_project(
        tmp_path_factory.mktemp("pytest"),
        program="pytest",
        tree="argparse:pytesttree:parser",
        corpus=CORPUS,
        files=FILES,
        settings={"argparse_parse": "parse_intermixed_args"},
    )
    return field_run("pytest", root, CORPUS, ORACLE)


def test_every_verdict_is_pytests_own(run: FieldRun) -> None:
    print(run.summary())
    assert run.disagreements == []
    assert run.false_accepts == []
    assert run.model_mismatches == []


def test_the_corpus_has_teeth(run: FieldRun) -> None:
    rejected = {each.argv for each in run.judged if not each.real}
    assert rejected == {tuple(argv) for argv in PLANTED}


def test_intermixed_positionals_pass_and_a_swallowed_separator_fails(run: FieldRun) -> None:
    judged = {each.argv: each for each in run.judged}
    assert judged["tests", "-x", "more_tests"].ours
    late = judged["--", "-weird-test-file.py"]
    assert not late.ours
    assert "unknown-flag" in late.codes


def test_without_the_setting_the_verdicts_are_parse_args(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # The setting is what makes the difference: without it, pytest's documented intermixed
    # usage is rejected, and the separator example passes (both wrong for pytest).
    corpus = [["tests", "-x", "more_tests"], ["--", "-weird-test-file.py"]]
    root = field_project(
        tmp_path_factory.mktemp("pytest-plain"),
        program="pytest",
        tree="argparse:pytesttree:parser",
        corpus=corpus,
        files=FILES,
    )
    run = field_run("pytest", root, corpus, ORACLE)
    assert [(each.ours, each.real) for each in run.judged] == [(False, True), (True, False)]
