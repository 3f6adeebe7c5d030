"""The judges' record of what they set on an application's objects, and how it is put back."""

from __future__ import annotations

from typing import Any

import pytest

from exampleguard._adapters._common import Shadows


class _Target:
    """An object with a method on its class and an attribute of its own."""

    def method(self) -> str:
        return "class"

    def __init__(self) -> None:
        self.callback: Any = "own"


def test_restore_puts_back_own_attributes_and_removes_shadowing_ones() -> None:
    target = _Target()
    shadows = Shadows()
    shadows.set(target, "callback", None)
    shadows.set(target, "method", lambda: "shadow")
    shadows.set(target, "callback", "second")
    assert (target.callback, target.method()) == ("second", "shadow")
    shadows.restore()
    assert target.callback == "own"
    assert "method" not in vars(target)
    assert target.method() == "class"


def test_an_attribute_already_gone_is_no_failure() -> None:
    target = _Target()
    shadows = Shadows()
    shadows.set(target, "method", lambda: "shadow")
    del target.method
    shadows.restore()
    assert target.method() == "class"


class _Locking(_Target):
    """An object that refuses to have ``callback`` set once it is locked."""

    locked = False

    def __setattr__(self, name: str, value: Any) -> None:
        if self.locked and name == "callback":
            raise AttributeError("callback is locked")
        super().__setattr__(name, value)


def test_a_failure_to_put_back_is_raised_once_everything_else_is_back() -> None:
    target, other = _Locking(), _Target()
    shadows = Shadows()
    shadows.set(target, "callback", None)
    shadows.set(other, "callback", None)
    shadows.set(other, "method", lambda: "shadow")
    target.locked = True
    with pytest.raises(AttributeError, match="locked"):
        shadows.restore()
    assert other.callback == "own"
    assert other.method() == "class"
