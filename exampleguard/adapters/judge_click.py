"""Click's own parser as the judge: parse an argv through the live command chain.

The chain is resolved exactly as ``Group.invoke`` resolves it: ``make_context`` on the root
(``resilient_parsing`` off), then, while the command is a group, the group's own
``resolve_command`` on the words it left and ``make_context`` of the subcommand with the group's
context as parent. No command callback ever runs. Like the adapter, this reads Click, Typer's
bundled Click and Click extensions by their shared structure and imports no ``click``.

What SPEC 4 leaves unchecked is neutralised for the duration of one parse, and restored after
it, so every argv is parsed on the application's objects as they were:

- callbacks of value-taking parameters (a switch's callback stays: ``--help``, ``--version``
  and their like end parsing through it, and that decides the verdict);
- environment variables (an example must not pass because CI happens to set one);
- file existence and file opening (``click.File``, ``click.Path``, Typer's paths and files),
  and custom parameter types that do not derive from one of the framework's own: their values
  are taken as strings. A type derived from a framework type (a ``click.Choice`` subclass)
  converts with its own ``convert``;
- prompts: an option that would prompt is reported as ``PromptRequired`` (an agent cannot
  answer one), never waited on.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from exampleguard.adapters._common import shadow
from exampleguard.adapters.clickfamily import named_parameters, subcommands
from exampleguard.adapters.verdict import GivenValue, ParseVerdict, as_json_value

__all__ = ["ClickJudge"]

# Click's own types whose conversion touches the filesystem: taken as strings.
_FILE_TYPES = frozenset({"File", "Path"})
# Bases that carry no conversion of the framework's: a type deriving only from these is the
# application's own.
_OPEN_TYPES = frozenset({"ParamType", "FuncParamType", "CompositeParamType"})


class _PromptRequired(Exception):
    """A missing option would prompt for its value."""

    def __init__(self, param: Any) -> None:
        super().__init__(param)
        self.param = param


def _class_names(value: Any) -> list[str]:
    return [cls.__name__ for cls in type(value).__mro__]


class ClickJudge:
    """Parses argvs with one live Click-family command tree, one argv at a time."""

    def __init__(self, root: Any, program: str) -> None:
        self.root = root
        self.program = program
        self._names: dict[int, dict[tuple[Any, ...], str]] = {}
        self._paths: dict[int, dict[int, str]] = {}
        self._string = _framework_string(root)
        self._flag_needs_value = _framework_marker(root)

    # -- naming, as the adapter names -----------------------------------------------------------

    def _parameter_names(self, command: Any, name: str, parent: Any) -> dict[tuple[Any, ...], str]:
        names = self._names.get(id(command))
        if names is None:
            # A context that parses nothing, as the adapter builds one to read the parameters.
            settings = dict(getattr(command, "context_settings", None) or {})
            context = command.context_class(command, parent=parent, info_name=name, **settings)
            names = {
                _signature(param): record["name"]
                for param, record in named_parameters(command, context)
            }
            self._names[id(command)] = names
        return names

    def _primary_name(self, group: Any, context: Any, name: str | None, command: Any) -> str:
        by_identity = self._paths.get(id(group))
        if by_identity is None:
            by_identity = {}
            with contextlib.suppress(Exception):
                for primary, child, _ in subcommands(group, context):
                    by_identity[id(child)] = primary
            self._paths[id(group)] = by_identity
        found = by_identity.get(id(command))
        if found is not None:
            return found
        # A group that builds a new object on every lookup (lazy loading): its listed name.
        own = getattr(command, "name", None)
        if isinstance(own, str) and own in by_identity.values():
            return own
        return name or str(own)

    # -- parsing --------------------------------------------------------------------------------

    def judge(self, argv: Sequence[str]) -> ParseVerdict:
        """The framework's verdict on ``argv`` (the words after the program)."""
        state = _Parse()
        state.flag_needs_value = self._flag_needs_value
        sink = io.StringIO()
        with (
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
            contextlib.ExitStack() as restore,
        ):
            try:
                return self._judge(list(argv), state, restore)
            except _PromptRequired as prompt:
                return state.rejected(
                    "PromptRequired",
                    "the command would prompt for a missing value",
                    parameter=state.name_of(prompt.param),
                )
            except BaseException as error:
                if isinstance(error, KeyboardInterrupt):
                    raise
                return self._failure(error, state, _printed_help(sink.getvalue()))
            finally:
                for context in reversed(state.contexts):
                    with contextlib.suppress(Exception):
                        context.close()

    def _judge(self, argv: list[str], state: _Parse, restore: contextlib.ExitStack) -> ParseVerdict:
        command, name, parent = self.root, self.program, None
        while True:
            state.begin(command, self._parameter_names(command, name, parent))
            state.words = list(argv)
            self._neutralise(command, state, restore)
            context = command.make_context(name, argv, parent=parent)
            state.contexts.append(context)
            state.collect(context)
            if not _is_group(command):
                return state.accepted()
            words = [*_protected_args(context), *context.args]
            if not words:
                if getattr(command, "invoke_without_command", False):
                    return state.accepted()
                return state.rejected("UsageError", "Missing command.")
            if getattr(command, "chain", False):
                return state.rejected("UsageError", "chained groups are not supported")
            cmd_name, sub, rest = command.resolve_command(context, words)
            if sub is None:
                return state.rejected(
                    "NoSuchCommand", f"No such command {words[0]!r}.", word=words[0]
                )
            state.path.append(self._primary_name(command, context, cmd_name, sub))
            command, name, parent, argv = sub, cmd_name, context, list(rest)

    def _neutralise(self, command: Any, state: _Parse, restore: contextlib.ExitStack) -> None:
        # Every parameter the parse will see goes through get_params, the help option too
        # (which Click may build anew on each call): each is neutralised as it is handed out.
        original = type(command).get_params.__get__(command)
        string = self._string

        def get_params(ctx: Any) -> Any:
            params = original(ctx)
            for param in params:
                if id(param) not in state.neutralised:
                    state.neutralised[id(param)] = param
                    _neutralise_param(param, state, restore, string)
            return params

        shadow(command, "get_params", get_params, restore)

    def _failure(self, error: BaseException, state: _Parse, printed_help: bool) -> ParseVerdict:
        names = _class_names(error)
        if "Exit" in names or isinstance(error, SystemExit):
            code = getattr(error, "exit_code", getattr(error, "code", 0))
            if state.eager_given():
                return state.accepted(eager=True)
            if code in (0, None) or printed_help:
                # Help printed and exited with no eager option given: Click 8.1's
                # no_args_is_help (8.2 and later raise NoArgsIsHelpError), or an application's
                # own "no arguments, show help" shortcut, whatever status it exits with.
                return state.rejected(
                    "NoArgsIsHelpError", "the command printed its help and exited"
                )
            return state.rejected("Exit", f"the command exited with status {code}")
        if "Abort" in names:
            return state.rejected("Abort", "the command was aborted")
        if "ClickException" in names:
            kind = type(error).__name__
            for known in names:
                if known in _KNOWN_ERRORS:
                    kind = known
                    break
            param = getattr(error, "param", None)
            word = getattr(error, "option_name", None) or getattr(error, "command_name", None)
            if kind == "NoArgsIsHelpError":
                # Its message is the whole help text.
                message = "the command printed its help and exited"
            else:
                message = error.format_message() if hasattr(error, "format_message") else str(error)
            return state.rejected(
                kind,
                message,
                parameter=state.name_of(param) if param is not None else None,
                word=word if isinstance(word, str) else None,
            )
        where = f"{type(error).__name__}: {error}"
        return state.rejected("Crash", f"the command raised {where} while parsing")


