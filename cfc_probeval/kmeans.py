"""K-means as scikit-learn's :class:`~sklearn.cluster.KMeans` computes it, bit for bit, in numpy, for X-means and
G-means: the same floating-point operations in the same order, without scikit-learn's import and per-call
checks (why: docs/probeval.md, "Scale"; ``tests/cfc_probeval/test_kmeans.py`` compares with the estimator).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, NamedTuple, Optional

import numpy as np

__all__ = ["KMeansFit", "kmeans", "greedy_centers", "kmeans_plusplus_like_sklearn", "lloyd_step", "one_thread"]


class KMeansFit(NamedTuple):
    """The part of a fitted K-means that G-means and X-means read."""

    labels_: np.ndarray
    cluster_centers_: np.ndarray


def kmeans(points: np.ndarray, k: int, seed: int, init: Optional[np.ndarray] = None, n_init: int = 10) -> KMeansFit:
    """``KMeans(k, n_init=n_init, random_state=seed).fit(points)`` (or from ``init``), bit for bit, on one thread.

    Dense float64 input, unit weights, Lloyd's algorithm; one ``RandomState(seed)`` across the ``n_init`` runs.

    >>> kmeans(np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0]]), 2, seed=0).labels_.tolist() in ([0, 0, 1], [1, 1, 0])
    True
    """
    X = np.array(points, dtype=np.float64, order="C", copy=True)
    if X.ndim != 2 or not 1 <= k <= len(X):
        raise ValueError(f"cannot make {k} clusters of {len(X)} points")
    tol = float(np.mean(np.var(X, axis=0))) * 1e-4  # before centring, as KMeans does
    sample_weight = np.ones(len(X), dtype=np.float64)
    X_mean = X.mean(axis=0)
    X -= X_mean
    x_squared_norms = np.einsum("ij,ij->i", X, X)
    if init is not None:
        start = np.array(init, dtype=np.float64, order="C", copy=True)
        start -= X_mean
        runs = 1
    else:
        random_state = _seeded(seed)
        runs = n_init
    after_first_step: dict[bytes, tuple[np.ndarray, float, np.ndarray]] = {}
    best_inertia = best_labels = best_centers = None
    for _ in range(runs):
        centers_init = (
            start
            if init is not None
            else kmeans_plusplus_like_sklearn(X, k, x_squared_norms, sample_weight, random_state)
        )
        labels, inertia, centers = _lloyd(X, sample_weight, centers_init, tol, after_first_step)
        if (
            best_labels is None
            or best_inertia is None
            or (inertia < best_inertia and not _same_clustering(labels, best_labels, k))
        ):
            best_labels, best_centers, best_inertia = labels, centers, inertia
    if best_labels is None or best_centers is None:
        raise ValueError(f"n_init must be at least 1, not {n_init}")
    return KMeansFit(best_labels, best_centers + X_mean)


def _same_clustering(labels1: np.ndarray, labels2: np.ndarray, k: int) -> bool:
    """``sklearn.cluster._k_means_common._is_same_clustering``: the labels are the same up to a renaming.

    >>> _same_clustering(np.array([0, 0, 1]), np.array([1, 1, 0]), 2), _same_clustering(np.array([0, 1]), np.array([0, 0]), 2)
    (True, True)
    """
    mapping = np.full(k, -1, dtype=np.int64)
    for a, b in zip(labels1.tolist(), labels2.tolist(), strict=True):
        if mapping[a] == -1:
            mapping[a] = b
        elif mapping[a] != b:
            return False
    return True


def _squared_row_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``sklearn.cluster._k_means_common._euclidean_dense_dense(a, b, squared=True)`` for each row pair, summed in
    its order: four at a time, each four left to right, then those partial sums and the remainder in turn."""
    squared = A - B
    squared *= squared
    n, dims = squared.shape
    whole = dims - dims % 4
    fours = squared[:, :whole].reshape(n, whole // 4, 4)
    grouped = ((fours[:, :, 0] + fours[:, :, 1]) + fours[:, :, 2]) + fours[:, :, 3]
    result = np.zeros(n) if not whole else np.cumsum(grouped, axis=1)[:, -1]
    for column in range(whole, dims):
        result = result + squared[:, column]
    return result


def lloyd_step(
    X: np.ndarray,
    centers_old: np.ndarray,
    centers_new: Optional[np.ndarray],
    labels: np.ndarray,
    center_shift: Optional[np.ndarray],
) -> None:
    """One Lloyd iteration as ``sklearn.cluster._k_means_lloyd.lloyd_iter_chunked_dense`` on one thread,
    unit weights: labels from the nearest old center, then (when ``centers_new`` is given) the new
    centers and (when ``center_shift`` is given) how far each moved, all in place.

    Distances are ``||c||^2 - 2 x.c``, ties to the first center; a center is its points' sum in input order
    times the reciprocal of their count; an empty cluster takes the point farthest from its center.

    >>> X = np.array([[0.0], [1.0], [9.0]]); labels = np.zeros(3, dtype=np.int32); new = np.zeros((2, 1))
    >>> lloyd_step(X, np.array([[0.0], [8.0]]), new, labels, np.zeros(2)); labels.tolist(), new.ravel().tolist()
    ([0, 0, 1], [0.5, 9.0])
    """
    distances = X @ centers_old.T
    distances *= -2.0
    distances += np.einsum("ij,ij->i", centers_old, centers_old)
    labels[:] = distances.argmin(axis=1)
    if centers_new is None:
        return
    k = len(centers_old)
    counts = np.bincount(labels, minlength=k)
    weight = counts.astype(np.float64)
    # Each cluster's points summed in input order: a stable sort groups them, and numpy's
    # sum along the first axis adds row after row (its reduceat does not). Adding 0.0
    # makes a sum of negative zeros +0.0, as scikit-learn's sum into a zeroed buffer gives.
    grouped = X[np.argsort(labels, kind="stable")]
    ends = np.cumsum(counts).tolist()
    centers_new[:] = 0.0
    for j, (start, end) in enumerate(zip([0, *ends[:-1]], ends, strict=True)):
        if end > start:
            centers_new[j] = grouped[start:end].sum(axis=0) + 0.0
    if not counts.all():
        empty = np.flatnonzero(weight == 0)
        far = ((X - centers_old[labels]) ** 2).sum(axis=1)
        farthest = np.argpartition(far, -len(empty))[: -len(empty) - 1 : -1]
        if np.max(far) != 0:
            for new_id, index in zip(empty.tolist(), farthest.tolist(), strict=True):
                old_id = int(labels[index])
                centers_new[old_id] -= X[index]
                centers_new[new_id] = X[index]
                weight[new_id] = 1.0
                weight[old_id] -= 1.0
    if weight.all():
        centers_new *= (1.0 / weight)[:, None]  # the reciprocal, as scikit-learn scales (not a division)
    else:
        heaviest = int(np.argmax(weight))
        for j in range(k):  # in order: an empty cluster copies the heaviest center, scaled or not yet
            if weight[j] > 0:
                centers_new[j] *= 1.0 / weight[j]
            else:
                centers_new[j] = centers_new[heaviest]
    if center_shift is not None:
        center_shift[:] = np.sqrt(_squared_row_distances(centers_new, centers_old))


_PER_THREAD = threading.local()


def _seeded(seed: int) -> np.random.RandomState:
    """A generator in the state of ``np.random.RandomState(seed)``: seeding costs about a K-means run, so each
    thread keeps its last few seeded states and copies one into its one generator."""
    states = getattr(_PER_THREAD, "states", None)
    if states is None:
        states = _PER_THREAD.states = {}
        _PER_THREAD.generator = np.random.RandomState(np.random.MT19937(0))
    state = states.get(seed)
    if state is None:
        if len(states) >= 16:
            states.pop(next(iter(states)))
        state = states[seed] = np.random.RandomState(seed).get_state()
    generator = _PER_THREAD.generator
    generator.set_state(state)
    return generator


def _lloyd(
    X: np.ndarray,
    sample_weight: np.ndarray,
    centers_init: np.ndarray,
    tol: float,
    after_first_step: dict[bytes, tuple[np.ndarray, float, np.ndarray]],
    max_iter: int = 300,
) -> tuple[np.ndarray, float, np.ndarray]:
    """``sklearn.cluster._kmeans._kmeans_single_lloyd``: labels, inertia and centers of one run.

    After the first step a run depends only on its centers and labels, so ``after_first_step`` keeps each
    run's result by that state for another seed reaching it (about one in eight on answer embeddings).
    """
    k = centers_init.shape[0]
    centers = centers_init
    centers_new = np.zeros_like(centers)
    labels = np.full(X.shape[0], -1, dtype=np.int32)
    labels_old = labels.copy()
    center_shift = np.zeros(k, dtype=X.dtype)
    state: Optional[bytes] = None
    strict_convergence = False
    for i in range(max_iter):
        if i == 1:
            state = centers.tobytes() + labels_old.tobytes()
            known = after_first_step.get(state)
            if known is not None:
                return known[0].copy(), known[1], known[2].copy()
        lloyd_step(X, centers, centers_new, labels, None)
        if (labels == labels_old).all():
            strict_convergence = True
            centers = centers_new  # how far the centers moved is not needed then
            break
        center_shift[:] = np.sqrt(_squared_row_distances(centers_new, centers))
        centers, centers_new = centers_new, centers
        if (center_shift**2).sum() <= tol:
            break
        labels_old[:] = labels
    if not strict_convergence:
        # One more assignment, so that the labels match the final centers.
        lloyd_step(X, centers, None, labels, None)
    # sklearn.cluster._k_means_common._inertia_dense: the samples' squared distances summed in order.
    inertia = float(np.cumsum(_squared_row_distances(X, centers[labels]) * sample_weight)[-1])
    if state is not None:
        after_first_step[state] = (labels.copy(), inertia, centers.copy())
    return labels, inertia, centers


def kmeans_plusplus_like_sklearn(
    X: np.ndarray, k: int, x_squared_norms: np.ndarray, sample_weight: np.ndarray, random_state: np.random.RandomState
) -> np.ndarray:
    """k-means++ seeds as ``sklearn.cluster._kmeans._kmeans_plusplus`` picks them (dense float64).

    Its random numbers (a ``choice``, then ``uniform`` draws) come from one ``random_sample`` call: the legacy
    generator gives the same numbers, and ``choice`` picks by the same cumulative sum.

    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0]])
    >>> kmeans_plusplus_like_sklearn(X, 2, (X * X).sum(1), np.ones(3), np.random.RandomState(0)).shape
    (2, 2)
    """
    n_samples, n_features = X.shape
    centers = np.empty((k, n_features), dtype=X.dtype)
    n_local_trials = 2 + int(np.log(k))
    uniforms = random_state.random_sample(1 + (k - 1) * n_local_trials)
    cdf = (sample_weight / sample_weight.sum()).cumsum()
    cdf /= cdf[-1]
    center_id = int(cdf.searchsorted(uniforms[0], side="right"))
    centers[0] = X[center_id]
    closest_dist_sq = _squared_distances(centers[0, np.newaxis], X, x_squared_norms)
    current_pot = closest_dist_sq @ sample_weight
    for c in range(1, k):
        rand_vals = uniforms[1 + (c - 1) * n_local_trials : 1 + c * n_local_trials] * current_pot
        candidate_ids = np.searchsorted(np.cumsum(sample_weight * closest_dist_sq), rand_vals)
        np.minimum(candidate_ids, closest_dist_sq.size - 1, out=candidate_ids)
        distance_to_candidates = _squared_distances(X[candidate_ids], X, x_squared_norms)
        np.minimum(closest_dist_sq, distance_to_candidates, out=distance_to_candidates)
        candidates_pot = distance_to_candidates @ sample_weight.reshape(-1, 1)
        best_candidate = np.argmin(candidates_pot)
        current_pot = candidates_pot[best_candidate]
        closest_dist_sq = distance_to_candidates[best_candidate]
        centers[c] = X[candidate_ids[best_candidate]]
    return centers


def greedy_centers(X: np.ndarray, k: int) -> np.ndarray:
    """``k`` rows of ``X`` as starting centers, with no random draw: greedy k-means++ over every row.

    Each center is the row leaving the lowest sum of squared distances to the nearest chosen row, ties to the
    first (the more frequent answer). No matrix product, whose rounding depends on the BLAS kernel.

    >>> greedy_centers(np.array([[0.0], [0.1], [0.2], [5.0], [5.1]]), 2).ravel().tolist()
    [0.2, 5.0]
    """
    X = np.asarray(X, dtype=np.float64)
    if not 1 <= k <= len(X):
        raise ValueError(f"cannot choose {k} centers among {len(X)} rows")
    distances = np.stack([np.einsum("ij,ij->i", X - row, X - row) for row in X])
    closest = np.full(len(X), np.inf)
    chosen: list[int] = []
    for _ in range(k):
        potentials = np.minimum(closest[None, :], distances).sum(axis=1)
        potentials[chosen] = np.inf  # k never exceeds the distinct rows: an unchosen one always lowers more
        best = int(np.argmin(potentials))
        chosen.append(best)
        closest = np.minimum(closest, distances[best])
    return X[chosen].copy()


def _squared_distances(A: np.ndarray, X: np.ndarray, x_squared_norms: np.ndarray) -> np.ndarray:
    """``sklearn.metrics.pairwise._euclidean_distances(A, X, Y_norm_squared=..., squared=True)``, float64."""
    distances = -2 * (A @ X.T)
    distances += np.einsum("ij,ij->i", A, A)[:, None]
    distances += x_squared_norms.reshape(1, -1)
    np.maximum(distances, np.asarray(0, dtype=distances.dtype), out=distances)
    return distances


@lru_cache(maxsize=1)
def _thread_controller() -> Any:
    """One threadpoolctl controller per process: building one scans the loaded libraries (milliseconds)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_thread() -> Any:
    """A context in which NumPy's BLAS runs one thread: on tens of answers, threads were over ten times slower
    on a busy two-core machine.

    >>> with one_thread():
    ...     kmeans(np.array([[0.0], [1.0], [5.0]]), 2, seed=0).cluster_centers_.shape
    (2, 1)
    """
    return _thread_controller().limit(limits=1)
