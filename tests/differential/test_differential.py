"""Differential tests: the binder's verdict and values equal the real parser's, argv for argv.

For each application — the Click, Typer and argparse fixture apps, two small apps where the
framework's versions differ (``required=True, default=None``; ``-ft=pre-push``; an empty
``nargs='*'`` positional with choices), and real third-party CLIs — ``sqlite-utils`` (Click,
with click-default-group's group), ``fastapi`` (Typer) and ``isort`` (argparse) — the command
tree is extracted in-process, bound to a catalog of one bare tool per runnable command, and
hypothesis generates command lines from that tree: valid ones (a
real path spelled by name or alias, options at their level with valid values in every spelling,
bundles, required positionals) and mutations of them (unknown flags, misspelled commands, missing
values, wrong types, bad choices, booleans given a value, extra or missing positionals, options at
the wrong level, exclusive options together, ``--``, values that start with ``-``, abbreviations,
negative numbers, unicode digits, empty strings, eager options). For every one, exampleguard's
parsing verdict — no binder problem other than the ``repeated-option`` warning — must equal the
framework's own (``click_parse``: Click's ``make_context`` through the command chain;
``argparse_parse``: ``parse_args`` with ``error()`` raising). Where both accept and the parse ran
to its end, the values must agree too: Click's ``ctx.params`` of every level, or argparse's
namespace, against exampleguard's argument object, by the mapping rules of
``tests/support/bound_values.py``.

For an application that routes and converts dynamically (``dynamic_app``: the alias recipe,
a rewriting ``resolve_command``, lazy commands, a Choice subclass that accepts anything), the
model cannot know everything; there the final verdict — the real-parser check's — and the
argument object built from it must equal Click's own parse, and every disagreement of the model
must be flagged (``model-mismatch``), never silent.

The comparison is proven to have teeth: a binder that ignores one class of problem is caught.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import string
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import argparse_app
import click_app
import isort.main
import pytest
import sqlite_utils.cli
import typer_app
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from exampleguard._adapters.argparser import extract_argparse
from exampleguard._adapters.clickfamily import as_click_command, extract_click
from exampleguard._adapters.judge_argparse import ArgparseJudge
from exampleguard._adapters.judge_click import ClickJudge
from exampleguard._adapters.verdict import ParseVerdict
from exampleguard._bind import Binding, Memo, Problem, bind
from exampleguard._catalog import Catalog
from exampleguard._catalogfile import LoadedCatalog
from exampleguard._contract import Contract, EffectiveTool
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._model import Parameter
from exampleguard._rules import arguments_of
from exampleguard._snapshot import Tree, TreeCommand
from exampleguard._verdicts import compare, real_arguments
from tests.support.bound_values import (
    argparse_actions,
    argparse_differences,
    as_argument,
    click_differences,
    same,
)
from tests.support.frameworks import Parsed, argparse_parse, click_parse

# Typer's completion flags install or print shell completion for real when parsed: never generated.
TYPER_COMPLETION_FLAGS = frozenset({"--install-completion", "--show-completion"})

STRINGS = ("x", "note", "draft", "a b", "é", "1", "Text", "json", "origin", "sh", "q")
BAD_VALUES = (
    "x",
    "",
    " ",
    " 5 ",
    "1.5",
    "5.0",
    "1e3",
    "٣",  # ARABIC-INDIC DIGIT THREE: int() accepts it, pydantic does not
    "\uff15",  # FULLWIDTH DIGIT FIVE
    "²",  # a digit for str.isdigit(), not for int()
    "1_0",
    "0x1f",
    "inf",
    "nan",
    "-1",
    "-0",
    "+3",
    "-5",
    "-.5",
    "-x",
    "--",
    "-",
    "--x",
    "TEXT",
    "Json",
    "true",
    "Yes",
    "maybe",
    "2024-13-01",
    "2024-02-29",
    "12345678-1234-5678-1234-567812345678",
    "not-a-uuid",
    "a=b",
    "=",
    "11",
    "0",
)
UNKNOWN_FLAGS = ("--bogus", "-z", "--nope=1", "-Z", "+z", "--x-y", "---", "-=")
DASH_VALUES = ("-x", "-5", "--x", "-", "-1", "--", "-0.5", "-1e3", "-v")
NEGATIVE_NUMBERS = ("-1", "-5", "-0.5", "-.5", "-1e3", "-12")
EAGER_WORDS = ("--help", "-h", "--version")
BOOLEAN_WORDS = ("true", "false", "1", "0", "yes", "no", "on", "off", "t", "f", "y", "n", "TRUE")
EXTRA_WORDS = ("extra", "3", "x y", "rm", "tags", "-", "é")


def _bare_catalog(tree: Tree) -> LoadedCatalog:
    """One tool per runnable command, declaring nothing: the tree decides everything."""
    tools = [
        {"id": f"tool{index}", "command": command.path}
        for index, command in enumerate(tree.commands)
        if command.runnable
    ]
    catalog = Catalog.model_validate(
        {"format": "exampleguard.catalog/v1", "program": tree.program, "tools": tools}
    )
    return LoadedCatalog(catalog, Document(Path("catalog.json"), "catalog.json", "{}", {}, "json"))


Differences = Callable[[Binding, Parsed], list[str]]


@dataclass
class App:
    """One application under test: its tree, contract, real parser and generation pools.

    ``parse`` is the framework's own parse of an argv; ``differences`` compares what it handed
    the program with exampleguard's argument object for the same argv.
    """

    name: str
    program: str
    tree: Tree
    parse: Callable[[Sequence[str]], Parsed]
    differences: Differences
    judge: Callable[[Sequence[str]], ParseVerdict] | None = None
    """exampleguard's own real-parser check (the child's judge), compared too when given."""
    excluded_flags: frozenset[str] = frozenset()
    excluded_commands: frozenset[tuple[str, ...]] = frozenset()
    bad_values: tuple[str, ...] = BAD_VALUES
    mutations: tuple[Callable[..., list[Word]], ...] = ()
    contract: Contract = field(init=False)
    memo: Memo = field(init=False, default_factory=Memo)
    commands: list[TreeCommand] = field(init=False)
    options: list[tuple[TreeCommand, Parameter]] = field(init=False)
    command_words: list[str] = field(init=False)
    short_chars: str = field(init=False)

    def __post_init__(self) -> None:
        self.contract = build_contract(_bare_catalog(self.tree), self.tree)
        self.commands = [
            c for c in self.tree.commands if tuple(c.path) not in self.excluded_commands
        ]
        self.options = [
            (command, parameter)
            for command in self.commands
            for parameter in option_parameters(self, command)
        ]
        words = {w for c in self.commands for w in c.path}
        words.update(alias[-1] for c in self.commands for alias in c.aliases)
        # Without subcommands, a stray word stands in for a command word.
        self.command_words = sorted(words) or list(EXTRA_WORDS)
        self.short_chars = "".join(
            sorted({f[1] for _, p in self.options for f in p.all_flags if is_short(f)})
        )

    def accepts(self, argv: Sequence[str]) -> bool:
        """The framework's verdict on ``argv``."""
        return self.parse(argv).accepted


def option_parameters(app: App, command: TreeCommand) -> list[Parameter]:
    """The options of ``command`` the generator may give (never eager, never excluded ones)."""
    return [
        p
        for p in command.parameters
        if not p.positional and not p.eager and not set(p.all_flags) & app.excluded_flags
    ]


def is_short(flag: str) -> bool:
    """``-y``, ``+f``, ``-1``: one prefix character and one more character."""
    return len(flag) == 2 and flag[0] != flag[1]


def is_long(flag: str) -> bool:
    """``--tag``, ``++force``, ``-depth``: what may carry ``=value``."""
    return len(flag) > 2


def from_os(argv: Sequence[str]) -> list[str]:
    """The argv as a program's ``sys.argv`` holds it: each word freshly decoded from bytes.

    It matters for argparse, which tells a value from its default by identity (``is``): a word
    decoded from the command line is never the parser's own default object, except where
    CPython shares objects (the empty string, one-character strings from decoding, and the
    small integers conversions produce). Literal strings of this test module would be
    interned together with the application's defaults and hide the difference.
    """
    return [os.fsdecode(os.fsencode(word)) for word in argv]


def tool_of(binding: Binding) -> EffectiveTool:
    """The bare catalog tool of the command an accepted argv resolved to."""
    assert binding.node is not None
    assert binding.node.tool is not None
    return binding.node.tool


def click_values(binding: Binding, parsed: Parsed) -> list[str]:
    """Click's ``ctx.params`` against the argument object."""
    return click_differences(tool_of(binding), binding, parsed.levels)


def argparse_app_under_test(
    name: str = "argparse", parser: argparse.ArgumentParser | None = None
) -> App:
    """An argparse app (the fixture by default), its namespace compared action by action."""
    parser = parser or argparse_app.build_parser()
    tree = Tree.model_validate(extract_argparse(parser, "notes"))
    actions = argparse_actions(parser, ((c.path, c.parameters) for c in tree.commands))

    def values(binding: Binding, parsed: Parsed) -> list[str]:
        tool = tool_of(binding)
        levels = [tree.command(tool.path[:depth]) for depth in range(len(tool.path) + 1)]
        parameters = [level.parameters for level in levels if level is not None]
        return argparse_differences(tool, binding, parsed.levels[0], actions, parameters)

    judge = ArgparseJudge(parser).judge
    return App(
        name,
        "notes",
        tree,
        lambda argv: argparse_parse(parser, from_os(argv)),
        values,
        judge=lambda argv: judge(from_os(argv)),
    )


