"""``exampleguard validate --fix`` and ``--diff``: apply (or show) the unambiguous fixes.

The edits come from :mod:`exampleguard._fix`; this module shows them, writes them (the catalog
atomically under its folder's lock, after checking that the file is still the text that was
checked; the counts as ``counts --write`` does) and validates again, so what is printed after a
fix is the verdict on the fixed files.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from exampleguard._codes import FILE_UNREADABLE
from exampleguard._commands.counts import count
from exampleguard._commands.validate import ValidateOutcome, run_evaluation, validate
from exampleguard._config import Config
from exampleguard._counts import render_counts, schema_of_file
from exampleguard._diagnostics import Diagnostic, Location, plural
from exampleguard._files import locked, write_atomically
from exampleguard._fix import FixPlan, plan_fixes
from exampleguard._report.build import located

__all__ = ["FixOutcome", "fix"]

_BOM = "\ufeff"


@dataclass(slots=True)
class FixOutcome:
    """What ``--fix`` or ``--diff`` did: messages, the diff, and the verdict after fixing."""

    messages: list[str] = field(default_factory=list)
    """One line per fix made (or that would be made) and per fix refused, for stderr."""
    diff: str = ""
    """The unified diff of every file the fixes change (empty when none would change)."""
    after: ValidateOutcome | None = None
    """With ``write``, the validation of the fixed files."""
    unusable: list[Diagnostic] = field(default_factory=list)


def fix(config: Config, *, write: bool) -> FixOutcome:
    """Plan the fixes of the catalog; with ``write``, apply them and validate again."""
    evaluation, unusable = run_evaluation(config)
    if evaluation is None:
        return FixOutcome(unusable=unusable)
    plan = plan_fixes(evaluation)
    outcome = FixOutcome(messages=_messages(plan, config, write=write))
    counts_path = config.counts_path
    counts_display = config.display(counts_path)
    new_counts = (
        render_counts(evaluation.counts, schema=schema_of_file(counts_path))
        if plan.counts
        else None
    )
    catalog = plan.document.display
    outcome.diff = _diff(plan.document.text, plan.text, catalog)
    if new_counts is not None:
        old_counts = evaluation.inputs.counts[1].text if evaluation.inputs.counts else ""
        outcome.diff += _diff(old_counts, new_counts, counts_display)
    if not write:
        return outcome
    if plan.edits:
        refused = _write_catalog(plan)
        if refused is not None:
            return FixOutcome(unusable=[refused])
    if new_counts is not None:
        written = count(config, write=True)
        if written.unusable:
            return FixOutcome(unusable=written.unusable)
    outcome.after = validate(config)
    return outcome


def _messages(plan: FixPlan, config: Config, *, write: bool) -> list[str]:
    verb = "fixed" if write else "would fix"
    lines = [
        f"{plan.document.display}:{edit.line}:{edit.column}: {verb} {edit.code} {edit.address}: "
        f"{edit.old} -> {edit.replacement}"
        for edit in plan.edits
    ]
    for refusal in plan.refused:
        diagnostic = refusal.diagnostic
        where = located(diagnostic) or Location(plan.document.display)
        # A catalog example is named TOOL[INDEX]; a document's by its place alone.
        about = ""
        if diagnostic.tool is not None:
            about = f" {diagnostic.tool}"
            if diagnostic.example is not None:
                about += f"[{diagnostic.example}]"
        reason = refusal.reason
        if diagnostic.suggestion is not None and "did you mean" not in reason:
            reason += f" (did you mean {diagnostic.suggestion}?)"
        lines.append(f"{where}: not fixed {diagnostic.code}{about}: {reason}")
    if plan.counts:
        counts = config.display(config.counts_path)
        lines.append(
            f"{counts}: {'rewrote' if write else 'would rewrite'} the counts (counts-drift)"
        )
    if plan.refused:
        # The last word of --fix on stderr: what it left, so a green-looking fix is not
        # mistaken for a clean catalog and docs.
        lines.append(
            f"{plural(len(plan.edits), 'fix', 'fixes')} {'made' if write else 'to make'}, "
            f"{len(plan.refused)} not fixed (listed above)"
        )
    return lines


_CONTEXT = 3
"""Lines of context around each change in the diff, as ``diff -u`` and git show."""


def _diff(old: str, new: str, display: str) -> str:
    """The unified diff of ``old`` and ``new`` (``--- a/FILE`` / ``+++ b/FILE``)."""
    if old == new:
        return ""
    before = old.splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    if len(before) == len(after):
        # A fix replaces words inside lines and never a line end: the changed lines are found
        # by comparing line with line, where difflib would take minutes on a large catalog.
        lines = _same_length_diff(before, after, display)
    else:
        lines = list(
            difflib.unified_diff(before, after, fromfile=f"a/{display}", tofile=f"b/{display}")
        )
    # A last line without a newline still ends its line of the diff.
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _same_length_diff(before: list[str], after: list[str], display: str) -> list[str]:
    changed = [index for index, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    hunks: list[tuple[int, int]] = []
    for index in changed:
        start, end = max(0, index - _CONTEXT), min(len(before), index + _CONTEXT + 1)
        if hunks and start <= hunks[-1][1]:
            hunks[-1] = (hunks[-1][0], end)
        else:
            hunks.append((start, end))
    lines = [f"--- a/{display}\n", f"+++ b/{display}\n"]
    for start, end in hunks:
        size = end - start
        lines.append(f"@@ -{start + 1},{size} +{start + 1},{size} @@\n")
        removed: list[str] = []
        added: list[str] = []
        for index in range(start, end):
            if before[index] != after[index]:
                removed.append("-" + before[index])
                added.append("+" + after[index])
                continue
            # A run of changed lines shows its old lines, then its new ones, as diff -u does.
            lines += removed + added
            removed, added = [], []
            lines.append(" " + before[index])
        lines += removed + added
    return lines


def _write_catalog(plan: FixPlan) -> Diagnostic | None:
    """Write the fixed catalog, if the file is still the text that was checked."""
    document = plan.document
    path = document.path
    shown = document.display
    if path.is_symlink():
        # The rename would put the fixed text in place of the link and leave the file it points
        # to unfixed; reviewer records are refused the same way.
        return FILE_UNREADABLE.diagnostic(
            f"{shown} is a symlink; refusing to replace it",
            hint="Run `exampleguard validate --fix` on the file it points to, or apply "
            "`exampleguard validate --diff` by hand.",
            location=Location(shown),
        )
    try:
        with locked(path.parent):
            raw = path.read_bytes().decode("utf-8")
            bom = _BOM if raw.startswith(_BOM) else ""
            if raw.removeprefix(_BOM) != document.text:
                return FILE_UNREADABLE.diagnostic(
                    f"{shown} changed while it was being fixed; nothing was written",
                    hint="Run `exampleguard validate --fix` again.",
                    location=Location(shown),
                )
            write_atomically(path, bom + plan.text)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "it is not UTF-8 text"
        return FILE_UNREADABLE.diagnostic(
            f"cannot write {shown}: {reason}", location=Location(shown)
        )
    return None
