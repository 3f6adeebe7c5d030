"""Field verdicts: exampleguard's final verdict on a real third-party Click CLI, against the CLI.

The reference is the CLI's own parse as it runs for a user: Click's ``make_context`` through the
command chain, each group's own ``resolve_command``, and — unlike exampleguard's judge, which
runs no application code it can avoid — each group's callback, invoked as ``Group.invoke``
invokes it (``invoked_subcommand`` set first), so option types that read ``ctx.obj`` find it.
No command's own callback runs.

exampleguard's final verdict is the pipeline's rule (SPEC 4): the judge's verdict where it has
one; where application code raised while the judge parsed (no verdict), the model's. The
argument object is the judge's where it accepted, else the model's. Both must equal the
reference: the same verdict and, where both accept, the same values. A value the application
converts (a custom type, a ``Choice`` subclass with its own ``convert``) is the word as written
on exampleguard's side; it is compared by converting that word with the parameter's own
``type_cast_value`` in the reference's context, which must give what the program received.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exampleguard._adapters.clickfamily import extract_click, parameter_names
from exampleguard._adapters.judge_click import ClickJudge
from exampleguard._adapters.verdict import ParseVerdict
from exampleguard._bind import Binding, Memo, bind
from exampleguard._catalog import Catalog
from exampleguard._catalogfile import LoadedCatalog
from exampleguard._contract import Contract, EffectiveTool
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._rules import arguments_of
from exampleguard._snapshot import Tree
from exampleguard._verdicts import compare, real_arguments
from tests.support.bound_values import as_argument, same


@dataclass(frozen=True)
class Reference:
    """The CLI's own parse: its verdict and, when it ran to its end, each level's context."""

    accepted: bool
    levels: list[Any] = field(default_factory=list)
    why: str = ""
    crashed: bool = False
    """The CLI's own code raised something other than a usage error: no verdict to compare."""


@dataclass(frozen=True)
class Final:
    """exampleguard's final verdict on one argv, as the pipeline decides it."""

    accepted: bool
    by: str
    """``framework`` (the judge decided) or ``model`` (application code raised in the judge)."""
    values: dict[str, Any] | None
    eager: bool
    mismatch: bool
    """Whether the pipeline would raise ``model-mismatch`` for it."""
    codes: tuple[str, ...]
    verdict: ParseVerdict


def bare_contract(tree: Tree) -> Contract:
    """One tool per runnable command, declaring nothing: the tree decides everything."""
    tools = [
        {"id": f"tool{index}", "command": command.path}
        for index, command in enumerate(tree.commands)
        if command.runnable
    ]
    catalog = Catalog.model_validate(
        {"format": "exampleguard.catalog/v1", "program": tree.program, "tools": tools}
    )
    document = Document(Path("catalog.json"), "catalog.json", "{}", {}, "json")
    return build_contract(LoadedCatalog(catalog, document), tree)


@dataclass
class FieldCLI:
    """One real CLI under test: its live command, exampleguard's tree and judge of it."""

    name: str
    program: str
    command: Any
    prefix: tuple[str, ...] = ()
    """Words every argv starts with (celery's ``-A APP``, which the reference must import)."""
    tree: Tree = field(init=False)
    contract: Contract = field(init=False)
    judge: ClickJudge = field(init=False)
    memo: Memo = field(init=False, default_factory=Memo)

    def __post_init__(self) -> None:
        self.tree = Tree.model_validate(extract_click(self.command, self.program))
        self.contract = bare_contract(self.tree)
        self.judge = ClickJudge(self.command, self.program)

    def reference(self, argv: Sequence[str]) -> Reference:
        """The CLI's own parse of ``argv`` (after :attr:`prefix`), group callbacks run."""
        return reference_parse(self.command, [*self.prefix, *argv], self.program)

    def final(self, argv: Sequence[str]) -> Final:
        """exampleguard's final verdict on ``argv`` (after :attr:`prefix`)."""
        words = [*self.prefix, *argv]
        verdict = self.judge.judge(words)
        binding = bind(self.contract, [self.program, *words], self.memo)
        problems = [p for p in binding.problems if p.code != "repeated-option"]
        model = _model_arguments(binding)
        if not verdict.decided:
            return Final(
                accepted=not problems,
                by="model",
                values=None if problems or binding.eager else model,
                eager=binding.eager,
                mismatch=False,
                codes=tuple(p.code for p in problems),
                verdict=verdict,
            )
        real = None
        if verdict.accepted and not verdict.eager and verdict.path is not None:
            real = real_arguments(_tool_at(self.contract, verdict.path), self.contract, verdict)
        comparison = compare(binding, problems, model, real, verdict)
        return Final(
            accepted=verdict.accepted,
            by="framework",
            values=real,
            eager=verdict.eager,
            mismatch=not comparison.agree,
            codes=tuple(p.code for p in problems),
            verdict=verdict,
        )


def _model_arguments(binding: Binding) -> dict[str, Any] | None:
    node = binding.node
    if node is None or node.tool is None:
        return None
    return arguments_of(node.tool, binding)


