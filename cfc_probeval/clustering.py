"""Clustering answer embeddings: hierarchical agglomerative, X-means and G-means.

Every clusterer takes one row per distinct answer string and returns one label per
row. Labels are numbered by first appearance (row 0 is always in cluster 0), so the
same input gives the same labels whatever the algorithm numbered internally.

HAC works on cosine distances (or Euclidean distances of unit-length rows). X-means and
G-means work on the vectors as given, like the paper's code: their Gaussian models
assume spread in every dimension, and scaling rows to unit length removes the radial
one, which makes X-means split clusters that are whole (sentence-transformers vectors,
the default, have unit length anyway).

X-means and G-means are written on scikit-learn's :class:`~sklearn.cluster.KMeans`
(with a fixed ``random_state``; computed as :mod:`cfc_probeval.kmeans` says) instead of
the unmaintained pyclustering used by the ProbEval paper's code:

* X-means (Pelleg & Moore, 2000) splits a cluster in two when the Bayesian
  information criterion of a spherical Gaussian model of its points improves;
* G-means (Hamerly & Elkan, 2003) splits a cluster when its points, projected on the
  axis joining the two candidate children, fail an Anderson-Darling normality test.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from protoqa_core.registry import Registry
from protoqa_core.similarity.embedding import unit_rows

from .defaults import DEFAULTS, GMEANS_CRITICAL_VALUES, check_k_range, check_option
from .kmeans import KMeansFit, kmeans, one_thread

__all__ = [
    "Clusterer",
    "HACClusterer",
    "XMeansClusterer",
    "GMeansClusterer",
    "CLUSTERINGS",
    "ClusteringOptions",
    "make_clusterer",
    "canonical_labels",
    "flat_clusters",
    "spherical_bic",
]

_EUCLIDEAN_ONLY = ("centroid", "median", "ward")


@dataclass(frozen=True)
class ClusteringOptions:
    """The options every clustering is built from (:meth:`Clusterer.from_options`); None is the package default.

    >>> ClusteringOptions(k_init=2).k_max is None
    True
    """

    linkage_method: Optional[str] = None
    distance_threshold: Optional[float] = None
    k_init: Optional[int] = None
    k_max: Optional[int] = None
    alpha: Optional[float] = None
    seed: int = 0


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel clusters 0, 1, 2, ... in order of first appearance.

    >>> canonical_labels(np.array([5, 5, 2, 9, 2])).tolist()
    [0, 0, 1, 2, 1]
    """
    mapping: dict[int, int] = {}
    return np.array([mapping.setdefault(int(x), len(mapping)) for x in labels], dtype=int)


