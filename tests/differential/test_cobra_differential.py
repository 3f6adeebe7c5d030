"""Differential tests: the ``cobra`` dialect's verdict and values equal cobra's, argv for argv.

The fixture programs (``tests/fixtures/go``: every flag form and type, persistent flags at
several levels, every argument validator, the flag groups, required flags, interspersing off,
flag parsing off, ``TraverseChildren``, a program of one command) are built with the helper
wired in. Their exported tree is bound to a catalog of one bare tool per runnable command, and
hypothesis generates command lines from it: real paths by name and alias, flags before and
after the command words, every spelling of every flag (``--f v``, ``--f=v``, ``-f v``,
``-fv``, ``-f=v``, bundles, bare ``NoOptDefVal`` flags), values good and bad for each pflag
type (Go's base prefixes and underscores, hexadecimal floats, CSV quoting, ranges), positional
words, ``--``, help and version, unknown flags and commands. Each batch is judged by the real
program (``__exampleguard judge``: cobra's own Find or Traverse, ParseFlags and validation)
and bound by exampleguard from the snapshot alone: the verdicts must be equal and, where both
accept, so must the command path and every value the program would receive.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exampleguard._bind import Binding, Memo, Problem, bind
from exampleguard._catalog import Catalog
from exampleguard._catalogfile import LoadedCatalog
from exampleguard._contract import Contract
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._model import Parameter
from exampleguard._rules import arguments_of
from exampleguard._snapshot import JudgeVerdict, Tree
from exampleguard._tree import _as_parse_verdict
from exampleguard._verdicts import real_arguments
from tests.support.bound_values import same
from tests.support.golang import build_fixture, missing_go

pytestmark = pytest.mark.skipif(missing_go() is not None, reason=str(missing_go()))


@dataclass
class CobraApp:
    """One built program: its exported tree, the contract bound to it, and its judge."""

    name: str
    program: Path
    tree: Tree
    contract: Contract
    memo: Memo = field(default_factory=Memo)

    def judge(self, argvs: Sequence[Sequence[str]]) -> list[JudgeVerdict]:
        lines = "".join(json.dumps(list(argv)) + "\n" for argv in argvs)
        done = subprocess.run(
            [str(self.program), "__exampleguard", "judge"],
            input=lines,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        return [JudgeVerdict.model_validate_json(line) for line in done.stdout.splitlines()]


def load(name: str, program: Path) -> CobraApp:
    done = subprocess.run(
        [str(program), "__exampleguard", "tree"], capture_output=True, check=True, timeout=60
    )
    tree = Tree.model_validate_json(done.stdout)
    tools = [
        {"id": f"tool{index}", "command": command.path}
        for index, command in enumerate(tree.commands)
        if command.runnable
    ]
    catalog = Catalog.model_validate(
        {"format": "exampleguard.catalog/v1", "program": tree.program, "tools": tools}
    )
    document = Document(Path("catalog.json"), "catalog.json", "{}", {}, "json")
    contract = build_contract(LoadedCatalog(catalog, document), tree)
    assert contract.diagnostics == []
    return CobraApp(name, program, tree, contract)


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CobraApp]:
    folder = tmp_path_factory.mktemp("go")
    return {name: load(name, build_fixture(name, folder)) for name in ("kit", "traverse", "single")}


# -- the comparison -------------------------------------------------------------------------------


def model_problems(binding: Binding) -> list[Problem]:
    """The binder's problems that count for the parsing verdict (warnings aside)."""
    return [p for p in binding.problems if p.code != "repeated-option"]


ACCEPTED, REJECTED, COMPARED = "accepted", "rejected", "values compared"


def disagreement(
    app: CobraApp,
    argv: Sequence[str],
    verdict: JudgeVerdict,
    tally: Counter[str],
    problems_of: Callable[[Binding], list[Problem]] = model_problems,
) -> str | None:
    """A message naming the argv where exampleguard's model and cobra differ, else ``None``."""
    binding = bind(app.contract, [app.tree.program, *argv], app.memo)
    problems = problems_of(binding)
    tally[ACCEPTED if verdict.accepted else REJECTED] += 1
    if verdict.accepted == bool(problems):
        said = [f"{p.code}: {p.message}" for p in problems]
        return (
            f"verdicts differ for {app.name} {list(argv)!r}: cobra "
            f"{'accepts' if verdict.accepted else 'rejects'} it ({verdict.error or 'no error'}), "
            f"exampleguard {'rejects' if problems else 'accepts'} it ({said or 'no problem'})"
        )
    if not verdict.accepted:
        return None
    real = _as_parse_verdict(app.tree, verdict)
    if real.path != binding.path:
        return f"paths differ for {app.name} {list(argv)!r}: {real.path} against {binding.path}"
    if real.eager != binding.eager:
        return f"eager differs for {app.name} {list(argv)!r}: {real.eager} against {binding.eager}"
    if real.eager:
        return None
    assert binding.node is not None
    tool = app.contract.command_tool(binding.node)
    theirs = real_arguments(tool, app.contract, real)
    ours = arguments_of(tool, binding)
    tally[COMPARED] += 1
    if theirs.keys() != ours.keys() or not all(same(theirs[k], ours[k]) for k in theirs):
        return f"values differ for {app.name} {list(argv)!r}: cobra {theirs!r}, model {ours!r}"
    return None


