"""Click's own parser as the judge: parse an argv through the live command chain.

The chain is resolved exactly as ``Group.invoke`` resolves it: ``make_context`` on the root
(``resilient_parsing`` off), then, while the command is a group, the group's own
``resolve_command`` on the words it left and ``make_context`` of the subcommand with the group's
context as parent. No command callback ever runs. Each parse is built as Click builds it: its
contexts are entered and closed (innermost first) as ``main`` and ``Group.invoke`` use them,
and each level's option parser and parameter list are Click's own for that parse. Like the
adapter, this reads Click, Typer's bundled Click and Click extensions by their shared structure
and imports no ``click``.

What SPEC 4 leaves unchecked is neutralised once for a batch of argvs — on each command the
first time a parse reaches it — and all of it is put back when the batch ends, however it ends,
so the application's objects are again as they were:

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
import copy
import functools
import itertools
import pathlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from exampleguard._adapters._common import OutputSink, Shadows
from exampleguard._adapters.clickfamily import (
    constraint_code,
    own_convert,
    parameter_names,
    subcommands,
)
from exampleguard._adapters.verdict import (
    APPLICATION_ERROR,
    GivenValue,
    ParseVerdict,
    as_json_value,
    raised,
)

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
    """Parses argvs with one live Click-family command tree, a batch at a time."""

    def __init__(self, root: Any, program: str) -> None:
        self.root = root
        self.program = program
        self._paths: dict[int, dict[int, str]] = {}
        self._string = _framework_string(root)
        self._flag_needs_value = _framework_marker(root)

    # -- naming, as the adapter names -----------------------------------------------------------

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
        return self.judge_all([argv])[0]

    def judge_all(self, argvs: Sequence[Sequence[str]]) -> list[ParseVerdict]:
        """The framework's verdict on each argv, in order, from one neutralisation of the tree.

        Each verdict is the one :meth:`judge` gives alone: a parse's own record starts empty,
        and what a parse may change (contexts) is its own. Everything neutralised is put back
        when the batch ends, an interrupt included.
        """
        return [verdict for run in self.judge_runs(argvs, len(argvs) or 1) for verdict in run]

    def judge_runs(self, argvs: Sequence[Sequence[str]], size: int) -> Iterator[list[ParseVerdict]]:
        """The verdicts of :meth:`judge_all`, handed out ``size`` at a time as they are made.

        One batch: the tree stays neutralised from the first parse until the iteration ends
        (or is closed), and is put back then. The application's output is caught while a run
        of parses is under way, never between two runs.
        """
        batch = _Batch(self._flag_needs_value, self._string)
        sink = OutputSink()
        parses = iter(argvs)
        try:
            while True:
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                    run = [
                        self._judge_one(list(argv), batch, sink)
                        for argv in itertools.islice(parses, size)
                    ]
                if not run:
                    return
                yield run
        finally:
            batch.shadows.restore()

    def _judge_one(self, argv: list[str], batch: _Batch, sink: OutputSink) -> ParseVerdict:
        state = batch.state = _Parse()
        sink.clear()
        try:
            return self._judge(argv, state, batch)
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

    def _judge(self, argv: list[str], state: _Parse, batch: _Batch) -> ParseVerdict:
        command, name, parent = self.root, self.program, None
        levels = batch.levels
        # Each level's context is used as Click's own main and Group.invoke use it: entered
        # once made, and closed (innermost first) when the parse ends, however it ends.
        with contextlib.ExitStack() as contexts:
            while True:
                level = levels.get(id(command))
                if level is None:
                    level = batch.first_reached(command, name, parent)
                state.begin(command, level.names)
                state.words = list(argv)
                context = contexts.enter_context(command.make_context(name, argv, parent=parent))
                state.collect(context)
                if not level.group:
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
        if "ConstraintViolated" in names:
            # cloup's constraint check, after the level's values were processed.
            return state.rejected(
                "ConstraintViolated",
                error.format_message() if hasattr(error, "format_message") else str(error),
                constraint=constraint_code(error),
            )
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
        # Application code raised while Click parsed (a type that reads ``ctx.obj``, which the
        # group's callback would have set): not a verdict (SPEC 4). The model judges instead.
        return state.undecided(error)


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
    """What one argv's parse has seen so far: levels, sources, given values."""

    # One is made per parse.
    __slots__ = (
        "bare",
        "command",
        "eager",
        "given",
        "handed",
        "names",
        "path",
        "unexposed",
        "words",
    )

    def __init__(self) -> None:
        self.path: list[str] = []
        self.given: list[GivenValue] = []
        self.eager: list[Any] = []
        self.bare: set[int] = set()
        self.command: Any = None
        self.names = _NO_NAMES
        self.words: list[str] = []
        """The words the current level parses."""
        self.unexposed: dict[tuple[int, int], Any] = {}
        self.handed: tuple[Any, Any] = (None, None)
        """The context ``get_params`` was last asked for in this parse, and what it handed out."""
        """The values of parameters kept out of ``ctx.params``, by context and parameter."""

    def begin(self, command: Any, names: _Names) -> None:
        self.command = command
        self.names = names
        self.eager.clear()
        self.bare.clear()

    def name_of(self, param: Any) -> str | None:
        name = self.names.of(param)
        if name is not None:
            return name
        fallback = getattr(param, "name", None)
        return fallback if isinstance(fallback, str) else None

    def eager_given(self) -> bool:
        return bool(self.eager)

    def collect(self, context: Any) -> None:
        """Record the values the command line gave at this level (source ``COMMANDLINE``).

        The parameters are those Click processed the values from: the list it was handed last
        for this context, which is not asked for again.
        """
        handed, params = self.handed
        if handed is not context:
            params = self.command.get_params(context)
        plan = _collection_plan(params, self.names, context)
        if not plan:
            return
        level = tuple(self.path)
        values = context.params
        source_of = context.get_parameter_source
        for param, key, name, sharers, exposed in plan:
            source = source_of(key)
            if getattr(source, "name", None) != "COMMANDLINE":
                continue
            value = values.get(key) if exposed else self.unexposed.get((id(context), id(param)))
            # A value given bare stores the option's flag value, which can be None: the
            # program was handed None from the command line, so it counts as given.
            if (value is None and id(param) not in self.bare) or value == ():
                continue
            if sharers is not None:
                if not _owns_shared_value(param, sharers, value, self.words):
                    continue
                value = _own_switch_value(param, value)
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

    def undecided(self, error: BaseException) -> ParseVerdict:
        """No verdict: application code raised ``error`` while the framework parsed."""
        return ParseVerdict(
            accepted=False,
            path=tuple(self.path),
            error=APPLICATION_ERROR,
            message=raised(error),
        )

    def rejected(
        self,
        error: str,
        message: str,
        *,
        parameter: str | None = None,
        word: str | None = None,
        constraint: str | None = None,
    ) -> ParseVerdict:
        return ParseVerdict(
            accepted=False,
            path=tuple(self.path),
            error=error,
            message=message,
            parameter=parameter,
            level=tuple(self.path) if parameter is not None else None,
            word=word,
            constraint=constraint,
        )