class Clusterer(ABC):
    """Groups the rows of an embedding matrix; ``name`` and :meth:`params` go in signatures."""

    name: str = "clusterer"

    @classmethod
    def from_options(cls, options: ClusteringOptions) -> Clusterer:
        """This clustering from the shared options, with the package defaults (:data:`DEFAULTS`) for unset ones;
        an option it does not read is ignored. A clustering registered in :data:`CLUSTERINGS` defines it."""
        raise TypeError(f"{cls.__qualname__} defines no from_options, so it cannot be built by name")

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The settings that determine the result, for the reproducibility signature."""

    @abstractmethod
    def _labels(self, vectors: np.ndarray) -> np.ndarray:
        """Labels for the rows of ``vectors`` (at least two of them)."""

    def fit_labels(self, vectors: np.ndarray) -> np.ndarray:
        """One cluster label per row of ``vectors``, numbered by first appearance.

        >>> HACClusterer(threshold=0.5).fit_labels(np.array([[1.0, 0], [0.9, 0.1], [0, 1.0]])).tolist()
        [0, 0, 1]
        """
        vectors = np.asarray(vectors, dtype=np.float64)
        if vectors.ndim != 2:
            raise ValueError(f"expected a 2-D matrix of embeddings, got shape {vectors.shape}")
        if len(vectors) <= 1:
            return np.zeros(len(vectors), dtype=int)
        return canonical_labels(self._labels(vectors))


def _builds_itself(name: str, clustering: Optional[type[Clusterer]]) -> None:
    """The check of :data:`CLUSTERINGS`: a clustering class builds itself from the shared options.

    >>> _builds_itself("plain", Clusterer)
    Traceback (most recent call last):
    ...
    TypeError: clustering 'plain': Clusterer defines no from_options
    """
    if clustering is not None and clustering.from_options.__func__ is Clusterer.from_options.__func__:  # type: ignore[attr-defined]
        raise TypeError(f"clustering {name!r}: {clustering.__qualname__} defines no from_options")


CLUSTERINGS: Registry[Optional[type[Clusterer]]] = Registry("clustering", check=_builds_itself)
"""Ground-truth clusterings by name: ``human`` (the data's human clusters, no clusterer) and the
automatic ones, each a :class:`Clusterer` class registered with ``@CLUSTERINGS.register(name)``."""
CLUSTERINGS.add("human", None)


@CLUSTERINGS.register("hac")
class HACClusterer(Clusterer):
    """Hierarchical agglomerative clustering cut at a distance threshold (scipy).

    Args:
        method: linkage method (``average``, ``complete``, ``single``, ``weighted``,
            or ``ward``/``centroid``/``median`` with ``metric="euclidean"``).
        threshold: clusters are merged while their linkage distance is at most this.
        metric: ``cosine`` (1 - cosine similarity) or ``euclidean`` (of unit rows).

    >>> HACClusterer("average", 0.3).params()
    {'linkage': 'average', 'threshold': 0.3, 'metric': 'cosine'}
    """

    name = "hac"

    def __init__(self, method: str = "average", threshold: float = 0.5, metric: str = "cosine") -> None:
        check_option("linkage", method)
        threshold = check_option("distance_threshold", threshold)
        if metric not in ("cosine", "euclidean"):
            raise ValueError(f"unknown metric {metric!r}; choose cosine or euclidean")
        if method in _EUCLIDEAN_ONLY and metric != "euclidean":
            raise ValueError(f"linkage {method!r} needs metric='euclidean'")
        self.method, self.threshold, self.metric = method, float(threshold), metric

    @classmethod
    def from_options(cls, options: ClusteringOptions) -> HACClusterer:
        threshold = options.distance_threshold
        return cls(
            options.linkage_method or DEFAULTS.hac_linkage, DEFAULTS.hac_threshold if threshold is None else threshold
        )

    def params(self) -> dict[str, Any]:
        return {"linkage": self.method, "threshold": self.threshold, "metric": self.metric}

    def _labels(self, vectors: np.ndarray) -> np.ndarray:
        # scipy.cluster costs 0.2-0.4 s to import; only this clustering needs it.
        from scipy.cluster.hierarchy import linkage
        from scipy.spatial.distance import pdist

        distances = pdist(unit_rows(vectors), metric=self.metric)
        # A zero vector (an answer with no known word) has no cosine; treat it as
        # unrelated to everything rather than letting NaN poison the linkage.
        distances = np.nan_to_num(distances, nan=1.0)
        tree = linkage(distances, method=self.method)
        return flat_clusters(tree, self.threshold)


def flat_clusters(tree: np.ndarray, threshold: float) -> np.ndarray:
    """``scipy.cluster.hierarchy.fcluster(tree, threshold, "distance")``, up to label names.

    Two leaves share a cluster when the highest merge on the path between them, and
    every merge below it, is at most ``threshold``: each merge's height is taken as the
    largest height in its subtree (as fcluster does, which matters for the
    non-monotone centroid and median linkages). Written with a union-find because
    fcluster's input checks cost more than the cut itself on a question's few dozen
    answers.

    >>> from scipy.cluster.hierarchy import linkage
    >>> tree = linkage(np.array([0.1, 0.9, 0.8]), method="complete")  # 3 points, condensed distances
    >>> flat_clusters(tree, 0.5).tolist()
    [0, 0, 2]
    """
    n = len(tree) + 1
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    heights = [0.0] * (2 * n - 1)
    leaf_of = list(range(n)) + [0] * (n - 1)  # a leaf under each node
    for k, (a, b, height, _) in enumerate(tree):
        a, b, node = int(a), int(b), n + k
        heights[node] = max(float(height), heights[a], heights[b])
        leaf_of[node] = leaf_of[a]
        if heights[node] <= threshold:
            parent[find(leaf_of[b])] = find(leaf_of[a])
    return np.array([find(i) for i in range(n)], dtype=int)


def spherical_bic(points: np.ndarray, labels: np.ndarray, centers: np.ndarray) -> float:
    """Bayesian information criterion of a hard-assigned spherical Gaussian mixture.

    Pelleg & Moore's X-means criterion, with one variance per dimension shared by the
    clusters: ``log-likelihood - p/2 * log(R)`` for ``R`` points, ``K`` clusters in
    ``M`` dimensions and ``p = (K - 1) + K*M + 1`` parameters. Higher is better;
    ``-inf`` when there are no more points than clusters.

    >>> pts = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> one = spherical_bic(pts, np.zeros(4, int), pts.mean(0, keepdims=True))
    >>> two = spherical_bic(pts, np.array([0, 0, 1, 1]), np.array([[0.05], [5.05]]))
    >>> two > one
    True
    """
    n, dims = points.shape
    k = len(centers)
    if n <= k:
        return -math.inf
    squared = float(np.sum((points - centers[labels]) ** 2))
    variance = max(squared / (dims * (n - k)), 1e-12)
    sizes = np.bincount(labels, minlength=k).astype(float)
    sizes = sizes[sizes > 0]
    log_likelihood = (
        float(np.sum(sizes * np.log(sizes / n))) - n * dims / 2 * math.log(2 * math.pi * variance) - dims * (n - k) / 2
    )
    parameters = (k - 1) + k * dims + 1
    return log_likelihood - parameters / 2 * math.log(n)


def _distinct_rows(vectors: np.ndarray, at_least: Optional[int] = None) -> int:
    """How many distinct rows ``vectors`` has (counting stops at ``at_least`` when given).

    ``len(np.unique(vectors, axis=0))``, from the rows' bytes: that sorts the whole
    matrix, which cost as much as the clustering itself. Rows are float64, and
    -0.0 and 0.0 (equal, different bytes) are made equal first.

    >>> _distinct_rows(np.array([[0.0, 1.0], [-0.0, 1.0], [2.0, 1.0]]))
    2
    """
    rows = np.ascontiguousarray(vectors, dtype=np.float64) + 0.0  # -0.0 + 0.0 is 0.0
    if np.isnan(rows).any():
        return len(np.unique(rows, axis=0))  # NaN rows: keep numpy's notion of equal
    seen: set[bytes] = set()
    for row in rows:
        seen.add(row.tobytes())
        if at_least is not None and len(seen) >= at_least:
            break
    return len(seen)


class _SplittingKMeans(Clusterer):
    """K-means from ``k_init`` centers, then split clusters while a test says so, up to ``k_max``."""

    def __init__(self, k_init: int = 1, k_max: int = 20, seed: int = 0, n_init: int = 10) -> None:
        k_init, k_max = check_k_range(k_init, k_max)
        self.k_init, self.k_max, self.seed, self.n_init = k_init, k_max, check_option("seed", seed), int(n_init)

    def params(self) -> dict[str, Any]:
        return {"k_init": self.k_init, "k_max": self.k_max, "seed": self.seed}

    @staticmethod
    def _k_range(options: ClusteringOptions, default_k_init: int) -> tuple[Any, Any]:
        """``k_init`` and ``k_max`` with their defaults; an unset ``k_init`` never exceeds the ``k_max`` chosen."""
        k_max = DEFAULTS.k_max if options.k_max is None else options.k_max
        return _default_k_init(default_k_init, k_max) if options.k_init is None else options.k_init, k_max

    @abstractmethod
    def _split_strength(self, points: np.ndarray, children) -> Optional[float]:
        """How strongly the test favours replacing ``points``' cluster by ``children``, or None."""

    @abstractmethod
    def _min_split_size(self) -> int:
        """Clusters with fewer points than this are never split."""

    def _labels(self, vectors: np.ndarray) -> np.ndarray:
        with one_thread():
            return self._split_until_stable(vectors)

    def _split_until_stable(self, vectors: np.ndarray) -> np.ndarray:
        model = kmeans(vectors, min(self.k_init, _distinct_rows(vectors)), self.seed, n_init=self.n_init)
        children_of: dict[bytes, KMeansFit] = {}  # a cluster unchanged by a refit splits as before
        while True:
            labels, centers = model.labels_, model.cluster_centers_
            proposals = []  # (strength, cluster index, two child centers)
            for j in range(len(centers)):
                members = vectors[labels == j]
                if len(members) < self._min_split_size() or _distinct_rows(members, at_least=2) < 2:
                    continue
                key = members.tobytes()
                children = children_of.get(key)
                if children is None:
                    children = children_of[key] = kmeans(members, 2, self.seed, n_init=self.n_init)
                strength = self._split_strength(members, children)
                if strength is not None:
                    proposals.append((strength, j, children.cluster_centers_))
            room = self.k_max - len(centers)
            if not proposals or room <= 0:
                return labels
            # Strongest splits first (ties by cluster index) when k_max leaves room for few.
            proposals.sort(key=lambda p: (-p[0], p[1]))
            split = {j: pair for _, j, pair in proposals[:room]}
            new_centers: list[np.ndarray] = []
            for j, center in enumerate(centers):
                new_centers.extend(split[j] if j in split else [center])
            model = kmeans(vectors, len(new_centers), self.seed, init=np.asarray(new_centers))
            if len(np.unique(model.labels_)) <= len(centers):
                return labels  # the refit merged the split back: no progress


@CLUSTERINGS.register("xmeans")
class XMeansClusterer(_SplittingKMeans):
    """X-means: split a cluster in two while that raises its BIC (:func:`spherical_bic`).

    >>> rng = np.random.default_rng(0)
    >>> pts = np.vstack([rng.normal(c, 0.05, size=(30, 10)) for c in np.eye(10)[:3]])
    >>> len(set(XMeansClusterer(k_init=1).fit_labels(pts)))
    3
    """

    name = "xmeans"

    @classmethod
    def from_options(cls, options: ClusteringOptions) -> XMeansClusterer:
        return cls(*cls._k_range(options, DEFAULTS.xmeans_k_init), options.seed)

    def _min_split_size(self) -> int:
        return 4  # the children's variance needs points beyond their two centers

    def _split_strength(self, points, children) -> Optional[float]:
        parent = spherical_bic(points, np.zeros(len(points), dtype=int), points.mean(axis=0, keepdims=True))
        child = spherical_bic(points, children.labels_, children.cluster_centers_)
        return child - parent if child > parent else None


@CLUSTERINGS.register("gmeans")
class GMeansClusterer(_SplittingKMeans):
    """G-means: split a cluster while its points do not look Gaussian along the split axis.

    The points are projected on the line joining the two 2-means children; the
    Anderson-Darling statistic (``scipy.stats.anderson``) with Hamerly & Elkan's
    correction ``A*2 = A2 (1 + 4/n - 25/n^2)`` is compared with the critical value at
    significance ``alpha`` (0.0001 in the G-means paper). Clusters of fewer than
    ``min_split_size`` points are kept whole: the test means little on so few.

    >>> rng = np.random.default_rng(0)
    >>> pts = np.vstack([rng.normal(c, 0.05, size=(30, 10)) for c in np.eye(10)[:3]])
    >>> len(set(GMeansClusterer(k_init=1).fit_labels(pts)))
    3
    """

    name = "gmeans"

    def __init__(
        self,
        k_init: int = 1,
        k_max: int = 20,
        seed: int = 0,
        alpha: float = 0.0001,
        min_split_size: int = 8,
        n_init: int = 10,
    ) -> None:
        super().__init__(k_init, k_max, seed, n_init)
        self.alpha, self.min_split_size = check_option("alpha", alpha), int(min_split_size)

    @classmethod
    def from_options(cls, options: ClusteringOptions) -> GMeansClusterer:
        alpha = DEFAULTS.gmeans_alpha if options.alpha is None else options.alpha
        return cls(*cls._k_range(options, DEFAULTS.gmeans_k_init), options.seed, alpha)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "alpha": self.alpha}

    def _min_split_size(self) -> int:
        return max(self.min_split_size, 3)

    def _split_strength(self, points, children) -> Optional[float]:
        axis = children.cluster_centers_[0] - children.cluster_centers_[1]
        norm2 = float(axis @ axis)
        if norm2 == 0.0:
            return None
        projected = points @ axis / norm2
        if np.ptp(projected) == 0.0:
            return None
        n = len(projected)
        statistic = anderson_normal_statistic(projected)
        corrected = statistic * (1 + 4 / n - 25 / n**2)
        excess = corrected - GMEANS_CRITICAL_VALUES[self.alpha]
        return excess if excess > 0 else None


