"""The frameworks' own verdicts, for differential tests: does the real parser accept an argv?"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn


@dataclass(frozen=True)
class Parsed:
    """What a framework's parser made of an argv.

    ``accepted`` is its verdict. ``levels`` holds what the program would receive when the parse
    ran to its end: Click's context of each level, root first, or argparse's one namespace.
    It is empty when the parser stopped early (an eager ``--help`` or ``--version`` exits before
    the values are complete) or rejected the argv.
    """

    accepted: bool
    levels: list[Any] = field(default_factory=list)


def click_parse(command: Any, argv: Sequence[str], *, program: str = "notes") -> Parsed:
    """Click's (or Typer's bundled Click's) parse of ``argv`` through the command chain.

    ``make_context`` parses one level; a group's leftover words name the subcommand, which is
    resolved with the group's own ``resolve_command`` and parsed in turn, exactly as
    ``Group.invoke`` would, without running any callback.
    """
    exit_, usage_error, click_exception = _click_exceptions(command)
    sink = io.StringIO()
    contexts: list[Any] = []
    # Closing runs what the parse registered for the end of the command (closing the files
    # ``click.File`` opened); the values stay readable.
    with (
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
        contextlib.ExitStack() as closing,
    ):
        try:
            context = command.make_context(program, list(argv))
            closing.callback(context.close)
            contexts.append(context)
            while callable(getattr(context.command, "resolve_command", None)):
                group = context.command
                # Click 8.2 renamed protected_args to _protected_args.
                protected = vars(context).get(
                    "_protected_args", vars(context).get("protected_args")
                )
                words = [*(protected or ()), *context.args]
                if not words:
                    accepted = bool(getattr(group, "invoke_without_command", False))
                    return Parsed(accepted, contexts if accepted else [])
                name, sub, rest = group.resolve_command(context, words)
                context = sub.make_context(name, rest, parent=context)
                closing.callback(context.close)
                contexts.append(context)
        except exit_:
            # Click 8.1 prints the help of a command given no arguments (no_args_is_help) and
            # exits 0, where 8.2 and later raise: either way an example that ends in the help
            # text without asking for it is a defect, stricter on purpose.
            help_words = set(
                (getattr(command, "context_settings", None) or {}).get(
                    "help_option_names", ["--help"]
                )
            )
            asked = any(word in help_words or _bundles(word, help_words) for word in argv)
            return Parsed(asked or not sink.getvalue().startswith("Usage:"))
        except (usage_error, click_exception):
            return Parsed(False)
        except SystemExit as exit_:
            # A group's own routing may exit (Typer's `typer` command, when a word names no
            # importable application).
            return Parsed(exit_.code in (0, None))
    return Parsed(True, contexts)


def _bundles(word: str, help_words: set[str]) -> bool:
    """Whether ``word`` is a bundle of short options with a short help option among them.

    Click reads ``-depth`` as ``-d -e -p -t -h`` and, on a group that ignores unknown options,
    skips the unknown letters and ends at ``-h``: the help was asked for.
    """
    letters = {name[1] for name in help_words if len(name) == 2 and name[0] == "-"}
    return len(word) > 2 and word[0] == "-" and word[1] != "-" and bool(letters & set(word[1:]))


def click_accepts(command: Any, argv: Sequence[str], *, program: str = "notes") -> bool:
    """Whether Click (or Typer's bundled Click) parses ``argv`` through the command chain."""
    return click_parse(command, argv, program=program).accepted


def _click_exceptions(command: Any) -> tuple[Any, Any, Any]:
    if type(command).__module__.startswith("typer"):
        import typer._click.exceptions as bundled
        import typer.exceptions

        return typer.exceptions.Exit, bundled.UsageError, bundled.ClickException
    import click

    return click.exceptions.Exit, click.UsageError, click.ClickException


class ParserRejected(Exception):
    """argparse called ``error()``."""


def argparse_parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> Parsed:
    """``parser.parse_args(argv)``, with ``error()`` made to raise.

    ``exit_on_error=False`` does not stop every error from exiting on 3.11, so ``error`` is
    replaced on the parser and every subparser, as CPython's own tests do. ``--help`` and
    ``--version`` exit with status 0: accepted, with no namespace.
    """
    for each in _all_parsers(parser):
        each.error = _raise  # type: ignore[method-assign]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            namespace = parser.parse_args(list(argv))
        except ParserRejected:
            return Parsed(False)
        except argparse.ArgumentError:
            return Parsed(False)
        except SystemExit as exit_:
            return Parsed(exit_.code in (0, None))
    return Parsed(True, [namespace])


def argparse_accepts(parser: argparse.ArgumentParser, argv: Sequence[str]) -> bool:
    """Whether ``parser.parse_args(argv)`` succeeds (``--help`` and ``--version`` do)."""
    return argparse_parse(parser, argv).accepted


def _raise(message: str) -> NoReturn:
    raise ParserRejected(message)


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action._name_parser_map.values()):
                found.extend(_all_parsers(child))
    return found
