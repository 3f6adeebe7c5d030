"""The code registry: every SPEC code is registered, documented and explained by the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import exampleguard._codes as codes
from exampleguard._codes import CODES, Code, Stage, lookup
from exampleguard._diagnostics import Severity
from tests.support.project import run_cli

# SPEC section 4, "Required diagnostic codes", copied verbatim.
SPEC_CODES = [
    "parse-error",
    "shell-construct",
    "shell-comment",
    "shell-expansion",
    "repeated-option",
    "wrong-program",
    "unknown-command",
    "not-runnable",
    "unknown-flag",
    "missing-value",
    "unexpected-value",
    "bad-type",
    "bad-choice",
    "missing-required",
    "extra-positional",
    "require-one-of",
    "require-together",
    "mutually-exclusive",
    "bypass-flag",
    "too-many-examples",
    "duplicate-example",
    "example-too-long",
    "duplicate-tool",
    "tool-unbound",
    "overlay-drift",
    "alias-collision",
    "dryrun-flag-unknown",
    "uncovered-command",
    "exclusion-invalid",
    "exclusion-stale",
    "exclusion-duplicate",
    "disposition-invalid",
    "disposition-stale",
    "disposition-duplicate",
    "counts-drift",
    "counts-missing",
    "dryrun-failed",
    "dryrun-timeout",
    "isolation-unavailable",
]

# Codes that mean "the run could not be evaluated" (SPEC section 6: exit 2).
UNUSABLE = {
    "config-invalid",
    "file-unreadable",
    "file-invalid",
    "tree-unavailable",
    "executable-missing",
    "isolation-unavailable",
}

NAME_FORMAT = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def test_the_spec_list_is_complete() -> None:
    assert len(SPEC_CODES) == 39
    assert len(set(SPEC_CODES)) == len(SPEC_CODES)


@pytest.mark.parametrize("name", SPEC_CODES)
def test_every_spec_code_is_registered(name: str) -> None:
    assert name in CODES
    assert lookup(name) is CODES[name]


@pytest.mark.parametrize("name", list(CODES))
def test_every_registered_code_is_documented(name: str) -> None:
    entry = CODES[name]
    assert isinstance(entry, Code)
    assert entry.name == name
    assert NAME_FORMAT.match(name)
    for field in ("summary", "what", "why", "example", "fix", "since"):
        value = getattr(entry, field)
        assert isinstance(value, str)
        assert value.strip(), f"{name}.{field} is empty"
    assert "\n" not in entry.summary, "a summary is one line (the `explain` listing)"
    assert entry.what != entry.why
    assert isinstance(entry.severity, Severity)
    assert isinstance(entry.stage, Stage)
    assert entry.exit_code in (1, 2)


@pytest.mark.parametrize("name", list(CODES))
def test_exit_code_follows_spec_section_6(name: str) -> None:
    entry = CODES[name]
    if name in UNUSABLE:
        assert (entry.severity, entry.exit_code) == (Severity.ERROR, 2)
    else:
        assert entry.exit_code == 1, "a defect found by evaluating is exit 1"


def test_warnings_are_exactly_the_ones_that_make_a_decision_visible() -> None:
    warnings = {name for name, entry in CODES.items() if entry.severity is Severity.WARNING}
    # model-mismatch (SPEC 4): the real parser's verdict stands; the warning makes it visible.
    # doc-example-excepted: a reviewed exception is reported on every run, never silent.
    # tree-unsandboxed: an import under the guard alone, asked for by name, is never silent.
    # tool-without-examples: zero examples is allowed (SPEC 4), never silently green.
    # doc-block-without-example: a docs block read as output, whose commands go unchecked.
    # doc-file-unread: a docs glob that brings in files no reader reads, none of them checked.
    # parser-raised: the framework could not judge; the model's verdict is never silent about it.
    assert warnings == {
        "parser-raised",
        "tool-without-examples",
        "doc-block-without-example",
        "doc-file-unread",
        "tree-unsandboxed",
        "shell-expansion",
        "repeated-option",
        "model-mismatch",
        "doc-example-excepted",
    }


def test_unknown_code_lookup_raises() -> None:
    with pytest.raises(KeyError):
        lookup("no-such-code")


def test_the_registry_is_immutable() -> None:
    entry = CODES["unknown-flag"]
    with pytest.raises(AttributeError):
        entry.summary = "changed"  # type: ignore[misc]


# -- exampleguard explain -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["unknown-flag", "shell-expansion", "file-invalid"])
def test_explain_prints_the_entry(tmp_path: Path, name: str) -> None:
    entry = CODES[name]
    result = run_cli(["explain", name], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"{name} ({entry.severity.value}, since {entry.since}): {entry.summary}")
    for section, text in (
        ("What it means", entry.what),
        ("Why it matters", entry.why),
        ("How to fix it", entry.fix),
    ):
        assert section in out
        assert text in out
    for line in entry.example.splitlines():
        assert line in out
    meaning = {
        "unknown-flag": "fails the run (exit 1)",
        "shell-expansion": "is a warning and never fails the run",
        "file-invalid": "stops the run (exit 2)",
    }[name]
    assert meaning in out


def test_explain_lists_every_code(tmp_path: Path) -> None:
    result = run_cli(["explain"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(CODES)
    for line, (name, entry) in zip(lines, CODES.items(), strict=True):
        assert line.split()[0] == name
        assert line.split()[1] == entry.severity.value
        assert line.endswith(entry.summary)


@pytest.mark.parametrize(
    ("given", "suggestion"),
    [("unknown-flags", "unknown-flag"), ("overlay-drfit", "overlay-drift"), ("zzzz", None)],
    ids=["plural", "typo", "no-close-match"],
)
def test_explain_an_unknown_code(tmp_path: Path, given: str, suggestion: str | None) -> None:
    result = run_cli(["explain", given], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"unknown code {given!r}" in result.stderr
    if suggestion is None:
        assert "Did you mean" not in result.stderr
    else:
        assert f"Did you mean {suggestion}?" in result.stderr
    assert "exampleguard explain" in result.stderr
    assert "Traceback" not in result.stderr


def test_explain_a_retired_code_says_what_it_was(tmp_path: Path) -> None:
    result = run_cli(["explain", "schema-mismatch"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("schema-mismatch: retired; no run reports it any more.")
    assert "differential test" in result.stdout


@pytest.mark.parametrize("name", sorted(CODES))
def test_every_code_is_a_constant_of_its_own_name(name: str) -> None:
    constant = name.upper().replace("-", "_")
    assert getattr(codes, constant) is CODES[name]
    assert constant in codes.__all__


def test_a_diagnostic_of_a_code_has_the_registry_severity() -> None:
    for code in (codes.SHELL_EXPANSION, codes.UNKNOWN_FLAG, codes.CONFIG_INVALID):
        diagnostic = code.diagnostic("message", tool="notes.list", example=1)
        assert (diagnostic.code, diagnostic.severity) == (code.name, code.severity)
        assert (diagnostic.tool, diagnostic.example, diagnostic.message) == (
            "notes.list",
            1,
            "message",
        )


def test_no_emission_site_writes_a_severity_by_hand() -> None:
    """Every diagnostic is made from its registered code, which owns the severity.

    A ``Diagnostic`` needs a severity, so any construction of one outside the registry writes
    one by hand.
    """
    package = Path(codes.__file__).parent
    offenders = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        if path != Path(codes.__file__)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bDiagnostic\(", line)
    ]
    assert offenders == []
