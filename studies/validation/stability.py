"""The stability criterion of the cluster-level study (protocol version 4): how far a clustering's partition
of a question's strings moves when the seed changes and the answers come in another order.

Per candidate and question, the mean over every pair of the protocol's seeds ``a < b`` of the adjusted Rand
index between the partition at seed ``a`` (answers in the file's order) and the partition at seed ``b`` of the
same answers shuffled (a permutation drawn from seed ``b``), both made by ProbEval as it ships. Pairs of
strings are weighted by the mentions, as every cluster-level figure of the study. With one seed the pair is
the seed with itself, so the order alone is tested. A control is a function of each string (no seed, no
order), so its shuffled partition is its partition.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from cfc_probeval.inputs import QuestionTargets

from .cluster_candidates import ClusterCandidate, ClusterMaker, Question
from .partitions import adjusted_rand, contingency

__all__ = [
    "shuffled_truth",
    "partition_agreement",
    "shuffled_labels",
    "stability_values",
    "stability_summary",
    "seed_spread",
]


def shuffled_truth(q: Question, seed: int) -> QuestionTargets:
    """``q``'s answers and counts with the answers in an order drawn from ``seed``.

    >>> q = Question("q", ["a", "b", "c"], [3.0, 2.0, 1.0], [])
    >>> sorted(shuffled_truth(q, 1).answer_counts.items()) == sorted(q.truth.answer_counts.items())
    True
    """
    order = np.random.default_rng(seed).permutation(len(q.strings))
    return QuestionTargets(q.qid, (), {q.strings[i]: q.counts[i] for i in order.tolist()})


def partition_agreement(q: Question, first: np.ndarray, second: np.ndarray) -> float:
    """The adjusted Rand index of two partitions of ``q``'s strings, pairs weighted by the mentions.

    >>> q = Question("q", ["a", "b", "c"], [2.0, 1.0, 1.0], [(0, "K", 2.0), (1, "K", 1.0), (2, "L", 1.0)])
    >>> partition_agreement(q, np.array([0, 0, 1]), np.array([5, 5, 7])), partition_agreement(q, np.zeros(3), np.arange(3))
    (1.0, 0.0)
    """
    table = contingency(
        [int(first[i]) for i, _, _ in q.mentions],
        [int(second[i]) for i, _, _ in q.mentions],
        [w for _, _, w in q.mentions],
    )
    return adjusted_rand(table)


def shuffled_labels(maker: ClusterMaker, c: ClusterCandidate, q: Question, seed: int) -> np.ndarray:
    """One label per string of ``q`` (in ``q``'s order) when ProbEval clusters ``q``'s answers shuffled by ``seed``."""
    if c.is_control or c.normalize_first or c.wordnet_merge:
        return maker.labels(c, q, seed)
    clusters = maker._probeval(c, seed).clusters_for(shuffled_truth(q, seed))
    owner = {a: j for j, cluster in enumerate(clusters) for a in cluster.answers}
    return np.array([owner[a] for a in q.strings], dtype=int)


def stability_values(
    questions: Sequence[Question], cands: Sequence[ClusterCandidate], seeds: Sequence[int], maker: ClusterMaker
) -> np.ndarray:
    """candidates x questions: the mean ARI over seed pairs, the second run of each pair on shuffled answers."""
    pairs = list(itertools.combinations(seeds, 2)) or [(seeds[0], seeds[0])]
    out = np.zeros((len(cands), len(questions)))
    for ci, c in enumerate(cands):
        for j, q in enumerate(questions):
            shuffled = {b: shuffled_labels(maker, c, q, b) for b in dict.fromkeys(b for _, b in pairs)}
            out[ci, j] = np.mean([partition_agreement(q, maker.labels(c, q, a), shuffled[b]) for a, b in pairs])
    return out


def stability_summary(values: np.ndarray) -> dict[str, float]:
    """One candidate's per-question stability: its mean, its minimum and the share of questions at 1 (the same
    partition at every seed and order).

    >>> stability_summary(np.array([1.0, 0.5, 1.0]))
    {'mean': 0.8333333333333334, 'min': 0.5, 'identical': 0.6666666666666666}
    """
    return {
        "mean": float(values.mean()),
        "min": float(values.min()),
        "identical": float(np.mean(values >= 1.0 - 1e-12)),
    }


def seed_spread(per_seed: np.ndarray, systems: Sequence[str]) -> dict[str, object]:
    """How the seed moves a clustering's system scores: ``per_seed`` is seeds x systems x questions of KLs.

    Returns each system's data-set KL (mean over questions) range over the seeds, the largest range, and
    the system pairs whose order differs between two seeds.

    >>> spread = seed_spread(np.array([[[1.0], [2.0], [3.0]], [[2.5], [2.0], [3.0]]]), ["a", "b", "c"])
    >>> spread["max_range"], spread["pairs_reordered"], spread["pairs"]
    (1.5, [['a', 'b']], 3)
    """
    means = per_seed.mean(axis=2)  # seeds x systems
    ranges = means.max(axis=0) - means.min(axis=0)
    flips = [
        [systems[i], systems[j]]
        for i, j in itertools.combinations(range(len(systems)), 2)
        if len({float(np.sign(d)) for d in means[:, i] - means[:, j]}) > 1
    ]
    return {
        "ranges": {name: float(r) for name, r in zip(systems, ranges, strict=True)},
        "max_range": float(ranges.max()) if len(ranges) else 0.0,
        "pairs_reordered": flips,
        "pairs": len(systems) * (len(systems) - 1) // 2,
    }
