"""Matchers: the WordNet rule, cosine and Gaussian-process matching on synthetic embeddings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cfc_probeval.defaults import DEFAULTS
from cfc_probeval.embedders import Embedder
from cfc_probeval.matching import (
    CosineMatcher,
    GPMatcher,
    WordNetMatcher,
    best_clusters,
    make_matcher,
    wordnet_scores_one,
)
from protoqa_core.similarity import wordnet_similarity


class TableEmbedder(Embedder):
    """Vectors from a fixed table: lets a test place every string exactly."""

    name = "table"

    def __init__(self, table: dict[str, list[float]]) -> None:
        super().__init__()
        self.table = table

    def _encode(self, texts):
        return np.array([self.table[t] for t in texts], dtype=float)


def test_wordnet_match_needs_a_raw_similarity_of_one():
    assert wordnet_similarity("red sports car", "sports car") == pytest.approx(2 / 3)
    assert wordnet_scores_one(1.0) and not wordnet_scores_one(2 / 3) and not wordnet_scores_one(0.5)
    matcher = WordNetMatcher()
    clusters = [["sports car"], ["gum"], ["dog"]]
    assert matcher.match(["red sports car", "chewing gum", "dogs", "banana"], clusters) == [(), (1,), (2,), ()]


def test_wordnet_sample_in_several_clusters_goes_to_all_of_them():
    clusters = [["evening", "night"], ["evening meal"], ["night"]]
    assert WordNetMatcher().match(["night"], clusters) == [(0, 2)]


def test_wordnet_scores_only_pairs_sharing_a_token_or_synset_and_each_once():
    matcher = WordNetMatcher()
    clusters = [["dog", "dogs", "puppy"], ["cat"], ["banana split"]]
    assert matcher.match(["dog", "dog", "cat", "zebra"], clusters) == [(0,), (0,), (1,), ()]
    # dog: its first candidate of cluster 0 matches and ends that cluster; puppy, cat and
    # banana split share nothing with it and are never scored; the second "dog" reuses
    # the first; cat: cat-cat; zebra shares nothing with any answer.
    assert matcher.num_pairs_scored == 2
    matcher.match(["dog"], clusters)
    assert matcher.num_pairs_scored == 2


@pytest.mark.slow
@pytest.mark.parametrize("samples_file", ["dev.predictions.gpt2-xl.oneshot.json", "dev.predictions.human.json"])
@pytest.mark.parametrize("all_stopword_match", [True, False])
def test_wordnet_matching_equals_scoring_every_pair_on_real_data(shared_data, samples_file, all_stopword_match):
    from cfc_probeval.inputs import read_samples, read_targets
    from cfc_probeval.probeval import normalized_sample_counts

    targets_path = shared_data / "cfc" / "dev.targets.jsonl"
    if not targets_path.is_file():
        pytest.skip("CFC dev data not available")
    targets = read_targets(targets_path)
    samples = read_samples(shared_data / "cfc" / samples_file)
    matcher = WordNetMatcher(all_stopword_match)
    checked = 0
    for qid, truth in targets.items():
        # Stopword-only strings on both sides exercise the empty-group rule.
        distinct = list(normalized_sample_counts(samples.get(qid, {}))) + ["the", "", "of a"]
        clusters = [c.answers for c in truth.clusters] + [("the",), ("an",)]
        expected = [
            tuple(
                j
                for j, answers in enumerate(clusters)
                if any(
                    wordnet_scores_one(wordnet_similarity(s, a, all_stopword_match=all_stopword_match)) for a in answers
                )
            )
            for s in distinct
        ]
        assert matcher.match(distinct, clusters) == expected, qid
        checked += len(distinct)
    assert checked > 1000


def test_wordnet_cache_is_bounded():
    matcher = WordNetMatcher(cache_size=8)
    words = ["dog", "cat", "car", "bus", "tree", "house", "river", "stone", "apple", "bread"]
    for w in words:
        assert matcher.match([w], [[w]]) == [(0,)]
    assert len(matcher._scores) <= 8 and len(matcher._indexes) <= 8
    assert matcher.num_pairs_scored == len(words)


def test_wordnet_all_stopword_switch():
    assert WordNetMatcher().match(["the"], [["a"]]) == [(0,)]
    assert WordNetMatcher(all_stopword_match=False).match(["the"], [["a"]]) == [()]


SYNTHETIC = {
    # Two tight groups on the x and y axes, a sample near each, one far away, one in between.
    "x1": [1.0, 0.05, 0.0],
    "x2": [1.0, -0.05, 0.0],
    "x3": [1.0, 0.0, 0.05],
    "y1": [0.05, 1.0, 0.0],
    "y2": [-0.05, 1.0, 0.0],
    "y3": [0.0, 1.0, 0.05],
    "near x": [1.0, 0.1, 0.1],
    "near y": [0.1, 1.0, -0.1],
    "far": [0.0, 0.0, 1.0],
    "between": [1.0, 1.0, 0.0],
}
CLUSTERS = [["x1", "x2", "x3"], ["y1", "y2", "y3"]]


def test_cosine_matches_the_best_cluster_above_the_threshold():
    matcher = CosineMatcher(TableEmbedder(SYNTHETIC), threshold=0.9)
    assert matcher.match(["near x", "near y", "far"], CLUSTERS) == [(0,), (1,), ()]


def test_cosine_ties_share_the_sample_and_the_threshold_is_inclusive():
    table = {**SYNTHETIC, "x1": [1.0, 0.0, 0.0], "y1": [0.0, 1.0, 0.0]}
    assert CosineMatcher(TableEmbedder(table), threshold=0.7).match(["between"], [["x1"], ["y1"]]) == [(0, 1)]
    assert CosineMatcher(TableEmbedder(table), threshold=1.0).match(["x1"], [["x1"], ["y1"]]) == [(0,)]


def test_gp_matches_by_probability_and_rejects_below_the_threshold():
    matcher = GPMatcher(TableEmbedder(SYNTHETIC), threshold=0.6)
    probabilities = matcher.cluster_probabilities(["near x", "near y", "far"], CLUSTERS)
    assert probabilities[0, 0] > 0.6 > probabilities[0, 1]
    assert probabilities[1, 1] > 0.6 > probabilities[1, 0]
    assert probabilities[2].max() <= 0.6  # far from every answer: back towards the prior 0.5
    assert matcher.match(["near x", "near y", "far"], CLUSTERS) == [(0,), (1,), ()]


def test_gp_reuses_classifiers_for_the_same_clusters():
    matcher = GPMatcher(TableEmbedder(SYNTHETIC))
    first = matcher._classifiers(CLUSTERS)
    assert matcher._classifiers([list(c) for c in CLUSTERS]) is first


def test_gp_with_one_cluster_falls_back_to_cosine_with_a_warning():
    matcher = GPMatcher(TableEmbedder(SYNTHETIC), fallback_cosine_threshold=0.9)
    with pytest.warns(RuntimeWarning, match="at least two clusters"):
        assert matcher.match(["near x", "far"], [CLUSTERS[0]]) == [(0,), ()]


def test_gp_is_deterministic():
    a = GPMatcher(TableEmbedder(SYNTHETIC), seed=3).cluster_probabilities(["near x", "between"], CLUSTERS)
    b = GPMatcher(TableEmbedder(SYNTHETIC), seed=3).cluster_probabilities(["near x", "between"], CLUSTERS)
    assert np.array_equal(a, b)


def test_best_clusters_strict_and_inclusive():
    scores = np.array([[0.1, 0.1], [0.5, 0.2]])
    assert best_clusters(scores, 0.1) == [(0, 1), (0,)]
    assert best_clusters(scores, 0.1, strict=True) == [(), (0,)]


def test_make_matcher_checks_its_settings():
    assert isinstance(make_matcher("wordnet"), WordNetMatcher)
    assert make_matcher("cosine", TableEmbedder({})).threshold == DEFAULTS.cosine_threshold
    assert make_matcher("gp", TableEmbedder({})).threshold == DEFAULTS.gp_threshold
    with pytest.raises(ValueError, match="needs an embedder"):
        make_matcher("cosine")
    with pytest.raises(ValueError, match="no threshold"):
        make_matcher("wordnet", threshold=0.5)
    with pytest.raises(ValueError, match="unknown matching"):
        make_matcher("exact")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CosineMatcher(TableEmbedder({}), 0.5).match([], CLUSTERS) == []


def test_gp_matcher_keeps_its_classifier_and_takes_the_papers_regression():
    from cfc_probeval.embedders import CharNgramEmbedder
    from cfc_probeval.matching import GPMatcher

    clusters = [["evening", "night time", "late evening"], ["morning", "breakfast", "early morning"]]
    default = GPMatcher(CharNgramEmbedder(), threshold=0.1)
    assert default.params() == {"threshold": 0.1, "seed": 0} and default.model == "classification"
    regression = GPMatcher(CharNgramEmbedder(), threshold=0.1, model="regression")
    assert regression.params()["model"] == "regression"
    scores = regression.cluster_probabilities(["evening", "breakfasts"], clusters)
    assert scores.shape == (2, 2) and scores[0, 0] > 0.9 and scores[1].argmax() == 1
    with pytest.raises(ValueError, match="unknown Gaussian-process model"):
        GPMatcher(CharNgramEmbedder(), model="svm")