def check(app: CobraApp, argvs: Sequence[Sequence[str]], tally: Counter[str]) -> None:
    verdicts = app.judge(argvs)
    assert len(verdicts) == len(argvs)
    messages = [disagreement(app, argv, v, tally) for argv, v in zip(argvs, verdicts, strict=True)]
    found = [m for m in messages if m is not None]
    assert not found, "\n".join(found)


# -- generation -----------------------------------------------------------------------------------

GOOD: dict[str, tuple[str, ...]] = {
    "bool": ("true", "false", "1", "0", "t", "F", "TRUE", "True"),
    "int": ("0", "3", "-1", "+7", "0x1f", "0o17", "0b101", "010", "1_000", "9223372036854775807"),
    "int8": ("127", "-128", "5", "0x7f"),
    "int64": ("-9223372036854775808", "42", "0X2A"),
    "uint": ("18446744073709551615", "7", "0", "0b1_1"),
    "uint8": ("255", "0", "0xff"),
    "count": ("3", "0x2", "0", "-1"),
    "float64": ("1.5", "-0.5", "1e3", "0.1", "inf", "-Inf", "NaN", "0x1p-2", "0x1.8p3", "5."),
    "float32": ("0.1", "3.4028235e38", "1e-46", "1.4e-45", "16777217", "-0", "1_000.5"),
    "string": ("x", "json", "a b", "", "-x", "é", "--"),
    "stringSlice": ("a", "a,b", '"a,b",c', "", '"a""b"', "x\ny", "a,", "a\r", "\r\nb", ",,"),
    "stringArray": ("a,b", "c", ""),
    "intSlice": ("1,2", "3", "-1,+2", "0"),
    "stringToString": ("a=b", "k=v,x=y"),
}
BAD: dict[str, tuple[str, ...]] = {
    "bool": ("yes", "tRue", "2", ""),
    "int": ("", "x", "1.5", "٣", "0x", "08", "_1", "1__0", "9223372036854775808", "1e3", "0x_"),
    "int8": ("128", "-129", "0x80"),
    "int64": ("9223372036854775808", "1_"),
    "uint": ("18446744073709551616", "-0", "-1"),
    "uint8": ("256", "-1"),
    "count": ("x", "", "1.0"),
    "float64": ("1e400", "-nan", "0x1", "1e", ".", " 1", "1__0", "infin", "∞", "+nan", "1_e2"),
    "float32": ("3.5e38", "1e39", "0x1p128"),
    "string": (),
    "stringSlice": ('a"b', '"x', '"a"x', ' "a"', "\n", 'a,"b\nc",d'),
    "stringArray": (),
    "intSlice": ("", "1, 2", "1,x", "0x1", "1,"),
    # Not modelled (its words are the program's to refuse): no bad values generated.
    "stringToString": (),
}
POSITIONAL = ("x", "pods", "red", "green", "blue", "-1", "a b", "é", "get", "group", "none", "")
JUNK = (
    "--",
    "-",
    "--bogus",
    "-Z",
    "--=x",
    "---x",
    "-h",
    "--help",
    "--help=false",
    "--version",
    "-v",
    "-test.v",
    "x=y",
    "--bogus=1",
    "-é",
    "a-b",
)


def _kind(parameter: Parameter) -> str:
    kind = parameter.pflag_type or "string"
    return {"int16": "int", "int32": "int", "uint16": "uint", "uint32": "uint"}.get(kind, kind)


def value_for(draw: st.DrawFn, parameter: Parameter) -> str:
    kind = _kind(parameter)
    good, bad = GOOD.get(kind, GOOD["string"]), BAD.get(kind, ())
    if bad and draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(bad))
    return draw(st.sampled_from(good))


def no_opt(parameter: Parameter) -> bool:
    return parameter.no_opt_default is not None


