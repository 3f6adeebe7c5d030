"""The Click command of exampleguard's Typer app, built for a fast start.

``typer.main.get_command`` builds every command of an app before the first argument is read,
and a Typer that converts through pydantic converts each option's value, an absent one too,
with a ``TypeAdapter`` it builds for the option on first use: together some milliseconds of
every run, about what checking a small catalog's examples costs. Here:

- :func:`click_command` builds the root group as Typer does (its options, help and errors),
  but a subcommand only when it is looked up; ``--help`` and completion list every command,
  and so build them all.
- :class:`DirectCommand` and :class:`DirectGroup` (passed to Typer as ``cls``) convert the
  values whose conversion by Typer's adapters is certain and trivial (a string, an enum member
  or choice name, a path that is absent or of the accepted kind, a decimal integer within its
  bounds) directly (:mod:`exampleguard._directvalues`). Any other value, every invalid one
  among them, goes through Typer's own conversion: its result and its error message are
  Typer's. A Typer that converts without pydantic keeps its own conversion throughout.
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Callable, Iterator, MutableMapping
from types import ModuleType
from typing import Any

import typer
from typer import main as typer_main
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
    conversion = _conversion()
    if conversion is not None:
        for param in params:
            conversion.convert_directly(param)
    return params


@functools.cache
def _conversion() -> ModuleType | None:
    """The direct conversion, for a Typer that converts through pydantic (``typer._coercion``).

    Earlier Typers (0.26 among them) convert with Click's own types: nothing to bypass.
    """
    try:
        return importlib.import_module("exampleguard._directvalues")
    except ImportError:
        return None
