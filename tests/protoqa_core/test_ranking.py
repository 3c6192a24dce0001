"""The one frequency ranker (protoqa_core.ranking). That every surface ranks with it is checked in
tests/project/test_shared_conventions.py."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protoqa_core.ranking import answer_frequencies, rank_by_frequency
from protoqa_core.text import normalize_prediction

NIGHT = ["Night", "Night", "night", "night", "evening", "evening", "evening"]


def test_answers_that_normalize_alike_are_one_answer():
    assert rank_by_frequency(NIGHT) == ["night", "evening"]
    assert rank_by_frequency({"Night": 2, "night": 2, "evening": 3}) == ["night", "evening"]
    assert answer_frequencies({"evening": 3, "Night": 2, " night ": 2}) == {"evening": 3, "night": 4}


def test_ties_go_to_the_first_appearance_and_empty_answers_are_not_ranked():
    samples = ["cat", "dog", "", "dog", "bird", "cat", "dog", "fish", "   "]
    assert rank_by_frequency(samples) == ["dog", "cat", "bird", "fish"]
    assert rank_by_frequency({"b": 1, "a": 1}) == ["b", "a"]
    assert answer_frequencies(samples)[""] == 2
    assert rank_by_frequency(samples, max_answers=2) == ["dog", "cat"]
    assert rank_by_frequency(samples, max_answers=0) == [] == rank_by_frequency([])
    assert rank_by_frequency({"never": 0, "once": 1}) == ["once"]


@pytest.mark.parametrize(
    "answers, max_answers, error",
    [
        (["a"], -1, ValueError),
        (["a"], 1.5, ValueError),
        (["a"], True, ValueError),
        (["a", None], None, TypeError),
        ("dog", None, TypeError),
        ({"a": -1}, None, ValueError),
        ({"a": 1.5}, None, ValueError),
        ({"a": True}, None, ValueError),
        ({3: 1}, None, TypeError),
    ],
)
def test_bad_input_is_refused(answers, max_answers, error):
    with pytest.raises(error):
        rank_by_frequency(answers, max_answers)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["", " ", "a", "A", "b", "c ", "C", "d" * 60, "d" * 50 + "x"]), max_size=30))
def test_sequence_and_counts_rank_alike_by_the_definition(samples):
    ranked = rank_by_frequency(samples)
    normalized = [normalize_prediction(s) for s in samples]
    counts = Counter(n for n in normalized if n)
    assert sorted(ranked) == sorted(counts)
    for earlier, later in pairwise(ranked):
        assert counts[earlier] > counts[later] or (
            counts[earlier] == counts[later] and normalized.index(earlier) < normalized.index(later)
        )
    assert rank_by_frequency(dict(Counter(samples))) == ranked
