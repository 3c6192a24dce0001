"""Clusterers on synthetic embeddings: recovery of well separated clusters, their number, determinism."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cfc_probeval.clustering import (
    GMeansClusterer,
    HACClusterer,
    XMeansClusterer,
    canonical_labels,
    make_clusterer,
    spherical_bic,
)
from tests.support.lazy import lazy_import

sklearn_metrics = lazy_import("sklearn.metrics")
sklearn_cluster = lazy_import("sklearn.cluster")


def blobs(num_clusters: int, per_cluster: int = 25, dims: int = 16, spread: float = 0.05, seed: int = 0):
    """Well separated Gaussian blobs around random unit directions, and their true labels."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(num_clusters, dims))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    points = np.vstack([c + rng.normal(0, spread, size=(per_cluster, dims)) for c in centers])
    labels = np.repeat(np.arange(num_clusters), per_cluster)
    order = rng.permutation(len(points))  # interleave the clusters
    return points[order], labels[order]


@pytest.mark.parametrize("method", ["average", "complete", "single"])
def test_hac_recovers_separated_clusters(method):
    points, truth = blobs(4)
    labels = HACClusterer(method, distance_threshold=0.3).fit_labels(points)
    assert sklearn_metrics.adjusted_rand_score(truth, labels) == 1.0


def test_hac_ward_on_unit_rows_recovers_separated_clusters():
    points, truth = blobs(3)
    labels = HACClusterer("ward", distance_threshold=1.0, metric="euclidean").fit_labels(points)
    assert sklearn_metrics.adjusted_rand_score(truth, labels) == 1.0


def test_hac_threshold_controls_the_number_of_clusters():
    points, _ = blobs(4)
    assert len(set(HACClusterer("average", 1e-9).fit_labels(points))) == len(points)
    assert len(set(HACClusterer("average", 2.0).fit_labels(points))) == 1


def test_hac_survives_zero_vectors():
    points = np.array([[1.0, 0.0], [0.99, 0.01], [0.0, 0.0], [0.0, 1.0]])
    labels = HACClusterer("average", 0.2).fit_labels(points)
    assert labels[0] == labels[1] and len(set(labels)) == 3


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("cls", [XMeansClusterer, GMeansClusterer])
def test_splitting_kmeans_finds_the_number_of_clusters_from_one(cls, k):
    points, truth = blobs(k, seed=k)
    labels = cls(k_init=1).fit_labels(points)
    assert len(set(labels)) == k
    assert sklearn_metrics.adjusted_rand_score(truth, labels) == 1.0


@pytest.mark.parametrize("cls", [XMeansClusterer, GMeansClusterer])
def test_splitting_kmeans_does_not_split_a_single_gaussian(cls):
    points, _ = blobs(1, per_cluster=60, seed=3)
    assert len(set(cls(k_init=1).fit_labels(points))) == 1


@pytest.mark.parametrize("cls", [XMeansClusterer, GMeansClusterer])
def test_k_max_caps_the_number_of_clusters(cls):
    points, _ = blobs(5, seed=5)
    assert len(set(cls(k_init=1, k_max=3).fit_labels(points))) == 3


@pytest.mark.parametrize("clusterer", [HACClusterer(), XMeansClusterer(k_init=2), GMeansClusterer(k_init=2)])
def test_same_input_same_labels(clusterer):
    points, _ = blobs(4, seed=11)
    first = clusterer.fit_labels(points)
    assert np.array_equal(first, clusterer.fit_labels(points.copy()))
    assert first[0] == 0  # numbered by first appearance


def test_a_single_answer_or_duplicates_only_form_one_cluster():
    assert GMeansClusterer(k_init=4).fit_labels(np.ones((1, 3))).tolist() == [0]
    assert XMeansClusterer(k_init=4).fit_labels(np.ones((5, 3))).tolist() == [0] * 5