def click_app_under_test(name: str, command: Any, values: Differences | None = None) -> App:
    """A Click command (``notes``), its ``ctx.params`` compared with the argument object."""
    return App(
        name,
        "notes",
        Tree.model_validate(extract_click(command, "notes")),
        lambda argv: click_parse(command, from_os(argv)),
        values or click_values,
        judge=ClickJudge(command, "notes").judge,
    )


def accumulating_parser() -> argparse.ArgumentParser:
    """Actions whose namespace value builds on a default, or wraps one value in a list."""
    parser = argparse.ArgumentParser(prog="notes")
    parser.add_argument("-v", "--verbose", action="count", default=2)
    parser.add_argument("--tag", action="append", default=["base"])
    parser.add_argument("--also", action="extend", nargs="+", default=["x"])
    parser.add_argument("--one", nargs=1, type=int)
    parser.add_argument("--ones", action="append", nargs=1)
    parser.add_argument("--pair", action="append", nargs=2, type=float)
    parser.add_argument("--fast", action="store_const", const="fast", dest="speed")
    parser.add_argument("--slow", action="store_const", const="slow", dest="speed")
    parser.add_argument("--mark", action="append_const", const=1)
    parser.add_argument("name", nargs="?", default="anon")
    return parser


def versioned_parser() -> argparse.ArgumentParser:
    """Where argparse's versions differ: `=` in a bundle, an empty nargs='*' with choices."""
    parser = argparse.ArgumentParser(prog="notes")
    parser.add_argument("-f", "--force", action="store_true")
    parser.add_argument("-t", "--hook-type", choices=["pre-push", "commit"])
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("kinds", nargs="*", choices=["a", "b"])
    return parser


def shared_parents_parser() -> argparse.ArgumentParser:
    """A group and its subcommand sharing option objects through ``parents=`` (as pipx does)."""
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("-q", "--quiet", action="count", default=0)
    shared.add_argument("--skip", action="store_true")
    parser = argparse.ArgumentParser(prog="notes")
    group = parser.add_subparsers(dest="command").add_parser("group", parents=[shared])
    group.add_subparsers(dest="sub").add_parser("leaf", parents=[shared])
    return parser


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("group", "-q", "-q", "leaf", "-q"), {("group", "leaf", "quiet"): 1}),
        (("group", "-q", "leaf"), {}),
        (("group", "--skip", "leaf"), {}),
        (("group", "leaf", "--skip"), {("group", "leaf", "skip"): True}),
    ],
    ids=["counted per parser", "overwritten count", "overwritten switch", "leaf switch"],
)
def test_the_check_gives_a_shared_option_what_the_program_receives(
    argv: tuple[str, ...], expected: dict[tuple[str, ...], object]
) -> None:
    # The subcommand parses into a namespace of its own, defaults included, and argparse copies
    # it over the group's: a value given at the group level never reaches the program, and one
    # option object counts its occurrences per parser.
    namespace = vars(shared_parents_parser().parse_args(list(argv)))
    verdict = ArgparseJudge(shared_parents_parser()).judge(list(argv))
    assert verdict.accepted
    given = {(*value.level, value.name): value.value for value in verdict.given}
    assert given == expected
    assert {"quiet": namespace["quiet"], "skip": namespace["skip"]} == {
        "quiet": expected.get(("group", "leaf", "quiet"), 0),
        "skip": expected.get(("group", "leaf", "skip"), False),
    }


def versioned_click() -> Any:
    """Where Click's versions differ: required=True with default=None, an empty boolean."""
    import click

    @click.command()
    @click.option("--name", required=True, default=None)
    @click.option("--flag", type=bool)
    @click.option("-f", "--force", is_flag=True)
    @click.option("-t", "--hook-type", type=click.Choice(["pre-push", "commit"]))
    def command(**_: Any) -> None:
        """A command whose verdicts differ between Click 8.1, 8.2 and 8.3."""

    return command


def unexposed_click() -> Any:
    """Options kept out of the command's parameters, handled by their callbacks (Flask's --app)."""
    import click

    def remember(context: Any, parameter: Any, value: Any) -> Any:
        context.meta[parameter.name] = value
        return value

    @click.group()
    @click.option("-A", "--app", expose_value=False, callback=remember)
    @click.option("-e", "--env-file", expose_value=False)
    @click.option("-v", "--verbose", is_flag=True, expose_value=False, callback=remember)
    def group() -> None:
        """A group whose options reach the program through callbacks."""

    @group.command()
    @click.option("--port", type=int)
    @click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=remember)
    def serve(**_: Any) -> None:
        """A command of the group."""

    return group


def same_value_switches() -> Any:
    """Feature switches of which two store the same value (mkdocs's --dirty and --dirtyreload)."""
    import click

    @click.command()
    @click.option("--dirtyreload", "build", flag_value="dirty")
    @click.option("-d", "--dirty", "build", flag_value="dirty")
    @click.option("-c", "--clean", "build", flag_value="clean")
    @click.option("-q", "--quiet", is_flag=True)
    @click.argument("names", nargs=-1)
    def command(**_: Any) -> None:
        """A command with a build switch spelled three ways."""

    return command


def stored_value_click() -> Any:
    """Switches that store a boolean other than "not their default" (mkdocs's --livereload)."""
    import click

    @click.command()
    @click.option("--no-reload", "reload", flag_value=False)
    @click.option("--reload", "reload", flag_value=True, default=True)
    @click.option("-x", "--no-cache", "cache", is_flag=True, flag_value=False, default=True)
    @click.option("-q", "--quiet", is_flag=True)
    def command(**_: Any) -> None:
        """A command whose switches store what they say, not the opposite of a default."""

    return command


def stored_value_parser() -> argparse.ArgumentParser:
    """store_const of False and store_true over a default of True, next to plain switches."""
    parser = argparse.ArgumentParser(prog="notes")
    parser.add_argument("--no-color", dest="color", action="store_const", const=False)
    parser.add_argument("--strict", action="store_true", default=True)
    parser.add_argument("-k", "--keep", action="store_false")
    parser.add_argument("-q", "--quiet", action="store_true")
    return parser


@cache
def fixture_app(name: str) -> App:
    """The fixture application ``name``: click, typer or argparse."""
    if name == "click":
        return click_app_under_test("click", click_app.cli)
    if name == "typer":
        command = as_click_command(typer_app.app)
        return App(
            "typer",
            "notes",
            Tree.model_validate(extract_click(command, "notes")),
            lambda argv: click_parse(command, from_os(argv)),
            click_values,
            judge=ClickJudge(command, "notes").judge,
            excluded_flags=TYPER_COMPLETION_FLAGS,
        )
    if name == "accumulating":
        return argparse_app_under_test(name, accumulating_parser())
    if name == "versioned-argparse":
        return argparse_app_under_test(name, versioned_parser())
    if name == "versioned-click":
        command = versioned_click()
        return click_app_under_test(name, command)
    assert name == "argparse"
    return argparse_app_under_test()


# -- generation -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Word:
    """A generated word and what the generator meant it to be."""

    text: str
    kind: str  # command, option, value, positional, separator, noise
    parameter: Parameter | None = None


Draw = st.DrawFn


@cache
def ints(low: int, high: int) -> st.SearchStrategy[int]:
    """``st.integers`` built once per range (building strategies dominates generation time)."""
    return st.integers(low, high)


T = TypeVar("T")


def choose(draw: Draw, options: Sequence[T]) -> T:
    """One of ``options`` (drawn as an index, which needs no new strategy)."""
    return options[draw(ints(0, len(options) - 1))]


BOOLEANS = st.booleans()
SHORT_TEXT = st.one_of(
    st.sampled_from(STRINGS),
    st.text(string.ascii_letters + string.digits + "_é ", min_size=1, max_size=6),
)


def value_for(draw: Draw, app: App, parameter: Parameter, position: int) -> str:
    """A value the parameter's type and choices accept (most of the time: ranges are kept)."""
    if parameter.choices:
        choice = str(choose(draw, parameter.choices))
        if not parameter.case_sensitive and draw(BOOLEANS):
            choice = choice.upper()
        return choice
    kind = parameter.value_type(position)
    if kind == "integer":
        low = -20 if parameter.min is None else int(parameter.min) + int(parameter.min_open)
        high = 120 if parameter.max is None else int(parameter.max) - int(parameter.max_open)
        return str(draw(ints(low, max(low, high))))
    if kind == "number":
        bottom = -20.0 if parameter.min is None else float(parameter.min)
        top = 120.0 if parameter.max is None else float(parameter.max)
        number = draw(
            st.floats(
                bottom,
                top,
                exclude_min=parameter.min_open,
                exclude_max=parameter.max_open,
                allow_nan=False,
            )
        )
        return choose(draw, [repr(number), f"{number:g}", str(round(number))])
    if kind == "boolean":
        return choose(draw, BOOLEAN_WORDS)
    if kind == "datetime":
        pattern = (parameter.formats or ["%Y-%m-%d"])[0]
        return draw(st.dates()).strftime(pattern)
    if kind == "uuid":
        return str(draw(st.uuids()))
    return draw(SHORT_TEXT)


