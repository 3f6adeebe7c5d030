"""Dry runs: execute exactly the eligible examples, each in a sandbox, and never downgrade.

The eligible set is fixed by data: examples of tools with a reviewed dry-run capability, minus
those a disposition narrows, minus those that failed contract validation (never executed; the run
still fails for them). Each becomes an argv — the example's words with the program word replaced
by the configured executable and the preview flag inserted after the command path unless it is
already given — and runs through :mod:`sandbox`. A failed, timed-out, crashed or unstarted run is
a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, assert_never

import sandbox
from exampleguard._codes import CONFIG_INVALID, DRYRUN_FAILED, DRYRUN_TIMEOUT, EXECUTABLE_MISSING
from exampleguard._config import Config, DryRunSettings
from exampleguard._diagnostics import Diagnostic, Region
from exampleguard._documents import KeyRegion
from exampleguard._pipeline import Evaluation, ExampleResult
from exampleguard._report import DryRunEntry, dry_run_entry
from exampleguard._signals import Interrupted, held_interrupts, wait_for_all

__all__ = [
    "DryRunError",
    "PlannedRun",
    "Progress",
    "RunRecord",
    "Selection",
    "execute",
    "fixture_problems",
    "interpreter_paths",
    "limits_of",
    "plan",
    "resolve_executable",
]


class DryRunError(Exception):
    """The dry run cannot be evaluated (exit 2): ``diagnostic`` says why, before anything runs."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One example to execute: its address, the argv, and where its fixtures come from."""

    tool: str
    index: int
    argv: tuple[str, ...]
    fixtures: Path | None
    expect_exit: int
    region: Region | None


@dataclass(slots=True)
class RunRecord:
    """A finished run: the report entry and, for a failure, its diagnostic."""

    entry: DryRunEntry
    diagnostic: Diagnostic | None = None


@dataclass(slots=True)
class Selection:
    """``--tool`` and ``--example`` filters; empty means everything eligible."""

    tools: set[str] = field(default_factory=set)
    examples: set[tuple[str, int]] = field(default_factory=set)

    def wants(self, result: ExampleResult) -> bool:
        """Whether ``result`` is selected."""
        if not self.tools and not self.examples:
            return True
        return result.tool in self.tools or (result.tool, result.index) in self.examples


def resolve_executable(config: Config, program: str) -> tuple[str, ...]:
    """The argv prefix that replaces the program word; raise ``DryRunError`` if missing."""
    configured = config.settings.dryrun.executable
    if configured is None:
        # SPEC 3.1: the program found on PATH, else next to the running interpreter. A project's
        # console scripts sit next to that interpreter in its virtualenv, which a CI step or a
        # pre-commit hook runs without activating. Not resolved: a venv's python is a symlink.
        beside = Path(sys.executable).parent
        found = shutil.which(program) or shutil.which(program, path=str(beside))
        if found is None:
            raise DryRunError(
                EXECUTABLE_MISSING.diagnostic(
                    message=f"the program '{program}' is neither on PATH nor next to the "
                    f"running interpreter (in {beside}), and [tool.exampleguard.dryrun] sets "
                    "no executable",
                    hint="Install the program in this environment before the dry run, or set "
                    "`executable`.",
                    region=config.region(),
                )
            )
        return (found,)
    prefix = (configured,) if isinstance(configured, str) else tuple(configured)
    head = prefix[0]
    # A relative path with a separator is relative to the configuration, like every path in it.
    # Symlinks are kept: a virtualenv's python is a symlink, and following it would run the base
    # interpreter without the virtualenv's packages.
    resolved = os.path.abspath(config.root / head) if os.sep in head else shutil.which(head)  # noqa: PTH100 - resolve() would follow the symlink
    # A folder or a file without execute permission cannot be started either (which() checks
    # both for a bare name; a path is checked here).
    if resolved is None or not (Path(resolved).is_file() and os.access(resolved, os.X_OK)):
        exists = resolved is not None and Path(resolved).exists()
        problem = "is not an executable file" if exists else "cannot be found"
        raise DryRunError(
            EXECUTABLE_MISSING.diagnostic(
                message=f"the dry-run executable '{head}' {problem}",
                hint="Fix `executable` in [tool.exampleguard.dryrun].",
                region=config.region("dryrun", "executable"),
            )
        )
    return (resolved, *prefix[1:])


