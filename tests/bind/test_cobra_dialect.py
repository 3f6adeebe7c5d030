"""The cobra dialect's parts that need no cobra program: Go's value syntax, and catalogs.

Go's ``strconv`` and ``encoding/csv``, as pflag calls them, are emulated in
``exampleguard/_bind/_pflag.py``; a small Go program (``tests/fixtures/go/strconv``, the
standard library only) is the oracle for tables of tricky words and for words hypothesis
makes from the characters that matter. A catalog with ``dialect = "cobra"`` and no tree is
bound by the same model; cobra 1.6 (Debian's) has no ``MarkFlagsOneRequired``, so that group is
checked here on a snapshot, with the semantics of cobra 1.8's ``ValidateFlagGroups``.
"""

from __future__ import annotations

import json
import math
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exampleguard._bind import bind
from exampleguard._bind._pflag import (
    GoSyntaxError,
    atoi,
    parse_bool,
    parse_float,
    parse_int,
    parse_uint,
    read_csv_record,
)
from exampleguard._catalog import Catalog
from exampleguard._catalogfile import LoadedCatalog
from exampleguard._contract import Contract
from exampleguard._contractbuild import build_contract
from exampleguard._documents import Document
from exampleguard._snapshot import Tree
from tests.support.golang import build, lay_out, missing_go

TRICKY = [
    "",
    "0",
    "-0",
    "+0",
    "00",
    "08",
    "0x",
    "0x1f",
    "0X1F",
    "0o17",
    "0O8",
    "0b101",
    "0b2",
    "010",
    "1_000",
    "_1",
    "1_",
    "1__0",
    "0x_1",
    "0_x1",
    "+",
    "-",
    "+-1",
    "127",
    "128",
    "-128",
    "-129",
    "255",
    "256",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "٣",
    "1e3",
    "1.5",
    ".5",
    "5.",
    ".",
    "1e",
    "1e+",
    "1e+3",
    "1E-3",
    "1e400",
    "1e-400",
    "4.9e-324",
    "2e-324",
    "inf",
    "Inf",
    "+INF",
    "-infinity",
    "infinity",
    "infin",
    "nan",
    "NaN",
    "-nan",
    "+nan",
    "0x1p-2",
    "0x1.8p3",
    "0X.8P1",
    "0x1",
    "0x1p",
    "0x1p+",
    "0x_1p0",
    "1_000.5",
    "1_e2",
    "1e1_0",
    "3.4028235e38",
    "3.4028236e38",
    "3.5e38",
    "1e-46",
    "1.4e-45",
    "7e-46",
    "16777217",
    "0.1",
    " 1",
    "1 ",
    "t",
    "T",
    "true",
    "TRUE",
    "True",
    "tRue",
    "yes",
    "f",
    "F",
    "False",
    "2",
    "a,b",
    '"a,b",c',
    '"a""b"',
    'a"b',
    '"a"x',
    '"x',
    ' "a"',
    "a,",
    ",",
    ",,",
    "\n",
    "\na",
    "x\ny",
    "a\r",
    "a\r\nb",
    "\r\n",
    "\r",
    '"a\nb",c',
    '"a\r\nb"',
    '"a"\r',
    "é,ü",
    'a,"b\nc",d',
]
ALPHABET = '0123456789abefxXoObBpP_+-.eEinftyNA ,"\r\n'


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Callable[[list[str]], list[Any]]:
    reason = missing_go()
    if reason is not None:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("strconv")
    program = build(lay_out("strconv", folder, helper=False), folder, folder / "bin" / "strconv")

    def ask(words: list[str]) -> list[Any]:
        done = subprocess.run(
            [str(program)], input=json.dumps(words), capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    return ask


def _ours(word: str) -> dict[str, Any]:
    def attempt(convert: Callable[[], Any]) -> dict[str, Any]:
        try:
            return {"ok": True, "value": convert()}
        except GoSyntaxError:
            return {"ok": False}

    def bits(value: float) -> str:
        return _nan_free(format(struct.unpack("<Q", struct.pack("<d", value))[0], "x"))

    return {
        "int64": attempt(lambda: str(parse_int(word, 64))),
        "int8": attempt(lambda: str(parse_int(word, 8))),
        "uint64": attempt(lambda: str(parse_uint(word, 64))),
        "uint8": attempt(lambda: str(parse_uint(word, 8))),
        "atoi": attempt(lambda: str(atoi(word))),
        "bool": attempt(lambda: parse_bool(word)),
        "float64": attempt(lambda: bits(parse_float(word, 64))),
        "float32": attempt(lambda: bits(parse_float(word, 32))),
        "csv": attempt(lambda: read_csv_record(word)),
    }


def _nan_free(bits: str) -> str:
    """Float bits, any NaN as one: Go and Python pick different NaN payloads."""
    value = struct.unpack("<d", struct.pack("<Q", int(bits, 16)))[0]
    return "nan" if math.isnan(value) else bits


def _theirs(row: dict[str, Any]) -> dict[str, Any]:
    theirs: dict[str, Any] = {}
    for key, answer in row.items():
        value = answer.get("value")
        if key.startswith("float") and answer["ok"]:
            value = _nan_free(value)
        theirs[key] = {"ok": True, "value": value} if answer["ok"] else {"ok": False}
    return theirs


def _compare(oracle: Callable[[list[str]], list[Any]], words: list[str]) -> None:
    wrong = []
    for word, row in zip(words, oracle(words), strict=True):
        theirs, ours = _theirs(row), _ours(word)
        for key in theirs:
            if theirs[key] != ours[key]:
                wrong.append(f"{key}({word!r}): Go {theirs[key]}, exampleguard {ours[key]}")
    assert not wrong, "\n".join(wrong)


def test_tricky_words_convert_as_go_converts_them(oracle: Callable[[list[str]], list[Any]]) -> None:
    _compare(oracle, TRICKY)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(ALPHABET, max_size=12), min_size=50, max_size=50))
