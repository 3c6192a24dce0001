"""K-means in numpy: scikit-learn's KMeans result bit for bit, and no scikit-learn at run time."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from cfc_probeval.kmeans import greedy_centers, kmeans, lloyd_step, one_thread
from tests.support.lazy import lazy_import
from tests.support.processes import run_python

sklearn_cluster = lazy_import("sklearn.cluster")
REPO = Path(__file__).resolve().parents[2]


def _kmeans_cases():
    """Small K-means problems like a question's answers: few points, many dimensions, duplicates, empty clusters."""
    rng = np.random.default_rng(11)
    cases = []
    for trial in range(120):
        n = int(rng.integers(2, 70))
        dims = int(rng.choice([2, 7, 383, 384]))  # 383: the distance sums' remainder after groups of four
        points = rng.normal(size=(n, dims))
        if trial % 3 == 0:
            points[: n // 2] = points[0]  # duplicate rows
        if trial % 5 == 0:
            points = points.round(1)
        k = int(rng.integers(1, min(n, 6) + 1))
        init = points[rng.choice(n, k, replace=False)] + 0.01 if trial % 4 == 0 else None
        if trial % 7 == 0 and k > 1:
            init = np.vstack([points[:1] + 0.01, np.full((k - 1, dims), 100.0)])  # centers no point is nearest
        cases.append((points, k, int(rng.integers(0, 2**31)), init))
    # Three well separated blobs of unit-length directions, as sentence embeddings come.
    centers = rng.normal(size=(3, 384))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    blobs = np.vstack([c + rng.normal(0, 0.05, size=(20, 384)) for c in centers])
    cases.append((blobs[rng.permutation(len(blobs))], 3, 0, None))
    # More points than one of scikit-learn's chunks (256), rounded as embeddings are.
    cases.append((rng.normal(size=(300, 16)).round(4), 5, 3, None))
    return cases


def _estimator(points, k, seed, init):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = (
            sklearn_cluster.KMeans(n_clusters=k, n_init=10, random_state=seed)
            if init is None
            else sklearn_cluster.KMeans(n_clusters=k, init=init, n_init=1, random_state=seed)
        )
        return model.fit(points)


def test_kmeans_equals_the_estimator_bit_for_bit():
    for points, k, seed, init in _kmeans_cases():
        with threadpool_limits(limits=1):
            expected = _estimator(points, k, seed, init)
            with one_thread():
                got = kmeans(points, k, seed, init=init)
        assert np.array_equal(got.labels_, expected.labels_)
        assert np.array_equal(got.cluster_centers_, expected.cluster_centers_)


def test_lloyd_step_equals_scikit_learns_step_with_an_empty_cluster():
    from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 9))
    old = np.vstack([X[:3], np.full((2, 9), 50.0)])  # the last two centers are nobody's nearest
    ours = (np.zeros_like(old), np.zeros(40, dtype=np.int32), np.zeros(5))
    theirs = (np.zeros_like(old), np.zeros(40, dtype=np.int32), np.zeros(5))
    lloyd_step(X, old, ours[0], ours[1], ours[2])
    lloyd_iter_chunked_dense(X, np.ones(40), old, theirs[0], np.zeros(5), theirs[1], theirs[2], 1)
    for a, b in zip(ours, theirs, strict=True):
        assert np.array_equal(a, b)


def test_clustering_imports_no_scikit_learn(tmp_path):
    """G-means and X-means run without importing scikit-learn (2.7 s of CPU and 150 MB)."""
    code = (
        "import json, sys\nimport numpy as np\nfrom cfc_probeval.clustering import GMeansClusterer, XMeansClusterer\n"
        "pts = np.random.default_rng(0).normal(size=(40, 8))\n"
        "GMeansClusterer(k_init=2).fit_labels(pts); XMeansClusterer(k_init=2).fit_labels(pts)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = run_python(["-c", code], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_greedy_centers_each_lower_the_potential_most_with_ties_to_the_first_row():
    rng = np.random.default_rng(3)
    points = np.round(rng.normal(size=(25, 6)), 4)
    centers = greedy_centers(points, 5)
    squared = ((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2)
    closest, chosen = np.full(len(points), np.inf), []
    for center in centers:
        row = int(np.flatnonzero((points == center).all(axis=1))[0])
        potentials = [np.minimum(closest, squared[i]).sum() for i in range(len(points))]
        assert np.isclose(potentials[row], min(p for i, p in enumerate(potentials) if i not in chosen))
        chosen.append(row)
        closest = np.minimum(closest, squared[row])
    # Two rows that lower the potential equally: the first wins, so the order of the rows decides, not a draw.
    assert greedy_centers(np.array([[0.0], [1.0], [3.0], [4.0]]), 1).tolist() == [[1.0]]
    assert greedy_centers(np.array([[4.0], [3.0], [1.0], [0.0]]), 1).tolist() == [[3.0]]
    with pytest.raises(ValueError, match="cannot choose 5 centers among 4 rows"):
        greedy_centers(points[:4], 5)


def test_kmeans_from_greedy_centers_reads_no_seed():
    rng = np.random.default_rng(5)
    points = np.vstack([rng.normal(c, 0.3, size=(12, 4)) for c in (0.0, 3.0, 6.0)])
    fits = [kmeans(points, 3, seed, init=greedy_centers(points, 3)) for seed in (0, 1, 12345)]
    assert all(np.array_equal(f.labels_, fits[0].labels_) for f in fits)
    assert all(np.array_equal(f.cluster_centers_, fits[0].cluster_centers_) for f in fits)
