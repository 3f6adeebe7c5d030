"""Read an ``argparse.ArgumentParser`` (and its subparsers) into a tree snapshot.

argparse keeps its structure in private attributes (``_actions``, ``_mutually_exclusive_groups``,
``_name_parser_map``); this module is the only place that reads them. Each parser's
``allow_abbrev``, ``prefix_chars`` and ``fromfile_prefix_chars`` are recorded so the binder
follows them exactly.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import inspect
import pathlib
import platform
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from exampleguard._adapters._common import (
    claim_unique_name,
    first_line,
    group_aliases,
    switch_stores,
)
from exampleguard._adapters._helptext import help_examples, place_in_source

__all__ = ["action_names", "extract_argparse", "resolve_parser"]


def resolve_parser(target: Any) -> argparse.ArgumentParser:
    """Return the parser ``target`` names: a parser, a factory of one, or a ``main(argv)``.

    A callable is called with no argument (or with ``[]`` when it takes exactly one, as a
    ``main(argv)`` does). Whatever it builds, the first parser it asks to parse is captured at
    that call, and the call goes no further: nothing of the application after its parse runs
    (a ``main(argv=None)`` that lints the working directory never gets there). A callable that
    parses nothing must return the parser.
    """
    if isinstance(target, argparse.ArgumentParser):
        return target
    if not callable(target):
        raise TypeError(
            f"{type(target).__name__} object is not an argparse.ArgumentParser or a factory of one"
        )
    name = getattr(target, "__name__", type(target).__name__)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        signature = None
    required = [
        p
        for p in (signature.parameters.values() if signature is not None else ())
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if len(required) > 1 or any(p.kind is p.KEYWORD_ONLY for p in required):
        names = ", ".join(p.name for p in required)
        raise TypeError(
            f"{name} takes arguments ({names}); name an argparse.ArgumentParser, a "
            "zero-argument function returning one, or a main(argv) that parses with one"
        )
    try:
        with _parse_captured():
            built = target([]) if required else target()
    except _Captured as captured:
        return captured.parser
    if isinstance(built, argparse.ArgumentParser):
        return built
    raise TypeError(
        f"{name} returned {type(built).__name__} without parsing: name an "
        "argparse.ArgumentParser, a function returning one, or a main(argv) that parses"
    )


class _Captured(BaseException):
    """Raised at the application's first parse: a BaseException, so its handlers let it pass."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__()
        self.parser = parser


_PARSE_METHODS = (
    "parse_args",
    "parse_known_args",
    "parse_intermixed_args",
    "parse_known_intermixed_args",
)


