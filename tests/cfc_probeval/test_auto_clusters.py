"""A question's automatic clusters: its answers in a fixed order, grouped, ordered and named, and read back from
the user's cache instead of being clustered again."""

from __future__ import annotations

from cfc_probeval.auto_clusters import automatic_clusters, clustered_answers, preload_clusters
from cfc_probeval.clustering import make_clusterer
from cfc_probeval.embedders import CharNgramEmbedder
from cfc_probeval.inputs import QuestionTargets

TRUTH = QuestionTargets(
    "q1", (), {"dog": 3.0, "dogs": 2.0, "a dog": 2.0, "cat": 4.0, "cats": 1.0, "car": 1.0, "never said": 0.0}
)


class CountingEmbedder(CharNgramEmbedder):
    """Character n-grams that count the strings they embed."""

    def __init__(self) -> None:
        super().__init__()
        self.strings: list[str] = []

    def embed(self, texts):
        self.strings.extend(texts)
        return super().embed(texts)


def test_answers_come_most_frequent_first_whatever_their_order_in_the_file():
    shuffled = QuestionTargets("q1", (), dict(reversed(list(TRUTH.answer_counts.items()))))
    assert clustered_answers(TRUTH) == clustered_answers(shuffled) == ["cat", "dog", "a dog", "dogs", "car", "cats"]


def test_clusters_hold_every_answer_once_ordered_by_count_and_named_by_position():
    clusters = automatic_clusters(TRUTH, make_clusterer("hac", distance_threshold=0.5), CharNgramEmbedder(), {})
    assert sorted(a for c in clusters for a in c.answers) == sorted(clustered_answers(TRUTH))
    assert [c.id for c in clusters] == [f"q1.auto{i}" for i in range(len(clusters))]
    counts = [c.count for c in clusters]
    assert counts == sorted(counts, reverse=True) and sum(counts) == 13.0
    assert all(c.representative == c.answers[0] for c in clusters)
    assert (
        automatic_clusters(QuestionTargets("q2", (), {"x": 0.0}), make_clusterer("hac"), CharNgramEmbedder(), {}) == ()
    )


def test_a_second_clustering_reads_the_cache_and_embeds_nothing(user_cache):
    clusterer = make_clusterer("gmeans", k_init=2)
    first = CountingEmbedder()
    made = automatic_clusters(TRUTH, clusterer, first, {})
    assert sorted(first.strings) == sorted(clustered_answers(TRUTH))
    second, preloaded = CountingEmbedder(), {}
    # Read in advance, as ProbEval does for a chunk of questions: no string of the question needs a vector.
    assert preload_clusters(TRUTH, clusterer, second, preloaded) == [] and len(preloaded) == 1
    assert automatic_clusters(TRUTH, clusterer, second, preloaded) == made
    assert second.strings == [] and preloaded == {}
    # Other counts are another key: clustered anew.
    other = QuestionTargets("q1", (), {**TRUTH.answer_counts, "car": 5.0})
    assert preload_clusters(other, clusterer, second, {}) == clustered_answers(other)


def test_without_the_cache_every_clustering_is_computed():
    clusterer = make_clusterer("gmeans", k_init=2)
    embedder = CountingEmbedder()
    automatic_clusters(TRUTH, clusterer, embedder, {})
    assert preload_clusters(TRUTH, clusterer, embedder, {}) == clustered_answers(TRUTH)
