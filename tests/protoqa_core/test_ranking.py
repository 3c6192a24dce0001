"""The one frequency ranker (protoqa_core.ranking), and every surface that ranks samples using it."""

from __future__ import annotations

import warnings
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


def test_every_surface_ranks_the_night_example_the_same():
    """Training hooks, generate, the lm-eval tasks, the leaderboard and the study all use the core ranker."""
    from protoqa_core.io.records import Cluster, Question
    from protoqa_integrations.generation.answers_file import answers_document
    from protoqa_integrations.harnesses.lm_eval_tasks.harness import process_test_results
    from protoqa_integrations.training.samples import score_sampled_answers

    question = Question("q", "when do you sleep", (Cluster("q.0", ("night",), 6), Cluster("q.1", ("evening",), 4)))
    assert process_test_results({"id": "q"}, [NIGHT]) == {"answered": ("q", ["night", "evening"])}
    assert answers_document([question], {"q": NIGHT}, {}, {})["model_answers_with_count"] == {
        "q": [["night", 4], ["evening", 3]]
    }
    # Ranked "night" first, Max Answers@1 claims the 6 of the bigger cluster.
    assert score_sampled_answers([question], [NIGHT], similarity="exact_match", metrics=["max_answers@1"]) == {
        "protoqa_exact_match_max_answers_at_1": 1.0
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from studies.validation.leaderboard import rank_by_frequency as leaderboard_ranker
        from studies.validation.study import baseline_score
    assert leaderboard_ranker is rank_by_frequency
    rows = {"night": [1.0, 0.0], "evening": [0.0, 1.0]}
    assert (
        baseline_score({"Night": 2, "night": 2, "evening": 3}, question.clusters, rows.__getitem__, max_answers=1)
        == 0.0
    )
    # A drawn answer set's order says which gold cluster each answer came from: the study's
    # baseline breaks ties alphabetically instead, whatever the order of the set.
    for answers in ({"night": 2, "evening": 2}, {"evening": 2, "night": 2}):
        assert baseline_score(answers, question.clusters, rows.__getitem__, max_answers=1) == pytest.approx(1 / 3)