class _Names:
    """The snapshot names of one command's parameters, as the adapter names them.

    Worked out when first asked for, from the context of the parse that asks (or, for a parse
    that failed before its context existed, one that parses nothing, as the adapter builds).
    Looked up by identity: within a batch a command hands out the same parameter objects. A
    command that builds new ones on each call (its own ``get_params``, a lazy command) is
    looked up by what the parameter is — its kind, name and option strings.
    """

    def __init__(self, command: Any, info_name: str | None, parent: Any) -> None:
        self._command = command
        self._info_name = info_name
        self._parent = parent
        self._pairs: list[tuple[Any, str]] | None = None
        """The named parameters, kept alive so that their identities stay theirs."""
        self._by_identity: dict[int, str] = {}
        self._by_signature: dict[tuple[Any, ...], str] | None = None

    def of(self, param: Any, context: Any = None) -> str | None:
        """The snapshot name of ``param``, if the snapshot records it."""
        if self._pairs is None:
            self._name(context)
        name = self._by_identity.get(id(param))
        if name is None:
            if self._by_signature is None:
                pairs = self._pairs or []
                self._by_signature = {_signature(each): named for each, named in pairs}
            name = self._by_signature.get(_signature(param))
        return name

    def _name(self, context: Any) -> None:
        command = self._command
        if context is None:
            settings = dict(getattr(command, "context_settings", None) or {})
            context = command.context_class(
                command, parent=self._parent, info_name=self._info_name, **settings
            )
        self._pairs = parameter_names(command, context)
        self._by_identity = {id(param): name for param, name in self._pairs}
        # Named now: the parent's context (and the chain above it) need not live on.
        self._parent = None


_NO_NAMES = _Names(None, None, None)
"""The names of no command: a parse's before its first level begins."""

