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


def _mention_ari(counts: dict[str, float], first, second) -> float:
    """ARI of two partitions of a question's answers (clusters as lists of strings), every occurrence one item."""
    from sklearn.metrics import adjusted_rand_score

    def labels(clusters) -> list[int]:
        owner = {a: j for j, c in enumerate(clusters) for a in c.answers}
        return [owner[a] for a in sorted(counts) for _ in range(int(counts[a]))]

    return float(adjusted_rand_score(labels(first), labels(second)))


def _seed_and_order_agreement(shared_data, seeds: tuple[int, int] = (0, 7), **options) -> list[float]:
    """Per question of the first eight of CFC dev: ARI between the G-means clusters at one seed and at another with
    the answers shuffled (the stability criterion of the cluster study, on a small fixed set)."""
    import random

    from cfc_probeval.embedders import get_embedder
    from cfc_probeval.inputs import read_targets

    embedder = get_embedder("minilm")
    agreement = []
    for truth in list(read_targets(shared_data / "cfc" / "dev.targets.jsonl").values())[:8]:
        counts = {a: n for a, n in truth.answer_counts.items() if n > 0}
        order = list(counts)
        random.Random(7).shuffle(order)
        first = automatic_clusters(
            QuestionTargets(truth.question_id, (), counts),
            make_clusterer("gmeans", seed=seeds[0], **options),
            embedder,
            {},
        )
        second = automatic_clusters(
            QuestionTargets(truth.question_id, (), {a: counts[a] for a in order}),
            make_clusterer("gmeans", seed=seeds[1], **options),
            embedder,
            {},
        )
        agreement.append(_mention_ari(counts, first, second))
    return agreement


def test_stability_under_the_seed_and_the_answer_order_on_cfc_dev_questions(shared_data):
    # The order of the answers never changes the default clusters: the same seed on shuffled answers.
    assert _seed_and_order_agreement(shared_data, (0, 0)) == [1.0] * 8
    # The greedy start meets the stability criterion (mean ARI 0.90 or more): it reads no seed.
    greedy = _seed_and_order_agreement(shared_data, init="greedy")
    assert sum(greedy) / len(greedy) >= 0.90 and min(greedy) == 1.0
    # The default's seeded starts fall short of it on the same questions, so the check can fail.
    seeded = _seed_and_order_agreement(shared_data)
    assert sum(seeded) / len(seeded) < 0.90
