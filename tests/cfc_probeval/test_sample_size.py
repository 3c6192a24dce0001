"""The number of samples a ProbEval score is made at: counted from the samples, set by the caller, or refused."""

from __future__ import annotations

import warnings

import pytest

from cfc_probeval.errors import ProbEvalWarning, ScoreMeaningWarning
from cfc_probeval.sample_size import scored_sample_count, shortfall, warn_short


def test_the_count_is_the_most_any_question_has_unless_set():
    assert scored_sample_count({"q1": 100, "q2": 95, "q3": 0}, None) == 100
    assert scored_sample_count({"q1": 100, "q2": 95}, 300) == 300


@pytest.mark.parametrize(
    ("totals", "num_samples", "message"),
    [
        ({}, None, "answer no question"),
        ({"q1": 0}, None, "no question has a sample"),
        ({"q1": 10, "q2": 12}, 10, "question q2 has 12 samples, more than the 10"),
        ({"q1": 10}, 0, "num_samples must be a positive integer, got 0"),
        ({"q1": 10}, True, "num_samples must be a positive integer, got True"),
        ({"q1": 10}, 2.5, "num_samples must be a positive integer, got 2.5"),
    ],
)
def test_nothing_to_score_and_counts_over_the_set_one_are_errors(totals, num_samples, message):
    with pytest.raises(ValueError, match=message):
        scored_sample_count(totals, num_samples)


def test_a_question_lacks_what_it_has_fewer_than_the_count_and_more_is_an_error():
    assert shortfall("q1", 7, 10) == 3 and shortfall("q1", 10, 10) == 0 and shortfall("q1", 3, None) == 0
    with pytest.raises(ValueError, match="question q1: 12 samples, more than the 10 it is scored at"):
        shortfall("q1", 12, 10)


def test_the_warning_names_the_questions_and_survives_a_filter_that_ignores_the_others():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", ProbEvalWarning)
        warnings.simplefilter("always", ScoreMeaningWarning)
        warn_short([f"q{i}" for i in range(7)], {f"q{i}": i for i in range(7)}, 10)
    assert len(caught) == 1 and issubclass(caught[0].category, ProbEvalWarning)
    assert str(caught[0].message) == (
        "7 question(s) have fewer than 10 samples, and their missing samples count as wrong answers: "
        "q0 (0), q1 (1), q2 (2), q3 (3), q4 (4) ..."
    )


def test_a_question_without_samples_is_scored_only_at_a_given_count():
    with pytest.raises(ValueError, match="question q1: no samples and no number of samples"):
        shortfall("q1", 0, None)
    assert shortfall("q1", 0, 10) == 10
