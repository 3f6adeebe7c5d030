"""Read Click-family command trees: Click, Typer (before and after 0.26), Click extensions.

Nothing here imports ``click``. Commands are recognised by their shared structure — ``params``,
``list_commands``/``get_command``, ``context_class``, ``param_type_name`` — so plain Click, the
copy of Click that Typer 0.26+ bundles as ``typer._click``, and subclasses such as
click-default-group or cloup all read the same way. Where the two diverge (Typer 0.26+ parameters
carry a ``type_descriptor`` instead of a Click ``type``), both shapes are handled.
"""

from __future__ import annotations

import contextlib
import datetime
import enum
import inspect
import io
import pathlib
import re
import sys
import typing
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from exampleguard._adapters._common import (
    claim_unique_name,
    first_line,
    group_aliases,
    switch_stores,
)
from exampleguard._adapters._helptext import help_examples, normalise_click_help, place_in_source

__all__ = [
    "as_click_command",
    "constraint_code",
    "extract_click",
    "framework_constraints",
    "framework_of",
    "is_click_command",
    "is_typer_app",
    "named_parameters",
    "own_convert",
    "parameter_names",
    "subcommands",
]

_PROBE_WORD = "\0exampleguard-probe"
_CLICK_DATETIME_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]


def is_click_command(target: Any) -> bool:
    """Whether ``target`` is a Click-family command or group (by structure, not by class)."""
    return _is_command(target)


def is_typer_app(target: Any) -> bool:
    """Whether ``target`` is a Typer application (``typer.Typer()``)."""
    return type(target).__module__.split(".")[0] == "typer" and hasattr(
        target, "registered_commands"
    )


def as_click_command(target: Any) -> Any:
    """Return the Click-family command for ``target``: a command, a Typer app, or a factory."""
    if _is_command(target):
        return target
    if is_typer_app(target):
        from typer.main import get_command  # noqa: PLC0415 - only Typer apps need Typer

        return get_command(target)
    raise TypeError(
        f"{type(target).__name__} object is not a Click command, Click group or Typer app"
    )


def extract_click(
    command: Any, program: str, paths: Sequence[Sequence[str]] = ()
) -> dict[str, Any]:
    """Snapshot a Click-family command tree as ``exampleguard.tree/v1`` data.

    ``paths`` are command paths a catalog declares (commands and aliases): each word the listed
    commands do not name is looked up through the group's own routing (``resolve_command``,
    which asks ``get_command``), so an alias or a command the group resolves dynamically is in
    the snapshot when the catalog names it.
    """
    root_context = _context(command, program, None)
    commands = list(_walk(command, root_context, [], []))
    _probe(command, root_context, commands, paths)
    framework, version = framework_of(command)
    snapshot: dict[str, Any] = {
        "format": "exampleguard.tree/v1",
        "program": program,
        "dialect": "click",
        "value_syntax": "pydantic" if _uses_type_descriptors(command) else "python",
        "framework": framework,
    }
    if version:
        snapshot["framework_version"] = version
    snapshot["commands"] = commands
    return snapshot


def framework_of(command: Any) -> tuple[str, str | None]:
    """Which framework's classes ``command`` is built on (``click`` or ``typer``), and its version.

    Typer 0.26 and later bundle their own Click (``typer._click``): the version is Typer's.
    """
    package = "click"
    for cls in type(command).__mro__:
        # The framework's own base class: click.core.Command, or typer._click.core.Command.
        if cls.__name__ == "Command" and cls.__module__.endswith(".core"):
            package = "typer" if cls.__module__.startswith("typer.") else "click"
            break
    # Typer states its version in its module: reading the distribution's metadata instead
    # costs the child the import of importlib.metadata and a scan of the import path.
    stated = getattr(sys.modules.get(package), "__version__", None) if package == "typer" else None
    if isinstance(stated, str) and stated:
        return package, stated
    return package, _installed_version(package)


def _installed_version(package: str) -> str | None:
    """The installed version of ``package``, from its distribution's metadata.

    The application may have blocked modules (``sys.modules[name] = None``) that
    ``importlib.metadata`` imports (``json``, from CPython 3.13 on): they are unblocked while
    it is imported, and blocked again after, as the application left them.
    """
    blocked = [name for name, module in list(sys.modules.items()) if module is None]
    for name in blocked:
        del sys.modules[name]
    try:
        # Only for Click, which deprecates __version__.
        import importlib.metadata  # noqa: PLC0415

        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return None
    finally:
        for name in blocked:
            sys.modules[name] = None  # type: ignore[assignment]