def _tool_at(contract: Contract, path: Sequence[str]) -> EffectiveTool:
    node = contract.root
    for word in path:
        node = node.children[word]
    assert node.tool is not None, path
    return node.tool


@contextlib.contextmanager
def _environment_kept() -> Iterator[None]:
    # A group callback may set environment variables (celery's --broker); put them back.
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def reference_parse(command: Any, argv: list[str], program: str) -> Reference:
    """``command``'s parse of ``argv`` as ``main`` and ``Group.invoke`` run it, commands aside."""
    exceptions = _exceptions(command)
    sink = io.StringIO()
    levels: list[Any] = []
    with (
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
        _environment_kept(),
        contextlib.ExitStack() as closing,
    ):
        try:
            context = closing.enter_context(command.make_context(program, list(argv)))
            levels.append(context)
            while callable(getattr(context.command, "resolve_command", None)):
                group = context.command
                protected = vars(context).get(
                    "_protected_args", vars(context).get("protected_args")
                )
                words = [*(protected or ()), *context.args]
                if not words:
                    if not getattr(group, "invoke_without_command", False):
                        return Reference(False, why="no subcommand")
                    _invoke_callback(group, context, None)
                    return Reference(True, levels)
                name, sub, rest = group.resolve_command(context, words)
                _invoke_callback(group, context, name)
                context = closing.enter_context(sub.make_context(name, rest, parent=context))
                levels.append(context)
        except exceptions as error:
            if type(error).__name__ == "Exit":
                code = getattr(error, "exit_code", 0)
                # Help asked for is a valid command line; help printed unasked is not.
                asked = _asks_help(command, argv) or not _printed_help(sink)
                return Reference(code == 0 and asked, why=f"exit {code}")
            return Reference(False, why=f"{type(error).__name__}: {error}")
        except SystemExit as error:
            return Reference(error.code in (0, None), why=f"SystemExit {error.code}")
        except Exception as error:
            # The CLI itself crashes on this command line, a traceback for its user: no
            # verdict either (celery's `-P eventlet` imports eventlet as it converts, which
            # only some installations have).
            return Reference(False, crashed=True, why=f"{type(error).__name__}: {error}")
    return Reference(True, levels)


def _asks_help(command: Any, argv: list[str]) -> bool:
    settings = getattr(command, "context_settings", None) or {}
    names = set(settings.get("help_option_names", ["--help"]))
    # A bundle of short options with the short help option among them (`-hh`) asks too.
    letters = {name[1] for name in names if len(name) == 2 and name[0] == "-"}
    return any(
        word in names
        or (len(word) > 2 and word[0] == "-" and word[1] != "-" and bool(letters & set(word)))
        for word in argv
    )


def _printed_help(sink: io.StringIO) -> bool:
    return sink.getvalue().lstrip().startswith("Usage:")


def _invoke_callback(group: Any, context: Any, name: str | None) -> None:
    # As Group.invoke does: the subcommand's name is known before the group's callback runs.
    context.invoked_subcommand = name
    if group.callback is not None:
        context.invoke(group.callback, **context.params)


def _exceptions(command: Any) -> tuple[type[BaseException], ...]:
    if type(command).__module__.startswith("typer"):
        import typer._click.exceptions as bundled
        import typer.exceptions

        # Typer's bundled Click: its usage errors, and Typer's own Exit and Abort.
        return (bundled.ClickException, typer.exceptions.Exit, typer.exceptions.Abort)
    import click
    import click.exceptions

    return (click.ClickException, click.exceptions.Exit, click.exceptions.Abort)


def reference_values(levels: list[Any]) -> dict[str, tuple[Any, Any, Any]]:
    """What the command line gave, by snapshot name: the value, its parameter and its context."""
    given: dict[str, tuple[Any, Any, Any]] = {}
    for context in levels:
        for param, name in parameter_names(context.command, context):
            key = param.name
            if key is None:
                continue
            source = context.get_parameter_source(key)
            value = context.params.get(key)
            if getattr(source, "name", None) != "COMMANDLINE" or value in (None, ()):
                continue
            given[name] = (value, param, context)
    return given


def unchecked(param: Any, *, files: bool = True) -> bool:
    """Whether SPEC 4 leaves ``param``'s values unchecked: a custom type, files, a callback.

    Such a parameter's words are taken as strings: its values are never generated wrong (a
    CLI rejecting one is application code, not the framework's parse).
    """
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return False
    if getattr(param, "callback", None) is not None:
        return True
    param_type = getattr(param, "type", None)
    mro = type(param_type).__mro__
    base = next((cls for cls in reversed(mro) if cls.__name__ == "ParamType"), None)
    owner = next((cls for cls in mro if "convert" in vars(cls)), None)
    framework = base.__module__ if base is not None else ""
    if type(param_type).__name__ in ("File", "Path"):
        # File existence is not checked (SPEC 4); a test that makes every word a file may
        # generate them all the same (files=False).
        return files
    return (
        owner is not None
        and owner.__module__ != framework
        and not any(cls.__name__ == "Choice" and cls.__module__ == framework for cls in mro)
    )