def flag_words(draw: st.DrawFn, parameter: Parameter, shorts: list[Parameter]) -> list[str]:
    """One occurrence of ``parameter``, in one of pflag's spellings."""
    long = parameter.flags[0]
    short = next((f for f in parameter.flags if len(f) == 2), None)
    form = draw(st.integers(0, 7))
    if no_opt(parameter):
        if form <= 3:
            bare = short if short is not None and form % 2 else long
            if short is not None and form == 3 and shorts:
                # A bundle of switches, perhaps ending with a flag that takes a value.
                others = draw(st.lists(st.sampled_from(shorts), max_size=3))
                letters = "".join(f.flags[-1][1] for f in others if no_opt(f))
                return [f"{short}{letters}"]
            return [bare]
        if form <= 5:
            return [f"{long}={value_for(draw, parameter)}"]
        if short is not None:
            return [f"{short}={value_for(draw, parameter)}"]
        # Given as if it took its value: the word is then an argument.
        return [long, value_for(draw, parameter)]
    value = value_for(draw, parameter)
    if form <= 2:
        return [long, value]
    if form <= 4:
        return [f"{long}={value}"]
    if short is None:
        return [long, value]
    if form == 5:
        return [short, value]
    if form == 6:
        return [f"{short}{value}"]
    return [f"{short}={value}"]


def command_words(draw: st.DrawFn, app: CobraApp, path: list[str]) -> list[str]:
    words = []
    for depth, name in enumerate(path):
        command = app.tree.command(path[: depth + 1])
        spellings = [name, *(alias[-1] for alias in command.aliases)] if command else [name]
        words.append(draw(st.sampled_from(spellings)))
    if path and draw(st.integers(0, 15)) == 0:
        words[-1] = words[-1][:-1] or "zz"
    return words


@st.composite
def argvs(draw: st.DrawFn, app: CobraApp) -> list[str]:
    """A command line from the tree: mostly well formed, with some noise."""
    paths = [c.path for c in app.tree.commands if c.path[:1] != ["completion"]]
    path = draw(st.sampled_from(paths))
    node = app.contract.node_at(path)
    assert node is not None
    flags = [p for p in node.accepted() if not p.positional]
    # Now and then a flag of another command, at the wrong level.
    elsewhere = [p for c in app.tree.commands for p in c.parameters if not p.positional]
    shorts = [p for p in flags if any(len(f) == 2 for f in p.flags)]
    chunks: list[list[str]] = []
    for parameter in flags:
        if parameter.required and draw(st.integers(0, 5)) > 0:
            chunks.append(flag_words(draw, parameter, shorts))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 11))
        if kind <= 6 and flags:
            chunks.append(flag_words(draw, draw(st.sampled_from(flags)), shorts))
        elif kind == 7:
            chunks.append(flag_words(draw, draw(st.sampled_from(elsewhere)), shorts))
        elif kind <= 9:
            chunks.append([draw(st.sampled_from(POSITIONAL))])
        else:
            chunks.append([draw(st.sampled_from(JUNK))])
    settings_ = node.settings
    positional = next((p for p in node.parameters if p.positional), None)
    if positional is not None:
        low = settings_.min_args
        high = settings_.max_args if settings_.max_args is not None else low + 2
        words = positional.choices or ["x", "y", "pods"]
        for _ in range(draw(st.integers(max(low - 1, 0), high + 1))):
            chunks.append([str(draw(st.sampled_from(words)))])
    # The command words first, usually; flags before them sometimes (cobra strips them).
    order = draw(st.permutations(range(len(chunks))))
    body = [word for index in order for word in chunks[index]]
    head = command_words(draw, app, path)
    if body and head and draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(head)))
        lead = draw(st.integers(1, min(2, len(body))))
        return head[:at] + body[:lead] + head[at:] + body[lead:]
    return head + body


BATCH = 40