def _probe(
    root: Any, root_context: Any, commands: list[dict[str, Any]], paths: Sequence[Sequence[str]]
) -> None:
    """Add the aliases (and commands) that the groups' own routing resolves for ``paths``."""
    by_path = {tuple(entry["path"]): entry for entry in commands}
    for words in paths:
        command, context = root, root_context
        path: tuple[str, ...] = ()
        for word in words:
            entry = by_path.get(path)
            if entry is None or not _is_group(command):
                break
            resolved = _resolve(command, context, word)
            if resolved is None:
                break
            child = resolved
            listed = _listed_name(command, context, child)
            target = (*path, listed) if listed is not None else (*path, word)
            if target not in by_path:
                # A command the group routes but does not list: read it like a listed one.
                child_context = _context(child, word, context)
                for new in _walk(child, child_context, list(target), []):
                    by_path.setdefault(tuple(new["path"]), new)
                    commands.append(new)
            elif listed is not None and listed != word:
                aliases = by_path[target]["aliases"]
                if [*path, word] not in aliases:
                    aliases.append([*path, word])
            command, context, path = child, _context(child, target[-1], context), target


_LISTINGS: dict[int, tuple[Any, list[tuple[str, Any, list[str]]]]] = {}


def _listing(group: Any, context: Any) -> list[tuple[str, Any, list[str]]]:
    # Probing many paths through one group lists its commands once (the group is kept alive
    # with its listing, so its id cannot be reused meanwhile).
    found = _LISTINGS.get(id(group))
    if found is None or found[0] is not group:
        found = _LISTINGS[id(group)] = (group, subcommands(group, context))
    return found[1]


def _resolve(group: Any, context: Any, word: str) -> Any:
    """The command ``group`` routes ``word`` to, as ``Group.invoke`` would, or ``None``."""
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            resolver = getattr(group, "resolve_command", None)
            if callable(resolver):
                _, found, _ = resolver(context, [word])
            else:
                found = group.get_command(context, word)
    except Exception:
        return None
    return found if found is not None and _is_command(found) else None


def _listed_name(group: Any, context: Any, child: Any) -> str | None:
    for name, listed, _ in _listing(group, context):
        if listed is child:
            return name
    own = getattr(child, "name", None)
    names = set(group.list_commands(context))
    return own if isinstance(own, str) and own in names else None


def _is_command(target: Any) -> bool:
    return (
        isinstance(getattr(target, "params", None), list)
        and callable(getattr(target, "make_context", None))
        and hasattr(target, "context_class")
    )


def _is_group(command: Any) -> bool:
    return callable(getattr(command, "list_commands", None)) and callable(
        getattr(command, "get_command", None)
    )


def _uses_type_descriptors(command: Any) -> bool:
    context = _context(command, "probe", None)
    return any(hasattr(param, "type_descriptor") for param in command.get_params(context))


def _context(command: Any, name: str, parent: Any) -> Any:
    settings = dict(getattr(command, "context_settings", None) or {})
    return command.context_class(command, parent=parent, info_name=name, **settings)


def _walk(command: Any, context: Any, path: list[str], aliases: list[list[str]]) -> Iterator[Any]:
    group = _is_group(command)
    chain = bool(getattr(command, "chain", False))
    if chain:
        raise TypeError(
            f"the group at {' '.join(path) or 'the top level'} chains subcommands "
            "(chain=True), which exampleguard does not support yet"
        )
    children = subcommands(command, context) if group else []
    default_name = _default_command(command, context, children) if group else None
    runnable = not group or bool(getattr(command, "invoke_without_command", False))
    named = named_parameters(command, context)
    parameters = [record for _, record in named]
    entry: dict[str, Any] = {
        "path": path,
        "aliases": aliases,
        "runnable": runnable,
        "hidden": bool(getattr(command, "hidden", False)),
        "parameters": parameters,
        "description": first_line(getattr(command, "help", None)),
        "settings": {
            "allow_interspersed_args": bool(context.allow_interspersed_args),
            "ignore_unknown_options": bool(context.ignore_unknown_options),
            "allow_extra_args": bool(context.allow_extra_args),
            "no_args_is_help": bool(getattr(command, "no_args_is_help", False)),
        },
    }
    constraints = framework_constraints(command, named)
    if constraints:
        entry["constraints"] = constraints
    lookup = _own_lookup(command) if group else None
    if lookup is not None:
        entry["own_lookup"] = lookup
    if default_name is not None:
        entry["default_command"] = default_name
        entry["default_if_no_args"] = bool(getattr(command, "default_if_no_args", False))
    examples = _help_examples(command, context)
    if examples:
        entry["help_examples"] = examples
    yield entry
    for name, child, child_aliases in children:
        child_context = _context(child, name, context)
        yield from _walk(
            child,
            child_context,
            [*path, name],
            [[*path, alias] for alias in child_aliases],
        )


