"""``wordnet``: hand cases of docs/spec.md, the fast search against brute-force enumeration of
partitions, and the cluster maximum and the level decision against the plain maximum."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from protoqa_core.similarity import ABOVE_HALF, SIMILARITIES
from protoqa_core.similarity.wordnet import WORDNET, best_wordnet_similarity, wordnet_reaches, wordnet_similarity
from tests.support.spec_reference import reference_wordnet_similarity
from tests.support.words import FAST_PATH_WORDS, wordnet_phrases


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


def test_dense_long_strings_stay_exact_and_finish():
    words = "dog cat dog hot dog cat ice cream dog cat".split()
    a = " ".join(words * 3)
    b = " ".join(reversed(words * 3))
    value = wordnet_similarity(a, b)
    assert 0.0 < value <= 1.0
    assert wordnet_similarity(a, a) == 1.0


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wordnet_phrases(6), wordnet_phrases(6))
def test_wordnet_similarity_equals_brute_force(a, b):
    assert wordnet_similarity(a, b) == pytest.approx(reference_wordnet_similarity(a, b), abs=1e-12)


# --- groups are matched, not aligned; words WordNet does not know -------------------------------


def test_groups_match_in_any_order_and_unknown_words_match_themselves():
    assert wordnet_similarity("keys car", "car keys") == 1.0
    assert wordnet_similarity("qwertyuiop", "qwertyuiop") == 1.0
    assert wordnet_similarity("qwertyuiop dog", "dog zxcvbnm") == 0.5
    assert wordnet_similarity("Dog", "dog") == 1.0  # WordNet's lemmas ignore case; the metric lowercases first


# --- the cluster maximum and the level decision --------------------------------------------------


def _random_cluster(rng: random.Random) -> tuple[str, list[str]]:
    words = FAST_PATH_WORDS + ["the", "a", "qqxqq"]
    prediction = " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 2, 3])))
    answers = [" ".join(rng.choice(words) for _ in range(rng.choice([1, 2, 3]))) for _ in range(rng.randint(1, 6))]
    return prediction, answers


def test_the_cluster_maximum_equals_the_plain_maximum():
    # Clusters that share no token and no synset with the prediction are settled by one set
    # intersection; the value must still be the plain maximum, with either stopword switch.
    rng = random.Random(31)
    for _ in range(300):
        prediction, answers = _random_cluster(rng)
        for switch in (True, False):
            plain = max(wordnet_similarity(prediction, y, all_stopword_match=switch) for y in answers)
            best = best_wordnet_similarity(prediction, answers, all_stopword_match=switch)
            assert best == plain, (prediction, answers, switch)


def test_the_cluster_maximum_on_edges():
    assert best_wordnet_similarity("dog", []) == 0.0
    assert best_wordnet_similarity("zebra", ["piano", "car keys"]) == 0.0
    # A prediction of stopwords only shares nothing, yet matches an all-stopword answer.
    assert best_wordnet_similarity("the", ["dog", "a"]) == 1.0
    assert best_wordnet_similarity("the", ["dog", "a"], all_stopword_match=False) == 0.0


def test_reaching_a_level_is_the_maximum_compared_with_it():
    rng = random.Random(32)
    for _ in range(200):
        prediction, answers = _random_cluster(rng)
        plain = max(wordnet_similarity(prediction, y) for y in answers)
        for level in (0.0, 0.25, 0.5, ABOVE_HALF, 2 / 3, 1.0):
            assert wordnet_reaches(prediction, answers, level) == (plain >= level), (prediction, answers, level)
    assert wordnet_reaches("zebra", ["piano"], 0.0) and not wordnet_reaches("zebra", ["piano"], ABOVE_HALF)


def test_the_registered_wordnet_declares_what_the_metric_may_do():
    assert SIMILARITIES["wordnet"] is WORDNET and WORDNET.function is wordnet_similarity
    assert WORDNET.rounded and WORDNET.uses_wordnet
    assert WORDNET.best_of is best_wordnet_similarity and WORDNET.reaches_of is wordnet_reaches
    # 0.5 exactly is rounded half-to-even to 0 by the metric, so "red car" does not reach the level.
    assert WORDNET.best("red car", ["car", "bus"]) == 0.5
    assert not WORDNET.reaches("red car", ["car", "bus"], ABOVE_HALF)
