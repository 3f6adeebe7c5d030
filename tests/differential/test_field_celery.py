"""celery's own CLI: option types that read ``ctx.obj``, and its ``LogLevel`` Choice subclass.

celery's group callback imports the application (``-A APP``) and keeps it in ``ctx.obj``; the
worker's option types (``WorkersPool``, a ``Choice`` subclass) read ``ctx.obj.app`` as they
convert. exampleguard's judge runs no callback, so while it parses a worker command line the
application's code raises: that is no verdict (SPEC 4), and the model judges, with a
``parser-raised`` warning. ``LogLevel`` upper-cases before the base ``Choice`` check: the tree
asks that ``convert`` what it accepts, so ``-l info`` is valid for the model as for celery.

The reference is celery's own parse with its group callback run (``tests/support/click_field.py``).
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from celery.bin.celery import celery

import tests.differential.test_differential as generated
from exampleguard._bind import bind
from tests.support.click_field import (
    ACCEPTED,
    BY_MODEL,
    CLI_CRASHED,
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

# celery's `events` declares -d twice (--dump and --detach): Click warns as it lists them.
pytestmark = pytest.mark.filterwarnings(
    "ignore:The parameter -d is used more than once:UserWarning"
)

# Every argv starts with the application the group's callback imports.
PREFIX = ("-A", "celery_proj")


def celery_cli() -> FieldCLI:
    return FieldCLI("celery", "celery", celery, prefix=PREFIX)


# celery's documented command lines and their near misses (README, worker and beat guides).
PINNED = (
    ("worker", "-l", "INFO"),
    ("worker", "-l", "info"),
    ("worker", "--loglevel=warning"),
    ("worker", "-l", "verbose"),
    ("worker", "-l"),
    ("beat", "-l", "INFO"),
    ("beat", "-l", "debug"),
    ("events", "-l", "error"),
    ("worker", "-P", "solo"),
    ("worker", "--pool=threads", "-c", "4"),
    ("worker", "-P", "nope"),
    ("worker", "-O", "fair"),
    ("worker", "-O", "unfair"),
    ("worker", "--bogus"),
    ("worker", "-E", "-B", "-l", "INFO"),
    ("worker", "--time-limit", "x"),
    ("worker", "--time-limit", "1.5", "--max-tasks-per-child", "10"),
    ("worker", "extra"),
    ("status",),
    ("inspect", "active"),
    ("inspect", "bogus-method"),
    ("purge", "-f"),
    ("result", "1234"),
    ("wrker",),
)


@pytest.mark.parametrize("argv", PINNED, ids=" ".join)
def test_celery_command_lines_get_celerys_verdict(argv: tuple[str, ...]) -> None:
    message = field_disagreement(celery_cli(), argv, Counter())
    assert message is None, message


def test_a_worker_command_line_is_judged_by_the_model_and_says_why() -> None:
    final = celery_cli().final(["worker", "-l", "info"])
    assert final.accepted is True
    assert final.by == "model"
    assert final.verdict.error == "ApplicationError"
    assert final.verdict.message == "AttributeError: 'NoneType' object has no attribute 'app'"
    # The word as written: celery's LogLevel makes it 20, which only celery's parse knows.
    assert final.values == {"app": "celery_proj", "loglevel": "info"}


def test_beat_keeps_the_frameworks_verdict_without_a_model_mismatch() -> None:
    final = celery_cli().final(["beat", "-l", "info"])
    assert (final.accepted, final.by, final.mismatch) == (True, "framework", False)
    assert final.values == {"app": "celery_proj", "loglevel": "info"}
    rejected = celery_cli().final(["beat", "-l", "verbose"])
    assert (rejected.accepted, rejected.mismatch, rejected.codes) == (False, False, ("bad-choice",))


EXAMPLES = 800


def test_generated_celery_command_lines_agree_with_celery() -> None:
    cli = celery_cli()
    # SPEC 4: values of custom types and of parameters with callbacks are not checked; and
    # the group's own options configure the application through its callback (application
    # code, which would also reconfigure the one app object every parse shares): never
    # generated.
    excluded = unchecked_flags(celery, "celery") | {
        flag for param in celery.params for flag in (*param.opts, *param.secondary_opts)
    }
    app = generated.App(
        "celery",
        "celery",
        cli.tree,
        # The check below compares with celery's own parse; these two are not used.
        lambda _argv: Parsed(False),
        lambda _binding, _parsed: [],
        excluded_flags=excluded,
        # multi hands its words to other programs; amqp's group callback connects to a broker.
        excluded_commands=frozenset(
            tuple(c.path) for c in cli.tree.commands if c.path[:1] in (["multi"], ["amqp"])
        ),
    )

    def check(_app: generated.App, argv: Sequence[str], found: Counter[str]) -> str | None:
        if not celery_cli_reaches_a_command(cli, argv):
            # `celery -A APP` alone runs the group, whose callback prints the help and exits:
            # application code, which SPEC 4 leaves unchecked (counted, not compared).
            found[GROUP_CALLBACK] += 1
            return None
        return field_disagreement(cli, argv, found)

    tally = generated.run_differential(app, examples=EXAMPLES, check=check)
    assert tally[FALSE_ACCEPTS] == 0, tally
    assert tally[ACCEPTED] >= EXAMPLES // 8, tally
    assert tally[REJECTED] >= EXAMPLES // 8, tally
    # The model judged where celery's types raised in the judge, and values were compared.
    assert tally[BY_MODEL] > 0, tally
    assert tally[COMPARED] >= tally[ACCEPTED] // 2, tally
    _report("celery", tally)


GROUP_CALLBACK = "decided by the group's callback (not compared)"


def celery_cli_reaches_a_command(cli: FieldCLI, argv: Sequence[str]) -> bool:
    """Whether the model routes ``argv`` past celery's group to a command word."""
    binding = bind(cli.contract, [cli.program, *cli.prefix, *argv])
    return binding.path is None or bool(binding.path)