def test_bic_prefers_two_clusters_for_two_blobs_and_one_for_one():
    two, truth = blobs(2, per_cluster=30, dims=4, seed=1)
    one_center = two.mean(axis=0, keepdims=True)
    two_centers = np.vstack([two[truth == j].mean(axis=0) for j in (0, 1)])
    assert spherical_bic(two, truth, two_centers) > spherical_bic(two, np.zeros(len(two), int), one_center)
    single, _ = blobs(1, per_cluster=60, dims=4, seed=2)
    halves = (single[:, 0] > np.median(single[:, 0])).astype(int)
    centers = np.vstack([single[halves == j].mean(axis=0) for j in (0, 1)])
    assert spherical_bic(single, halves, centers) < spherical_bic(
        single, np.zeros(len(single), int), single.mean(axis=0, keepdims=True)
    )


def test_canonical_labels_number_by_first_appearance():
    assert canonical_labels(np.array([7, 3, 7, 1])).tolist() == [0, 1, 0, 2]


def test_make_clusterer_applies_defaults_and_rejects_bad_settings():
    assert make_clusterer("human") is None
    assert make_clusterer("hac", linkage="complete", distance_threshold=0.7).params() == {
        "linkage": "complete",
        "threshold": 0.7,
        "metric": "cosine",
    }
    with pytest.raises(ValueError, match="unknown clustering"):
        make_clusterer("kmeans")
    with pytest.raises(ValueError, match="needs metric='euclidean'"):
        HACClusterer("ward")
    with pytest.raises(ValueError, match="alpha"):
        GMeansClusterer(alpha=0.02)
    with pytest.raises(ValueError, match="k_init"):
        XMeansClusterer(k_init=5, k_max=3)


@pytest.mark.parametrize("method", ["single", "complete", "average", "weighted", "centroid", "median", "ward"])
def test_flat_clusters_equal_scipy_fcluster(method):
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist

    from cfc_probeval.clustering import flat_clusters

    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(60):
        n = int(rng.integers(2, 40))
        points = rng.normal(size=(n, 5))
        if trial % 3 == 0:
            points = np.round(points, 0)  # ties and duplicate points
        tree = linkage(pdist(points), method=method)
        for threshold in [0.0, *np.quantile(tree[:, 2], [0.1, 0.5, 0.9]), float(tree[:, 2].max()) + 1]:
            expected = canonical_labels(fcluster(tree, t=threshold, criterion="distance"))
            assert canonical_labels(flat_clusters(tree, threshold)).tolist() == expected.tolist()
            checked += 1
    assert checked == 300


def test_anderson_statistic_agrees_with_scipy():
    from scipy.stats import anderson

    from cfc_probeval.clustering import anderson_normal_statistic

    rng = np.random.default_rng(5)
    checked = 0
    for trial in range(160):
        n = int(rng.integers(3, 150))
        x = rng.normal(size=n) * rng.uniform(1e-3, 1e3) if trial % 4 else rng.exponential(size=n)
        if trial % 3 == 0:
            x = x.round(1)
        if trial % 7 == 0:
            x[0] = 1e3 * np.ptp(x) + x.max()  # one far outlier: standardized values near sqrt(n)
        if np.ptp(x) == 0:
            continue
        expected = float(anderson(x, "norm", method="interpolate").statistic)
        assert anderson_normal_statistic(x) == pytest.approx(expected, rel=1e-12, abs=0)
        checked += 1
    assert checked > 140


def test_log_ndtr_agrees_with_scipy_on_a_grid_and_in_the_tails():
    from scipy.special import log_ndtr

    from cfc_probeval.clustering import _log_ndtr

    grid = np.concatenate(
        [
            np.linspace(-60, 37, 4001),  # beyond 37.5 the upper tail's value is subnormal in both
            [-20.0, np.nextafter(-20.0, 0), np.nextafter(-20.0, -30), -1.0, np.nextafter(-1.0, 0), 0.0, -0.0],
            -np.logspace(0, 150, 301),  # the lower tail, far out
            np.logspace(-300, 1.5, 301),
            -np.logspace(-300, 1.5, 301),
        ]
    )
    ours = np.array([_log_ndtr(float(x)) for x in grid])
    np.testing.assert_allclose(ours, log_ndtr(grid), rtol=1e-12, atol=0)
    assert _log_ndtr(-np.inf) == -np.inf and _log_ndtr(np.inf) == 0.0 and np.isnan(_log_ndtr(np.nan))


