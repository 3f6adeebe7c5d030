"""One test per diagnostic code that ``validate`` produces from a catalog, through the real CLI.

Each row of :data:`CASES` plants one defect (or one thing that must *not* be a defect) in a tool
of its own, and states what a user sees in ``exampleguard validate --format json``: the code,
the tool and example it is reported on, the part of the example its span covers, the message and
the hint. Rows are grouped into a few projects (one per dialect or setting), each built once with
:func:`make_project` and validated once: a row only looks at its own tool's diagnostics, and every
row asserts the exact set of codes its example gets, so one row's defect can never hide another's.

:func:`test_every_code_has_a_test` keeps the table complete against the registry.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from exampleguard._codes import CODES
from tests.support.project import make_project, run_cli

HERE = Path(__file__).resolve()
TESTS = HERE.parents[1]

# Parameters of a catalog-only command (no tree: the catalog is the truth).
PARAMETERS: list[dict[str, Any]] = [
    {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
    {"name": "tag", "flags": ["--tag", "-t"], "multiple": True},
    {"name": "all", "flags": ["--all"], "type": "boolean"},
    {"name": "recursive", "flags": ["--recursive", "-r"], "type": "boolean"},
    {"name": "quiet", "flags": ["-q", "--quiet"], "type": "boolean"},
    {"name": "yes", "flags": ["-y", "--yes"], "type": "boolean"},
    {
        "name": "confirm",
        "flags": ["--confirm"],
        "negation_flags": ["--no-confirm"],
        "type": "boolean",
    },
    {"name": "format", "flags": ["--format"], "choices": ["text", "json"]},
    {"name": "limit", "flags": ["--limit"], "type": "integer"},
    {"name": "message", "flags": ["--message", "-m"]},
    {"name": "since", "flags": ["--since"]},
    {"name": "until", "flags": ["--until"]},
]
TEXT_PARAMETERS: list[dict[str, Any]] = [
    {"name": "text", "positional": True},
    {"name": "priority", "flags": ["--priority"], "type": "integer"},
]
WORDS_PARAMETERS: list[dict[str, Any]] = [
    {"name": "words", "positional": True, "nargs": -1},
    {"name": "yes", "flags": ["-y", "--yes"], "type": "boolean"},
    {"name": "message", "flags": ["--message", "-m"]},
]


def tool(
    name: str,
    *examples: str,
    parameters: Sequence[Mapping[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A catalog tool ``notes.NAME`` on the command ``notes NAME``."""
    return {
        "id": f"notes.{name}",
        "command": fields.pop("command", [name]),
        "parameters": list(PARAMETERS if parameters is None else parameters),
        **fields,
        "examples": [{"command": command} for command in examples],
    }


@dataclass(frozen=True)
class Expect:
    """One diagnostic a user must see.

    ``example`` is the example index (``None`` for a tool- or repository-level diagnostic);
    ``span`` is the text of the example the span must cover (``None``: no span expected);
    ``message``/``hint`` are substrings; ``related`` the texts the related spans cover.
    """

    code: str
    tool: str | None
    example: int | None = 0
    span: str | None = None
    occurrence: int = 0
    message: str | None = None
    hint: str | None = None
    related: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """A table row: the tools it adds to its group's project and what validate must say."""

    id: str
    group: str
    tools: tuple[dict[str, Any], ...]
    expect: tuple[Expect, ...]
    exact: bool = True
    """Whether each example of these tools gets exactly the expected codes (and no others)."""


