"""Cluster distributions and their KL divergence (docs/spec.md section 2, steps 2 to 5).

Count vectors have one entry per answer cluster plus a last entry for the cluster
"wrong", which holds no target answer and every sample that matched nothing.

>>> p_g = laplace_smoothed(human_counts([6, 4]))        # [7, 5, 1] / 13
>>> p_h = laplace_smoothed(model_counts([(0,), (0, 1), ()], [2, 2, 1], 2))  # [4, 2, 2] / 8
>>> round(kl_divergence(p_g, p_h), 4)
0.1149
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Union

import numpy as np

__all__ = ["WRONG", "human_counts", "model_counts", "laplace_smoothed", "kl_divergence"]

WRONG = "wrong"
"""Id of the extra cluster that collects the samples matching no cluster."""


def human_counts(cluster_counts: Sequence[float]) -> np.ndarray:
    """Target counts per cluster, with 0 appended for "wrong".

    >>> human_counts([35, 28]).tolist()
    [35.0, 28.0, 0.0]
    """
    return np.append(np.asarray(cluster_counts, dtype=np.float64), 0.0)


def model_counts(matches: Sequence[Sequence[int]], counts: Sequence[float], num_clusters: int) -> np.ndarray:
    """Sample counts per cluster (last entry: "wrong") from each distinct sample's matches.

    A sample seen ``n`` times that matches ``k`` clusters adds ``n / k`` to each; one
    that matches none adds ``n`` to "wrong".

    >>> model_counts([(0, 1), (), (1,)], [3, 2, 1], 2).tolist()
    [1.5, 2.5, 2.0]
    """
    if len(matches) != len(counts):
        raise ValueError(f"{len(matches)} match lists for {len(counts)} sample counts")
    out = np.zeros(num_clusters + 1)
    for clusters, count in zip(matches, counts, strict=True):
        if clusters:
            share = count / len(clusters)
            for j in clusters:
                if not 0 <= j < num_clusters:
                    raise ValueError(f"cluster index {j} out of range for {num_clusters} clusters")
                out[j] += share
        else:
            out[num_clusters] += count
    return out


def laplace_smoothed(counts: Union[Sequence[float], np.ndarray], pseudocount: float = 1.0) -> np.ndarray:
    """Add ``pseudocount`` to every entry ("wrong" included) and normalize.

    >>> laplace_smoothed([2, 0, 0]).tolist()
    [0.6, 0.2, 0.2]
    """
    values = np.asarray(counts, dtype=np.float64) + pseudocount
    total = math.fsum(values)
    if not total > 0:
        raise ValueError("cannot normalize counts that sum to zero")
    return values / total


def kl_divergence(p: Union[Sequence[float], np.ndarray], q: Union[Sequence[float], np.ndarray]) -> float:
    """KL(p || q) = sum p log(p / q), natural log; terms with p = 0 are 0.

    Infinite when q is 0 where p is not (never after Laplace smoothing).

    >>> round(kl_divergence([0.5, 0.5], [0.25, 0.75]), 6)
    0.143841
    >>> kl_divergence([1.0, 0.0], [1.0, 0.0])
    0.0
    """
    p_arr, q_arr = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if p_arr.shape != q_arr.shape:
        raise ValueError(f"distributions of different sizes: {p_arr.shape} and {q_arr.shape}")
    terms = []
    for pi, qi in zip(p_arr, q_arr, strict=True):
        if pi > 0:
            if qi <= 0:
                return math.inf
            terms.append(pi * math.log(pi / qi))
    return math.fsum(terms)