def run_differential(app: CobraApp, examples: int) -> Counter[str]:
    tally: Counter[str] = Counter()

    @settings(
        max_examples=max(1, examples // BATCH),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(batch=st.lists(argvs(app), min_size=BATCH, max_size=BATCH))
    def agree(batch: list[list[str]]) -> None:
        check(app, batch, tally)

    agree()
    return tally


@pytest.mark.parametrize(("name", "examples"), [("kit", 2400), ("traverse", 800), ("single", 400)])
def test_the_cobra_dialect_equals_cobra(
    apps: dict[str, CobraApp], name: str, examples: int
) -> None:
    tally = run_differential(apps[name], examples)
    total = tally[ACCEPTED] + tally[REJECTED]
    assert total >= examples, tally
    # Both verdicts common, and most accepted argvs had their values compared.
    assert tally[ACCEPTED] >= total // 8, tally
    assert tally[REJECTED] >= total // 8, tally
    assert tally[COMPARED] >= tally[ACCEPTED] // 2, tally


PINNED: list[tuple[str, list[str]]] = [
    # Find strips what looks like a flag and its value, then removes the command's first word.
    ("kit", ["-c", "get", "get", "x"]),
    ("kit", ["--config", "get", "get"]),
    ("kit", ["-c", "f", "get", "x"]),
    ("kit", ["get", "-o", "get", "x"]),
    ("kit", ["-h", "get"]),
    ("kit", ["--help", "x", "get"]),
    ("kit", ["--debug", "group", "span", "a"]),
    ("kit", ["group", "-z", "none", "none"]),
    ("kit", ["x", "--help"]),
    ("kit", ["get", "x", "--help", "--bogus"]),
    ("kit", ["get", "x", "-Ah"]),
    ("kit", ["get", "x", "-test.v"]),
    ("kit", ["get", "x", "-AVV", "-lV"]),
    ("kit", ["get", "x", "-l=3", "-o=json", "-ojson"]),
    ("kit", ["get", "x", "--color", "always"]),
    ("kit", ["get", "x", "--level"]),
    ("kit", ["get", "x", "--old"]),
    ("kit", ["get", "x", "--all=false", "--limit", "2"]),
    ("kit", ["get", "x", "--tag", '"a,b",c', "-t", "d"]),
    ("kit", ["get", "x", "--share", "16777217"]),
    ("kit", ["group", "nested", "other", "--dry-run"]),
    ("kit", ["group", "nested", "leaf", "--name", "n", "extra"]),
    ("kit", ["group", "pick", "green\tthe colour of grass"]),
    ("kit", ["group", "other"]),
    ("kit", ["exec", "--tty", "ls", "-s", "bash"]),
    ("kit", ["exec", "-s"]),
    ("kit", ["raw"]),
    ("kit", ["deploy", "--env=p", "--json=false", "--yaml"]),
    ("kit", ["deploy", "--env", "p", "--user", "u", "--password", "p", "--", "x"]),
    ("kit", ["legacy"]),
    ("kit", ["login"]),
    ("kit", ["login", "--web=false"]),
    ("kit", ["--config", "x", "get", "x", "--bool"]),
    ("kit", ["-o", "get", "get"]),
    ("kit", ["help", "get"]),
    ("kit", ["completion", "bash"]),
    ("kit", ["--version", "get"]),
    ("traverse", ["--region", "eu", "cluster", "create", "n", "-n", "3"]),
    ("traverse", ["-r", "eu", "--retries", "2", "cluster", "--project", "p", "ls"]),
    ("traverse", ["--help", "cluster"]),
    ("traverse", ["cluster", "-a", "list", "-a"]),
    ("traverse", ["--retries", "1", "cluster", "create", "x", "-n", "2", "--retries", "3"]),
    ("traverse", ["cluster", "create", "--region", "x", "-n", "1"]),
    ("traverse", ["x"]),
    ("traverse", ["--quiet", "x", "cluster"]),
    ("single", ["a", "-n", "b", "--set", "k=v"]),
    ("single", ["-nq", "--count=3"]),
    ("single", ["--", "-n"]),
]


def test_pinned_command_lines(apps: dict[str, CobraApp]) -> None:
    tally: Counter[str] = Counter()
    for name in ("kit", "traverse", "single"):
        argvs_ = [argv for app, argv in PINNED if app == name]
        check(apps[name], argvs_, tally)
    assert tally[ACCEPTED], tally
    assert tally[REJECTED], tally


def test_the_comparison_catches_a_model_that_skips_the_flag_groups(
    apps: dict[str, CobraApp],
) -> None:
    app = apps["kit"]
    argv = ["deploy", "--env", "p", "--json", "--yaml"]
    [verdict] = app.judge([argv])

    def blind(binding: Binding) -> list[Problem]:
        return [p for p in model_problems(binding) if p.code != "mutually-exclusive"]

    assert disagreement(app, argv, verdict, Counter()) is None
    assert disagreement(app, argv, verdict, Counter(), blind) is not None


def test_the_comparison_catches_a_wrong_value(apps: dict[str, CobraApp]) -> None:
    app = apps["kit"]
    argv = ["get", "x", "--tag", "a,b"]
    [verdict] = app.judge([argv])
    wrong = verdict.model_copy(update={"given": {**verdict.given, "tag": ["a,b"]}})
    assert disagreement(app, argv, verdict, Counter()) is None
    assert disagreement(app, argv, wrong, Counter()) is not None
