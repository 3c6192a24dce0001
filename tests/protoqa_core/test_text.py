"""Unicode spellings of one answer normalize alike: NFKC, zero-width characters removed; the
stopword list and the tokenizer, whose fast path for plain words equals NLTK's Treebank tokenizer.

The spellings a user may paste: combining accents, full-width letters, a zero-width joiner, a
ligature. That they score alike through the command line is checked in tests/protoqa_metric/test_cli.py.
"""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from protoqa_core.text import ENGLISH_STOPWORDS, content_tokens, normalize_prediction, normalize_unicode

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")
FULL_WIDTH = "ｃａｆé"
JOINED = "ca\u200dfé"


def test_normalization_function():
    assert normalize_unicode(NFD) == normalize_unicode(NFC) == normalize_unicode(JOINED) == NFC
    assert normalize_prediction(" ＣＡＦÉ ") == NFC
    assert normalize_unicode("ﬁsh") == "fish"  # a ligature
    assert normalize_unicode("plain ascii") == "plain ascii"


def test_stopword_list_is_nltk_179():
    assert len(ENGLISH_STOPWORDS) == 179
    assert {"the", "a", "me", "him", "don't", "wouldn't"} <= ENGLISH_STOPWORDS


def test_normalize_prediction_lowercases_cuts_and_strips():
    assert normalize_prediction("  Brush TEETH  ") == "brush teeth"
    long = "x" * 49 + " tail"
    assert normalize_prediction(long) == "x" * 49


def test_tokenizer_is_treebank_without_sentence_split():
    assert content_tokens("dad's name. mom's name") == ("dad", "'s", "name.", "mom", "'s", "name")


# --- the tokenizer's fast path for plain words equals NLTK's Treebank tokenizer -------


def _nltk_tokens(text: str) -> tuple[str, ...]:
    from nltk.tokenize import NLTKWordTokenizer

    return tuple(t for t in NLTKWordTokenizer().tokenize(text) if t not in ENGLISH_STOPWORDS)


def test_fast_tokenizer_path_on_every_answer_in_the_data(shared_data):
    strings = set()
    for name in ["protoqa/dev.crowdsourced.jsonl", "cfc/dev.targets.jsonl", "cfc/test.targets.jsonl"]:
        for line in (shared_data / name).read_text().splitlines():
            obj = json.loads(line)
            strings.update(obj["answers"]["raw"])
            for cluster in obj["answers"]["clusters"].values():
                strings.update(cluster["answers"])
    preds = json.loads((shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json").read_text())
    strings.update(normalize_prediction(a) for answers in preds.values() for a in answers)
    assert len(strings) > 3000
    for s in sorted(strings):
        assert content_tokens(s) == _nltk_tokens(s), s


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "cannot",
                "Cannot",
                "gonna",
                "wanna",
                "gimme",
                "lemme",
                "gotta",
                "can",
                "not",
                "dog",
                "the",
                "A",
                "x",
                "whatcha",
                "tis",
                "twas",
                "more",
                "d",
                "ye",
            ]
        ),
        min_size=1,
        max_size=5,
    ).map(" ".join)
)
def test_fast_tokenizer_path_with_contractions(text):
    content_tokens.cache_clear()
    assert content_tokens(text) == _nltk_tokens(text)