def _report(name: str, tally: Counter[str]) -> None:
    # The agreement figures, for the closing note of the field issue (printed with -s).
    print(json.dumps({"cli": name, **tally}))


def test_the_pinned_table_agrees_in_full() -> None:
    tally, found = run_table(celery_cli(), PINNED)
    assert found == [], found
    assert tally["agreed"] == len(PINNED), tally
    assert tally[MISMATCHES] == 0, tally
    _report("celery-pinned", tally)


def test_validate_warns_that_celery_raised_and_the_model_judged(tmp_path: Path) -> None:
    tools: list[dict[str, Any]] = [
        {
            "id": "celery.worker",
            "command": ["worker"],
            "examples": [
                {"command": "celery -A celery_proj worker -l info"},
                {"command": "celery -A celery_proj worker -l verbose"},
            ],
        }
    ]
    root = make_project(
        tmp_path, tools, program="celery", dialect=None, tree="click:celery.bin.celery:celery"
    )
    result = run_cli(["validate", "--format", "json"], cwd=root)
    report = json.loads(result.stdout)
    examples = {e["index"]: e for e in report["examples"] if e["tool"] == "celery.worker"}
    valid = examples[0]
    assert valid["ok"] is True
    assert [d["code"] for d in valid["diagnostics"]] == ["parser-raised"]
    assert (
        "AttributeError: 'NoneType' object has no attribute 'app'"
        in (valid["diagnostics"][0]["message"])
    )
    # LogLevel converts before the pool type that reads ctx.obj: celery itself rejects it.
    invalid = examples[1]
    assert invalid["ok"] is False
    assert [d["code"] for d in invalid["diagnostics"]] == ["bad-choice"]


def test_a_pool_whose_library_is_missing_is_no_verdict_on_either_side() -> None:
    # celery's WorkersPool imports the pool's library as it converts: where eventlet is not
    # installed celery itself raises, a traceback for its user, which is no verdict.
    tally: Counter[str] = Counter()
    assert field_disagreement(celery_cli(), ["worker", "-P", "eventlet"], tally) is None
    if importlib.util.find_spec("eventlet") is None:
        assert tally == Counter({CLI_CRASHED: 1})
    else:
        assert tally["agreed"] == 1, tally