def framework_constraints(
    command: Any, named: Sequence[tuple[Any, dict[str, Any]]]
) -> dict[str, list[list[str]]]:
    """The constraints a command checks as it parses (cloup's), as the snapshot's three kinds.

    cloup binds each constraint to parameters (``all_constraints``: an option group's and those
    of ``@constraint``). Read by structure, as cloup builds them: ``mutually_exclusive``
    (at most one), ``require_any`` (at least one), ``require_one`` (exactly one: both),
    ``all_or_none`` (together), ``require_all`` (each one required), combined with ``&``.
    A constraint the snapshot cannot state exactly (``If`` conditions, counts other than one,
    ``|`` other than ``all_or_none``), or one over a parameter whose default cloup would count
    as set, is left out: the framework's parser still judges it, and a disagreement of the
    model is a ``model-mismatch`` warning.
    """
    bound = getattr(command, "all_constraints", None)
    if not isinstance(bound, tuple | list) or not bound:
        return {}
    names = {id(param): record["name"] for param, record in named}
    found: dict[str, list[list[str]]] = {}
    for item in bound:
        params = list(getattr(item, "params", ()) or ())
        members = [names.get(id(param)) for param in params]
        if not params or None in members or any(_counts_as_set(p) for p in params):
            continue
        kinds = _constraint_kinds(getattr(item, "constraint", None))
        if kinds is None:
            continue
        for kind in kinds:
            if kind == "require_all":
                # Each one required: a group of one each.
                groups = [[name] for name in members if name is not None]
                found.setdefault("require_one_of", []).extend(groups)
            else:
                found.setdefault(kind, []).append([n for n in members if n is not None])
    return found


def _own_lookup(group: Any) -> str | None:
    """The group's class, where it looks its commands up with code of its own.

    The framework's ``list_commands`` and ``get_command`` live in its ``core`` module (Click's,
    Typer's bundled Click's, or Typer's own ``TyperGroup``); one defined anywhere else is the
    application's or an extension's, which may create commands from the command line.
    """
    for attribute in ("get_command", "list_commands"):
        owner = next((c for c in type(group).__mro__ if attribute in vars(c)), None)
        if owner is not None and owner.__module__ not in _FRAMEWORK_GROUP_MODULES:
            return f"{owner.__qualname__}.{attribute}"
    return None


# Where the frameworks define their groups' lookups: Click, Typer's bundled Click, and Typer.
_FRAMEWORK_GROUP_MODULES = frozenset({"click.core", "typer._click.core", "typer.core"})


def _constraint_kinds(constraint: Any) -> list[str] | None:
    """The snapshot kinds ``constraint`` is exactly, or ``None`` where it is no combination."""
    kind = type(constraint).__name__
    if kind == "Rephraser":
        return _constraint_kinds(getattr(constraint, "constraint", None))
    if kind == "_RequireAll":
        return ["require_all"]
    if kind == "RequireAtLeast":
        return {0: [], 1: ["require_one_of"]}.get(getattr(constraint, "min_num_params", -1))
    if kind == "AcceptAtMost":
        return {1: ["mutually_exclusive"]}.get(getattr(constraint, "max_num_params", -1))
    if kind == "RequireExactly":
        exactly = ["require_one_of", "mutually_exclusive"]
        return exactly if getattr(constraint, "num_params", -1) == 1 else None
    operands = list(getattr(constraint, "constraints", ()) or ())
    if kind == "And":
        kinds: list[str] = []
        for operand in operands:
            more = _constraint_kinds(operand)
            if more is None:
                return None
            kinds.extend(more)
        return kinds
    if kind == "Or" and len(operands) == 2:
        # cloup's all_or_none: all required, or none accepted.
        parts = sorted(_or_operand(operand) for operand in operands)
        if parts == ["all", "none"]:
            return ["require_together"]
    return None


