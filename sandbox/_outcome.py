"""Judge the raw facts of an execution into an outcome record."""

from __future__ import annotations

import signal

from sandbox._backends import BWRAP, ordered
from sandbox._process import Execution
from sandbox._types import Guarantee, Outcome, Status

# What the backends print when they cannot exec the command (the run never started).
_EXEC_FAILURES = (b"bwrap: execvp ", b"unshare: failed to execute ", b"prlimit: failed to execute ")


def not_started(backend: str, detail: str) -> Outcome:
    """Build the outcome of a run that never started: nothing ran, so nothing needed to hold."""
    held, missing = ordered(frozenset())
    return Outcome(
        Status.NOT_STARTED, None, "", "", False, False, 0.0, backend, held, missing, detail
    )


def judge(
    execution: Execution, backend: str, guarantees: frozenset[Guarantee], expect_exit: int
) -> Outcome:
    """Turn an execution into its outcome: status, exit code, decoded output, what held."""
    if execution.spawn_error is not None:
        return not_started(backend, execution.spawn_error)
    if not execution.tree_confirmed:
        guarantees -= {Guarantee.TREE_KILLED}
    status, exit_code, detail = _classify(execution, backend, expect_exit)
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
        backend=backend,
        guarantees=held,
        not_guaranteed=missing,
        detail=detail,
    )


def _classify(
    execution: Execution, backend: str, expect_exit: int
) -> tuple[Status, int | None, str | None]:
    if execution.ended_by == "interrupt":
        return Status.CRASHED, None, "interrupted"
    if execution.ended_by == "timeout":
        return Status.TIMED_OUT, None, None
    code = execution.returncode
    assert code is not None
    if backend == BWRAP:
        if "exit-code" not in execution.status:
            # bubblewrap reports an exit code whenever the command ran; without one the sandbox
            # itself failed (or the exec did).
            first = _first_line(execution.stderr)
            if first.startswith(_EXEC_FAILURES):
                return Status.NOT_STARTED, None, first.decode("utf-8", "replace")
            return (
                Status.CRASHED,
                None,
                "bubblewrap failed: " + (first.decode("utf-8", "replace") or f"exit status {code}"),
            )
        code = execution.status["exit-code"]
    if code < 0:
        return Status.CRASHED, None, f"killed by {_signal_name(-code)}"
    if code == expect_exit:
        return Status.PASSED, code, None
    first = _first_line(execution.stderr)
    if code in (126, 127) and first.startswith(_EXEC_FAILURES):
        return Status.NOT_STARTED, None, first.decode("utf-8", "replace")
    if backend == BWRAP and 128 < code <= 128 + signal.SIGRTMAX:
        # bubblewrap folds "killed by signal N" into exit status 128+N; a program that really
        # exits with such a status is reported as crashed too (a failure either way).
        return Status.CRASHED, None, f"killed by {_signal_name(code - 128)} (exit status {code})"
    return Status.FAILED, code, None


def _first_line(data: bytes) -> bytes:
    return data.split(b"\n", 1)[0].strip()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
