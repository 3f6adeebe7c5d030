"""Option values converted as Typer's pydantic adapters would, without them, where certain.

Typer (from the release that converts through pydantic) turns each option's value into its
annotation's type with a ``TypeAdapter`` built for the option on first use, an absent value
too. :func:`convert_directly` gives a parameter a conversion that returns the same result
without pydantic for the values where it is certain and trivial (a string, an enum member or
choice name, a path that is absent or of the accepted kind, a decimal integer within its
bounds), and hands every other value, every invalid one among them, to Typer's own conversion:
its result and its error message are Typer's. This module uses Typer's conversion layer
(``typer._coercion``); :mod:`exampleguard.clibuild` imports it only where that exists.
"""

from __future__ import annotations

import enum
import pathlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_choice, coerce_cli_path, lenient_issubclass

__all__ = ["convert_directly"]


def convert_directly(param: Any) -> None:
    """Give ``param``, a Typer parameter not yet converting, the direct conversion."""
    descriptor = getattr(param, "type_descriptor", None)
    if isinstance(descriptor, TypeDescriptor) and getattr(param, "_runtime_param", 0) is None:
        param._runtime_param = _DirectValues(
            parameter_info=descriptor.parameter_info,
            annotation=descriptor.annotation,
            descriptor=descriptor,
        )


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
