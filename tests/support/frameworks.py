"""The frameworks' own verdicts, for differential tests: does the real parser accept an argv?"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Sequence
from typing import Any


def click_accepts(command: Any, argv: Sequence[str], *, program: str = "notes") -> bool:
    """Whether Click (or Typer's bundled Click) parses ``argv`` through the command chain.

    ``make_context`` parses one level; a group's leftover words name the subcommand, which is
    resolved with the group's own ``resolve_command`` and parsed in turn, exactly as
    ``Group.invoke`` would, without running any callback.
    """
    exit_, usage_error, click_exception = _click_exceptions(command)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            context = command.make_context(program, list(argv))
            while callable(getattr(context.command, "resolve_command", None)):
                group = context.command
                words = [*context._protected_args, *context.args]
                if not words:
                    return bool(getattr(group, "invoke_without_command", False))
                name, sub, rest = group.resolve_command(context, words)
                context = sub.make_context(name, rest, parent=context)
        except exit_:
            return True
        except (usage_error, click_exception):
            return False
    return True


def _click_exceptions(command: Any) -> tuple[Any, Any, Any]:
    if type(command).__module__.startswith("typer"):
        import typer._click.exceptions as bundled
        import typer.exceptions

        return typer.exceptions.Exit, bundled.UsageError, bundled.ClickException
    import click

    return click.exceptions.Exit, click.UsageError, click.ClickException


class ParserRejected(Exception):
    """argparse called ``error()``."""


def argparse_accepts(parser: argparse.ArgumentParser, argv: Sequence[str]) -> bool:
    """Whether ``parser.parse_args(argv)`` succeeds, with ``error()`` made to raise.

    ``exit_on_error=False`` does not stop every error from exiting on 3.11, so ``error`` is
    replaced on the parser and every subparser, as CPython's own tests do. ``--help`` and
    ``--version`` exit with status 0: accepted.
    """
    for each in _all_parsers(parser):
        each.error = _raise  # type: ignore[method-assign]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            parser.parse_args(list(argv))
        except ParserRejected:
            return False
        except argparse.ArgumentError:
            return False
        except SystemExit as exit_:
            return exit_.code in (0, None)
    return True


def _raise(message: str) -> None:
    raise ParserRejected(message)


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action._name_parser_map.values()):
                found.extend(_all_parsers(child))
    return found