CASES: tuple[Case, ...] = (
    # -- shell ------------------------------------------------------------------------------------
    Case(
        "parse-error",
        "catalog",
        (tool("perr", "notes perr 'unclosed"),),
        (Expect("parse-error", "notes.perr", span="'unclosed", message="unbalanced quote"),),
    ),
    Case(
        "shell-construct",
        "catalog",
        (tool("pipe", "notes pipe 3 | cat"),),
        (Expect("shell-construct", "notes.pipe", span="|", message="pipe"),),
    ),
    Case(
        "shell-comment",
        "catalog",
        (tool("comment", "notes comment 3 # urgent"),),
        (Expect("shell-comment", "notes.comment", span="# urgent"),),
    ),
    Case(
        "shell-expansion is a warning",
        "clean",
        (tool("glob", "notes glob --tag *.md", parameters=WORDS_PARAMETERS + PARAMETERS[1:2]),),
        (Expect("shell-expansion", "notes.glob", span="*", message="glob"),),
    ),
    # -- program and path -----------------------------------------------------------------------
    Case(
        "wrong-program",
        "catalog",
        (tool("wprog", "note wprog 3"),),
        (Expect("wrong-program", "notes.wprog", span="note", message="'note'", hint="notes"),),
    ),
    Case(
        "wrong-command",
        "catalog",
        (tool("wcmd", "notes wcmd-other 3"), tool("wcmd-other")),
        (
            Expect(
                "wrong-command",
                "notes.wcmd",
                message="the command of notes.wcmd-other",
            ),
        ),
    ),
    Case(
        "unknown-command with did-you-mean",
        "catalog",
        (tool("delete", "notes delte 3", aliases=[["rm"]]),),
        (
            Expect(
                "unknown-command",
                "notes.delete",
                span="delte",
                message="'delte' is not a command of 'notes'",
                hint="Did you mean 'delete'?",
            ),
        ),
    ),
    Case(
        "not-runnable",
        "catalog",
        (tool("rename", "notes tags", command=["tags", "rename"]),),
        (Expect("not-runnable", "notes.rename", message="'notes tags' needs a subcommand"),),
        # The example also runs another command than its tool's (wrong-command).
        exact=False,
    ),
    Case(
        "tool-without-examples is a warning",
        "clean",
        (tool("bare"),),
        (
            Expect(
                "tool-without-examples",
                "notes.bare",
                example=None,
                message="no examples: agents get no worked example of 'notes bare'",
                hint="Add one or two examples",
            ),
        ),
    ),
    # -- binding --------------------------------------------------------------------------------
    Case(
        "unknown-flag with did-you-mean",
        "catalog",
        (tool("uflag", "notes uflag 3 --recurse"),),
        (
            Expect(
                "unknown-flag",
                "notes.uflag",
                span="--recurse",
                message="--recurse is not an option of 'notes uflag'",
                hint="Did you mean --recursive?",
            ),
        ),
    ),
    Case(
        "unknown-flag, short",
        "catalog",
        (tool("ushort", "notes ushort 3 -z"),),
        (Expect("unknown-flag", "notes.ushort", span="-z", message="-z is not an option"),),
    ),
    Case(
        "missing-value",
        "catalog",
        (tool("mval", "notes mval 3 --tag"),),
        (Expect("missing-value", "notes.mval", span="--tag", message="--tag"),),
    ),
    Case(
        "unexpected-value",
        "catalog",
        (tool("uval", "notes uval 3 --all=yes"),),
        (Expect("unexpected-value", "notes.uval", span="--all=yes", message="--all"),),
    ),
    Case(
        "bad-type",
        "catalog",
        (tool("btype", "notes btype 3 --limit ten"),),
        (Expect("bad-type", "notes.btype", span="ten", message="'ten' is not a valid integer"),),
    ),
    Case(
        "bad-type in a positional",
        "catalog",
        (tool("btypepos", "notes btypepos 3 four"),),
        (Expect("bad-type", "notes.btypepos", span="four", message="'four'"),),
    ),
    Case(
        "bad-choice",
        "catalog",
        (tool("bchoice", "notes bchoice 3 --format yaml"),),
        (
            Expect(
                "bad-choice",
                "notes.bchoice",
                span="yaml",
                message="'yaml' is not one of",
                hint="text, json",
            ),
        ),
    ),
    Case(
        "missing-required positional",
        "catalog",
        (tool("mreqpos", "notes mreqpos --priority 2", parameters=TEXT_PARAMETERS),),
        (Expect("missing-required", "notes.mreqpos", message="TEXT"),),
    ),
    Case(
        "missing-required option",
        "catalog",
        (
            tool(
                "mreqopt",
                "notes mreqopt hello",
                parameters=[
                    TEXT_PARAMETERS[0],
                    {**TEXT_PARAMETERS[1], "required": True},
                ],
            ),
        ),
        (Expect("missing-required", "notes.mreqopt", message="--priority"),),
    ),
    Case(
        "missing-required: a Click prompt option",
        "tree",
        (tool("greet", "notes greet --limit 3", parameters=[]),),
        (
            Expect(
                "missing-required",
                "notes.greet",
                message="--name is missing, so the command would prompt for it",
            ),
        ),
    ),
    Case(
        "missing-required: a catalog overlay requirement",
        "tree",
        (
            tool(
                "export",
                "notes export --dry-run",
                parameters=[{"name": "out", "flags": ["--out"], "required": True}],
            ),
        ),
        (Expect("missing-required", "notes.export", message="the catalog requires --out"),),
    ),
    Case(
        "extra-positional",
        "catalog",
        (tool("extra", "notes extra hello world", parameters=TEXT_PARAMETERS),),
        (Expect("extra-positional", "notes.extra", span="world", message="'world'"),),
    ),
    Case(
        "repeated-option is a warning",
        "clean",
        (tool("rep", "notes rep 3 --format json --format text"),),
        (
            Expect(
                "repeated-option",
                "notes.rep",
                span="--format",
                occurrence=1,
                message="--format is given more than once",
                related=("--format",),
            ),
        ),
    ),
    # -- rules ----------------------------------------------------------------------------------
    Case(
        "require-one-of",
        "catalog",
        (
            tool(
                "roneof",
                "notes roneof --quiet",
                constraints={"require_one_of": [["ids", "tag", "all"]]},
            ),
        ),
        (Expect("require-one-of", "notes.roneof", message="one of IDS, --tag, --all"),),
    ),
    Case(
        "require-together",
        "catalog",
        (
            tool(
                "rtog",
                "notes rtog 3 --since monday",
                constraints={"require_together": [["since", "until"]]},
            ),
        ),
        (
            Expect(
                "require-together",
                "notes.rtog",
                span="--since",
                message="--since must be given together with --until",
            ),
        ),
    ),
    Case(
        "mutually-exclusive points at both flags",
        "catalog",
        (
            tool(
                "mexcl",
                "notes mexcl --tag draft --all",
                constraints={"mutually_exclusive": [["tag", "all"]]},
            ),
        ),
        (
            Expect(
                "mutually-exclusive",
                "notes.mexcl",
                span="--all",
                message="--all cannot be combined with --tag",
                related=("--tag",),
            ),
        ),
    ),
    Case(
        "always-prompts: a prompted --yes (banned) is the only way past the prompt",
        "catalog",
        (
            tool(
                "aprompt",
                "notes aprompt",
                "notes aprompt --yes",
                parameters=[{"name": "yes", "flags": ["--yes"], "type": "boolean", "prompt": True}],
            ),
        ),
        (
            Expect("always-prompts", "notes.aprompt", 0, message="always asks for confirmation"),
            Expect("always-prompts", "notes.aprompt", 1, span="--yes", hint="Change the command"),
        ),
    ),
    Case(
        "dryrun-disabled: the negation of the preview flag",
        "catalog",
        (
            tool(
                "dnoprev",
                "notes dnoprev 3 --no-preview",
                parameters=[
                    *PARAMETERS,
                    {
                        "name": "preview",
                        "flags": ["--preview"],
                        "negation_flags": ["--no-preview"],
                        "type": "boolean",
                    },
                ],
                dry_run={"flag": "--preview", "reviewed": True, "evidence": "notes: --preview"},
            ),
        ),
        (
            Expect(
                "dryrun-disabled",
                "notes.dnoprev",
                span="--no-preview",
                message="--no-preview is the negation of the preview flag --preview",
            ),
        ),
    ),
    Case(
        "dryrun-flag-unknown: a value attached to a flag that takes none",
        "catalog",
        (
            tool(
                "dflagval",
                dry_run={"flag": "--all=true", "reviewed": True, "evidence": "notes: --all"},
            ),
        ),
        (
            Expect(
                "dryrun-flag-unknown",
                "notes.dflagval",
                None,
                message="the dry-run flag --all takes no value, but --all=true gives one",
            ),
        ),
    ),
    Case(
        "dryrun-flag-unknown: a preview option that takes a value, given bare",
        "catalog",
        (
            tool(
                "dflagbare",
                dry_run={"flag": "--limit", "reviewed": True, "evidence": "notes: --limit"},
            ),
        ),
        (Expect("dryrun-flag-unknown", "notes.dflagbare", None, message="(--limit=VALUE)"),),
    ),
    Case(
        "bypass-flag --yes",
        "catalog",
        (tool("byes", "notes byes 3 --yes"),),
        (Expect("bypass-flag", "notes.byes", span="--yes", message="--yes skips"),),
    ),
    Case(
        "bypass-flag -y, declared as -y/--yes",
        "catalog",
        (tool("bshort", "notes bshort 3 -y"),),
        (Expect("bypass-flag", "notes.bshort", span="-y", message="-y means --yes"),),
    ),
    Case(
        "bypass-flag in a bundle -qy",
        "catalog",
        (tool("bbundle", "notes bbundle 3 -qy"),),
        (Expect("bypass-flag", "notes.bbundle", span="y", message="-y means --yes"),),
    ),
    Case(
        "bypass-flag: the banned negation --no-confirm",
        "catalog",
        (tool("bnoconf", "notes bnoconf 3 --no-confirm"),),
        (Expect("bypass-flag", "notes.bnoconf", span="--no-confirm"),),
    ),
    Case(
        "bypass-flag from the tool's own safety.bypass_flags",
        "catalog",
        (
            tool(
                "bforce",
                "notes bforce 3 -f",
                parameters=[
                    *PARAMETERS,
                    {"name": "force", "flags": ["--force", "-f"], "type": "boolean"},
                ],
                safety={"effect": "destructive", "bypass_flags": ["--force"]},
            ),
        ),
        (Expect("bypass-flag", "notes.bforce", span="-f", message="-f means --force"),),
    ),
    Case(
        "bypass-flag the command does not accept is also unknown-flag",
        "catalog",
        (tool("bunknown", "notes bunknown 3 --assume-yes"),),
        (
            # Worded for a command that does not declare it: it skips no confirmation here.
            Expect(
                "bypass-flag",
                "notes.bunknown",
                span="--assume-yes",
                message="--assume-yes is a confirmation bypass, banned in every example by the "
                "configuration's bypass_flags; 'notes bunknown' does not declare it",
            ),
            Expect("unknown-flag", "notes.bunknown", span="--assume-yes"),
        ),
    ),
    Case(
        "bypass-flag of the tool's safety that the command does not declare",
        "catalog",
        (
            tool(
                "bsafety",
                "notes bsafety 3 --force",
                safety={"effect": "destructive", "bypass_flags": ["--force"]},
            ),
        ),
        (
            Expect(
                "bypass-flag",
                "notes.bsafety",
                span="--force",
                message="banned in every example by the tool's safety.bypass_flags; "
                "'notes bsafety' does not declare it",
            ),
            Expect("unknown-flag", "notes.bsafety", span="--force"),
        ),
    ),
    Case(
        "bypass-flag: an argparse abbreviation --ye",
        "argparse",
        (tool("babbrev", "notes babbrev 3 --ye"),),
        (Expect("bypass-flag", "notes.babbrev", span="--ye", message="--yes skips"),),
    ),
    Case(
        "bypass-flag given a value --yes=1",
        "catalog",
        (tool("bvalue", "notes bvalue 3 --yes=1"),),
        (
            Expect("bypass-flag", "notes.bvalue", span="--yes"),
            Expect("unexpected-value", "notes.bvalue", span="--yes=1"),
        ),
    ),
    Case(
        "bypass-flag -y in argparse",
        "argparse",
        (tool("bshortargparse", "notes bshortargparse 3 -y"),),
        (Expect("bypass-flag", "notes.bshortargparse", span="-y"),),
    ),
    Case(
        "not a bypass: the negation --confirm of a banned --no-confirm",
        "clean",
        (tool("nconfirm", "notes nconfirm 3 --confirm"),),
        (),
    ),
    Case(
        "not a bypass: a banned word as another option's value",
        "clean",
        (tool("nvalue", "notes nvalue x --message --yes", parameters=WORDS_PARAMETERS),),
        (),
    ),
    Case(
        "not a bypass: a banned word after --",
        "clean",
        (tool("nsep", "notes nsep x -- --yes", parameters=WORDS_PARAMETERS),),
        (),
    ),
    Case(
        "too-many-examples on every example beyond the second",
        "catalog",
        (
            tool(
                "many",
                "notes many 1",
                "notes many 2",
                "notes many 3",
                "notes many 4",
            ),
        ),
        (
            Expect("too-many-examples", "notes.many", 2, message="at most 2"),
            Expect("too-many-examples", "notes.many", 3, message="at most 2"),
        ),
    ),
    Case(
        "duplicate-example through an alias",
        "catalog",
        (tool("dupa", "notes dupa 3", "notes dupa-alias 3", aliases=[["dupa-alias"]]),),
        (
            Expect(
                "duplicate-example",
                "notes.dupa",
                1,
                message="the example does the same as notes.dupa[0] ('notes dupa 3')",
            ),
        ),
    ),
    Case(
        "duplicate-example spelled differently",
        "catalog",
        (tool("dupb", "notes dupb --tag=a", "notes dupb --tag a"),),
        (Expect("duplicate-example", "notes.dupb", 1, message="notes.dupb[0]"),),
    ),
    Case(
        "duplicate-example through default-command routing",
        "default-group",
        (
            {
                "id": "notes.view.show",
                "command": ["view", "show"],
                "examples": [{"command": "notes view"}, {"command": "notes view show"}],
            },
        ),
        (Expect("duplicate-example", "notes.view.show", 1, message="notes.view.show[0]"),),
    ),
    Case(
        "not a duplicate: different values",
        "clean",
        (tool("dupc", "notes dupc --tag=a", "notes dupc --tag b"),),
        (),
    ),
    Case(
        "example-too-long",
        "catalog",
        (tool("long", "notes long " + " ".join(["7"] * 60)),),
        (Expect("example-too-long", "notes.long", message="the limit is 100"),),
    ),
    # -- catalog-level ----------------------------------------------------------------------------
    Case(
        "duplicate-tool",
        "tree",
        (
            {"id": "notes.twin", "command": ["twin-a"]},
            {"id": "notes.twin", "command": ["twin-b"]},
        ),
        (Expect("duplicate-tool", "notes.twin", None, message="notes.twin"),),
    ),
    Case(
        "alias-collision",
        "catalog",
        (
            tool("collide", aliases=[["shared"]]),
            tool("shared"),
        ),
        (Expect("alias-collision", "notes.shared", None, message="shared"),),
    ),
    Case(
        "tool-unbound",
        "tree",
        ({"id": "notes.ghost", "command": ["ghost"]},),
        (Expect("tool-unbound", "notes.ghost", None, message="ghost"),),
    ),
    Case(
        "overlay-drift",
        "tree",
        (
            {
                "id": "notes.drift",
                "command": ["drift"],
                "parameters": [{"name": "bogus", "flags": ["--bogus"]}],
            },
        ),
        (Expect("overlay-drift", "notes.drift", None, message="--bogus"),),
    ),
    Case(
        "dryrun-flag-unknown",
        "tree",
        (
            {
                "id": "notes.dry",
                "command": ["dry"],
                "dry_run": {"flag": "--preview", "reviewed": True, "evidence": "dry.py: preview"},
            },
        ),
        (Expect("dryrun-flag-unknown", "notes.dry", None, message="--preview"),),
    ),
    Case(
        "constraint-invalid",
        "tree",
        (
            {
                "id": "notes.constr",
                "command": ["constr"],
                "constraints": {"require_one_of": [["nothere"]]},
            },
        ),
        (Expect("constraint-invalid", "notes.constr", None, message="nothere"),),
    ),
    Case(
        "uncovered-command",
        "tree",
        (),
        (Expect("uncovered-command", None, None, message="'notes orphan'"),),
    ),
    # -- counts ---------------------------------------------------------------------------------
    Case(
        "counts-missing",
        "counts-missing",
        (tool("counted", "notes counted 3"),),
        (
            Expect(
                "counts-missing",
                None,
                None,
                message="exampleguard-counts.json does not exist",
                hint="exampleguard counts --write",
            ),
        ),
    ),
    Case(
        "counts-drift shows old -> new",
        "counts-drift",
        (tool("drifted", "notes drifted 3", "notes drifted 4"),),
        (Expect("counts-drift", None, None, message="examples: 1 -> 2"),),
    ),
)