def _printed_help(output: str) -> bool:
    """Whether what the parse printed is a help text (Click's, or Typer's boxed one)."""
    return any(line.strip().startswith("Usage:") for line in output.splitlines()[:3])


# The framework's error classes, most specific first, as the verdict names them.
_KNOWN_ERRORS = (
    "NoArgsIsHelpError",
    "NoSuchOption",
    "BadOptionUsage",
    "BadArgumentUsage",
    "MissingParameter",
    "BadParameter",
    "NoSuchCommand",
    "UsageError",
)


class _Parse:
    """What one argv's parse has seen so far: levels, sources, contexts, given values."""

    def __init__(self) -> None:
        self.path: list[str] = []
        self.contexts: list[Any] = []
        self.given: list[GivenValue] = []
        self.eager: list[Any] = []
        self.bare: set[int] = set()
        self.command: Any = None
        self.names: dict[tuple[Any, ...], str] = {}
        self.flag_needs_value: Any = None
        """The parser's marker for an optional-value option given bare."""
        self.words: list[str] = []
        """The words the current level parses."""
        self.neutralised: dict[int, Any] = {}
        """Parameters neutralised for this parse, by identity (kept alive until restored)."""

    def begin(self, command: Any, names: dict[tuple[Any, ...], str]) -> None:
        self.command = command
        self.names = names
        self.eager.clear()
        self.bare.clear()

    def name_of(self, param: Any) -> str | None:
        name = self.names.get(_signature(param))
        if name is not None:
            return name
        fallback = getattr(param, "name", None)
        return fallback if isinstance(fallback, str) else None

    def eager_given(self) -> bool:
        return bool(self.eager)

    def collect(self, context: Any) -> None:
        """Record the values the command line gave at this level (source ``COMMANDLINE``)."""
        names = self.names
        level = tuple(self.path)
        params = [p for p in self.command.get_params(context) if getattr(p, "expose_value", True)]
        by_name: dict[str, list[Any]] = {}
        for param in params:
            by_name.setdefault(param.name, []).append(param)
        for param in params:
            name = names.get(_signature(param))
            if name is None:
                continue
            source = context.get_parameter_source(param.name)
            value = context.params.get(param.name)
            if source is None or source.name != "COMMANDLINE" or value is None or value == ():
                continue
            sharers = by_name[param.name]
            if len(sharers) > 1 and not _owns_shared_value(param, sharers, value, self.words):
                continue
            self.given.append(
                GivenValue(level, name, as_json_value(value), bare=id(param) in self.bare)
            )

    def accepted(self, *, eager: bool = False) -> ParseVerdict:
        return ParseVerdict(
            accepted=True,
            path=tuple(self.path),
            eager=eager,
            given=() if eager else tuple(self.given),
        )

    def rejected(
        self,
        error: str,
        message: str,
        *,
        parameter: str | None = None,
        word: str | None = None,
    ) -> ParseVerdict:
        return ParseVerdict(
            accepted=False,
            path=tuple(self.path),
            error=error,
            message=message,
            parameter=parameter,
            level=tuple(self.path) if parameter is not None else None,
            word=word,
        )


