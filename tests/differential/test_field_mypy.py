"""mypy, a real argparse CLI whose parser reads ``@file`` arguments (``fromfile_prefix_chars``).

The project names mypy's parser through a factory of its own (mypy builds it in
``define_options``), documents mypy's own command lines (from its "Running mypy" guide) and
planted errors, some of them inside ``@file`` arguments; exampleguard's verdict on each must be
the one mypy's parser gives, run in the project folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.field import FieldRun, field_project, field_run

FILES = {
    "mypytree.py": """
        from mypy.main import define_options


        def parser():
            return define_options()[0]
        """,
    "flags.txt": "--strict\n--warn-unreachable\n",
    "nested.txt": "@flags.txt\nsrc\n",
    "values.txt": "--python-version\n3.11\n",
    "bad-flags.txt": "--no-such-flag\n",
    "bad-value.txt": "--follow-imports=sometimes\n",
    "loop.txt": "@loop.txt\n",
}

DOCUMENTED = [
    ["program.py"],
    ["src/"],
    ["file_1.py", "foo/file_2.py", "file_3.pyi", "some/directory"],
    ["-m", "html.parser"],
    ["-p", "html"],
    ["-c", "x = [1, 2]; print(x())"],
    ["--strict", "program.py"],
    ["--ignore-missing-imports", "program.py"],
    ["--python-version", "3.11", "program.py"],
    ["--platform", "win32", "program.py"],
    ["--always-true=FOO", "program.py"],
    ["--install-types"],
    ["--install-types", "--non-interactive", "src/"],
    ["--follow-imports=silent", "program.py"],
    ["--cache-dir=/dev/null", "program.py"],
    ["--disallow-untyped-defs", "--warn-return-any", "src"],
    ["--exclude", "/setup\\.py$", "src"],
    ["--version"],
    ["-h"],
    ["@flags.txt", "src"],
    ["@nested.txt"],
    ["@values.txt", "@flags.txt", "program.py"],
    ["src", "@flags.txt"],
    ["--", "@flags.txt"],
]
PLANTED = [
    ["@bad-flags.txt", "src"],
    ["@bad-value.txt", "src"],
    ["@missing.txt", "src"],
    ["@loop.txt"],
    ["@flags.txt", "--no-such-flag"],
    ["--no-such-flag", "src"],
    ["--python-version"],
    ["--follow-imports=sometimes", "src"],
    ["-m"],
    ["--strict=yes", "src"],
    ["@", "src"],
]
CORPUS = DOCUMENTED + PLANTED

ORACLE = """
    import argparse
    from mypy.main import define_options

    parser = define_options()[0]


    class Rejected(Exception):
        pass


    def _raise(message):
        raise Rejected(message)


    parser.error = _raise


    def accepts(argv):
        try:
            parser.parse_args(argv)
        except (Rejected, argparse.ArgumentError):
            return False
        return True
    """


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> FieldRun:
    root = field_project(
        tmp_path_factory.mktemp("mypy"),
        program="mypy",
        tree="argparse:mypytree:parser",
        corpus=CORPUS,
        files=FILES,
    )
    return field_run("mypy", root, CORPUS, ORACLE)


def test_every_verdict_is_mypys_own(run: FieldRun) -> None:
    print(run.summary())
    assert run.disagreements == []
    assert run.false_accepts == []
    # The model agrees with mypy's parser too: in verdict and in every bound value.
    assert run.model_mismatches == []


def test_the_corpus_has_teeth(run: FieldRun) -> None:
    # Every planted error is one mypy rejects: agreeing on them is not agreeing on nothing.
    rejected = {each.argv for each in run.judged if not each.real}
    assert rejected == {tuple(argv) for argv in PLANTED}


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["@bad-flags.txt", "src"], "unknown-flag"),
        (["@bad-value.txt", "src"], "bad-choice"),
        (["@missing.txt", "src"], "argument-file-unreadable"),
        (["@loop.txt"], "argument-file-unreadable"),
    ],
)
def test_an_error_inside_an_at_file_is_named_at_the_word(
    run: FieldRun, argv: list[str], code: str
) -> None:
    judged = next(each for each in run.judged if each.argv == tuple(argv))
    assert code in judged.codes


def test_an_at_file_outside_the_project_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("--strict\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    corpus = [["@../outside.txt", "src"]]
    root = field_project(
        project, program="mypy", tree="argparse:mypytree:parser", corpus=corpus, files=FILES
    )
    judged = field_run("mypy", root, corpus, ORACLE).judged[0]
    # mypy run from the project would read it; the verdict must not depend on what lies
    # outside the project (SPEC 4: @file arguments are read from the project).
    assert judged.real
    assert not judged.ours
    assert "argument-file-unreadable" in judged.codes