# Codes produced elsewhere than from a catalog's tools and examples, and the kind of test that
# triggers each. Every one must appear in some other test file (checked below).
PRODUCED_ELSEWHERE = {
    # could not evaluate (exit 2): malformed files, configuration, imports, executables
    "config-invalid": "configuration",
    "file-unreadable": "input files",
    "file-invalid": "input files",
    "tree-unavailable": "tree import",
    "tree-unsandboxed": "tree import (test_live_tree_containment)",
    "doc-block-without-example": "a docs block read as output (test_docs_examples)",
    "doc-file-unread": "a docs glob matching files no reader reads (test_doc_file_unread)",
    "safety-drift": "safety against a real command (test_safety)",
    "gate-invalid": "gate records (test_safety)",
    "gate-stale": "gate records (test_safety)",
    "gate-duplicate": "gate records (test_safety)",
    "executable-missing": "dry run",
    "isolation-unavailable": "dry run / sandbox",
    # dry runs
    "dryrun-failed": "dry run",
    "dryrun-timeout": "dry run",
    # reviewer records
    "exclusion-invalid": "review",
    "exclusion-stale": "review",
    "exclusion-duplicate": "review",
    "disposition-invalid": "review",
    "disposition-stale": "review",
    "disposition-duplicate": "review",
    # reviewed exceptions for documentation examples (test_doc_exceptions.py)
    "doc-example-excepted": "review",
    "doc-exception-stale": "review",
    "doc-exception-duplicate": "review",
    # the real parser and the model disagree: live trees with dynamic routing (test_verdict.py)
    "model-mismatch": "live tree",
    # argparse programs: @file arguments and argv rewriting (test_argparse_settings.py)
    "argument-file-unreadable": "an @file read from the project",
    "argv-rewritten": "the configuration's argv_rewrite",
    # application code raised while the framework parsed (tests/differential/test_field_celery.py)
    "parser-raised": "live tree",
    # a group that creates commands at run time (tests/differential/test_field_typer.py)
    "dynamic-command": "live tree",
}