OUTPUT_BUDGET_CHARS = 256 * 1024 * 1024
"""The dry-run output a whole report keeps: what each run prints is capped by ``output_kb``,
and all of it together by this, so that many runs cannot add up to exampleguard's memory."""
TRIMMED_CHARS = 64 * 1024
"""What each stream of a run past the budget keeps (marked truncated)."""


class OutputBudget:
    """The dry-run output still to be kept in the report, shared by the runs of a session."""

    def __init__(self, total: int = OUTPUT_BUDGET_CHARS) -> None:
        self._left = total
        self._lock = threading.Lock()

    def keep(self, outcome: sandbox.Outcome) -> sandbox.Outcome:
        """``outcome`` as the report keeps it: whole within the budget, else its streams cut."""
        size = len(outcome.stdout) + len(outcome.stderr)
        with self._lock:
            if size <= self._left:
                self._left -= size
                return outcome
        return replace(
            outcome,
            stdout=outcome.stdout[:TRIMMED_CHARS],
            stderr=outcome.stderr[:TRIMMED_CHARS],
            stdout_truncated=outcome.stdout_truncated or len(outcome.stdout) > TRIMMED_CHARS,
            stderr_truncated=outcome.stderr_truncated or len(outcome.stderr) > TRIMMED_CHARS,
        )


def limits_of(settings: DryRunSettings) -> sandbox.Limits:
    """The sandbox limits of every run; unset memory and process limits keep the defaults."""
    configured = {"memory_mb": settings.memory_mb, "max_processes": settings.max_processes}
    return sandbox.Limits(
        timeout_s=settings.timeout,
        output_bytes=settings.output_kb * 1024,
        **{key: value for key, value in configured.items() if value is not None},
    )


def fixture_problems(evaluation: Evaluation) -> list[Diagnostic]:
    """Why a fixtures folder cannot be copied into a run: one configuration error per key.

    Every folder named by ``[dryrun] fixtures`` or an eligible tool's ``dry_run.fixtures``
    must be a relative path that stays inside the project without passing through a symlink
    (the host side copies it, so a path out of the project would carry ``~/.ssh`` into a run
    whose home is masked), and hold regular files and directories only, within the copy's
    bounds: a symlink, FIFO, socket or device inside is refused before anything runs.
    """
    config = evaluation.inputs.config
    limits = limits_of(config.settings.dryrun)
    named: list[tuple[str, KeyRegion]] = []
    if config.settings.dryrun.fixtures is not None:
        named.append((config.settings.dryrun.fixtures, config.region("dryrun", "fixtures")))
    eligible = {result.tool for result in evaluation.eligible}
    document = evaluation.inputs.catalog.document
    for tool in evaluation.contract.tools:
        capability = tool.dry_run
        if tool.id in eligible and capability is not None and capability.fixtures is not None:
            where = document.region(("tools", tool.index, "dry_run", "fixtures"))
            named.append((capability.fixtures, where))
    problems: list[Diagnostic] = []
    for folder, region in named:
        reason = _fixture_folder_problem(config.root, folder, limits)
        if reason is not None:
            problems.append(
                CONFIG_INVALID.diagnostic(
                    f"{region.file}: {region.shown_key or 'fixtures'}: {reason}",
                    hint="Fixtures are a folder of the project holding regular files and "
                    "directories only; docs/dry-runs.md says why.",
                    region=region,
                )
            )
    return problems


def _fixture_folder_problem(root: Path, folder: str, limits: sandbox.Limits) -> str | None:
    """Why ``folder`` (relative to the project ``root``) is not usable fixtures, or ``None``."""
    relative = Path(folder)
    if relative.is_absolute():
        return f"{folder!r} is an absolute path; fixtures are a folder inside the project"
    if ".." in relative.parts:
        return f"{folder!r} leaves the project through '..'; fixtures are a folder inside it"
    current = root
    for part in relative.parts:
        current = current / part
        try:
            if current.is_symlink():
                return (
                    f"{folder!r} passes through the symlink {part!r}; fixtures are never "
                    "followed through a link"
                )
        except OSError as exc:
            return f"{folder!r}: {exc.strerror or exc}"
    if not current.is_dir():
        return f"{folder!r} is not a folder of the project"
    try:
        sandbox.check_fixtures(current, limits)
    except sandbox.FixtureError as exc:
        return str(exc)
    return None


