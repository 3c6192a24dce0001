"""``wordnet_wup``: the fast paths (one-token closed form, whole clusters of one-token answers, the
level decision) against brute-force enumeration and the straightforward search."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protoqa_core.similarity import (
    ABOVE_HALF,
    MAX_SIMILARITY_TOKENS,
    SIMILARITIES,
    collect_approximations,
    get_similarity,
)
from protoqa_core.similarity import partition_alignment as pm
from protoqa_core.similarity.wordnet_wup import WORDNET_WUP, best_wup_similarity, wup_reaches, wup_similarity
from protoqa_core.wordnet.wu_palmer import wup_from_keys
from tests.support.spec_reference import reference_wup_similarity
from tests.support.words import FAST_PATH_WORDS, WUP_WORDS, wordnet_phrases


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wordnet_phrases(4), wordnet_phrases(4))
def test_wup_similarity_equals_brute_force(a, b):
    assert wup_similarity(a, b) == pytest.approx(reference_wup_similarity(a, b), abs=1e-9)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(WUP_WORDS), max_size=4).map(" ".join),
    st.lists(st.sampled_from(WUP_WORDS), max_size=4).map(" ".join),
)
def test_wup_similarity_equals_brute_force_with_multi_path_synsets(a, b):
    assert wup_similarity(a, b) == pytest.approx(reference_wup_similarity(a, b), abs=1e-12)


def _wup_by_search(a: str, b: str) -> float:
    """Wu-Palmer partition similarity the straightforward way: every group pair weighted by
    the pair-by-pair maximum of NLTK's Wu-Palmer (equal tokens 1), then the partition search."""
    from protoqa_core.similarity.spans import spans_with_synsets
    from protoqa_core.text import content_tokens

    x, y = content_tokens(a), content_tokens(b)
    if not x or not y:
        return 1.0 if not x and not y else 0.0
    if x == y:
        return 1.0
    weights = {}
    for sa, ea, na in spans_with_synsets(x):
        for sb, eb, nb in spans_with_synsets(y):
            w = max(wup_from_keys(k1, k2) for k1 in na for k2 in nb)
            if w > 0:
                weights[(sa, ea, sb, eb)] = w
    for i, tok in enumerate(x):
        for j, other in enumerate(y):
            if tok == other:
                weights[(i, i + 1, j, j + 1)] = 1.0
    if not weights:
        return 0.0
    value, proven = pm.best_partition_alignment_checked(
        len(x), len(y), [pm.SpanPair(*k, w) for k, w in sorted(weights.items())]
    )
    assert proven
    return value


def test_wup_fast_paths_equal_the_search_on_random_word_lists():
    # One side a single token (the closed form), both sides one token, and longer
    # lists on both sides, all bit for bit against the plain evaluation.
    rng = random.Random(11)
    from protoqa_core.similarity import wordnet_wup as sim_module

    for trial in range(400):
        sizes = rng.choice([(1, 1), (1, 2), (2, 1), (1, 5), (6, 1), (2, 3), (3, 2)])
        a = " ".join(rng.choice(FAST_PATH_WORDS) for _ in range(sizes[0]))
        b = " ".join(rng.choice(FAST_PATH_WORDS) for _ in range(sizes[1]))
        if trial % 2:
            sim_module._wup_tokens_similarity.cache_clear()
            sim_module._phrase_wup.cache_clear()
        assert wup_similarity(a, b) == _wup_by_search(a, b), (a, b)


def test_wup_closed_form_covers_equal_tokens_and_collocations():
    for a, b in [
        ("dog", "hot dog"),
        ("hot dog", "dog"),
        ("gum", "chewing gum"),
        ("qwertyuiop", "qwertyuiop car"),
        ("car", "qwertyuiop car qwertyuiop"),
        ("ice cream", "cream"),
        ("dog", "cat dog cat dog cat"),
    ]:
        assert wup_similarity(a, b) == _wup_by_search(a, b), (a, b)
    assert wup_similarity("qwertyuiop", "qwertyuiop car") == 0.5
    assert wup_similarity("car", "qwertyuiop car qwertyuiop") == 1.0 / 3