# The Click application of the "tree" project: a prompt, an overlay target and the commands the
# catalog-level rows bind to (``orphan`` has no tool on purpose).
PROMPT_APP = textwrap.dedent(
    """
    import click


    @click.group()
    def cli():
        "Manage notes."


    @cli.command()
    @click.option("--name", prompt=True)
    @click.option("--limit", type=int)
    def greet(name, limit):
        "Greet."


    @cli.command()
    @click.option("--out")
    @click.option("--dry-run", is_flag=True)
    def export(out, dry_run):
        "Export."


    for name in ["twin-a", "twin-b", "drift", "dry", "constr", "orphan"]:
        cli.command(name)(lambda: None)
    """
)

GROUPS: dict[str, dict[str, Any]] = {
    "catalog": {"dialect": "click", "settings": {"max_example_chars": 100}},
    "argparse": {"dialect": "argparse"},
    "clean": {"dialect": "click"},
    "tree": {"dialect": None, "tree": "click:promptapp:cli"},
    # click_app's `view` is a click-default-group routing to `show`.
    "default-group": {"dialect": None, "tree": "click:click_app:cli"},
    "counts-missing": {"dialect": "click", "counts": False},
    "counts-drift": {"dialect": "click"},
}
EXIT_CODES = {"clean": 0}


