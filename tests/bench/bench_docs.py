"""What checking the Markdown of a 200-file docs tree adds to ``exampleguard validate``.

Usage: ``python tests/bench/bench_docs.py [OUT.json] [--files N] [--runs N]``

The project is the sample project (a ``notes`` tree snapshot and its catalog) with a generated
docs tree: ``--files`` Markdown files (default 200), each a page of prose, a Python fence, a JSON
fence, two shell fences and a console session (prompts, output, continuations, a pipe, an
``&&`` chain, a placeholder) — about 12 examples a page, one in ten of them wrong. Half the pages
never name the program (a docs tree's API pages). The baseline is the same project with
``docs = []``: the figure is the difference of the medians of whole ``validate`` processes, in
wall and in CPU seconds (the CPU time depends less on the machine's load, printed beside
them), and, in this process, the CPU time to read and check the docs alone. Not part of the
test suite: timings are never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SAMPLE = REPO / "tests" / "fixtures" / "sample-project"
TARGET_ADDED_S = 0.3

PAGE = """\
# Page {n}

Notes keeps short notes. This page shows how to work with them; see the
[reference](reference.md) for every option.

```python
from notes import client
client.add("page {n}")
```

```json
{{"notes": [{n}, {m}]}}
```

Add a few:

```sh
$ notes add "note {n}" --priority {priority}
notes add "another" \\
    --priority 2
cd ~/work && notes add "from work"
```

1. Export them:

   ```bash
   notes export --format json | jq '.[] | .id'
   NOTES_PROFILE=ci notes --profile ci export --format csv > all.csv
   ```

> Delete with care:
>
> ```console
> $ notes delete {n} --dry-run
> would delete note {n}
> $ notes delete --tag <tag> --format {fmt}
> deleted 3 notes
> $ notes rm \\
> >   --tag draft
> ```
"""

PROSE = """\
# API {n}

The `client` module talks to the notes service. Nothing here is a command line:

    client = Client(profile="default")
    client.add("text")

```python
print({n})
```
"""


def write_docs(root: Path, files: int) -> None:
    """``files`` Markdown pages under ``root/docs``, in a few directories."""
    for n in range(files):
        folder = root / "docs" / f"section-{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        if n % 2:
            text = PROSE.format(n=n)
        else:
            # One page in ten names a choice the command does not have.
            fmt = "yaml" if n % 10 == 0 else "text"
            text = PAGE.format(n=n, m=n + 1, priority=1 + n % 5, fmt=fmt)
        (folder / f"page-{n}.md").write_text(text, encoding="utf-8")


def project(root: Path, files: int, *, docs: bool) -> Path:
    """The sample project with (or without) the docs tree configured."""
    for name in ("catalog.json", "notes.tree.json"):
        shutil.copy(SAMPLE / name, root / name)
    shutil.copytree(SAMPLE / "dispositions", root / "dispositions")
    write_docs(root, files)
    setting = '["docs/**/*.md"]' if docs else "[]"
    (root / "exampleguard.toml").write_text(
        f'catalog = "catalog.json"\ntree = "notes.tree.json"\ndocs = {setting}\n',
        encoding="utf-8",
    )
    subprocess.run(
        [sys.executable, "-m", "exampleguard", "counts", "--write"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return root


def _validate_seconds(root: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``validate`` process (the CPU time depends less on load)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # The planted errors make it exit 1: the time is what is measured, not the verdict.
    subprocess.run(
        [sys.executable, "-m", "exampleguard", "validate"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _in_process(root: Path) -> tuple[float, int]:
    """CPU seconds of ``validate`` in this process, and the number of doc examples checked."""
    from exampleguard._commands.validate import validate
    from exampleguard._config import load_config

    start = time.process_time()
    outcome = validate(load_config(None, root))
    elapsed = time.process_time() - start
    assert outcome.report is not None
    checked = sum(1 for e in outcome.report.examples if e.source == "markdown")
    return elapsed, checked


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the figures and write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        without = Path(scratch) / "without"
        with_docs = Path(scratch) / "with"
        without.mkdir()
        with_docs.mkdir()
        project(without, args.files, docs=False)
        project(with_docs, args.files, docs=True)
        load_before = os.getloadavg()[0]
        baseline: list[tuple[float, float]] = []
        measured: list[tuple[float, float]] = []
        for _ in range(args.runs):
            # Interleaved, so that a change in the machine's load hits both alike.
            baseline.append(_validate_seconds(without))
            measured.append(_validate_seconds(with_docs))
        _in_process(with_docs)  # imports and caches warm
        without_s = statistics.median(_in_process(without)[0] for _ in range(args.runs))
        inner = [_in_process(with_docs) for _ in range(args.runs)]
        with_s = statistics.median(elapsed for elapsed, _ in inner)
        checked = inner[0][1]
        load_after = os.getloadavg()[0]

    def median(runs: list[tuple[float, float]], which: int) -> float:
        return statistics.median(run[which] for run in runs)

    result = {
        "files": args.files,
        "doc_examples_checked": checked,
        "validate_without_docs_s": round(median(baseline, 0), 4),
        "validate_with_docs_s": round(median(measured, 0), 4),
        "added_s": round(median(measured, 0) - median(baseline, 0), 4),
        "validate_without_docs_cpu_s": round(median(baseline, 1), 4),
        "validate_with_docs_cpu_s": round(median(measured, 1), 4),
        "added_cpu_s": round(median(measured, 1) - median(baseline, 1), 4),
        "added_in_process_cpu_s": round(with_s - without_s, 4),
        "target_added_s": TARGET_ADDED_S,
        "load_average": [round(load_before, 2), round(load_after, 2)],
        "python": platform.python_version(),
    }
    for key, value in result.items():
        print(f"{key:28} {value}")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
