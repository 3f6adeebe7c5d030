"""exampleguard's performance table: every row against its baseline, measured in one run.

Usage: ``python tests/bench/run.py [--quick] [--max-load L] [--out FILE] [--dryrun]
[--only GROUP,...] [--before CHECKOUT]``

Each row is a median of repeated whole-process runs (or in-process loops for the parser
check), with its baseline measured in the same run, just before it:

1. ``validate`` of 10,000 catalog-only examples (generated, ``dialect = "click"``) against
   Click's own ``make_context`` through the command chain on the same argvs (built before
   timing) plus one interpreter start-up with Click imported;
2. 50,000 over 10,000 examples, wall time, the two taken in turn;
3. peak RSS of the 50,000-example run;
4. the repository's own catalog with a tree snapshot, against ``python -c "import typer"``;
5. the same with the live tree, second run (tree cache warm), against the same baseline;
6. the same with the live tree, first run (the tree cache empty: the tree imported), against
   the child's own import of the CLI (``python -c "import exampleguard.cli"``) plus 0.2 s; a
   run with no cache directory at all (the machine's very first) is printed beside the table;
7. the real-parser check on 10,000 examples with a live Click tree, against Click's
   ``make_context`` alone on the same argvs (in one process), and end to end.

The machine is shared: each figure and its baselines are taken in turn (A B A B ...), so that
both see the same load; CPU-time ratios are printed beside the wall-time ones (they depend far
less on the load); the one-minute load average is recorded beside every row, and ``--max-load``
waits (a while, not for ever) for the load to drop before each row. Figures are
printed, and written as JSON to ``--out`` (default ``tests/bench/results/latest.json``); they
are never asserted. ``--dryrun`` adds the dry-run figures (``--jobs`` and the sandbox
overhead, see ``bench_sandbox.py``).

``--only`` measures some groups of rows: ``catalog`` (rows 1-3), ``own`` (4-6), ``verdict`` (7).
``--before CHECKOUT`` takes another checkout of exampleguard (``git worktree add DIR REV``)
and runs its ``validate`` in turn with this one's in the catalog-only rows, the own-catalog
rows (its own catalog, with its own code) and the end-to-end live-tree row (A B A B, same
load), each against the same baselines, and its real-parser check in a process of its own:
the before/after comparison of a change.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]

from catalogs import PROGRAM, click_application, write_catalog  # noqa: E402 - after the path

from tests.support.project import compile_bytecode  # noqa: E402 - after the path

# (key, what is measured, target ratio, what the ratio is against)
ROWS = [
    ("validate_10k", "10k catalog-only examples vs make_context + start", 1.0),
    ("scaling_50k", "50k / 10k wall", 5.0),
    ("rss_50k", "peak RSS 50k examples (MB)", 200.0),
    ("snapshot_small", "own catalog, tree snapshot vs import typer", 4.0),
    ("live_second", "own catalog, live tree, 2nd run vs import typer", 2.5),
    ("live_first", "own catalog, live tree, 1st run vs import CLI + 0.2 s", 1.0),
    ("verdict_10k", "real-parser check 10k vs make_context alone", 1.0),
]


def _exampleguard() -> list[str]:
    found = shutil.which("exampleguard", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "exampleguard"]


def _run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, int, int, float]:
    """Wall seconds, exit code, peak RSS (KiB) and CPU seconds of one child process."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, os.waitstatus_to_exitcode(status), usage.ru_maxrss, cpu


def _median_run(
    argv: list[str], cwd: Path, repeat: int, env: dict[str, str] | None = None
) -> dict[str, float]:
    """Medians of ``repeat`` runs of a process (wall, CPU), its exit code and its peak RSS."""
    return interleaved({"run": process(argv, cwd, env)}, repeat)["run"]


Measure = Callable[[], dict[str, float]]
"""One measurement: ``wall_s`` and ``cpu_s``, and for a process ``exit_code`` and ``rss_mb``."""