def test_wup_cluster_maximum_equals_the_plain_maximum():
    # The one-token answers of a cluster scored at once, against the plain maximum over
    # answers, bit for bit; approximated answers are reported the same way.
    from protoqa_core.similarity import best_wup_similarity

    rng = random.Random(13)
    words = FAST_PATH_WORDS + ["the", "a"]
    for _ in range(300):
        prediction = " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 2, 3])))
        answers = [
            " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 1, 2, 3]))) for _ in range(rng.randint(1, 6))
        ]
        plain = max(wup_similarity(prediction, y) for y in answers)
        assert best_wup_similarity(prediction, answers) == plain, (prediction, answers)
    long_answer = " ".join(["zebra", "piano"] * 40)  # over the token limit: reported when scored
    for answers, reported in (
        (["cat", "car", long_answer], True),
        (["dog", "cat", long_answer], False),
        ([long_answer, "cat", "hound"], True),
    ):
        with collect_approximations() as cut:
            value = get_similarity("wordnet_wup").best("dog", answers)
        with collect_approximations():
            assert value == max(wup_similarity("dog", y) for y in answers)
        # as the plain loop: scored (and reported) unless an earlier answer reached 1
        assert cut == ([("dog", long_answer)] if reported else [])


# --- what the metric asks of the similarity -------------------------------------------------------


def test_stopword_strings_and_equal_strings():
    assert wup_similarity("the", "a") == 1.0 and wup_similarity("the", "a", all_stopword_match=False) == 0.0
    assert wup_similarity("the", "dog") == 0.0
    assert wup_similarity("qwertyuiop car", "qwertyuiop car") == 1.0
    assert best_wup_similarity("dog", []) == 0.0


def _random_cluster(rng: random.Random) -> tuple[str, list[str]]:
    words = FAST_PATH_WORDS + ["the", "a", "of"]
    prediction = " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 2, 3])))
    answers = [
        " ".join(rng.choice(words) for _ in range(rng.choice([0, 1, 1, 2, 3, 4]))) for _ in range(rng.randint(1, 6))
    ]
    return prediction, answers


def test_reaching_a_level_is_the_maximum_compared_with_it():
    # Above 1/2 a one-token side reaches the level only as a whole group: the shortcut the
    # metric's decision per cell takes. Empty and stopword-only answers go the plain way.
    rng = random.Random(41)
    for _ in range(250):
        prediction, answers = _random_cluster(rng)
        plain = max(wup_similarity(prediction, y) for y in answers)
        for level in (0.25, 0.5, ABOVE_HALF, 0.8, 0.95, 1.0):
            assert wup_reaches(prediction, answers, level) == (plain >= level), (prediction, answers, level)


def test_reaching_a_level_past_the_token_limit_is_still_the_maximum():
    long_answer = " ".join(["zebra", "piano"] * MAX_SIMILARITY_TOKENS)  # scored on its first tokens
    long_prediction = " ".join(["dog", "cat"] * 25)  # over 40 tokens: no closed form
    with collect_approximations():
        for prediction, answers in (("dog", [long_answer, "hound"]), (long_prediction, ["cat", "car"])):
            plain = max(wup_similarity(prediction, y) for y in answers)
            assert wup_reaches(prediction, answers, ABOVE_HALF) == (plain >= ABOVE_HALF)
            assert best_wup_similarity(prediction, answers) == plain


def test_the_registered_wordnet_wup_declares_what_the_metric_may_do():
    assert SIMILARITIES["wordnet_wup"] is WORDNET_WUP and WORDNET_WUP.function is wup_similarity
    assert WORDNET_WUP.rounded and WORDNET_WUP.uses_wordnet
    assert WORDNET_WUP.best_of is best_wup_similarity and WORDNET_WUP.reaches_of is wup_reaches
    assert WORDNET_WUP.reaches("dog", ["red car", "cat"], ABOVE_HALF)
