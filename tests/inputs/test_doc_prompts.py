"""``doc_prompts``: which prompts start a command line of the docs, and what the default is.

Each test runs ``validate`` on the sample ``notes`` project with a README beside it and looks at
what a user sees: which lines were checked, and where a planted error is reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exampleguard._config import DEFAULT_DOC_PROMPTS, Settings
from tests.support.docsproject import doc_examples, located, notes_docs_project, report_of
from tests.support.project import run_cli

# Line 2: `$`, line 3: `%`, line 4: `>>>`, line 5: PowerShell's `PS>`; line 6 is output.
SESSION = """\
```console
$ notes add one
% notes add two --prio
>>> notes add three
PS> notes add four --prio
notes add is printed here, as output
```
"""


def test_the_default_prompts_are_sh_zsh_and_the_guides_triple_chevron() -> None:
    assert DEFAULT_DOC_PROMPTS == ("$", "%", ">>>")
    assert Settings.model_validate({"catalog": "c.json"}).doc_prompts == ["$", "%", ">>>"]


def test_by_default_dollar_percent_and_chevrons_start_commands(tmp_path: Path) -> None:
    report = report_of(notes_docs_project(tmp_path, {"README.md": SESSION}, docs=["README.md"]))
    assert doc_examples(report, "README.md") == {
        "README.md:2": "notes add one",
        "README.md:3": "notes add two --prio",
        "README.md:4": "notes add three",
    }
    # `--prio` on line 3 starts after `% notes add two ` (column 17).
    assert located(report, "README.md") == [(3, 17, "unknown-flag")]


def test_configured_prompts_replace_the_default(tmp_path: Path) -> None:
    project = notes_docs_project(
        tmp_path, {"README.md": SESSION}, docs=["README.md"], doc_prompts=["PS>", "$"]
    )
    report = report_of(project)
    # `%` and `>>>` are no prompts now: their lines are output, like line 6.
    assert doc_examples(report, "README.md") == {
        "README.md:2": "notes add one",
        "README.md:5": "notes add four --prio",
    }
    assert located(report, "README.md") == [(5, 20, "unknown-flag")]


def test_a_prompt_needs_the_blank_after_it(tmp_path: Path) -> None:
    readme = "```sh\n$notes add x --prio 1\n$ notes add y\n```\n"
    report = report_of(notes_docs_project(tmp_path, {"README.md": readme}, docs=["README.md"]))
    # `$notes` is a word of its own (a variable), not a prompt and the program.
    assert doc_examples(report, "README.md") == {"README.md:3": "notes add y"}


def test_configured_prompts_reach_paragraphs_and_rest(tmp_path: Path) -> None:
    files = {
        "README.md": "Generated reference:\n\nPS> notes add x --prio\n",
        "guide.rst": "Run::\n\n    PS> notes add y --prio\n    added\n",
    }
    project = notes_docs_project(
        tmp_path, files, docs=["README.md", "guide.rst"], doc_prompts=["PS>"]
    )
    report = report_of(project)
    assert located(report, "README.md") == [(3, 17, "unknown-flag")]
    assert located(report, "guide.rst") == [(3, 21, "unknown-flag")]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        pytest.param("[]", "at least 1 item", id="empty"),
        pytest.param('["$ "]', "pattern", id="with a blank"),
        pytest.param('[">"]', "continuation prompt", id="the continuation prompt"),
        pytest.param('"$"', "valid list", id="not a list"),
    ],
)
def test_an_unusable_prompt_list_is_a_configuration_error(
    tmp_path: Path, value: str, words: str
) -> None:
    notes_docs_project(tmp_path, {"README.md": SESSION}, docs=["README.md"])
    config = tmp_path / "exampleguard.toml"
    config.write_text(config.read_text(encoding="utf-8") + f"doc_prompts = {value}\n")
    result = run_cli(["validate"], cwd=tmp_path)
    assert result.returncode == 2
    assert "config-invalid" in result.stdout + result.stderr
    assert "doc_prompts" in result.stdout + result.stderr
    assert words in result.stdout + result.stderr


def test_indented_prompted_lines_of_a_generated_reference_page(tmp_path: Path) -> None:
    # The shape `typer ... utils docs` gives a command whose epilog lists examples (hf's CLI
    # reference is written so): the lines are a paragraph's indented continuation lines.
    page = (
        "### `notes add`\n"
        "\n"
        "Add a note.\n"
        "\n"
        "**Options**:\n"
        "\n"
        "* `--priority INTEGER`: How urgent it is.\n"
        "\n"
        "Examples\n"
        "  $ notes add x\n"
        "  $ notes add x --prio\n"
        "\n"
        "Learn more\n"
        "  Use `notes <command> --help` for more information about a command.\n"
    )
    report = report_of(notes_docs_project(tmp_path, {"README.md": page}, docs=["README.md"]))
    assert doc_examples(report, "README.md") == {
        "README.md:10": "notes add x",
        "README.md:11": "notes add x --prio",
    }
    assert located(report, "README.md") == [(11, 17, "unknown-flag")]