def process(
    argv: list[str],
    cwd: Path,
    env: dict[str, str] | None = None,
    before: Callable[[], None] | None = None,
) -> Measure:
    """A measurement of one run of a process (``before`` is called first, untimed)."""

    def measure() -> dict[str, float]:
        if before is not None:
            before()
        wall, code, rss, cpu = _run(argv, cwd, env)
        return {"wall_s": wall, "cpu_s": cpu, "exit_code": code, "rss_mb": rss / 1024}

    return measure


def in_process(work: Callable[[], object]) -> Measure:
    """A measurement of ``work`` in this process."""

    def measure() -> dict[str, float]:
        # The cyclic collector would scan this process's ever larger heap (the applications,
        # the contexts of earlier loops) at unpredictable moments, charging whichever loop runs
        # then: each loop starts collected and runs without it.
        gc.collect()
        gc.disable()
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            work()
            return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
        finally:
            gc.enable()

    return measure


def interleaved(measures: dict[str, Measure], repeat: int) -> dict[str, dict[str, float]]:
    """Medians of each measure, taken in turn ``repeat`` times (A B A B ...).

    On a shared machine the load changes from second to second; taking a figure and its
    baseline alternately exposes both to the same load, so their ratio means something.
    """
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in measures}
    for _ in range(repeat):
        for name, measure in measures.items():
            runs[name].append(measure())
    results: dict[str, dict[str, float]] = {}
    for name, taken in runs.items():
        summary = {key: statistics.median(r[key] for r in taken) for key in ("wall_s", "cpu_s")}
        if "exit_code" in taken[0]:
            summary["exit_code"] = taken[0]["exit_code"]
            summary["rss_mb"] = max(r["rss_mb"] for r in taken)
        results[name] = summary
    return results


def click_parse(application: Any, argvs: list[list[str]]) -> None:
    """Click's make_context through the command chain for every argv."""
    for words in argvs:
        context = application.make_context(PROGRAM, list(words))
        while True:
            group = context.command
            rest = [*context._protected_args, *context.args]
            if not rest or not hasattr(group, "resolve_command"):
                break
            name, command, args = group.resolve_command(context, rest)
            context = command.make_context(name, args, parent=context)


def click_parse_seconds(texts: list[str], tool_count: int) -> float:
    """Time Click's make_context through the command chain for every example text."""
    application = click_application(tool_count)
    start = time.perf_counter()
    click_parse(application, [shlex.split(text)[1:] for text in texts])
    return time.perf_counter() - start


def python_start(code: str, repeat: int) -> float:
    """Median wall seconds of ``python -c CODE``."""
    return _median_run([sys.executable, "-c", code], REPO, repeat)["wall_s"]


def load() -> float:
    """The one-minute load average."""
    return os.getloadavg()[0]


def wait_for_load(limit: float | None, patience: float = 180.0) -> float:
    """Wait up to ``patience`` seconds for the load to drop to ``limit``; return the load."""
    deadline = time.monotonic() + patience
    while limit is not None and load() > limit and time.monotonic() < deadline:
        time.sleep(5)
    return load()


def _catalog(scratch: Path, size: int) -> tuple[Path, list[str]]:
    directory = scratch / f"catalog-{size}"
    texts = write_catalog(directory, size)
    subprocess.run(
        [*_exampleguard(), "counts", "--write"], cwd=directory, check=False, capture_output=True
    )
    return directory, texts


_RSS_PROBE = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(os.wait4(child.pid, 0)[2].ru_maxrss)
"""


def peak_rss_mb(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """The peak RSS of one run of ``argv``, started from a small interpreter.

    Linux carries a process's peak RSS across exec: a child of this process, which holds large
    Click applications, would report this process's size instead of its own.
    """
    probe = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(probe.stdout.split()[-1]) / 1024


def _pair(ours: dict[str, float], *baselines: dict[str, float]) -> dict[str, float]:
    """Our figures beside the sum of the baselines', and the ratios (wall and CPU)."""
    wall = sum(b["wall_s"] for b in baselines)
    cpu = sum(b["cpu_s"] for b in baselines)
    return {
        **ours,
        "baseline_s": wall,
        "baseline_cpu_s": cpu,
        "ratio": ours["wall_s"] / wall,
        "cpu_ratio": ours["cpu_s"] / cpu,
    }