@dataclass
class Projects:
    """Builds each group's project once, on first use, and keeps its validate result."""

    factory: pytest.TempPathFactory
    results: dict[str, tuple[int, dict[str, Any], Path]] = field(default_factory=dict)

    def result(self, group: str) -> tuple[int, dict[str, Any], Path]:
        if group not in self.results:
            self.results[group] = self._build(group)
        return self.results[group]

    def _build(self, group: str) -> tuple[int, dict[str, Any], Path]:
        spec = GROUPS[group]
        root = self.factory.mktemp(group.replace("-", "_"))
        tools = [t for case in CASES if case.group == group for t in case.tools]
        if group == "tree":
            # Every leaf but `orphan` has a tool, so uncovered-command is about orphan alone.
            (root / "promptapp.py").write_text(PROMPT_APP, encoding="utf-8")
        if group == "counts-drift":
            # Counts recorded for one example, then the catalog gains a second one.
            make_project(root, [tool("drifted", "notes drifted 3")], dialect="click")
        make_project(
            root,
            tools,
            dialect=spec["dialect"],
            tree=spec.get("tree"),
            settings=spec.get("settings"),
            counts=spec.get("counts", True) and group != "counts-drift",
        )
        result = run_cli(["validate", "--format", "json"], cwd=root)
        assert result.stdout, result.stderr
        return result.returncode, json.loads(result.stdout), root


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Projects:
    return Projects(tmp_path_factory)


