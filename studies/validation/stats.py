"""Statistics shared by the studies: folds over questions, bootstrap intervals over questions, Spearman.

Every interval is a 95% percentile bootstrap over questions (questions resampled with
replacement, the statistic recomputed), with a fixed seed, so every figure is
reproducible. Folds are a seeded permutation of the sorted question ids, so a question's
fold does not depend on the order it was read in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Optional

import numpy as np

__all__ = ["FOLDS", "RESAMPLES", "LEVEL", "fold_of", "spearman", "bootstrap_interval", "interval"]

FOLDS = 5
"""Folds of the cross-validation over questions."""

RESAMPLES = 1000
"""Bootstrap resamples of every interval."""

LEVEL = 0.95


def fold_of(question_ids: Sequence[str], folds: int = FOLDS, seed: int = 0) -> dict[str, int]:
    """Question id -> fold (0 to ``folds - 1``), as even as possible, from a seeded permutation.

    >>> f = fold_of([f"q{i}" for i in range(10)], folds=5)
    >>> sorted(f.values())
    [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    >>> f == fold_of([f"q{i}" for i in reversed(range(10))], folds=5)
    True
    """
    ids = sorted(set(question_ids))
    if folds < 2:
        raise ValueError(f"need at least 2 folds, got {folds}")
    order = np.random.default_rng(seed).permutation(len(ids))
    return {ids[int(j)]: i % folds for i, j in enumerate(order)}


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho, NaN when either side is constant or has fewer than two values.

    >>> spearman([1, 2, 3], [1, 3, 2]), math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    (0.5, True)
    """
    from scipy.stats import spearmanr

    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"{a.size} values against {b.size}")
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(spearmanr(a, b).statistic)


def bootstrap_interval(
    statistic: Callable[[np.ndarray], float],
    num_questions: int,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Optional[tuple[float, float]]:
    """Percentile interval of ``statistic(indices)`` over question indices resampled with replacement.

    Resamples where the statistic is NaN are left out; None when all are.

    >>> values = np.arange(20, dtype=float)
    >>> low, high = bootstrap_interval(lambda idx: float(values[idx].mean()), 20)
    >>> low < 9.5 < high
    True
    """
    if num_questions < 1:
        return None
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(resamples):
        value = statistic(rng.integers(0, num_questions, size=num_questions))
        if not math.isnan(value):
            stats.append(value)
    if not stats:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    return float(np.percentile(stats, tail)), float(np.percentile(stats, 100.0 - tail))


def interval(bounds: Optional[tuple[float, float]]) -> Optional[dict[str, float]]:
    """``{"low", "high"}`` for JSON (None stays None).

    >>> interval((0.1, 0.3))
    {'low': 0.1, 'high': 0.3}
    """
    return None if bounds is None else {"low": bounds[0], "high": bounds[1]}


def per_question_mean(values: Mapping[str, float]) -> float:
    """Mean of per-question values (NaN when there are none)."""
    return math.fsum(values.values()) / len(values) if values else math.nan
