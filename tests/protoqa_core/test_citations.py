"""The BibTeX entries of the two papers: well formed, and the very text every card shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from protoqa_core.citations import PROBEVAL_CITATION, PROTOQA_CITATION

REPO = Path(__file__).resolve().parents[2]
CARDS = ("protoqa_metric/README.md", "cfc_probeval/README.md", "protoqa_dataset/README.md")
_ENTRY = re.compile(r'@inproceedings\{([\w-]+),\n((?:    \w+ = "[^"\n]*",\n)+)\}\n')


def _fields(entry: str) -> tuple[str, dict[str, str]]:
    match = _ENTRY.fullmatch(entry)
    assert match, entry
    fields = dict(re.findall(r'    (\w+) = "([^"\n]*)",\n', match.group(2)))
    return match.group(1), fields


@pytest.mark.parametrize(
    "entry, key", [(PROTOQA_CITATION, "boratko-etal-2020-protoqa"), (PROBEVAL_CITATION, "cheng-etal-2024-every")]
)
def test_each_entry_is_one_well_formed_inproceedings(entry, key):
    found, fields = _fields(entry)
    assert found == key
    assert {"title", "author", "booktitle", "year", "publisher"} <= set(fields)
    for value in fields.values():
        assert value.count("{") == value.count("}") and value == value.strip()
    assert fields["year"] in key and fields["author"].split(",")[0].lower() in key


def test_the_identifiers_agree():
    _, protoqa = _fields(PROTOQA_CITATION)
    assert protoqa["url"].rsplit("/", 1)[1] == protoqa["doi"].rsplit("/", 1)[1] == "2020.emnlp-main.85"
    _, probeval = _fields(PROBEVAL_CITATION)
    assert probeval["archivePrefix"] == "arXiv" and re.fullmatch(r"\d{4}\.\d{5}", probeval["eprint"])


@pytest.mark.parametrize("card", CARDS)
def test_every_card_shows_the_entries_as_written_here(card):
    text = (REPO / card).read_text(encoding="utf-8")
    shown = [m.group(0) for m in re.finditer(r"@inproceedings\{.*?\n\}\n", text, re.S)]
    assert shown and all(entry in (PROTOQA_CITATION, PROBEVAL_CITATION) for entry in shown), card