def _span_of(command: str, text: str, occurrence: int) -> tuple[int, int]:
    starts = [m.start() for m in re.finditer(re.escape(text), command)]
    assert len(starts) > occurrence, f"{text!r} occurs {len(starts)} times in {command!r}"
    return starts[occurrence], starts[occurrence] + len(text)


def _command_of(report: dict[str, Any], tool_id: str, index: int) -> str:
    for example in report["examples"]:
        if example["tool"] == tool_id and example["index"] == index:
            return str(example["command"])
    raise AssertionError(f"{tool_id}[{index}] is not in the report")


def _matches(diagnostic: dict[str, Any], expect: Expect) -> bool:
    return bool(
        diagnostic["code"] == expect.code
        and diagnostic["tool"] == expect.tool
        and diagnostic["example"] == expect.example
    )


def check_expect(report: dict[str, Any], expect: Expect) -> None:
    found = [d for d in report["diagnostics"] if _matches(d, expect)]
    mine = [d for d in report["diagnostics"] if d["tool"] == expect.tool]
    where = f"{expect.tool}[{expect.example}]" if expect.example is not None else expect.tool
    own = [(d["code"], d["example"], d["message"]) for d in mine]
    assert found, f"no {expect.code} on {where}; {expect.tool} got {own}"
    diagnostic = found[0]
    assert diagnostic["severity"] == CODES[expect.code].severity.value
    if expect.message is not None:
        assert expect.message in diagnostic["message"], diagnostic
    if expect.hint is not None:
        assert diagnostic["hint"] is not None, diagnostic
        assert expect.hint in diagnostic["hint"], diagnostic
    if expect.example is not None:
        assert diagnostic["file"] == "catalog.json"
        key = f"tools[{{}}].examples[{expect.example}].command"
        assert re.fullmatch(re.escape(key).replace(r"\{\}", r"\d+"), diagnostic["location"]["key"])
        assert diagnostic["location"]["line"] >= 1
        assert diagnostic["location"]["column"] >= 1
        command = _command_of(report, expect.tool or "", expect.example)
        if expect.span is None:
            assert diagnostic["span"] is None, diagnostic
        else:
            start, end = _span_of(command, expect.span, expect.occurrence)
            assert diagnostic["span"] == {"start": start, "end": end}, (command, diagnostic)
        related = [r["span"] for r in diagnostic["related"] if r.get("span")]
        wanted = [
            dict(zip(("start", "end"), _span_of(command, text, 0), strict=True))
            for text in expect.related
        ]
        assert related == wanted, (command, diagnostic)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_code(projects: Projects, case: Case) -> None:
    returncode, report, _ = projects.result(case.group)
    assert returncode == EXIT_CODES.get(case.group, 1), report["diagnostics"]
    for expect in case.expect:
        check_expect(report, expect)
    if not case.exact:
        return
    for planted in case.tools:
        for index in range(len(planted.get("examples", []))):
            entry = next(
                e for e in report["examples"] if e["tool"] == planted["id"] and e["index"] == index
            )
            wanted = {e.code for e in case.expect if e.tool == planted["id"] and e.example == index}
            got = {d["code"] for d in entry["diagnostics"]}
            assert got == wanted, (entry["command"], entry["diagnostics"])
            errors = {c for c in wanted if CODES[c].severity.value == "error"}
            assert entry["ok"] is not errors, entry
        # Tool-level diagnostics of this row: exactly the expected ones.
        tool_level = {
            d["code"]
            for d in report["diagnostics"]
            if d["tool"] == planted["id"] and d["example"] is None
        }
        # A tool without examples always gets its warning (tool-without-examples), whatever
        # the row is about: the row asserts it with the rest.
        bare = set() if planted.get("examples") else {"tool-without-examples"}
        assert tool_level == bare | {
            e.code for e in case.expect if e.tool == planted["id"] and e.example is None
        }


