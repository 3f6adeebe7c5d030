"""Entry point of the child process that imports an application and snapshots its tree.

Run as ``python -c "...main()" FRAMEWORK MODULE ATTR FD PROGRAM``. The snapshot (or an
``{"error": ...}`` record) is written to file descriptor ``FD``; the application's own output on
stdout and stderr is left alone. Anything the application does — raising, exiting, printing —
is turned into an error record here, in the child, and never reaches exampleguard's process.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from typing import Any

from exampleguard.adapters.argparser import extract_argparse, resolve_parser
from exampleguard.adapters.clickfamily import as_click_command, extract_click


def main(argv: list[str] | None = None) -> int:
    """Import the application named on the command line and write its tree snapshot."""
    framework, module, attribute, fd_text, program = (argv or sys.argv[1:])[:5]
    out = os.fdopen(int(fd_text), "w", encoding="utf-8")
    try:
        snapshot = _snapshot(framework, module, attribute, program or None)
    except SystemExit as exit_:
        return _fail(out, f"called sys.exit({exit_.code!r}) while importing")
    except KeyboardInterrupt:
        return _fail(out, "was interrupted while importing")
    except _AdapterError as error:
        return _fail(out, str(error))
    except BaseException as error:
        where = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
        at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
        return _fail(out, f"raised {type(error).__name__}: {error}{at}")
    json.dump(snapshot, out, ensure_ascii=False)
    out.close()
    return 0


class _AdapterError(Exception):
    """The named object exists but is not something the adapter can read."""


def _snapshot(framework: str, module: str, attribute: str, program: str | None) -> dict[str, Any]:
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
    if framework == "argparse":
        try:
            parser = resolve_parser(target)
        except TypeError as error:
            raise _AdapterError(str(error)) from None
        return extract_argparse(parser, program)
    try:
        command = as_click_command(target)
    except TypeError as error:
        raise _AdapterError(str(error)) from None
    return extract_click(command, program or _default_program(module))


def _default_program(module: str) -> str:
    return module.split(".", maxsplit=1)[0].replace("_", "-")


def _fail(out: Any, message: str) -> int:
    json.dump({"error": message}, out)
    out.close()
    return 1
