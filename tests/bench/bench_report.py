"""Building and writing a 50k-example report: the dataclasses a run builds against pydantic models.

Usage: ``python tests/bench/bench_report.py [OUT.json] [--examples N]``

Two generated catalogs (``catalogs.write_catalog``): as generated (a handful of diagnostics), and
with a value out of range added to every example (a located diagnostic or two per example). Each is
evaluated once in a fresh child process per way of building, untimed; the child then builds the
report and writes it as JSON to a file piece by piece, and reports the wall time of that and the
peak RSS (the kernel's high-water mark, reset after the evaluation, so the figure is the peak of
building and writing alone; the process's peak is reported too). The ways:

- ``dataclasses``: :func:`exampleguard._report.build_report`, what a run does;
- ``pydantic``: the same entries as the strict pydantic models of the format, validated as built;
- ``pydantic-construct``: the same models built with ``model_construct`` (no validation).

All three are written the same way: the envelope by hand, then one entry's JSON at a time. Not part
of the test suite.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]

from catalogs import write_catalog  # noqa: E402 - after making the checkout importable

WAYS = ("dataclasses", "pydantic", "pydantic-construct")


def _status_kib(name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    raise KeyError(name)


def _pydantic_report(evaluation: Any, *, validate: bool) -> Any:
    """The report of ``evaluation`` as the pydantic models, entry by entry as the builder does."""
    from exampleguard._report import model
    from exampleguard._report.build import located

    def make(cls: Any, **values: Any) -> Any:
        return cls(**values) if validate else cls.model_construct(**values)

    def location(where: Any) -> Any:
        if where is None or (where.line is None and where.key is None):
            return None
        return make(
            model.LocationEntry,
            line=where.line,
            column=where.column,
            key=where.key,
            end_line=where.end_line,
            end_column=where.end_column,
        )

    def span(found: Any) -> Any:
        return None if found is None else make(model.SpanEntry, start=found.start, end=found.end)

    def related(r: Any) -> Any:
        where = located(r)
        return make(
            model.RelatedEntry,
            message=r.message,
            file=where.file if where else None,
            location=location(where),
            span=span(r.span),
        )

    entries: dict[int, Any] = {}

    def diagnostic(d: Any) -> Any:
        if id(d) not in entries:
            # The check stage leaves lines and columns to the report: placed here, as a run does.
            where = located(d)
            entries[id(d)] = make(
                model.DiagnosticEntry,
                code=d.code,
                severity=d.severity.value,
                tool=d.tool,
                example=d.example,
                message=d.message,
                hint=d.hint,
                suggestion=d.suggestion,
                file=where.file if where else None,
                location=location(where),
                span=span(d.span),
                related=[related(r) for r in d.related],
            )
        return entries[id(d)]

    examples = [
        make(
            model.ExampleEntry,
            tool=r.tool,
            index=r.index,
            command=r.command,
            ok=r.ok,
            argv=None if r.argv is None else list(r.argv),
            path=None if r.path is None else list(r.path),
            arguments=r.arguments,
            diagnostics=[diagnostic(d) for d in r.diagnostics],
        )
        for r in evaluation.examples
    ]
    diagnostics = [diagnostic(d) for d in evaluation.diagnostics]
    return make(
        model.Report,
        format="exampleguard.report/v1",
        ok=not any(d.severity == "error" for d in diagnostics),
        catalog=evaluation.inputs.catalog.document.display,
        counts=evaluation.counts,
        examples=examples,
        diagnostics=diagnostics,
        dry_runs=[],
        interrupted=False,
        shard=None,
    )


def _model_pieces(report: Any) -> Iterator[str]:
    """The report's JSON text as the product writes it, each entry dumped by pydantic itself."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False)

    def text(value: Any, depth: int) -> str:
        plain = value.model_dump() if hasattr(value, "model_dump") else value
        return encoder.encode(plain).replace("\n", "\n" + "  " * depth)

    separator = "{\n  "
    for name in type(report).model_fields:
        value = getattr(report, name)
        yield f"{separator}{json.dumps(name)}: "
        separator = ",\n  "
        if isinstance(value, list) and value:
            opening = "[\n    "
            for entry in value:
                yield opening + text(entry, 2)
                opening = ",\n    "
            yield "\n  ]"
        else:
            yield text(value, 1)
    yield "\n}\n"


def child(directory: Path, way: str, out: Path) -> None:
    """Evaluate ``directory``'s catalog, then build and write its report ``way``; print figures."""
    from exampleguard._commands.validate import run_evaluation
    from exampleguard._config import load_config
    from exampleguard._report import build_report, render_pieces

    evaluation, unusable = run_evaluation(load_config(None, directory))
    assert evaluation is not None, unusable
    evaluation_peak = _status_kib("VmHWM")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    before = _status_kib("VmRSS")
    start = time.perf_counter()
    if way == "dataclasses":
        pieces = render_pieces(build_report(evaluation), "json")
    else:
        pieces = _model_pieces(_pydantic_report(evaluation, validate=way == "pydantic"))
    with out.open("w", encoding="utf-8", errors="backslashreplace") as stream:
        stream.writelines(pieces)
    elapsed = time.perf_counter() - start
    figures = {
        "build_and_write_s": elapsed,
        "rss_before_mb": before / 1024,
        "peak_rss_mb": _status_kib("VmHWM") / 1024,
        "process_peak_rss_mb": max(evaluation_peak, _status_kib("VmHWM")) / 1024,
        "bytes": out.stat().st_size,
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
    }
    print(json.dumps(figures))


def _failing(directory: Path) -> None:
    """Give every example of ``directory``'s catalog a value out of its range."""
    path = directory / "catalog.json"
    catalog = json.loads(path.read_text(encoding="utf-8"))
    for tool in catalog["tools"]:
        for example in tool["examples"]:
            example["command"] += " --limit 0"
    path.write_text(json.dumps(catalog), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--examples", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=3, metavar=("DIR", "WAY", "OUT"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        directory, way, out = options.child
        child(Path(directory), way, Path(out))
        return 0
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}",
        "examples": options.examples,
    }
    with tempfile.TemporaryDirectory(prefix="exampleguard-bench-report-") as name:
        scratch = Path(name)
        for scenario in ("clean", "failing"):
            directory = scratch / scenario
            write_catalog(directory, options.examples)
            if scenario == "failing":
                _failing(directory)
            rows: dict[str, Any] = {}
            for way in WAYS:
                runs = []
                for _ in range(options.repeat):
                    done = subprocess.run(
                        [sys.executable, __file__, "--child", str(directory), way, "r.json"],
                        cwd=scratch,
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    runs.append(json.loads(done.stdout))
                rows[way] = {
                    key: statistics.median(run[key] for run in runs)
                    for key in runs[0]
                    if key != "sha256"
                }
                rows[way]["sha256"] = runs[0]["sha256"]
                row = rows[way]
                print(
                    f"{scenario:8} {way:19} build+write {row['build_and_write_s']:6.2f} s  "
                    f"peak RSS {row['peak_rss_mb']:6.1f} MB (from {row['rss_before_mb']:.1f})  "
                    f"JSON {row['bytes'] / 1e6:.1f} MB",
                    flush=True,
                )
            # The same report, whichever way it was built.
            assert len({row["sha256"] for row in rows.values()}) == 1, rows
            results[scenario] = rows
    if options.out:
        options.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
