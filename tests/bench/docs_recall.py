"""Recall and precision of the docs sources on a real project's documentation tree.

Usage: ``python tests/bench/docs_recall.py DOCS_ROOT PROGRAM GLOB... [--docs-code KIND...]``

Two independent readings of the same files:

* exampleguard's: every example the Markdown and reST sources find (default settings, or the
  ``--docs-code`` kinds), by file and line;
* a line grep that knows no Markdown and no reST: every line where ``PROGRAM`` is a word in a
  command position (at the start of the line after indentation and an optional ``$``, ``%`` or
  ``>>>`` prompt, or after ``|``, ``;``, ``&``, ``(``, ``!``, ``$(``, ``do``, ``then``, ``else``,
  ``if``, ``while``, ``until`` or ``time``).

It prints both counts, every grep line exampleguard did not take (to classify by hand: a command
missed, or prose, a heading, output, Python) and every example the grep did not see (to check by
hand that each is a command). Recall and precision are figures of that classification; the
method and the figures per project are in the docs measurement note of the closing report. Not
part of the test suite.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from exampleguard._sources.markdown import document_kind, markdown_examples  # noqa: E402
from exampleguard._sources.rest import rest_examples  # noqa: E402


def extracted(
    root: Path, files: list[Path], program: str, code: tuple[str, ...]
) -> dict[tuple[str, int], list[str]]:
    """``(file, line) -> [example text]`` of what exampleguard reads."""
    found: dict[tuple[str, int], list[str]] = {}
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        shown = path.relative_to(root).as_posix()
        if program not in text:
            continue
        kind = document_kind(path)
        if kind == "rest":
            records = rest_examples(text, shown, program)
        elif kind == "markdown":
            records = markdown_examples(text, shown, program, code)
        else:
            continue
        for record in records:
            line = record.location().line or 0
            found.setdefault((shown, line), []).append(record.text)
    return found


def grepped(root: Path, files: list[Path], program: str) -> dict[tuple[str, int], str]:
    """``(file, line) -> line`` of every line naming ``program`` in a command position."""
    position = r"(^|[;&|({!]|\$\(|\b(?:do|then|else|time|if|while|until)\s)"
    prompt = r"\s*(?:(?:\$|%|>>>)\s+)?"
    pattern = re.compile(position + prompt + re.escape(program) + r"(?=\s|$)")
    hits: dict[tuple[str, int], str] = {}
    for path in files:
        shown = path.relative_to(root).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            if pattern.search(line):
                hits[(shown, number)] = line
    return hits


def main(argv: list[str] | None = None) -> int:
    """Print the two readings of one docs tree and where they differ."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("root", type=Path)
    parser.add_argument("program")
    parser.add_argument("globs", nargs="+")
    parser.add_argument("--docs-code", nargs="+", default=["fenced"])
    args = parser.parse_args(argv)
    root: Path = args.root
    files = sorted({path for glob in args.globs for path in root.glob(glob) if path.is_file()})
    ours = extracted(root, files, args.program, tuple(args.docs_code))
    theirs = grepped(root, files, args.program)
    examples = sum(len(texts) for texts in ours.values())
    print(f"files: {len(files)}")
    print(f"examples exampleguard reads: {examples} on {len(ours)} lines")
    print(f"grep lines: {len(theirs)}; on both: {len(set(ours) & set(theirs))}")
    print("\n== grep lines exampleguard did not take")
    for key in sorted(set(theirs) - set(ours)):
        print(f"{key[0]}:{key[1]}: {theirs[key].strip()[:160]}")
    print("\n== examples the grep did not see")
    for key in sorted(set(ours) - set(theirs)):
        print(f"{key[0]}:{key[1]}: {ours[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
