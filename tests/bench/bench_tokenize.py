"""Per-example cost of the tokenizer's fast path and of its bashlex path, and the fast path's reach.

Usage: ``python tests/bench/bench_tokenize.py [OUT.json] [--examples N] [--corpus FILE]``

The corpus is generated: realistic example lines (4 to 12 words, quoted values, options with values,
``--opt=value``, a few unicode and punctuation-heavy values) plus the shell-construct examples a
catalog should not contain. ``--corpus FILE`` adds real example lines, one per line (for instance
tldr-pages commands with their ``{{placeholders}}`` filled in). Both paths run on the same texts in
the same process; the report gives the median per-example cost of each, the share of examples the
fast path accepts, and the import cost of bashlex (paid once, only when the fast path declines).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from exampleguard._tokenize import (  # noqa: E402 - after making the checkout importable
    _fast_tokenize,
    _tokenize_with_bashlex,
    tokenize,
)

_COMMANDS = [["list"], ["add"], ["delete"], ["tag", "add"], ["search"], ["export"], ["edit"]]
_VALUES = ["groceries", "work", "2024-06-01", "42", "v1.2.3", "a,b,c", "./out/notes.json"]
_TITLES = ["Buy milk", "Call mom about the trip", "café — naïve", "50% over budget", "it's done"]
_SHELL = ["| head", "> out.txt", "$HOME", "*.md", "# note", "&& echo ok", "~/notes", "{a,b}"]


def realistic(rng: random.Random) -> str:
    """One example line as a catalog would hold it."""
    words = ["notes", *rng.choice(_COMMANDS)]
    while len(words) < rng.randint(4, 12):
        roll = rng.random()
        if roll < 0.3:
            words += ["--tag", rng.choice(_VALUES)]
        elif roll < 0.5:
            title = rng.choice(_TITLES)
            words += ["--title", f'"{title}"' if "'" in title else f"'{title}'"]
        elif roll < 0.65:
            words.append(f"--format={rng.choice(['json', 'text', 'csv'])}")
        elif roll < 0.8:
            words.append(str(rng.randint(1, 999)))
        else:
            words.append(rng.choice(["-v", "--all", "--dry-run", "-f"]))
    return " ".join(words)


def corpus(examples: int, seed: int = 7) -> list[str]:
    """Realistic lines, with one in fifty carrying a shell construct (as a catalog might)."""
    rng = random.Random(seed)
    lines = []
    for index in range(examples):
        line = realistic(rng)
        if index % 50 == 0:
            line += " " + rng.choice(_SHELL)
        lines.append(line)
    return lines


def per_example_us(function: object, texts: list[str], rounds: int = 5) -> float:
    """Median over rounds of the mean cost per text, in microseconds."""
    assert callable(function)
    timings = []
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            function(text)
        timings.append((time.perf_counter() - start) / len(texts) * 1e6)
    return statistics.median(timings)


def bashlex_import_ms() -> float:
    code = "import time; t = time.perf_counter(); import bashlex; print(time.perf_counter() - t)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return float(result.stdout) * 1000


def measure(name: str, texts: list[str]) -> dict[str, object]:
    accepted = [text for text in texts if _fast_tokenize(text) is not None]
    declined = [text for text in texts if _fast_tokenize(text) is None]
    sample = texts[: min(len(texts), 2000)]  # the bashlex path is slow: time a sample
    return {
        "corpus": name,
        "examples": len(texts),
        "fast_path_share": len(accepted) / len(texts) if texts else 0.0,
        "tokenize_us": per_example_us(tokenize, texts),
        "fast_path_us": per_example_us(_fast_tokenize, accepted) if accepted else None,
        "bashlex_path_us_on_all": per_example_us(_tokenize_with_bashlex, sample, rounds=3),
        "bashlex_path_us_on_declined": (
            per_example_us(_tokenize_with_bashlex, declined[:2000], rounds=3) if declined else None
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="write the figures as JSON here")
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--corpus", type=Path, help="extra example lines, one per line")
    args = parser.parse_args(argv)

    import_ms = bashlex_import_ms()
    tokenize("notes $HOME")  # import bashlex here, outside every timing
    rows = [measure("generated", corpus(args.examples))]
    if args.corpus is not None:
        lines = args.corpus.read_text(encoding="utf-8").splitlines()
        rows.append(measure(args.corpus.name, [line for line in lines if line.strip()]))

    header = f"{'corpus':<22}{'examples':>9}{'fast share':>12}{'tokenize':>11}"
    header += f"{'fast path':>11}{'bashlex all':>13}{'bashlex rest':>14}"
    print(header)
    for row in rows:
        cells = [
            f"{row['corpus']!s:<22}",
            f"{row['examples']:>9}",
            f"{row['fast_path_share']:>11.1%} ",
        ]
        for key, width in (
            ("tokenize_us", 11),
            ("fast_path_us", 11),
            ("bashlex_path_us_on_all", 13),
            ("bashlex_path_us_on_declined", 14),
        ):
            value = row[key]
            cells.append(f"{value:>{width - 3}.1f} µs" if isinstance(value, float) else " " * width)
        print("".join(cells))
    print(f"importing bashlex: {import_ms:.0f} ms (only when the fast path declines)")

    if args.out is not None:
        figures = {
            "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
            "bashlex_import_ms": import_ms,
            "rows": rows,
        }
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
