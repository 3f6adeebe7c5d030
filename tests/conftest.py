"""Shared test configuration: a bound on hypothesis and the opt-in for long runs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# The suite stays fast and deterministic; `--hypothesis-profile=long` (or `--run-slow` for the
# marked fuzz tests) runs far more examples.
settings.register_profile(
    "default", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=20_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile("default")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow", action="store_true", help="Run the tests marked slow (long fuzzing)."
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long run: opt in with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