def test_generated_words_convert_as_go_converts_them(
    oracle: Callable[[list[str]], list[Any]], words: list[str]
) -> None:
    _compare(oracle, words)


def test_a_float32_is_rounded_once() -> None:
    # Halfway between two float32s, but not once rounded to float64 first.
    assert parse_float("16777217", 32) == 16777216.0
    assert parse_float("1.00000005960464477539062500001", 32) == 1.0000001192092896
    assert math.isnan(parse_float("NaN"))


# -- catalogs and snapshots ----------------------------------------------------------------------


def contract_of(catalog: dict[str, Any], tree: dict[str, Any] | None = None) -> Contract:
    document = Document(Path("catalog.json"), "catalog.json", "{}", {}, "json")
    loaded = LoadedCatalog(Catalog.model_validate(catalog), document)
    return build_contract(loaded, Tree.model_validate(tree) if tree is not None else None)


GH = {
    "format": "exampleguard.catalog/v1",
    "program": "gh",
    "dialect": "cobra",
    "tools": [
        {
            "id": "gh.pr.list",
            "command": ["pr", "list"],
            "parameters": [
                {"name": "state", "flags": ["--state", "-s"], "choices": ["open", "closed"]},
                {"name": "limit", "flags": ["--limit", "-L"], "type": "integer"},
                {"name": "web", "flags": ["--web", "-w"], "type": "boolean"},
                {"name": "label", "flags": ["--label"], "multiple": True},
            ],
        },
        {
            "id": "gh.pr.view",
            "command": ["pr", "view"],
            "parameters": [{"name": "number", "positional": True}],
        },
    ],
}


@pytest.mark.parametrize(
    ("words", "codes", "values"),
    [
        (["pr", "list", "-s", "open", "-L0x10", "-w"], [], ["open", 16, True]),
        (["pr", "list", "--label", "a,b", "--label=c"], [], [["a", "b", "c"]]),
        (["pr", "list", "-wL", "3"], [], [True, 3]),
        (["pr", "list", "--web=false"], [], [False]),
        (["pr", "lst"], ["unknown-command"], None),
        (["pr"], ["not-runnable"], None),
        (["pr", "list", "extra"], ["extra-positional"], None),
        (["pr", "list", "--state=x"], ["bad-choice"], None),
        (["pr", "list", "--limit", "1.5"], ["bad-type"], None),
        (["pr", "list", "-L"], ["missing-value"], None),
        (["pr", "view"], ["missing-required"], None),
        (["pr", "view", "7"], [], ["7"]),
        (["pr", "view", "7", "8"], ["extra-positional"], None),
    ],
)
def test_a_catalog_without_a_tree_binds_as_cobra_parses(
    words: list[str], codes: list[str], values: list[Any] | None
) -> None:
    binding = bind(contract_of(GH), ["gh", *words])
    assert [p.code for p in binding.problems] == codes
    if values is not None:
        assert list(binding.typed.values()) == values


ONE_REQUIRED_TREE = {
    "format": "exampleguard.tree/v1",
    "program": "app",
    "dialect": "cobra",
    "commands": [
        {"path": [], "runnable": False},
        {
            "path": ["login"],
            "runnable": True,
            "parameters": [
                {"name": "token", "flags": ["--token"], "pflag_type": "string"},
                {"name": "web", "flags": ["--web"], "type": "boolean", "no_opt_default": "true"},
            ],
            "constraints": {"require_one_of": [["token", "web"]]},
            "settings": {"max_args": 0},
        },
    ],
}


@pytest.mark.parametrize(
    ("words", "codes"),
    [
        (["login"], ["require-one-of"]),
        (["login", "--web"], []),
        # Set is set, false or not: cobra's groups look at whether a flag was changed.
        (["login", "--web=false"], []),
        (["login", "--token", "t", "--web"], []),
    ],
)
def test_one_required_is_cobras_group_where_the_snapshot_has_it(
    words: list[str], codes: list[str]
) -> None:
    catalog = {"format": "exampleguard.catalog/v1", "program": "app", "tools": []}
    binding = bind(contract_of(catalog, ONE_REQUIRED_TREE), ["app", *words])
    assert [p.code for p in binding.problems] == codes
