"""``@file`` arguments and ``parse_intermixed_args``, exhaustively against the real argparse.

Every command line of up to four words from a small alphabet (options of every ``nargs``,
``--``, words that look like options, ``@file`` words naming files that exist, nest, include
themselves or are missing) is bound by exampleguard's model and parsed by the real argparse of
this interpreter in a separate process started in the project folder, with no exampleguard code
in it. The verdicts must be equal, word for word of the alphabet.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from exampleguard._adapters.argparser import extract_argparse
from exampleguard._argfiles import read_argument_files
from exampleguard._bind import bind
from exampleguard._catalog import Catalog
from exampleguard._catalogfile import LoadedCatalog
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._rules import arguments_of
from exampleguard._snapshot import Tree
from tests.support.argparse_field import oracle_code

PARSER = """
    import argparse

    parser = argparse.ArgumentParser(prog="prog", fromfile_prefix_chars="@")
    parser.add_argument("-x", action="store_true")
    parser.add_argument("-o", "--opt")
    parser.add_argument("-n", nargs="?", const="c")
    parser.add_argument("--many", nargs="+")
    parser.add_argument("first")
    parser.add_argument("rest", nargs="*")
    """
FILES = {
    "a.txt": "-x\nfrom-a\n",
    "b.txt": "@a.txt\n--\n-q\n",
    "loop.txt": "@loop.txt\n",
    "bad.txt": "--nope\n",
}
ALPHABET = ["-x", "-o", "v", "--", "-n", "--many", "-q", "@a.txt", "@b.txt", "@loop.txt", "@no"]
MOST_WORDS = 3

ORACLE = """
    import sys

    # loop.txt includes itself: argparse recurses until RecursionError, sooner with less stack.
    sys.setrecursionlimit(200)
    {parser}

    class Rejected(Exception):
        pass


    def _raise(message):
        raise Rejected(message)


    parser.error = _raise


    def accepts(argv):
        try:
            namespace = parser.{method}(argv)
        except (Rejected, argparse.ArgumentError):
            return False
        # What the program receives, for the values' comparison: the verdict stays a bool.
        received.append(vars(namespace))
        return True


    received = []
    import atexit
    atexit.register(lambda: print(json.dumps(received)))
    """


DEFAULTS: dict[str, object] = {"x": False, "opt": None, "n": None, "many": None, "rest": []}
"""What the program receives for each parameter the command line does not give."""


def _difference(ours: dict[str, object], namespace: dict[str, object]) -> str | None:
    expected = {**DEFAULTS, **ours}
    if "n" in ours and ours["n"] is None:
        # A bare -n: the argument object says "given without a value", argparse stores the const
        # (tests/support/bound_values.py maps it the same way).
        expected["n"] = "c"
    return None if expected == namespace else f"ours {expected}, argparse {namespace}"


def _real(root: Path, oracle: str, corpus: list[list[str]]) -> tuple[list[bool], list[Any]]:
    done = subprocess.run(
        [sys.executable, "-c", oracle_code(oracle)],
        input=json.dumps(corpus),
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    verdicts, received = done.stdout.strip().splitlines()[-2:]
    return json.loads(verdicts), json.loads(received)


def _catalog() -> LoadedCatalog:
    # One tool, the program itself, declaring nothing: the tree decides everything.
    catalog = Catalog.model_validate(
        {
            "format": "exampleguard.catalog/v1",
            "program": "prog",
            "tools": [{"id": "prog", "command": []}],
        }
    )
    return LoadedCatalog(catalog, Document(Path("catalog.json"), "catalog.json", "{}", {}, "json"))


def _corpus() -> list[list[str]]:
    return [
        list(words)
        for size in range(MOST_WORDS + 1)
        for words in itertools.product(ALPHABET, repeat=size)
    ]


@pytest.mark.parametrize("method", ["parse_args", "parse_intermixed_args"])
def test_every_command_line_gets_argparses_own_verdict(tmp_path: Path, method: str) -> None:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    namespace: dict[str, object] = {}
    exec(textwrap.dedent(PARSER), namespace)
    parser = namespace["parser"]
    assert isinstance(parser, argparse.ArgumentParser)
    snapshot = Tree.model_validate(extract_argparse(parser, "prog"))
    if method == "parse_intermixed_args":
        root = snapshot.commands[0]
        settings = root.settings.model_copy(update={"intermixed": True})
        snapshot = snapshot.model_copy(
            update={"commands": [root.model_copy(update={"settings": settings})]}
        )
    corpus = _corpus()
    files = read_argument_files(tmp_path, corpus, "@")
    contract = build_contract(_catalog(), snapshot, files)
    tool = contract.tools[0]
    bindings = [bind(contract, ["prog", *argv]) for argv in corpus]
    ours = [
        not [p for p in binding.problems if p.code != "repeated-option"] for binding in bindings
    ]
    oracle = textwrap.dedent(ORACLE).format(parser=textwrap.dedent(PARSER), method=method)
    real, received = _real(tmp_path, oracle, corpus)
    wrong = [
        (argv, mine, theirs)
        for argv, mine, theirs in zip(corpus, ours, real, strict=True)
        if mine != theirs
    ]
    print(f"{method}: {len(corpus)} argvs, {len(corpus) - len(wrong)} agree, {sum(real)} accepted")
    assert wrong[:10] == []
    # Where both accept, the program receives what exampleguard's argument object says.
    accepted = [binding for binding, verdict in zip(bindings, real, strict=True) if verdict]
    values = [
        (argv, difference)
        for argv, binding, namespace in zip(
            [a for a, v in zip(corpus, real, strict=True) if v], accepted, received, strict=True
        )
        if (difference := _difference(arguments_of(tool, binding), namespace))
    ]
    assert values[:10] == []
    # Both verdicts occur: the alphabet has teeth.
    assert any(real)
    assert not all(real)