@contextlib.contextmanager
def _parse_captured() -> Iterator[None]:
    """Every parse method of ``ArgumentParser`` raises :class:`_Captured` while this is open.

    Only in the child that imports the tree, and put back as it closes: a subclass that
    overrides a parse method and calls up to argparse's is captured at that call.
    """
    saved = {name: getattr(argparse.ArgumentParser, name) for name in _PARSE_METHODS}

    def capture(self: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> Any:
        raise _Captured(self)

    try:
        for name in _PARSE_METHODS:
            setattr(argparse.ArgumentParser, name, capture)
        yield
    finally:
        for name, method in saved.items():
            setattr(argparse.ArgumentParser, name, method)


def extract_argparse(
    parser: argparse.ArgumentParser, program: str | None, sources: Sequence[Any] = ()
) -> dict[str, Any]:
    """Snapshot ``parser`` as ``exampleguard.tree/v1`` data.

    ``sources`` are the objects (the factory, its module) whose Python source the command lines
    of help texts are looked for in: a parser does not know where it was built.
    """
    name = program or parser.prog
    where = tuple(sources)
    return {
        "format": "exampleguard.tree/v1",
        "program": name,
        "dialect": "argparse",
        "value_syntax": "python",
        # argparse is part of CPython: its rules are those of the interpreter that imported it.
        "framework": "argparse",
        "framework_version": platform.python_version(),
        # Fixed in 3.13 and in patch releases of 3.11 and 3.12: measured, not looked up.
        "option_values_drop_separator": _drops_separator_from_option_values(),
        "commands": list(_walk(parser, [], [], hidden=False, program=name, where=where)),
    }


def _drops_separator_from_option_values() -> bool:
    """Whether this argparse drops ``--`` given as an option's own value (``--opt=--``).

    CPython changed it in 3.13 and backported the change to a patch release of 3.11 and of 3.12
    (gh-109475), so the version alone does not tell: the running argparse is asked.
    """
    probe = argparse.ArgumentParser(add_help=False)
    probe.add_argument("--opt", nargs="*")
    return bool(probe.parse_args(["--opt=--"]).opt == [])


def _walk(
    parser: argparse.ArgumentParser,
    path: list[str],
    aliases: list[list[str]],
    *,
    hidden: bool,
    program: str,
    where: tuple[Any, ...],
) -> Iterator[dict[str, Any]]:
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    actions = [a for a in parser._actions if not isinstance(a, argparse._SubParsersAction)]
    names = _unique_names(actions)
    shared = _shared_destinations(actions)
    constraints = _constraints(parser, names)
    entry: dict[str, Any] = {
        "path": path,
        "aliases": aliases,
        "runnable": not any(sub.required for sub in subparsers),
        "hidden": hidden,
        "parameters": [_parameter(action, names[id(action)], shared) for action in actions],
        "settings": {
            "allow_abbrev": bool(parser.allow_abbrev),
            "prefix_chars": parser.prefix_chars,
        },
    }
    if parser.fromfile_prefix_chars:
        entry["settings"]["fromfile_prefix_chars"] = parser.fromfile_prefix_chars
    description = first_line(parser.description)
    if description:
        entry["description"] = description
    if any(constraints.values()):
        entry["constraints"] = constraints
    examples = _help_examples(parser, actions, " ".join([program, *path]), program, where)
    if examples:
        entry["help_examples"] = examples
    yield entry
    for sub in subparsers:
        help_by_name = {choice.dest: choice.help for choice in sub._choices_actions}
        for child_name, child, child_aliases in group_aliases(sub._name_parser_map.items()):
            yield from _walk(
                child,
                [*path, child_name],
                [[*path, alias] for alias in child_aliases],
                hidden=help_by_name.get(child_name) == argparse.SUPPRESS,
                program=program,
                where=where,
            )


def _help_examples(
    parser: argparse.ArgumentParser,
    actions: list[argparse.Action],
    prog: str,
    program: str,
    where: tuple[Any, ...],
) -> list[dict[str, Any]]:
    """The command lines of the parser's description, epilog, usage and its actions' help."""
    raw: dict[str, Any] = {field: getattr(parser, field, None) for field in _PARSER_TEXTS}
    for action in actions:
        raw[f"help of {max(action.option_strings, key=len, default=action.dest)}"] = action.help
    texts = [(field, _shown_text(text, prog)) for field, text in raw.items()]
    here = pathlib.Path.cwd()
    found: list[dict[str, Any]] = []
    for line in help_examples(texts, program):
        # The source spells the line with `%(prog)s`: the same line of the unfilled text.
        unfilled = _shown_text(raw[line.field], None) or ""
        spelled = unfilled.split("\n")[line.line - 1][line.column - 1 :]
        place = (place_in_source(w, line, here, spelled) for w in where)
        found.append(line.to_json(next(filter(None, place), None)))
    return found


_PARSER_TEXTS = ("description", "epilog", "usage")


def _shown_text(text: Any, prog: str | None) -> str | None:
    """A help text as argparse prints it: ``%(prog)s`` is the command, ``%%`` a percent sign.

    With ``prog`` ``None``, the text as written, dedented the same way.
    """
    if not isinstance(text, str) or text == argparse.SUPPRESS or not text.strip():
        return None
    # Only the program's name is filled in: other %(...)s keys are the action's own values.
    # Filling it in changes no line's indentation, so both texts have the same lines.
    shown = text if prog is None else text.replace("%(prog)s", prog).replace("%%", "%")
    return inspect.cleandoc(shown)


def action_names(parser: argparse.ArgumentParser) -> dict[int, str]:
    """Each action of ``parser`` (by identity) → its snapshot name; subparsers have none.

    The one place actions get their names: the tree and the real parser's verdicts
    (:mod:`~exampleguard._adapters.judge_argparse`) both name them from here.
    """
    return _unique_names(
        [a for a in parser._actions if not isinstance(a, argparse._SubParsersAction)]
    )


def _unique_names(actions: list[argparse.Action]) -> dict[int, str]:
    """Name each action after its ``dest``, disambiguating actions that share one.

    Several flags may store into one destination (``--json``/``--text`` both setting
    ``format``); constraints and argument objects need one name per parameter.
    """
    by_dest: dict[str, int] = {}
    for action in actions:
        by_dest[action.dest] = by_dest.get(action.dest, 0) + 1
    names: dict[int, str] = {}
    used: set[str] = set()
    for action in actions:
        name = action.dest
        if name == argparse.SUPPRESS or by_dest[name] > 1:
            longest = max(action.option_strings, key=len, default=name)
            stripped = longest.lstrip(_prefix_characters(longest))
            name = stripped.replace("-", "_") or action.dest
        names[id(action)] = claim_unique_name(name, used)
    return names


def _shared_destinations(actions: list[argparse.Action]) -> frozenset[str]:
    """The destinations more than one action stores into."""
    counts = Counter(action.dest for action in actions if action.dest != argparse.SUPPRESS)
    return frozenset(dest for dest, count in counts.items() if count > 1)


def _prefix_characters(option: str) -> str:
    return "".join(sorted({char for char in option if not char.isalnum()}))


def _constraints(
    parser: argparse.ArgumentParser, names: dict[int, str]
) -> dict[str, list[list[str]]]:
    exclusive: list[list[str]] = []
    one_of: list[list[str]] = []
    for group in parser._mutually_exclusive_groups:
        members = [names[id(a)] for a in group._group_actions if id(a) in names]
        if len(members) >= 2:
            exclusive.append(members)
        if group.required and members:
            one_of.append(members)
    return {"require_one_of": one_of, "require_together": [], "mutually_exclusive": exclusive}


def _parameter(action: argparse.Action, name: str, shared: frozenset[str]) -> dict[str, Any]:
    record: dict[str, Any] = {"name": name}
    if action.dest in shared:
        record["destination"] = action.dest
    if action.option_strings:
        flags, negations = _split_negations(action)
        record["flags"] = flags
        if negations:
            record["negation_flags"] = negations
    else:
        record["positional"] = True
    kind = _kind(action)
    if kind == "eager":
        record["type"] = "boolean"
        record["eager"] = True
    elif kind == "count":
        record["count"] = True
        record["type"] = "integer"
    elif kind == "flag":
        record["type"] = "boolean"
    else:
        _describe_values(action, record)
        if kind == "append":
            record["multiple"] = True
    if action.option_strings:
        if action.required:
            record["required"] = True
    else:
        # argparse marks `*` and REMAINDER positionals required, but their patterns match
        # nothing too: they are always satisfied, and never missing.
        vacuous = action.nargs in (argparse.ZERO_OR_MORE, argparse.REMAINDER)
        record["required"] = bool(action.required) and not vacuous
    if action.help == argparse.SUPPRESS:
        record["hidden"] = True
    elif isinstance(action.help, str) and action.help.strip():
        record["description"] = first_line(action.help)
    default = _json_value(action.default)
    if default is not None and kind != "eager":
        record["default"] = default
    if kind == "flag" and not record.get("negation_flags"):
        stored = getattr(action, "const", None)
        if isinstance(stored, bool) and stored != switch_stores(record.get("default")):
            # store_const of False, store_true with a default of True: the model's rule
            # ("not the default") would give the other boolean.
            record["flag_value"] = stored
    return record


def _kind(action: argparse.Action) -> str:
    if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
        return "eager"
    own = type(action).__module__ != "argparse"
    if own and action.nargs == 0 and action.default == argparse.SUPPRESS:
        # An application's own action that takes no value and has nothing to store when not
        # given is built as help and version are (mypy's CapturableVersionAction): it acts
        # by itself and ends the parse. The live parser has the last word where it does not.
        return "eager"
    if isinstance(action, argparse._CountAction):
        return "count"
    if isinstance(action, (argparse._AppendAction, argparse._ExtendAction)):
        return "append"
    if action.nargs == 0:
        # store_true/false/const, append_const, BooleanOptionalAction, and custom zero-argument
        # actions all take no value.
        return "flag"
    return "value"


def _split_negations(action: argparse.Action) -> tuple[list[str], list[str]]:
    if isinstance(action, argparse.BooleanOptionalAction):
        negations = [o for o in action.option_strings if o.startswith("--no-")]
        flags = [o for o in action.option_strings if o not in negations]
        return flags, negations
    return list(action.option_strings), []


def _describe_values(action: argparse.Action, record: dict[str, Any]) -> None:
    nargs = action.nargs
    if nargs is None:
        pass
    elif nargs == argparse.OPTIONAL:
        record["nargs"] = "?"
    elif nargs == argparse.ZERO_OR_MORE:
        record["nargs"] = "*"
    elif nargs == argparse.ONE_OR_MORE:
        record["nargs"] = "+"
    elif nargs == argparse.REMAINDER:
        record["nargs"] = "..."
    elif isinstance(nargs, int):
        record["nargs"] = nargs
    type_name = _type_name(action.type)
    if type_name != "string":
        record["type"] = type_name
    # Choices are compared after conversion; only for types exampleguard converts itself can it
    # know which words convert to a choice. Application types are taken as strings (SPEC 4).
    if action.choices is not None and action.type in (None, str, int, float):
        choices = [_json_value(choice) for choice in action.choices]
        if all(isinstance(c, str | int | float) and not isinstance(c, bool) for c in choices):
            record["choices"] = choices


def _type_name(type_func: Any) -> str:
    if type_func is int:
        return "integer"
    if type_func is float:
        return "number"
    if isinstance(type_func, type) and issubclass(type_func, pathlib.PurePath):
        return "path"
    if isinstance(type_func, argparse.FileType):
        return "path"
    return "string"


def _json_value(value: Any) -> Any:
    if value is None or value == argparse.SUPPRESS:
        return None
    if isinstance(value, enum.Enum):
        return _json_value(value.value)
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, (list, tuple)):
        items = [_json_value(item) for item in value]
        return items if all(item is not None for item in items) else None
    if isinstance(value, pathlib.PurePath):
        return str(value)
    return None
