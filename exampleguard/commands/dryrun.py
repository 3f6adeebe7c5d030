"""``exampleguard dryrun`` (the eligible examples, in the sandbox) and ``exampleguard sandbox``."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import sandbox
from exampleguard.codes import CONFIG_INVALID, ISOLATION_UNAVAILABLE
from exampleguard.commands._outcome import TextOutcome
from exampleguard.commands.validate import run_evaluation
from exampleguard.config import Config
from exampleguard.diagnostics import Diagnostic
from exampleguard.dryrun import (
    DryRunError,
    Progress,
    Selection,
    execute,
    fixture_problems,
    interpreter_paths,
    limits_of,
    plan,
    resolve_executable,
)
from exampleguard.pipeline import Evaluation
from exampleguard.report import Report, build_report

__all__ = ["DryRunOutcome", "dry_run", "sandbox_report"]


@dataclass(slots=True)
class DryRunOutcome:
    """A dry-run session: its report, and whether it was interrupted or could not run."""

    report: Report | None = None
    interrupted: bool = False
    unusable: list[Diagnostic] = field(default_factory=list)


def dry_run(
    config: Config,
    *,
    jobs: int | None,
    tools: list[str],
    examples: list[tuple[str, int]],
    shard: tuple[int, int] | None,
    progress: Progress | None = None,
    evaluation: Evaluation | None = None,
) -> DryRunOutcome:
    """``exampleguard dryrun``: all of ``validate``, then the eligible examples in the sandbox.

    Everything that could stop the run — structure errors, a missing executable, no isolation,
    a credential-like ``pass_env`` — is found before the first run starts (exit 2, nothing run).
    A caller that has already validated (for the same ``shard``) passes its ``evaluation``.
    """
    if evaluation is None:
        checked = progress.checked if progress is not None else None
        evaluation, unusable = run_evaluation(config, shard=shard, progress=checked)
        if evaluation is None:
            return DryRunOutcome(unusable=unusable)
    problems = _isolation_problems(config)
    executable: tuple[str, ...] = ()
    try:
        executable = resolve_executable(config, evaluation.contract.program)
    except DryRunError as error:
        problems.append(error.diagnostic)
    problems.extend(_selection_problems(evaluation, tools, examples))
    problems.extend(fixture_problems(evaluation))
    if problems:
        return DryRunOutcome(unusable=problems)
    settings = config.settings.dryrun
    runs = plan(evaluation, executable, selection=Selection(set(tools), set(examples)))
    problems = _empty_selections(evaluation, tools, examples, shard)
    if problems:
        return DryRunOutcome(unusable=problems)
    records, interrupted = execute(
        runs,
        config,
        readable=interpreter_paths(executable[0]),
        jobs=jobs or settings.jobs or os.cpu_count() or 1,
        cancel=threading.Event(),
        progress=progress,
    )
    report = build_report(
        evaluation,
        dry_runs=[record.entry for record in records],
        extra_diagnostics=[r.diagnostic for r in records if r.diagnostic is not None],
        interrupted=interrupted,
        shard=shard,
        dry_runs_asked=True,
    )
    return DryRunOutcome(report=report, interrupted=interrupted)


def _isolation_problems(config: Config) -> list[Diagnostic]:
    """Why the sandbox cannot run as configured: a refused ``pass_env``, no isolation."""
    settings = config.settings.dryrun
    problems: list[Diagnostic] = []
    try:
        # The values too: a name that passes may still hold a URL with a password in it.
        sandbox.check_pass_env(settings.pass_env, os.environ)
    except sandbox.PassEnvError as error:
        hint = (
            "Loader and interpreter hooks never enter a dry run; the README documents the rule."
            if isinstance(error, sandbox.HookEnvError)
            else "Credentials never enter a dry run; the README documents the rule."
        )
        location = config.location("dryrun", "pass_env")
        problems.append(
            CONFIG_INVALID.diagnostic(
                f"{location.file}: {location.key}: {error}", hint=hint, location=location
            )
        )
    isolation = sandbox.Isolation(settings.isolation)
    required = frozenset(sandbox.Guarantee(g) for g in settings.require)
    try:
        sandbox.select_backend(isolation)
    except sandbox.IsolationUnavailable as error:
        problems.append(_unavailable(config, "isolation", error))
        return problems
    try:
        sandbox.select_backend(isolation, require=required, limits=limits_of(settings))
    except sandbox.IsolationUnavailable as error:
        problems.append(_unavailable(config, "require", error))
    return problems


def _unavailable(config: Config, key: str, error: sandbox.IsolationUnavailable) -> Diagnostic:
    """``isolation-unavailable``, located at ``key`` of ``[dryrun]`` when the file sets it."""
    if key == "isolation":
        message = str(error).removeprefix("isolation-unavailable: ")
        hint = 'Install bubblewrap, or set isolation = "unshare" or "env" knowingly.'
    else:
        message = "; ".join(error.reasons) + " that `require` names; nothing was run"
        hint = "Run where the backend gives every guarantee in `require`, or require fewer."
    location = (
        config.location("dryrun", key)
        if key in config.settings.dryrun.model_fields_set
        else config.location()
    )
    if location.key:
        message = f"{location.file}: {location.key}: {message}"
    return ISOLATION_UNAVAILABLE.diagnostic(message, hint=hint, location=location)


def _selection_problems(
    evaluation: Evaluation, tools: list[str], examples: list[tuple[str, int]]
) -> list[Diagnostic]:
    """``--tool`` and ``--example`` that name no tool, or no example of it."""
    counts = {
        tool.id: evaluation.inputs.examples.count(tool.index) for tool in evaluation.contract.tools
    }
    problems: list[Diagnostic] = []
    for tool_id in [*tools, *(t for t, _ in examples)]:
        if tool_id not in counts:
            problems.append(
                CONFIG_INVALID.diagnostic(
                    f"--tool/--example names {tool_id!r}, which the catalog does not have"
                )
            )
    for tool_id, index in examples:
        # A typo in an index must not turn into a dry run that runs nothing and passes.
        if tool_id in counts and index >= counts[tool_id]:
            problems.append(
                CONFIG_INVALID.diagnostic(
                    f"--example {tool_id}[{index}]: the tool has {counts[tool_id]} example(s)"
                )
            )
    return problems


def _empty_selections(
    evaluation: Evaluation,
    tools: list[str],
    examples: list[tuple[str, int]],
    shard: tuple[int, int] | None,
) -> list[Diagnostic]:
    """``--tool`` and ``--example`` that select no eligible example: each named, with why.

    A selection that runs nothing would pass in silence, though what was asked for was never
    tried. An example that is eligible but fails contract validation is selected: it is never
    executed, and the run fails for it (exit 1), as without a selection.
    """
    capable = {tool.id for tool in evaluation.contract.tools if tool.dry_run is not None}
    narrowed = evaluation.review.narrowed
    known = {(r.tool or "", r.index) for r in evaluation.examples} | narrowed
    eligible = {(r.tool or "", r.index) for r in evaluation.eligible}
    where = f" in shard {shard[0]}/{shard[1]}" if shard else ""

    def why(tool_id: str, addresses: set[tuple[str, int]], what: str) -> str | None:
        if tool_id not in capable:
            return f"{tool_id} has no reviewed dry_run capability"
        if addresses & eligible:
            return None
        if addresses and addresses <= narrowed:
            return f"{what} narrowed by a disposition"
        return f"{tool_id} is not checked{where}"

    problems: list[Diagnostic] = []
    for tool_id in tools:
        of_tool = {a for a in known if a[0] == tool_id}
        reason = why(tool_id, of_tool, f"every example of {tool_id} is")
        if reason is not None:
            problems.append(_selects_nothing(f"--tool {tool_id}", reason))
    for tool_id, index in examples:
        address = f"{tool_id}[{index}]"
        reason = why(tool_id, {(tool_id, index)} & known, f"{address} is")
        if reason is not None:
            problems.append(_selects_nothing(f"--example {address}", reason))
    return problems


def _selects_nothing(selector: str, reason: str) -> Diagnostic:
    return CONFIG_INVALID.diagnostic(
        f"{selector} selects no dry run: {reason}",
        hint="`exampleguard counts` shows what is eligible; a dry run needs a reviewed "
        "`dry_run` block, and a disposition keeps an example out.",
    )


def sandbox_report() -> TextOutcome:
    """``exampleguard sandbox``: the backends this machine has and what each guarantees."""
    lines: list[str] = []
    for backend in sandbox.probe_backends():
        state = "available" if backend.available else "unavailable"
        where = f" ({backend.executable})" if backend.executable else ""
        lines.append(f"{backend.name}: {state}{where}")
        if backend.detail:
            lines.append(f"  note: {backend.detail}")
        for guarantee in backend.guarantees:
            lines.append(f"  + {guarantee.value}: {guarantee.description}")
        for guarantee in backend.not_guaranteed:
            lines.append(f"  - {guarantee.value}: not guaranteed")
    try:
        lines.append(f"isolation 'auto' uses: {sandbox.select_backend(sandbox.Isolation.AUTO)}")
    except sandbox.IsolationUnavailable as error:
        lines.append(str(error))
    return TextOutcome("\n".join(lines) + "\n")