def constraint_code(error: Any) -> str:
    """The diagnostic code of a cloup ``ConstraintViolated``: which rule the words broke.

    ``exactly one`` broken by none given is ``require-one-of``, by two ``mutually-exclusive``;
    a constraint the snapshot cannot state is named by what was wrong: too many parameters set
    (``mutually-exclusive``) or too few (``require-one-of``).
    """
    constraint = getattr(error, "constraint", None)
    while type(constraint).__name__ == "Rephraser":
        constraint = getattr(constraint, "constraint", None)
    params = list(getattr(error, "params", ()) or ())
    values = getattr(getattr(error, "ctx", None), "params", None) or {}
    given = sum(1 for param in params if _is_set(param, values.get(getattr(param, "name", ""))))
    kinds = _constraint_kinds(constraint) or []
    if kinds == ["require_together"]:
        return "require-together"
    if kinds == ["require_all"]:
        return "missing-required"
    most = getattr(constraint, "max_num_params", getattr(constraint, "num_params", None))
    if isinstance(most, int) and given > most:
        return "mutually-exclusive"
    return "require-one-of"


def _is_set(param: Any, value: Any) -> bool:
    """What cloup's ``param_value_is_set`` counts as given in ``ctx.params``."""
    if value is None:
        return False
    if getattr(param, "is_flag", False) and getattr(param, "is_bool_flag", False):
        return bool(value)
    if getattr(param, "nargs", 1) != 1 or getattr(param, "multiple", False):
        try:
            return len(value) > 0
        except TypeError:
            return True
    return True


def _or_operand(constraint: Any) -> str:
    kind = type(constraint).__name__
    if kind == "Rephraser":
        return _or_operand(getattr(constraint, "constraint", None))
    if kind == "_RequireAll":
        return "all"
    if kind == "AcceptAtMost" and getattr(constraint, "max_num_params", -1) == 0:
        return "none"
    return "other"


def _counts_as_set(param: Any) -> bool:
    """Whether cloup counts ``param`` as set without its being given: a default that is a value.

    cloup reads ``ctx.params``: a default of ``None`` (or an empty tuple) is unset, a switch's
    ``False`` is unset, anything else (a count's ``0``, an option's default) is set.
    """
    if getattr(param, "count", False):
        return True
    default = getattr(param, "default", None)
    if default is None or _is_unset(default) or callable(default):
        return callable(default)
    if getattr(param, "is_flag", False) and getattr(param, "is_bool_flag", False):
        return bool(default)
    return not (isinstance(default, tuple | list) and not default)


def _help_examples(command: Any, context: Any) -> list[dict[str, Any]]:
    """The command lines of the command's help, epilog and parameters' help, placed in source."""
    root = context
    while getattr(root, "parent", None) is not None:
        root = root.parent
    program = str(root.info_name)
    texts: list[tuple[str, str | None]] = [
        ("help", normalise_click_help(getattr(command, "help", None))),
        ("epilog", normalise_click_help(getattr(command, "epilog", None))),
    ]
    for param in command.get_params(context):
        opts = [opt for opt in getattr(param, "opts", None) or () if isinstance(opt, str)]
        named = max(opts, key=len) if opts else getattr(param, "name", None)
        texts.append((f"help of {named}", normalise_click_help(getattr(param, "help", None))))
    lines = help_examples(texts, program)
    if not lines:
        return []
    callback = getattr(command, "callback", None)
    # The function holds its docstring and decorators; a text kept in a constant is found in
    # its module.
    if callable(callback):
        callback = inspect.unwrap(callback)
    where = [callback, inspect.getmodule(callback)] if callable(callback) else []
    here = pathlib.Path.cwd()
    return [
        line.to_json(next(filter(None, (place_in_source(w, line, here) for w in where)), None))
        for line in lines
    ]


