"""ProbEval distributions: "wrong", even splitting, Laplace smoothing, KL, against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cfc_probeval.distributions import human_counts, kl_divergence, laplace_smoothed, model_counts
from cfc_probeval.inputs import QuestionTargets
from cfc_probeval.probeval import ProbEval
from protoqa_core.io.records import Cluster


def test_human_counts_append_an_empty_wrong_cluster():
    assert human_counts([6, 4]).tolist() == [6.0, 4.0, 0.0]


def test_model_counts_split_evenly_and_send_unmatched_samples_to_wrong():
    # "a" x3 matches clusters 0 and 1; "b" x2 matches nothing; "c" x1 matches cluster 2.
    counts = model_counts([(0, 1), (), (2,)], [3, 2, 1], num_clusters=3)
    assert counts.tolist() == [1.5, 1.5, 1.0, 2.0]


def test_model_counts_three_way_split_keeps_the_total():
    counts = model_counts([(0, 1, 2)], [1], num_clusters=3)
    assert counts[:3] == pytest.approx([1 / 3] * 3)
    assert counts.sum() == pytest.approx(1.0)


def test_model_counts_rejects_a_cluster_index_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        model_counts([(3,)], [1], num_clusters=3)


def test_laplace_smoothing_adds_one_everywhere_including_wrong():
    assert laplace_smoothed([6, 4, 0]).tolist() == pytest.approx([7 / 13, 5 / 13, 1 / 13])
    assert laplace_smoothed([0, 0, 0]).tolist() == pytest.approx([1 / 3] * 3)


def test_kl_is_natural_log_and_zero_terms_vanish():
    assert kl_divergence([0.5, 0.5], [0.25, 0.75]) == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75))
    assert kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2))
    assert kl_divergence([0.3, 0.7], [0.3, 0.7]) == 0.0


def test_kl_is_infinite_only_without_smoothing():
    assert kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf


def test_kl_rejects_distributions_of_different_sizes():
    with pytest.raises(ValueError, match="different sizes"):
        kl_divergence([0.5, 0.5], [1.0])


def _two_clusters() -> QuestionTargets:
    return QuestionTargets(
        "q1", (Cluster("q1.0", ("dog", "puppy"), 6), Cluster("q1.1", ("cat",), 4)), {"dog": 5, "puppy": 1, "cat": 4}
    )


def test_question_kl_by_hand_with_wrong_and_smoothing():
    # Samples: dog x5, cat x2, banana x3 (wrong). P_G = [7, 5, 1] / 13, P_H = [6, 3, 4] / 13.
    result = ProbEval("human").score_question(_two_clusters(), {"dog": 5, "cat": 2, "banana": 3})
    p_g, p_h = np.array([7, 5, 1]) / 13, np.array([6, 3, 4]) / 13
    assert result.kl == pytest.approx(float(np.sum(p_g * np.log(p_g / p_h))))
    assert [c.id for c in result.clusters] == ["q1.0", "q1.1", "wrong"]
    assert [c.model_count for c in result.clusters] == [5.0, 2.0, 3.0]
    assert result.clusters[2].predictions == {"banana": 3.0}


def test_question_kl_by_hand_with_a_sample_split_between_two_clusters():
    # "pet" is in both clusters, so its 4 samples give 2 to each. P_H = [3, 3, 1] / 7 (wrong: 0 + 1).
    truth = QuestionTargets("q1", (Cluster("q1.0", ("dog", "pet"), 6), Cluster("q1.1", ("cat", "pet"), 4)))
    result = ProbEval("human").score_question(truth, {"pet": 4})
    p_g, p_h = np.array([7, 5, 1]) / 13, np.array([3, 3, 1]) / 7
    assert result.kl == pytest.approx(float(np.sum(p_g * np.log(p_g / p_h))))
    assert result.clusters[0].predictions == {"pet": 2.0} == result.clusters[1].predictions


def test_every_sample_wrong_gives_a_finite_kl():
    result = ProbEval("human").score_question(_two_clusters(), {"banana": 100})
    p_g, p_h = np.array([7, 5, 1]) / 13, np.array([1, 1, 101]) / 103
    assert math.isfinite(result.kl)
    assert result.kl == pytest.approx(float(np.sum(p_g * np.log(p_g / p_h))))


def test_no_samples_is_refused_and_at_a_given_count_all_its_samples_are_wrong():
    # The smoothed empty distribution (KL = sum p_g log(3 p_g)) would rate silence above real answers
    with pytest.raises(ValueError, match="no samples and no number of samples"):
        ProbEval("human").score_question(_two_clusters(), {})
    result = ProbEval("human").score_question(_two_clusters(), {}, num_samples=4)
    p_g, p_h = np.array([7, 5, 1]) / 13, np.array([1, 1, 5]) / 7
    assert result.kl == pytest.approx(float(np.sum(p_g * np.log(p_g / p_h))))
    assert result.kl > float(np.sum(p_g * np.log(p_g * 3)))