def option_chunk(draw: Draw, app: App, parameter: Parameter) -> list[Word]:
    """One occurrence of an option, in one of its spellings."""
    flags = [f for f in parameter.flags if f not in app.excluded_flags]
    if parameter.is_flag:
        flag = choose(draw, flags + parameter.negation_flags)
        if parameter.count:
            times = draw(ints(1, 3))
            if is_short(flag) and draw(BOOLEANS):
                return [Word(flag + flag[1] * (times - 1), "option", parameter)]
            return [Word(flag, "option", parameter)] * times
        return [Word(flag, "option", parameter)]
    flag = choose(draw, flags)
    nargs = parameter.values_per_occurrence
    if nargs == "?":
        count = draw(ints(0, 1))
    elif nargs == "+":
        count = draw(ints(1, 3))
    elif nargs in ("*", "...", -1):
        count = draw(ints(0, 3))
    else:
        assert isinstance(nargs, int)
        count = nargs
    values = [value_for(draw, app, parameter, i) for i in range(count)]
    if count == 1 and draw(BOOLEANS):
        if is_long(flag):
            return [Word(f"{flag}={values[0]}", "option", parameter)]
        return [Word(flag + values[0], "option", parameter)]
    return [Word(flag, "option", parameter), *(Word(v, "value", parameter) for v in values)]


def option_chunks(draw: Draw, app: App, command: TreeCommand, *, leaf: bool) -> list[list[Word]]:
    """Some options of one level: required ones nearly always, others now and then."""
    chunks: list[list[Word]] = []
    for parameter in option_parameters(app, command):
        wanted = parameter.required is True and leaf
        if draw(ints(0, 9)) < (9 if wanted else 2):
            times = draw(ints(1, 2)) if parameter.multiple else 1
            chunks.extend(option_chunk(draw, app, parameter) for _ in range(times))
    shorts = [
        (f, p)
        for p in option_parameters(app, command)
        for f in p.all_flags
        if is_short(f) and f[0] == "-"
    ]
    if len(shorts) >= 2 and draw(ints(0, 4)) == 0:
        # A bundle of short options; a value-taking one ends it, with its value attached or next.
        picked = [choose(draw, shorts) for _ in range(draw(ints(2, 3)))]
        text = "-" + "".join(f[1] for f, _ in picked)
        last = picked[-1][1]
        bundle = [Word(text, "option", last)]
        if not last.is_flag and last.values_per_occurrence == 1:
            value = value_for(draw, app, last, 0)
            how = draw(ints(0, 2))
            if how == 0:
                bundle = [Word(text + value, "option", last)]
            elif how == 1:
                # `-ft=pre-push`: a separator on CPython 3.13, part of the value before it.
                bundle = [Word(f"{text}={value}", "option", last)]
            else:
                bundle.append(Word(value, "value", last))
        chunks.append(bundle)
    return chunks


def positional_words(draw: Draw, app: App, command: TreeCommand) -> list[Word]:
    """Values for the command's positionals, by nargs and required state."""
    words: list[Word] = []
    for parameter in command.parameters:
        if not parameter.positional:
            continue
        nargs = parameter.values_per_occurrence
        if nargs in (-1, "*", "..."):
            count = draw(ints(0, 3))
        elif nargs == "+":
            count = draw(ints(1, 3))
        elif nargs == "?":
            count = draw(ints(0, 1))
        else:
            assert isinstance(nargs, int)
            count = nargs if parameter.is_required or draw(BOOLEANS) else 0
        words.extend(
            Word(
                value_for(draw, app, parameter, i % max(1, nargs if isinstance(nargs, int) else 1)),
                "positional",
                parameter,
            )
            for i in range(count)
        )
    return words


def interleave(draw: Draw, base: list[Word], chunks: list[list[Word]]) -> list[Word]:
    """Insert each chunk at a random place among ``base`` (never inside another chunk)."""
    pieces: list[list[Word]] = [[word] for word in base]
    for chunk in chunks:
        pieces.insert(draw(ints(0, len(pieces))), chunk)
    return [word for piece in pieces for word in piece]


def command_word(draw: Draw, command: TreeCommand) -> str:
    """The last word of the command's path: its name or one of its aliases."""
    names = [command.path[-1], *(alias[-1] for alias in command.aliases)]
    return choose(draw, names)


@st.composite
def valid_argvs(draw: Draw, app: App) -> tuple[list[Word], TreeCommand]:
    """A command line built from the tree: a real path, options at their levels, positionals."""
    command: TreeCommand = choose(draw, app.commands)
    words: list[Word] = []
    for depth in range(len(command.path) + 1):
        level = app.tree.command(command.path[:depth])
        assert level is not None
        if depth < len(command.path):
            for chunk in option_chunks(draw, app, level, leaf=False):
                words.extend(chunk)
            child = app.tree.command(command.path[: depth + 1])
            assert child is not None
            if level.default_command == child.path[-1] and draw(ints(0, 3)) == 0:
                continue  # a default-command group routes there without the word
            words.append(Word(command_word(draw, child), "command"))
        else:
            chunks = option_chunks(draw, app, level, leaf=True)
            if command.settings.allow_interspersed_args or app.tree.dialect == "argparse":
                words.extend(interleave(draw, positional_words(draw, app, level), chunks))
            else:
                for chunk in chunks:
                    words.extend(chunk)
                words.extend(positional_words(draw, app, level))
    return words, command


# -- mutations ------------------------------------------------------------------------------------


def _insert(draw: Draw, words: list[Word], new: list[Word]) -> list[Word]:
    at = draw(ints(0, len(words)))
    return [*words[:at], *new, *words[at:]]


def _indices(words: list[Word], *kinds: str) -> list[int]:
    return [i for i, w in enumerate(words) if w.kind in kinds]


def _replace(
    draw: Draw, words: list[Word], kinds: tuple[str, ...], texts: Sequence[str]
) -> list[Word]:
    candidates = _indices(words, *kinds)
    text = choose(draw, texts)
    if not candidates:
        return _insert(draw, words, [Word(text, "noise")])
    at = choose(draw, candidates)
    return [*words[:at], Word(text, "noise"), *words[at + 1 :]]


def typo(draw: Draw, word: str) -> str:
    """A misspelling of ``word``: a letter dropped, doubled or swapped, a suffix, upper case."""
    how = choose(draw, ["drop", "double", "swap", "suffix", "upper"])
    at = draw(ints(0, max(0, len(word) - 1)))
    if how == "drop" and len(word) > 1:
        return word[:at] + word[at + 1 :]
    if how == "double":
        return word[: at + 1] + word[at:]
    if how == "swap" and len(word) > 2:
        at = min(at, len(word) - 2)
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if how == "upper":
        return word.upper()
    return word + "s"


