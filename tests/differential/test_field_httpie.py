"""httpie, a real argparse CLI whose parser overrides ``parse_args`` with another signature.

httpie's ``HTTPieArgumentParser.parse_args(self, env, args=None, namespace=None)`` takes an
environment first: called as argparse's, the argv lands in ``env``. SPEC 4 judges with
``ArgumentParser.parse_args`` itself; so does the oracle. The corpus is the command lines of
httpie's own README, and planted errors.
"""

from __future__ import annotations

import pytest

from tests.support.field import FieldRun, field_project, field_run

DOCUMENTED = [
    ["httpie.io/hello"],
    ["PUT", "pie.dev/put", "X-API-Token:123", "name=John"],
    ["pie.dev/get"],
    ["-v", "pie.dev/get"],
    ["--offline", "pie.dev/post", "hello=offline"],
    ["-f", "POST", "pie.dev/post", "hello=World"],
    ["--form", "POST", "pie.dev/post", "name=John Smith"],
    ["-a", "username:password", "pie.dev/basic-auth/username/password"],
    ["-A", "bearer", "-a", "token", "pie.dev/bearer"],
    ["--download", "https://github.com/httpie/cli/archive/master.tar.gz"],
    ["--follow", "pie.dev/redirect/3"],
    ["--timeout=2.5", "pie.dev/delay/3"],
    ["--pretty=all", "pie.dev/get"],
    ["--print=Hh", "pie.dev/get"],
    ["--session=logged-in", "-a", "username:password", "pie.dev/get", "API-Key:123"],
    ["--check-status", "pie.dev/status/404"],
    ["--verify=no", "https://pie.dev/get"],
    ["--proxy=http:http://10.10.1.10:3128", "example.org"],
    ["-b", "pie.dev/get"],
    ["--style=monokai", "pie.dev/get"],
    ["--json", "POST", "pie.dev/post", "name=John"],
    [":3000/api"],
    ["--version"],
    ["--help"],
]
PLANTED = [
    ["--no-such-flag", "pie.dev/get"],
    ["--pretty=bogus", "pie.dev/get"],
    [],
    ["--timeout", "pie.dev/get"],
    ["--print", "pie.dev/get"],
    ["--verify"],
    ["--style"],
]
CORPUS = DOCUMENTED + PLANTED

ORACLE = """
    import argparse
    from httpie.cli.definition import parser
    from httpie.context import Environment

    # What httpie's own parse_args sets before it parses (its help and version print there).
    parser.env = Environment()

    class Rejected(Exception):
        pass


    def _raise(message):
        raise Rejected(message)


    parser.error = _raise


    def accepts(argv):
        try:
            argparse.ArgumentParser.parse_args(parser, argv)
        except (Rejected, argparse.ArgumentError):
            return False
        return True
    """


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> FieldRun:
    root = field_project(
        tmp_path_factory.mktemp("httpie"),
        program="http",
        tree="argparse:httpie.cli.definition:parser",
        corpus=CORPUS,
    )
    return field_run("httpie", root, CORPUS, ORACLE)


def test_every_verdict_is_httpies_own(run: FieldRun) -> None:
    print(run.summary())
    assert run.disagreements == []
    assert run.false_accepts == []
    assert run.model_mismatches == []


def test_the_corpus_has_teeth(run: FieldRun) -> None:
    rejected = {each.argv for each in run.judged if not each.real}
    assert rejected == {tuple(argv) for argv in PLANTED}


def test_no_example_is_blamed_for_the_parsers_signature(run: FieldRun) -> None:
    # Called as argparse's, httpie's parse_args would crash on every example: not-runnable.
    assert not any("not-runnable" in each.codes for each in run.judged)