_Collected = tuple[Any, str, str, list[Any] | None, bool]
"""A parameter whose value is collected: itself, its key in ``ctx.params``, its snapshot name,
the parameters that share its key (``None`` when it has it alone), and whether its value is in
``ctx.params`` (``expose_value``)."""


class _Level:
    """A command a batch's parses reach: its parameters' names, and whether it routes further."""

    __slots__ = ("group", "names")

    def __init__(self, names: _Names, group: bool) -> None:
        self.names = names
        self.group = group


class _Batch:
    """One batch of parses: the tree neutralised for it, what that replaced, the parse under way.

    Each command is neutralised the first time a parse reaches it, each parameter the first
    time its command hands it out; both are kept alive (and their identities unique) until the
    batch ends and :attr:`shadows` puts everything back. Nothing of a parse is kept for the
    next: each builds its contexts, parsers and parameter lists as Click builds them.
    """

    def __init__(self, flag_needs_value: Any, string: Any) -> None:
        self.flag_needs_value = flag_needs_value
        """The parser's marker for an optional-value option given bare."""
        self.string = string
        """The framework's ``STRING`` type, for values taken as strings."""
        self.shadows = Shadows()
        self.state = _Parse()
        """The parse under way, which the neutralised parameters report to."""
        self.levels: dict[int, _Level] = {}
        """What each command reached in the batch is, by the command's identity."""
        self._commands: dict[int, Any] = {}
        self._params: dict[int, Any] = {}
        self._classes: set[type] = set()
        self._installed: set[Callable[..., Any]] = set()
        self._texts: dict[int, tuple[Any, Any]] = {}

    def text_of(self, param_type: Any) -> Any:
        """A copy of ``param_type`` whose ``convert`` judges with the type's own, keeping the text.

        A Choice subclass's own ``convert`` decides whether a word is accepted (SPEC 4); what it
        makes of the word (celery's log level as a number) is the application's, so the value
        handed on is the word as written, as the model gives it. One copy per type object in a
        batch (many parameters share a type).
        """
        found = self._texts.get(id(param_type))
        if found is not None:
            return found[1]
        judged = param_type.convert

        def convert(value: Any, param: Any, ctx: Any) -> Any:
            judged(value, param, ctx)
            return value

        wrapper = copy.copy(param_type)
        wrapper.convert = convert
        self._texts[id(param_type)] = (param_type, wrapper)
        return wrapper

    def first_reached(self, command: Any, name: str, parent: Any) -> _Level:
        """Neutralise ``command``, a parse having reached it for the first time in the batch.

        Its parameters are named from the context the parse gives it (``name``, ``parent``).
        """
        level = self.levels[id(command)] = _Level(_Names(command, name, parent), _is_group(command))
        self._neutralise(command)
        return level

    def _neutralise(self, command: Any) -> None:
        """Neutralise every parameter ``command`` hands out, for the rest of the batch."""
        self._commands[id(command)] = command
        # Every parameter the parse will see goes through get_params, the help option too
        # (which Click may build anew on each call): each is neutralised as it is handed out.
        # A method the application set on the object itself is the one Click calls.
        original = vars(command).get("get_params") or type(command).get_params.__get__(command)

        def get_params(ctx: Any) -> Any:
            params = original(ctx)
            for param in params:
                if id(param) not in self._params:
                    self._params[id(param)] = param
                    _neutralise_param(param, self)
            # The list Click processes this context's values from (its last ask in a parse).
            self.state.handed = (ctx, params)
            return params

        self.shadows.set(command, "get_params", get_params)

    def neutralise_class(self, cls: type) -> None:
        """Replace the methods of :data:`_CLASS_REPLACED` on ``cls``, for the rest of the batch.

        A method that a class already neutralised in this batch passes on by inheritance is
        left as it is, so no call is noted twice.
        """
        if cls in self._classes:
            return
        self._classes.add(cls)
        for attribute in _CLASS_REPLACED:
            current = getattr(cls, attribute, None)
            if current is None or current in self._installed:
                continue
            replacement = self.replacement(attribute)
            self._installed.add(replacement)
            self.shadows.set(cls, attribute, replacement)

    def replacement(self, attribute: str) -> Callable[..., Any]:
        """What replaces ``attribute``, one of :data:`_CLASS_REPLACED`."""
        return _no_envvar if attribute == "value_from_envvar" else _no_prompt


