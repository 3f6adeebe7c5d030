"""``exampleguard counts [--write]``: how much is checked and executed."""

from __future__ import annotations

from exampleguard._codes import FILE_UNREADABLE, Stage, lookup
from exampleguard._commands._outcome import TextOutcome, refuse
from exampleguard._config import Config
from exampleguard._counts import render_counts, schema_of_file
from exampleguard._diagnostics import Location
from exampleguard._files import locked, write_atomically
from exampleguard._pipeline import InputError, load_inputs, run

__all__ = ["count"]


def count(config: Config, *, write: bool) -> TextOutcome:
    """``exampleguard counts [--write]``: the figures, and with ``write`` the file rewritten.

    ``--write`` exits 0 whatever the verdicts: it records how much is checked, not whether it
    passes. Structure errors still stop it (exit 2) — counts of an unreadable catalog mean nothing.
    """
    try:
        inputs = load_inputs(config, with_counts=not write)
        evaluation = run(inputs, check_counts=not write)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    path = config.counts_path
    text = render_counts(evaluation.counts, schema=schema_of_file(path) if write else None)
    display = config.display(path)
    if not write:
        drift = [d for d in evaluation.diagnostics if lookup(d.code).stage is Stage.COUNTS]
        summary = "".join(f"{d.message}\n" for d in drift)
        return TextOutcome(text + summary, 1 if drift else 0)
    if path.is_symlink():
        # The rename would put the counts in place of the link and leave the file it points to
        # as it was; `validate --fix` and reviewer records refuse the same way.
        return refuse(
            FILE_UNREADABLE,
            f"{display} is a symlink; refusing to replace it (write the counts at the file it "
            "points to, or set `counts` to that file)",
            Location(display),
        )
    try:
        with locked(path.parent):
            write_atomically(path, text)
    except OSError as error:
        return refuse(
            FILE_UNREADABLE, f"cannot write {display}: {error.strerror}", Location(display)
        )
    return TextOutcome(text + f"wrote {display}\n", 0)