def _before_env(before: Path) -> dict[str, str]:
    """The environment that runs the other checkout's exampleguard with this interpreter."""
    return {**os.environ, "PYTHONPATH": str(before)}


def bench_catalog_only(
    scratch: Path, repeat: int, sizes: tuple[int, ...], before: Path | None = None
) -> dict[str, Any]:
    """Rows 1-3: validate of generated catalog-only catalogs against Click's own parse.

    With ``before`` (another checkout), its validate is run in turn with this one's; its
    figures are under ``before`` in each row.
    """
    results: dict[str, Any] = {}
    smallest: Path | None = None
    for size in sizes:
        directory, texts = _catalog(scratch, size)
        runs = repeat if size <= 10_000 else max(1, repeat // 2)
        application = click_application((size + 1) // 2)
        argvs = [shlex.split(text)[1:] for text in texts]
        # What checking costs: a checkout compared with --before may keep whole runs in a cache.
        validate = [*_exampleguard(), "validate", "--no-cache"]
        measures = {
            "start": process([sys.executable, "-c", "import click"], REPO),
            "click": in_process(functools.partial(click_parse, application, argvs)),
            "ours": process(validate, directory),
        }
        if before is not None:
            measures["before"] = process(validate, directory, _before_env(before))
        if smallest is not None:
            # The scaling row's baseline: the smallest catalog's run, taken in turn with this
            # one's, so that both see the same load (a second core busy or free changes either).
            measures["ours_small"] = process(validate, smallest)
            if before is not None:
                measures["before_small"] = process(validate, smallest, _before_env(before))
        smallest = smallest or directory
        load_before = load()
        figures = interleaved(measures, runs)
        row: dict[str, Any] = _pair(figures["ours"], figures["click"], figures["start"])
        if "ours_small" in figures:
            row["scaling"] = _scaling(figures["ours"], figures["ours_small"])
            if before is not None:
                row["before_scaling"] = _scaling(figures["before"], figures["before_small"])
        row["rss_mb"] = peak_rss_mb(validate, directory)
        if before is not None:
            row["before"] = _pair(figures["before"], figures["click"], figures["start"])
            row["before"]["rss_mb"] = peak_rss_mb(validate, directory, _before_env(before))
        row.update(
            examples=size,
            click_parse_s=figures["click"]["wall_s"],
            python_start_with_click_s=figures["start"]["wall_s"],
            us_per_example=figures["ours"]["wall_s"] / size * 1e6,
            load=[load_before, load()],
        )
        results[str(size)] = row
    return results


def _scaling(large: dict[str, float], small: dict[str, float]) -> dict[str, float]:
    """A larger catalog's run over a smaller one's, both taken in turn (wall and CPU)."""
    return {
        "wall_s": large["wall_s"],
        "baseline_s": small["wall_s"],
        "ratio": large["wall_s"] / small["wall_s"],
        "cpu_ratio": large["cpu_s"] / small["cpu_s"],
    }


def _own_catalog_project(
    scratch: Path, checkout: Path = REPO, env: dict[str, str] | None = None, tag: str = ""
) -> Path:
    """A checkout's catalog and records with its tree snapshot: a project that passes `validate`."""
    directory = scratch / f"{tag}own-snapshot"
    directory.mkdir()
    snapshot = subprocess.run(
        [*_exampleguard(), "tree", "--format", "json"],
        cwd=checkout,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    (directory / "tree.json").write_text(snapshot, encoding="utf-8")
    config = {
        "catalog": str(checkout / "agent-catalog.json"),
        "dispositions": str(checkout / "dispositions"),
        "tree": "tree.json",
    }
    # The checkout's own reason codes, so that its records read as they do there: the run
    # measured is a passing one, not one that renders errors.
    own = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))
    codes = own["tool"]["exampleguard"].get("reason_codes", {})
    (directory / "exampleguard.toml").write_text(
        "".join(f"{key} = {json.dumps(value)}\n" for key, value in config.items())
        + "[reason_codes]\n"
        + "".join(f"{json.dumps(code)} = {json.dumps(why)}\n" for code, why in codes.items()),
        encoding="utf-8",
    )
    # Its own counts (the checkout's also count the docs, which this project does not read).
    subprocess.run(
        [*_exampleguard(), "counts", "--write"],
        cwd=directory,
        env=env,
        check=True,
        capture_output=True,
    )
    passing = subprocess.run(
        [*_exampleguard(), "validate"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert passing.returncode == 0, passing.stdout + passing.stderr
    return directory


TYPER_APP = """
from pathlib import Path
from typing import Optional
import typer
app = typer.Typer()
@app.command()
def main(config: Optional[Path] = None, output: Optional[Path] = None, shard: str = "",
         jobs: Optional[int] = None, quiet: bool = False) -> None:
    pass
app(["--quiet"], standalone_mode=False)
"""
"""The smallest Typer run with options like ``validate``'s: Typer 0.26 converts every option's
value through a pydantic TypeAdapter built for it, so any such run imports and uses pydantic.
It is printed beside the start-up rows as the floor below which no Typer command gets."""


def _own_runs(
    scratch: Path, checkout: Path, env: dict[str, str] | None, prefix: str = ""
) -> dict[str, Measure]:
    """The start-up runs of one checkout on its own catalog: snapshot, first, second, import."""
    base = dict(os.environ if env is None else env)
    project = _own_catalog_project(scratch, checkout, env, prefix)
    cold = scratch / f"{prefix}cache-cold"
    warm = scratch / f"{prefix}cache-warm"
    validate = [*_exampleguard(), "validate"]
    _run(validate, checkout, {**base, "XDG_CACHE_HOME": str(warm)})
    # exampleguard's own caches there are emptied before each first run.
    _run(validate, checkout, {**base, "XDG_CACHE_HOME": str(cold)})
    return {
        f"{prefix}cli": process([sys.executable, "-c", "import exampleguard.cli"], checkout, env),
        f"{prefix}snapshot": process(validate, project, env),
        f"{prefix}first": process(
            validate,
            checkout,
            {**base, "XDG_CACHE_HOME": str(cold)},
            before=lambda: shutil.rmtree(cold / "exampleguard", ignore_errors=True),
        ),
        f"{prefix}second": process(validate, checkout, {**base, "XDG_CACHE_HOME": str(warm)}),
    }


def _own_rows(figures: dict[str, dict[str, float]], prefix: str = "") -> dict[str, Any]:
    # The first run's allowance: the child's own import of the CLI, plus 0.2 s.
    allowance = {"wall_s": 0.2, "cpu_s": 0.2}
    return {
        "python_import_cli_s": figures[f"{prefix}cli"]["wall_s"],
        "snapshot": _pair(figures[f"{prefix}snapshot"], figures["typer"]),
        "live_first": _pair(figures[f"{prefix}first"], figures[f"{prefix}cli"], allowance),
        "live_second": _pair(figures[f"{prefix}second"], figures["typer"]),
    }


def bench_own_catalog(scratch: Path, repeat: int, before: Path | None = None) -> dict[str, Any]:
    """Rows 4-6: the repository's own catalog, with a snapshot and with its live tree.

    With ``before`` (another checkout), the same runs of its own catalog with its own code are
    taken in turn with these; their rows are under ``before``.
    """
    very_first = scratch / "cache-none"
    validate = [*_exampleguard(), "validate"]
    load_before = load()
    measures = {
        "typer": process([sys.executable, "-c", "import typer"], REPO),
        "typer_app": process([sys.executable, "-c", TYPER_APP], REPO),
        **_own_runs(scratch, REPO, None),
        "very_first": process(
            validate,
            REPO,
            {**os.environ, "XDG_CACHE_HOME": str(very_first)},
            before=lambda: shutil.rmtree(very_first, ignore_errors=True),
        ),
    }
    if before is not None:
        measures.update(_own_runs(scratch, before, _before_env(before), "before_"))
    figures = interleaved(measures, repeat)
    allowance = {"wall_s": 0.2, "cpu_s": 0.2}
    rows: dict[str, Any] = {
        "python_import_typer_s": figures["typer"]["wall_s"],
        "typer_app": _pair(figures["typer_app"], figures["typer"]),
        **_own_rows(figures),
        "live_very_first": _pair(figures["very_first"], figures["cli"], allowance),
        "load": [load_before, load()],
    }
    if before is not None:
        rows["before"] = _own_rows(figures, "before_")
    return rows


_CHECK_LOOP = """
import gc, json, shlex, statistics, sys, time
bench, tools, texts_file, repeat = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
sys.path.insert(0, bench)
from catalogs import PROGRAM, click_application
from exampleguard._adapters.judge_click import ClickJudge
argvs = [shlex.split(text)[1:] for text in json.load(open(texts_file))]
application = click_application(tools)
judge = ClickJudge(click_application(tools), PROGRAM)

def click_parse():
    for words in argvs:
        context = application.make_context(PROGRAM, list(words))
        while True:
            group = context.command
            rest = [*context._protected_args, *context.args]
            if not rest or not hasattr(group, "resolve_command"):
                break
            name, command, args = group.resolve_command(context, rest)
            context = command.make_context(name, args, parent=context)

runs = {"click": [], "check": []}
for _ in range(repeat):
    for name, work in (("click", click_parse), ("check", lambda: judge.judge_all(argvs))):
        gc.collect()
        gc.disable()
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        runs[name].append({"wall_s": wall, "cpu_s": cpu})
        gc.enable()
print(json.dumps({
    name: {key: statistics.median(r[key] for r in taken) for key in ("wall_s", "cpu_s")}
    for name, taken in runs.items()
}))
"""
"""Row 7's in-process figures for another checkout, measured in a process of its own (which
imports that checkout's judge): Click's make_context and the check, in turn."""


def _check_elsewhere(
    before: Path, scratch: Path, tools: int, texts: list[str], repeat: int
) -> dict[str, dict[str, float]]:
    """The in-process figures of row 7 for the checkout ``before`` (see :data:`_CHECK_LOOP`)."""
    texts_file = scratch / "verdict-texts.json"
    texts_file.write_text(json.dumps(texts), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _CHECK_LOOP, str(HERE), str(tools), str(texts_file), str(repeat)],
        env=_before_env(before),
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, dict[str, float]] = json.loads(done.stdout)
    return figures


def bench_verdict(
    scratch: Path, repeat: int, examples: int = 10_000, before: Path | None = None
) -> dict[str, Any]:
    """Row 7: the real-parser check on a live Click tree against Click's make_context.

    With ``before`` (another checkout), the same figures are taken for it: the check in a
    process of its own, and its end-to-end ``validate`` in turn with this one's.
    """
    from exampleguard._adapters.judge_click import ClickJudge

    directory, texts = _catalog(scratch, examples)
    tools = (examples + 1) // 2
    application = click_application(tools)
    judge = ClickJudge(click_application(tools), PROGRAM)
    argvs = [shlex.split(text)[1:] for text in texts]

    def judge_all() -> None:
        # One batch, as the child judges a run's examples.
        judge.judge_all(argvs)

    load_before = load()
    figures = interleaved(
        {
            "click": in_process(lambda: click_parse(application, argvs)),
            "check": in_process(judge_all),
        },
        repeat,
    )
    elsewhere = _check_elsewhere(before, scratch, tools, texts, repeat) if before else None
    (directory / "bench_app.py").write_text(APP_MODULE.format(bench=str(HERE), tools=tools))
    (directory / "exampleguard.toml").write_text(
        'catalog = "catalog.json"\ntree = "click:bench_app:cli"\ntree_timeout = 600\n'
    )
    cache = scratch / "verdict-cache"
    measures = {
        "start": process([sys.executable, "-c", "import click"], REPO),
        "live": process(
            [*_exampleguard(), "validate"],
            directory,
            {**os.environ, "XDG_CACHE_HOME": str(cache)},
            before=lambda: shutil.rmtree(cache, ignore_errors=True),
        ),
    }
    if before is not None:
        measures["before"] = process(
            [*_exampleguard(), "validate"],
            directory,
            {**_before_env(before), "XDG_CACHE_HOME": str(cache)},
            before=lambda: shutil.rmtree(cache, ignore_errors=True),
        )
    live = interleaved(measures, max(1, repeat // 2))
    row: dict[str, Any] = {
        "examples": examples,
        "check": _pair(figures["check"], figures["click"]),
        "validate_live_tree": _pair(live["live"], figures["click"], live["start"]),
        "load": [load_before, load()],
    }
    if before is not None and elsewhere is not None:
        row["before"] = {
            "check": _pair(elsewhere["check"], elsewhere["click"]),
            "validate_live_tree": _pair(live["before"], figures["click"], live["start"]),
        }
    return row


APP_MODULE = """
import sys
sys.path.insert(0, {bench!r})
from catalogs import click_application
cli = click_application({tools})
"""


def bench_dryrun(scratch: Path, quick: bool) -> dict[str, Any]:
    """The dry-run figures: ``--jobs 1`` against ``--jobs 2``, and the sandbox overhead."""
    directory = scratch / "jobs"
    directory.mkdir()
    script = directory / "preview.py"
    script.write_text("import time\ntime.sleep(0.2)\n", encoding="utf-8")
    runs = 16
    tools = [
        {
            "id": f"bench.p{i}",
            "command": [f"p{i}"],
            "parameters": [{"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"}],
            "dry_run": {"flag": None, "reviewed": True, "evidence": "benchmark preview"},
            "examples": [{"command": f"bench p{i}"}],
        }
        for i in range(runs)
    ]
    catalog = {"format": "exampleguard.catalog/v1", "program": "bench", "dialect": "click"}
    (directory / "catalog.json").write_text(json.dumps({**catalog, "tools": tools}))
    executable = json.dumps([sys.executable, str(script)])
    (directory / "exampleguard.toml").write_text(
        f'catalog = "catalog.json"\n[dryrun]\nexecutable = {executable}\n', encoding="utf-8"
    )
    subprocess.run(
        [*_exampleguard(), "counts", "--write"], cwd=directory, check=True, capture_output=True
    )
    # The dry-run phase is what --jobs parallelises: the validation before it is measured on
    # its own and taken out, so the figure is the throughput of the runs themselves.
    fixed = statistics.median(_run([*_exampleguard(), "validate"], directory)[0] for _ in range(3))
    one = _run([*_exampleguard(), "dryrun", "--jobs", "1"], directory)
    two = _run([*_exampleguard(), "dryrun", "--jobs", "2"], directory)
    out = scratch / "sandbox.json"
    subprocess.run(
        [
            sys.executable,
            str(HERE / "bench_sandbox.py"),
            str(out),
            "--runs",
            str(40 if quick else 100),
        ],
        check=False,
        capture_output=True,
    )
    return {
        "runs": runs,
        "validate_s": fixed,
        "jobs_1_s": one[0],
        "jobs_2_s": two[0],
        "speedup": (one[0] - fixed) / (two[0] - fixed),
        "sandbox": json.loads(out.read_text()) if out.exists() else {"error": "bench_sandbox"},
    }


def table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the table: measure, figure, baseline, ratios, target, load average."""
    rows: list[dict[str, Any]] = []
    catalog = report.get("catalog_only")
    own, verdict = report.get("own_catalog"), report.get("verdict")

    def row(key: str, figures: dict[str, Any], load: Any, value: str = "wall_s") -> None:
        label, target = next((label, t) for k, label, t in ROWS if k == key)
        rows.append(
            {
                "key": key,
                "measure": label,
                "value": figures[value],
                "baseline": figures.get("baseline_s"),
                "ratio": figures["ratio"],
                "cpu_ratio": figures.get("cpu_ratio"),
                "target": target,
                "met": figures["ratio"] <= target,
                "load": load,
            }
        )

    if catalog is not None:
        ten = catalog["10000"]
        row("validate_10k", ten, ten["load"])
        if "50000" in catalog:
            fifty = catalog["50000"]
            row("scaling_50k", fifty.get("scaling") or _scaling(fifty, ten), fifty["load"])
            rss = {"rss_mb": fifty["rss_mb"], "ratio": fifty["rss_mb"]}
            row("rss_50k", rss, fifty["load"], value="rss_mb")
    if own is not None:
        row("snapshot_small", own["snapshot"], own["load"])
        row("live_second", own["live_second"], own["load"])
        row("live_first", own["live_first"], own["load"])
    if verdict is not None:
        row("verdict_10k", verdict["check"], verdict["load"])
    return rows


def render(report: dict[str, Any]) -> str:
    """The table as text."""
    lines = [
        f"exampleguard benchmarks on {report['machine']}, commit {report['commit']}",
        "(medians; baselines taken in turn with each figure; ratio = wall, cpu = CPU-time ratio)",
        f"{'measure':<54} {'ours':>8} {'baseline':>8} {'ratio':>6} {'cpu':>6} {'target':>6}"
        "  met  load",
    ]
    for row in report["table"]:
        baseline = "" if row["baseline"] is None else f"{row['baseline']:.3f}"
        cpu = "" if row["cpu_ratio"] is None else f"{row['cpu_ratio']:.2f}"
        lines.append(
            f"{row['measure']:<54} {row['value']:>8.3f} {baseline:>8} {row['ratio']:>6.2f} "
            f"{cpu:>6} {row['target']:>6.2f}  {'yes' if row['met'] else 'NO ':<3}  "
            f"{row['load'][0]:.2f}-{row['load'][1]:.2f}"
        )
    floor = report.get("own_catalog", {}).get("typer_app")
    if floor:
        lines.append(
            f"floor: a five-option Typer command run once: {floor['wall_s']:.3f} s = "
            f"{floor['ratio']:.2f}x import typer (cpu {floor['cpu_ratio']:.2f}x)"
        )
    earlier = report.get("own_catalog", {}).get("before")
    if earlier:
        for key, label in (
            ("snapshot", "snapshot"),
            ("live_second", "live, 2nd run"),
            ("live_first", "live, 1st run"),
        ):
            row = earlier[key]
            lines.append(
                f"before, own catalog, {label}: {row['wall_s']:.3f} s = {row['ratio']:.2f}x "
                f"(cpu {row['cpu_ratio']:.2f}x), exit {row['exit_code']}"
            )
    very_first = report.get("own_catalog", {}).get("live_very_first")
    if very_first:
        lines.append(
            f"live tree, the machine's very first run (sandbox stage compiled too): "
            f"{very_first['wall_s']:.3f} s = {very_first['ratio']:.2f}x import CLI + 0.2 s "
            f"(cpu {very_first['cpu_ratio']:.2f}x)"
        )
    if "verdict" in report:
        live = report["verdict"]["validate_live_tree"]
        lines.append(
            "end to end, validate with the live Click tree (10k): "
            f"{live['wall_s']:.3f} s = {live['ratio']:.2f}x make_context + start "
            f"(cpu {live['cpu_ratio']:.2f}x)"
        )
        earlier = report["verdict"].get("before")
        if earlier is not None:
            check, live = earlier["check"], earlier["validate_live_tree"]
            lines.append(
                f"{'':>6} before: check {check['wall_s']:.3f} s vs make_context "
                f"{check['baseline_s']:.3f} s = {check['ratio']:.2f}x (cpu "
                f"{check['cpu_ratio']:.2f}x); end to end {live['wall_s']:.3f} s = "
                f"{live['ratio']:.2f}x (cpu {live['cpu_ratio']:.2f}x)"
            )
    for size, row in report.get("catalog_only", {}).items():
        lines.append(
            f"{size:>6} examples: {row['us_per_example']:.1f} us/example, exit {row['exit_code']}"
            f", {row['cpu_s']:.2f} s CPU"
        )
        scaling = row.get("before_scaling")
        if scaling is not None:
            lines.append(
                f"{'':>6} before: {size} / 10000 wall {scaling['ratio']:.2f}x "
                f"(cpu {scaling['cpu_ratio']:.2f}x)"
            )
        before = row.get("before")
        if before is not None:
            lines.append(
                f"{'':>6} before: {before['wall_s']:.3f} s = {before['ratio']:.2f}x "
                f"(cpu {before['cpu_ratio']:.2f}x), exit {before['exit_code']}, "
                f"{before['cpu_s']:.2f} s CPU, peak RSS {before['rss_mb']:.0f} MB "
                f"(after: {row['rss_mb']:.0f} MB)"
            )
    dryrun = report.get("dryrun")
    if dryrun:
        lines.append(
            f"dry runs, {dryrun['runs']} runs: --jobs 1 {dryrun['jobs_1_s']:.2f} s, --jobs 2 "
            f"{dryrun['jobs_2_s']:.2f} s; run throughput {dryrun['speedup']:.2f}x"
        )
    return "\n".join(lines)


GROUPS = ("catalog", "own", "verdict")
"""The groups of rows ``--only`` selects: catalog-only (1-3), own catalog (4-6), verdict (7)."""


def _groups(value: str) -> tuple[str, ...]:
    groups = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in groups if name not in GROUPS]
    if unknown or not groups:
        raise argparse.ArgumentTypeError(f"groups are {', '.join(GROUPS)}; not {value!r}")
    return groups


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table and write the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no 50k row")
    parser.add_argument("--max-load", type=float, help="wait for the load to drop to this")
    parser.add_argument("--dryrun", action="store_true", help="add the dry-run figures")
    parser.add_argument("--repeat", type=int, help="runs per figure (default 5, quick 3)")
    parser.add_argument(
        "--only",
        type=_groups,
        default=GROUPS,
        metavar="GROUP,...",
        help=f"measure only these groups of rows ({', '.join(GROUPS)})",
    )
    parser.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="another checkout whose validate runs in turn with this one's (catalog, own)",
    )
    options = parser.parse_args(argv)
    repeat = options.repeat or (3 if options.quick else 5)
    sizes = (10_000,) if options.quick else (10_000, 50_000)
    before = options.before.resolve() if options.before is not None else None
    if before is not None and not (before / "exampleguard" / "__init__.py").is_file():
        parser.error(f"--before: {before} is not a checkout of exampleguard")
    for checkout in (REPO, *([before] if before is not None else [])):
        compile_bytecode(checkout)
    with tempfile.TemporaryDirectory(prefix="exampleguard-bench-") as name:
        scratch = Path(name)
        report: dict[str, Any] = {
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}",
            "commit": subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                check=False,
                cwd=REPO,
                capture_output=True,
                text=True,
            ).stdout.strip(),
        }
        if "catalog" in options.only:
            wait_for_load(options.max_load)
            report["catalog_only"] = bench_catalog_only(scratch, repeat, sizes, before)
        if "own" in options.only:
            wait_for_load(options.max_load)
            report["own_catalog"] = bench_own_catalog(scratch, repeat, before)
        if "verdict" in options.only:
            wait_for_load(options.max_load)
            report["verdict"] = bench_verdict(scratch, repeat, before=before)
        if options.dryrun:
            report["dryrun"] = bench_dryrun(scratch, options.quick)
    report["table"] = table(report)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(render(report))
    print(f"\nwritten to {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