def anderson_normal_statistic(x: np.ndarray) -> float:
    """``scipy.stats.anderson(x, "norm").statistic``, bit for bit, without its fit result and p-value.

    The same operations: sort, standardize with the mean and the ``ddof=1`` standard
    deviation, ``log_ndtr`` of both tails (what ``scipy.stats.norm.logcdf`` and
    ``logsf`` evaluate for finite values), and the same weighted sum. A G-means run
    takes this test a few times per question; scipy's generic distribution machinery
    around it cost more than the K-means fits.

    >>> round(anderson_normal_statistic(np.array([0.1, 0.4, 0.2, 0.9, 0.5])), 6)
    0.238667
    """
    from scipy.special import log_ndtr

    y = np.sort(x)
    xbar = np.mean(x, axis=0)
    N = len(y)
    s = np.std(x, ddof=1, axis=0)
    w = (y - xbar) / s
    logcdf = log_ndtr(w)
    logsf = log_ndtr(-w)
    i = np.arange(1, N + 1)
    return float(-N - np.sum((2 * i - 1.0) / N * (logcdf + logsf[::-1]), axis=0))


def _default_k_init(default: int, k_max: Any) -> Any:
    if isinstance(k_max, int) and not isinstance(k_max, bool) and 1 <= k_max < default:
        return k_max
    return default


def make_clusterer(
    name: str,
    *,
    linkage_method: Optional[str] = None,
    distance_threshold: Optional[float] = None,
    k_init: Optional[int] = None,
    k_max: Optional[int] = None,
    alpha: Optional[float] = None,
    seed: int = 0,
) -> Optional[Clusterer]:
    """The clusterer called ``name`` with the package defaults for unset options (None for ``human``).

    >>> make_clusterer("gmeans", k_init=2).params()
    {'k_init': 2, 'k_max': 20, 'seed': 0, 'alpha': 0.0001}
    >>> make_clusterer("human") is None
    True
    """
    clustering = CLUSTERINGS.get(name)
    if clustering is None:
        return None
    options = ClusteringOptions(linkage_method, distance_threshold, k_init, k_max, alpha, seed)
    return clustering.from_options(options)
