"""Similarity functions: hand cases, and the fast WordNet search against brute force."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protoqa_core.similarity import exact_match, lcs_ratio, wordnet_similarity, wup_similarity
from protoqa_core.similarity.partition_alignment import SpanPair, best_partition_alignment
from protoqa_core.text import ENGLISH_STOPWORDS, content_tokens, normalize_prediction
from protoqa_core.wordnet.nltk_reader import get_wordnet, nltk_lemma_offsets
from tests.support.spec_reference import (
    contiguous_partitions,
    reference_wordnet_similarity,
    reference_wup_similarity,
)


def test_stopword_list_is_nltk_179():
    assert len(ENGLISH_STOPWORDS) == 179
    assert {"the", "a", "me", "him", "don't", "wouldn't"} <= ENGLISH_STOPWORDS


def test_normalize_prediction_lowercases_cuts_and_strips():
    assert normalize_prediction("  Brush TEETH  ") == "brush teeth"
    long = "x" * 49 + " tail"
    assert normalize_prediction(long) == "x" * 49


def test_tokenizer_is_treebank_without_sentence_split():
    assert content_tokens("dad's name. mom's name") == ("dad", "'s", "name.", "mom", "'s", "name")


def test_exact_match_is_case_sensitive():
    assert exact_match("age", "age") == 1.0
    assert exact_match("age", "Age") == 0.0


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("chewing gum", "gum", 1.0),  # one group shares a synset with "gum"
        ("dogs", "dog", 1.0),  # morphological reduction
        ("red car", "car", 0.5),
        ("hot dog bun", "hot dog", 2 / 3),
        ("brush teeth", "brushing their teeth", 1.0),
        ("the", "a", 1.0),  # two all-stopword strings
        ("me", "him", 1.0),
        ("the", "dog", 0.0),  # all-stopword against content
        ("", "the", 1.0),
        ("zebra", "piano", 0.0),
    ],
)
def test_wordnet_hand_cases(a, b, expected):
    assert wordnet_similarity(a, b) == pytest.approx(expected, abs=1e-12)
    assert reference_wordnet_similarity(a, b) == pytest.approx(expected, abs=1e-12)


def test_all_stopword_switch_scores_zero():
    assert wordnet_similarity("the", "a", all_stopword_match=False) == 0.0
    assert reference_wordnet_similarity("the", "a", all_stopword_match=False) == 0.0
    assert wordnet_similarity("dog", "dogs", all_stopword_match=False) == 1.0


def test_wordnet_is_symmetric_on_examples():
    for a, b in [("hot dog bun", "hot dog"), ("ice cream cone", "cream"), ("car keys", "keys car wallet")]:
        assert wordnet_similarity(a, b) == wordnet_similarity(b, a)


def test_lcs_ratio_is_exact_lcs():
    assert lcs_ratio("color", "colour") == pytest.approx(5 / 6)
    assert lcs_ratio("", "") == 1.0
    assert lcs_ratio("abc", "") == 0.0
    # difflib's matching blocks find 2 here; the longest common subsequence is 3.
    assert lcs_ratio("abcxyz", "xyzabc") == 0.5
    assert lcs_ratio("axbxc", "abc") == pytest.approx(3 / 5)


def test_contiguous_partitions_counts():
    assert list(contiguous_partitions([])) == [[""]]
    assert len(list(contiguous_partitions(list("abcde")))) == 2**4


def test_partition_alignment_value_examples():
    # a = [x y z], b = [x z]: x~x, z~z; y is one gap in a -> 2 / (2 + 1)
    pairs = [SpanPair(0, 1, 0, 1, 1.0), SpanPair(2, 3, 1, 2, 1.0)]
    assert best_partition_alignment(3, 2, pairs) == pytest.approx(2 / 3)
    assert best_partition_alignment(3, 2, []) == 0.0
    with pytest.raises(ValueError):
        best_partition_alignment(0, 2, pairs)


def test_partition_alignment_integer_program_agrees_with_search(monkeypatch):
    """Force the integer-programming fallback and compare with the plain search."""
    from protoqa_core.similarity import partition_alignment as pm

    rng = random.Random(7)
    for _ in range(25):
        n_a, n_b = rng.randint(1, 7), rng.randint(1, 7)
        pairs = []
        for _ in range(rng.randint(0, 12)):
            s = rng.randrange(n_a)
            e = min(n_a, s + rng.choice([1, 1, 2]))
            t = rng.randrange(n_b)
            f = min(n_b, t + rng.choice([1, 1, 2]))
            pairs.append(SpanPair(s, e, t, f, rng.choice([1.0, 1.0, 0.5, 0.8])))
        expected = pm.best_partition_alignment(n_a, n_b, pairs)
        monkeypatch.setattr(pm, "SEARCH_STEP_BUDGET", 0)
        assert pm.best_partition_alignment(n_a, n_b, pairs) == pytest.approx(expected, abs=1e-9)
        monkeypatch.setattr(pm, "SEARCH_STEP_BUDGET", 20_000)


def test_dense_long_strings_stay_exact_and_finish():
    words = "dog cat dog hot dog cat ice cream dog cat".split()
    a = " ".join(words * 3)
    b = " ".join(reversed(words * 3))
    value = wordnet_similarity(a, b)
    assert 0.0 < value <= 1.0
    assert wordnet_similarity(a, a) == 1.0


# --- property test: the fast search equals brute-force partition enumeration ---------

_WORDNET_WORDS = [
    "dog",
    "dogs",
    "cat",
    "hot",
    "car",
    "cars",
    "gum",
    "chewing",
    "run",
    "running",
    "shower",
    "take",
    "brush",
    "teeth",
    "tooth",
    "age",
    "name",
    "play",
    "house",
    "work",
    "go",
    "home",
    "ice",
    "cream",
    "bun",
    "keys",
    "wallet",
    "phone",
    "coffee",
    "break",
    "fast",
    "breakfast",
    "new",
    "york",
    "hot",
    "water",
    "sun",
    "glasses",
    "sunglasses",
    "high",
    "school",
]
_STOPWORDS = sorted(ENGLISH_STOPWORDS)


def _collocation_words() -> list[str]:
    wn = get_wordnet()
    names = sorted(n for n in nltk_lemma_offsets(wn) if n.count("_") == 1 and n.replace("_", "").isalpha())
    rng = random.Random(3)
    return [w for n in rng.sample(names, 60) for w in n.split("_")]


_token = st.one_of(
    st.sampled_from(_WORDNET_WORDS),
    st.sampled_from(_STOPWORDS),
    st.deferred(lambda: st.sampled_from(_collocation_words())),
)
_phrase = st.lists(_token, min_size=0, max_size=6).map(" ".join)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_phrase, _phrase)
def test_wordnet_similarity_equals_brute_force(a, b):
    assert wordnet_similarity(a, b) == pytest.approx(reference_wordnet_similarity(a, b), abs=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_token, max_size=4).map(" ".join), st.lists(_token, max_size=4).map(" ".join))
def test_wup_similarity_equals_brute_force(a, b):
    assert wup_similarity(a, b) == pytest.approx(reference_wup_similarity(a, b), abs=1e-9)


# --- the tokenizer's fast path for plain words equals NLTK's Treebank tokenizer -------


def _nltk_tokens(text: str) -> tuple[str, ...]:
    from nltk.tokenize import NLTKWordTokenizer

    return tuple(t for t in NLTKWordTokenizer().tokenize(text) if t not in ENGLISH_STOPWORDS)


def test_fast_tokenizer_path_on_every_answer_in_the_data(shared_data):
    import json

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