def interpreter_paths(executable: str) -> tuple[Path, ...]:
    """Paths a run of ``executable`` must be able to read: itself and its interpreter's install.

    A console script names its interpreter in its shebang; a virtualenv's interpreter needs the
    virtualenv and the base installation it was made from (both may live under a masked home).
    """
    found: list[Path] = []
    path = Path(executable)
    found.extend({path, path.resolve()})
    interpreter: Path | None = None
    try:
        with path.open("rb") as handle:
            first = handle.readline(512)
    except OSError:
        first = b""
    if first.startswith(b"#!"):
        words = first[2:].decode("utf-8", errors="replace").split()
        program = _env_program(words[1:]) if words and words[0].endswith("/env") else None
        if words:
            interpreter = Path(program if program is not None else words[0])
            if not interpreter.is_absolute():
                which = shutil.which(str(interpreter))
                interpreter = Path(which) if which else None
    elif path.name.startswith("python"):
        interpreter = path
    if interpreter is not None:
        found.extend(_python_installation(interpreter))
    return tuple(dict.fromkeys(p for p in found if p.exists()))


# env's options that take the next word as their value (GNU coreutils and BSD); -S's split
# string is already split into the shebang's words.
_ENV_OPTIONS_WITH_VALUE = frozenset({"-u", "--unset", "-C", "--chdir", "-P"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _env_program(words: Sequence[str]) -> str | None:
    """The program ``env WORDS`` runs: the first word that is no option and no assignment.

    Only that program is an interpreter whose installation a run may need: the words after
    it are its arguments (``#!/usr/bin/env -S tool -- /any/file`` names a file, not an
    interpreter), and binding one would show it to the run.
    """
    value_next = False
    for word in words:
        if value_next:
            value_next = False
        elif word in _ENV_OPTIONS_WITH_VALUE:
            value_next = True
        elif not word.startswith("-") and not _ASSIGNMENT.match(word):
            return word
    return None


def _python_installation(interpreter: Path) -> list[Path]:
    found = [interpreter, interpreter.resolve()]
    for candidate in (interpreter.parent.parent, interpreter.resolve().parent.parent):
        config = candidate / "pyvenv.cfg"
        if config.exists():
            found.append(candidate)
            for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    found.append(Path(value.strip()).resolve().parent)
        elif (candidate / "lib").exists():
            found.append(candidate)
    return found


def plan(
    evaluation: Evaluation,
    executable: Sequence[str],
    *,
    selection: Selection | None = None,
) -> list[PlannedRun]:
    """The runs to execute: eligible, not narrowed, contract-valid, and selected."""
    config = evaluation.inputs.config
    runs: list[PlannedRun] = []
    for result in evaluation.eligible:
        preview = result.preview
        if preview is None or preview.command_end is None or result.tool is None:
            continue
        if not result.ok or result.argv is None:
            continue
        if selection is not None and not selection.wants(result):
            continue
        dry_run = preview.capability
        words = list(result.argv[1:])
        if dry_run.flag is not None and dry_run.flag.partition("=")[0] not in preview.given_flags:
            # After the command path: group options come before it, the command's own after.
            words.insert(preview.command_end - 1, dry_run.flag)
        # The tool's own fixtures, else the configuration's for every run.
        folder = dry_run.fixtures or config.settings.dryrun.fixtures
        fixtures = config.root / folder if folder else None
        runs.append(
            PlannedRun(
                tool=result.tool,
                index=result.index,
                argv=(*executable, *words),
                fixtures=fixtures,
                expect_exit=dry_run.expect_exit,
                region=result.region(),
            )
        )
    return runs


class Progress(Protocol):
    """What a caller learns while the runs go on (the CLI draws a progress bar from it)."""

    def checked(self, done: int, total: int) -> None:
        """Contract validation, before any run: ``done`` examples of ``total`` checked."""

    def planned(self, total: int) -> None:
        """``total`` runs are about to start."""

    def started(self, run: PlannedRun) -> None:
        """``run`` has started (in a worker thread)."""

    def finished(self, record: RunRecord) -> None:
        """A run has ended (in a worker thread); ``record`` says how."""


def execute(
    runs: Sequence[PlannedRun],
    config: Config,
    *,
    readable: Sequence[Path],
    jobs: int,
    cancel: threading.Event,
    progress: Progress | None = None,
) -> tuple[list[RunRecord], bool]:
    """Run every planned run in the sandbox, ``jobs`` at a time, in the plan's order.

    Returns the records and whether the run was interrupted (every sandboxed process is gone
    by then). An interrupted session's runs that never started are ``not-started`` records
    without a diagnostic: they did not fail, they did not run.
    """
    settings = config.settings.dryrun
    limits = limits_of(settings)
    budget = OutputBudget()

    def one(run: PlannedRun) -> RunRecord:
        policy = sandbox.Policy(
            argv=run.argv,
            fixtures=run.fixtures,
            project_dir=config.root,
            readable=tuple(readable),
            pass_env=tuple(settings.pass_env),
            isolation=sandbox.Isolation(settings.isolation),
            limits=limits,
            expect_exit=run.expect_exit,
            require=frozenset(sandbox.Guarantee(g) for g in settings.require),
        )
        if progress is not None and not cancel.is_set():
            progress.started(run)
        outcome = budget.keep(sandbox.run(policy, cancel=cancel))
        record = _record(run, outcome, cancel.is_set())
        if progress is not None:
            progress.finished(record)
        return record

    if progress is not None:
        progress.planned(len(runs))
    # Pool threads outlive each run they spawn: bubblewrap's --die-with-parent is tied to the
    # spawning thread, so a run must never outlive the thread that started it.
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="dryrun")
    futures: list[Future[RunRecord]] = []
    interrupted = False
    try:
        futures.extend(pool.submit(one, run) for run in runs)
        wait_for_all(futures)
    except (KeyboardInterrupt, Interrupted):
        # Ctrl-C or SIGTERM: stop starting runs (those not started yet return at once), kill
        # every live one, and wait for each to report before the caller exits 130. A second
        # interrupt may not cut this short: runs would outlive the exit.
        interrupted = True
        with held_interrupts():
            cancel.set()
            # Interrupted while submitting: the rest return at once, as runs that never started.
            futures.extend(pool.submit(one, run) for run in runs[len(futures) :])
            sandbox.kill_all()
            wait_for_all(futures)
    finally:
        with held_interrupts():
            pool.shutdown(wait=True)
    return [future.result() for future in futures], interrupted


_MISSING_FILE = re.compile(
    r"No such file or directory|FileNotFoundError|does not exist|not found: |cannot find|"
    r"could not (?:open|find|read)",
    re.IGNORECASE,
)
# A line of nothing but box-drawing, rules and punctuation (rich's panels, separators).
_DECORATION = re.compile(r"^[\s\u2500-\u257f\u2580-\u259f|+\-=_*#~.:;'\"`<>()\[\]{}]*$")


def reason_line(output: str) -> str:
    """The line of a failed run's output that says most: the last one that is not decoration.

    A CLI that frames its errors in a panel (rich-click's box) ends with the box's bottom
    border; the message is the last line with words in it, its border characters trimmed.
    """
    for line in reversed(output.strip().splitlines()):
        if not _DECORATION.match(line):
            return line.strip().strip("\u2502\u2503|").strip()
    return ""


def _record(run: PlannedRun, outcome: sandbox.Outcome, interrupted: bool) -> RunRecord:
    entry = dry_run_entry(run.tool, run.index, run.argv, outcome)
    if interrupted and entry.interrupted:
        # Stopped by the interruption, or never started because of it: the run says so, and
        # the summary counts how many ran; a diagnostic for each would be a flood of failures
        # that did not happen.
        return RunRecord(entry)
    match outcome.status:
        case sandbox.Status.PASSED:
            return RunRecord(entry)
        case sandbox.Status.FAILED:
            what = f"exited with {outcome.exit_code}, expected {run.expect_exit}"
        case sandbox.Status.TIMED_OUT:
            what = "did not finish in time and was killed"
        case sandbox.Status.CRASHED:
            what = f"crashed ({outcome.detail or 'killed by a signal'})"
        case sandbox.Status.NOT_STARTED:
            what = f"could not be started ({outcome.detail or 'unknown reason'})"
        case _:
            assert_never(outcome.status)
    code = DRYRUN_TIMEOUT if outcome.status is sandbox.Status.TIMED_OUT else DRYRUN_FAILED
    reason = reason_line(outcome.stderr or outcome.stdout)
    hint = "The report's dry_runs entry has the full output."
    if outcome.status is sandbox.Status.FAILED and _MISSING_FILE.search(
        f"{outcome.stderr}\n{outcome.stdout}"
    ):
        hint = (
            "The run starts in an empty work dir: a file of the project it reads (a config, "
            "a database) must be copied in with `fixtures` (the tool's dry_run.fixtures, or "
            "[dryrun] fixtures). " + hint
        )
    return RunRecord(
        entry,
        code.diagnostic(
            message=f"the dry run {what}" + (f": {reason[:200]}" if reason else ""),
            hint=hint,
            tool=run.tool,
            example=run.index,
            region=run.region,
        ),
    )