def _collection_plan(params: Any, names: _Names, context: Any) -> list[_Collected]:
    """The parameters of ``params`` whose values are collected, and how."""
    exposed = [p for p in params if getattr(p, "expose_value", True)]
    by_key: dict[str, list[Any]] = {}
    for param in exposed:
        by_key.setdefault(param.name, []).append(param)
    plan: list[_Collected] = []
    for param in params:
        name = names.of(param, context)
        if name is None:
            continue
        if not getattr(param, "expose_value", True):
            # Its value reaches the program through its callback alone (Flask's --app),
            # which noted it; a key another parameter also has names no value of its own.
            if not _unnoted(param) and param.name not in by_key:
                plan.append((param, param.name, name, None, False))
            continue
        sharers = by_key[param.name]
        plan.append((param, param.name, name, sharers if len(sharers) > 1 else None, True))
    return plan


def _owns_shared_value(param: Any, sharers: list[Any], value: Any, words: list[str]) -> bool:
    """Whether ``param`` counts as given, where several parameters share one name.

    Click keeps one value per name; for flags (``--upper``/``--lower`` storing ``transform``)
    the value is the flag value of the last one given, and a flag whose own option string is
    among the level's words was given too (the argument object says what was given). Of flags
    that store the same value, the one the words spell out was given.
    """
    if all(getattr(p, "is_flag", False) for p in sharers):

        def spelled(flag: Any) -> bool:
            options = {*getattr(flag, "opts", ()), *getattr(flag, "secondary_opts", ())}
            if any(word in options for word in words):
                return True
            # A short flag in a bundle (`-dq`); a letter of an attached value may pass for one,
            # which at worst counts both flags, as the value alone would.
            shorts = {o[1] for o in options if len(o) == 2 and o[0] != o[1]}
            prefixes = {o[0] for o in options if len(o) == 2 and o[0] != o[1]}
            return any(
                len(word) > 2
                and word[0] in prefixes
                and word[1] != word[0]
                and shorts & set(word[1:])
                for word in words
            )

        if getattr(param, "flag_value", None) == value:
            # Two flags storing the same value (mkdocs's --dirty and --dirtyreload): the value
            # does not say which was given, the words do where they spell one out.
            rivals = [
                p for p in sharers if p is not param and getattr(p, "flag_value", None) == value
            ]
            return not rivals or spelled(param) or not any(spelled(p) for p in rivals)
        return spelled(param)
    return param is sharers[-1]


def _own_switch_value(param: Any, value: Any) -> Any:
    """What a given switch sharing its key stores itself, where that is a boolean.

    ``--reload --no-reload``, both storing ``reload``: the program receives the last one's
    ``False``, and ``--reload`` was given all the same, storing ``True`` (the model's argument
    object keeps each switch's own value; a later one overwrites it in the program).
    """
    own = getattr(param, "flag_value", None)
    if (
        getattr(param, "is_flag", False)
        and isinstance(own, bool)
        and not getattr(param, "secondary_opts", None)
    ):
        return own
    return value


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


def _framework_base(type_class: type) -> str | None:
    """The first class of the framework's own that ``type_class`` derives from, by name."""
    if type_class in _BASES:
        return _BASES[type_class]
    mro = type_class.__mro__
    base = next((cls for cls in reversed(mro) if cls.__name__ == "ParamType"), None)
    found = None
    if base is not None:
        home = base.__module__
        found = next((cls.__name__ for cls in mro if cls.__module__ == home), None)
    _BASES[type_class] = found
    return found


# Worked out once per type class: the parameters of a large tree share a few types.
_BASES: dict[type, str | None] = {}


def _neutral_type(param_type: Any) -> bool:
    """Whether values of ``param_type`` are taken as strings (files, paths, custom types)."""
    base = _framework_base(type(param_type))
    return base is None or base in _FILE_TYPES or base in _OPEN_TYPES


