"""The judges' standard streams behave as a real terminal's: a program that writes bytes to
``sys.stdout.buffer`` while it parses (a version callback) is judged, not crashed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import typer

from exampleguard._adapters.judge_argparse import ArgparseJudge
from exampleguard._adapters.judge_click import ClickJudge
from exampleguard.cli import app


def test_a_typer_version_callback_that_writes_bytes_ends_the_parse() -> None:
    # exampleguard's own --version: an eager Typer option whose callback writes bytes and exits.
    verdict = ClickJudge(typer.main.get_command(app), "exampleguard").judge(["--version"])
    assert (verdict.accepted, verdict.eager, verdict.error) == (True, True, None)


class _BytesVersion(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        del namespace, values, option_string  # argparse's signature
        sys.stdout.buffer.write(b"tool 1.0\n")
        parser.exit()


def test_an_argparse_action_that_writes_bytes_ends_the_parse() -> None:
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--version", nargs=0, action=_BytesVersion)
    parser.add_argument("target")
    verdict = ArgparseJudge(parser).judge(["--version"])
    assert (verdict.accepted, verdict.eager, verdict.error) == (True, True, None)
