"""``exampleguard dryrun`` (the eligible examples, in the sandbox) and ``exampleguard sandbox``."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from dataclasses import dataclass, field

import sandbox
from exampleguard._codes import CONFIG_INVALID, ISOLATION_UNAVAILABLE
from exampleguard._commands._outcome import TextOutcome
from exampleguard._commands.validate import run_evaluation
from exampleguard._config import Config, DryRunSettings
from exampleguard._diagnostics import Diagnostic, plural
from exampleguard._dryrun import (
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
from exampleguard._pipeline import Evaluation
from exampleguard._report import Report, build_report

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
            "Loader and interpreter hooks never enter a dry run; docs/sandbox.md documents "
            "the rule."
            if isinstance(error, sandbox.HookEnvError)
            else "Credentials never enter a dry run; docs/sandbox.md documents the rule."
        )
        region = config.region("dryrun", "pass_env")
        problems.append(
            CONFIG_INVALID.diagnostic(
                f"{region.file}: {region.shown_key}: {error}", hint=hint, region=region
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
        if error.refusal is not None:
            hint = f"This host: {error.refusal.cause}. What you can do: {error.refusal.options}."
    else:
        message = "; ".join(error.reasons) + " that `require` names; nothing was run"
        hint = "Run where the backend gives every guarantee in `require`, or require fewer."
    region = (
        config.region("dryrun", key)
        if key in config.settings.dryrun.model_fields_set
        else config.region()
    )
    if region.shown_key:
        message = f"{region.file}: {region.shown_key}: {message}"
    return ISOLATION_UNAVAILABLE.diagnostic(message, hint=hint, region=region)


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
                    f"--example {tool_id}[{index}]: the tool has "
                    f"{plural(counts[tool_id], 'example')}"
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


def sandbox_report(*, as_json: bool = False) -> TextOutcome:
    """``exampleguard sandbox``: the bwrap used, what this host allows, every backend.

    Everything is measured by probing (``sandbox.probe_host``, ``sandbox.probe_backends``);
    nothing on the host is changed.
    """
    host = sandbox.probe_host()
    backends = sandbox.probe_backends()
    try:
        auto: str | None = sandbox.select_backend(sandbox.Isolation.AUTO)
        unavailable = None
    except sandbox.IsolationUnavailable as error:
        auto, unavailable = None, str(error)
    if as_json:
        data = {
            "host": dataclasses.asdict(host),
            "auto": auto,
            "auto_unavailable": unavailable,
            "backends": [
                {
                    "name": b.name,
                    "available": b.available,
                    "executable": b.executable,
                    "guarantees": [g.value for g in b.guarantees],
                    "not_guaranteed": [g.value for g in b.not_guaranteed],
                    "detail": b.detail,
                }
                for b in backends
            ],
        }
        return TextOutcome(json.dumps(data, indent=2) + "\n")
    lines = [*_host_lines(host), ""]
    lines.append(f"isolation 'auto' uses: {auto}" if auto else (unavailable or ""))
    lines.append("")
    for backend in backends:
        state = "available" if backend.available else "unavailable"
        where = f" ({backend.executable})" if backend.executable else ""
        lines.append(f"{backend.name}: {state}{where}")
        if backend.detail:
            lines.append(f"  note: {backend.detail}")
        for guarantee in backend.guarantees:
            lines.append(f"  + {guarantee.value}: {_in_configuration_terms(guarantee.description)}")
        for guarantee in backend.not_guaranteed:
            lines.append(f"  - {guarantee.value}: not guaranteed")
    return TextOutcome("\n".join(lines) + "\n")


_DRYRUN_TABLE = "[tool.exampleguard.dryrun]"


def _in_configuration_terms(text: str) -> str:
    """``text`` (a sandbox guarantee's description) in the words of exampleguard's configuration.

    The sandbox names its own records (``Limits.output_bytes``, ``sandbox.RUN_UIDS``); a user
    sets ``output_kb`` in ``[tool.exampleguard.dryrun]`` and never sees those names. Each
    limit becomes its configuration key with its default; what no key sets becomes its value.
    """
    defaults = sandbox.Limits()
    uids = sandbox.RUN_UIDS
    words = {
        "Limits.memory_mb": f"{_DRYRUN_TABLE} memory_mb (default {defaults.memory_mb} MiB)",
        "Limits.max_processes": (
            f"{_DRYRUN_TABLE} max_processes (default {defaults.max_processes})"
        ),
        "Limits.output_bytes": (
            f"{_DRYRUN_TABLE} output_kb KiB (default {DryRunSettings().output_kb})"
        ),
        "Limits.timeout_s seconds": (
            f"{_DRYRUN_TABLE} timeout seconds (default {DryRunSettings().timeout:g})"
        ),
        # Not a setting: every run gets the sandbox's own size.
        "Limits.disk_mb bytes": f"{defaults.disk_mb} MiB",
        "sandbox.RUN_UIDS": f"the range {uids[0]}-{uids[-1]}",
    }
    for internal, shown in words.items():
        text = text.replace(internal, shown)
    return text


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _host_lines(host: sandbox.HostReport) -> list[str]:
    """What this host allows a sandbox, one fact a line."""
    if host.bwrap is not None:
        chosen = next((c for c in host.bwrap_candidates if c.path == host.bwrap), None)
        origin = f" (from {chosen.origin})" if chosen is not None and chosen.origin else ""
        lines = [f"bwrap: {host.bwrap}{origin}, version {host.bwrap_version or 'unknown'}"]
    else:
        lines = ["bwrap: none gives the full guarantee set here"]
    for candidate in host.bwrap_candidates:
        if candidate.path != host.bwrap:
            lines.append(
                f"  tried {candidate.path} ({candidate.origin or 'unknown origin'}, version "
                f"{candidate.version or 'unknown'}): {candidate.detail or 'not usable'}"
            )
    landlock = (
        f"ABI {host.landlock_abi}" + _landlock_layers(host.landlock_abi)
        if host.landlock_abi
        else "not available"
    )
    lines += [
        f"full isolation (auto, namespace): {_yes(host.full_isolation)}",
        f"unprivileged user namespaces: {_yes(host.unprivileged_userns)}",
        f"namespaces refused: {host.namespaces_refused or 'no'}",
        f"Landlock: {landlock}",
        f"seccomp filter: {_yes(host.seccomp)}",
        "memory cgroup: "
        + (
            f"{host.memory_cgroup} (each run with a memory limit gets one of its own there)"
            if host.memory_cgroup
            else host.memory_cgroup_detail
            or "none delegated: each process of a run is bounded by RLIMIT_AS and 4096 open "
            "files, bubblewrap's in-memory file systems by size; what the kernel holds for a "
            "run beyond that (socket buffers, SysV shared memory, memfds, file records) is not"
        ),
        "pids cgroup: "
        + (
            f"{host.pids_cgroup} (reported only: a run's tasks are bounded by RLIMIT_NPROC)"
            if host.pids_cgroup
            else "none delegated"
        ),
    ]
    if host.run_uids is not None:
        first, last = host.run_uids
        lines.append(
            f"caller: root (euid 0): each run executes as a uid of its own leased from "
            f"{first}-{last}, leases in {host.lease_dir}"
        )
    else:
        lines.append(f"caller: euid {host.euid} (not root): runs execute as this user")
    if host.detail:
        lines.append(f"note: {host.detail}")
    return lines


def _landlock_layers(abi: int) -> str:
    layers = ["filesystem writes"]
    if abi >= 4:
        layers.append("TCP bind/connect")
    if abi >= 6:
        layers.append("abstract unix socket and signal scoping")
    return f" ({', '.join(layers)})"
