"""The registry of diagnostic codes: one table that the CLI, the reports and the docs all read.

Codes are public identities. They are never renamed and never reused; a retired code stays in the
table. Each entry documents itself in a fixed shape — what it means, why it matters, an example,
and how to fix it — which is what ``exampleguard explain CODE`` prints and what SARIF rules carry.

Every code is a module-level constant (``UNKNOWN_FLAG`` for ``unknown-flag``), and emission sites
build diagnostics from it with :meth:`Code.diagnostic`: the severity always comes from here.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from exampleguard._diagnostics import (
    Diagnostic,
    Location,
    Region,
    Related,
    Severity,
    Span,
    neutralise,
)

__all__ = [
    "ALIAS_COLLISION",
    "ALWAYS_PROMPTS",
    "ARGUMENT_FILE_UNREADABLE",
    "ARGV_REWRITTEN",
    "BAD_CHOICE",
    "BAD_TYPE",
    "BYPASS_FLAG",
    "CODES",
    "CONFIG_INVALID",
    "CONSTRAINT_INVALID",
    "COUNTS_DRIFT",
    "COUNTS_MISSING",
    "DISPOSITION_DUPLICATE",
    "DISPOSITION_INVALID",
    "DISPOSITION_STALE",
    "DOC_BLOCK_WITHOUT_EXAMPLE",
    "DOC_EXAMPLE_EXCEPTED",
    "DOC_EXCEPTION_DUPLICATE",
    "DOC_EXCEPTION_STALE",
    "DOC_FILE_UNREAD",
    "DRYRUN_DISABLED",
    "DRYRUN_FAILED",
    "DRYRUN_FLAG_UNKNOWN",
    "DRYRUN_TIMEOUT",
    "DUPLICATE_EXAMPLE",
    "DUPLICATE_TOOL",
    "DYNAMIC_COMMAND",
    "EXAMPLE_TOO_LONG",
    "EXCLUSION_DUPLICATE",
    "EXCLUSION_INVALID",
    "EXCLUSION_STALE",
    "EXECUTABLE_MISSING",
    "EXTRA_POSITIONAL",
    "FILE_INVALID",
    "FILE_UNREADABLE",
    "GATE_DUPLICATE",
    "GATE_INVALID",
    "GATE_STALE",
    "ISOLATION_UNAVAILABLE",
    "MISSING_REQUIRED",
    "MISSING_VALUE",
    "MODEL_MISMATCH",
    "MUTUALLY_EXCLUSIVE",
    "NOT_RUNNABLE",
    "OVERLAY_DRIFT",
    "PARSER_RAISED",
    "PARSE_ERROR",
    "REPEATED_OPTION",
    "REQUIRE_ONE_OF",
    "REQUIRE_TOGETHER",
    "RETIRED",
    "SAFETY_DRIFT",
    "SHELL_COMMENT",
    "SHELL_CONSTRUCT",
    "SHELL_EXPANSION",
    "TOOL_UNBOUND",
    "TOOL_WITHOUT_EXAMPLES",
    "TOO_MANY_EXAMPLES",
    "TREE_UNAVAILABLE",
    "TREE_UNSANDBOXED",
    "UNCOVERED_COMMAND",
    "UNEXPECTED_VALUE",
    "UNKNOWN_COMMAND",
    "UNKNOWN_FLAG",
    "WRONG_COMMAND",
    "WRONG_PROGRAM",
    "Code",
    "Stage",
    "lookup",
]

_CODE_FORMAT = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class Stage(enum.StrEnum):
    """The pipeline stage that reports a code."""

    INPUT = "input"
    SHELL = "shell"
    BIND = "bind"
    RULES = "rules"
    CATALOG = "catalog"
    REVIEW = "review"
    COUNTS = "counts"
    DRYRUN = "dryrun"


@dataclass(frozen=True, slots=True)
class Code:
    """One registered diagnostic code and its documentation.

    ``exit_code`` is what the code means for the run: 1 for a defect found by evaluating the
    examples, 2 for a run that could not be evaluated at all (SPEC section 6).
    """

    name: str
    severity: Severity
    exit_code: int
    stage: Stage
    summary: str
    what: str
    why: str
    example: str
    fix: str
    since: str = "0.1.0"

    def diagnostic(
        self,
        message: str,
        *,
        hint: str | None = None,
        suggestion: str | None = None,
        tool: str | None = None,
        example: int | None = None,
        location: Location | None = None,
        span: Span | None = None,
        related: tuple[Related, ...] = (),
        region: Region | None = None,
    ) -> Diagnostic:
        r"""A diagnostic of this code, with the severity the registry gives it.

        The message and hint may carry another process's words (an import's error, a parser's
        message, a dry run's last line): they are :func:`neutralise`\ d here, once for every
        output.
        """
        return Diagnostic(
            code=self.name,
            severity=self.severity,
            message=neutralise(message),
            hint=None if hint is None else neutralise(hint),
            suggestion=suggestion,
            tool=tool,
            example=example,
            location=location,
            span=span,
            related=related,
            region=region,
        )


_REGISTERED: list[Code] = []


def _code(
    name: str,
    stage: Stage,
    summary: str,
    *,
    what: str,
    why: str,
    example: str,
    fix: str,
    severity: Severity = Severity.ERROR,
    exit_code: int = 1,
) -> Code:
    code = Code(
        name=name,
        severity=severity,
        exit_code=exit_code,
        stage=stage,
        summary=summary,
        what=what,
        why=why,
        example=example,
        fix=fix,
    )
    # Definition order is documentation order: `explain` and SARIF list codes as written here.
    _REGISTERED.append(code)
    return code


_AGENTS_COPY = "Agents copy examples verbatim; a broken example teaches every agent that reads it"

# -- files that cannot be evaluated (exit 2) --------------------------------------------------
CONFIG_INVALID = _code(
    "config-invalid",
    Stage.INPUT,
    "The configuration is missing, unreadable or malformed",
    what="No configuration was found, or `[tool.exampleguard]` / `exampleguard.toml` has a "
    "missing key, an unknown key or a value of the wrong type.",
    why="Without a valid configuration nothing can be evaluated, so the run stops before "
    "anything is checked (exit 2).",
    example='[tool.exampleguard]\ncatalogue = "agents.json"  # the key is `catalog`',
    fix="Correct the key named in the message; docs/configuration.md lists every key with its "
    "type and default.",
    exit_code=2,
)
FILE_UNREADABLE = _code(
    "file-unreadable",
    Stage.INPUT,
    "A file the run needs cannot be read",
    what="A catalog, tree snapshot, counts, disposition or exclusion file is missing (where "
    "required), is not a regular file, is too large, is not UTF-8, or cannot be opened.",
    why="A file that cannot be read cannot be evaluated; exampleguard reports it instead of "
    "guessing (exit 2).",
    example="catalog = 'agents.json' but the file does not exist",
    fix="Create the file, fix its path in the configuration (relative paths are relative to "
    "the configuration file), or re-encode it as UTF-8.",
    exit_code=2,
)
FILE_INVALID = _code(
    "file-invalid",
    Stage.INPUT,
    "A file is not valid JSON/TOML or does not have the expected structure",
    what="The file does not parse, has the wrong or no `format`, has unknown or missing keys, "
    'or has a value of the wrong type (no silent coercion: `"5"` is not an integer).',
    why="A half-understood file would make every later verdict untrustworthy, so the run "
    "stops and names the file, the key and the line (exit 2).",
    example='{"format": "exampleguard.catalog/v1", "program": "notes", "tools": [{"id": 5}]}',
    fix="Fix the value at the key path in the message; `exampleguard schema catalog` prints "
    "the full schema.",
    exit_code=2,
)
TREE_UNAVAILABLE = _code(
    "tree-unavailable",
    Stage.INPUT,
    "The executable command tree could not be loaded",
    what="The `tree` setting names a module or attribute that cannot be imported, an object "
    "that is not a command tree, a factory that raised, exited or hung, or a snapshot that "
    "does not load.",
    why="With a tree configured the tree owns the truth; without it nothing can be checked "
    "against the real parser (exit 2).",
    example='tree = "click:notes.cli:main"  # but notes/cli.py defines `cli`, not `main`',
    fix="Point `tree` at the real object (`click:MODULE:ATTR`, `typer:MODULE:ATTR`, "
    "`argparse:MODULE:ATTR`, or a snapshot .json) and make sure importing it has no side "
    "effects that fail.",
    exit_code=2,
)
EXECUTABLE_MISSING = _code(
    "executable-missing",
    Stage.INPUT,
    "The program a dry run would execute cannot be found",
    what="`exampleguard dryrun` could not find the executable: `[tool.exampleguard.dryrun] "
    "executable` is not set and the catalog's program is neither on PATH nor next to the "
    "running interpreter (the virtualenv exampleguard runs from), or the configured "
    "executable does not exist.",
    why="Running nothing is not a pass: the dry run cannot be evaluated (exit 2).",
    example="program = 'notes' but `notes` is not installed in the CI job",
    fix="Install the program before the dry run, or set `executable` to the argv prefix that "
    'runs it, for example `["python", "-m", "notes"]`.',
    exit_code=2,
)
ISOLATION_UNAVAILABLE = _code(
    "isolation-unavailable",
    Stage.DRYRUN,
    "No sandbox backend that gives the requested isolation is available",
    what="Isolation `auto` was asked for, but neither bubblewrap (namespaces) nor the "
    "`landlock` backend (Landlock ABI 6 or later) can run here, or `namespace` was asked for "
    "and namespaces are refused; or `require` names a guarantee the backend cannot give. The "
    "message names what the host refused (a seccomp profile, AppArmor's restriction of user "
    "namespaces, a sysctl) and what can be done there.",
    why="Dry runs execute real commands. exampleguard fails closed rather than running them "
    "unisolated (exit 2, nothing is run).",
    example="exampleguard dryrun   # on a machine without bwrap and without user namespaces",
    fix="Follow the message: install bubblewrap, run as root where only user namespaces are "
    "refused, give the container a seccomp profile that allows namespaces, or, knowingly, "
    'ask for the best-effort `env` isolation by name (`isolation = "env"`).',
    exit_code=2,
)

# -- shell ------------------------------------------------------------------------------------
PARSE_ERROR = _code(
    "parse-error",
    Stage.SHELL,
    "The example is not a well-formed shell command line",
    what="The example has unbalanced quotes, is not valid Unicode text (a lone surrogate), or "
    "cannot be parsed as shell for another reason.",
    why=f"{_AGENTS_COPY} to produce a command line that does not even parse.",
    example='notes add "unterminated',
    fix="Balance the quotes or remove the invalid characters.",
)
SHELL_CONSTRUCT = _code(
    "shell-construct",
    Stage.SHELL,
    "The example uses a shell feature beyond one simple command",
    what="Pipes, lists (`;`, `&&`, `||`, a newline outside quotes), background `&`, redirects, "
    "here-docs, subshells, command, process, parameter or arithmetic expansion, or a "
    "leading `VAR=value` assignment.",
    why="Agents often run the program directly, without a shell; these constructs then mean "
    "something else or nothing at all, and what the example shows is not what the program "
    "receives.",
    example="notes list --format json | jq .",
    fix="Reduce the example to the one command the tool describes, with literal values.",
)
SHELL_COMMENT = _code(
    "shell-comment",
    Stage.SHELL,
    "The example contains a shell comment",
    what="A `#` at the start of a word, outside quotes, starts a comment: the shell drops the "
    "rest of the line.",
    why="Text after `#` never reaches the program, so the example does something other than "
    "it appears to. Quote the word (`'#urgent'`) if the `#` is data.",
    example="notes add --tag #urgent",
    fix="Quote the word that starts with `#`, or move the explanation into the example's "
    "`description`.",
)
SHELL_EXPANSION = _code(
    "shell-expansion",
    Stage.SHELL,
    "The shell would expand part of the example (warning)",
    what="An unquoted glob (`*`, `?`, `[...]`), brace expansion (`{a,b}`) or tilde (`~`).",
    why="A shell rewrites these words before the program sees them; an agent calling the "
    "program directly would pass them literally. The example behaves differently in the two "
    "cases. This is a warning and never fails an example.",
    example="notes import ~/notes/*.md",
    fix="Quote the word if it is meant literally, or spell out the expanded values.",
    severity=Severity.WARNING,
)

# -- binding to the command -------------------------------------------------------------------
WRONG_PROGRAM = _code(
    "wrong-program",
    Stage.BIND,
    "The example does not start with the catalog's program",
    what="The first word of the example is not the `program` the catalog describes.",
    why=f"{_AGENTS_COPY} to run a different program.",
    example="note delete 3   # the program is `notes`",
    fix="Start the example with the program name exactly as the catalog spells it.",
)
UNKNOWN_COMMAND = _code(
    "unknown-command",
    Stage.BIND,
    "A subcommand word is not a command of the program",
    what="A word in command position names no subcommand or alias at that level.",
    why=f"{_AGENTS_COPY} to call a command that does not exist (often a renamed one).",
    example="notes remove 3   # the command is `delete` (alias `rm`)",
    fix="Use the command's current name; the message suggests the closest one.",
)
ARGV_REWRITTEN = _code(
    "argv-rewritten",
    Stage.BIND,
    "The program rewrites its argv before parsing: the example cannot be checked as written",
    what="The configuration's `argv_rewrite` says the program changes its command line before "
    "its parser reads it (tox moves its command word to the front and keeps the words after "
    "`--` for itself; ansible-galaxy inserts `role`), and the word in command position names "
    "no command of the parser as written.",
    why="Reporting `unknown-command` would blame a documented usage; passing it would let a "
    "real typo through. Nothing passes unchecked, so the example fails with the reason.",
    example="tox -e py311 -- -k test_foo   # tox inserts its `legacy` command first",
    fix="Check the example by hand and record a reviewed exception for it, or write it in the "
    "form the parser reads (`tox run -e py311 -- -k test_foo`).",
)
WRONG_COMMAND = _code(
    "wrong-command",
    Stage.BIND,
    "The example runs a different command than its tool",
    what="The example's words resolve to another command (or another tool's command) than "
    "the `command` of the tool it belongs to.",
    why="Agents read a tool's examples as examples of that tool; one that runs another command "
    "teaches the wrong call.",
    example='the tool notes.delete with the example "notes list"',
    fix="Move the example to the tool whose command it runs, or fix its command words.",
)
NOT_RUNNABLE = _code(
    "not-runnable",
    Stage.BIND,
    "The example stops at a command group that cannot run on its own",
    what="The path ends at a group that needs a subcommand, or the command prints its help "
    "and exits when it gets no arguments (Click's no_args_is_help, an application's own "
    "shortcut) without the example asking for help. Stricter than the framework on purpose: "
    "a defect whatever the exit status (Click 8.1 exits 0 there).",
    why="The framework prints usage instead of running anything; an example that ends in the "
    "help text teaches an agent nothing.",
    example="notes tags   # `tags` needs a subcommand such as `tags list`",
    fix="Add the subcommand the example is meant to run.",
)
UNKNOWN_FLAG = _code(
    "unknown-flag",
    Stage.BIND,
    "An option is not accepted by the command at that position",
    what="The option is not declared by the command, is declared on a different level (a "
    "group option given after the subcommand, or the reverse), or is an abbreviation the "
    "parser does not allow.",
    why=f"{_AGENTS_COPY} to pass an option that makes the command fail.",
    example="notes delete --recurse 3   # the option is --recursive",
    fix="Use an option the command declares, at the level where it is declared.",
)
ARGUMENT_FILE_UNREADABLE = _code(
    "argument-file-unreadable",
    Stage.BIND,
    "An @file argument names a file that cannot be read from the project",
    what="The program's argparse parser reads arguments from files (`fromfile_prefix_chars`), "
    "and a word of the example that starts with such a character names a file that is missing, "
    "is not a regular UTF-8 file inside the project, or includes itself.",
    why="argparse fails the whole command line when it cannot read an @file; and an example "
    "whose arguments live in a file nobody has is an example no agent can run.",
    example="mypy @flags.txt src   # flags.txt is not in the repository",
    fix="Commit the file next to the configuration (paths are relative to its folder), or "
    "write its arguments into the example.",
)
MISSING_VALUE = _code(
    "missing-value",
    Stage.BIND,
    "An option that takes a value has none",
    what="An option that needs a value (or several) is the last word, or is followed by too "
    "few "
    "words the parser accepts as values.",
    why="The parser rejects the command line.",
    example="notes list --format",
    fix="Give the option its value.",
)
UNEXPECTED_VALUE = _code(
    "unexpected-value",
    Stage.BIND,
    "A flag was given a value",
    what="An option that takes no value was written as `--flag=value`, or an argparse bundle "
    "left characters the flag cannot use.",
    why="The parser rejects the command line.",
    example="notes delete 3 --dry-run=yes",
    fix="Write the flag alone, or its negation (`--no-...`) where one exists.",
)
BAD_TYPE = _code(
    "bad-type",
    Stage.BIND,
    "A value does not convert to the parameter's type or range",
    what="A value is not an integer, number, boolean, date or UUID as the parameter requires, "
    "is out of its declared range, or has the wrong number of parts.",
    why="The framework converts values before the command runs and rejects this one.",
    example="notes list --limit ten",
    fix="Give a value of the declared type; the message names it.",
)
BAD_CHOICE = _code(
    "bad-choice",
    Stage.BIND,
    "A value is not one of the parameter's choices",
    what="The parameter accepts a fixed set of values and this is not one of them.",
    why="The framework rejects the value before the command runs.",
    example="notes list --format yaml   # choices: text, json",
    fix="Use one of the listed choices.",
)
MISSING_REQUIRED = _code(
    "missing-required",
    Stage.BIND,
    "A required option or positional argument is missing",
    what="A parameter the command (or the catalog overlay) requires is absent. An option the "
    "command would prompt for when it is missing counts as required: an agent cannot answer "
    "a prompt.",
    why=f"{_AGENTS_COPY} to call the command in a way that fails or hangs at a prompt.",
    example="notes add   # TEXT is required",
    fix="Add the parameter to the example.",
)
EXTRA_POSITIONAL = _code(
    "extra-positional",
    Stage.BIND,
    "The example has more positional arguments than the command accepts",
    what="Words are left over after every positional parameter has its values.",
    why="The parser rejects unexpected extra arguments.",
    example="notes show 3 4   # `show` takes one ID",
    fix="Remove the extra words, or quote a value that contains spaces.",
)
REPEATED_OPTION = _code(
    "repeated-option",
    Stage.BIND,
    "A single-valued option is given more than once (warning)",
    what="The framework accepts the repetition and keeps the last value.",
    why="Only one of the values takes effect; the example probably does not mean what it "
    "says. This is a warning and never fails an example.",
    example="notes list --format text --format json",
    fix="Keep only the value that should take effect.",
    severity=Severity.WARNING,
)

# -- catalog rules ----------------------------------------------------------------------------
REQUIRE_ONE_OF = _code(
    "require-one-of",
    Stage.RULES,
    "None of a group of parameters of which one is required is given",
    what="A `require_one_of` constraint (or a required mutually exclusive group) lists "
    "parameters of which at least one must be given, and the example gives none.",
    why=f"{_AGENTS_COPY} to call the command without what it needs.",
    example="notes delete   # one of IDS, --tag, --all is required",
    fix="Give one of the parameters named in the message.",
)
REQUIRE_TOGETHER = _code(
    "require-together",
    Stage.RULES,
    "Only part of a group of parameters that go together is given",
    what="A `require_together` constraint lists parameters that are given all or none.",
    why="The command needs the whole group; part of it fails or misbehaves.",
    example="notes sync --user bob   # --user and --token go together",
    fix="Give every parameter of the group, or none of them.",
)
MUTUALLY_EXCLUSIVE = _code(
    "mutually-exclusive",
    Stage.RULES,
    "Parameters that exclude each other are given together",
    what="A `mutually_exclusive` constraint (or an argparse mutually exclusive group) allows "
    "at "
    "most one of its parameters, and the example gives several.",
    why="The framework rejects the combination, or the command silently ignores one of them.",
    example="notes delete 3 --all",
    fix="Keep one of the parameters.",
)
BYPASS_FLAG = _code(
    "bypass-flag",
    Stage.RULES,
    "The example skips a confirmation",
    what="The example uses a banned confirmation-bypass flag (`--yes`, `--assume-yes`, "
    "`--no-confirm`, the tool's own `safety.bypass_flags`, or any other spelling of the same "
    "parameter: a short alias, a bundle, an abbreviation).",
    why="Agents copy examples; an example with `--yes` teaches every agent to skip the "
    "confirmation a destructive command asks for.",
    example="notes delete --all --yes",
    fix="Remove the flag. If the command has a preview, show it with the dry-run flag instead.",
)
ALWAYS_PROMPTS = _code(
    "always-prompts",
    Stage.RULES,
    "The command always asks for confirmation, so no example of it can be valid",
    what="The command prompts for a confirmation unless a flag is given, and that flag is a "
    "confirmation bypass: a banned spelling (`--yes`, the tool's `safety.bypass_flags`), or a "
    "flag that exists only to answer the prompt (Click's `confirmation_option`, recorded as "
    "`confirmation` in the tree). Without the flag the example stops at a prompt; with it, "
    "it teaches agents to skip the confirmation. Reported once per example, instead of "
    "`missing-required` without the flag and `bypass-flag` with it.",
    why="No edit to the example can fix it: every spelling either hangs at a prompt an agent "
    "cannot answer or skips the confirmation a person asked for. The command itself has to "
    "offer a way to show what it would do without asking.",
    example="@click.command()\n"
    "@click.confirmation_option(prompt='Purge every note?')\n"
    "@click.option('--dry-run', is_flag=True)\n"
    "def purge(dry_run): ...\n"
    "\n"
    "notes purge             # prompts\n"
    "notes purge --yes       # skips the confirmation",
    fix="Change the command so that its preview needs no confirmation: skip the prompt when "
    "the preview flag is given (replace `confirmation_option` with a plain `--yes` flag and "
    "`if not dry_run and not yes: click.confirm(..., abort=True)` in the command), then show "
    "the preview in the example: `notes purge --dry-run`. A command with no preview needs one, "
    "or no example.",
)
DRYRUN_DISABLED = _code(
    "dryrun-disabled",
    Stage.RULES,
    "An example of a tool with a dry run turns its own preview off",
    what="The tool has a reviewed `dry_run` capability, and the example gives the negation of "
    "its dry-run flag (`--no-dry-run`, also before or after `--dry-run`), a value that turns "
    "it off (`--dry-run=false`, `--dry-run no`, `0`, `off`), or another switch that stores "
    "into the same place (`--apply` next to `--dry-run`, Click feature switches both setting "
    "`mode`).",
    why="`exampleguard dryrun` runs such an example for real instead of as a preview, and an "
    "agent that copies it runs the destructive command it was shown as safe to try.",
    example="notes delete 3 --no-dry-run",
    fix="Remove the negation: the dry run adds the preview flag itself. An example that must "
    "show the real command belongs to a tool without a dry-run capability.",
)
TOO_MANY_EXAMPLES = _code(
    "too-many-examples",
    Stage.RULES,
    "A tool has more than two examples",
    what="Each tool carries at most two worked examples; every example beyond the second is "
    "reported.",
    why="Catalogs are read by agents with limited context; two good examples teach more than many.",
    example="a tool with three entries in `examples`",
    fix="Keep the two most useful examples.",
)
DUPLICATE_EXAMPLE = _code(
    "duplicate-example",
    Stage.RULES,
    "Two examples of a tool do the same thing",
    what="Two examples bind to the same command path (through aliases and default routing) and "
    "the same arguments, however they are spelled; the later one is reported. Only examples "
    "that bound without errors are compared.",
    why="A duplicate spends an example slot without teaching anything new.",
    example="notes rm 3  and  notes delete 3",
    fix="Replace the later example with one that shows something different.",
)
MODEL_MISMATCH = _code(
    "model-mismatch",
    Stage.BIND,
    "exampleguard's model of the parser disagrees with the framework's own parser",
    what="For a live tree the framework's own parser judged the example in the child that "
    "imported the tree, and exampleguard's model of that parser reached another verdict, "
    "another command or other values. The framework's verdict stands; the warning carries "
    "both.",
    why="A disagreement is never silent: it is a gap in exampleguard's model (please report "
    "it), or the application parses in a way no snapshot can describe (a group that "
    "resolves prefixes, a type that accepts anything).",
    example="notes de 3   # the group resolves unique prefixes; the model knows only `delete`",
    fix="Nothing is required: the verdict is the real parser's. Declare the alias in the "
    "catalog if the example relies on one, so snapshots and the model know it too.",
    severity=Severity.WARNING,
)
PARSER_RAISED = _code(
    "parser-raised",
    Stage.BIND,
    "Application code raised while the framework parsed: exampleguard's model judged the example",
    what="For a live tree the framework's own parser judges every example, in the child that "
    "imported the tree. While it parsed this one, the application's own code raised "
    "something other than the framework's usage errors: a parameter type that reads state a "
    "command callback would set (Click's `ctx.obj`, or an argparse action reading what the "
    "program's `main` fills), which nothing sets when only parsing. "
    "That is not a verdict on the example (SPEC 4): exampleguard's model judged it alone, and "
    "the warning names the exception.",
    why="Counting the exception as a rejection would fail every example of the command, valid "
    "or not (celery's option types read `ctx.obj`); counting it as an acceptance would pass "
    "broken ones. The model still checks every word; the warning says the framework could not.",
    example="celery -A proj worker -l INFO   # AttributeError: 'NoneType' object has no "
    "attribute 'app'",
    fix="Nothing is required. If the model's verdict looks wrong, report it; an application "
    "can make its types tolerate a missing `ctx.obj` while parsing.",
    severity=Severity.WARNING,
)
TREE_UNSANDBOXED = _code(
    "tree-unsandboxed",
    Stage.INPUT,
    'The live tree was imported without a sandbox, as `tree_isolation = "guard"` asks',
    what='The configuration names `tree_isolation = "guard"`: the application was imported '
    "under exampleguard's import guard and the `env` backend alone, not in the sandbox.",
    why="The guard stops the natural mistakes (an import that writes a cache, starts a program "
    "or opens a socket), not a hostile module: ctypes and C extensions go around it. Every "
    "output says so, so that nobody reads the run as contained.",
    example='tree_isolation = "guard"',
    fix="Remove `tree_isolation` (the default `auto` imports in the sandbox), or commit a tree "
    "snapshot (`exampleguard tree --format json`) and point `tree` at it.",
    severity=Severity.WARNING,
)
DOC_BLOCK_WITHOUT_EXAMPLE = _code(
    "doc-block-without-example",
    Stage.SHELL,
    "A shell block of the docs names the program but none of its lines is an example",
    what="A `console` or `shell-session` block (a fence, or a reST code directive) reads only "
    "prompted lines as commands, and this one names the program on lines without a `$ `, `% ` "
    "or `>>> ` prompt: they are read as output, so nothing in the block is checked.",
    why="A session block without prompts is usually a command block in the wrong language: "
    "its commands would never be checked, and a typo in them would pass.",
    example="```console\nmycli delete --recusive notes/\n```",
    fix="Give the command lines a `$ ` prompt, or mark the block `sh` or `bash` if every line is "
    "a command.",
    severity=Severity.WARNING,
)
DOC_FILE_UNREAD = _code(
    "doc-file-unread",
    Stage.INPUT,
    "A `docs` glob names files that no documentation reader reads",
    what="A glob of the `docs` setting matches files that are neither Markdown (`.md`, "
    "`.markdown`, `.mdx`, ..., and `llms.txt`) nor reStructuredText (`.rst`): an image, a "
    "plain-text file, an AsciiDoc page. They are not read, so no example of theirs is "
    "checked. The warning is located at the glob in the configuration and names the files.",
    why="A glob that was meant to bring in the docs but brings in nothing checkable looks like "
    "coverage and is none: a typo in `guide.adoc` would pass silently.",
    example='docs = ["docs/**/*"]   # matches docs/logo.png and docs/notes.txt too',
    fix="Narrow the glob to the formats exampleguard reads (`docs/**/*.md`, "
    "`docs/**/*.rst`), or convert the page to Markdown or reStructuredText.",
    severity=Severity.WARNING,
)
EXAMPLE_TOO_LONG = _code(
    "example-too-long",
    Stage.RULES,
    "An example is longer than `max_example_chars`",
    what="The example text exceeds the configured limit (4096 characters by default) and is "
    "not analysed further.",
    why="Overlong examples are not worked examples; the limit also keeps every run linear.",
    example="an example with a 10 000-character inline JSON value",
    fix="Shorten the example, for example by reading the value from a file.",
)
CONSTRAINT_INVALID = _code(
    "constraint-invalid",
    Stage.CATALOG,
    "A constraint names a parameter the tool does not have",
    what="A `require_one_of`, `require_together` or `mutually_exclusive` group names an "
    "unknown parameter or has fewer than two members.",
    why="A constraint that cannot apply is never checked, so it silently protects nothing.",
    example='"mutually_exclusive": [["ids", "everything"]]   # no parameter `everything`',
    fix="Use the parameters' `name` values, and at least two per group.",
)

# -- catalog against the tree -----------------------------------------------------------------
DUPLICATE_TOOL = _code(
    "duplicate-tool",
    Stage.CATALOG,
    "Two tools have the same id",
    what="Tool ids identify tools to agents and reviewers; each must be unique.",
    why="Dispositions, reports and agents address tools by id; a duplicate makes that ambiguous.",
    example='two tools with "id": "notes.delete"',
    fix="Rename one of them.",
)
ALIAS_COLLISION = _code(
    "alias-collision",
    Stage.CATALOG,
    "Two tools claim the same command path or alias",
    what="A path or alias of one tool is also a path or alias of another.",
    why="An example would bind to whichever tool wins, not the one it belongs to.",
    example="notes.delete with alias [rm] and notes.remove with command [rm]",
    fix="Give each path to exactly one tool.",
)
DYNAMIC_COMMAND = _code(
    "dynamic-command",
    Stage.CATALOG,
    "A tool's command is not in the tree, under a group that may create commands at run time",
    what="With a live tree configured, the tool's `command` is not a command of the tree, and "
    "the group above it looks its commands up with code of its own (its class defines "
    "`list_commands` or `get_command`), which may create a command only for some command "
    "lines: Typer's own `typer PATH run` makes `run` inside its callback, from the file the "
    "command line names. The tree is read with no command line, so it cannot hold such a "
    "command. Each example of the tool carries this code too and fails: nothing passes "
    "unchecked.",
    why="`tool-unbound` would say the command does not exist, which is not what is known: "
    "it may exist for the command lines the examples show. The code names the situation.",
    example='"command": ["run"]   # typer main.py run: `run` exists once main.py is loaded',
    fix="Check the command by hand and point the tool at a command the tree has, or document "
    "the created command where it is defined (the catalog of the program it runs). A typo "
    "in the command path is possible too: the group's listed commands are in the tree.",
)
TOOL_UNBOUND = _code(
    "tool-unbound",
    Stage.CATALOG,
    "A tool's command path is not a runnable command of the tree",
    what="With a tree configured, the tool's `command` does not exist in the executable tree, "
    "or names a group that cannot run.",
    why="The catalog offers agents a command the program does not have. Each example of such "
    "a tool carries this code too and fails: it cannot be checked, and nothing passes "
    "unchecked.",
    example='"command": ["remove"] but the program only has `delete`',
    fix="Point the tool at the command's current path, or remove the tool.",
)
OVERLAY_DRIFT = _code(
    "overlay-drift",
    Stage.CATALOG,
    "The catalog disagrees with the executable command tree",
    what="A catalog parameter names a flag or positional the command does not have, disagrees "
    "with its type, choices or arity, weakens a requirement the executable declares, a "
    "catalog alias is not routed by the program, or the catalog's dialect differs from the "
    "tree's.",
    why="With a tree configured the catalog may only add descriptions, requirements and "
    "constraints; anything else describes a program that does not exist.",
    example='{"name": "recurse", "flags": ["--recurse"]}  # the command has --recursive',
    fix="Make the overlay match the executable, or change the program.",
)
DRYRUN_FLAG_UNKNOWN = _code(
    "dryrun-flag-unknown",
    Stage.CATALOG,
    "A tool's dry-run flag is not a flag its command accepts",
    what="`dry_run.flag` must be an option of the command that takes no value, or an option "
    "that takes one given with its value attached (`--dry-run=true`).",
    why="The dry run would insert a flag the command rejects, or one that consumes the next "
    "word as its value.",
    example='"dry_run": {"flag": "--dryrun", ...}  # the command has --dry-run',
    fix="Use the preview flag the command declares, or `null` for a command that is itself a "
    "preview.",
)
UNCOVERED_COMMAND = _code(
    "uncovered-command",
    Stage.CATALOG,
    "A runnable command of the tree has no tool and no exclusion",
    what="With a tree configured, every public runnable leaf must be the `command` of a tool "
    "or "
    "be excluded by an exact, reasoned record in `dispositions/exclusions.toml`.",
    why="A command that silently has no tool is a gap in what agents are told.",
    example="the program gained `notes export`, the catalog did not",
    fix="Add a tool for the command, or exclude it with "
    "`exampleguard dispositions exclude export --reason ...`.",
)

TOOL_WITHOUT_EXAMPLES = _code(
    "tool-without-examples",
    Stage.CATALOG,
    "A tool has no examples (warning)",
    what="The tool's `examples` list is empty or absent: nothing of it is checked beyond its "
    "binding to the command.",
    why="Agents learn a command from its worked examples; a tool without any is offered with "
    "nothing to copy, and a run that checks no example of it would otherwise look as green as "
    "one that checks them all. Every tool `init` writes starts without examples. This is a "
    "warning and never fails the run: a tool may have zero examples.",
    example='{"id": "notes.export", "command": ["export"], "examples": []}',
    fix="Add one or two examples that show the command's typical use, then run "
    "`exampleguard counts --write`.",
    severity=Severity.WARNING,
)

# -- reviewer records -------------------------------------------------------------------------
EXCLUSION_INVALID = _code(
    "exclusion-invalid",
    Stage.REVIEW,
    "A coverage exclusion is not acceptable",
    what="The exclusion has no concrete reason, contains wildcard characters, or names "
    "something that is not a runnable leaf (a group, or a prefix).",
    why="Exclusions are exact, reviewed decisions; a vague or wildcard one hides commands "
    "nobody looked at.",
    example='[[exclusion]]\npath = ["debug", "*"]\nreason = "n/a"',
    fix="Name one runnable leaf exactly and say concretely why agents are not offered it.",
)
EXCLUSION_STALE = _code(
    "exclusion-stale",
    Stage.REVIEW,
    "A coverage exclusion no longer applies",
    what="The excluded path no longer exists in the tree, or a tool now covers it.",
    why="A stale record is a decision about a command that changed; keeping it would let the "
    "next command at that path through unreviewed.",
    example="an exclusion for `notes export` after a tool for `export` was added",
    fix="Delete the exclusion.",
)
EXCLUSION_DUPLICATE = _code(
    "exclusion-duplicate",
    Stage.REVIEW,
    "Two coverage exclusions name the same path",
    what="Each path is excluded at most once.",
    why="Two records for one decision drift apart; one of them is always out of date.",
    example="two [[exclusion]] records with path = ['debug', 'dump-state']",
    fix="Delete one of them.",
)
DISPOSITION_INVALID = _code(
    "disposition-invalid",
    Stage.REVIEW,
    "A disposition is not acceptable",
    what="The disposition names an unknown tool or a tool without a reviewed dry-run "
    "capability, uses a reason code that is not approved, has an empty or placeholder reason "
    "(`n/a`, `todo`, the code repeated), or lacks its recorded command text.",
    why="Dispositions are reviewed decisions that narrow what is executed; an unreasoned one "
    "is "
    "an unreviewed skip.",
    example='reason_code = "needs-network"\nreason = "todo"',
    fix="Name a tool with a dry-run capability, an approved reason code, and a concrete reason.",
)
DISPOSITION_STALE = _code(
    "disposition-stale",
    Stage.REVIEW,
    "A disposition no longer matches its example",
    what="The example at the disposition's index no longer has the text recorded in its "
    "`command`, or the index no longer exists.",
    why="The reviewer decided about a different example; the new one has not been reviewed.",
    example="the disposition recorded `notes rm --tag draft` but example 1 is now `notes rm 4`",
    fix="Review the current example: run it, or write a new disposition for it with "
    "`exampleguard dispositions add`, and delete the stale one.",
)
SAFETY_DRIFT = _code(
    "safety-drift",
    Stage.CATALOG,
    "A tool's safety metadata disagrees with its command's confirmation gate",
    what="With a tree configured, a tool's `safety` is checked against the command: "
    '`confirmation` is `"none"` or absent although the command asks for confirmation (a '
    'Click `confirmation_option`, a prompted yes/no flag); it is `"required"` although '
    "the command shows no gate and has no bypass flag (and no reviewed record in "
    "`dispositions/gates.toml` says where the gate is); `bypass_flags` names a flag the "
    "command does not have; or the flag that answers the command's confirmation is not among "
    "the banned bypass flags (the tool's and the configuration's).",
    why="Agents decide from `safety` whether to ask their user first. A command that prompts "
    "while its metadata says it does not hangs an agent on the prompt; one that never asks "
    'while its metadata says "required" teaches agents that "required" means nothing; a '
    "bypass ban on a flag that does not exist protects nothing while the real bypass goes "
    "unbanned.",
    example='"safety": {"confirmation": "none"} on `notes purge`, which has --yes from '
    "click.confirmation_option",
    fix='Say what the command does: `"confirmation": "required"` and list the flag that '
    "answers the prompt in `bypass_flags`; remove flags the command does not have. A gate "
    "that lives in application code (`click.confirm` in the body) is recorded with its "
    "evidence in `dispositions/gates.toml`.",
)
GATE_INVALID = _code(
    "gate-invalid",
    Stage.REVIEW,
    "A gate record names no tool, or says nothing concrete",
    what="A `[[gate]]` record of `dispositions/gates.toml` names a tool the catalog does not "
    "have, gives a placeholder reason, or there is no tree to check it against.",
    why="A gate record silences a safety check; one that points nowhere or says nothing "
    "cannot have been reviewed.",
    example='[[gate]] tool = "notes.purg"   # the tool is notes.purge',
    fix="Name the tool's exact id, say in a sentence where the command asks, and list the "
    "evidence (a file and line, an issue).",
)
GATE_STALE = _code(
    "gate-stale",
    Stage.REVIEW,
    "A gate record silences nothing",
    what='The tool\'s `confirmation` is no longer `"required"`, or its command now shows a '
    "gate or a bypass flag the tree can see, so the record is not needed.",
    why="A record that silences nothing would silently silence a future, unreviewed case.",
    example='[[gate]] tool = "notes.purge"   # but purge now has a confirmation_option',
    fix="Delete the record.",
)
GATE_DUPLICATE = _code(
    "gate-duplicate",
    Stage.REVIEW,
    "Two gate records name the same tool",
    what="More than one `[[gate]]` record names one tool.",
    why="One reviewed decision per tool: two can disagree, and editing one leaves the other.",
    example='two [[gate]] records with tool = "notes.purge"',
    fix="Keep one record per tool.",
)
DOC_EXCEPTION_STALE = _code(
    "doc-exception-stale",
    Stage.REVIEW,
    "A doc exception no longer matches any documentation example",
    what="No command example of the file named by a `[[doc_exception]]` record in "
    "`dispositions/doc-exceptions.toml` has exactly the recorded `command` text any more: the "
    "example was edited or removed, or the file is no longer one of the `docs` files.",
    why="The reviewer excepted one exact text; an edited example has not been reviewed, so it is "
    "checked again, and the record left behind would silently except a future example.",
    example="the record excepts `notes rm --yes 4` in README.md but the line now reads "
    "`notes rm --force 4`",
    fix="Fix the example if it is meant to work; if it is still wrong on purpose, review the "
    "new text and record it; delete the stale record.",
)
DOC_EXCEPTION_DUPLICATE = _code(
    "doc-exception-duplicate",
    Stage.REVIEW,
    "Two doc exceptions name the same file and command",
    what="Each exact command text of a documentation file is excepted at most once.",
    why="Two records for one decision drift apart; one of them is always out of date.",
    example="two [[doc_exception]] records with file = 'README.md' and the same command",
    fix="Delete one of them.",
)
DOC_EXAMPLE_EXCEPTED = _code(
    "doc-example-excepted",
    Stage.REVIEW,
    "A documentation example is excepted by a reviewed record",
    what="The example is wrong on purpose (the docs show what not to do) and an exact "
    "`[[doc_exception]]` record says so with a reason; it is reported, not checked.",
    why="An exception is a visible, reviewed decision, never a silent skip: every run lists it "
    "with its reason so that reviewers see what is not checked.",
    example="README.md:42: excepted (counter-example): shows the removed --yes flag on purpose",
    fix="Nothing, while the example is meant to be wrong. Delete the record once the example "
    "should be checked.",
    severity=Severity.WARNING,
)
DISPOSITION_DUPLICATE = _code(
    "disposition-duplicate",
    Stage.REVIEW,
    "Two dispositions address the same example",
    what="Each example has at most one disposition.",
    why="Two records for one decision drift apart; one of them is always out of date.",
    example="two [[disposition]] records for notes.delete example 1",
    fix="Delete one of them.",
)

# -- counts -----------------------------------------------------------------------------------
COUNTS_MISSING = _code(
    "counts-missing",
    Stage.COUNTS,
    "The committed counts file is missing",
    what="The file named by `counts` does not exist.",
    why="The counts make changes in how much is checked and executed visible in review; "
    "without the file nothing is compared.",
    example="a new repository without exampleguard-counts.json",
    fix="Run `exampleguard counts --write` and commit the file.",
)
COUNTS_DRIFT = _code(
    "counts-drift",
    Stage.COUNTS,
    "How much is checked or executed changed",
    what="A figure in the committed counts file differs from this run's (old and new values in "
    "the message).",
    why="Fewer examples validated or dry-run is a contract change that must be reviewed, not "
    "slip through.",
    example="dry_run_narrowed: 1 -> 2",
    fix="If the change is intended, run `exampleguard counts --write` and commit the file.",
)

# -- dry runs ---------------------------------------------------------------------------------
DRYRUN_FAILED = _code(
    "dryrun-failed",
    Stage.DRYRUN,
    "An eligible example failed its dry run",
    what="The example ran through the real command in the sandbox and exited with an "
    "unexpected code, crashed, or could not be started.",
    why="A failed dry run is a failure, never downgraded to a contract-only pass.",
    example="notes delete 3 --dry-run   # exits 2: no such note",
    fix="Fix the example or the command; the report has the exit code and output.",
)
DRYRUN_TIMEOUT = _code(
    "dryrun-timeout",
    Stage.DRYRUN,
    "An eligible example did not finish its dry run in time",
    what="The run exceeded `[tool.exampleguard.dryrun] timeout` and was killed with everything "
    "it started.",
    why="A preview that hangs is a failure (often it waits for input or the network).",
    example="a preview that waits on a prompt",
    fix="Make the preview non-interactive and offline, or raise the timeout.",
)
RETIRED: dict[str, str] = {
    "schema-mismatch": "an example's arguments against its tool's strict argument schema; "
    "the binder's agreement with the schemas is a differential test since 0.1.0",
}
"""Codes no longer produced, and what they were: a name here is never registered again."""

CODES: dict[str, Code] = {entry.name: entry for entry in _REGISTERED}
"""Every registered code, by name, in documentation order."""


def lookup(name: str) -> Code:
    """Return the registered code ``name``; raise ``KeyError`` for an unregistered one."""
    return CODES[name]


def _check_registry() -> None:
    # Duplicate or malformed names are programming errors; catching them at import keeps the
    # registry honest without a separate build step.
    if len(CODES) != len(_REGISTERED):
        raise AssertionError("duplicate code in the registry")
    for entry in _REGISTERED:
        if not _CODE_FORMAT.match(entry.name):
            raise AssertionError(f"malformed code name: {entry.name!r}")
        if globals().get(entry.name.upper().replace("-", "_")) is not entry:
            raise AssertionError(f"{entry.name!r} is not registered under its constant name")
        if entry.name in RETIRED:
            raise AssertionError(f"{entry.name!r} is a retired code: names are never reused")


_check_registry()