def _converted_by_application(param: Any) -> bool:
    """Whether exampleguard keeps ``param``'s value as the word written (SPEC 4)."""
    if not getattr(param, "is_flag", False) and getattr(param, "callback", None) is not None:
        return True
    param_type = getattr(param, "type", None)
    mro = type(param_type).__mro__
    base = next((cls for cls in reversed(mro) if cls.__name__ == "ParamType"), None)
    owner = next((cls for cls in mro if "convert" in vars(cls)), None)
    framework = base.__module__ if base is not None else ""
    return (
        owner is None
        or owner.__module__ != framework
        or type(param_type).__name__
        in (
            "File",
            "Path",
        )
    )


def value_differences(final: dict[str, Any], levels: list[Any]) -> list[str]:
    """Where exampleguard's argument object and what the program received differ."""
    expected = reference_values(levels)
    differences: list[str] = []
    for name in sorted(set(expected) | set(final)):
        if name not in expected or name not in final:
            differences.append(
                f"{name}: the CLI has {expected.get(name, ('nothing',))[0]!r}, "
                f"exampleguard {final.get(name, 'nothing')!r}"
            )
            continue
        value, param, context = expected[name]
        ours = final[name]
        if _converted_by_application(param) and not isinstance(ours, bool):
            # The word as written: the application's own conversion of it must give the value.
            with contextlib.redirect_stdout(io.StringIO()):
                # Its type and its callback, as Click processes a value.
                ours_converted = param.process_value(context, ours)
                _close(ours_converted)
            matches = same(as_argument(value), as_argument(ours_converted))
            if not matches and ours_converted != value:
                differences.append(
                    f"{name}: the CLI has {value!r}, exampleguard's {ours!r} converts to "
                    f"{ours_converted!r}"
                )
        elif not same(as_argument(value), ours):
            differences.append(f"{name}: the CLI has {as_argument(value)!r}, exampleguard {ours!r}")
    return differences


def _close(value: Any) -> None:
    # A file type opens what it converts (click.File("rb") is not lazy): its name is compared.
    for item in value if isinstance(value, tuple | list) else (value,):
        if isinstance(item, io.IOBase) or type(item).__name__ == "LazyFile":
            item.close()


ACCEPTED, REJECTED, COMPARED = "accepted", "rejected", "values compared"
BY_MODEL, MISMATCHES, FALSE_ACCEPTS = "judged by the model", "model-mismatch", "false accepts"
CLI_CRASHED = "the CLI itself raised (not compared)"


def field_disagreement(cli: FieldCLI, argv: Sequence[str], tally: Counter[str]) -> str | None:
    """Where exampleguard's final verdict on ``argv`` differs from the CLI's own, or ``None``."""
    expected = cli.reference(argv)
    final = cli.final(argv)
    if expected.crashed:
        tally[CLI_CRASHED] += 1
        return None
    tally["judged"] += 1
    tally[ACCEPTED if expected.accepted else REJECTED] += 1
    if final.by == "model":
        tally[BY_MODEL] += 1
    if final.mismatch:
        tally[MISMATCHES] += 1
    shown = f"{cli.program} {' '.join([*cli.prefix, *argv])!r}"
    if final.accepted != expected.accepted:
        if final.accepted:
            tally[FALSE_ACCEPTS] += 1
        return (
            f"verdicts differ for {shown}: the CLI {'accepts' if expected.accepted else 'rejects'}"
            f" ({expected.why or 'ran to its end'}), exampleguard "
            f"{'accepts' if final.accepted else 'rejects'} (by the {final.by}: "
            f"{final.codes or final.verdict.to_json()})"
        )
    if expected.accepted and expected.levels and not final.eager and final.values is not None:
        tally[COMPARED] += 1
        differences = value_differences(final.values, expected.levels)
        if differences:
            return f"values differ for {shown}: " + "; ".join(differences)
    tally["agreed"] += 1
    return None


Check = Callable[[FieldCLI, Sequence[str], Counter[str]], str | None]


def run_table(cli: FieldCLI, argvs: Sequence[Sequence[str]]) -> tuple[Counter[str], list[str]]:
    """Judge every argv of a table; the tally and every disagreement found."""
    tally: Counter[str] = Counter()
    found = [m for argv in argvs if (m := field_disagreement(cli, argv, tally)) is not None]
    return tally, found


def unchecked_flags(command: Any, program: str, *, files: bool = True) -> frozenset[str]:
    """Every option string of every parameter :func:`unchecked` says SPEC 4 leaves unchecked."""
    flags: set[str] = set()
    pending = [(command, command.make_context(program, [], resilient_parsing=True))]
    while pending:
        current, context = pending.pop()
        for param in current.get_params(context):
            if getattr(param, "param_type_name", None) == "option" and unchecked(
                param, files=files
            ):
                flags.update(getattr(param, "opts", ()) or ())
                flags.update(getattr(param, "secondary_opts", ()) or ())
        if callable(getattr(current, "list_commands", None)):
            for name in current.list_commands(context):
                child = current.get_command(context, name)
                if child is not None:
                    pending.append(
                        (
                            child,
                            child.make_context(name, [], parent=context, resilient_parsing=True),
                        )
                    )
    return frozenset(flags)
