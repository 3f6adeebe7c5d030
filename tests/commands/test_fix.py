"""``validate --fix`` and ``--diff``: one table row per fix kind, and every refusal.

Each row is a catalog file written by hand (odd indentation, keys in an unusual order, escapes,
TOML string kinds, CRLF line ends, a byte-order mark) and the one stretch of its text the fix
must change: the file after ``--fix`` must be the old bytes with exactly that stretch replaced.
A row whose fix is refused must leave the file's bytes alone.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from exampleguard.cli import main

PARAMETERS_JSON = """[
        {"name": "ids", "positional": true, "type": "integer", "nargs": -1},
        {"name": "recursive", "flags": ["--recursive", "-r"], "type": "boolean"},
        {"name": "verbose", "flags": ["-v"], "type": "boolean"},
        {"name": "format", "flags": ["--format"], "choices": ["text", "JSON"]},
        {"name": "force", "flags": ["--force"], "type": "boolean"},
        {"name": "form", "flags": ["--form"]},
        {"name": "tag", "flags": ["--tag"]}
      ]"""


def json_catalog(*examples: str, spacing: str = "  ") -> str:
    """A catalog with keys in an unusual order, examples given as the raw JSON of each string."""
    rendered = ",\n".join(f'{spacing}{spacing}{{"command": {raw}}}' for raw in examples)
    return (
        "{\n"
        f'{spacing}"tools": [\n'
        f"{spacing}{{\n"
        f'{spacing}  "examples": [\n{rendered}\n{spacing}  ],\n'
        f'{spacing}  "id":   "notes.delete",\n'
        f'{spacing}  "parameters": {PARAMETERS_JSON},\n'
        f'{spacing}  "command": ["delete"]\n'
        f"{spacing}}},\n"
        f'{spacing}{{"id": "notes.tags", "command": ["tags", "list"]}}\n'
        f"{spacing}],\n"
        f'{spacing}"dialect": "click", "program": "notes",\n'
        f'{spacing}"format": "exampleguard.catalog/v1"\n'
        "}\n"
    )


TOML_HEAD = """\
# The notes catalog, by hand.
format = "exampleguard.catalog/v1"
program = "notes"   # what agents type
dialect = "click"

[[tools]]
id = "notes.delete"
command = ["delete"]
parameters = [
  {name = "ids", positional = true, type = "integer", nargs = -1},
  {name = "recursive", flags = ["--recursive", "-r"], type = "boolean"},
  {name = "format", flags = ["--format"], choices = ["text", "JSON"]},
]
"""


def toml_catalog(*examples: str) -> str:
    """A TOML catalog; each example is the raw TOML of its ``command`` value."""
    body = "".join(f"\n[[tools.examples]]\ncommand = {raw}\n" for raw in examples)
    return TOML_HEAD + body + '\n[[tools]]\nid = "notes.tags"\ncommand = ["tags", "list"]\n'


@dataclass(frozen=True)
class Row:
    """A catalog's text, the stretch ``--fix`` replaces (``None``: nothing), and what it says."""

    text: str
    old: str | None
    new: str | None
    said: str
    suffix: str = ".json"


FIXES = [
    pytest.param(
        Row(
            json_catalog('"notes delete 3 --recurse"'),
            "--recurse",
            "--recursive",
            "--recurse -> --recursive",
        ),
        id="a flag with one did-you-mean",
    ),
    pytest.param(
        Row(
            json_catalog('"notes delete 3 --tagg=x"'),
            "--tagg=",
            "--tag=",
            "--tagg -> --tag",
        ),
        id="a flag written with =value",
    ),
    pytest.param(
        Row(json_catalog('"notes delte 3"', spacing="\t"), "delte", "delete", "delte -> delete"),
        id="a command word, tab-indented",
    ),
    pytest.param(
        Row(json_catalog('"notes delete 3 --format Text"'), "Text", "text", "Text -> text"),
        id="a choice in the wrong case",
    ),
    pytest.param(
        Row(json_catalog('"notes delete 3 --format json"'), "json", "JSON", "json -> JSON"),
        id="a choice whose right case is upper",
    ),
    pytest.param(
        Row(
            json_catalog(r'"notes delete 3 \u002d-recurse --tag \"a b\""'),
            r"\u002d-recurse",
            "--recursive",
            "--recurse -> --recursive",
        ),
        id="a word written with an escape, next to escaped quotes",
    ),
    pytest.param(
        Row(
            toml_catalog('"notes delete 3 --recurse"'), "--recurse", "--recursive", "fixed", ".toml"
        ),
        id="toml basic string",
    ),
    pytest.param(
        Row(toml_catalog("'notes delete 3 --format Text'"), "Text", "text", "fixed", ".toml"),
        id="toml literal string",
    ),
    pytest.param(
        Row(
            toml_catalog('"""\nnotes delete 3 \\\n  --recurse"""'),
            "--recurse",
            "--recursive",
            "fixed",
            ".toml",
        ),
        id="toml multi-line string with a line continuation",
    ),
    pytest.param(
        Row(
            "\ufeff" + json_catalog('"notes delte 3"').replace("\n", "\r\n"),
            "delte",
            "delete",
            "delte -> delete",
        ),
        id="CRLF line ends and a byte-order mark",
    ),
]

