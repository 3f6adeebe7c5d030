"""The real-parser check translates as the framework does, message by message.

Click and argparse translate their messages through :mod:`gettext`, which the check leaves as
it is: this test gives the framework a real message catalog and changes the language in the
middle of a batch, and each message is the one Click itself gives in the language of the moment.
"""

from __future__ import annotations

import gettext
import os
import struct
from pathlib import Path
from typing import Any

import click
import pytest

from exampleguard._adapters.judge_click import ClickJudge

# Click's message for an unknown option, as 8.1-8.4 and as 8.5 and later spell it.
_GERMAN = {
    "No such option: {name}": "Keine solche Option: {name}",
    "No such option {name!r}.": "Keine solche Option {name!r}.",
}


def _message_catalog(translations: dict[str, str]) -> bytes:
    """A GNU message catalog (``.mo``) holding ``translations``, ASCII texts."""
    keys = sorted(translations)
    originals = translated = b""
    entries = []
    for key in keys:
        original, text = key.encode("ascii"), translations[key].encode("ascii")
        entries.append((len(originals), len(original), len(translated), len(text)))
        originals += original + b"\0"
        translated += text + b"\0"
    count = len(keys)
    originals_at = 7 * 4 + 16 * count
    translated_at = originals_at + len(originals)
    table = []
    for original_offset, original_length, _, _ in entries:
        table += [original_length, originals_at + original_offset]
    for _, _, text_offset, text_length in entries:
        table += [text_length, translated_at + text_offset]
    header = struct.pack("<7I", 0x950412DE, 0, count, 7 * 4, 7 * 4 + count * 8, 0, 0)
    return header + struct.pack(f"<{len(table)}I", *table) + originals + translated


@pytest.fixture
def german(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Click's messages in German once ``LANGUAGE`` is ``de`` (unset at the start)."""
    folder = tmp_path / "locale" / "de" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.mo").write_bytes(_message_catalog(_GERMAN))
    monkeypatch.setitem(gettext._localedirs, "messages", str(tmp_path / "locale"))  # type: ignore[attr-defined]
    # Empty, so that gettext passes over it; the test sets it, and it is put back after.
    monkeypatch.setenv("LANGUAGE", "")


def _to_german(_context: Any, _param: Any, value: bool) -> None:
    if value:
        os.environ["LANGUAGE"] = "de"


@click.command()
@click.option("--name")
@click.option("--german", is_flag=True, callback=_to_german)
def _command(**_: Any) -> None:
    """A command whose switch turns its language to German."""


def test_a_batch_translates_as_the_language_is_when_each_message_is_made(german: None) -> None:
    lines = [["--bogus"], ["--german", "--name", "x"], ["--bogus"]]
    verdicts = ClickJudge(_command, "prog").judge_all(lines)
    assert [v.accepted for v in verdicts] == [False, True, False]
    assert verdicts[0].message in ("No such option: --bogus", "No such option '--bogus'.")
    assert verdicts[2].message in ("Keine solche Option: --bogus", "Keine solche Option '--bogus'.")
    # As Click itself says it in that language.
    with pytest.raises(click.NoSuchOption) as raised:
        _command.make_context("prog", ["--bogus"])
    assert raised.value.format_message() == verdicts[2].message
