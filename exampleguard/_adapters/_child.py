"""Entry point of the child process that imports an application and snapshots its tree.

Run as ``python -c "...main()" FRAMEWORK MODULE ATTR PROGRAM @REQUEST MODE ROOT``, always under
:func:`sandbox.run` (:mod:`exampleguard._treechild` is its one launcher). ``REQUEST`` is a JSON
file read whole before the application is imported: ``argvs`` (each example's words after the
program, parsed by the framework's own parser, see :mod:`~exampleguard._adapters.verdict`),
``paths`` (the command paths and aliases a catalog declares, probed through the groups' own
routing) and ``help_examples`` (true: the words of each help-text example are judged too).
``MODE`` ``guard`` installs the import guard (:mod:`._guard`), the only containment asked for
by name; ``sandbox`` leaves the sandbox to contain what the import does. ``ROOT`` is the
project's directory, entered before the import.

The frames go out on standard output as text — a kind byte, the payload's length as 16
hexadecimal digits, ASCII JSON — and the application's own output goes to /dev/null, so it can
never be taken for a frame: ``T`` the snapshot, ``V`` the verdicts (and under ``help`` each
help example's words with its verdict), ``E`` an ``{"error": ...}`` record. Anything the
application does — raising, exiting, printing — becomes an error record here, in the child.

The child ends with ``os._exit`` as soon as its frames are written: threads, ``atexit`` hooks
and finalizers the application registered must not hold up (or write over) a finished answer.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pathlib
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from exampleguard._adapters._frames import FRAME_LENGTH_BYTES
from exampleguard._adapters._guard import install_guard
from exampleguard._adapters._helptext import help_argvs
from exampleguard._adapters.argparser import extract_argparse, resolve_parser
from exampleguard._adapters.clickfamily import (
    as_click_command,
    extract_click,
    is_click_command,
    is_typer_app,
)
from exampleguard._adapters.judge_argparse import ArgparseJudge
from exampleguard._adapters.judge_click import ClickJudge
from exampleguard._adapters.verdict import ParseVerdict

__all__ = ["main"]


def main(argv: list[str] | None = None) -> NoReturn:
    """Import the application named on the command line, write its frames, and exit."""
    framework, module, attribute, program, request_path, mode, root = (argv or sys.argv[1:])[:7]
    # The frames own standard output; the application's output goes to /dev/null.
    fd = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    # Programs the application starts must not inherit the frames' descriptor.
    os.set_inheritable(fd, False)
    request = _read_request(request_path.removeprefix("@"))
    if mode == "guard":
        # From here on the application's code runs: it may not change anything outside the
        # work dir, start programs or use the network (see _guard for the limits).
        install_guard([str(pathlib.Path.cwd())])
    else:
        # The project is read-only in the sandbox; bytecode would only fail to be written.
        sys.dont_write_bytecode = True
    # Imported from the project's directory, as running the application from there would.
    os.chdir(root)
    try:
        imported = _import(framework, module, attribute)
        argvs = _decoded(request.get("argvs", ()))
        paths = [list(words) for words in request.get("paths", ())]
        snapshot, judge = _snapshot(
            imported, program or None, paths, intermixed=bool(request.get("intermixed"))
        )
    except SystemExit as exit_:
        _fail(fd, f"called sys.exit({exit_.code!r}) while importing")
    except KeyboardInterrupt:
        _fail(fd, "was interrupted while importing")
    except _AdapterError as error:
        _fail(fd, str(error))
    except BaseException as error:
        _fail(fd, _explain(error, mode))
    _write(fd, b"T", snapshot)
    # The help text's examples are known only now: asked for, they are judged here too.
    helps = _decoded(help_argvs(snapshot)) if request.get("help_examples") else []
    if argvs or request.get("help_examples"):
        try:
            # One batch: the tree is neutralised once for all of them.
            verdicts = judge([*argvs, *helps])
        except BaseException as error:
            _fail(fd, f"could not be parsed with its own parser: {type(error).__name__}: {error}")
        asked, helped = verdicts[: len(argvs)], verdicts[len(argvs) :]
        judged = [
            {"argv": words, "verdict": verdict.to_json()}
            for words, verdict in zip(helps, helped, strict=True)
        ]
        _write(fd, b"V", {"verdicts": [v.to_json() for v in asked], "help": judged})
    _exit(True)


def _explain(error: BaseException, mode: str) -> str:
    """What went wrong in the application's import, in words that name the cause."""
    where = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
    name = error.args[0] if error.args else None
    in_os = where and where[0].filename in (os.__file__, "<frozen os>")
    if isinstance(error, KeyError) and in_os:
        return (
            f"reads the environment variable {name!r} while importing, and the import's "
            "environment has no such variable: nothing of the caller's environment reaches "
            f"the import; give it a placeholder value in [tool.exampleguard.tree_env] "
            f'({name} = "placeholder")'
        )
    if isinstance(error, ModuleNotFoundError):
        shown = [entry for entry in sys.path if entry]
        return (
            f"raised ModuleNotFoundError: {error}{at}; the import path the child searched: "
            + ", ".join(shown)
        )
    if (
        isinstance(error, PermissionError)
        and mode == "guard"
        and "exampleguard refuses" in str(error)
    ):
        return (
            f'{error}{at}: tree_isolation = "guard" refuses it; the sandbox (tree_isolation '
            '= "auto") allows what it contains'
        )
    return f"raised {type(error).__name__}: {error}{at}"


