"""Per-question scoring against hand-computed values (docs/spec.md section 1, steps 1-6)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protoqa_core.io.records import Cluster
from protoqa_core.similarity import get_similarity
from protoqa_metric.metric import score_question
from protoqa_metric.scoring import oracle_score, score_matrix, similarity_matrix
from tests.support.spec_reference import reference_question_score
from tests.support.words import FAST_PATH_WORDS

CLUSTERS = (
    Cluster("q.0", ("age", "birthday"), 35),
    Cluster("q.1", ("name",), 28),
    Cluster("q.2", ("job", "salary"), 10),
    Cluster("q.3", ("height",), 2),
)


def test_predictions_are_normalized_but_clusters_are_not():
    m = similarity_matrix(
        ["  AGE ", "Height"], (Cluster("a", ("age",), 1), Cluster("b", ("Height",), 1)), "exact_match"
    )
    assert m.tolist() == [[1.0, 0.0], [0.0, 0.0]]


def test_predictions_cut_at_fifty_characters():
    answer = "a" * 50
    m = similarity_matrix([answer + " and more"], (Cluster("a", (answer,), 1),), "exact_match")
    assert m[0, 0] == 1.0


def test_hungarian_assignment_beats_greedy():
    # Prediction 0 fits both clusters, prediction 1 only the big one. Greedy row by
    # row would give 0 -> big (10) and 1 -> nothing; the optimum is 0 -> small,
    # 1 -> big: 10 + 3.
    clusters = (Cluster("big", ("x",), 10), Cluster("small", ("y",), 3))
    m = np.array([[1.0, 1.0], [1.0, 0.0]])
    r = score_matrix(m, clusters, predictions=["p0", "p1"])
    assert r.raw_score == 13.0
    assert r.oracle_score == 13.0
    assert r.score == 1.0
    assert r.assignment == ("small", "big")


def test_each_cluster_claimed_once():
    r = score_question(["age", "birthday", "name"], CLUSTERS, "exact_match")
    assert r.raw_score == 35 + 28
    assert r.assignment == ("q.0", None, "q.1")
    assert r.score == pytest.approx(63 / 75)


@pytest.mark.parametrize(
    "k, expected_oracle",
    [(1, 35), (2, 63), (3, 73), (4, 75), (10, 75)],
)
def test_max_answers_oracle_is_sum_of_k_largest(k, expected_oracle):
    assert oracle_score([10, 35, 2, 28], max_answers=k) == expected_oracle
    r = score_question(["name", "age"], CLUSTERS, "exact_match", max_answers=k)
    raw = 28 if k == 1 else 63
    assert r.oracle_score == expected_oracle
    assert r.score == pytest.approx(raw / expected_oracle)


def test_max_answers_keeps_first_k_before_normalizing():
    # The 51st character does not matter, but the rank does.
    r = score_question(["wrong", "age"], CLUSTERS, "exact_match", max_answers=1)
    assert r.score == 0.0
    assert r.predictions == ("wrong",)


def test_max_incorrect_keeps_the_kth_wrong_answer_and_drops_the_rest():
    preds = ["x1", "age", "x2", "name", "x3", "job"]
    r1 = score_question(preds, CLUSTERS, "exact_match", max_incorrect=1)
    assert r1.predictions == ("x1",) and r1.raw_score == 0
    r2 = score_question(preds, CLUSTERS, "exact_match", max_incorrect=2)
    assert r2.predictions == ("x1", "age", "x2") and r2.raw_score == 35
    r3 = score_question(preds, CLUSTERS, "exact_match", max_incorrect=3)
    assert r3.predictions == ("x1", "age", "x2", "name", "x3")
    assert r3.raw_score == 63
    assert r3.oracle_score == 75  # Max Incorrect's oracle is the sum of all counts
    r4 = score_question(preds, CLUSTERS, "exact_match", max_incorrect=4)
    assert r4.raw_score == 73 and len(r4.predictions) == 6


def test_duplicate_correct_answer_is_not_wrong_for_max_incorrect():
    # A repeated correct answer has a non-zero row; it loses the assignment but
    # does not count as incorrect.
    r = score_question(["age", "age", "x", "name"], CLUSTERS, "exact_match", max_incorrect=1)
    assert r.predictions == ("age", "age", "x")
    assert r.raw_score == 35


def test_round_half_to_even_makes_half_zero():
    clusters = (Cluster("a", ("car",), 5), Cluster("b", ("x",), 1))
    # "red car" vs "car" is exactly 0.5 under WordNet: rounds to 0.
    m = similarity_matrix(
        ["red car", "hot dog bun"], (Cluster("a", ("car",), 5), Cluster("h", ("hot dog",), 3)), "wordnet"
    )
    assert m[0, 0] == 0.5
    assert m[1, 1] == pytest.approx(2 / 3)
    r = score_question(["red car"], clusters, "wordnet")
    assert r.raw_score == 0.0 and r.assignment == (None,)
    # 2/3 rounds to 1 and the cluster counts in full.
    r = score_question(["hot dog bun"], (Cluster("h", ("hot dog",), 3),), "wordnet")
    assert r.raw_score == 3.0


def test_half_similarity_counts_as_wrong_for_max_incorrect():
    clusters = (Cluster("a", ("car",), 5), Cluster("b", ("dog",), 1))
    r = score_question(["red car", "dog"], clusters, "wordnet", max_incorrect=1)
    assert r.predictions == ("red car",)
    assert r.score == 0.0


def test_set_intersection_weights_every_cluster_one():
    r = score_question(["height", "age"], CLUSTERS, "exact_match", weighted=False)
    assert r.raw_score == 2 and r.oracle_score == 4
    assert r.score == 0.5
    r = score_question(["height"], CLUSTERS, "exact_match", weighted=False, max_answers=1)
    assert r.score == 1.0


def test_no_predictions_scores_zero():
    r = score_question([], CLUSTERS, "exact_match")
    assert r.score == 0.0 and r.raw_score == 0.0


def test_unrounded_similarity_gives_partial_credit():
    r = score_question(["colour"], (Cluster("c", ("color",), 4),), "lcs")
    assert r.raw_score == pytest.approx(4 * 5 / 6)


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_answers"):
        score_question(["age"], CLUSTERS, "exact_match", max_answers=0)
    with pytest.raises(ValueError, match="max_incorrect"):
        score_question(["age"], CLUSTERS, "exact_match", max_incorrect=0)


@pytest.mark.parametrize("sim", ["exact_match", pytest.param("wordnet", marks=pytest.mark.slow)])
def test_scores_equal_plain_spec_implementation_on_dev(shared_data, sim):
    """Every metric on 12 real dev questions equals the straightforward code of docs/spec.md to 1e-9."""
    from protoqa_core.io.predictions import read_predictions
    from protoqa_core.io.readers import read_targets
    from protoqa_core.similarity import exact_match
    from protoqa_metric.metric_set import STANDARD_METRICS
    from tests.support.spec_reference import reference_wordnet_similarity

    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    preds = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    plain = reference_wordnet_similarity if sim == "wordnet" else exact_match
    for qid in list(targets)[:12]:
        q = targets[qid]
        clusters = [(c.answers, c.count) for c in q.clusters]
        for m in STANDARD_METRICS:
            ours = score_question(
                preds[qid],
                q.clusters,
                sim,
                max_answers=m.max_answers,
                max_incorrect=m.max_incorrect,
                weighted=m.weighted,
            ).score
            theirs = reference_question_score(
                preds[qid],
                clusters,
                plain,
                max_answers=m.max_answers,
                max_incorrect=m.max_incorrect,
                weighted=m.weighted,
                rounded=sim == "wordnet",
            )
            assert ours == pytest.approx(theirs, abs=1e-9), (qid, m.name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.sampled_from(FAST_PATH_WORDS), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=4),
    st.lists(
        st.lists(
            st.lists(st.sampled_from(FAST_PATH_WORDS), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=4
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_rounded_matrix_is_the_rounding_of_the_exact_matrix(predictions, cluster_answers):
    import numpy as np

    from protoqa_metric.scoring import matrix_of_normalized

    clusters = [Cluster(f"c{j}", tuple(answers), 1) for j, answers in enumerate(cluster_answers)]
    for name in ("wordnet", "wordnet_wup"):
        sim = get_similarity(name)
        exact = matrix_of_normalized(predictions, clusters, sim, None, {})
        rounded = matrix_of_normalized(predictions, clusters, sim, None, {}, rounded=True)
        assert np.array_equal(rounded, np.round(exact)), name
