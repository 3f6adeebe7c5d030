"""exampleguard's benchmarks, each against its natural baseline measured in the same run.

Usage: ``python tests/bench/run.py [--out FILE] [--quick]``

- validate throughput on generated catalog-only catalogs of 1k, 10k and 50k examples (whole
  ``exampleguard validate`` processes) against Click's own ``make_context`` parse of the same
  command lines in this process (shlex splitting included, one equivalent Click command per tool,
  built before timing) plus one Python start-up with Click imported;
- how 50k scales against 10k, and the peak memory of the 50k run;
- cold start: ``exampleguard --help`` and ``exampleguard validate`` on the repository's own
  catalog, against ``python -c "import typer"``;
- dry runs: per-run overhead of each sandbox backend against a bare ``subprocess.run`` (the
  sandbox benchmark, ``bench_sandbox.py``), and ``--jobs 1`` against ``--jobs 2``.

Figures are medians; the table is printed and the JSON written to ``--out`` (default
``tests/bench/results/latest.json``). Not part of the test suite: timings are never asserted.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]

from catalogs import PROGRAM, click_application, write_catalog  # noqa: E402

TARGETS = {
    "validate_10k_ratio": 1.0,
    "scaling_50k_over_10k": 5.5,
    "peak_memory_50k_mb": 300.0,
    "help_cold_s": 0.30,
    "bwrap_overhead_ms": 6.0,
    "jobs_speedup": 1.7,
}


def _exampleguard() -> list[str]:
    found = shutil.which("exampleguard", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "exampleguard"]


def _run(argv: list[str], cwd: Path) -> tuple[float, int, int]:
    """Wall seconds, exit code and peak RSS (KiB) of one child process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, process.returncode, usage.ru_maxrss


def _median_run(argv: list[str], cwd: Path, repeat: int) -> dict[str, float]:
    runs = [_run(argv, cwd) for _ in range(repeat)]
    return {
        "wall_s": statistics.median(r[0] for r in runs),
        "exit_code": runs[0][1],
        "peak_rss_mb": max(r[2] for r in runs) / 1024,
    }


def click_parse_seconds(texts: list[str], tool_count: int) -> float:
    """Time Click's make_context through the command chain for every example text."""
    application = click_application(tool_count)
    start = time.perf_counter()
    for text in texts:
        words = shlex.split(text)[1:]
        context = application.make_context(PROGRAM, words)
        while True:
            group = context.command
            rest = [*context._protected_args, *context.args]
            if not rest or not hasattr(group, "resolve_command"):
                break
            name, command, args = group.resolve_command(context, rest)
            context = command.make_context(name, args, parent=context)
    return time.perf_counter() - start


def python_start(code: str, repeat: int) -> float:
    """Median wall seconds of ``python -c CODE``."""
    return statistics.median(_run([sys.executable, "-c", code], REPO)[0] for _ in range(repeat))


