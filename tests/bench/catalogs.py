"""Generated catalogs for the benchmarks, and the equivalent Click application.

Each tool is a command two levels deep (``bench gNN cNNNN``) with realistic parameters: integer
positionals, options with values (quoted ones included), a choice, a bounded integer, a
repeatable option, flags and constraints. Examples have 4 to 12 tokens. The same tools are built
as Click commands so Click's own parser can be timed on exactly the same command lines.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

PROGRAM = "bench"
_WORDS = ["draft", "todo", "urgent", "ideas", "work", "home", "later", "archive"]


def _tool(index: int) -> dict[str, Any]:
    return {
        "id": f"bench.c{index}",
        "command": [f"g{index // 50}", f"c{index}"],
        "summary": f"Command number {index}",
        "parameters": [
            {"name": "ids", "positional": True, "type": "integer", "nargs": -1},
            {"name": "tag", "flags": ["--tag", "-t"], "multiple": True},
            {"name": "title", "flags": ["--title"]},
            {"name": "format", "flags": ["--format", "-f"], "choices": ["text", "json", "csv"]},
            {"name": "limit", "flags": ["--limit"], "type": "integer", "min": 1, "max": 1000},
            {"name": "all", "flags": ["--all", "-a"], "type": "boolean"},
            {"name": "verbose", "flags": ["--verbose", "-v"], "count": True},
            {"name": "dry_run", "flags": ["--dry-run"], "type": "boolean"},
        ],
        "constraints": {
            "require_one_of": [["ids", "tag", "all"]],
            "mutually_exclusive": [["ids", "all"]],
        },
        "examples": [],
    }


def _example(rng: random.Random, tool: dict[str, Any]) -> str:
    words = [PROGRAM, *tool["command"]]
    if rng.random() < 0.5:
        words += [str(rng.randint(1, 999)) for _ in range(rng.randint(1, 3))]
    else:
        words += ["--tag", rng.choice(_WORDS)]
    if rng.random() < 0.5:
        words += ["--title", f"'{rng.choice(_WORDS)} {rng.choice(_WORDS)}'"]
    if rng.random() < 0.5:
        words += ["--format", rng.choice(["text", "json", "csv"])]
    if rng.random() < 0.4:
        words += ["--limit", str(rng.randint(1, 1000))]
    if rng.random() < 0.3:
        words += ["-v"]
    if rng.random() < 0.3:
        words += ["--dry-run"]
    return " ".join(words[:12])


def write_catalog(directory: Path, examples: int, *, seed: int = 7) -> list[str]:
    """Write a catalog-only project with ``examples`` examples; return the example texts."""
    rng = random.Random(seed)
    tools = [_tool(i) for i in range((examples + 1) // 2)]
    texts: list[str] = []
    for tool in tools:
        for _ in range(2):
            if len(texts) == examples:
                break
            text = _example(rng, tool)
            # Two examples of one tool must differ (duplicate-example); nudge the second one.
            while any(text == e["command"] for e in tool["examples"]):
                text = _example(rng, tool)
            tool["examples"].append({"command": text})
            texts.append(text)
    catalog = {
        "format": "exampleguard.catalog/v1",
        "program": PROGRAM,
        "dialect": "click",
        "tools": tools,
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (directory / "exampleguard.toml").write_text('catalog = "catalog.json"\n', encoding="utf-8")
    return texts


def click_application(tool_count: int) -> Any:
    """The same tools as a Click group of groups (built before any timing)."""
    import click

    root = click.Group(PROGRAM)
    groups: dict[str, click.Group] = {}
    for index in range(tool_count):
        group_name = f"g{index // 50}"
        group = groups.get(group_name)
        if group is None:
            group = click.Group(group_name)
            groups[group_name] = group
            root.add_command(group)
        group.add_command(
            click.Command(
                f"c{index}",
                params=[
                    click.Argument(["ids"], nargs=-1, type=int),
                    click.Option(["--tag", "-t"], multiple=True),
                    click.Option(["--title"]),
                    click.Option(["--format", "-f"], type=click.Choice(["text", "json", "csv"])),
                    click.Option(["--limit"], type=click.IntRange(1, 1000)),
                    click.Option(["--all", "-a"], is_flag=True),
                    click.Option(["--verbose", "-v"], count=True),
                    click.Option(["--dry-run"], is_flag=True),
                ],
            )
        )
    return root