REFUSALS = [
    pytest.param(
        Row(
            json_catalog('"notes delete 3 --forn"'),
            None,
            None,
            "ambiguous: did you mean --form or --force?",
        ),
        id="two close candidates",
    ),
    pytest.param(
        Row(json_catalog('"notes delete 3 -xv"'), None, None, "not fixed unknown-flag"),
        id="a letter of a bundle",
    ),
    pytest.param(
        Row(json_catalog("\"notes delete 3 '--recurse'\""), None, None, "quoted or escaped"),
        id="a quoted word",
    ),
    pytest.param(
        Row(json_catalog('"notes delete 3 --format xml"'), None, None, "not fixed bad-choice"),
        id="a choice that is no choice in any case",
    ),
]


def _project(root: Path, row: Row) -> Path:
    catalog = root / f"catalog{row.suffix}"
    catalog.write_bytes(row.text.encode("utf-8"))
    (root / "exampleguard.toml").write_text(f'catalog = "{catalog.name}"\n', encoding="utf-8")
    assert main(["counts", "--write"]) == 0
    return catalog


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("row", FIXES)
def test_fix_replaces_exactly_the_word(
    here: Path, capsys: pytest.CaptureFixture[str], row: Row
) -> None:
    catalog = _project(here, row)
    before = catalog.read_bytes()
    capsys.readouterr()
    assert row.old is not None
    assert row.new is not None
    assert main(["validate", "--diff"]) == 1
    diff = capsys.readouterr()
    assert diff.out.startswith(f"--- a/{catalog.name}\n+++ b/{catalog.name}\n")
    assert row.new in diff.out
    assert catalog.read_bytes() == before  # --diff writes nothing
    code = main(["validate", "--fix", "--format", "concise"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert row.said in err
    assert "All checks passed" in out
    old, new = row.old.encode(), row.new.encode()
    assert before.count(old) == 1
    assert catalog.read_bytes() == before.replace(old, new)


@pytest.mark.parametrize("row", REFUSALS)
def test_fix_refuses_and_leaves_the_bytes_alone(
    here: Path, capsys: pytest.CaptureFixture[str], row: Row
) -> None:
    catalog = _project(here, row)
    before = catalog.read_bytes()
    capsys.readouterr()
    assert main(["validate", "--diff"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["validate", "--fix", "--format", "concise"]) == 1
    _, err = capsys.readouterr()
    assert row.said in err
    assert catalog.read_bytes() == before


def test_fix_keeps_a_symlinked_catalog_and_the_file_it_points_to(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = FIXES[0].values[0]
    assert isinstance(row, Row)
    catalog = _project(here, row)
    shared = here / "shared"
    shared.mkdir()
    target = shared / catalog.name
    catalog.rename(target)
    catalog.symlink_to(target.relative_to(here))
    before = target.read_bytes()
    capsys.readouterr()
    assert main(["validate", "--fix", "--format", "concise"]) == 2
    err = capsys.readouterr().err
    assert f"{catalog.name} is a symlink; refusing to replace it" in err
    assert "Traceback" not in err
    assert catalog.is_symlink()
    assert target.read_bytes() == before


def test_two_fixes_in_one_example_and_the_counts_when_only_they_drift(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = Row(
        json_catalog('"notes delete 3 --recurse --format Text"', '"notes delte 4"'), None, None, ""
    )
    catalog = _project(here, row)
    counts = here / "exampleguard-counts.json"
    figures = json.loads(counts.read_text(encoding="utf-8"))
    counts.write_text(json.dumps({**figures, "examples": 7}), encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", "--fix", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["ok"] is True
    assert "rewrote the counts (counts-drift)" in err
    assert err.count("fixed ") == 3
    text = catalog.read_text(encoding="utf-8")
    assert '"notes delete 3 --recursive --format text"' in text
    assert json.loads(counts.read_text(encoding="utf-8")) == figures


def test_counts_are_not_rewritten_while_another_defect_remains(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = Row(json_catalog('"notes delete 3 --forn"'), None, None, "")
    _project(here, row)
    counts = here / "exampleguard-counts.json"
    drifted = json.dumps({**json.loads(counts.read_text(encoding="utf-8")), "examples": 7})
    counts.write_text(drifted, encoding="utf-8")
    assert main(["validate", "--fix"]) == 1
    assert counts.read_text(encoding="utf-8") == drifted
    assert "rewrote the counts" not in capsys.readouterr().err


def test_fix_refuses_a_shard(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(here, Row(json_catalog('"notes delte 3"'), None, None, ""))
    assert main(["validate", "--fix", "--shard", "1/2"]) == 2
    assert "--shard" in capsys.readouterr().err


def test_the_diff_applies_with_git_to_give_the_fixed_file(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = [f'"notes delete {n} --recurse"' for n in range(2)]
    catalog = _project(here, Row(json_catalog(*examples), None, None, ""))
    capsys.readouterr()
    assert main(["validate", "--diff"]) == 1
    patch = here / "fix.patch"
    patch.write_text(capsys.readouterr().out, encoding="utf-8")
    original = catalog.read_bytes()
    assert main(["validate", "--fix"]) == 0
    fixed = catalog.read_bytes()
    catalog.write_bytes(original)
    applied = subprocess.run(
        ["git", "apply", "--unsafe-paths", f"--directory={here.name}", "-p1", str(patch)],
        cwd=here.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert applied.returncode == 0, applied.stderr
    assert catalog.read_bytes() == fixed


def test_counts_are_not_rewritten_while_a_reviewer_record_is_wrong(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(here, Row(json_catalog('"notes delete 3 --recurse"'), None, None, ""))
    (here / "dispositions").mkdir()
    (here / "dispositions" / "notes.gone.toml").write_text(
        '[[disposition]]\ntool = "notes.gone"\nexample = 0\nreason_code = "needs-fixture"\n'
        'reason = "Needs a notes database with tagged rows."\ncommand = "notes gone"\n',
        encoding="utf-8",
    )
    counts = here / "exampleguard-counts.json"
    drifted = json.dumps({**json.loads(counts.read_text(encoding="utf-8")), "examples": 7})
    counts.write_text(drifted, encoding="utf-8")
    assert main(["validate", "--fix", "--format", "concise"]) == 1
    out, err = capsys.readouterr()
    assert "fixed unknown-flag" in err
    assert "rewrote the counts" not in err
    assert "disposition-invalid" in out
    assert counts.read_text(encoding="utf-8") == drifted


def test_fix_lists_the_documentation_defects_it_leaves(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The catalog's word is fixed; the same misspelling in the README is not --fix's to edit,
    # and the user is told so, with the did-you-mean, instead of silence.
    _project(here, Row(json_catalog('"notes delete 3 --recurse"'), None, None, ""))
    readme = "# notes\n\n```sh\nnotes delete 3 --recurse\nnotes delete 4 --bogus\n```\n"
    (here / "README.md").write_text(readme, encoding="utf-8")
    assert main(["counts", "--write"]) == 0
    capsys.readouterr()
    assert main(["validate", "--fix", "--format", "concise"]) == 1
    out, err = capsys.readouterr()
    assert "catalog.json:5:33: fixed unknown-flag notes.delete[0]: --recurse -> --recursive" in err
    assert (
        "README.md:4:16: not fixed unknown-flag: --fix edits only the catalog; edit README.md by "
        "hand (did you mean --recursive?)" in err
    )
    assert (
        "README.md:5:16: not fixed unknown-flag: --fix edits only the catalog; edit README.md by "
        "hand\n" in err
    )
    assert err.splitlines()[-1] == "1 fix made, 2 not fixed (listed above)"
    assert (here / "README.md").read_text(encoding="utf-8") == readme
    assert "README.md:4:16: unknown-flag" in out


def test_fix_never_writes_a_bypass_flag(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--yse` is closest to `--yes`, a banned confirmation bypass: replacing it would turn a
    # typo into an example that skips the confirmation.
    text = json_catalog('"notes delete 3 --yse"').replace(
        '{"name": "tag", "flags": ["--tag"]}',
        '{"name": "tag", "flags": ["--tag"]},\n        '
        '{"name": "yes", "flags": ["--yes"], "type": "boolean"}',
    )
    catalog = _project(here, Row(text, None, None, ""))
    before = catalog.read_bytes()
    capsys.readouterr()
    assert main(["validate", "--fix", "--format", "concise"]) == 1
    out, err = capsys.readouterr()
    assert "did you mean --yes?" in out
    assert (
        "not fixed unknown-flag notes.delete[0]: the replacement --yes is a banned confirmation "
        "bypass; edit it by hand" in err
    )
    assert catalog.read_bytes() == before