def test_warnings_and_non_bypasses_pass(projects: Projects) -> None:
    returncode, report, _ = projects.result("clean")
    assert returncode == 0, report["diagnostics"]
    assert report["ok"] is True
    assert all(example["ok"] for example in report["examples"])
    assert {d["severity"] for d in report["diagnostics"]} == {"warning"}
    assert {d["code"] for d in report["diagnostics"]} == {
        "shell-expansion",
        "repeated-option",
        "tool-without-examples",
    }


def test_every_code_has_a_test() -> None:
    """Every registered code is exercised: here from a catalog, or in its own test file."""
    covered = {expect.code for case in CASES for expect in case.expect}
    registered = set(CODES)
    assert set(PRODUCED_ELSEWHERE) <= registered, set(PRODUCED_ELSEWHERE) - registered
    missing = registered - covered - set(PRODUCED_ELSEWHERE)
    assert not missing, f"codes a catalog can produce without a row in CASES: {sorted(missing)}"
    overlap = covered & set(PRODUCED_ELSEWHERE)
    assert not overlap, f"listed as produced elsewhere but tested here: {sorted(overlap)}"
    sources = {
        path: path.read_text(encoding="utf-8")
        for path in TESTS.rglob("*.py")
        if path != HERE and "fixtures" not in path.parts
    }
    untested = sorted(
        code
        for code in PRODUCED_ELSEWHERE
        if not any(f'"{code}"' in text or f"'{code}'" in text for text in sources.values())
    )
    assert not untested, f"codes with no test anywhere under tests/: {untested}"