def named_parameters(command: Any, context: Any) -> list[tuple[Any, dict[str, Any]]]:
    """Each parameter of ``command`` the snapshot records, with its record (and unique name).

    The one place parameters get their snapshot names, with :func:`parameter_names`: the tree
    and the real parser's verdicts (:mod:`~exampleguard._adapters.judge_click`) name them alike.
    """
    pairs = [
        (param, record)
        for param in command.get_params(context)
        if (record := _parameter(param)) is not None
    ]
    _unique_names([record for _, record in pairs])
    return pairs


def parameter_names(command: Any, context: Any) -> list[tuple[Any, str]]:
    """Each parameter of ``command`` the snapshot records, with its snapshot name.

    The names :func:`named_parameters` gives, without building the rest of each record: the
    real parser's check names every command it parses, and a large tree has thousands.
    """
    params = command.get_params(context)
    named = [
        (param, _own_name(param))
        for param in params
        if getattr(param, "param_type_name", None) in _RECORDED_KINDS
    ]
    if len({name for _, name in named}) == len(named):
        # Every name is its own (the usual case): no record is needed to tell them apart.
        return named
    pairs = [(param, record) for param in params if (record := _naming(param)) is not None]
    _unique_names([record for _, record in pairs])
    return [(param, record["name"]) for param, record in pairs]


def _naming(param: Any) -> dict[str, Any] | None:
    """What a parameter's snapshot name is made from: its name and, for an option, its flags."""
    kind = getattr(param, "param_type_name", None)
    if kind == "argument":
        return {"name": _own_name(param)}
    if kind == "option":
        return {"name": _own_name(param), "flags": list(param.opts)}
    return None


_RECORDED_KINDS = ("argument", "option")
"""The kinds of parameter a snapshot records (``param_type_name``)."""


def _own_name(param: Any) -> Any:
    """A recorded parameter's own name, before it is told apart from others that share it."""
    if getattr(param, "param_type_name", None) == "option":
        return param.name or param.opts[0].lstrip("-")
    return param.name


