"""The paired ProbEval comparison: the sign of the difference, the shared questions only, and the
seeded bootstrap."""

from __future__ import annotations

import pytest

from cfc_probeval.compare import compare_probeval
from cfc_probeval.inputs import QuestionTargets
from cfc_probeval.probeval import ProbEval
from protoqa_core.io.records import Cluster

TARGETS = {
    f"q{i}": QuestionTargets(f"q{i}", (Cluster(f"q{i}.0", ("dog",), 6), Cluster(f"q{i}.1", ("cat",), 4)))
    for i in range(12)
}
GOOD = {q: ["dog"] * 6 + ["cat"] * 4 for q in TARGETS}
BAD = {q: ["dog"] * 2 + ["car"] * 8 for q in TARGETS}


def test_the_difference_is_a_minus_b_so_the_closer_system_gives_a_negative_one():
    human = ProbEval("human")
    forward = compare_probeval(TARGETS, GOOD, BAD, human, resamples=200)
    backward = compare_probeval(TARGETS, BAD, GOOD, human, resamples=200)
    assert forward.difference.mean < 0 < backward.difference.mean
    assert forward.difference.mean == pytest.approx(-backward.difference.mean)


def test_only_questions_both_systems_answered_count_and_none_shared_is_an_error():
    human = ProbEval("human")
    partial = {q: GOOD[q] for q in list(TARGETS)[:5]}
    result = compare_probeval(TARGETS, partial, BAD, human, resamples=200)
    subset = {q: TARGETS[q] for q in partial}
    assert result == compare_probeval(subset, partial, {q: BAD[q] for q in partial}, human, resamples=200)
    with pytest.raises(ValueError, match="share no question"):
        compare_probeval(TARGETS, {"q0": GOOD["q0"]}, {"q1": BAD["q1"]}, human)


def test_the_bootstrap_is_seeded():
    human = ProbEval("human")
    assert compare_probeval(TARGETS, GOOD, BAD, human, resamples=200, seed=3) == compare_probeval(
        TARGETS, GOOD, BAD, human, resamples=200, seed=3
    )
