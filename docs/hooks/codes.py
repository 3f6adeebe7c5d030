"""MkDocs hook: the diagnostic codes page, written from exampleguard's registry of codes.

``exampleguard explain``, the JSON and SARIF reports and this page read the same entries
(``exampleguard/_codes.py``), so the page says what the program says, in the registry's order.
"""

from __future__ import annotations

import re
from typing import Any

from exampleguard._codes import CODES, Code
from exampleguard._diagnostics import Severity

PAGE = "codes.md"
MARKER = "<!-- exampleguard: codes -->"


def _effect(code: Code) -> str:
    """What the code does to a run, as ``exampleguard explain`` says it."""
    if code.severity is Severity.WARNING:
        return "a warning: never fails the run"
    return "fails the run (exit 1)" if code.exit_code == 1 else "stops the run (exit 2)"


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``, which it then cannot close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _entry(code: Code) -> str:
    """One code's section: what it means, why it matters, an example, how to fix it."""
    fence = _fence(code.example)
    return "\n".join(
        [
            f"### `{code.name}`",
            "",
            f"{code.summary}. {_effect(code).capitalize()}; reported by the {code.stage} "
            f"stage; since {code.since}.",
            "",
            f"**What it means.** {code.what}",
            "",
            f"**Why it matters.** {code.why}",
            "",
            "**Example.**",
            "",
            f"{fence}text",
            code.example,
            fence,
            "",
            f"**How to fix it.** {code.fix}",
            "",
        ]
    )


def codes_markdown() -> str:
    """The table of every code, then a section per code."""
    rows = ["| code | severity | summary |", "|---|---|---|"]
    rows += [
        f"| [`{code.name}`](#{code.name}) | {code.severity} | {code.summary} |"
        for code in CODES.values()
    ]
    return "\n".join([*rows, "", "## Every code", "", *map(_entry, CODES.values())])


def on_page_markdown(markdown: str, /, *, page: Any, **_: Any) -> str:
    """Fill the codes page's marker; leave every other page alone."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} has lost its marker {MARKER!r}: the codes would be missing")
    return markdown.replace(MARKER, codes_markdown())
