"""The cost of the real-parser check: 10,000 examples judged by a live Click tree's own parser.

``python tests/bench/bench_verdict.py [EXAMPLES]`` times, in one process and on exactly the same
command lines: Click's own ``make_context`` through the command chain (the baseline), and
exampleguard's real-parser check (:class:`exampleguard.adapters.judge_click.ClickJudge`: the
same chain, with the unchecked parts neutralised and put back, the values collected and named)
— and, end to end, ``validate`` of the same catalog against the live tree (the child imports
the tree and judges every example) beside ``validate`` of the catalog alone. Medians of a few
runs; printed, never asserted (benchmarks are not timed tests).
"""

from __future__ import annotations

import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from catalogs import PROGRAM, click_application, write_catalog
from run import _exampleguard, _median_run, click_parse_seconds

from exampleguard.adapters.judge_click import ClickJudge

APP_MODULE = """
import sys
sys.path.insert(0, {bench!r})
from catalogs import click_application
cli = click_application({tools})
"""


def judge_seconds(texts: list[str], tool_count: int) -> float:
    """Time the real-parser check on every example text (the application built beforehand)."""
    judge = ClickJudge(click_application(tool_count), PROGRAM)
    argvs = [shlex.split(text)[1:] for text in texts]
    start = time.perf_counter()
    for argv in argvs:
        judge.judge(argv)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Print the figures for ``EXAMPLES`` examples (default 10,000)."""
    arguments = argv if argv is not None else sys.argv[1:]
    examples = int(arguments[0]) if arguments else 10_000
    repeat = 3
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch) / "project"
        texts = write_catalog(directory, examples)
        tools = (examples + 1) // 2
        baseline = statistics.median(click_parse_seconds(texts, tools) for _ in range(repeat))
        judged = statistics.median(judge_seconds(texts, tools) for _ in range(repeat))
        catalog_only = _median_run([*_exampleguard(), "validate"], directory, repeat)
        (directory / "bench_app.py").write_text(
            APP_MODULE.format(bench=str(Path(__file__).resolve().parent), tools=tools)
        )
        config = directory / "exampleguard.toml"
        config.write_text(
            'catalog = "catalog.json"\ntree = "click:bench_app:cli"\ntree_timeout = 600\n'
        )
        live = _median_run([*_exampleguard(), "validate"], directory, repeat)
    figures = {
        "examples": examples,
        "click_make_context_s": round(baseline, 3),
        "real_parser_check_s": round(judged, 3),
        "check_over_make_context": round(judged / baseline, 2),
        "per_example_us": round(judged / examples * 1e6, 1),
        "validate_catalog_only_s": round(catalog_only["wall_s"], 3),
        "validate_live_tree_s": round(live["wall_s"], 3),
        "validate_live_tree_exit": live["exit_code"],
    }
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
