"""The automatic clusters of a question: its answer strings grouped by a clustering of their vectors, or read
back from the user's cache (:mod:`cfc_probeval.cluster_cache`) when the same strings, counts, clustering and
encoder were clustered before.

>>> from cfc_probeval.clustering import make_clusterer
>>> from cfc_probeval.embedders import CharNgramEmbedder
>>> from cfc_probeval.inputs import QuestionTargets
>>> truth = QuestionTargets("q1", (), {"dog": 3.0, "dogs": 2.0, "cat": 1.0, "unused": 0.0})
>>> clustered_answers(truth)
['dog', 'dogs', 'cat']
>>> clusters = automatic_clusters(truth, make_clusterer("hac"), CharNgramEmbedder(), {})
>>> [c.id for c in clusters][0], sum(c.count for c in clusters)
('q1.auto0', 6.0)
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import TYPE_CHECKING, Optional

from .cluster_cache import cluster_cache_key, load_clusters, store_clusters
from .clustering import Clusterer
from .inputs import QuestionTargets
from .results import AnswerCluster

if TYPE_CHECKING:
    from .embedders import Embedder

__all__ = ["automatic_clusters", "clustered_answers", "preload_clusters"]

Preloaded = MutableMapping[str, tuple[AnswerCluster, ...]]


def clustered_answers(truth: QuestionTargets) -> list[str]:
    """The answer strings an automatic clustering groups: those with a positive count, most frequent first
    (then by string), so that neither the order of the answers in a file nor a seed reorders them."""
    return sorted((a for a, n in truth.answer_counts.items() if n > 0), key=lambda a: (-truth.answer_counts[a], a))


def _cached(
    truth: QuestionTargets, answers: Sequence[str], clusterer: Clusterer, embedder: Embedder, preloaded: Preloaded
) -> tuple[Optional[str], Optional[tuple[AnswerCluster, ...]]]:
    """The cache key of a question's automatic clusters (None: not cached) and the clusters kept for it."""
    key = cluster_cache_key(truth.question_id, [(a, truth.answer_counts[a]) for a in answers], clusterer, embedder)
    if key is None:
        return None, None
    if key in preloaded:
        return key, preloaded.pop(key)
    return key, load_clusters(key)


def preload_clusters(
    truth: QuestionTargets, clusterer: Clusterer, embedder: Embedder, preloaded: Preloaded
) -> list[str]:
    """Read a question's cached clusters into ``preloaded`` for :func:`automatic_clusters`; the strings that need a
    vector (all its answers when nothing is cached, else none)."""
    answers = clustered_answers(truth)
    key, cached = _cached(truth, answers, clusterer, embedder, preloaded) if answers else (None, None)
    if key is not None and cached is not None:
        preloaded[key] = cached
        return []
    return answers


def automatic_clusters(
    truth: QuestionTargets, clusterer: Clusterer, embedder: Embedder, preloaded: Preloaded
) -> tuple[AnswerCluster, ...]:
    """A question's automatic clusters: ordered by count (then by their first string), named ``<id>.auto<i>``.

    Read from ``preloaded`` or the cache when kept there, else computed and kept.
    """
    answers = clustered_answers(truth)
    if not answers:
        return ()
    key, cached = _cached(truth, answers, clusterer, embedder, preloaded)
    if cached is not None:
        return cached
    labels = clusterer.fit_labels(embedder.embed(answers))
    groups: dict[int, list[str]] = {}
    for answer, label in zip(answers, labels, strict=True):
        groups.setdefault(int(label), []).append(answer)
    ordered = sorted(groups.values(), key=lambda g: (-sum(truth.answer_counts[a] for a in g), g[0]))
    clusters = tuple(
        AnswerCluster(f"{truth.question_id}.auto{i}", tuple(g), float(sum(truth.answer_counts[a] for a in g)), g[0])
        for i, g in enumerate(ordered)
    )
    if key is not None:
        store_clusters(key, clusters)
    return clusters