def _owns_shared_value(param: Any, sharers: list[Any], value: Any, words: list[str]) -> bool:
    """Whether ``param`` counts as given, where several parameters share one name.

    Click keeps one value per name; for flags (``--upper``/``--lower`` storing ``transform``)
    the value is the flag value of the last one given, and a flag whose own option string is
    among the level's words was given too (the argument object says what was given).
    """
    if all(getattr(p, "is_flag", False) for p in sharers):
        if getattr(param, "flag_value", None) == value:
            return True
        options = {*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())}
        return any(word in options for word in words)
    return param is sharers[-1]


def _signature(param: Any) -> tuple[Any, ...]:
    # Stable across get_params calls that build new objects (help options, lazy commands).
    return (
        getattr(param, "param_type_name", None),
        getattr(param, "name", None),
        tuple(getattr(param, "opts", ()) or ()),
        tuple(getattr(param, "secondary_opts", ()) or ()),
    )


def _is_group(command: Any) -> bool:
    return callable(getattr(command, "resolve_command", None)) and callable(
        getattr(command, "list_commands", None)
    )


def _protected_args(context: Any) -> list[str]:
    # Click 8.2 renamed protected_args to _protected_args (the old name is deprecated).
    if "_protected_args" in vars(context):
        return list(context._protected_args)
    return list(getattr(context, "protected_args", ()) or ())


def _framework_string(root: Any) -> Any:
    """The framework's own ``STRING`` type, found next to the command class the tree uses."""
    for cls in type(root).__mro__:
        module = sys.modules.get(cls.__module__)
        package = cls.__module__.rsplit(".", 1)[0]
        types = sys.modules.get(f"{package}.types")
        if module is not None and types is not None and hasattr(types, "STRING"):
            return types.STRING
    return None


def _framework_marker(root: Any) -> Any:
    """The marker the framework's parser puts for an option given bare (``FLAG_NEEDS_VALUE``)."""
    for cls in type(root).__mro__:
        if cls.__name__ == "Command" and cls.__module__.endswith(".core"):
            package = cls.__module__.rsplit(".", 1)[0]
            for module, name in (("_utils", "FLAG_NEEDS_VALUE"), ("parser", "_flag_needs_value")):
                found = getattr(sys.modules.get(f"{package}.{module}"), name, None)
                if found is not None:
                    return found
    return None


def _framework_base(param_type: Any) -> str | None:
    """The first class of the framework's own that ``param_type`` derives from, by name."""
    mro = type(param_type).__mro__
    base = next((cls for cls in reversed(mro) if cls.__name__ == "ParamType"), None)
    if base is None:
        return None
    home = base.__module__
    for cls in mro:
        if cls.__module__ == home:
            return cls.__name__
    return None


def _neutral_type(param_type: Any) -> bool:
    """Whether values of ``param_type`` are taken as strings (files, paths, custom types)."""
    base = _framework_base(param_type)
    return base is None or base in _FILE_TYPES or base in _OPEN_TYPES


