"""K-means exactly as scikit-learn's :class:`~sklearn.cluster.KMeans` computes it, without its
per-call overhead, for the X-means and G-means clusterings (:mod:`cfc_probeval.clustering`).

A question has a few dozen answers, on which the estimator's input checks and thread
start-up cost ten times the arithmetic. :func:`kmeans` therefore runs scikit-learn's
own Lloyd iterations (private functions of ``sklearn.cluster``) with the estimator's
seeding and run selection written out here (:func:`kmeans_like_sklearn`). Whether those
private functions exist, and give the estimator's labels and centers bit for bit, is
checked once per process on a small problem with duplicate points; when they do not,
:func:`kmeans` runs the estimator itself, so the results never depend on which path ran.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple, Optional

import numpy as np

__all__ = ["KMeansFit", "kmeans", "kmeans_like_sklearn", "kmeans_plusplus_like_sklearn", "one_thread"]


class KMeansFit(NamedTuple):
    """The part of a fitted K-means that G-means and X-means read."""

    labels_: np.ndarray
    cluster_centers_: np.ndarray


def kmeans(points: np.ndarray, k: int, seed: int, init: Optional[np.ndarray] = None, n_init: int = 10) -> KMeansFit:
    """``KMeans(k, n_init=n_init, random_state=seed).fit(points)`` (or from ``init``), bit for bit.

    Runs scikit-learn's own Lloyd iterations through :func:`kmeans_like_sklearn`,
    without the estimator's per-call checks, which cost ten times the arithmetic on a
    question's few dozen answers. Falls back to the estimator itself when that
    scikit-learn does not have the internals relied on.

    >>> kmeans(np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0]]), 2, seed=0).labels_.tolist() in ([0, 0, 1], [1, 1, 0])
    True
    """
    fast = kmeans_like_sklearn(points, k, seed, init=init, n_init=n_init)
    if fast is not None:
        return fast
    from sklearn.cluster import KMeans

    with warnings.catch_warnings():
        # Duplicate points can leave fewer distinct clusters than asked; that is fine here.
        warnings.filterwarnings("ignore", message="Number of distinct clusters")
        if init is None:
            model = KMeans(n_clusters=k, n_init=n_init, random_state=seed)
        else:
            model = KMeans(n_clusters=k, init=init, n_init=1, random_state=seed)
        model.fit(points)
    return KMeansFit(model.labels_, model.cluster_centers_)


@lru_cache(maxsize=1)
def _sklearn_lloyd() -> Optional[tuple[Callable, Callable, Callable, Callable]]:
    """scikit-learn's Lloyd step, inertia, clustering comparison and thread count, if it has them.

    None (use the estimator) when they are missing or, on a small problem with
    duplicate points, :func:`kmeans_like_sklearn` does not give the estimator's result.
    """
    try:
        from sklearn.cluster import KMeans
        from sklearn.cluster._k_means_common import _inertia_dense, _is_same_clustering
        from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
    except ImportError:  # other scikit-learn layouts use the estimator
        return None
    parts = (lloyd_iter_chunked_dense, _inertia_dense, _is_same_clustering, _openmp_effective_n_threads)
    points = np.random.default_rng(0).normal(size=(12, 3)).round(1)
    points[6:9] = points[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = KMeans(n_clusters=3, n_init=4, random_state=7).fit(points)
            got = _kmeans_with(parts, points, 3, 7, None, 4)
    except Exception:  # noqa: BLE001 - internals with other signatures use the estimator
        return None
    same = np.array_equal(got.labels_, expected.labels_) and np.array_equal(
        got.cluster_centers_, expected.cluster_centers_
    )
    return parts if same else None


def kmeans_like_sklearn(
    points: np.ndarray, k: int, seed: int, init: Optional[np.ndarray] = None, n_init: int = 10
) -> Optional[KMeansFit]:
    """Labels and centers equal bit for bit to scikit-learn's ``KMeans(...).fit(points)``.

    Follows ``KMeans.fit`` for dense float64 input, unit weights and Lloyd's
    algorithm: the tolerance from the uncentred data, centring, k-means++ seeding
    (:func:`kmeans_plusplus_like_sklearn`, drawing from one ``RandomState(seed)``
    across the ``n_init`` runs), scikit-learn's own Lloyd iterations, and the
    lowest-inertia run unless it is the same clustering as the best so far. With
    ``init`` there is one run from those centers. None when this scikit-learn lacks
    the internals used (the caller then runs the estimator);
    ``tests/cfc_probeval/test_kmeans.py`` checks the equality on every installed version.

    >>> pts = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> kmeans_like_sklearn(pts, 2, seed=0).labels_.tolist() in ([0, 0, 1, 1], [1, 1, 0, 0])
    True
    """
    parts = _sklearn_lloyd()
    return None if parts is None else _kmeans_with(parts, points, k, seed, init, n_init)


def _kmeans_with(
    parts: tuple[Callable, Callable, Callable, Callable],
    points: np.ndarray,
    k: int,
    seed: int,
    init: Optional[np.ndarray],
    n_init: int,
) -> KMeansFit:
    lloyd_step, inertia_of, same_clustering, effective_threads = parts
    X = np.array(points, dtype=np.float64, order="C", copy=True)
    if X.ndim != 2 or not 1 <= k <= len(X):
        raise ValueError(f"cannot make {k} clusters of {len(X)} points")
    tol = float(np.mean(np.var(X, axis=0))) * 1e-4  # before centring, as KMeans does
    sample_weight = np.ones(len(X), dtype=np.float64)
    n_threads = effective_threads()
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
        labels, inertia, centers = _lloyd(
            lloyd_step, inertia_of, X, sample_weight, centers_init, tol, n_threads, after_first_step
        )
        if best_inertia is None or (inertia < best_inertia and not same_clustering(labels, best_labels, k)):
            best_labels, best_centers, best_inertia = labels, centers, inertia
    if best_labels is None or best_centers is None:
        raise ValueError(f"n_init must be at least 1, not {n_init}")
    return KMeansFit(best_labels, best_centers + X_mean)


_PER_THREAD = threading.local()


def _seeded(seed: int) -> np.random.RandomState:
    """A generator in the state of ``np.random.RandomState(seed)``, for one K-means fit.

    Seeding the Mersenne Twister costs about as much as a K-means run on a question's
    answers, so each thread keeps the seeded state of its last few seeds and copies it
    into its one generator (a fit uses it up before the next fit starts).
    """
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
    lloyd_step: Callable,
    inertia_of: Callable,
    X: np.ndarray,
    sample_weight: np.ndarray,
    centers_init: np.ndarray,
    tol: float,
    n_threads: int,
    after_first_step: dict[bytes, tuple[np.ndarray, float, np.ndarray]],
    max_iter: int = 300,
) -> tuple[np.ndarray, float, np.ndarray]:
    """``sklearn.cluster._kmeans._kmeans_single_lloyd``: labels, inertia and centers of one run.

    After the first step a run depends only on its centers and labels; a run from
    another seed that reaches the same ones (about one in eight on answer
    embeddings) ends the same way:
    ``after_first_step`` keeps each such run's result, keyed by that state.
    """
    k = centers_init.shape[0]
    centers = centers_init
    centers_new = np.zeros_like(centers)
    labels = np.full(X.shape[0], -1, dtype=np.int32)
    labels_old = labels.copy()
    weight_in_clusters = np.zeros(k, dtype=X.dtype)
    center_shift = np.zeros(k, dtype=X.dtype)
    state: Optional[bytes] = None
    strict_convergence = False
    for i in range(max_iter):
        if i == 1:
            state = centers.tobytes() + labels_old.tobytes()
            known = after_first_step.get(state)
            if known is not None:
                return known[0].copy(), known[1], known[2].copy()
        lloyd_step(X, sample_weight, centers, centers_new, weight_in_clusters, labels, center_shift, n_threads)
        centers, centers_new = centers_new, centers
        if (labels == labels_old).all():
            strict_convergence = True
            break
        if (center_shift**2).sum() <= tol:
            break
        labels_old[:] = labels
    if not strict_convergence:
        # One more assignment, so that the labels match the final centers.
        lloyd_step(
            X,
            sample_weight,
            centers,
            centers,
            weight_in_clusters,
            labels,
            center_shift,
            n_threads,
            update_centers=False,
        )
    inertia = inertia_of(X, sample_weight, centers, labels, n_threads)
    if state is not None:
        after_first_step[state] = (labels.copy(), inertia, centers.copy())
    return labels, inertia, centers


def kmeans_plusplus_like_sklearn(
    X: np.ndarray, k: int, x_squared_norms: np.ndarray, sample_weight: np.ndarray, random_state: np.random.RandomState
) -> np.ndarray:
    """k-means++ seeds as ``sklearn.cluster._kmeans._kmeans_plusplus`` picks them (dense float64).

    The same operations in the same order (greedy, ``2 + int(log k)`` trials per
    center), without its input checks and array-namespace dispatch. Its random
    numbers (one ``choice`` with probabilities, then ``uniform`` draws) are taken in
    one ``random_sample`` call: the legacy generator gives the same numbers, and
    ``choice`` picks the index by the same cumulative sum.

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

    _sklearn_lloyd()  # load scikit-learn's OpenMP library first, so that the controller limits it too
    return ThreadpoolController()


def one_thread() -> Any:
    """A context in which the thread pools of scikit-learn and NumPy's BLAS run one thread.

    A question has tens of answers: thread start-up costs far more than it saves
    (over ten times slower on a busy two-core machine).

    >>> with one_thread():
    ...     kmeans(np.array([[0.0], [1.0], [5.0]]), 2, seed=0).cluster_centers_.shape
    (2, 1)
    """
    return _thread_controller().limit(limits=1)
