"""A board's bootstrap: one clustering gives the board without draws, several give intervals holding their share, and
the board's paired test under several clusterings is ``probeval compare``'s."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from cfc_probeval.compare import clustering_draws, compare_probeval
from cfc_probeval.inputs import QuestionTargets
from cfc_probeval.probeval import ProbEval
from protoqa_core.io.records import Cluster
from protoqa_core.significance import compare_paired_draws, resample_indices
from protoqa_integrations.leaderboard import bootstrap
from protoqa_integrations.leaderboard.bootstrap import metric_bootstrap, score_draws, with_draws


def test_docstring_examples():
    result = doctest.testmod(bootstrap, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def _scores(seed: int, systems: int = 3, draws: int = 5, questions: int = 40) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.5, 2.0, size=(systems, 1, questions))
    return base + rng.normal(0.0, 0.3, size=(systems, draws, questions))


def test_one_clustering_gives_the_board_without_draws():
    cube = _scores(0, draws=1)
    idx = resample_indices(40, 300, seed=7)
    names = ["a", "b", "c"]
    without = metric_bootstrap(cube[:, 0, :], False, idx, 0.95, 0.05, names)
    with_one = metric_bootstrap(cube[:, 0, :], False, idx, 0.95, 0.05, names, cube, 7)
    assert with_one == without


def test_several_clusterings_widen_the_interval_and_the_means_are_over_all_of_them():
    cube = _scores(1)
    # A shift per clustering, the same on every question: what a seed moving every question's clusters does.
    cube += np.asarray([0.0, 0.2, -0.2, 0.4, -0.4])[None, :, None]
    idx = resample_indices(40, 1000, seed=3)
    names = ["a", "b", "c"]
    fixed, _, _ = metric_bootstrap(cube[:, 0, :], False, idx, 0.95, 0.05, names)
    drawn, _, _ = metric_bootstrap(cube.mean(axis=1), False, idx, 0.95, 0.05, names, cube, 3)
    for i, name in enumerate(names):
        assert drawn[name].mean == pytest.approx(cube[i].mean(), abs=1e-12)
        assert drawn[name].high - drawn[name].low > fixed[name].high - fixed[name].low


def test_the_paired_p_value_is_that_of_compare_under_the_same_draws():
    cube = _scores(2, systems=2)
    idx = resample_indices(40, 500, seed=11)
    _, _, p_values = metric_bootstrap(cube.mean(axis=1), False, idx, 0.95, 0.05, ["a", "b"], cube, 11)
    per_draw = [[{f"q{j}": float(v) for j, v in enumerate(row)} for row in system] for system in cube]
    paired = compare_paired_draws(per_draw[0], per_draw[1], resamples=500, seed=11)
    assert p_values[("a", "b")] == pytest.approx(paired.p_value)  # Holm leaves one pair's p-value as it is


def test_a_seeded_clustering_is_scored_under_each_draw_and_named_in_the_signature():
    answers = {"dog": 5, "puppy": 2, "cat": 4, "kitten": 1, "goldfish": 3, "hamster": 2, "parrot": 1}
    targets = {f"q{i}": QuestionTargets(f"q{i}", (), answers) for i in range(4)}
    samples = {qid: ["dog"] * 3 + ["cat", "fish", "parrot"] for qid in targets}
    questions = list(targets)
    runs = clustering_draws(ProbEval("gmeans", embedder="char-ngrams", seed=2))
    mean, drawn, first = score_draws(runs, targets, samples, questions)
    assert len(drawn) == 5 and first.per_question == runs[0].evaluate(targets, samples).per_question
    assert mean == pytest.approx(np.asarray(drawn).mean(axis=0).tolist())
    assert with_draws(first.signature, len(runs)).endswith("|clustering_draws:5")
    # compare's KL of the same system is the same mean over the same five clusterings.
    other = {qid: ["cat"] * 6 for qid in targets}
    compared = compare_probeval(targets, samples, other, runs[0], resamples=50)
    assert compared.mean_a == pytest.approx(float(np.mean(drawn)))


def test_human_clusters_are_scored_once():
    targets = {"q1": QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))}
    runs = clustering_draws(ProbEval("human"))
    mean, drawn, first = score_draws(runs, targets, {"q1": ["dog", "cat"]}, ["q1"])
    assert len(runs) == 1 and drawn == [mean] and with_draws(first.signature, 1) == first.signature
