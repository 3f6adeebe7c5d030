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
import textwrap
from pathlib import Path

import pytest

from exampleguard.adapters.argparser import extract_argparse
from exampleguard.argfiles import read_argument_files
from exampleguard.bind import bind
from exampleguard.catalog import Catalog, LoadedCatalog
from exampleguard.contract import build_contract
from exampleguard.documents import Document
from exampleguard.snapshot import Tree
from tests.support.field import real_verdicts

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
            parser.{method}(argv)
        except (Rejected, argparse.ArgumentError):
            return False
        return True
    """


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
    ours = [
        not [p for p in bind(contract, ["prog", *argv]).problems if p.code != "repeated-option"]
        for argv in corpus
    ]
    oracle = textwrap.dedent(ORACLE).format(parser=textwrap.dedent(PARSER), method=method)
    real = real_verdicts(tmp_path, oracle, corpus)
    wrong = [
        (argv, mine, theirs)
        for argv, mine, theirs in zip(corpus, ours, real, strict=True)
        if mine != theirs
    ]
    print(f"{method}: {len(corpus)} argvs, {len(corpus) - len(wrong)} agree")
    assert wrong[:10] == []
    # Both verdicts occur: the alphabet has teeth.
    assert any(real)
    assert not all(real)