def _decoded(argvs: Any) -> list[list[str]]:
    """Each word as the program's own sys.argv would hold it: decoded afresh from bytes.

    argparse tells a value from its default by identity, and which strings CPython shares (one
    character long, from 3.13 on) differs between JSON's decoder and the command line's.
    """
    return [[os.fsdecode(os.fsencode(word)) for word in words] for words in argvs]


def _read_request(path: str) -> dict[str, Any]:
    # Read whole before the application is imported: its code never sees the questions.
    data = json.loads(pathlib.Path(path).read_bytes() or b"{}")
    return data if isinstance(data, dict) else {}


class _AdapterError(Exception):
    """The named object exists but is not something the adapter can read."""


Judge = Callable[[list[list[str]]], list[ParseVerdict]]
"""A live tree's own parser: the verdict on each argv."""


@dataclass(frozen=True)
class _Imported:
    """The application's object, resolved to what its framework parses with."""

    framework: str
    module: str
    target: Any
    """The Click command (a Typer app made one), or the argparse parser."""
    sources: tuple[Any, ...] = ()
    """Where an argparse parser's help texts may be found (the factory, the module)."""


def _import(framework: str, module: str, attribute: str) -> _Imported:
    """Import ``module``, and resolve ``attribute`` to what ``framework`` parses with."""
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name and (module == error.name or module.startswith(f"{error.name}.")):
            raise _AdapterError(f"module {module!r} was not found") from None
        raise
    target: Any = imported
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise _AdapterError(f"module {module!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    spelled = _right_spelling(framework, target)
    if spelled is not None:
        # Checked before anything is called: a Click command "called" as a parser factory
        # would run the application.
        raise _AdapterError(
            f"{module}:{attribute} is a {spelled[1]}, not what {framework}: names; "
            f"use tree = '{spelled[0]}:{module}:{attribute}'"
        )
    if framework == "argparse":
        try:
            parser = resolve_parser(target)
        except TypeError as error:
            raise _AdapterError(str(error)) from None
        sources = (target, imported) if target is not parser else (imported,)
        return _Imported(framework, module, parser, sources)
    try:
        return _Imported(framework, module, as_click_command(target))
    except TypeError as error:
        raise _AdapterError(str(error)) from None


def _snapshot(
    imported: _Imported, program: str | None, paths: list[list[str]], *, intermixed: bool = False
) -> tuple[dict[str, Any], Judge]:
    """The snapshot of an imported tree, and its own parser as the judge.

    ``intermixed``: the configuration says the program parses with ``parse_intermixed_args``.
    """
    if imported.framework == "argparse":
        snapshot = extract_argparse(imported.target, program, imported.sources)
        return snapshot, ArgparseJudge(imported.target, intermixed=intermixed).judge_all
    name = program or _default_program(imported.module)
    snapshot = extract_click(imported.target, name, paths)
    return snapshot, ClickJudge(imported.target, name).judge_all


def _right_spelling(framework: str, target: Any) -> tuple[str, str] | None:
    """The framework ``target`` belongs to, and what it is, when ``framework`` is not it."""
    if is_typer_app(target):
        found = ("typer", "Typer app")
    elif is_click_command(target):
        found = ("click", "Click command")
    elif isinstance(target, argparse.ArgumentParser):
        found = ("argparse", "argparse.ArgumentParser")
    else:
        return None
    if found[0] == framework or (framework in ("click", "typer") and found[0] != "argparse"):
        return None
    return found


def _default_program(module: str) -> str:
    return module.split(".", maxsplit=1)[0].replace("_", "-")


def _fail(fd: int, message: str) -> NoReturn:
    _write(fd, b"E", {"error": message})
    _exit(False)


def _write(fd: int, kind: bytes, record: dict[str, Any]) -> None:
    try:
        # ASCII throughout: the JSON with its escapes.
        payload = json.dumps(record, ensure_ascii=True).encode("ascii")
    except (TypeError, ValueError, RecursionError) as error:
        kind = b"E"
        payload = json.dumps({"error": f"produced a tree that is not JSON: {error}"}).encode()
    view = memoryview(kind + b"%0*x" % (2 * FRAME_LENGTH_BYTES, len(payload)) + payload)
    with contextlib.suppress(OSError):
        while view:
            view = view[os.write(fd, view) :]


def _exit(success: bool) -> NoReturn:
    # The application's last words on stderr are what the parent reports if anything went wrong.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0 if success else 1)
