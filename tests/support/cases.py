"""Table-driven CLI cases run in parallel, once per session, ahead of their test items.

Each case is a real ``exampleguard`` process against its own project. Running them one by one
as their items come up costs minutes; a module fixture starts every selected case on a thread
pool and each item waits only for its own future.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TypeVar

import pytest


class _Case(Protocol):
    @property
    def id(self) -> str: ...


CaseT = TypeVar("CaseT", bound=_Case)
OutcomeT = TypeVar("OutcomeT")


def collected_cases(request: pytest.FixtureRequest, case_type: type[CaseT]) -> list[CaseT]:
    """The ``case`` parameters of the requesting module's items in this session (``-k`` aware)."""
    selected: list[CaseT] = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is not request.module or callspec is None:
            continue
        case = callspec.params.get("case")
        if isinstance(case, case_type):
            selected.append(case)
    return selected


def workers(limit: int) -> int:
    """Threads for the case pool: the cases mostly wait on child processes."""
    return min(limit, 2 * (os.cpu_count() or 1))


@contextmanager
def run_in_parallel(
    cases: list[CaseT],
    run: Callable[[Path, CaseT], OutcomeT],
    make_root: Callable[[str], Path],
    *,
    limit: int = 8,
) -> Iterator[dict[str, Future[OutcomeT]]]:
    """Start ``run(root, case)`` for every case, each in a fresh root; give futures by case id."""
    with ThreadPoolExecutor(max_workers=workers(limit)) as pool:
        yield {case.id: pool.submit(run, make_root(case.id), case) for case in cases}
