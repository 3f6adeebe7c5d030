"""The cost of the real-parser check: 10,000 examples judged by a live Click tree's own parser.

``python tests/bench/bench_verdict.py [EXAMPLES]`` times, in one process and on exactly the same
command lines: Click's own ``make_context`` through the command chain (the baseline), and
exampleguard's real-parser check (:class:`exampleguard._adapters.judge_click.ClickJudge`, one
batch as the child judges a run: the same chain, with the unchecked parts neutralised once and
put back, the values collected and named) — taken in turn, so both see the same load — and, end
to end, ``validate`` of the same catalog against the live tree (the child imports the tree and
judges every example, in the sandbox where the machine has one) beside ``validate`` of the
catalog alone. Medians of a few runs, CPU and wall time, with the load average before and
after; printed, never asserted (benchmarks are not timed tests).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from catalogs import PROGRAM, click_application, write_catalog
from run import _exampleguard, click_parse, in_process, interleaved, load, process

from exampleguard._adapters.judge_click import ClickJudge

APP_MODULE = """
import sys
sys.path.insert(0, {bench!r})
from catalogs import click_application
cli = click_application({tools})
"""
CONFIG = 'catalog = "catalog.json"\ntree = "click:bench_app:cli"\ntree_timeout = 600\n'


def _project(scratch: Path, examples: int) -> tuple[Path, list[str]]:
    """A catalog project of ``examples`` examples, readable as a checkout is, counts written."""
    # As a checkout: the sandbox's uid reads only what every user may.
    scratch.chmod(0o755)
    directory = scratch / "project"
    texts = write_catalog(directory, examples)
    _write_counts(directory)
    return directory, texts


def _write_counts(directory: Path) -> None:
    # Without the committed counts, every run ends in counts-missing (exit 1).
    subprocess.run(
        [*_exampleguard(), "counts", "--write", "--no-cache"],
        cwd=directory,
        check=False,
        capture_output=True,
    )


def main(argv: list[str] | None = None) -> int:
    """Print the figures for ``EXAMPLES`` examples (default 10,000)."""
    arguments = argv if argv is not None else sys.argv[1:]
    examples = int(arguments[0]) if arguments else 10_000
    repeat = 3
    load_before = load()
    with tempfile.TemporaryDirectory() as scratch:
        directory, texts = _project(Path(scratch), examples)
        tools = (examples + 1) // 2
        application = click_application(tools)
        argvs = [shlex.split(text)[1:] for text in texts]
        # A judge per run, as each validate's child has: names and neutralisation start afresh.
        judges = iter([ClickJudge(click_application(tools), PROGRAM) for _ in range(repeat)])
        parses = interleaved(
            {
                "click": in_process(lambda: click_parse(application, argvs)),
                "check": in_process(lambda: next(judges).judge_all(argvs)),
            },
            repeat,
        )
        catalog_only = interleaved(
            {"run": process([*_exampleguard(), "validate"], directory)}, repeat
        )["run"]
        (directory / "bench_app.py").write_text(
            APP_MODULE.format(bench=str(Path(__file__).resolve().parent), tools=tools)
        )
        (directory / "exampleguard.toml").write_text(CONFIG)
        _write_counts(directory)
        live = interleaved(
            {"run": process([*_exampleguard(), "validate", "--no-cache"], directory)}, repeat
        )["run"]
    baseline, check = parses["click"], parses["check"]
    figures = {
        "examples": examples,
        "click_make_context_cpu_s": round(baseline["cpu_s"], 3),
        "real_parser_check_cpu_s": round(check["cpu_s"], 3),
        "check_over_make_context_cpu": round(check["cpu_s"] / baseline["cpu_s"], 2),
        "check_over_make_context_wall": round(check["wall_s"] / baseline["wall_s"], 2),
        "per_example_us": round(check["cpu_s"] / examples * 1e6, 1),
        "validate_catalog_only_s": round(catalog_only["wall_s"], 3),
        "validate_catalog_only_exit": catalog_only["exit_code"],
        "validate_live_tree_s": round(live["wall_s"], 3),
        "validate_live_tree_exit": live["exit_code"],
        "load": [round(load_before, 2), round(load(), 2)],
    }
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
