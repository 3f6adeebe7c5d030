"""Application code that raises while Click parses: no verdict, the model judges, a warning.

``raising_app``'s ``--level`` type reads ``ctx.obj`` (celery's pattern, on a fixture small
enough to read); ``--shout``'s type raises with a terminal escape and a second line in its
message, which is data: it reaches the report on one line, its controls escaped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import raising_app

from exampleguard._adapters.judge_click import ClickJudge
from exampleguard._adapters.verdict import APPLICATION_ERROR
from tests.support.project import make_project, run_cli


def test_the_judge_gives_no_verdict_and_names_the_exception() -> None:
    verdict = ClickJudge(raising_app.cli, "app").judge(["run", "--level", "low"])
    assert verdict.decided is False
    assert verdict.error == APPLICATION_ERROR
    assert verdict.message == "TypeError: 'NoneType' object is not subscriptable"
    # A usage error before the application's code runs is still the framework's verdict.
    usage = ClickJudge(raising_app.cli, "app").judge(["run", "--bogus"])
    assert (usage.decided, usage.accepted, usage.error) == (True, False, "NoSuchOption")
    # The base Choice rejects before the application's code reads ctx.obj: a verdict.
    choice = ClickJudge(raising_app.cli, "app").judge(["run", "--level", "medium"])
    assert (choice.decided, choice.accepted, choice.error) == (True, False, "BadParameter")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tools: list[dict[str, Any]] = [
        {
            "id": "app.run",
            "command": ["run"],
            "examples": [
                {"command": "app run --level low"},
                {"command": "app run --level low --count x"},
            ],
        },
        {"id": "app.yell", "command": ["yell"], "examples": [{"command": "app yell --shout hi"}]},
    ]
    root = make_project(
        tmp_path_factory.mktemp("raised"),
        tools,
        program="app",
        dialect=None,
        tree="click:raising_app:cli",
    )
    result = run_cli(["validate", "--format", "json"], cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def _example(report: dict[str, Any], tool: str, index: int) -> dict[str, Any]:
    found: dict[str, Any] = next(
        e for e in report["examples"] if e["tool"] == tool and e["index"] == index
    )
    return found


@pytest.mark.parametrize(
    ("index", "ok", "codes"),
    [
        (0, True, ["parser-raised"]),
        # The model judges, and finds what the framework would have: --count is an int.
        (1, False, ["parser-raised", "bad-type"]),
    ],
)
def test_the_model_judges_with_a_warning(
    report: dict[str, Any], index: int, ok: bool, codes: list[str]
) -> None:
    example = _example(report, "app.run", index)
    assert example["ok"] is ok
    assert [d["code"] for d in example["diagnostics"]] == codes
    warning = example["diagnostics"][0]
    assert warning["severity"] == "warning"
    assert (
        "application code raised TypeError: 'NoneType' object is not subscriptable"
        in (warning["message"])
    )


def test_the_exceptions_text_is_data(report: dict[str, Any]) -> None:
    example = _example(report, "app.yell", 0)
    [warning] = example["diagnostics"]
    assert warning["code"] == "parser-raised"
    message = warning["message"]
    # The first line only, the escape sequence's controls escaped.
    assert "RuntimeError: \\x1b]0;owned\\x07boom" in message
    assert "second line" not in message
    assert "\x1b" not in message
    assert "\x07" not in message
