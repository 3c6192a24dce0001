"""K-means on scikit-learn's private Lloyd iterations: the estimator's result bit for bit, and
the self-check that falls back to the estimator when the private functions change."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from cfc_probeval import kmeans as kmeans_module
from cfc_probeval.kmeans import kmeans, kmeans_like_sklearn, one_thread
from tests.support.lazy import lazy_import

sklearn_cluster = lazy_import("sklearn.cluster")


def _kmeans_cases():
    """Small K-means problems like a question's answers: few points, many dimensions, duplicates."""
    rng = np.random.default_rng(11)
    cases = []
    for trial in range(60):
        n = int(rng.integers(2, 70))
        dims = int(rng.choice([2, 7, 384]))
        points = rng.normal(size=(n, dims))
        if trial % 3 == 0:
            points[: n // 2] = points[0]  # duplicate rows
        if trial % 5 == 0:
            points = points.round(1)
        k = int(rng.integers(1, min(n, 6) + 1))
        init = points[rng.choice(n, k, replace=False)] + 0.01 if trial % 4 == 0 else None
        cases.append((points, k, int(rng.integers(0, 2**31)), init))
    # Three well separated blobs of unit-length directions, as sentence embeddings come.
    centers = rng.normal(size=(3, 384))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    blobs = np.vstack([c + rng.normal(0, 0.05, size=(20, 384)) for c in centers])
    cases.append((blobs[rng.permutation(len(blobs))], 3, 0, None))
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


def test_kmeans_like_sklearn_equals_the_estimator_bit_for_bit():
    for points, k, seed, init in _kmeans_cases():
        with threadpool_limits(limits=1):
            expected = _estimator(points, k, seed, init)
            got = kmeans_like_sklearn(points, k, seed, init=init)
        assert got is not None
        assert np.array_equal(got.labels_, expected.labels_)
        assert np.array_equal(got.cluster_centers_, expected.cluster_centers_)


def test_the_self_check_passes_on_the_installed_scikit_learn():
    import sklearn

    assert kmeans_module._sklearn_lloyd() is not None, (
        f"scikit-learn {sklearn.__version__}: its private K-means functions are missing or no longer give "
        "the estimator's result; cfc_probeval/kmeans.py falls back to the (slower) estimator"
    )


@pytest.fixture
def fresh_self_check():
    """The self-check runs again in the test, and again after it (its result is cached per process)."""
    kmeans_module._sklearn_lloyd.cache_clear()
    yield
    kmeans_module._sklearn_lloyd.cache_clear()


def _wrong_centers(parts, points, k, seed, init, n_init):
    fit = _right_kmeans_with(parts, points, k, seed, init, n_init)
    return kmeans_module.KMeansFit(fit.labels_, fit.cluster_centers_ + 1e-12)


def _other_signature(*args, **kwargs):
    raise TypeError("lloyd_iter_chunked_dense() takes 9 positional arguments")


_right_kmeans_with = kmeans_module._kmeans_with


@pytest.mark.parametrize("damage", ["missing module", "other result", "other signature"])
def test_when_the_self_check_fails_the_estimator_runs(monkeypatch, fresh_self_check, damage):
    if damage == "missing module":
        monkeypatch.setitem(sys.modules, "sklearn.cluster._k_means_lloyd", None)  # import raises ImportError
    else:
        monkeypatch.setattr(
            kmeans_module, "_kmeans_with", _wrong_centers if damage == "other result" else _other_signature
        )
    assert kmeans_module._sklearn_lloyd() is None
    for points, k, seed, init in _kmeans_cases()[:12]:
        assert kmeans_like_sklearn(points, k, seed, init=init) is None
        with one_thread():
            got = kmeans(points, k, seed, init=init)
        expected = _estimator(points, k, seed, init)
        assert np.array_equal(got.labels_, expected.labels_)
        assert np.array_equal(got.cluster_centers_, expected.cluster_centers_)


def test_kmeans_takes_the_fast_path_when_the_self_check_passes(monkeypatch):
    def estimator_not_expected(*args, **kwargs):
        raise AssertionError("the estimator ran although the self-check passed")

    assert kmeans_module._sklearn_lloyd() is not None  # checked (with the estimator) before it is taken away
    monkeypatch.setattr("sklearn.cluster.KMeans", estimator_not_expected)
    points, k, seed, init = _kmeans_cases()[-1]
    assert kmeans(points, k, seed, init=init).labels_.tolist() == kmeans_like_sklearn(points, k, seed).labels_.tolist()
