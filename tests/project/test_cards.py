"""The Hub cards are short and quote the manual: every figure on a card is the figure of the page it names.

A card names its sources as code spans (`docs/spec.md`, `studies/reports/clusters.md`, the project's
`README.md`). A table row on a card must equal, figure for figure, a row with the same label in the
source the text above the table names (a Markdown table row or a line of a printed table); a figure in
prose must be one of the figures of the sources the card names. A figure is a number with a
decimal point or a percent sign; code blocks and code spans hold settings and examples, and
web addresses hold identifiers: neither is a figure, and both are left out.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from protoqa_integrations.hub.folders import MODULES

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 160
CARDS = sorted(
    {REPO / spec["package"] / "README.md" for spec in MODULES.values()}
    | set(REPO.glob("*/evaluate_modules/*/README.md"))
)
FIGURE = re.compile(r"(?<![\w.])(?:\d[\d,]*\.\d+%?|\d+%)(?![\w.]*\d)")
SOURCE = re.compile(r"`((?:docs|studies/reports)/[\w./-]+\.(?:md|json)|README\.md)`")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
URL = re.compile(r"https?://\S+")


def _body(card: str) -> str:
    """The card without its YAML front matter and code blocks."""
    if card.startswith("---\n"):
        card = card.split("\n---\n", 1)[1]
    return FENCE.sub("", card)


def _figures(text: str) -> list[str]:
    return FIGURE.findall(URL.sub("", CODE_SPAN.sub("", text)))


def _label(cell: str) -> str:
    return re.sub(r"\s+", " ", cell.replace("**", "").replace("`", "")).strip()


def _rows(text: str) -> list[tuple[str, list[str]]]:
    """``(label, figures)`` of every table row of ``text``: Markdown tables and printed, space-aligned ones."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = line.strip().strip("|").split("|")
        else:
            cells = re.split(r"\s{2,}", line.strip())
        if len(cells) > 1 and not set(cells[0]) <= set("-: "):
            rows.append((_label(cells[0]), _figures(" ".join(cells[1:]))))
    return rows


def _source_text(name: str) -> str:
    path = REPO / name
    assert path.is_file(), f"a card names {name}, which does not exist"
    return path.read_text(encoding="utf-8")


def check_card(card: str) -> list[str]:
    """Every figure of ``card`` that differs from its source, as messages (empty: all agree)."""
    body = _body(card)
    sources = list(dict.fromkeys(SOURCE.findall(body)))
    named = {name: _source_text(name) for name in sources}
    known = {figure for text in named.values() for figure in FIGURE.findall(text)}
    problems = []
    source = None
    prose = []
    for block in re.split(r"\n\s*\n", body):
        lines = block.splitlines()
        table = [line for line in lines if line.startswith("|")]
        if not table:
            prose.append(block)
            found = SOURCE.findall(block)
            source = found[-1] if found else source
            continue
        prose.extend(line for line in lines if not line.startswith("|"))
        if table and _rows("\n".join(table)) and any(_figures(line) for line in table[2:]):
            assert source, f"a table with figures names no source above it: {table[0]}"
            wanted = _rows(named[source])
            for label, figures in _rows("\n".join(table[2:])):
                candidates = [f for lab, f in wanted if lab == label]
                if figures not in candidates:
                    problems.append(f"{label}: {figures} on the card, {candidates or 'no such row'} in {source}")
    for figure in _figures("\n".join(prose)):
        if figure not in known:
            problems.append(f"{figure} is in none of {', '.join(sources) or 'the sources (none named)'}")
    return problems


@pytest.mark.parametrize("card", CARDS, ids=lambda p: str(p.relative_to(REPO)))
def test_card_is_at_most_160_lines(card):
    assert len(card.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("card", CARDS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_figure_on_a_card_is_its_source_figure(card):
    text = card.read_text(encoding="utf-8")
    assert len(_figures(_body(text))) >= 10, "the check found (almost) no figures on the card"
    assert check_card(text) == []


@pytest.mark.parametrize("card", CARDS, ids=lambda p: str(p.relative_to(REPO)))
def test_a_changed_figure_is_caught(card):
    """The check fails for a card whose first table figure, or a prose figure, no longer matches."""
    text = card.read_text(encoding="utf-8")
    body = _body(text)
    row = next(line for line in body.splitlines() if line.startswith("|") and _figures(line.split("|", 2)[2]))
    figure = _figures(row.split("|", 2)[2])[0]
    changed_row = row.replace(figure, figure + "9", 1)
    assert check_card(text.replace(row, changed_row, 1))
    prose = text.replace("## Limitations and Bias\n", "## Limitations and Bias\n\nIt agrees 0.12345 of the time.\n")
    assert any("0.12345" in p for p in check_card(prose))


def test_cards_name_the_word_targets_once_for_references():
    for card in CARDS:
        assert "**references**: the targets" in card.read_text(encoding="utf-8"), card
