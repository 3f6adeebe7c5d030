"""Judge the raw facts of an execution into an outcome record."""

from __future__ import annotations

from collections.abc import Callable

from sandbox._backend import Backend, Execution
from sandbox._backends import ordered
from sandbox._types import Guarantee, Outcome, Status

__all__ = ["judge", "not_started"]


def not_started(backend: str, detail: str) -> Outcome:
    """Build the outcome of a run that never started: nothing ran, so nothing needed to hold."""
    held, missing = ordered(frozenset())
    return Outcome(
        Status.NOT_STARTED, None, "", "", False, False, 0.0, backend, held, missing, detail
    )


def judge(
    execution: Execution,
    backend: Backend,
    guarantees: frozenset[Guarantee],
    expect_exit: int,
    *,
    bound: tuple[str, ...] = (),
    refused: tuple[str, ...] = (),
    oom_kills: Callable[[], int] | None = None,
) -> Outcome:
    """Turn an execution into its outcome: status, exit code, decoded output, what held.

    ``oom_kills`` counts the run's processes the kernel killed for its memory cgroup's limit
    (asked only of a run that failed: the only ones it can have ended); a failure then says
    so, since a bare SIGKILL would not.
    """
    if execution.spawn_error is not None:
        return not_started(backend.name, execution.spawn_error)
    if not execution.tree_confirmed:
        guarantees -= {Guarantee.TREE_KILLED}
    if execution.ended_by == "interrupt":
        status, exit_code, detail = Status.CRASHED, None, "interrupted"
    elif execution.ended_by == "timeout":
        status, exit_code, detail = Status.TIMED_OUT, None, None
    else:
        verdict = backend.interpret(execution, expect_exit)
        status, exit_code, detail = verdict.status, verdict.exit_code, verdict.detail
        guarantees -= verdict.withheld
    killings = oom_kills() if oom_kills and status in (Status.CRASHED, Status.FAILED) else 0
    if killings:
        killed = "1 process" if killings == 1 else f"{killings} processes"
        why = f"{killed} of the run killed at its memory limit (memory cgroup)"
        detail = f"{detail}; {why}" if detail else why
    # A run that never started held nothing, whatever the backend would have given.
    held, missing = ordered(frozenset() if status is Status.NOT_STARTED else guarantees)
    return Outcome(
        status=status,
        exit_code=exit_code,
        stdout=execution.stdout.decode("utf-8", "replace"),
        stderr=execution.stderr.decode("utf-8", "replace"),
        stdout_truncated=execution.stdout_truncated,
        stderr_truncated=execution.stderr_truncated,
        duration_s=execution.duration_s,
        backend=backend.name,
        guarantees=held,
        not_guaranteed=missing,
        detail=detail,
        bound=bound,
        refused=refused,
    )
