"""argparse's own parser as the judge: ``parse_args`` on the live parser, made to raise.

``error()`` and ``exit()`` are replaced on the parser and on every subparser for the duration
of a batch of parses, and put back when it ends, however it ends: on 3.11
``exit_on_error=False`` still exits on some errors, so, as CPython's own tests do, ``error()``
raises instead, and ``exit()`` (help, version, an action that exits) raises too.
``exit_on_error`` is turned off meanwhile, so most errors arrive as the structured
``ArgumentError`` they start as.

What SPEC 4 leaves unchecked is neutralised for the batch only: values of types other than
``str``, ``int`` and ``float`` (``FileType``, paths, the application's own callables) are taken
as strings, and the choices of such values are not compared (a choice is compared after a
conversion that did not happen). ``@file`` arguments (``fromfile_prefix_chars``) are read as
argparse reads them — each line through the parser's own ``convert_arg_line_to_args``, the
words it gives read again — from the project folder, through the reader the loading stage uses
(:func:`~exampleguard._argfiles.read_argument_file`), so the model and the judge see the same
lines, and nothing outside the project (nor a FIFO) is ever opened. Custom actions run as the
application wrote them: they are how argparse stores a value.

Each conversion argparse makes is observed (``_get_values``), which tells exactly which action
received which words, and which subparser the command line reached.

The parse is ``parse_args`` as argparse defines it (SPEC 4), or ``parse_intermixed_args``
where the configuration says the program parses that way: an application's override is
called only where it can be called as argparse's own is (``parse_args(args, namespace)``); one
with another signature is not, and ``ArgumentParser``'s own method parses instead.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import inspect
import itertools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from exampleguard._adapters._common import OutputSink, Shadows, group_aliases
from exampleguard._adapters.argparser import action_names
from exampleguard._adapters.verdict import (
    APPLICATION_ERROR,
    GivenValue,
    ParseVerdict,
    as_json_value,
    raised,
)
from exampleguard._argfiles import read_argument_file

__all__ = ["ArgparseJudge"]

_CONVERTED_TYPES = (None, str, int, float)


class _Rejected(Exception):
    """``error()`` was called."""


class _Exited(Exception):
    """``exit()`` was called."""

    def __init__(self, status: int, message: str | None) -> None:
        super().__init__(status, message)
        self.status = status


class _Level:
    """One parser of the tree: where it is, and how its actions are named."""

    def __init__(self, parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        self.parser = parser
        self.path = path
        self.names = action_names(parser)
        # What this parser sets in a namespace of its own whatever the argv: argparse parses a
        # subcommand into a fresh namespace and copies all of it over its parent's, so a parent's
        # value for one of these destinations never reaches the program.
        self.sets = {
            action.dest
            for action in parser._actions
            if action.dest is not argparse.SUPPRESS and action.default is not argparse.SUPPRESS
        } | set(parser._defaults)
        self.children: dict[str, tuple[str, argparse.ArgumentParser]] = {}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child, aliases in group_aliases(action._name_parser_map.items()):
                    for word in (name, *aliases):
                        self.children[word] = (name, child)


_Taken = list[tuple[_Level, argparse.Action, list[str], Any]]
"""Each conversion of one parse: the level, the action, its words and the converted value."""


class _Observed:
    """The parse under way, which the neutralised parsers report to."""

    def __init__(self) -> None:
        self.taken: _Taken = []
        self.path: list[str] = []


class ArgparseJudge:
    """Parses argvs with one live ``ArgumentParser`` tree, a batch at a time."""

    def __init__(
        self,
        parser: argparse.ArgumentParser,
        *,
        intermixed: bool = False,
        root: Path | None = None,
    ) -> None:
        """Judge with ``parser``; ``intermixed``: as ``parse_intermixed_args`` parses.

        ``root`` is the project folder ``@file`` arguments are read from (default: the current
        directory, which the child makes the project's).
        """
        self.parser = parser
        self.root = root
        method = "parse_intermixed_args" if intermixed else "parse_args"
        self._parse_args = _framework_parse(parser, method)
        self.levels: dict[int, _Level] = {}
        pending: list[tuple[argparse.ArgumentParser, tuple[str, ...]]] = [(parser, ())]
        while pending:
            each, path = pending.pop()
            if id(each) in self.levels:
                continue
            level = self.levels[id(each)] = _Level(each, path)
            pending.extend((child, (*path, name)) for name, child in level.children.values())

    def judge_all(self, argvs: Sequence[Sequence[str]]) -> list[ParseVerdict]:
        """The framework's verdict on each argv, in order, from one neutralisation of the tree.

        Each verdict is the one :meth:`judge` gives alone: a parse's own record starts empty.
        Everything neutralised is put back when the batch ends, an interrupt included.
        """
        return [verdict for run in self.judge_runs(argvs, len(argvs) or 1) for verdict in run]

    def judge(self, argv: Sequence[str]) -> ParseVerdict:
        """The framework's verdict on ``argv`` (the words after the program)."""
        return self.judge_all([argv])[0]

    def judge_runs(self, argvs: Sequence[Sequence[str]], size: int) -> Iterator[list[ParseVerdict]]:
        """The verdicts of :meth:`judge_all`, handed out ``size`` at a time as they are made.

        One batch: every parser of the tree stays neutralised from the first parse until the
        iteration ends (or is closed), and is put back then. The application's output is
        caught while a run of parses is under way, never between two runs.
        """
        parse = _Observed()
        sink = OutputSink()
        shadows = Shadows()
        pending = iter(argvs)
        try:
            for level in self.levels.values():
                self._neutralise(level, parse, shadows, sink)
            while True:
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                    run = [
                        self._judge_one(argv, parse, sink)
                        for argv in itertools.islice(pending, size)
                    ]
                if not run:
                    return
                yield run
        finally:
            shadows.restore()

    def _judge_one(self, argv: Sequence[str], parse: _Observed, sink: OutputSink) -> ParseVerdict:
        # A parse's own record: what the observed conversions report goes here.
        taken = parse.taken = []
        path = parse.path = []
        sink.clear()
        try:
            namespace = self._parse_args(list(argv))
        except (_Exited, SystemExit) as exit_:
            status = exit_.status if isinstance(exit_, _Exited) else exit_.code
            return self._exited(path, taken, status, sink.getvalue())
        except _Rejected as error:
            return self._rejected(path, "ArgumentError", str(error))
        except argparse.ArgumentError as error:
            return self._argument_error(path, error)
        except KeyboardInterrupt:
            raise
        except Exception as error:
            # argparse turns its own errors and a type's ValueError, TypeError and
            # ArgumentTypeError into ArgumentError: anything else is the application's code (an
            # action, a type) raising. No verdict: the model judges (SPEC 4).
            return ParseVerdict(
                accepted=False, path=tuple(path), error=APPLICATION_ERROR, message=raised(error)
            )
        return ParseVerdict(
            accepted=True, path=tuple(path), given=tuple(self._given(taken, namespace, path))
        )

    def _exited(
        self,
        path: list[str],
        taken: list[tuple[_Level, argparse.Action, list[str], Any]],
        status: object,
        output: str,
    ) -> ParseVerdict:
        """The verdict on a parse that exited: an eager option, or the parser's own shortcut.

        An action that exits with status 0 (``--help``, ``--version`` and their kind) ended
        the parse: accepted, as eager. A parser that prints its help and exits without an
        option asking for it (a ``parse_args`` that shows the help when given no arguments)
        teaches an agent nothing, whatever its exit status.
        """
        last = taken[-1][1] if taken else None
        asked = last is not None and bool(last.option_strings) and last.nargs == 0
        if not asked and output.lstrip().lower().startswith("usage:"):
            return self._rejected(
                path, "NoArgsIsHelpError", "the parser printed its help and exited"
            )
        if status in (0, None):
            return ParseVerdict(accepted=True, path=tuple(path), eager=True)
        return self._rejected(path, "Exit", f"the parser exited with status {status}")

    def _neutralise(
        self, level: _Level, parse: _Observed, shadows: Shadows, sink: OutputSink
    ) -> None:
        parser = level.parser
        get_values = type(parser)._get_values.__get__(parser)
        get_value = type(parser)._get_value.__get__(parser)
        check_value = type(parser)._check_value.__get__(parser)

        def observed(action: argparse.Action, arg_strings: list[str]) -> Any:
            value = get_values(action, arg_strings)
            if isinstance(action, argparse._SubParsersAction) and value:
                found = level.children.get(str(value[0]))
                parse.path.append(found[0] if found else str(value[0]))
            else:
                parse.taken.append((level, action, list(arg_strings), value))
            return value

        def as_string(action: argparse.Action, arg_string: str) -> Any:
            if action.type in _CONVERTED_TYPES:
                return get_value(action, arg_string)
            return arg_string

        def checked(action: argparse.Action, value: Any) -> None:
            if action.type in _CONVERTED_TYPES or isinstance(action, argparse._SubParsersAction):
                check_value(action, value)

        def error(message: str) -> None:
            raise _Rejected(message)

        def exit_(status: int = 0, message: str | None = None) -> None:
            raise _Exited(status, message)

        def print_message(message: str, file: Any = None) -> None:  # noqa: ARG001 - argparse's signature
            # argparse's own: into the batch's sink. An application's override may need state
            # its own parse_args sets first (httpie's prints through `self.env`): help and
            # version end a parse as eager options, whatever the application prints with.
            if message:
                sink.write(message)

        root = self.root or Path.cwd()

        def read_args_from_files(arg_strings: list[str]) -> list[str]:
            # argparse's _read_args_from_files, step for step, with the project's reader.
            chars = parser.fromfile_prefix_chars or ""
            expanded: list[str] = []
            for arg_string in arg_strings:
                if not arg_string or arg_string[0] not in chars:
                    expanded.append(arg_string)
                    continue
                read = read_argument_file(root, arg_string[1:])
                if read.error is not None:
                    parser.error(read.error)
                convert = parser.convert_arg_line_to_args
                words = [arg for line in read.lines for arg in convert(line)]
                expanded.extend(parser._read_args_from_files(words))
            return expanded

        for attribute, replacement in (
            ("_get_values", observed),
            ("_get_value", as_string),
            ("_check_value", checked),
            ("error", error),
            ("exit", exit_),
            ("exit_on_error", False),
            ("_read_args_from_files", read_args_from_files),
            ("_print_message", print_message),
        ):
            shadows.set(parser, attribute, replacement)

    def _given(
        self,
        taken: list[tuple[_Level, argparse.Action, list[str], Any]],
        namespace: Any,
        path: Sequence[str],
    ) -> list[GivenValue]:
        """What each action the command line reached received, in the argument object's terms."""
        # One action object may serve several parsers (``parents=``): its occurrences are counted
        # per parser, as each parser's namespace holds them.
        by_action: dict[tuple[int, int], list[tuple[_Level, argparse.Action, list[str], Any]]] = {}
        for item in taken:
            by_action.setdefault((id(item[0]), id(item[1])), []).append(item)
        deeper = [level for level in self.levels.values() if level.path]
        given: list[GivenValue] = []
        for occurrences in by_action.values():
            level, action, _, _ = occurrences[0]
            name = level.names.get(id(action))
            if name is None or isinstance(action, argparse._HelpAction | argparse._VersionAction):
                continue
            if any(
                len(other.path) > len(level.path)
                and other.path == tuple(path[: len(other.path)])
                and action.dest in other.sets
                for other in deeper
            ):
                continue
            value, bare = _value(action, occurrences, namespace)
            if value is _NOT_GIVEN:
                continue
            given.append(GivenValue(level.path, name, as_json_value(value), bare=bare))
        return given

    def _argument_error(self, path: list[str], error: argparse.ArgumentError) -> ParseVerdict:
        name = getattr(error, "argument_name", None)
        parameter: str | None = None
        level_path: tuple[str, ...] | None = None
        if name:
            for level in self.levels.values():
                for action in level.parser._actions:
                    if _argument_name(action) == name:
                        parameter = level.names.get(id(action))
                        level_path = level.path
                        break
                if parameter is not None:
                    break
        return ParseVerdict(
            accepted=False,
            path=tuple(path),
            error="ArgumentError",
            message=str(error),
            parameter=parameter,
            level=level_path,
            word=name.split("/")[0] if name else None,
        )

    def _rejected(self, path: list[str], error: str, message: str) -> ParseVerdict:
        return ParseVerdict(accepted=False, path=tuple(path), error=error, message=message)


_NOT_GIVEN = object()


def _framework_parse(
    parser: argparse.ArgumentParser, method: str = "parse_args"
) -> Callable[[list[str]], Any]:
    """``parser``'s ``method``, or argparse's own where the parser's has another signature.

    An override has argparse's signature when it can be called as argparse's is: with nothing
    (``parser.parse_args()``, as a program calls it), and with the words, by position or as
    ``args``.
    """
    own: Callable[[list[str]], Any] = getattr(parser, method)
    framework: Callable[..., Any] = getattr(argparse.ArgumentParser, method)
    if getattr(own, "__func__", None) is framework:
        return own
    try:
        signature = inspect.signature(own)
        signature.bind()
        signature.bind([])
        signature.bind(args=[])
    except (TypeError, ValueError):
        return functools.partial(framework, parser)
    return own


def _value(
    action: argparse.Action,
    occurrences: list[tuple[_Level, argparse.Action, list[str], Any]],
    namespace: Any,
) -> tuple[Any, bool]:
    """The argument object's value for one action, and whether it was given bare."""
    if type(action).__module__ != "argparse" and hasattr(namespace, action.dest):
        # The application's own Action: what it stored is what the program receives.
        if not action.option_strings and not any(words for _, _, words, _ in occurrences):
            return _NOT_GIVEN, False
        return getattr(namespace, action.dest), False
    if not action.option_strings:
        strings = [s for _, _, words, _ in occurrences for s in words]
        if not strings:
            # A positional that received no word was not given.
            return _NOT_GIVEN, False
        value = occurrences[-1][3]
        return (value[0] if action.nargs == 1 and isinstance(value, list) else value), False
    if isinstance(action, argparse._CountAction):
        return len(occurrences), False
    if action.nargs == 0:
        # A switch: its boolean, or (for a constant the snapshot does not record) True.
        current = getattr(namespace, action.dest, None)
        if isinstance(action, argparse._StoreConstAction) and isinstance(action.const, bool):
            return action.const, False
        return (current if isinstance(current, bool) else True), False
    values = []
    for _, _, words, converted in occurrences:
        one = converted[0] if action.nargs == 1 and isinstance(converted, list) else converted
        values.append((one, action.nargs == argparse.OPTIONAL and not words))
    if isinstance(action, argparse._AppendAction | argparse._ExtendAction):
        return [value for value, _ in values], False
    last, bare = values[-1]
    return last, bare


def _argument_name(action: argparse.Action) -> str | None:
    # As argparse's ArgumentError names an action.
    if action.option_strings:
        return "/".join(action.option_strings)
    if action.metavar not in (None, argparse.SUPPRESS):
        return str(action.metavar)
    if action.dest not in (None, argparse.SUPPRESS):
        return str(action.dest)
    return None
