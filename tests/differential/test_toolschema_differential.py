"""Differential test: every argument object the binder accepts satisfies its tool's schema.

The strict argument schema (``exampleguard schema tool ID``) and the binder are two readings of
the same parameters: agents fill the schema, ``validate`` binds the examples. For the fixture
applications of :mod:`tests.differential.test_differential` (Click, Typer, argparse, and the
small apps where the frameworks' versions differ), hypothesis generates command lines from the
tree, valid ones and mutations of them; for every one the binder accepts, the argument object
it builds must validate, through the ``jsonschema`` library, against the schema of the tool it
bound to.
That the schema also says the catalog's constraints exactly as the rules check them is
:mod:`tests.bind.test_toolschema_constraints`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import Phase

import exampleguard._toolschema as toolschema
from exampleguard._bind import bind
from exampleguard._rules import arguments_of
from exampleguard._toolschema import argument_schema, schema_errors
from tests.differential.test_differential import (
    ACCEPTED,
    COMPARED,
    REJECTED,
    App,
    exampleguard_problems,
    fixture_app,
    run_differential,
    tool_of,
)


def schema_disagreement(app: App, argv: Sequence[str], tally: Counter[str]) -> str | None:
    """Where the binder accepts ``argv``, why its argument object fails the tool's schema."""
    binding = bind(app.contract, [app.program, *argv], app.memo)
    if exampleguard_problems(binding):
        tally[REJECTED] += 1
        return None
    tally[ACCEPTED] += 1
    if binding.eager:
        # --help or --version ended the parse: there is no argument object.
        return None
    tool = tool_of(binding)
    arguments = arguments_of(tool, binding)
    tally[COMPARED] += 1
    errors = schema_errors(argument_schema(tool), arguments)
    if errors:
        return (
            f"{app.program} {list(argv)!r} binds to {arguments!r}, which the schema of "
            f"{tool.id} rejects: {errors}"
        )
    return None


@pytest.mark.parametrize(
    ("name", "examples"),
    [
        ("click", 800),
        ("typer", 800),
        ("argparse", 800),
        ("accumulating", 300),
        ("versioned-click", 200),
        ("versioned-argparse", 200),
    ],
)
def test_every_argument_object_the_binder_accepts_satisfies_its_tool_schema(
    name: str, examples: int
) -> None:
    verdicts = run_differential(fixture_app(name), examples=examples, check=schema_disagreement)
    # Only a test if accepted command lines are common and each had its object validated.
    assert verdicts[ACCEPTED] >= examples // 8, verdicts
    assert verdicts[COMPARED] >= verdicts[ACCEPTED] // 2, verdicts


def test_the_schema_comparison_catches_a_schema_that_disagrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A planted disagreement: integers are made strings in the schema alone.
    monkeypatch.setitem(toolschema._JSON_TYPES, "integer", {"type": "string"})
    with pytest.raises(AssertionError, match="which the schema of"):
        run_differential(
            fixture_app("click"),
            examples=400,
            check=schema_disagreement,
            database=None,
            derandomize=True,
            phases=[Phase.generate],
        )
