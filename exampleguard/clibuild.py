"""The Click command of exampleguard's Typer app, built for a fast start.

``typer.main.get_command`` builds every command of an app before the first argument is read,
and Typer converts each option's value, an absent one too, through a pydantic ``TypeAdapter``
it builds for the option on first use: importing pydantic's type machinery and building a
dozen adapters costs a plain ``validate`` more than its own work on a small catalog. Here:

- :func:`click_command` builds the root group as Typer does (its options, help and errors),
  but a subcommand only when it is looked up; ``--help`` and completion list every command,
  and so build them all.
- :class:`DirectCommand` and :class:`DirectGroup` (passed to Typer as ``cls``) convert the
  values whose conversion by Typer's adapters is certain and trivial (a string, an enum member
  or choice name, a path that is absent or of the accepted kind, a decimal integer within its
  bounds) directly. Any other value, every invalid one among them, goes through Typer's own
  conversion: its result and its error message are Typer's.
"""

from __future__ import annotations

import copy
import enum
import functools
import pathlib
import re
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import typer
from typer import main as typer_main
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_choice, coerce_cli_path, lenient_issubclass
from typer.core import TyperCommand, TyperGroup

__all__ = ["DirectCommand", "DirectGroup", "click_command"]


def click_command(app: typer.Typer, prepare: Callable[[Any], None]) -> Any:
    """The Click group of ``app``; each subcommand is built, then ``prepare``-d, when first used.

    ``app`` has a callback (so Typer makes it a group) and names each group it adds.
    """
    shell = copy.copy(app)
    shell.registered_commands = []
    shell.registered_groups = []
    root = typer_main.get_command(shell)
    assert isinstance(root, TyperGroup), "an app with a callback is a group"
    prepare(root)
    builders: dict[str, Callable[[], Any]] = {}
    for info in app.registered_commands:
        assert info.callback is not None
        name = info.name or typer_main.get_command_name(info.callback.__name__)
        builders[name] = functools.partial(
            typer_main.get_command_from_info,
            info,
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
        )
    for group in app.registered_groups:
        assert isinstance(group.name, str), "every group of the app is added with its name"
        builders[group.name] = functools.partial(
            typer_main.get_group_from_info,
            group,
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
            suggest_commands=app.suggest_commands,
        )
    root.commands = _Commands(builders, prepare)
    return root


class _Commands(MutableMapping[str, Any]):
    """A group's subcommands by name, in the app's order, each built on its first lookup."""

    def __init__(
        self, builders: dict[str, Callable[[], Any]], prepare: Callable[[Any], None]
    ) -> None:
        self._builders = builders
        self._prepare = prepare
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        built = self._built.get(name)
        if built is None:
            built = self._built[name] = self._builders[name]()
            self._prepare(built)
        return built

    def __setitem__(self, name: str, command: Any) -> None:
        self._builders[name] = lambda: command
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._builders[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)


class DirectCommand(TyperCommand):
    """A Typer command whose parameters (its help option too) convert values directly."""

    def get_params(self, ctx: Any) -> list[Any]:
        """The command's parameters, Typer's, with the direct conversion."""
        return _direct(super().get_params(ctx))


class DirectGroup(TyperGroup):
    """A Typer group whose parameters (its help option too) convert values directly."""

    def get_params(self, ctx: Any) -> list[Any]:
        """The group's parameters, Typer's, with the direct conversion."""
        return _direct(super().get_params(ctx))


def _direct(params: list[Any]) -> list[Any]:
    """``params``, each Typer parameter among them given the direct conversion (once)."""
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if isinstance(descriptor, TypeDescriptor) and getattr(param, "_runtime_param", 0) is None:
            param._runtime_param = _DirectValues(
                parameter_info=descriptor.parameter_info,
                annotation=descriptor.annotation,
                descriptor=descriptor,
            )
    return params


_UNSURE = object()
"""A value whose conversion is left to Typer's own."""

_DECIMAL = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class _DirectValues(RuntimeParam):
    """A parameter's values converted without pydantic where the result is certain.

    Typer's own ``coerce`` runs first: an absent value (``None``) and a string given to a
    parameter that takes several are settled there, before any conversion.
    """

    descriptor: TypeDescriptor

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        if not self.descriptor.is_list:
            converted = self._leaf(self.annotation, value, param, ctx)
        elif isinstance(value, (list, tuple)):
            (item_type,) = self.annotation.__args__
            items = [self._leaf(item_type, item, param, ctx) for item in value]
            converted = _UNSURE if any(item is _UNSURE for item in items) else items
        else:
            converted = _UNSURE
        if converted is _UNSURE:
            typer_own = build_runtime_param(self.descriptor)
            return typer_own._coerce_value(value, param=param, ctx=ctx)
        return converted

    def _leaf(self, annotation: Any, value: Any, param: Any, ctx: Any) -> Any:
        """``value`` converted to ``annotation`` as Typer's adapter would, or ``_UNSURE``."""
        info = self.parameter_info
        if info.parser is not None or self.descriptor.is_file or self.descriptor.is_tuple:
            return _UNSURE
        if lenient_issubclass(annotation, enum.Enum):
            return _attempt(
                coerce_cli_choice,
                value,
                choices=list(annotation),
                case_sensitive=info.case_sensitive,
                ctx=ctx,
            )
        if annotation is int:
            return _integer(value, info.min, info.max, clamp=info.clamp)
        if annotation is str:
            return value if type(value) is str else _UNSURE
        if annotation is pathlib.Path and info.path_type is None:
            # Typer's adapter makes the path with pydantic, which for a string is Path(text).
            if type(value) is str and value:
                value = pathlib.Path(value)
            if not isinstance(value, pathlib.Path):
                return _UNSURE
            return _attempt(
                coerce_cli_path, value, info, path_type=pathlib.Path, param=param, ctx=ctx
            )
        return _UNSURE


def _attempt(convert: Callable[..., Any], *arguments: Any, **options: Any) -> Any:
    # Any failure is Typer's to report, in its own words: it converts the value again.
    try:
        return convert(*arguments, **options)
    except Exception:
        return _UNSURE


def _integer(value: Any, low: float | None, high: float | None, *, clamp: bool) -> Any:
    if type(value) is str and _DECIMAL.fullmatch(value):
        number = int(value)
    elif type(value) is int:
        number = value
    else:
        return _UNSURE
    if clamp or (low is not None and number < low) or (high is not None and number > high):
        return _UNSURE
    return number
