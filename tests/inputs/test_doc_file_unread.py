"""``doc-file-unread``: a ``docs`` glob that brings in files no reader reads is said, at the glob.

Before, every file that was not ``.rst`` was read as Markdown: an image stopped the run (exit 2,
not UTF-8), and an AsciiDoc page was parsed as Markdown and yielded nothing, silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exampleguard._sources.markdown import document_kind
from tests.support.docsproject import located, notes_docs_project, report_of, write_counts
from tests.support.project import run_cli

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("README.md", "markdown"),
        ("guide.MD", "markdown"),
        ("page.markdown", "markdown"),
        ("page.mdx", "markdown"),
        ("llms.txt", "markdown"),
        ("llms-full.txt", "markdown"),
        ("index.rst", "rest"),
        ("notes.txt", None),
        ("guide.adoc", None),
        ("logo.png", None),
        ("README", None),
    ],
)
def test_which_reader_reads_a_file(name: str, kind: str | None) -> None:
    assert document_kind(Path("docs") / name) == kind


def _project(tmp_path: Path, docs: list[str]) -> Path:
    files = {
        "docs/guide.md": "```sh\nnotes add x --prio\n```\n",
        "docs/notes.txt": "notes add y --bogus\n",
        "docs/old.adoc": "----\nnotes add z --bogus\n----\n",
        "guide.adoc": "notes add --bogus\n",
    }
    project = notes_docs_project(tmp_path, files, docs=docs)
    (project / "docs" / "logo.png").write_bytes(PNG)
    return project


def test_a_broad_glob_is_warned_about_at_the_glob_and_the_run_goes_on(tmp_path: Path) -> None:
    project = _project(tmp_path, ["README.md", "docs/**/*"])
    report = report_of(project)
    config = (project / "exampleguard.toml").read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(config, 1) if text.startswith("docs ="))
    column = config[line - 1].index('"docs/**/*"') + 1
    assert located(report, "exampleguard.toml") == [(line, column, "doc-file-unread")]
    warning = next(d for d in report.diagnostics if d.code == "doc-file-unread")
    assert warning.severity == "warning"
    assert warning.message == (
        "docs glob 'docs/**/*' matches 3 files that no reader reads, not checked: "
        "docs/logo.png, docs/notes.txt, docs/old.adoc"
    )
    # The Markdown page the glob also matches is read and checked as before.
    assert located(report, "docs/guide.md") == [(2, 13, "unknown-flag")]


def test_an_explicit_file_of_another_format_is_warned_about(tmp_path: Path) -> None:
    project = _project(tmp_path, ["guide.adoc", "docs/guide.md"])
    write_counts(project)
    result = run_cli(["validate", "--format", "json"], cwd=project)
    data = json.loads(result.stdout)
    unread = [d for d in data["diagnostics"] if d["code"] == "doc-file-unread"]
    assert [(d["file"], d["location"]["key"], d["severity"]) for d in unread] == [
        ("exampleguard.toml", "docs[0]", "warning")
    ]
    assert "guide.adoc" in unread[0]["message"]
    # A warning never fails a run: the only failure is the planted flag of docs/guide.md.
    errors = {d["code"] for d in data["diagnostics"] if d["severity"] == "error"}
    assert errors == {"unknown-flag"}


def test_a_warning_alone_passes_the_run(tmp_path: Path) -> None:
    files = {"docs/guide.md": "```sh\nnotes add x\n```\n", "docs/notes.txt": "x\n"}
    project = notes_docs_project(tmp_path, files, docs=["docs/*"])
    write_counts(project)
    result = run_cli(["validate"], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "doc-file-unread" in result.stdout + result.stderr


def test_globs_of_read_formats_warn_about_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path, ["docs/**/*.md", "docs/**/*.rst", "llms.txt", "missing.adoc"])
    report = report_of(project)
    assert [d for d in report.diagnostics if d.code == "doc-file-unread"] == []
