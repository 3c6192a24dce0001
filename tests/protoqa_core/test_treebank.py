"""The project's Treebank tokenizer against NLTK's, which stays a test dependency."""

from __future__ import annotations

import functools
import importlib.metadata
import json
from pathlib import Path

import pytest

from protoqa_core.text import content_tokens
from protoqa_core.treebank import treebank_tokens
from tests.support.lazy import lazy_import

nltk_tokenize = lazy_import("nltk.tokenize")
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _nltk_tokens(text: str) -> list[str]:
    """NLTK's Treebank tokens of ``text`` (NLTK is imported by the first test that compares with it)."""
    return _nltk_tokenizer().tokenize(text)


@functools.cache
def _nltk_tokenizer():
    return nltk_tokenize.NLTKWordTokenizer()


# The rules are those of NLTK 3.10 (older releases split dashes and leading apostrophes
# differently), so NLTK is the oracle only from 3.10 on.
_ORACLE = tuple(int(p) for p in importlib.metadata.version("nltk").split(".")[:2]) >= (3, 10)
needs_oracle = pytest.mark.skipif(not _ORACLE, reason="NLTK older than 3.10 tokenizes by older rules")


def _strings(value, found: set[str]) -> None:
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            found.add(k)
            _strings(v, found)
    elif isinstance(value, list):
        for v in value:
            _strings(v, found)


def _data_strings() -> list[str]:
    found: set[str] = set()
    for folder in ("protoqa", "cfc", "probeval_validation"):
        for path in sorted((DATA / folder).glob("*.json*")):
            text = path.read_text(encoding="utf-8")
            records = (
                [json.loads(line) for line in text.splitlines() if line.strip()]
                if path.suffix == ".jsonl"
                else [json.loads(text)]
            )
            for record in records:
                _strings(record, found)
    return sorted(found)


@pytest.mark.slow
@needs_oracle
@pytest.mark.skipif(not DATA.is_dir(), reason="no shared data folder")
def test_every_data_string_tokenizes_as_nltk_does():
    strings = _data_strings()
    assert len(strings) > 10_000
    stopwords = __import__("protoqa_core.text").text.ENGLISH_STOPWORDS
    for text in strings:
        for variant in {text, text.lower()}:
            # NLTK is the slow side of the comparison (about two thirds of the time): tokenized once per string.
            expected = _nltk_tokens(variant)
            assert treebank_tokens(variant) == expected, variant
            assert content_tokens(variant) == tuple(t for t in expected if t not in stopwords), variant


_HOSTILE = st.text(
    alphabet=st.sampled_from(
        list("abcnotwsdmlrevtiAZ09 .,:;'\"`()[]{}<>-?!*@#$%&\t\n\x1c\x1f\xa0_")
        + list("«»“”‘’„\u2012\u2013\u2014\u2015é…\u0301²")
    ),
    max_size=40,
)
_WORDY = st.lists(
    st.sampled_from(
        [
            "cannot",
            "gonna",
            "wanna",
            "gimme",
            "lemme",
            "gotta",
            "d'ye",
            "more'n",
            "'tis",
            "'twas",
            "don't",
            "I'm",
            "they'll",
            "it's",
            "''",
            "``",
            "...",
            "--",
            "'",
            '"',
            "(",
            ").",
            "dog",
            "Cat.",
            "x",
            " ",
            "\t",
            ",",
        ]
    ),
    max_size=12,
)


@needs_oracle
@settings(max_examples=1500, deadline=None)
@given(_HOSTILE)
def test_generated_strings_tokenize_as_nltk_does(text):
    assert treebank_tokens(text) == _nltk_tokens(text)


@needs_oracle
@settings(max_examples=1500, deadline=None)
@given(_WORDY)
def test_contractions_and_quotes_tokenize_as_nltk_does(parts):
    text = "".join(parts)
    assert treebank_tokens(text) == _nltk_tokens(text)
    spaced = " ".join(parts)
    assert treebank_tokens(spaced) == _nltk_tokens(spaced)


@needs_oracle
@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30))
@example("0'\x1f")  # U+001F is whitespace to str.split and re, not to NLTK's regular expressions
@example("dog .\x1c")
@example("\u0f2d'\u0444")  # U+0F2D is a word character to re, not to NLTK's regular expressions
@example("e\u0301'x")  # a combining mark is a word character to NLTK's regular expressions
def test_any_unicode_tokenizes_as_nltk_does(text):
    assert treebank_tokens(text) == _nltk_tokens(text)


def test_known_splits():
    assert treebank_tokens("cannot") == ["can", "not"]
    assert treebank_tokens('"Brush teeth."') == ["``", "Brush", "teeth", ".", "''"]
    assert treebank_tokens("rock 'n' roll") == ["rock", "'n", "'", "roll"]
    assert treebank_tokens("") == []