def bench_validate(scratch: Path, sizes: list[int], repeat: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    click_start = python_start("import click", repeat=5)
    results["python_start_with_click_s"] = click_start
    for size in sizes:
        directory = scratch / f"catalog-{size}"
        texts = write_catalog(directory, size)
        subprocess.run(
            [*_exampleguard(), "counts", "--write"], cwd=directory, check=True, capture_output=True
        )
        ours = _median_run(
            [*_exampleguard(), "validate"], directory, repeat if size <= 10_000 else 1
        )
        click = statistics.median(
            click_parse_seconds(texts, (size + 1) // 2)
            for _ in range(repeat if size <= 10_000 else 1)
        )
        baseline = click + click_start
        results[str(size)] = {
            "examples": size,
            "exampleguard_validate_s": ours["wall_s"],
            "exit_code": ours["exit_code"],
            "peak_rss_mb": ours["peak_rss_mb"],
            "click_parse_s": click,
            "baseline_s": baseline,
            "ratio": ours["wall_s"] / baseline,
            "us_per_example": ours["wall_s"] / size * 1e6,
        }
    if "10000" in results and "50000" in results:
        results["scaling_50k_over_10k"] = (
            results["50000"]["exampleguard_validate_s"]
            / results["10000"]["exampleguard_validate_s"]
        )
    return results


def bench_cold(repeat: int) -> dict[str, Any]:
    typer_start = python_start("import typer", repeat)
    help_run = _median_run([*_exampleguard(), "--help"], REPO, repeat)
    dogfood = _median_run([*_exampleguard(), "validate"], REPO, max(3, repeat // 3))
    return {
        "python_import_typer_s": typer_start,
        "help_s": help_run["wall_s"],
        "help_ratio": help_run["wall_s"] / typer_start,
        "validate_dogfood_s": dogfood["wall_s"],
        "validate_dogfood_exit_code": dogfood["exit_code"],
        "validate_dogfood_ratio": dogfood["wall_s"] / typer_start,
    }


def bench_jobs(scratch: Path, runs: int) -> dict[str, Any]:
    """Dry-run throughput with --jobs 1 and --jobs 2 on examples that each sleep briefly."""
    directory = scratch / "jobs"
    directory.mkdir()
    script = directory / "preview.py"
    script.write_text("import time\ntime.sleep(0.2)\n", encoding="utf-8")
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
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": "bench",
        "dialect": "click",
        "tools": tools,
    }
    (directory / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    executable = json.dumps([sys.executable, str(script)])
    (directory / "exampleguard.toml").write_text(
        f'catalog = "catalog.json"\n[dryrun]\nexecutable = {executable}\n', encoding="utf-8"
    )
    subprocess.run(
        [*_exampleguard(), "counts", "--write"], cwd=directory, check=True, capture_output=True
    )
    # The dry-run phase is what --jobs parallelises: the validation before it is measured on its
    # own and taken out, so the figure is the throughput of the runs themselves.
    fixed = statistics.median(_run([*_exampleguard(), "validate"], directory)[0] for _ in range(3))
    one = _run([*_exampleguard(), "dryrun", "--jobs", "1"], directory)
    two = _run([*_exampleguard(), "dryrun", "--jobs", "2"], directory)
    return {
        "runs": runs,
        "validate_s": fixed,
        "jobs_1_s": one[0],
        "jobs_2_s": two[0],
        "exit_codes": [one[1], two[1]],
        "speedup": (one[0] - fixed) / (two[0] - fixed),
    }


def bench_sandbox(scratch: Path, runs: int) -> dict[str, Any]:
    out = scratch / "sandbox.json"
    subprocess.run(
        [sys.executable, str(HERE / "bench_sandbox.py"), str(out), "--runs", str(runs)],
        check=False,
        capture_output=True,
    )
    return json.loads(out.read_text()) if out.exists() else {"error": "bench_sandbox failed"}


def render(report: dict[str, Any]) -> str:
    lines = [f"exampleguard benchmarks on {report['machine']}"]
    validate = report["validate"]
    lines.append(f"python start with click imported: {validate['python_start_with_click_s']:.3f} s")
    lines.append("examples  exampleguard   click parse   baseline   ratio   us/example   peak MB")
    for key in ("1000", "10000", "50000"):
        if key in validate:
            row = validate[key]
            lines.append(
                f"{row['examples']:>8}  {row['exampleguard_validate_s']:>10.3f} s"
                f"  {row['click_parse_s']:>9.3f} s  {row['baseline_s']:>7.3f} s"
                f"  {row['ratio']:>5.2f}x  {row['us_per_example']:>10.1f}"
                f"  {row['peak_rss_mb']:>8.1f}"
            )
    if "scaling_50k_over_10k" in validate:
        lines.append(f"50k / 10k: {validate['scaling_50k_over_10k']:.2f}x (target <= 5.5x)")
    cold = report["cold"]
    lines.append(
        f"cold --help: {cold['help_s']:.3f} s (target <= 0.30 s); import typer: "
        f"{cold['python_import_typer_s']:.3f} s; ratio {cold['help_ratio']:.2f}x"
    )
    lines.append(
        f"validate on the repository's catalog: {cold['validate_dogfood_s']:.3f} s "
        f"({cold['validate_dogfood_ratio']:.2f}x import typer)"
    )
    jobs = report.get("jobs")
    if jobs:
        lines.append(
            f"dry runs, {jobs['runs']} runs: --jobs 1 {jobs['jobs_1_s']:.2f} s, --jobs 2 "
            f"{jobs['jobs_2_s']:.2f} s, of which validation {jobs['validate_s']:.2f} s; "
            f"run throughput {jobs['speedup']:.2f}x (target >= 1.7x)"
        )
    sandbox_report = report.get("sandbox", {})
    for name, column in sandbox_report.get("columns", {}).items():
        if isinstance(column, dict) and "median_ms" in column:
            lines.append(
                f"dry-run overhead {name}: {column['median_ms']:.2f} ms median"
                + (f", {column['overhead_ms']:.2f} ms over bare" if "overhead_ms" in column else "")
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, fewer repeats")
    options = parser.parse_args(argv)
    sizes = [1_000, 10_000] if options.quick else [1_000, 10_000, 50_000]
    repeat = 3 if options.quick else 5
    with tempfile.TemporaryDirectory(prefix="exampleguard-bench-") as name:
        scratch = Path(name)
        report: dict[str, Any] = {
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}",
            "targets": TARGETS,
            "validate": bench_validate(scratch, sizes, repeat),
            "cold": bench_cold(10 if not options.quick else 5),
            "jobs": bench_jobs(scratch, 16),
            "sandbox": bench_sandbox(scratch, 40 if options.quick else 100),
        }
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(render(report))
    print(f"\nwritten to {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
