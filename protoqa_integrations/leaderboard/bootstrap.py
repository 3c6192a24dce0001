"""A board's bootstrap: each metric's intervals, Holm-corrected paired p-values and rank ranges, and ProbEval's KL
under several automatic clusterings, so that those hold the seed's share.

As ``probeval compare`` does (:func:`cfc_probeval.compare.clustering_draws`), a seeded automatic clustering is
scored under the seed and the next ones, and each resample redraws one clustering, the same for every system
(docs/evaluate-a-model.md, section 4). Human clusters and a start that reads no seed are scored once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import numpy as np

from cfc_probeval.probeval import ProbEval
from cfc_probeval.results import ProbEvalResult
from protoqa_core.significance import DEFAULT_SEED, holm_adjust, resample_draws
from protoqa_integrations.leaderboard.report import Interval

__all__ = ["score_draws", "with_draws", "merged_draws", "metric_bootstrap"]


def with_draws(signature: str, draws: int) -> str:
    """``signature`` naming how many clusterings it was scored under, when more than one.

    >>> with_draws("clustering:auto->gmeans(seed=0)|n:3", 5), with_draws("clustering:auto->human|n:3", 1)
    ('clustering:auto->gmeans(seed=0)|n:3|clustering_draws:5', 'clustering:auto->human|n:3')
    """
    return f"{signature}|clustering_draws:{draws}" if draws > 1 else signature


def score_draws(
    runs: Sequence[ProbEval], targets: Mapping[str, Any], samples: Mapping[str, Any], questions: Sequence[str]
) -> tuple[list[float], list[list[float]], ProbEvalResult]:
    """One system's KL on ``questions`` under every clustering of ``runs``: the per-question means, the draws x
    questions scores, and the first run's result.

    >>> from protoqa_core.io.records import Cluster, Question
    >>> q = {"q1": Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))}
    >>> mean, drawn, first = score_draws([ProbEval("human")], q, {"q1": {"dog": 6, "cat": 4}}, ["q1"])
    >>> mean, drawn
    ([0.0], [[0.0]])
    """
    results = [run.evaluate(targets, samples) for run in runs]
    drawn = [[r.per_question[qid] for qid in questions] for r in results]
    mean = drawn[0] if len(drawn) == 1 else [math.fsum(column) / len(drawn) for column in zip(*drawn, strict=True)]
    return mean, drawn, results[0]


def merged_draws(
    board: Mapping[str, Mapping[str, list[list[float]]]], keep: Sequence[int], added: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, list[list[float]]]]:
    """A board's draws (metric -> system -> clusterings x questions) at questions ``keep``, with those ``added``.

    >>> merged_draws({"kl": {"a": [[1.0, 2.0], [3.0, 4.0]]}}, [1], {"kl": {"b": [[5.0], [6.0]]}})
    {'kl': {'a': [[2.0], [4.0]], 'b': [[5.0], [6.0]]}}
    """
    out = {key: {n: [[row[i] for i in keep] for row in rows] for n, rows in by.items()} for key, by in board.items()}
    for key, by in added.items():
        out.setdefault(key, {}).update(by)
    return out


def _exact_means(values: np.ndarray, draws: Optional[np.ndarray] = None) -> np.ndarray:
    """Each system's exactly rounded mean: of ``values`` (systems x questions), or with ``draws`` (systems x
    draws x questions) over every draw and question."""
    if draws is None:
        return np.asarray([math.fsum(row) / len(row) for row in values.tolist()])
    return np.asarray([math.fsum(row.ravel().tolist()) / row.size for row in draws])


def _resampled_means(values: np.ndarray, idx: np.ndarray, draws: Optional[np.ndarray], seed: int) -> np.ndarray:
    """Each system's mean on each resample (systems x resamples): the resampled questions ``idx`` and, with
    ``draws`` (systems x draws x questions), one clustering per resample, the same for every system."""
    if draws is None:
        return np.stack([row[idx].mean(axis=1) for row in values])
    rows = resample_draws(draws.shape[1], idx.shape[0], seed)
    return np.stack([system[rows[:, None], idx].mean(axis=1) for system in draws])


def metric_bootstrap(
    values: np.ndarray,
    higher: bool,
    idx: np.ndarray,
    level: float,
    alpha: float,
    names: Sequence[str],
    draws: Optional[np.ndarray] = None,
    seed: int = DEFAULT_SEED,
) -> tuple[dict[str, Interval], dict[str, tuple[int, int]], dict[tuple[str, str], float]]:
    """Intervals, rank ranges and Holm-corrected pairwise p-values of one metric: ``values`` is systems x questions,
    ``idx`` the resampled questions, ``draws`` systems x clusterings x questions when scored under several (each
    resample then draws one from ``seed``'s stream).

    >>> idx = np.random.default_rng(0).integers(0, 20, size=(200, 20))
    >>> scores, ranks, p = metric_bootstrap(np.asarray([[1.0] * 20, [0.0] * 20]), True, idx, 0.95, 0.05, ["a", "b"])
    >>> scores["a"].mean, ranks
    (1.0, {'a': (1, 1), 'b': (2, 2)})
    >>> cube = np.asarray([[[1.0] * 20, [0.0] * 20], [[0.5] * 20, [0.5] * 20]])
    >>> scores, ranks, p = metric_bootstrap(cube.mean(axis=1), True, idx, 0.95, 0.05, ["a", "b"], cube)
    >>> (scores["a"].low, scores["a"].high), ranks
    ((0.0, 1.0), {'a': (1, 2), 'b': (1, 2)})
    """
    tail = (1 - level) / 2 * 100
    # Exactly rounded means, as protoqa-eval and probeval report them.
    means = _exact_means(values, draws)
    resampled = _resampled_means(values, idx, draws, seed)  # systems x resamples, same resampled questions
    scores = {}
    for i, name in enumerate(names):
        low, high = np.percentile(resampled[i], [tail, 100 - tail])
        scores[name] = Interval(float(means[i]), float(low), float(high))
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    raw = []
    for i, j in pairs:
        # The mean of resampled differences is the difference of resampled means: a paired bootstrap.
        observed = float(means[i] - means[j])
        shifted = resampled[i] - resampled[j] - observed
        extreme = np.count_nonzero(np.abs(shifted) >= abs(observed) - 1e-15)
        raw.append((extreme + 1) / (idx.shape[0] + 1))
    adjusted = holm_adjust(raw)
    p_values = {(names[i], names[j]): p for (i, j), p in zip(pairs, adjusted, strict=True)}
    better = [0] * len(names)
    worse = [0] * len(names)
    for (i, j), p in zip(pairs, adjusted, strict=True):
        if p < alpha and means[i] != means[j]:
            i_better = (means[i] > means[j]) == higher
            winner, loser = (i, j) if i_better else (j, i)
            better[loser] += 1
            worse[winner] += 1
    ranks = {name: (better[i] + 1, len(names) - worse[i]) for i, name in enumerate(names)}
    return scores, ranks, p_values
