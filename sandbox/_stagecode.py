"""The sandbox's own process as the caller hands it over: its code, its loader, its report.

The stage (``_stage.py``) runs as a run's init under bubblewrap and on the host for the
``landlock`` backend; both start it the same way and read its report the same way.
"""

from __future__ import annotations

import functools
import marshal
from pathlib import Path

__all__ = ["parse_report", "stage_code", "stage_loader"]


@functools.cache
def stage_code() -> bytes:
    """The sandbox's own process, compiled (docstrings and asserts stripped) and marshalled once.

    The stage runs in the interpreter that runs this module (``probe.python``), so the
    marshal format is that interpreter's.
    """
    source = Path(__file__).with_name("_stage.py").read_text(encoding="utf-8")
    code = compile(source, "sandbox-stage", "exec", dont_inherit=True, optimize=2)
    return marshal.dumps(code)


def stage_loader(fd: int) -> str:
    """The ``-c`` program that runs the stage's code read from pipe ``fd`` as ``__main__``."""
    return f"import marshal;exec(marshal.loads(open({fd},'rb').read()))"


def parse_report(data: bytes) -> dict[str, str]:
    """The stage's report lines as ``key value``; the first line of each key counts."""
    found: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        found.setdefault(key, value)
    return found
