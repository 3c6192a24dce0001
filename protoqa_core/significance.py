"""Bootstrap confidence intervals and paired bootstrap tests over questions.

A data-set score is a mean over questions, so questions are resampled (Efron's percentile
bootstrap), and two systems are compared on their per-question differences (paired bootstrap,
Koehn 2004). Seeds are fixed: the same inputs give the same intervals and p-values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

import numpy as np

__all__ = [
    "ConfidenceInterval",
    "PairedComparison",
    "bootstrap_ci",
    "paired_bootstrap",
    "compare_paired",
    "compare_paired_draws",
    "resample_indices",
    "resample_draws",
    "holm_adjust",
]

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345


@dataclass(frozen=True)
class ConfidenceInterval:
    """A mean with its percentile bootstrap interval."""

    mean: float
    low: float
    high: float
    level: float


@dataclass(frozen=True)
class PairedComparison:
    """Two systems on the same questions: means, difference (a - b), its interval, p-value."""

    mean_a: float
    mean_b: float
    difference: ConfidenceInterval
    p_value: float
    resamples: int
    num_questions: int


def resample_indices(num_questions: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """The questions drawn by each bootstrap resample, ``(resamples, num_questions)`` indices.

    Every function here draws from it, so every system of a leaderboard is scored on the same resampled questions.

    >>> resample_indices(3, 2, seed=0).shape
    (2, 3)
    """
    rng = np.random.default_rng(seed)
    return rng.integers(0, num_questions, size=(resamples, num_questions))


def _resample_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Each resample's mean: of resampled questions, and with a row per draw (a 2-D ``values``, draws x
    questions, such as a score under several clusterings) of one draw picked per resample."""
    if values.ndim == 1:
        return values[resample_indices(len(values), resamples, seed)].mean(axis=1)
    idx = resample_indices(values.shape[1], resamples, seed)
    rows = resample_draws(values.shape[0], resamples, seed)
    return values[rows[:, None], idx].mean(axis=1)


def resample_draws(draws: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """The draw (a clustering, say) each bootstrap resample uses, ``(resamples,)`` indices in ``[0, draws)``.

    Drawn from a stream of its own, so that the resampled questions stay those of :func:`resample_indices`.

    >>> resample_draws(5, 4, seed=0).shape, int(resample_draws(1, 4).max())
    ((4,), 0)
    """
    return np.random.default_rng([seed, 1]).integers(0, draws, size=resamples)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error rate), in the order given.

    >>> holm_adjust([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        adjusted[i] = running
    return adjusted


def bootstrap_ci(
    values: Sequence[float], level: float = 0.95, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> ConfidenceInterval:
    """Mean of per-question values with a percentile bootstrap confidence interval.

    >>> ci = bootstrap_ci([0.0, 1.0] * 50)
    >>> ci.mean, round(ci.low, 2) <= 0.5 <= round(ci.high, 2)
    (0.5, True)
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("no values to bootstrap")
    means = _resample_means(arr, resamples, seed)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return ConfidenceInterval(float(arr.mean()), float(low), float(high), level)


def paired_bootstrap(
    a: Union[Sequence[float], Sequence[Sequence[float]]],
    b: Union[Sequence[float], Sequence[Sequence[float]]],
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Paired bootstrap comparison of two systems' per-question scores.

    The p-value is two-sided (mean difference 0), with the usual +1 correction so it is never 0.
    Scores may also come as draws x questions (row ``i`` of ``a`` and ``b`` under one draw, such as a
    seeded clustering): each resample then also takes one draw, so the interval holds the draws' share.

    >>> r = paired_bootstrap([1.0] * 30, [0.0] * 15 + [1.0] * 15)
    >>> r.difference.mean, r.p_value < 0.01
    (0.5, True)
    >>> r = paired_bootstrap([[1.0] * 30, [0.0] * 30], [[0.5] * 30, [0.5] * 30])
    >>> r.difference.mean, (r.difference.low, r.difference.high), r.num_questions
    (0.0, (-0.5, 0.5), 30)
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.size == 0 or x.ndim not in (1, 2):
        raise ValueError(f"need two equally long, non-empty score lists, got {x.size} and {y.size}")
    d = x - y
    means = _resample_means(d, resamples, seed)
    observed = float(d.mean())
    extreme = np.count_nonzero(np.abs(means - observed) >= abs(observed) - 1e-15)
    p_value = (extreme + 1) / (resamples + 1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return PairedComparison(
        float(x.mean()),
        float(y.mean()),
        ConfidenceInterval(observed, float(low), float(high), level),
        float(p_value),
        resamples,
        int(x.shape[-1]),
    )


def compare_paired(
    per_question_a: Mapping[str, float],
    per_question_b: Mapping[str, float],
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Paired bootstrap comparison of two systems over the questions both have a score for.

    The one comparison behind both metrics' ``compare`` commands: question ids to scores, the
    questions those of ``a`` that ``b`` also has, in ``a``'s order; ``difference`` is ``a - b``.

    >>> a = {f"q{i}": 1.0 for i in range(30)}
    >>> b = {**{f"q{i}": 0.0 for i in range(15)}, **{f"q{i}": 1.0 for i in range(15, 31)}}
    >>> r = compare_paired(a, b)
    >>> r.num_questions, r.difference.mean, r.p_value < 0.01
    (30, 0.5, True)
    """
    return compare_paired_draws([per_question_a], [per_question_b], level=level, resamples=resamples, seed=seed)


def compare_paired_draws(
    draws_a: Sequence[Mapping[str, float]],
    draws_b: Sequence[Mapping[str, float]],
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """:func:`compare_paired` when each system has per-question scores under several draws (``draws_a[i]`` and
    ``draws_b[i]`` under the same one, say the same clustering): each resample redraws the questions and one
    draw, so the interval and the p-value hold the draws' share (:func:`paired_bootstrap`).

    >>> a = [{f"q{i}": 1.0 for i in range(30)}, {f"q{i}": 0.0 for i in range(30)}]
    >>> b = [{f"q{i}": 0.5 for i in range(30)}] * 2
    >>> r = compare_paired_draws(a, b)
    >>> r.num_questions, r.difference.mean, r.p_value > 0.5
    (30, 0.0, True)
    """
    if not draws_a or len(draws_a) != len(draws_b):
        raise ValueError(
            f"need the same, positive number of draws for both systems, got {len(draws_a)} and {len(draws_b)}"
        )
    shared = [qid for qid in draws_a[0] if all(qid in d for d in (*draws_a, *draws_b))]
    if not shared:
        raise ValueError("the two systems share no question")
    return paired_bootstrap(
        [[d[q] for q in shared] for d in draws_a],
        [[d[q] for q in shared] for d in draws_b],
        level=level,
        resamples=resamples,
        seed=seed,
    )