def _neutralise_param(param: Any, batch: _Batch) -> None:
    shadows = batch.shadows
    string = batch.string
    batch.neutralise_class(type(param))
    own = vars(param)
    for attribute in _CLASS_REPLACED:
        if attribute in own:
            # The application set the method on the object itself: replaced there too.
            replacement = batch.replacement(attribute)
            shadows.set(param, attribute, functools.partial(replacement, param))
    # Read once: a large tree has tens of thousands of parameters, each neutralised here.
    is_flag = bool(getattr(param, "is_flag", False))
    eager_flag = is_flag and bool(getattr(param, "is_eager", False))
    if eager_flag or getattr(param, "_flag_needs_value", False):
        # Only an eager flag, or an option whose value may be left out (the parser then hands
        # it a marker), has something to note as its value is consumed.
        consume = own.get("consume_value")
        consume = _unbound(consume) if consume is not None else type(param).consume_value
        shadows.set(param, "consume_value", _consuming(param, consume, batch))
    callback = getattr(param, "callback", None)
    noted = not getattr(param, "expose_value", True) and not _unnoted(param)
    switch = is_flag or bool(getattr(param, "count", False))
    if not switch and (callback is not None or noted):
        # A value-taking parameter's callback is application code checking the value (SPEC 4).
        shadows.set(param, "callback", _noting_value(param, None, batch) if noted else None)
    elif callback is not None or noted:
        # A switch's callback stays: it is how `--help`, `--version` and their like end parsing
        # (Typer's version recipe is a plain flag whose callback exits).
        if callback is not None:
            callback = _noting_exit(param, callback, batch)
        shadows.set(param, "callback", _noting_value(param, callback, batch) if noted else callback)
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        if _neutral_descriptor(descriptor):
            shadows.set(param, "process_value", _passthrough(param, descriptor))
        return
    param_type = getattr(param, "type", None)
    if param_type is None or string is None or is_flag:
        return
    if getattr(param_type, "is_composite", False) and isinstance(
        getattr(param_type, "types", None), list
    ):
        items = param_type.types
        if any(_neutral_type(item) for item in items):
            neutral = [string if _neutral_type(item) else item for item in items]
            shadows.replace_items(items, neutral)
        return
    if _neutral_type(param_type):
        shadows.set(param, "type", string)
    elif _framework_base(type(param_type)) == "Choice" and own_convert(param_type):
        shadows.set(param, "type", batch.text_of(param_type))


# The methods replaced on each parameter class a batch meets (and on a parameter that carries
# its own): the environment variable (never read) and the prompt (never waited on).
_CLASS_REPLACED = ("value_from_envvar", "prompt_for_value")


def _unbound(function: Any) -> Callable[..., Any]:
    """An instance's own function, called as a class's method is (the object first)."""

    def method(_param: Any, *arguments: Any, **keywords: Any) -> Any:
        return function(*arguments, **keywords)

    return method


def _consuming(param: Any, original: Callable[..., Any], batch: _Batch) -> Callable[..., Any]:
    """``param``'s ``consume_value``, which notes it for the parse under way.

    Noted: an eager option given, or an option given bare (its value left out).
    """
    # Worked out once: an eager flag's help option is consumed at every level of every parse.
    eager = _eager_flag(param)
    marker = batch.flag_needs_value

    def consume_value(ctx: Any, opts: Any) -> Any:
        raw = opts.get(param.name) if hasattr(opts, "get") else None
        value, source = original(param, ctx, opts)
        if raw is not None and raw is marker:
            batch.state.bare.add(id(param))
        if eager and getattr(source, "name", None) == "COMMANDLINE":
            batch.state.eager.append(param)
        return value, source

    return consume_value


def _no_prompt(param: Any, *_: Any, **__: Any) -> Any:
    raise _PromptRequired(param)


def _unnoted(param: Any) -> bool:
    """Whether a parameter kept out of ``ctx.params`` has no value the program receives.

    An eager flag (``--help``, ``--version``) ends parsing; a confirmation flag (Click's
    ``confirmation_option``, a prompted flag) only answers the prompt and aborts without it.
    The model's argument object holds neither, as the adapter records them (``eager``,
    ``confirmation``).
    """
    if _eager_flag(param):
        return True
    prompt = getattr(param, "prompt", None)
    return (
        bool(getattr(param, "is_flag", False))
        and not getattr(param, "count", False)
        and prompt is not None
        and prompt is not False
        and bool(getattr(param, "prompt_required", True))
    )


def _eager_flag(param: Any) -> bool:
    return bool(getattr(param, "is_eager", False)) and bool(getattr(param, "is_flag", False))


def _noting_value(
    param: Any, callback: Callable[..., Any] | None, batch: _Batch
) -> Callable[..., Any]:
    """A callback that notes the value of a parameter kept out of ``ctx.params``, then calls on."""

    def noted(ctx: Any, given: Any, value: Any) -> Any:
        batch.state.unexposed[(id(ctx), id(param))] = value
        return value if callback is None else callback(ctx, given, value)

    return noted


def _noting_exit(param: Any, callback: Callable[..., Any], batch: _Batch) -> Callable[..., Any]:
    def noted(*arguments: Any, **keywords: Any) -> Any:
        try:
            return callback(*arguments, **keywords)
        except BaseException as error:
            if "Exit" in _class_names(error) or isinstance(error, SystemExit):
                batch.state.eager.append(param)
            raise

    return noted


def _no_envvar(_param: Any, *_: Any, **__: Any) -> None:
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
