"""Hugging Face's ``hf``: a lazy Click group whose commands load as the command line selects them.

``hf``'s group lists ``download``, ``upload``, ``env``… as ``LazyHfCommand`` placeholders with
no parameters; its ``resolve_command`` swaps each for the real command as ``Group.invoke``
reaches it. The adapter reads every listed command through that same lookup, so the tree has
``download``'s parameters and ``hf download <repo_id>`` is valid for the model as for ``hf``.

The reference is ``hf``'s own parse (``tests/support/click_field.py``); no command runs, no network.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

import pytest
from huggingface_hub.cli.hf import app

import tests.differential.test_differential as generated
from tests.support.click_field import (
    ACCEPTED,
    COMPARED,
    FALSE_ACCEPTS,
    MISMATCHES,
    REJECTED,
    FieldCLI,
    field_disagreement,
    run_table,
    unchecked_flags,
)
from tests.support.frameworks import Parsed


def hf_cli() -> FieldCLI:
    return FieldCLI("hf", "hf", app)


def test_the_tree_has_the_lazy_commands_parameters() -> None:
    download = hf_cli().tree.command(["download"])
    assert download is not None
    names = {parameter.name for parameter in download.parameters}
    assert {"repo_id", "filenames", "repo_type", "revision", "local_dir"} <= names


# hf's own guides: downloads, uploads, env and the subgroups; and their near misses.
PINNED = (
    ("download", "gpt2"),
    ("download", "gpt2", "config.json", "model.safetensors"),
    ("download", "gpt2", "--revision", "v1.0", "--local-dir", "out"),
    ("download", "HuggingFaceH4/zephyr-7b-beta", "--repo-type", "model"),
    ("download", "gpt2", "--repo-type", "galaxy"),
    ("download", "gpt2", "--bogus"),
    ("download",),
    ("upload", "my-model", ".", "."),
    ("env",),
    ("env", "extra"),
    ("version",),
    ("auth", "whoami"),
    ("models", "ls"),
    ("cache", "ls"),
    ("dwnload", "gpt2"),
)


@pytest.mark.parametrize("argv", PINNED, ids=" ".join)
def test_hf_command_lines_get_hfs_verdict(argv: tuple[str, ...]) -> None:
    message = field_disagreement(hf_cli(), argv, Counter())
    assert message is None, message


def test_a_lazy_command_binds_without_a_model_mismatch() -> None:
    final = hf_cli().final(["download", "gpt2", "config.json"])
    assert (final.accepted, final.by, final.mismatch) == (True, "framework", False)
    assert final.values == {"repo_id": "gpt2", "filenames": ["config.json"]}


def test_the_pinned_table_agrees_in_full() -> None:
    tally, found = run_table(hf_cli(), PINNED)
    assert found == [], found
    # `hf download` alone: hf's own parse_args prints the help when a required argument is
    # missing and nothing was given (application code): the framework's verdict stands, and
    # the model's disagreement is the one model-mismatch.
    assert tally[MISMATCHES] == 1, tally
    print(json.dumps({"cli": "hf-pinned", **tally}))


EXAMPLES = 600


def test_generated_hf_command_lines_agree_with_hf() -> None:
    cli = hf_cli()
    # SPEC 4: values of custom types and of parameters with callbacks are not checked; the
    # completion flags install or print completion for real when parsed; -v/--version and
    # --skills are plain flags whose callbacks print and exit, which only the framework's
    # parser knows (as fastapi's --version in tests/test_differential.py).
    excluded = unchecked_flags(app, "hf") | {
        "--install-completion",
        "--show-completion",
        "-v",
        "--version",
        "--skills",
    }
    checked = generated.App(
        "hf",
        "hf",
        cli.tree,
        # The check below compares with hf's own parse; these two are not used.
        lambda _argv: Parsed(False),
        lambda _binding, _parsed: [],
        excluded_flags=excluded,
    )

    def check(_app: generated.App, argv: Sequence[str], found: Counter[str]) -> str | None:
        return field_disagreement(cli, argv, found)

    tally = generated.run_differential(checked, examples=EXAMPLES, check=check)
    assert tally[FALSE_ACCEPTS] == 0, tally
    assert tally[ACCEPTED] >= EXAMPLES // 8, tally
    assert tally[REJECTED] >= EXAMPLES // 8, tally
    assert tally[COMPARED] >= tally[ACCEPTED] // 2, tally
    print(json.dumps({"cli": "hf", **tally}))
