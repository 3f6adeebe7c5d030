"""Field tests: a real third-party CLI, read and judged the way a user's project does it.

A throwaway project names the CLI's parser in its configuration (``tree``), documents a corpus
of command lines in its README, and is loaded and evaluated by exampleguard's own stages. The
same command lines are given to the CLI's real parse, run by the CLI's own code in a separate
interpreter started in the project folder (where ``@file`` arguments are read from), with no
exampleguard code in it: an oracle that shares nothing with the judge under test.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exampleguard._config import load_config
from exampleguard._pipeline import ExampleResult, load_inputs, run
from tests.support.project import write_config

__all__ = ["FieldRun", "Judged", "field_project", "field_run", "oracle_code", "real_verdicts"]

_ORACLE = """
import contextlib, io, json, sys
{setup}
verdicts = []
for argv in json.load(sys.stdin):
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            verdict = bool(accepts(argv))
        except SystemExit as exit_:
            verdict = exit_.code in (0, None)
        except RecursionError:
            # An @file that includes itself: the program dies of it.
            verdict = False
    verdicts.append(verdict)
print(json.dumps(verdicts))
"""


def field_project(
    root: Path,
    *,
    program: str,
    tree: str,
    corpus: Sequence[Sequence[str]],
    files: Mapping[str, str] = {},
    settings: Mapping[str, Any] = {},
    tables: str = "",
) -> Path:
    """A project in ``root`` whose README documents ``program`` with each argv of ``corpus``.

    ``files`` are written into the project (a module naming the parser, ``@file`` arguments);
    ``tables`` is TOML appended to the configuration (sub-tables such as ``argv_rewrite``).
    """
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    catalog = {"format": "exampleguard.catalog/v1", "program": program, "tools": []}
    (root / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    lines = [f"$ {shlex.join([program, *argv])}" for argv in corpus]
    readme = "# Usage\n\n```console\n" + "\n".join(lines) + "\n```\n"
    (root / "README.md").write_text(readme, encoding="utf-8")
    config = write_config(
        root,
        {"catalog": "catalog.json", "tree": tree, "docs": ["README.md"], **settings},
    )
    if tables:
        with config.open("a", encoding="utf-8") as stream:
            stream.write(textwrap.dedent(tables))
    return root


@dataclass(frozen=True)
class Judged:
    """One command line: exampleguard's verdict, the real one, and what exampleguard said."""

    argv: tuple[str, ...]
    ours: bool
    real: bool
    codes: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        """Whether exampleguard's verdict is the real parser's."""
        return self.ours == self.real


@dataclass(frozen=True)
class FieldRun:
    """Every command line of a corpus, judged both ways."""

    cli: str
    judged: tuple[Judged, ...]

    @property
    def disagreements(self) -> list[Judged]:
        """The command lines exampleguard judges otherwise than the real parser."""
        return [each for each in self.judged if not each.agrees]

    @property
    def false_accepts(self) -> list[Judged]:
        """The command lines exampleguard passes and the real parser rejects."""
        return [each for each in self.judged if each.ours and not each.real]

    @property
    def model_mismatches(self) -> list[Judged]:
        """The command lines where exampleguard's model and the live parser disagreed."""
        return [each for each in self.judged if "model-mismatch" in each.codes]

    def summary(self) -> str:
        """The agreement figures, as the closing note reports them."""
        agree = sum(each.agrees for each in self.judged)
        return (
            f"{self.cli} on Python {sys.version_info.major}.{sys.version_info.minor}: "
            f"{len(self.judged)} argvs, {agree} agree, {len(self.false_accepts)} false accepts, "
            f"{len(self.model_mismatches)} model-mismatch warnings"
        )


def oracle_code(setup: str) -> str:
    """The program that prints, as JSON, ``accepts(argv)`` for each argv of a JSON list on stdin.

    ``setup`` defines ``accepts``; an exit with status 0 (help, version) is an acceptance.
    """
    return _ORACLE.format(setup=textwrap.dedent(setup))


def real_verdicts(root: Path, setup: str, argvs: Sequence[Sequence[str]]) -> list[bool]:
    """The real CLI's verdict on each argv: ``setup`` defines ``accepts(argv) -> bool``.

    Run by this interpreter in the project folder, so relative ``@file`` names are read there,
    as the program run from the project would read them.
    """
    code = oracle_code(setup)
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps([list(argv) for argv in argvs]),
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(verdicts, list)
    return [bool(verdict) for verdict in verdicts]


def field_run(cli: str, root: Path, corpus: Sequence[Sequence[str]], setup: str) -> FieldRun:
    """Evaluate the project in ``root`` as ``exampleguard validate`` does; ask the real CLI."""
    config = load_config(None, root)
    evaluation = run(load_inputs(config, with_counts=False), check_counts=False)
    documented = {
        result.text: result
        for result in evaluation.examples
        if result.tool is None and result.origin.kind == "markdown"
    }
    program = evaluation.contract.program
    texts = [shlex.join([program, *argv]) for argv in corpus]
    assert len(set(texts)) == len(texts), "a corpus names each command line once"
    assert sorted(documented) == sorted(texts)
    real = real_verdicts(root, setup, corpus)
    return FieldRun(
        cli,
        tuple(
            Judged(tuple(argv), documented[text].ok, verdict, _codes(documented[text]))
            for argv, text, verdict in zip(corpus, texts, real, strict=True)
        ),
    )


def _codes(result: ExampleResult) -> tuple[str, ...]:
    return tuple(diagnostic.code for diagnostic in result.diagnostics)