def _kmeans_by_the_estimator(points, k, seed, init=None, n_init=10):
    from threadpoolctl import threadpool_limits

    from cfc_probeval.kmeans import KMeansFit

    # The estimator's sums follow its thread count; the numpy K-means is its one-thread result.
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")  # fewer distinct points than clusters
        if init is None:
            model = sklearn_cluster.KMeans(n_clusters=k, n_init=n_init, random_state=seed)
        else:
            model = sklearn_cluster.KMeans(n_clusters=k, init=init, n_init=1, random_state=seed)
        model.fit(points)
    return KMeansFit(model.labels_, model.cluster_centers_)


@pytest.mark.slow
@pytest.mark.parametrize(
    "make", [lambda: GMeansClusterer(k_init=4), lambda: GMeansClusterer(k_init=1), lambda: XMeansClusterer(k_init=2)]
)
def test_splitting_kmeans_labels_equal_those_of_the_estimator_and_scipy(shared_data, monkeypatch, make):
    """On real answers, the same labels as with scikit-learn's KMeans and SciPy's anderson throughout."""
    from scipy.stats import anderson

    import cfc_probeval.clustering as clustering
    import cfc_probeval.kmeans as kmeans
    from cfc_probeval import read_targets
    from cfc_probeval.embedders import CharNgramEmbedder

    truths = read_targets(shared_data / "cfc" / "dev.targets.jsonl")
    embedder = CharNgramEmbedder()
    matrices = [embedder.embed(sorted(t.answer_counts)) for t in list(truths.values())[:30]]
    fast = [make().fit_labels(m).tolist() for m in matrices]
    monkeypatch.setattr(kmeans, "kmeans", _kmeans_by_the_estimator)
    monkeypatch.setattr(
        clustering, "anderson_normal_statistic", lambda x: float(anderson(x, "norm", method="interpolate").statistic)
    )
    assert [make().fit_labels(m).tolist() for m in matrices] == fast


def test_gmeans_and_xmeans_import_neither_scipy_nor_numpy_ma():
    """Their statistic and their counts are computed without SciPy (0.2 s to import) or numpy.ma."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from cfc_probeval.clustering import GMeansClusterer, XMeansClusterer\n"
        "rng = np.random.default_rng(0)\n"
        "pts = np.vstack([rng.normal(c, 0.05, size=(30, 10)) for c in np.eye(10)[:3]])\n"
        "assert len(set(GMeansClusterer(k_init=1).fit_labels(pts))) == 3\n"
        "assert len(set(XMeansClusterer(k_init=1).fit_labels(pts))) == 3\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'sklearn') or m == 'numpy.ma'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_gmeans_from_greedy_centers_gives_one_partition_at_every_seed_and_no_seed_in_its_signature():
    rng = np.random.default_rng(1)
    points = np.vstack([rng.normal(c, 0.05, size=(15, 10)) for c in np.eye(10)[:5]])
    points = np.vstack(
        [points, rng.normal(0.5, 0.2, size=(20, 10))]
    )  # a diffuse group the seeded starts split variously
    labels = {
        seed: GMeansClusterer(k_init=3, seed=seed, init="greedy").fit_labels(points).tolist() for seed in range(6)
    }
    assert all(v == labels[0] for v in labels.values())
    assert len(set(labels[0][:75])) >= 5
    assert "seed" not in GMeansClusterer(init="greedy").params()
    assert GMeansClusterer(init="kmeans++", seed=3).params()["seed"] == 3
    with pytest.raises(ValueError, match="init must be one of kmeans\\+\\+, greedy"):
        GMeansClusterer(init="random")