def _neutralise_param(
    param: Any, state: _Parse, restore: contextlib.ExitStack, string: Any
) -> None:
    eager_flag = bool(getattr(param, "is_eager", False)) and bool(getattr(param, "is_flag", False))

    consume = type(param).consume_value

    def consume_value(ctx: Any, opts: Any) -> Any:
        raw = opts.get(param.name) if hasattr(opts, "get") else None
        value, source = consume.__get__(param)(ctx, opts)
        if raw is not None and raw is state.flag_needs_value:
            state.bare.add(id(param))
        if eager_flag and getattr(source, "name", None) == "COMMANDLINE":
            state.eager.append(param)
        return value, source

    def no_prompt(*_: Any, **__: Any) -> Any:
        raise _PromptRequired(param)

    shadow(param, "consume_value", consume_value, restore)
    shadow(param, "value_from_envvar", _no_envvar, restore)
    if hasattr(param, "prompt_for_value"):
        shadow(param, "prompt_for_value", no_prompt, restore)
    callback = getattr(param, "callback", None)
    if callback is not None and not _is_switch(param):
        # A value-taking parameter's callback is application code checking the value (SPEC 4).
        shadow(param, "callback", None, restore)
    elif callback is not None:
        # A switch's callback stays: it is how `--help`, `--version` and their like end parsing
        # (Typer's version recipe is a plain flag whose callback exits).
        shadow(param, "callback", _noting_exit(param, callback, state), restore)
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        if _neutral_descriptor(descriptor):
            shadow(param, "process_value", _passthrough(param, descriptor), restore)
        return
    param_type = getattr(param, "type", None)
    if param_type is None or string is None or getattr(param, "is_flag", False):
        return
    if getattr(param_type, "is_composite", False) and isinstance(
        getattr(param_type, "types", None), list
    ):
        items = param_type.types
        if any(_neutral_type(item) for item in items):
            neutral = [string if _neutral_type(item) else item for item in items]
            previous_items = list(items)
            items[:] = neutral
            restore.callback(lambda: items.__setitem__(slice(None), previous_items))
        return
    if _neutral_type(param_type):
        shadow(param, "type", string, restore)


def _is_switch(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False)) or bool(getattr(param, "count", False))


def _noting_exit(param: Any, callback: Callable[..., Any], state: _Parse) -> Callable[..., Any]:
    def noted(*arguments: Any, **keywords: Any) -> Any:
        try:
            return callback(*arguments, **keywords)
        except BaseException as error:
            if "Exit" in _class_names(error) or isinstance(error, SystemExit):
                state.eager.append(param)
            raise

    return noted


def _no_envvar(*_: Any, **__: Any) -> None:
    return None


def _neutral_descriptor(descriptor: Any) -> bool:
    """Typer 0.26+: files, paths and application parsers are taken as strings."""
    if getattr(descriptor, "is_file", False) or getattr(descriptor, "is_path", False):
        return True
    info = getattr(descriptor, "parameter_info", None)
    return (
        getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None
    )


def _passthrough(param: Any, descriptor: Any) -> Callable[[Any, Any], Any]:
    """Typer's conversion of a file or path, without touching the filesystem.

    A path is the ``pathlib.Path`` of the text (as Typer hands it over, existence unchecked);
    a file, or an application's parser, stays the text.
    """
    as_path = bool(getattr(descriptor, "is_path", False)) and not getattr(
        descriptor, "is_file", False
    )

    def convert(value: Any) -> Any:
        if isinstance(value, tuple | list):
            return type(value)(convert(item) for item in value)
        return pathlib.Path(value) if as_path and isinstance(value, str) else value

    def process_value(ctx: Any, value: Any) -> Any:
        missing = value is None or ((param.nargs != 1 or param.multiple) and value in ((), []))
        if param.required and missing:
            raise _missing(param, ctx)
        return convert(value)

    return process_value


def _missing(param: Any, ctx: Any) -> BaseException:
    for cls in type(param).__mro__:
        package = cls.__module__.rsplit(".", 1)[0]
        exceptions = sys.modules.get(f"{package}.exceptions")
        if exceptions is not None and hasattr(exceptions, "MissingParameter"):
            error: BaseException = exceptions.MissingParameter(ctx=ctx, param=param)
            return error
    return RuntimeError(f"missing {param.name}")


def judge_all(judge: ClickJudge, argvs: Sequence[Sequence[str]]) -> Iterator[ParseVerdict]:
    """Each argv's verdict, in order."""
    for argv in argvs:
        yield judge.judge(argv)