def _unique_names(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give parameters that share a destination names of their own, after their longest flag.

    ``--upper`` and ``--lower`` both storing into ``transform`` become ``transform`` and
    ``lower``: constraints and argument objects need one name per parameter. Each keeps the
    shared name as its ``destination``.
    """
    if len({record["name"] for record in records}) == len(records):
        # Every name is its own (the usual case): nothing to tell apart.
        return records
    shared = Counter(record["name"] for record in records)
    used: set[str] = set()
    for record in records:
        name = record["name"]
        if shared[name] > 1:
            record["destination"] = name
        if name in used and record.get("flags"):
            longest = max(record["flags"], key=len)
            name = longest.lstrip("-+/").replace("-", "_") or name
        record["name"] = claim_unique_name(name, used)
    return records


def subcommands(group: Any, context: Any) -> list[tuple[str, Any, list[str]]]:
    """Every subcommand as ``(name, command, aliases)``, in the group's listing order.

    A command listed under several names (Click's ``add_command(cmd, "alias")`` idiom) keeps the
    first as its name and the others as aliases; names an extension such as cloup records in a
    command's ``aliases`` attribute count when the group really routes them.
    """
    # A generator, so each lookup still happens in listing order as names are grouped.
    listed = (
        (name, _routed(group, context, name, child))
        for name in group.list_commands(context)
        if (child := group.get_command(context, name)) is not None
    )
    found = group_aliases(listed)
    registry = getattr(group, "commands", None)
    for name, child, aliases in found:
        for alias in _alias_candidates(child, registry):
            if not isinstance(alias, str) or alias == name or alias in aliases:
                continue
            try:
                routed = group.get_command(context, alias)
            except Exception:
                routed = None
            if routed is child:
                aliases.append(alias)
    return found


def _alias_candidates(child: Any, registry: Any) -> list[str]:
    """Words that may route to ``child``: names an extension records, and registered spellings.

    cloup keeps a command's ``aliases``; Hugging Face's ``hf`` registers ``"list | ls"`` and
    lists ``list``. Each word of a registered name (split at ``|``, ``,`` and spaces) is only a
    candidate: it counts when the group's own ``get_command`` routes it to the same command.
    """
    candidates = [a for a in getattr(child, "aliases", None) or () if isinstance(a, str)]
    spellings = [getattr(child, "name", None)]
    if isinstance(registry, dict):
        spellings += [key for key, value in registry.items() if value is child]
    for spelling in spellings:
        if isinstance(spelling, str) and _ALIAS_SEPARATOR.search(spelling):
            candidates += [word for word in _ALIAS_SEPARATOR.split(spelling) if word]
    return candidates


_ALIAS_SEPARATOR = re.compile(r"\s*[|,]\s*|\s+")


def _routed(group: Any, context: Any, name: str, listed: Any) -> Any:
    """The command ``group`` really runs for its listed ``name``: its own routing's answer.

    A lazy group's ``get_command`` may hand out a placeholder with no parameters that its
    ``resolve_command`` swaps for the real command as the user's command line reaches it
    (Hugging Face's ``hf download``): the framework's own lookup, ``Group.invoke``'s
    ``resolve_command``, materialises it, with its parameters. Where routing fails or names
    another command, the listed one stands.
    """
    resolver = getattr(group, "resolve_command", None)
    if not callable(resolver):
        return listed
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            routed_name, routed, _ = resolver(context, [name])
    except (Exception, SystemExit):
        # A group's routing may exit for a word it does not route (hf's extension fallback).
        return listed
    if routed is None or routed is listed or routed_name != name or not _is_command(routed):
        return listed
    return routed


def _default_command(
    group: Any, context: Any, children: list[tuple[str, Any, list[str]]]
) -> str | None:
    """The subcommand an unknown word routes to, for groups such as click-default-group."""
    try:
        routed = group.get_command(context, _PROBE_WORD)
    except Exception:
        return None
    if routed is None:
        return None
    for name, child, _ in children:
        if child is routed:
            return name
    return getattr(group, "default_cmd_name", None)


# -- parameters ------------------------------------------------------------------------------------


def _parameter(param: Any) -> dict[str, Any] | None:
    kind = getattr(param, "param_type_name", None)
    if kind == "argument":
        return _argument(param)
    if kind == "option":
        return _option(param)
    return None


def _argument(param: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"name": param.name, "positional": True}
    nargs = int(param.nargs)
    if nargs != 1:
        record["nargs"] = nargs
    record["required"] = bool(param.required) and not _has_default(param)
    _describe_type(param, record)
    _common(param, record)
    return record


def _option(param: Any) -> dict[str, Any]:
    record: dict[str, Any] = _naming(param) or {}
    is_flag = bool(getattr(param, "is_flag", False))
    count = bool(getattr(param, "count", False))
    if count:
        record["count"] = True
        record["type"] = "integer"
    elif is_flag:
        record["type"] = "boolean"
        secondary = [opt for opt in getattr(param, "secondary_opts", []) or [] if opt]
        if secondary:
            record["negation_flags"] = secondary
    else:
        _describe_type(param, record)
        nargs = int(param.nargs)
        if getattr(param, "_flag_needs_value", False) and nargs == 1:
            # An option whose value may be omitted (Click's flag_value without is_flag, or a
            # prompt that is not required): bare, it takes no value.
            record["nargs"] = "?"
        elif nargs != 1 or record.get("type") == "boolean":
            record["nargs"] = nargs
    if getattr(param, "multiple", False):
        record["multiple"] = True
    prompt = getattr(param, "prompt", None)
    # With prompt_required=False, Click prompts only for a bare flag given without its value.
    if prompt is not None and prompt is not False and getattr(param, "prompt_required", True):
        record["prompt"] = True
        # A prompted flag whose value never reaches the command exists only to answer the
        # prompt (Click's confirmation_option): giving it is skipping a confirmation.
        if is_flag and not count and not getattr(param, "expose_value", True):
            record["confirmation"] = True
    required = bool(param.required) and not _has_default(param)
    if required:
        record["required"] = True
    # Help and version options end parsing: eager, valueless and not passed to the callback.
    if param.is_eager and is_flag and not getattr(param, "expose_value", True):
        record["eager"] = True
    _common(param, record)
    if is_flag and not getattr(param, "is_bool_flag", True) and isinstance(param.default, bool):
        # A feature switch's boolean default says whether it is the switch chosen by default,
        # not a value: given, it stores its flag_value, never "not the default".
        record.pop("default", None)
    if is_flag and not count and not record.get("negation_flags"):
        stored = getattr(param, "flag_value", None)
        if isinstance(stored, bool) and stored != switch_stores(record.get("default")):
            # `--reload` with default=True and flag_value=True (or `--no-reload` storing False
            # into the same place): the model's rule ("not the default") would invert it.
            record["flag_value"] = stored
    return record


def _common(param: Any, record: dict[str, Any]) -> None:
    if getattr(param, "hidden", False):
        record["hidden"] = True
    help_text = first_line(getattr(param, "help", None))
    if help_text:
        record["description"] = help_text
    default = _json_default(getattr(param, "default", None))
    if default is not None and not record.get("eager"):
        record["default"] = default


def _has_default(param: Any) -> bool:
    default = getattr(param, "default", None)
    if default is None:
        # Where "no default" is a sentinel of its own (Click 8.3 and later), an explicit
        # default=None is a default, and it satisfies required=True; but not for a parameter
        # of several values, whose None becomes the empty tuple Click counts as missing
        # (hf's `jobs scheduled run COMMAND...`).
        several = int(getattr(param, "nargs", 1)) != 1 or bool(getattr(param, "multiple", False))
        return _tracks_unset(param) and not several
    if _is_unset(default):
        return False
    return not (isinstance(default, (tuple, list)) and not default)


def _tracks_unset(param: Any) -> bool:
    for cls in type(param).__mro__:
        if cls.__name__ == "Parameter" and cls.__module__.endswith(".core"):
            utils = sys.modules.get(cls.__module__.rsplit(".", 1)[0] + "._utils")
            return utils is not None and hasattr(utils, "UNSET")
    return False


def _is_unset(value: Any) -> bool:
    # Click 8.3+ marks "no default" with a sentinel object rather than None.
    return type(value).__name__ in {"Sentinel", "_Sentinel", "UnsetType"} or repr(value) in {
        "UNSET",
        "Sentinel.UNSET",
    }


def _json_default(value: Any) -> Any:
    if value is None or _is_unset(value) or callable(value):
        return None
    if isinstance(value, enum.Enum):
        return _json_default(value.value)
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, (tuple, list)):
        items = [_json_default(item) for item in value]
        return items if all(item is not None for item in items) else None
    if isinstance(value, pathlib.PurePath | uuid.UUID | datetime.datetime | datetime.date):
        return str(value)
    return None


# -- types -----------------------------------------------------------------------------------------


def _describe_type(param: Any, record: dict[str, Any]) -> None:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        _describe_annotation(param, descriptor, record)
        return
    param_type = getattr(param, "type", None)
    if param_type is None:
        return
    if getattr(param_type, "is_composite", False) and hasattr(param_type, "types"):
        parts: list[dict[str, Any]] = [{} for _ in param_type.types]
        record["type"] = [
            _click_type_name(item, part) for item, part in zip(param_type.types, parts, strict=True)
        ]
        if any("choices" in part for part in parts):
            # A tuple may mix free values and choices (click.Tuple([str, click.Choice(...)])).
            record["item_choices"] = [part.get("choices") for part in parts]
            if any(part.get("case_sensitive") is False for part in parts):
                record["case_sensitive"] = False
        return
    name = _click_type_name(param_type, record)
    if name != "string":
        record["type"] = name


def _click_type_name(param_type: Any, record: dict[str, Any]) -> str:
    name = str(getattr(param_type, "name", "") or "").lower()
    if (name == "choice" or _derives_from_choice(param_type)) and hasattr(param_type, "choices"):
        record["choices"] = [_choice_word(choice) for choice in param_type.choices]
        if not getattr(param_type, "case_sensitive", True):
            record["case_sensitive"] = False
        if own_convert(param_type):
            _probe_choices(param_type, record)
        return "string"
    if name in {"integer range", "float range"}:
        if not getattr(param_type, "clamp", False):
            for bound in ("min", "max"):
                value = getattr(param_type, bound, None)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    record[bound] = value
            for bound in ("min_open", "max_open"):
                if getattr(param_type, bound, False):
                    record[bound] = True
        return "integer" if name == "integer range" else "number"
    if name == "datetime":
        formats = getattr(param_type, "formats", None)
        record["formats"] = list(formats) if formats else list(_CLICK_DATETIME_FORMATS)
        return "datetime"
    return {
        "integer": "integer",
        "float": "number",
        "boolean": "boolean",
        "path": "path",
        "filename": "path",
        "file": "path",
        "uuid": "uuid",
    }.get(name, "string")


def own_convert(param_type: Any) -> bool:
    """Whether ``param_type`` converts with a ``convert`` of its own, not the framework's.

    The framework's types live in one module (``click.types``, ``typer._click.types``): a
    ``convert`` defined on a class from anywhere else is the application's.
    """
    mro = type(param_type).__mro__
    base = next((cls for cls in reversed(mro) if cls.__name__ == "ParamType"), None)
    owner = next((cls for cls in mro if "convert" in vars(cls)), None)
    return base is not None and owner is not None and owner.__module__ != base.__module__


def _derives_from_choice(param_type: Any) -> bool:
    """Whether ``param_type`` derives from the framework's ``Choice``, whatever its ``name``.

    celery's ``WorkersPool`` is a Choice named ``pool``.
    """
    mro = type(param_type).__mro__
    base = next((cls for cls in reversed(mro) if cls.__name__ == "ParamType"), None)
    return base is not None and any(
        cls.__name__ == "Choice" and cls.__module__ == base.__module__ for cls in mro
    )


class _Unknowable(Exception):
    """A probe of an application's ``convert`` raised something other than a usage error."""


def _probe_choices(param_type: Any, record: dict[str, Any]) -> None:
    """Record what a Choice subclass's own ``convert`` accepts, asking that ``convert``.

    celery's ``LogLevel`` upper-cases before the base check (``-l info`` is valid), Hugging
    Face's ``SoftChoice`` accepts any word: each choice is tried as written, lower-cased and
    upper-cased, and a word that is no choice is tried too. A ``convert`` that needs the parse's
    context (``ctx.obj``) raises something other than a usage error: then the base Choice's
    rules are recorded, and the framework's parser judges where it can.
    """
    record["own_convert"] = True

    def accepts(word: str) -> bool:
        try:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                param_type.convert(word, None, None)
        except Exception as error:
            if "ClickException" in [cls.__name__ for cls in type(error).__mro__]:
                return False
            raise _Unknowable from error
        return True

    choices = [choice for choice in record["choices"] if isinstance(choice, str)]
    try:
        if accepts(_PROBE_WORD):
            del record["choices"]
            record.pop("case_sensitive", None)
            return
        accepted = [choice for choice in record["choices"] if accepts(str(choice))]
        if choices and all(
            accepts(choice.lower()) and accepts(choice.upper()) for choice in choices
        ):
            record["case_sensitive"] = False
    except _Unknowable:
        return
    record["choices"] = accepted


def _choice_word(choice: Any) -> str | int | float:
    # Click matches enum choices by member name, and everything else by its string form; it
    # gives back the choice itself, so a number stays a number (cloup.Choice([8, 14])).
    if isinstance(choice, enum.Enum):
        return choice.name
    if isinstance(choice, int | float) and not isinstance(choice, bool):
        return choice
    return str(choice)


def _describe_annotation(param: Any, descriptor: Any, record: dict[str, Any]) -> None:
    """Describe a Typer 0.26+ parameter from its type descriptor (annotation + metadata)."""
    annotation = descriptor.annotation
    origin = typing.get_origin(annotation)
    if origin is list:
        (annotation,) = typing.get_args(annotation) or (str,)
    elif origin is tuple:
        record["type"] = [_annotation_name(item) for item in typing.get_args(annotation)]
        return
    choices = getattr(descriptor, "choices", None)
    if choices:
        record["choices"] = [
            str(choice.value) if isinstance(choice, enum.Enum) else str(choice)
            for choice in choices
        ]
        if not getattr(descriptor, "case_sensitive", True):
            record["case_sensitive"] = False
        return
    name = _annotation_name(annotation)
    if name != "string":
        record["type"] = name
    info = getattr(descriptor, "parameter_info", None)
    if name in {"integer", "number"} and not getattr(info, "clamp", False):
        for bound in ("min", "max"):
            value = getattr(param, bound, None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                record[bound] = value
    if name == "datetime":
        formats = getattr(info, "formats", None)
        if formats:
            record["formats"] = list(formats)


def _annotation_name(annotation: Any) -> str:
    if annotation is bool:
        return "boolean"
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return "boolean"
        if issubclass(annotation, int):
            return "integer"
        if issubclass(annotation, float):
            return "number"
        if issubclass(annotation, pathlib.PurePath):
            return "path"
        if issubclass(annotation, datetime.datetime):
            return "datetime"
        if issubclass(annotation, uuid.UUID):
            return "uuid"
    return "string"
