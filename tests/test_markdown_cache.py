"""The Markdown block cache: a README is parsed again exactly when it, or the parser, changed.

Each test runs the real CLI (``python -m exampleguard``, a process of its own, with its cache in
a directory of the test's) on the sample ``notes`` project with a README of examples. Whether a
run parsed the README is seen from what it imported: a run served by the cache never imports
markdown-it-py. The output must be the same, byte for byte, either way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from exampleguard.sources.markdown import code_blocks, markdown_examples
from tests.support.project import REPOSITORY, write_config

SAMPLE = REPOSITORY / "tests" / "fixtures" / "sample-project"

README = """\
# notes

```sh
$ notes add "buy milk" --priority 2
notes add "x" --prio 3
```

Delete one:

    notes delete 3

- Export:

  ```console
  $ notes export --format yaml
  notes add --bogus
  ```

> ```bash
> notes delete <id>...
> ```
"""

PROBE = """
import json, os, sys
from exampleguard.cli import main
code = main(sys.argv[1:])
sys.stderr.write(json.dumps({"code": code, "parsed": "markdown_it" in sys.modules}) + "\\n")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name in ("catalog.json", "notes.tree.json", "exampleguard-counts.json"):
        shutil.copy(SAMPLE / name, root / name)
    shutil.copytree(SAMPLE / "dispositions", root / "dispositions")
    (root / "README.md").write_text(README, encoding="utf-8")
    write_config(
        root,
        {"catalog": "catalog.json", "tree": "notes.tree.json", "docs_code": ["fenced", "indented"]},
    )
    return root


def validate(root: Path, cache: Path, *args: str) -> tuple[int, str, bool]:
    """Exit code, output (stdout then stderr) and whether the run parsed Markdown."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "validate", *args],
        cwd=root,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPOSITORY)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    *messages, last = result.stderr.splitlines(keepends=True)
    probe = json.loads(last)
    return probe["code"], result.stdout + "".join(messages), probe["parsed"]


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "exampleguard" / "markdown").glob("*.json"))


def test_a_second_run_reads_the_blocks_from_the_cache_and_says_the_same(
    project: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = validate(project, cache)
    assert first[0] == 1, first[1]
    assert "README.md:5:" in first[1]
    assert first[2] is True
    assert len(entries(cache)) == 1
    second = validate(project, cache)
    assert second[:2] == first[:2]
    assert second[2] is False
    uncached = validate(project, tmp_path / "other-cache", "--no-cache")
    assert uncached[:2] == first[:2]
    assert uncached[2] is True


def test_an_edited_readme_is_parsed_again(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert validate(project, cache)[0] == 1
    readme = project / "README.md"
    readme.write_text(README.replace("--prio 3", "--priority 3"), encoding="utf-8")
    edited = validate(project, cache)
    assert edited[2] is True
    assert "README.md:5:" not in edited[1]
    assert edited[:2] == validate(project, tmp_path / "fresh")[:2]
    assert len(entries(cache)) == 1


def test_an_unreadable_or_foreign_entry_is_ignored_and_replaced(
    project: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = validate(project, cache)
    [entry] = entries(cache)
    for damaged in ("not json", json.dumps({"key": ["other"], "blocks": []})):
        entry.write_text(damaged, encoding="utf-8")
        again = validate(project, cache)
        assert again[:2] == first[:2]
        assert again[2] is True
    data = json.loads(entry.read_text(encoding="utf-8"))
    data["blocks"] = [["fence", "sh", 3, 0]]
    entry.write_text(json.dumps(data), encoding="utf-8")
    assert validate(project, cache)[:2] == first[:2]


@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero"])
def test_an_entry_that_is_not_a_file_is_ignored_without_blocking(
    project: Path, tmp_path: Path, kind: str
) -> None:
    # Opening a FIFO for reading waits for a writer forever; /dev/zero never ends. Either in
    # the cache must cost the run nothing but the parse.
    cache = tmp_path / "cache"
    first = validate(project, cache)
    [entry] = entries(cache)
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to(os.devnull.replace("null", "zero"))
    again = validate(project, cache)
    assert again[:2] == first[:2]
    assert again[2] is True
    assert entry.is_fifo() if kind == "fifo" else entry.is_symlink()


def test_a_cache_directory_that_cannot_be_written_changes_nothing(
    project: Path, tmp_path: Path
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would be", encoding="utf-8")
    assert validate(project, blocked)[:2] == validate(project, tmp_path / "cache")[:2]


@pytest.mark.parametrize("code", [("fenced",), ("indented",), ("fenced", "indented")])
def test_examples_from_given_blocks_are_those_of_a_parse(code: tuple[str, ...]) -> None:
    parsed = markdown_examples(README, "README.md", "notes", code)
    replayed = markdown_examples(README, "README.md", "notes", code, blocks=code_blocks(README))
    assert [(r.address, r.text) for r in replayed] == [(r.address, r.text) for r in parsed]
    assert parsed
