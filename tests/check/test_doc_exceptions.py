"""Reviewed doc exceptions: one exact record excepts one exact doc example, visibly.

Each case builds the sample project (a ``notes`` tree snapshot and catalog) with a README whose
example is wrong on purpose and a ``dispositions/doc-exceptions.toml``, runs ``validate`` and
compares what a user sees: the example excepted with its reason, or checked and failing, and
the record's own defects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exampleguard._report import render
from exampleguard._sources.markdown import markdown_examples
from tests.inputs.test_docs_examples import docs_project, report_of
from tests.support.project import run_cli

WRONG = 'notes add "x" --prio 3'
README = f"# Notes\n\nDo not write this:\n\n```sh\n{WRONG}\n```\n"
ADDRESS = "README.md:6"
REASON = "Shows the misspelled --prio flag that the next paragraph corrects."


def record(
    command: str = WRONG,
    file: str = "README.md",
    code: str | None = "counter-example",
    reason: str | None = REASON,
) -> str:
    """One ``[[doc_exception]]`` block; ``None`` leaves a key out."""
    lines = ["[[doc_exception]]", f"file = {json.dumps(file)}", f"command = {json.dumps(command)}"]
    if code is not None:
        lines.append(f"reason_code = {json.dumps(code)}")
    if reason is not None:
        lines.append(f"reason = {json.dumps(reason)}")
    return "\n".join(lines) + "\n"


def project(root: Path, exceptions: str, readme: str = README) -> Path:
    docs_project(root, readme)
    (root / "dispositions" / "doc-exceptions.toml").write_text(exceptions, encoding="utf-8")
    return root


def test_the_command_text_is_the_extracted_text() -> None:
    # What a reviewer writes in `command` is exactly what the source extracts.
    [example] = markdown_examples(README, "README.md", "notes")
    assert example.text == WRONG


# -- matching: (records, README, is the example excepted, codes of the run about it) -----------

EDITED = README.replace("--prio 3", "--prio 4")
FAILS = ["unknown-flag", "extra-positional"]
"""What the example is found to be when no record excepts it."""

MATCHING = [
    ("exact match excepts", record(), README, True, ["doc-example-excepted"]),
    (
        "edited text: stale, and the example fails again",
        record(),
        EDITED,
        False,
        [*FAILS, "doc-exception-stale"],
    ),
    (
        "wildcard never matches",
        record(command="notes add *"),
        README,
        False,
        [*FAILS, "doc-exception-stale"],
    ),
    (
        "partial text never matches",
        record(command="notes add"),
        README,
        False,
        [*FAILS, "doc-exception-stale"],
    ),
    (
        "text with the prompt never matches",
        record(command=f"$ {WRONG}"),
        README,
        False,
        [*FAILS, "doc-exception-stale"],
    ),
    (
        "another file never matches",
        record(file="docs/*.md"),
        README,
        False,
        [*FAILS, "doc-exception-stale"],
    ),
    (
        "an inline comment alone never excepts",
        "",
        README.replace(WRONG, f"{WRONG}  # exampleguard: ignore"),
        False,
        FAILS,
    ),
    (
        "duplicate record",
        record() + "\n" + record(reason="Shows the misspelled flag, corrected just below."),
        README,
        True,
        ["doc-example-excepted", "doc-exception-duplicate"],
    ),
]


@pytest.mark.parametrize(
    ("exceptions", "readme", "excepted", "codes"),
    [case[1:] for case in MATCHING],
    ids=[case[0] for case in MATCHING],
)
def test_only_an_exact_record_excepts(
    tmp_path: Path, exceptions: str, readme: str, excepted: bool, codes: list[str]
) -> None:
    report = report_of(project(tmp_path, exceptions, readme))
    seen = [
        d.code
        for d in report.diagnostics
        if d.file in ("README.md", "dispositions/doc-exceptions.toml")
    ]
    assert seen == codes
    [entry] = [e for e in report.examples if e.source == "markdown"]
    assert entry.ok is excepted
    if not excepted:
        assert not report.ok


def test_an_excepted_example_is_reported_with_its_reason(tmp_path: Path) -> None:
    report = report_of(project(tmp_path, record()))
    text = render(report, "text")
    assert (
        f"README.md:6:1: doc-example-excepted excepted, not checked (counter-example): {REASON}"
        in text
    )
    assert "unknown-flag" not in text
    data = json.loads(render(report, "json"))
    entry = next(e for e in data["examples"] if e["address"] == ADDRESS)
    assert entry["ok"] is True
    assert [(d["code"], d["severity"]) for d in entry["diagnostics"]] == [
        ("doc-example-excepted", "warning")
    ]
    assert REASON in entry["diagnostics"][0]["message"]


def test_a_stale_record_is_located_at_the_record(tmp_path: Path) -> None:
    report = report_of(project(tmp_path, "\n" + record(), EDITED))
    [stale] = [d for d in report.diagnostics if d.code == "doc-exception-stale"]
    assert stale.file == "dispositions/doc-exceptions.toml"
    assert stale.location is not None
    assert stale.location.line == 2
    assert WRONG in stale.message


# -- invalid records: a located configuration error, exit 2 -------------------------------------

INVALID = [
    ("missing reason", record(reason=None), "reason"),
    ("missing reason code", record(code=None), "reason_code"),
    ("unknown reason code", record(code="looks-wrong"), "reason_code"),
    ("placeholder reason", record(reason="todo"), "reason"),
    ("reason repeating the code", record(reason="counter example"), "reason"),
    ("empty command", record(command=""), "command"),
    ("unknown key", record() + 'pattern = "notes *"\n', "pattern"),
]


@pytest.mark.parametrize(
    ("exceptions", "key"), [case[1:] for case in INVALID], ids=[case[0] for case in INVALID]
)
def test_an_invalid_record_is_a_located_error(tmp_path: Path, exceptions: str, key: str) -> None:
    result = run_cli(["validate"], cwd=project(tmp_path, exceptions))
    assert result.returncode == 2, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "dispositions/doc-exceptions.toml:" in output
    assert key in output
    assert "Traceback" not in output