def m_unknown_flag(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    return _insert(draw, words, [Word(choose(draw, UNKNOWN_FLAGS), "noise")])


def m_misspelled_command(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    candidates = _indices(words, "command")
    if not candidates:
        return _insert(draw, words, [Word(choose(draw, app.command_words), "noise")])
    at = choose(draw, candidates)
    other = choose(draw, app.command_words)
    text = choose(draw, [typo(draw, words[at].text), other])
    return [*words[:at], Word(text, "noise"), *words[at + 1 :]]


def m_drop_word(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    if not words:
        return words
    at = draw(ints(0, len(words) - 1))
    return [*words[:at], *words[at + 1 :]]


def m_drop_value(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    candidates = _indices(words, "value", "positional")
    if not candidates:
        return m_drop_word(draw, app, words, leaf)
    at = choose(draw, candidates)
    return [*words[:at], *words[at + 1 :]]


def m_bad_value(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    return _replace(draw, words, ("value", "positional"), app.bad_values)


def m_bad_attached_value(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    options = [i for i in _indices(words, "option") if "=" in words[i].text]
    if not options:
        return m_bad_value(draw, app, words, leaf)
    at = choose(draw, options)
    head = words[at].text.split("=", 1)[0]
    bad = choose(draw, app.bad_values)
    return [*words[:at], Word(f"{head}={bad}", "noise"), *words[at + 1 :]]


def m_flag_with_value(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    flags = [
        flag
        for command, parameter in app.options
        if parameter.is_flag and (command is leaf or draw(BOOLEANS))
        for flag in parameter.all_flags
        if is_long(flag)
    ]
    if not flags:
        return m_unknown_flag(draw, app, words, leaf)
    flag = choose(draw, flags)
    value = choose(draw, ["x", "1", "", "true", "no"])
    return _insert(draw, words, [Word(f"{flag}={value}", "noise")])


def m_extra_positional(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    return _insert(draw, words, [Word(choose(draw, EXTRA_WORDS), "noise")])


def m_wrong_level(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    if not app.options:
        return words
    _, parameter = choose(draw, app.options)
    return _insert(draw, words, option_chunk(draw, app, parameter))


def m_same_level_again(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    """Exclusive options together (all members of a framework group), or an option again."""
    groups = leaf.constraints.mutually_exclusive
    by_name = {p.name: p for p in option_parameters(app, leaf)}
    if len(groups) > 0 and draw(BOOLEANS):
        group = choose(draw, groups)
        for name in group:
            if name in by_name:
                words = _insert(draw, words, option_chunk(draw, app, by_name[name]))
        return words
    options = option_parameters(app, leaf)
    if not options:
        return words
    return _insert(draw, words, option_chunk(draw, app, choose(draw, options)))


def m_bundle(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    if not app.short_chars:
        return words
    letters = draw(st.text(app.short_chars + "z", min_size=2, max_size=3))
    return _insert(draw, words, [Word("-" + letters, "noise")])


def m_separator(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    return _insert(draw, words, [Word("--", "separator")])


def m_dash_value(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    return _replace(draw, words, ("value", "positional"), DASH_VALUES)


def m_abbreviate(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    longs = [
        i
        for i in _indices(words, "option")
        if words[i].text[:2] in ("--", "++") and len(words[i].text) > 4
    ]
    if not longs:
        return words
    at = choose(draw, longs)
    head, sep, tail = words[at].text.partition("=")
    cut = draw(ints(3, len(head) - 1))
    return [*words[:at], Word(head[:cut] + sep + tail, "noise"), *words[at + 1 :]]


def m_negative_number(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    return _insert(draw, words, [Word(choose(draw, NEGATIVE_NUMBERS), "noise")])


def m_duplicate(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    if not words:
        return words
    return _insert(draw, words, [choose(draw, words)])


def m_swap(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    if len(words) < 2:
        return words
    at = draw(ints(0, len(words) - 2))
    return [*words[:at], words[at + 1], words[at], *words[at + 2 :]]


def m_eager(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    return _insert(draw, words, [Word(choose(draw, EAGER_WORDS), "noise")])


def m_empty(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    if draw(BOOLEANS):
        return _insert(draw, words, [Word("", "noise")])
    return _replace(draw, words, ("value", "positional"), [""])


def m_soup(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    """A few words from anywhere: any level's option strings (bare or with a value), command
    words, values good and bad."""
    for _ in range(draw(ints(1, 3))):
        source = draw(ints(0, 3))
        if source == 0 and app.options:
            _, parameter = choose(draw, app.options)
            text = choose(draw, parameter.all_flags)
            if draw(BOOLEANS):
                text += "=" + choose(draw, app.bad_values)
        elif source == 1:
            text = choose(draw, app.command_words)
        else:
            text = choose(draw, app.bad_values)
        words = _insert(draw, words, [Word(text, "noise")])
    return words


MUTATIONS = (
    m_unknown_flag,
    m_misspelled_command,
    m_drop_word,
    m_drop_value,
    m_bad_value,
    m_bad_attached_value,
    m_flag_with_value,
    m_extra_positional,
    m_wrong_level,
    m_same_level_again,
    m_bundle,
    m_separator,
    m_dash_value,
    m_abbreviate,
    m_negative_number,
    m_duplicate,
    m_swap,
    m_eager,
    m_empty,
    m_soup,
)


@st.composite
def argvs(draw: Draw, app: App) -> list[str]:
    """A valid command line from the tree, with zero to three mutations applied."""
    words, leaf = draw(valid_argvs(app))
    for _ in range(choose(draw, [0, 0, 1, 1, 1, 2, 2, 3])):
        mutate = choose(draw, app.mutations or MUTATIONS)
        words = mutate(draw, app, words, leaf)
    argv = [word.text for word in words]
    # Belt and braces: whatever a mutation did, an excluded flag is never parsed.
    return [w for w in argv if w.split("=", 1)[0] not in app.excluded_flags]


# -- the comparison -------------------------------------------------------------------------------


def exampleguard_problems(binding: Binding) -> list[Problem]:
    """The binder's problems that count for the parsing verdict (warnings aside)."""
    return [p for p in binding.problems if p.code != "repeated-option"]


Verdict = Callable[[Binding], list[Problem]]

ACCEPTED, REJECTED, COMPARED = "accepted", "rejected", "values compared"
JUDGED = "judged by the real-parser check"


def disagreement(
    app: App,
    argv: Sequence[str],
    problems_of: Verdict = exampleguard_problems,
    tally: Counter[str] | None = None,
) -> tuple[bool, str | None]:
    """The framework's verdict, and a message with the argv if exampleguard disagrees.

    Disagreeing is a different verdict or, where both accept and the parse ran to its end,
    different values. ``tally`` counts the verdicts and the value comparisons made.
    """
    parsed = app.parse(argv)
    framework = parsed.accepted
    binding = bind(app.contract, [app.program, *argv], app.memo)
    problems = problems_of(binding)
    ours = not problems
    if tally is not None:
        tally[ACCEPTED if framework else REJECTED] += 1
    if framework != ours:
        said = [f"{p.code}: {p.message}" for p in problems]
        return framework, (
            f"verdicts differ for {app.program} {list(argv)!r}: the {app.name} parser "
            f"{'accepts' if framework else 'rejects'} it, exampleguard "
            f"{'accepts' if ours else 'rejects'} it (problems: {said or 'none'})"
        )
    if app.judge is not None:
        judged = app.judge(argv)
        if tally is not None:
            tally[JUDGED] += 1
        if judged.accepted != framework:
            return framework, (
                f"the real-parser check differs for {app.program} {list(argv)!r}: the "
                f"{app.name} parser {'accepts' if framework else 'rejects'} it, the check says "
                f"{judged.to_json()}"
            )
        if framework and not binding.eager and not judged.eager:
            tool = tool_of(binding)
            real = real_arguments(tool, app.contract, judged)
            model = arguments_of(tool, binding)
            if real.keys() != model.keys() or not all(same(real[k], model[k]) for k in real):
                return framework, (
                    f"the real-parser check's values differ for {app.program} {list(argv)!r}: "
                    f"{real!r} against the model's {model!r}"
                )
    if not (framework and parsed.levels) or binding.eager:
        return framework, None
    if tally is not None:
        tally[COMPARED] += 1
    differences = app.differences(binding, parsed)
    if differences:
        return framework, (
            f"values differ for {app.program} {list(argv)!r}: " + "; ".join(differences)
        )
    return framework, None


Check = Callable[[App, Sequence[str], Counter[str]], str | None]


# Argvs are drawn BATCH at a time: hypothesis's engine costs about as much per example as the
# check of one argv, so batches halve a run for the same number of argvs checked (the cobra
# differential does the same). A failing batch shrinks around its failing argv, which the
# message names.
BATCH = 10


def run_differential(
    app: App,
    *,
    examples: int,
    problems_of: Verdict = exampleguard_problems,
    check: Check | None = None,
    **overrides: Any,
) -> Counter[str]:
    """Run the property on ``examples`` generated argvs; count verdicts and value comparisons.

    ``check`` replaces the comparison of the model with the framework (:func:`disagreement`).
    """
    verdicts: Counter[str] = Counter()

    @settings(
        max_examples=max(1, examples // BATCH),
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
        **overrides,
    )
    @given(batch=st.lists(argvs(app), min_size=BATCH, max_size=BATCH))
    def agree(batch: list[list[str]]) -> None:
        for argv in batch:
            if check is not None:
                message = check(app, argv, verdicts)
            else:
                _, message = disagreement(app, argv, problems_of, verdicts)
            assert message is None, message

    agree()
    return verdicts


def assert_balanced(verdicts: Counter[str], examples: int) -> None:
    # The generator is only a test if both verdicts are common: a generator whose argvs were all
    # rejected (or all accepted) would agree trivially; and most accepted argvs must have had
    # their values compared, or the value check would pass by not looking.
    assert verdicts[ACCEPTED] >= examples // 8, verdicts
    assert verdicts[REJECTED] >= examples // 8, verdicts
    assert verdicts[COMPARED] >= verdicts[ACCEPTED] // 2, verdicts


@pytest.mark.parametrize(
    ("name", "examples"),
    [
        ("click", 1500),
        ("typer", 1200),
        ("argparse", 1500),
        ("versioned-click", 400),
        ("versioned-argparse", 400),
    ],
)
def test_binder_verdict_equals_the_framework_parser(name: str, examples: int) -> None:
    assert_balanced(run_differential(fixture_app(name), examples=examples), examples)


UNEXPOSED_PINNED = (
    ("--app", "x", "serve"),
    ("-Ax", "-v", "serve", "--port", "1"),
    ("--env-file=y", "serve", "-q"),
    ("-v", "serve"),
    ("serve",),
)


@pytest.mark.parametrize("argv", UNEXPOSED_PINNED, ids=" ".join)
def test_the_check_gives_an_unexposed_option_its_value(argv: tuple[str, ...]) -> None:
    # An option kept out of ctx.params is still one an agent gives: the real-parser check reports
    # the value its callback receives, as the model's argument object holds it.
    command = unexposed_click()
    app = click_app_under_test("unexposed", command)
    accepted, message = disagreement(app, argv)
    assert accepted
    assert message is None, message
    # ... which is what the callbacks received (the context's meta is shared along the chain).
    received = click_parse(command, from_os(argv)).levels[0].meta
    assert app.judge is not None
    given = {value.name: value.value for value in app.judge(argv).given}
    assert {k: given[k] for k in given.keys() & received.keys()} == {
        name: value for name, value in received.items() if value not in (None, False)
    }


SAME_VALUE_PINNED = (
    ("--dirtyreload",),
    ("--dirty",),
    ("-d",),
    ("-qd",),
    ("-c", "--dirty"),
    ("--dirty", "--clean"),
    ("--dirtyreload", "--dirty"),
    # A word that is no bundle holds the short flag's letter: it spells nothing.
    ("--dirtyreload", "add"),
)


@pytest.mark.parametrize("argv", SAME_VALUE_PINNED, ids=" ".join)
def test_the_check_tells_switches_that_store_one_value_apart(argv: tuple[str, ...]) -> None:
    # The stored value names both switches: the real-parser check says which one the command
    # line gave, as the model does.
    command = same_value_switches()
    app = click_app_under_test("same-value", command)
    accepted, message = disagreement(app, argv)
    assert accepted
    assert message is None, message


STORED_VALUE_PINNED = {
    "click": (
        ("--no-reload",),
        ("--reload",),
        ("--reload", "--no-reload"),
        ("-x",),
        ("-qx",),
        ("--no-cache", "-q"),
    ),
    "argparse": (
        ("--no-color",),
        ("--strict",),
        ("-k",),
        ("-qk",),
        ("--no-color", "--strict", "--keep", "--quiet"),
    ),
}


@pytest.mark.parametrize(
    ("framework", "argv"),
    [(name, argv) for name, argvs_ in STORED_VALUE_PINNED.items() for argv in argvs_],
    ids=[
        f"{name}: {' '.join(argv)}"
        for name, argvs_ in STORED_VALUE_PINNED.items()
        for argv in argvs_
    ],
)
def test_a_snapshot_gives_a_switch_the_value_it_stores(
    framework: str, argv: tuple[str, ...]
) -> None:
    # The snapshot's model binds alone: a switch that stores False (or True over a default of
    # True) must reach the argument object as the framework stores it, not inverted.
    if framework == "click":
        command = stored_value_click()
        app = click_app_under_test("stored-value", command)
    else:
        app = argparse_app_under_test("stored-value", stored_value_parser())
    accepted, message = disagreement(app, argv)
    assert accepted
    assert message is None, message


# -- pinned command lines --------------------------------------------------------------------------

# Edge cases worth a deterministic check on every run, whatever hypothesis draws: default-command
# routing, eager options, optional values, abbreviations, negative numbers, identity-sensitive
# defaults, unicode digits, empty values. Each must get the framework's own verdict.
PINNED: dict[str, tuple[tuple[str, ...], ...]] = {
    "click": (
        ("rm", "3"),
        ("delete", "-yt", "a"),
        ("delete", "-ty"),
        ("delete", "--format", "JSON"),
        ("delete", "--ratio", "0"),
        ("delete", "--ratio", "0.5"),
        # NaN passes FloatRange's bounds and is a value no NaN equals.
        ("delete", "--ratio", "nan"),
        ("--", "--bogus", "--help", "tags"),
        ("add", "x", "--priority", "1", "--point", "nan", "1"),
        ("delete", "--limit", "٣"),
        ("delete", "--limit", "11"),
        ("delete", "-q", "3"),
        ("-q", "delete", "3"),
        ("delete", "--help", "--bogus"),
        ("--version",),
        ("view",),
        ("view", "--raw"),
        ("view", "first"),
        ("view", "page", "--width", "-1"),
        ("tags",),
        ("tags", "--sort", "name"),
        ("tags", "rename", "a"),
        ("run", "--bogus", "x"),
        ("grep", "+w", "-depth", "3", "p", "q"),
        ("grep", "p"),
        ("add", "x", "--priority", "1", "--editor"),
        ("add", "x", "--priority", "1", "--editor", "--no-color"),
        ("add", "x", "--priority", "1", "-vvv", "--no-color"),
        ("add", "x", "--priority", "1", "--pair", "a", "b"),
        ("add", "x", "--priority", "1", "--when", "2024-02-30"),
        ("add", "x", "--priority", "1", "--archived", "TRUE"),
        ("add", "x", "--priority", "1", "--archived", ""),
        ("add", "x", "--priority", "1", "--archived", " "),
        ("add", "x", "--priority", "1", "--color=yes"),
        ("add", "--priority", "1"),
    ),
    "typer": (
        (),
        ("tags",),
        ("tags", "list"),
        ("delete", "--limit", "٣"),
        ("delete", "--format", "JSON"),
        ("add", "x", "--priority", " 5 "),
        ("add", "x", "--priority", "5.0"),
        ("add", "x", "--priority", "1_0"),
        ("add", "x", "--priority", "1", "--level", "HIGH"),
        ("add", "x", "--priority", "1", "--ratio", "1.5"),
        ("add", "x", "--priority", "1", "--point", "1", "inf"),
        ("-vv", "delete", "3"),
        # Typer hands the program a pathlib.Path: the empty path is `.`, `a//b/` is `a/b`.
        ("add", "x", "--priority", "1", "--out="),
        ("add", "x", "--priority", "1", "--out", "a//b/"),
    ),
    "argparse": (
        ("sync", "--branch", "x"),
        ("sync", "--branch", "x", "--push"),
        ("sync", "--branch=x", "--push"),
        ("sync", "--branch", "y", "--push"),
        ("sync", "--branch", "", "--push"),
        ("sync", "+f", "--push"),
        ("sync", "++f", "--pull", "upstream"),
        ("delete", "--all", "--older-than", "5"),
        ("delete", "--all", "--older-than", "6"),
        ("delete", "--form", "json"),
        ("delete", "-5"),
        ("delete", "--format", "yaml"),
        ("add", "x", "--prio", "2"),
        ("add", "x", "--priority", "2", "--point", "1", "-2"),
        ("add", "x", "--priority", "2", "--label"),
        ("tags", "merge", "a", "b", "c", "-1"),
        ("tags", "merge", "-5", "b", "c"),
        ("tags", "mv", "a", "b"),
        ("run", "--shell", "x", "--bogus", "y"),
        ("run", "x", "--bogus"),
        ("grep", "p", "q", "--kind"),
        ("rm", "3", "-h"),
        ("--version",),
    ),
}


@pytest.mark.parametrize(
    ("name", "argv"),
    [(name, argv) for name, argvs_ in PINNED.items() for argv in argvs_],
    ids=[
        f"{name}: {' '.join(map(repr, argv))}" for name, argvs_ in PINNED.items() for argv in argvs_
    ],
)
def test_pinned_command_lines(name: str, argv: tuple[str, ...]) -> None:
    _, message = disagreement(fixture_app(name), argv, exampleguard_problems)
    assert message is None, message


def test_values_that_build_on_defaults_agree_with_argparse() -> None:
    app = fixture_app("accumulating")
    examples = 300
    verdicts = run_differential(app, examples=examples)
    assert verdicts[COMPARED] >= examples // 4, verdicts


# The argument object as the JSON report shows it, for argvs the framework accepts with the same
# values (the comparison runs first): the shape the mapping rules of bound_values.py bridge.
PINNED_ARGUMENTS: tuple[tuple[str, tuple[str, ...], dict[str, Any]], ...] = (
    (
        "argparse",
        ("-vv", "add", "x", "--priority", "2", "--extra", "a", "b", "--extra", "c", "--label"),
        {
            "verbose": 2,
            "text": "x",
            "priority": 2,
            "extra": [["a", "b"], ["c"]],
            "label": None,
        },
    ),
    (
        "argparse",
        ("add", "x", "--priority", "3", "--quiet", "--no-color", "--mode", "--point", "1", "-2"),
        {
            "text": "x",
            "priority": 3,
            "loud": False,
            "color": False,
            "mode": True,
            "point": [1.0, -2.0],
        },
    ),
    (
        "argparse",
        ("run", "x", "--shell", "y", "--", "z"),
        {"argv": ["x", "--shell", "y", "--", "z"]},
    ),
    (
        "argparse",
        ("tags", "merge", "a", "b", "c", "-1"),
        {"pair": ["a", "b"], "into": "c", "one": True},
    ),
    (
        "accumulating",
        ("-vvv", "--tag", "a", "--also", "y", "z", "--one", "5", "--ones", "p", "--ones", "q"),
        {"verbose": 3, "tag": ["a"], "also": [["y", "z"]], "one": 5, "ones": ["p", "q"]},
    ),
    (
        "accumulating",
        ("--pair", "1", "2", "--fast", "--mark", "--mark", "me"),
        {"pair": [[1.0, 2.0]], "fast": True, "mark": True, "name": "me"},
    ),
    (
        "click",
        ("-q", "add", "x", "--priority", "1", "--pair", "a", "2", "-vvv", "--no-color", "--lower"),
        {
            "quiet": True,
            "priority": 1,
            "pair": ["a", 2],
            "verbose": 3,
            "color": False,
            "lower": True,
            "text": "x",
        },
    ),
    (
        "click",
        ("add", "x", "--priority", "1", "--when", "2024-01-02", "--editor", "--archived", "off"),
        {
            "priority": 1,
            "when": "2024-01-02T00:00:00",
            "editor": None,
            "archived": False,
            "text": "x",
        },
    ),
    (
        "click",
        ("rm", "-yt", "a", "--tag", "b", "3", "4", "--format", "JSON"),
        {"yes": True, "tag": ["a", "b"], "format": "json", "ids": [3, 4]},
    ),
    (
        "typer",
        ("-vv", "delete", "3", "--tag", "a", "--format", "json"),
        {"verbose": 2, "tag": ["a"], "format": "json", "ids": [3]},
    ),
)


@pytest.mark.parametrize(
    ("name", "argv", "expected"),
    PINNED_ARGUMENTS,
    ids=[f"{name}: {' '.join(argv)}" for name, argv, _ in PINNED_ARGUMENTS],
)
def test_pinned_argument_objects(
    name: str, argv: tuple[str, ...], expected: dict[str, Any]
) -> None:
    app = fixture_app(name)
    accepted, message = disagreement(app, argv)
    assert accepted
    assert message is None, message
    binding = bind(app.contract, [app.program, *argv], app.memo)
    assert arguments_of(tool_of(binding), binding) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ("sync", "--branch", "x"),
        ("sync", "--branch", "x", "--push"),
        ("sync", "--branch", "", "--push"),
        ("delete", "--all", "--older-than", "5"),
    ],
    ids=" ".join,
)
def test_in_process_argparse_verdict_matches_a_real_process(argv: tuple[str, ...]) -> None:
    """The harness gives argparse the argv as ``sys.argv`` would: proven against a real process."""
    script = "import sys, argparse_app; argparse_app.build_parser().parse_args(sys.argv[1:])"
    environment = {**os.environ, "PYTHONPATH": str(Path(argparse_app.__file__).parent)}
    result = subprocess.run(
        [sys.executable, "-c", script, *argv],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 2), result.stderr
    assert fixture_app("argparse").accepts(argv) is (result.returncode == 0), result.stderr


# -- the comparison has teeth ---------------------------------------------------------------------


def ignoring_unknown_flags(binding: Binding) -> list[Problem]:
    """A deliberately broken binder: it never reports ``unknown-flag``."""
    return [p for p in exampleguard_problems(binding) if p.code != "unknown-flag"]


@pytest.mark.parametrize("name", ["click", "typer", "argparse"])
def test_the_differential_check_catches_a_flipped_verdict(name: str) -> None:
    app = fixture_app(name)
    argv = ["delete", "--bogus"] if name != "argparse" else ["delete", "3", "--bogus"]
    # The planted defect shows on a known argv ...
    _, message = disagreement(app, argv, ignoring_unknown_flags)
    assert message is not None
    assert "--bogus" in message
    assert "parser rejects it, exampleguard accepts it" in message
    # ... and the generated differential run finds it on its own.
    with pytest.raises(AssertionError, match="verdicts differ"):
        run_differential(
            app,
            examples=400,
            problems_of=ignoring_unknown_flags,
            database=None,
            derandomize=True,
            phases=[Phase.generate],
        )


def integers_left_as_text(app: App) -> App:
    """The app compared with a deliberately broken binder: it forgets to convert integers."""

    def unconverted(value: Any) -> Any:
        if isinstance(value, list):
            return [unconverted(item) for item in value]
        return str(value) if type(value) is int else value

    def differences(binding: Binding, parsed: Parsed) -> list[str]:
        binding.typed = {key: unconverted(value) for key, value in binding.typed.items()}
        return app.differences(binding, parsed)

    return replace(app, differences=differences)


@pytest.mark.parametrize("name", ["click", "typer", "argparse"])
def test_the_value_comparison_catches_a_wrong_value(name: str) -> None:
    app = integers_left_as_text(fixture_app(name))
    argv = ["delete", "3"]
    # The planted defect shows on a known argv ...
    _, message = disagreement(app, argv)
    assert message is not None
    assert message.startswith(f"values differ for notes {argv!r}")
    assert "the argument object ['3']" in message
    # ... and the generated differential run finds it on its own.
    with pytest.raises(AssertionError, match="values differ"):
        run_differential(
            app, examples=400, database=None, derandomize=True, phases=[Phase.generate]
        )


# -- a real third-party CLI -----------------------------------------------------------------------


def sqlite_utils_app(directory: Path) -> App:
    """sqlite-utils: 48 commands, a default-command group, many option kinds.

    File existence is deliberately not checked by exampleguard while several sqlite-utils
    arguments are ``click.Path(exists=True)``; so the parser runs in ``directory`` (the working
    directory) where every word of the argv names an existing regular file, and existence never
    decides its verdict. ``bulk`` is left out: its FILE argument is a non-lazy ``click.File`` that
    ``make_context`` opens and leaves open. The empty string cannot name a file, so it is never
    generated.
    """

    def parse(argv: Sequence[str]) -> Parsed:
        for word in argv:
            if word not in ("", ".", "..") and "/" not in word and "\0" not in word:
                (directory / word).touch()
        return click_parse(sqlite_utils.cli.cli, from_os(argv), program="sqlite-utils")

    return App(
        "sqlite-utils",
        "sqlite-utils",
        Tree.model_validate(extract_click(sqlite_utils.cli.cli, "sqlite-utils")),
        parse,
        click_values,
        judge=ClickJudge(sqlite_utils.cli.cli, "sqlite-utils").judge,
        excluded_commands=frozenset({("bulk",)}),
        bad_values=tuple(v for v in BAD_VALUES if v.strip()),
        mutations=tuple(m for m in MUTATIONS if m is not m_empty),
    )


def fastapi_app() -> App:
    """fastapi-cli: a real third-party Typer CLI (Annotated options, paths, a version callback)."""
    import fastapi_cli.cli

    command = as_click_command(fastapi_cli.cli.app)
    return App(
        "fastapi",
        "fastapi",
        Tree.model_validate(extract_click(command, "fastapi")),
        lambda argv: click_parse(command, from_os(argv), program="fastapi"),
        click_values,
        judge=ClickJudge(command, "fastapi").judge,
        # A plain flag whose callback prints the version and exits: the tree cannot know that
        # the callback ends parsing, so only the real-parser check does (model-mismatch).
        excluded_flags=TYPER_COMPLETION_FLAGS | {"--version"},
    )


def test_binder_verdict_equals_a_third_party_typer_cli() -> None:
    examples = 600
    verdicts = run_differential(fastapi_app(), examples=examples)
    assert_balanced(verdicts, examples)
    assert verdicts[JUDGED] == examples, verdicts


FASTAPI_PINNED = (
    ("--version",),
    ("--verbose", "--version", "dev"),
    ("--version", "--bogus"),
    ("dev", "main.py", "--port", "8000", "--reload"),
    ("run", "--workers", "x"),
    ("dev", "-e", "main:app", "--no-proxy-headers"),
)


@pytest.mark.parametrize("argv", FASTAPI_PINNED, ids=" ".join)
def test_pinned_fastapi_command_lines(argv: tuple[str, ...]) -> None:
    # `--version` is ended by its callback: the final verdict (the real-parser check's) agrees
    # with Typer, and the model's rejection is flagged, not silent.
    message = final_disagreement(fastapi_app(), argv, Counter())
    assert message is None, message


def isort_app() -> App:
    """isort: a real third-party argparse CLI with a hundred options, built by a factory."""
    return argparse_app_under_test("isort", isort.main._build_arg_parser())


def test_binder_verdict_equals_a_third_party_argparse_parser() -> None:
    examples = 600
    verdicts = run_differential(isort_app(), examples=examples)
    assert_balanced(verdicts, examples)
    assert verdicts[JUDGED] == examples, verdicts


SQLITE_PINNED = (
    (),
    ("--version",),
    ("data.db", "select 1"),
    ("query", "data.db", "select 1", "--csv"),
    ("tables", "data.db", "--counts", "--columns"),
    ("rows", "data.db", "t", "--limit", "x"),
    ("transform", "data.db", "t", "--type", "c", "integer"),
    ("transform", "data.db", "t", "--type", "c", "notatype"),
    ("insert", "data.db", "t", "data.json", "--type", "c", "notatype"),
)


@pytest.mark.parametrize("argv", SQLITE_PINNED, ids=lambda argv: " ".join(argv) or "(nothing)")
def test_pinned_sqlite_utils_command_lines(
    argv: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, message = disagreement(sqlite_utils_app(tmp_path), argv, exampleguard_problems)
    assert message is None, message


def test_binder_verdict_equals_click_for_sqlite_utils(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = sqlite_utils_app(tmp_path)
    assert len(app.commands) > 40
    examples = 800
    assert_balanced(run_differential(app, examples=examples), examples)


# -- dynamic routing and conversion: the framework's verdict is the verdict ------------------------

# The paths a catalog would declare as aliases: the adapter probes them through the groups' own
# routing, so the tree carries the ones the group resolves.
DECLARED_ALIASES = (("del",), ("tags", "remove"))
MODEL_DISAGREED = "model disagreed (model-mismatch)"


def m_command_prefix(draw: Draw, app: App, words: list[Word], leaf: TreeCommand) -> list[Word]:
    """A command word cut to a prefix (the alias recipe routes unique ones)."""
    candidates = [i for i in _indices(words, "command") if len(words[i].text) > 1]
    if not candidates:
        return words
    at = choose(draw, candidates)
    text = words[at].text[: draw(ints(1, len(words[at].text) - 1))]
    return [*words[:at], Word(text, "noise"), *words[at + 1 :]]


def dynamic_fixture() -> App:
    """``dynamic_app``: aliases by prefix, a rewriting group, lazy commands, framework subtypes."""
    import dynamic_app

    tree = Tree.model_validate(extract_click(dynamic_app.cli, "notes", DECLARED_ALIASES))
    return App(
        "dynamic",
        "notes",
        tree,
        lambda argv: click_parse(dynamic_app.cli, from_os(argv)),
        click_values,
        judge=ClickJudge(dynamic_app.cli, "notes").judge,
        mutations=(*MUTATIONS, m_command_prefix, m_command_prefix),
    )


def _tool_at(contract: Contract, path: Sequence[str]) -> EffectiveTool:
    node = contract.root
    for word in path:
        node = node.children[word]
    assert node.tool is not None, path
    return node.tool


def _click_given(levels: list[Any]) -> dict[str, Any]:
    """What the command line gave, level by level, as the argument object shapes it."""
    given: dict[str, Any] = {}
    for context in levels:
        for param in context.command.get_params(context):
            value = context.params.get(param.name)
            source = context.get_parameter_source(param.name)
            if source is not None and source.name == "COMMANDLINE" and value not in (None, ()):
                given[param.name] = as_argument(value)
    return given


def final_disagreement(app: App, argv: Sequence[str], tally: Counter[str]) -> str | None:
    """Where exampleguard's final verdict on ``argv`` differs from the framework's, or is silent.

    For a live tree the final parsing verdict is the real-parser check's and the argument
    object is built from what the parser produced: both must equal the framework's own parse.
    exampleguard's model may disagree (a unique prefix it was never told of, a Choice subclass
    that accepts anything, an int subclass that rejects more): then, and only then, the
    comparison that raises ``model-mismatch`` must say so.
    """
    parsed = app.parse(argv)
    assert app.judge is not None
    judged = app.judge(argv)
    tally[ACCEPTED if parsed.accepted else REJECTED] += 1
    if judged.accepted != parsed.accepted:
        return f"the verdicts differ for {list(argv)!r}: Click {parsed}, the check {judged}"
    real = None
    if parsed.accepted and parsed.levels and not judged.eager:
        assert judged.path is not None
        tool = _tool_at(app.contract, judged.path)
        real = real_arguments(tool, app.contract, judged)
        expected = _click_given(parsed.levels)
        tally[COMPARED] += 1
        if set(real) != set(expected) or not all(same(expected[k], real[k]) for k in real):
            return f"the values differ for {list(argv)!r}: Click {expected!r}, the check {real!r}"
    binding = bind(app.contract, [app.program, *argv], app.memo)
    problems = exampleguard_problems(binding)
    model_agrees = (not problems) == parsed.accepted
    if model_agrees and parsed.accepted:
        # Both accept: the same command, stopped by an eager option or not, the same values.
        model_agrees = binding.path == judged.path and binding.eager == judged.eager
        if model_agrees and real is not None and not binding.eager:
            model_agrees = not app.differences(binding, parsed)
    model = None
    if binding.node is not None and binding.node.tool is not None:
        model = arguments_of(binding.node.tool, binding)
    comparison = compare(binding, problems, model, real, judged)
    if not model_agrees:
        tally[MODEL_DISAGREED] += 1
    if comparison.agree != model_agrees:
        return (
            f"the model {'agrees' if model_agrees else 'disagrees'} on {list(argv)!r}, the "
            f"comparison says {comparison}: a mismatch would be "
            f"{'raised falsely' if model_agrees else 'silent'}"
        )
    return None


def test_the_final_verdict_on_dynamic_routing_is_the_frameworks() -> None:
    examples = 800
    verdicts = run_differential(dynamic_fixture(), examples=examples, check=final_disagreement)
    assert verdicts[ACCEPTED] >= examples // 8, verdicts
    assert verdicts[REJECTED] >= examples // 8, verdicts
    # The app is built so that the model cannot know everything: its disagreements occur, and
    # each one was flagged above.
    assert verdicts[MODEL_DISAGREED] > 0, verdicts


DYNAMIC_PINNED = (
    ("del", "3", "4"),
    ("dele", "5"),
    ("d", "5"),
    ("tags", "remove", "x"),
    ("tags", "delete", "x"),
    ("tags", "rem", "x"),
    ("remote", "sync", "--fast"),
    ("rem", "sync"),
    ("remote", "sync", "--slow"),
    ("delete", "--format", "yaml"),
    ("delete", "--count", "2"),
    ("delete", "--count", "3"),
    ("delete", "--count", "x"),
)


@pytest.mark.parametrize("argv", DYNAMIC_PINNED, ids=" ".join)
def test_pinned_dynamic_command_lines(argv: tuple[str, ...]) -> None:
    message = final_disagreement(dynamic_fixture(), argv, Counter())
    assert message is None, message


def test_the_final_verdict_check_catches_a_silent_mismatch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `dele` routes for real and the model rejects it: a comparison that always agreed would
    # hide that; the check names it.
    original = compare

    def always_agreeing(*arguments: Any) -> Any:
        found = original(*arguments)
        return replace(found, model_accepts=found.real_accepts, differences=())

    monkeypatch.setattr(sys.modules[__name__], "compare", always_agreeing)
    message = final_disagreement(dynamic_fixture(), ("dele", "5"), Counter())
    assert message is not None
    assert "would be silent" in message


# -- batches --------------------------------------------------------------------------------------

# The child judges every example of a run in one batch: the tree is neutralised once, on each
# command as a parse first reaches it, and put back when the batch ends. Each verdict of a batch
# must be the one the argv gets alone (whose agreement with the framework is tested above),
# whatever came before it in the batch.
BATCHED = ("click", "typer", "versioned-click", "dynamic", "fastapi", "sqlite-utils")


def batched_app(name: str) -> App:
    """The Click-family application ``name`` whose judge is batched."""
    if name == "dynamic":
        return dynamic_fixture()
    if name == "sqlite-utils":
        # Only its judge is used here, which never looks at files.
        return sqlite_utils_app(Path.cwd())
    if name == "fastapi":
        return fastapi_app()
    return fixture_app(name)


def batch_disagreement(app: App, batch: Sequence[Sequence[str]]) -> str | None:
    """Where judging ``batch`` at once differs from judging each of its argvs alone."""
    assert app.judge is not None
    judge: ClickJudge = app.judge.__self__  # type: ignore[attr-defined]
    # As JSON text: a NaN value equals itself there.
    together = [json.dumps(verdict.to_json()) for verdict in judge.judge_all(batch)]
    alone = [json.dumps(judge.judge(argv).to_json()) for argv in batch]
    for argv, in_batch, by_itself in zip(batch, together, alone, strict=True):
        if in_batch != by_itself:
            return f"{list(argv)!r} in a batch: {in_batch}, alone: {by_itself}"
    return None


@pytest.mark.parametrize("name", BATCHED)
def test_a_batch_judges_each_argv_as_it_is_judged_alone(name: str) -> None:
    app = batched_app(name)

    @settings(
        max_examples=40,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(batch=st.lists(argvs(app), min_size=2, max_size=25))
    def agree(batch: list[list[str]]) -> None:
        message = batch_disagreement(app, batch)
        assert message is None, message

    agree()


@pytest.mark.parametrize("name", ["click", "typer", "dynamic"])
def test_the_pinned_command_lines_in_one_batch_each_way(name: str) -> None:
    lines = [list(argv) for argv in (DYNAMIC_PINNED if name == "dynamic" else PINNED[name])]
    app = batched_app(name)
    for batch in (lines, lines[::-1], lines[::2] + lines[1::2]):
        message = batch_disagreement(app, batch)
        assert message is None, message


def _objects(command: Any) -> list[Any]:
    """The command, its subcommands, their parameters (the help option too) and their types."""
    import click

    found: list[Any] = []
    pending: list[tuple[Any, Any]] = [(command, None)]
    while pending:
        each, parent = pending.pop()
        context = click.Context(each, parent=parent, info_name=each.name)
        params = each.get_params(context)
        found += [each, *params, *(p.type for p in params), *(type(p) for p in params)]
        found += [item for p in params for item in getattr(p.type, "types", None) or ()]
        group = getattr(each, "commands", None) or {}
        pending += [(child, context) for child in group.values()]
    return found


def _state(command: Any) -> list[tuple[Any, dict[str, Any]]]:
    """What each object of the tree holds, to compare before and after a batch."""
    state = []
    for each in _objects(command):
        held = dict(vars(each))
        for name, value in held.items():
            if isinstance(value, list):
                held[name] = list(value)
        state.append((each, held))
    return state


def test_a_batch_puts_the_tree_back_as_it_was() -> None:
    before = _state(click_app.cli)
    lines = [list(argv) for argv in PINNED["click"]]
    judge = ClickJudge(click_app.cli, "notes")
    verdicts = judge.judge_all(lines)
    assert {verdict.accepted for verdict in verdicts} == {True, False}
    assert any(verdict.eager for verdict in verdicts)
    assert _state(click_app.cli) == before
    assert gc.isenabled()


def test_a_batch_interrupted_midway_puts_the_tree_back_too() -> None:
    import click

    def interrupt(context: Any, param: Any, value: Any) -> None:
        if value:
            raise KeyboardInterrupt

    @click.command()
    @click.option("--name", callback=lambda _context, _param, value: value)
    @click.option("--interrupt", is_flag=True, callback=interrupt)
    def command(**_: Any) -> None:
        """A command whose switch interrupts the parse."""

    before = _state(command)
    judge = ClickJudge(command, "prog")
    with pytest.raises(KeyboardInterrupt):
        judge.judge_all([["--name", "a"], ["--interrupt"], ["--name", "b"]])
    assert _state(command) == before
    assert command.params[0].callback is not None
    assert gc.isenabled()
    # And a batch without the interruption judges as before.
    assert [v.accepted for v in judge.judge_all([["--name", "a"], ["--bogus"]])] == [True, False]


def test_each_parse_closes_its_contexts_as_click_does() -> None:
    import click

    closed: list[str] = []

    def register(context: Any, _param: Any, value: Any) -> None:
        # A switch's callback stays in the check: what it registers is closed by the parse.
        if value:
            context.call_on_close(lambda: closed.append("callback"))

    class NotingContext(click.Context):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.call_on_close(lambda: closed.append(f"context {self.info_name}"))

    @click.group()
    def root() -> None:
        """A group whose subcommand has contexts of its own class."""

    @root.command(context_settings={})
    @click.option("--register", is_flag=True, callback=register)
    def plain(**_: Any) -> None:
        """A command with the framework's contexts."""

    @root.command()
    @click.option("--count", type=int)
    def noted(**_: Any) -> None:
        """A command whose contexts note their closing."""

    noted.context_class = NotingContext
    judge = ClickJudge(root, "prog")
    lines = [["plain"], ["plain", "--register"], ["noted"], ["noted", "--count", "x"]]
    verdicts = judge.judge_all(lines)
    assert [v.accepted for v in verdicts] == [True, True, True, False]
    judged = list(closed)
    # As Click's own main closes them: entered once made, closed when the parse ends (a
    # context whose parse failed was never made, so there is nothing to close).
    closed.clear()
    for argv in lines:
        with contextlib.suppress(click.UsageError), root.make_context("prog", list(argv)) as ctx:
            # Click 8.2 renamed protected_args (8.1's attribute) to _protected_args.
            protected = vars(ctx).get("_protected_args", vars(ctx).get("protected_args", []))
            words = [*protected, *ctx.args]
            name, command, rest = root.resolve_command(ctx, words)
            assert command is not None
            with command.make_context(name, rest, parent=ctx):
                pass
    assert judged == closed == ["callback", "context noted"]
    assert click.get_current_context(silent=True) is None


def test_a_get_params_set_on_the_command_itself_is_the_one_judged() -> None:
    import click

    @click.command()
    @click.option("--name")
    def command(**_: Any) -> None:
        """A command whose object hands out one more option than its class would."""

    extra = click.Option(["--extra"])
    class_params = command.get_params

    def own_params(ctx: Any) -> list[Any]:
        return [*class_params(ctx), extra]

    command.get_params = own_params  # type: ignore[method-assign]
    lines = [["--extra", "x"], ["--name", "y"], ["--bogus"]]
    verdicts = ClickJudge(command, "prog").judge_all(lines)
    accepted = []
    for argv in lines:
        try:
            command.make_context("prog", list(argv))
            accepted.append(True)
        except click.UsageError:
            accepted.append(False)
    assert [v.accepted for v in verdicts] == accepted == [True, True, False]
    assert [(g.name, g.value) for g in verdicts[0].given] == [("extra", "x")]
    assert command.get_params is own_params


def _argparse_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and every subparser under it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action._name_parser_map.values()):
                found += _argparse_parsers(child)
    return found


def test_an_argparse_batch_judges_each_argv_as_it_is_judged_alone() -> None:
    app = argparse_app_under_test()
    judge = ArgparseJudge(argparse_app.build_parser())

    @settings(
        max_examples=40,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(batch=st.lists(argvs(app), min_size=2, max_size=25))
    def agree(batch: list[list[str]]) -> None:
        together = [json.dumps(v.to_json()) for v in judge.judge_all([from_os(a) for a in batch])]
        alone = [json.dumps(judge.judge(from_os(argv)).to_json()) for argv in batch]
        assert together == alone

    agree()


def test_an_override_of_parse_args_is_called_only_with_argparse_s_signature() -> None:
    calls: list[str] = []

    class Configured(argparse.ArgumentParser):
        def parse_args(self, config: str) -> None:  # type: ignore[override]
            calls.append(f"configured from {config}")

    class Noting(argparse.ArgumentParser):
        def parse_args(  # type: ignore[override]
            self, args: Sequence[str] | None = None, namespace: None = None
        ) -> argparse.Namespace:
            calls.append("noting")
            return super().parse_args(args, namespace)

    lines = [["--name", "x"], ["--bogus"]]
    for cls in (Configured, Noting):
        parser = cls(prog="prog")
        parser.add_argument("--name")
        verdicts = ArgparseJudge(parser).judge_all(lines)
        assert [v.accepted for v in verdicts] == [True, False]
        assert [(g.name, g.value) for g in verdicts[0].given] == [("name", "x")]
    # Another signature is not the framework's parse (SPEC 4): argparse's own parses instead.
    assert calls == ["noting", "noting"]


def test_an_argparse_batch_puts_every_parser_back_as_it_was() -> None:
    parser = argparse_app.build_parser()
    parsers = _argparse_parsers(parser)
    before = [dict(vars(each)) for each in parsers]
    verdicts = ArgparseJudge(parser).judge_all([from_os(a) for a in PINNED["argparse"]])
    assert {verdict.accepted for verdict in verdicts} == {True, False}
    assert any(verdict.eager for verdict in verdicts)
    assert [dict(vars(each)) for each in parsers] == before


@pytest.mark.parametrize("name", ["click", "argparse"])
def test_a_batch_handed_out_in_runs_is_the_batch_in_order(name: str) -> None:
    lines = [from_os(argv) for argv in PINNED[name]]
    judge: ClickJudge | ArgparseJudge = (
        ClickJudge(click_app.cli, "notes")
        if name == "click"
        else ArgparseJudge(argparse_app.build_parser())
    )
    runs = list(judge.judge_runs(lines, 4))
    assert [len(run) for run in runs[:-1]] == [4] * (len(runs) - 1)
    assert 1 <= len(runs[-1]) <= 4
    in_runs = [json.dumps(verdict.to_json()) for run in runs for verdict in run]
    assert in_runs == [json.dumps(verdict.to_json()) for verdict in judge.judge_all(lines)]


def bare_prefix_parser() -> argparse.ArgumentParser:
    """A parser with a bare `-` option (read standard input), as yamllint has."""
    parser = argparse.ArgumentParser(prog="notes")
    parser.add_argument("-", action="store_true", dest="stdin")
    parser.add_argument("-x", action="store_true")
    parser.add_argument("files", nargs="*")
    return parser


@pytest.mark.parametrize("argv", [("-=",), ("-=x",), ("a", "-x", "-=")], ids=" ".join)
def test_a_bare_prefix_option_given_a_value_is_rejected_as_argparse_fails(
    argv: tuple[str, ...],
) -> None:
    app = argparse_app_under_test("bare-prefix", bare_prefix_parser())
    verdict = ArgparseJudge(bare_prefix_parser()).judge(from_os(argv))
    binding = bind(app.contract, [app.program, *argv], app.memo)
    assert not verdict.accepted
    assert [(p.code, p.message) for p in exampleguard_problems(binding)] == [
        ("unexpected-value", "- takes no value, but was given " + repr(argv[-1][2:]))
    ]


def test_a_bare_prefix_option_alone_is_accepted() -> None:
    app = argparse_app_under_test("bare-prefix", bare_prefix_parser())
    _, message = disagreement(app, ("a", "-", "-x"))
    assert message is None, message


def bare_none_option() -> Any:
    """An optional-value option whose flag value is None, as bump-my-version's --config-file."""
    import click

    @click.command()
    @click.option("--config-file", is_flag=False, flag_value=None, type=str)
    @click.option("-v", "--verbose", count=True)
    def cli(config_file: str | None, verbose: int) -> None:
        """Read the configuration."""

    return cli


@pytest.mark.parametrize(
    "argv", [("--config-file",), ("-v", "--config-file"), ("--config-file", "-v")], ids=" ".join
)
def test_an_option_given_bare_with_a_none_flag_value_is_given(argv: tuple[str, ...]) -> None:
    command = bare_none_option()
    # ctx.params alone cannot tell this None from an option not given: the real-parser check's
    # values, which know the option was given bare, are the ones compared.
    app = click_app_under_test("bare-none", command, lambda _binding, _parsed: [])
    accepted, message = disagreement(app, argv)
    assert message is None, message
    # Click 8.2 and later take an explicit flag_value=None bare; Click 8.1 requires a value
    # (and takes the next word as it), and the model of each version agrees with its Click.
    if command.params[0]._flag_needs_value:
        assert accepted
