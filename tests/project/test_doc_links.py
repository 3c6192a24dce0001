"""Every relative link of the front page and the documentation pages names a file that exists,
and a link to a heading of a Markdown page names a heading that page has.

The pages are read as GitHub and MkDocs read them: links inside code blocks and code spans are
not links. Headings become anchors as Python-Markdown's ``toc`` extension (and GitHub, for the
headings these pages use) spells them.
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", REPO / "benchmarks" / "README.md", *(REPO / "docs").rglob("*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+).*?\1")


def prose_lines(text: str, spans: bool = False) -> list[tuple[int, str]]:
    """(line number, line) for every line outside fenced code blocks, its code spans removed
    unless ``spans``."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line if spans else CODE_SPAN.sub("", line)))
    return lines


def anchor(heading: str) -> str:
    """The anchor of a heading, as Python-Markdown's ``toc`` slugify makes it."""
    text = re.sub(r"[`*]", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    """The anchors of every heading of a Markdown page, included files' headings too."""
    lines = prose_lines(page.read_text(encoding="utf-8"), spans=True)
    found = {anchor(line.lstrip("#").strip()) for _, line in lines if re.match(r"#{1,6} ", line)}
    for _, line in lines:  # a page that includes a file (--8<-- "FILE:FROM:") has its headings too
        included = re.match(r'--8<-- "([^":]+)', line.strip())
        if included:
            found |= anchors(REPO / included.group(1))
    return found


def relative_links(page: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link of a page that is not a URL."""
    found = []
    for number, line in prose_lines(page.read_text(encoding="utf-8")):
        for match in LINK.finditer(line):
            target = match.group(1)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ...
                found.append((number, target))
    return found


def test_the_pages_are_there():
    names = {p.relative_to(REPO).as_posix() for p in PAGES}
    assert {"README.md", "docs/index.md", "docs/spec.md", "benchmarks/README.md"} <= names


def test_every_relative_link_names_an_existing_file():
    broken = []
    for page, number, target in ((p, *link) for p in PAGES for link in relative_links(p)):
        path, _, fragment = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{page.relative_to(REPO)}:{number}: {target} (no such file)")
        elif fragment and where.suffix == ".md" and fragment not in anchors(where):
            broken.append(f"{page.relative_to(REPO)}:{number}: {target} (no heading #{fragment})")
        elif where.exists() and REPO not in where.parents and where != REPO:
            broken.append(f"{page.relative_to(REPO)}:{number}: {target} (outside the checkout)")
    assert not broken, "\n".join(broken)


def test_links_are_found_outside_code_only():
    text = "[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n[d](https://example.org) [e](#top)\n"
    assert [t for _, line in prose_lines(text) for t in LINK.findall(line)] == ["x.md", "https://example.org", "#top"]
    assert anchor("1. `protoqa-eval generate`, then `protoqa-eval score-generated`") == (
        "1-protoqa-eval-generate-then-protoqa-eval-score-generated"
    )
    assert anchor("With Hugging Face `evaluate`") == "with-hugging-face-evaluate"
    assert anchor("At scale (`bench_probeval_scale.py`)") == "at-scale-bench_probeval_scalepy"


def test_docstring_examples_become_code_blocks_on_the_site():
    spec = importlib.util.spec_from_file_location("griffe_doctests", REPO / "scripts" / "griffe_doctests.py")
    if importlib.util.find_spec("griffe") is None:
        pytest.skip("griffe (the docs extra) is not installed")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "Rows, see :func:`~pkg.mod.rows`.\n\n>>> rows()[0][\"id\"]\n'q1'\n\nMore."
    assert module.markdown_docstring(text).split("\n") == [
        "Rows, see `rows`.",
        "",
        "```pycon",
        '>>> rows()[0]["id"]',
        "'q1'",
        "```",
        "",
        "More.",
    ]
