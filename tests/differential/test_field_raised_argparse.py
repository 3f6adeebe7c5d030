"""Application code that raises while argparse parses: no verdict, the model judges, a warning.

``raising_argparse``'s ``--profile`` action reads a registry its program fills in ``main``, so
argparse's own parse raises ``AssertionError`` there: the judge names it and gives no verdict,
and the example is judged by exampleguard's model, exactly as for Click.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import raising_argparse

from exampleguard._adapters.judge_argparse import ArgparseJudge
from exampleguard._adapters.verdict import APPLICATION_ERROR
from tests.support.project import make_project, run_cli


def test_the_judge_gives_no_verdict_and_names_the_exception() -> None:
    judge = ArgparseJudge(raising_argparse.build())
    verdict = judge.judge(["--profile", "prod", "web"])
    assert verdict.decided is False
    assert verdict.error == APPLICATION_ERROR
    assert verdict.message == "AssertionError: main() loads the profiles first"
    # A usage error that argparse finds before the action runs is still its verdict.
    usage = judge.judge(["--bogus", "web"])
    assert (usage.decided, usage.accepted) == (True, False)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tools: list[dict[str, Any]] = [
        {
            "id": "deploy",
            "command": [],
            "examples": [
                {"command": "deploy --profile prod web"},
                {"command": "deploy --profile prod --count x web"},
            ],
        },
    ]
    root = make_project(
        tmp_path_factory.mktemp("raised-argparse"),
        tools,
        program="deploy",
        dialect=None,
        tree="argparse:raising_argparse:parser",
    )
    result = run_cli(["validate", "--format", "json"], cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


@pytest.mark.parametrize(
    ("index", "ok", "codes"),
    [
        (0, True, ["parser-raised"]),
        # The model judges, and finds what argparse would have: --count is an int.
        (1, False, ["parser-raised", "bad-type"]),
    ],
)
def test_the_model_judges_with_a_warning(
    report: dict[str, Any], index: int, ok: bool, codes: list[str]
) -> None:
    example = next(e for e in report["examples"] if e["index"] == index)
    assert example["ok"] is ok
    assert [d["code"] for d in example["diagnostics"]] == codes
    warning = example["diagnostics"][0]
    assert warning["severity"] == "warning"
    assert "application code raised AssertionError" in warning["message"]
