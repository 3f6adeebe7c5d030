"""Real third-party documentation, Markdown and reST, read and checked as a user's project would.

The files under ``tests/fixtures/docs/<project>/`` are copied verbatim (or as a verbatim excerpt)
from each project's repository, with its license beside them (see ``tests/fixtures/docs/
README.md``). sqlite-utils is a test dependency: its docs are checked against its real Click
tree, clean first, then with errors planted in the real text by exact replacements, each
reported at its line and column. The other projects' CLIs are not installed: their docs are
read, and what is an example (and where) is compared exactly.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from exampleguard._report import Report
from exampleguard._sources.markdown import markdown_examples
from exampleguard._sources.rest import rest_examples
from tests.support.docsproject import DOC_FIXTURES, located, report_of, tree_docs_project

SQLITE_UTILS = DOC_FIXTURES / "sqlite-utils"


def _text(project: str, name: str) -> str:
    return (DOC_FIXTURES / project / name).read_text(encoding="utf-8")


def _planted(text: str, old: str, new: str) -> str:
    """``text`` with the one line that is ``old`` (after its indentation) made ``new``."""
    lines = text.split("\n")
    (index,) = [i for i, line in enumerate(lines) if line.strip() == old]
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    lines[index] = indent + new
    return "\n".join(lines)


def _where(text: str, line_text: str, word: str) -> tuple[int, int]:
    """The 1-based line and column of ``word`` on the one line of ``text`` holding ``line_text``."""
    (number,) = [n for n, line in enumerate(text.split("\n"), 1) if line_text in line]
    return number, text.split("\n")[number - 1].index(word) + 1


def _sqlite_utils_report(root: Path, readme: str, cli: str) -> Report:
    pytest.importorskip("sqlite_utils.cli")
    files = {"README.md": readme, "cli.rst": cli}
    project = tree_docs_project(
        root,
        "sqlite-utils",
        "click:sqlite_utils.cli:cli",
        files,
        # The README writes its sessions as indented code with `$ ` prompts.
        docs_code=["fenced", "indented"],
    )
    return report_of(project)


def test_sqlite_utils_docs_pass_against_the_real_tree(tmp_path: Path) -> None:
    report = _sqlite_utils_report(tmp_path, _text("sqlite-utils", "README.md"), _cli())
    docs = [e for e in report.examples if e.source in ("markdown", "rest")]
    assert [e.address for e in docs if not e.ok] == []
    readme = [e for e in docs if e.source == "markdown"]
    # Every `$ ` line of the README's sessions, never their output (`[{"id": 1, ...`).
    assert [e.command for e in readme] == [
        'sqlite-utils memory dogs.csv "select * from t"',
        "sqlite-utils insert dogs.db dogs dogs.csv --csv",
        "sqlite-utils tables dogs.db --counts",
        'sqlite-utils dogs.db "select id, name from dogs"',
        'sqlite-utils dogs.db "select * from dogs" --csv',
        'sqlite-utils dogs.db "select * from dogs" --table',
        "sqlite-utils insert releases.db releases - --pk id",
        "sqlite-utils insert dogs.db dogs dogs.csv --csv",
        'sqlite-utils memory - "select name, age from stdin"',
    ]
    # The `--functions` script quoted over five lines is one word of its command.
    functions = next(e for e in docs if "urlparse(url).netloc" in e.command)
    assert functions.command.endswith("return urlparse(url).netloc\n'")
    assert len([e for e in docs if e.source == "rest"]) == 28


def _cli() -> str:
    return _text("sqlite-utils", "cli.rst")


def test_planted_errors_in_sqlite_utils_docs_are_reported_where_they_are(tmp_path: Path) -> None:
    readme = _text("sqlite-utils", "README.md")
    # zsh's prompt, a misspelt flag.
    readme = _planted(
        readme, "$ sqlite-utils tables dogs.db --counts", "% sqlite-utils tables dogs.db --count"
    )
    # The `>>>` prompt of some CLI guides, a misspelt flag.
    readme = _planted(
        readme,
        '$ sqlite-utils dogs.db "select * from dogs" --csv',
        '>>> sqlite-utils dogs.db "select * from dogs" --cvs',
    )
    # A compound command: the program's simple command inside `if ...; then`.
    readme = _planted(
        readme,
        '$ cat dogs.csv | sqlite-utils memory - "select name, age from stdin"',
        '$ if cat dogs.csv | sqlite-utils memory - "select name" --nll; then echo ok; fi',
    )
    # A here-document whose body names the program: input, never a command.
    readme += textwrap.dedent(
        """
        ```bash
        sqlite-utils insert dogs.db dogs - --nl <<EOF
        sqlite-utils this-is-input --bogus
        EOF
        ```
        """
    )
    cli = _cli()
    # A flag misspelt after the script quoted over several lines, on the script's last line.
    cli = _planted(cli, "return urlparse(url).path'", "return urlparse(url).path' --no-headres")
    cli = _planted(
        cli, 'sqlite-utils dogs.db "select * from dogs" --nl', 'sqlite-utils dogs.db "x" --nll'
    )
    # A console block whose command lost its prompt: read as output, and said so.
    lines = cli.split("\n")
    assert lines[20] == ".. code-block:: bash"
    lines[20] = ".. code-block:: console"
    cli = "\n".join(lines)

    report = _sqlite_utils_report(tmp_path, readme, cli)
    assert sorted(located(report, "README.md")) == [
        (*_where(readme, "--count", "--count"), "unknown-flag"),
        (*_where(readme, "--cvs", "--cvs"), "unknown-flag"),
        (*_where(readme, "--nll", "--nll"), "unknown-flag"),
    ]
    assert sorted(located(report, "cli.rst")) == [
        (23, 5, "doc-block-without-example"),
        (*_where(cli, '"x" --nll', "--nll"), "unknown-flag"),
        (*_where(cli, "--no-headres", "--no-headres"), "unknown-flag"),
    ]
    heredoc = next(e for e in report.examples if e.command.endswith("--nl"))
    assert (heredoc.command, heredoc.ok) == ("sqlite-utils insert dogs.db dogs - --nl", True)
    assert not any("this-is-input" in e.command for e in report.examples)


# -- documentation of CLIs that are not installed: what is an example, and where ------------------


def _found(text: str, name: str, program: str) -> list[tuple[int, int, str]]:
    """``(line, column, text)`` of every example of one document."""
    if name.endswith(".rst"):
        records = rest_examples(text, name, program)
    else:
        records = markdown_examples(text, name, program)
    places = [(r.location(), r.text) for r in records]
    return [(where.line or 0, where.column or 0, command) for where, command in places]


def test_httpie_compound_command_in_a_script() -> None:
    # `if http ...; then` with its redirection after the program's words left to the shell;
    # the `case` that follows runs `echo`, never the program.
    text = _text("httpie", "scripting.md")
    assert _found(text, "scripting.md", "http") == [
        (10, 4, "http --check-status --ignore-stdin --timeout=2.5 HEAD pie.dev/get")
    ]


def test_huggingface_readme_and_its_commands_made_a_triple_chevron_session() -> None:
    text = _text("huggingface_hub", "README.md")
    plain = _found(text, "README.md", "hf")
    assert plain[:3] == [
        (63, 1, "hf auth login"),
        (66, 1, "hf models ls --warm"),
        (69, 1, "hf download Qwen/Qwen3-0.6B"),
    ]
    # Planted: the `>>>` prompt of hf's own CLI guide, and output under it that starts with
    # the program's name, as `hf --help` prints it.
    session = _planted(text, "hf auth login", ">>> hf auth login")
    session = _planted(session, "hf models ls --warm", ">>> hf models ls --warm\nhf: 3 models")
    found = _found(session, "README.md", "hf")
    assert found[:2] == [(63, 5, "hf auth login"), (66, 5, "hf models ls --warm")]
    # The block has prompts now: its unprompted lines (the other commands too) are output.
    assert [command for _, _, command in found if command.startswith("hf:")] == []
    assert len(found) == len(plain) - 5


def test_llm_readme_pipes_and_a_planted_percent_session() -> None:
    text = _text("llm", "README.md")
    found = _found(text, "README.md", "llm")
    # `cat myfile.py | llm -s "Explain this code"`: the program's command after the pipe.
    assert (99, 17, 'llm -s "Explain this code"') in found
    assert len(found) == 13
    # Planted: zsh's prompt and the program's question after it, as a terminal shows them.
    session = _planted(text, "llm keys set openai", "% llm keys set openai\nEnter key:")
    (first, *_) = _found(session, "README.md", "llm")
    assert first == (90, 3, "llm keys set openai")
    assert not any("Enter key" in command for _, _, command in _found(session, "README.md", "llm"))


def test_pipx_readme_untagged_fences() -> None:
    text = _text("pipx", "README.md")
    # Untagged fences hold commands; `brew` and `pycowsay` are other programs.
    assert _found(text, "README.md", "pipx") == [
        (54, 1, "pipx ensurepath"),
        (63, 1, "pipx ensurepath"),
        (70, 1, "pipx ensurepath"),
        (81, 1, "pipx install pycowsay"),
        (88, 1, "pipx run pycowsay moo"),
    ]


def test_sqlite_utils_changelog_literal_blocks() -> None:
    text = _text("sqlite-utils", "changelog.rst")
    found = _found(text, "changelog.rst", "sqlite-utils")
    # `::` blocks of one unprompted command each are commands; a `$ ... --help` session's
    # `Usage: sqlite-utils json ...` lines are its output.
    fts = "sqlite-utils enable-fts db.db mytable col1 col2"
    assert (*_where(text, fts, "sqlite-utils"), fts) in found
    insert = "sqlite-utils insert db.db foo - --csv"
    assert (*_where(text, insert, "sqlite-utils"), insert) in found
    assert [command for _, _, command in found if command.endswith("--help")] == [
        "sqlite-utils json --help",
        "sqlite-utils csv --help",
    ]
    assert not any("Usage" in command for _, _, command in found)


def test_sqlite_utils_completion_line_inside_a_substitution() -> None:
    text = _text("sqlite-utils", "installation.rst")
    # `eval "$(_SQLITE_UTILS_COMPLETE=bash_source sqlite-utils)"`: the program's command is
    # the substitution's, without the shell's assignment.
    line, column = _where(text, "_SQLITE_UTILS_COMPLETE=bash", "sqlite-utils)")
    assert (line, column, "sqlite-utils") in _found(text, "installation.rst", "sqlite-utils")
