"""Clustering answer embeddings: hierarchical agglomerative (HAC), X-means and G-means.

Labels are numbered by first appearance, whatever the algorithm numbered. HAC works on cosine
distances; X-means and G-means on the vectors as given, like the paper's code: their Gaussian models
assume spread in every dimension, and unit rows lose the radial one, which makes X-means split whole
clusters. Their K-means is scikit-learn's, written out in :mod:`cfc_probeval.kmeans` (the paper used the
unmaintained pyclustering).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar, Optional

import numpy as np

from protoqa_core.options import Option

from .options import SEED
from .registry import CLUSTERINGS

__all__ = [
    "Clusterer",
    "HACClusterer",
    "XMeansClusterer",
    "GMeansClusterer",
    "HAC_METHODS",
    "GMEANS_CRITICAL_VALUES",
    "make_clusterer",
    "clustering_options",
    "describe_option",
    "canonical_labels",
    "flat_clusters",
    "spherical_bic",
]

_EUCLIDEAN_ONLY = ("centroid", "median", "ward")

#: The linkage methods of scipy's hierarchical clustering that HAC accepts.
HAC_METHODS = ("single", "complete", "average", "weighted", "centroid", "median", "ward")

# Critical values of the Anderson-Darling statistic for normality with estimated mean
# and variance (Stephens 1974, case 3), plus the alpha = 0.0001 value used by G-means;
# their keys are the significance levels G-means accepts.
GMEANS_CRITICAL_VALUES: dict[float, float] = {
    0.15: 0.576,
    0.10: 0.656,
    0.05: 0.787,
    0.025: 0.918,
    0.01: 1.092,
    0.0001: 1.8692,
}


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel clusters 0, 1, 2, ... in order of first appearance.

    >>> canonical_labels(np.array([5, 5, 2, 9, 2])).tolist()
    [0, 0, 1, 2, 1]
    """
    mapping: dict[int, int] = {}
    return np.array([mapping.setdefault(int(x), len(mapping)) for x in labels], dtype=int)


class Clusterer(ABC):
    """Groups the rows of an embedding matrix; ``name`` and :meth:`params` go in signatures, and its constructor
    takes the :attr:`options` it declares, from which flags and checks are read (:func:`clustering_options`)."""

    name: ClassVar[str] = "clusterer"
    title: ClassVar[str] = ""
    """How ``probeval --help`` names it (``HAC``); the name when empty."""
    options: ClassVar[tuple[Option, ...]] = ()
    """Its options, in the order the signature shows them."""

    @classmethod
    def option(cls, name: str) -> Option:
        """Its declared option ``name`` (KeyError when it declares none so called).

        >>> GMeansClusterer.option("k_init").default
        8
        """
        for option in cls.options:
            if option.name == name:
                return option
        raise KeyError(f"{cls.__qualname__} declares no option {name!r}")

    @classmethod
    def option_values(cls, given: Mapping[str, Any] = {}) -> dict[str, Any]:
        """Every declared option's value: the one ``given`` (not None), checked, else its default.

        >>> XMeansClusterer.option_values({"k_max": 5, "linkage": "average"})
        {'k_init': 5, 'k_max': 5, 'seed': 0}
        """
        values = {o.name: o.default if given.get(o.name) is None else o.check(given[o.name]) for o in cls.options}
        return cls._settle(values, given)

    @classmethod
    def _settle(cls, values: dict[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        """The rules between options (``values`` checked one by one; ``given`` what the caller set)."""
        return values

    @classmethod
    def from_options(cls, given: Mapping[str, Any] = {}) -> Clusterer:
        """This clustering with the options ``given`` (by their declared names) and the declared defaults.

        >>> GMeansClusterer.from_options({"k_init": 2}).params()
        {'k_init': 2, 'k_max': 20, 'seed': 0, 'alpha': 0.0001}
        """
        return cls(**cls.option_values(given))

    def params(self) -> dict[str, Any]:
        """The settings that determine the result, for the reproducibility signature: each declared option."""
        return {o.label: getattr(self, o.name) for o in self.options}

    @abstractmethod
    def _labels(self, vectors: np.ndarray) -> np.ndarray:
        """Labels for the rows of ``vectors`` (at least two of them)."""

    def fit_labels(self, vectors: np.ndarray) -> np.ndarray:
        """One cluster label per row of ``vectors``, numbered by first appearance.

        >>> HACClusterer(distance_threshold=0.5).fit_labels(np.array([[1.0, 0], [0.9, 0.1], [0, 1.0]])).tolist()
        [0, 0, 1]
        """
        vectors = np.asarray(vectors, dtype=np.float64)
        if vectors.ndim != 2:
            raise ValueError(f"expected a 2-D matrix of embeddings, got shape {vectors.shape}")
        if len(vectors) <= 1:
            return np.zeros(len(vectors), dtype=int)
        return canonical_labels(self._labels(vectors))


class HACClusterer(Clusterer):
    """Hierarchical agglomerative clustering (scipy) cut at ``distance_threshold``, on ``cosine`` distances or
    ``euclidean`` ones of unit rows (which ``ward``, ``centroid`` and ``median`` need).

    >>> HACClusterer("average", 0.3).params()
    {'linkage': 'average', 'threshold': 0.3, 'metric': 'cosine'}
    """

    name = "hac"
    title = "HAC"
    options = (
        Option("linkage", str, "complete", "linkage method", choices=HAC_METHODS),
        Option("distance_threshold", float, 0.3, "cut, in cosine distance", low=0.0, high=2.0, label="threshold"),
    )

    def __init__(self, linkage: str = "average", distance_threshold: float = 0.5, metric: str = "cosine") -> None:
        checked = self.option_values({"linkage": linkage, "distance_threshold": distance_threshold})
        if metric not in ("cosine", "euclidean"):
            raise ValueError(f"unknown metric {metric!r}; choose cosine or euclidean")
        if linkage in _EUCLIDEAN_ONLY and metric != "euclidean":
            raise ValueError(f"linkage {linkage!r} needs metric='euclidean'")
        self.linkage, self.distance_threshold, self.metric = linkage, checked["distance_threshold"], metric

    def params(self) -> dict[str, Any]:
        return {**super().params(), "metric": self.metric}

    def _labels(self, vectors: np.ndarray) -> np.ndarray:
        # scipy.cluster costs 0.2-0.4 s to import; only this clustering needs it.
        from scipy.cluster.hierarchy import linkage
        from scipy.spatial.distance import pdist

        from protoqa_core.similarity.embedding import unit_rows

        distances = pdist(unit_rows(vectors), metric=self.metric)
        # A zero vector (an answer with no known word) has no cosine; treat it as
        # unrelated to everything rather than letting NaN poison the linkage.
        distances = np.nan_to_num(distances, nan=1.0)
        tree = linkage(distances, method=self.linkage)
        return flat_clusters(tree, self.distance_threshold)


def flat_clusters(tree: np.ndarray, threshold: float) -> np.ndarray:
    """``scipy.cluster.hierarchy.fcluster(tree, threshold, "distance")``, up to label names.

    A merge's height is the largest in its subtree, as in fcluster (non-monotone linkages). A union-find,
    since fcluster's input checks cost more than the cut on a question's few dozen answers.

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
    """Pelleg & Moore's BIC of a hard-assigned spherical Gaussian mixture with one shared variance:
    ``log-likelihood - p/2 * log(R)``, ``p = (K - 1) + K*M + 1``; higher is better, ``-inf`` when ``R <= K``.

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
    """``len(np.unique(vectors, axis=0))`` (stopping at ``at_least``) from the rows' bytes, without sorting the
    matrix, which cost as much as the clustering; -0.0 and 0.0 count as one.

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


_K_INIT = Option("k_init", int, 1, "initial number of clusters", low=1, high=10_000)
_KMEANS_PLUS_PLUS = "kmeans++"
_INIT = Option(
    "init",
    str,
    _KMEANS_PLUS_PLUS,
    "start of each K-means: kmeans++ (seeded, best of 10) or greedy (no seed)",
    choices=(_KMEANS_PLUS_PLUS, "greedy"),
)
_K_MAX = Option("k_max", int, 20, "maximum", low=1, high=10_000)


class _SplittingKMeans(Clusterer):
    """K-means from ``k_init`` centers, then split clusters while a test says so, up to ``k_max``."""

    def __init__(self, k_init: int = 1, k_max: int = 20, seed: int = 0, n_init: int = 10) -> None:
        checked = self.option_values({"k_init": k_init, "k_max": k_max, "seed": seed})
        self.k_init, self.k_max, self.seed = checked["k_init"], checked["k_max"], checked["seed"]
        self.n_init = int(n_init)

    @classmethod
    def _settle(cls, values: dict[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        """An unset ``k_init`` never exceeds the ``k_max`` chosen; a set one must not.

        >>> GMeansClusterer.option_values({"k_init": 5, "k_max": 3})
        Traceback (most recent call last):
        ...
        ValueError: k_init must be an integer in [1, 10000] and <= k_max, got k_init=5 with k_max=3
        """
        if given.get("k_init") is None:
            values["k_init"] = min(values["k_init"], values["k_max"])
        elif values["k_init"] > values["k_max"]:
            raise ValueError(
                f"k_init must be {_K_INIT.accepts} and <= k_max, got k_init={values['k_init']} with k_max={values['k_max']}"
            )
        return values

    @abstractmethod
    def _split_strength(self, points: np.ndarray, children) -> Optional[float]:
        """How strongly the test favours replacing ``points``' cluster by ``children``, or None."""

    @abstractmethod
    def _min_split_size(self) -> int:
        """Clusters with fewer points than this are never split."""

    def _labels(self, vectors: np.ndarray) -> np.ndarray:
        # K-means is loaded when a K-means clustering first runs, so other clusterings never pay for it.
        from .kmeans import one_thread

        with one_thread():
            return self._split_until_stable(vectors)

    def _fit(self, points: np.ndarray, k: int):
        """K-means of ``points`` into ``k`` clusters from this clustering's start (seeded or greedy)."""
        from .kmeans import greedy_centers, kmeans

        if getattr(self, "init", _KMEANS_PLUS_PLUS) == "greedy":
            return kmeans(points, k, self.seed, init=greedy_centers(points, k))
        return kmeans(points, k, self.seed, n_init=self.n_init)

    def _split_until_stable(self, vectors: np.ndarray) -> np.ndarray:
        from .kmeans import kmeans

        model = self._fit(vectors, min(self.k_init, _distinct_rows(vectors)))
        children_of: dict[bytes, Any] = {}  # a cluster unchanged by a refit splits as before
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
                    children = children_of[key] = self._fit(members, 2)
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
            # (Counted with bincount: numpy's unique imports numpy.ma, 10 ms, on its first call.)
            if np.count_nonzero(np.bincount(model.labels_)) <= len(centers):
                return labels  # the refit merged the split back: no progress


class XMeansClusterer(_SplittingKMeans):
    """X-means: split a cluster in two while that raises its BIC (:func:`spherical_bic`).

    >>> rng = np.random.default_rng(0)
    >>> pts = np.vstack([rng.normal(c, 0.05, size=(30, 10)) for c in np.eye(10)[:3]])
    >>> len(set(XMeansClusterer(k_init=1).fit_labels(pts)))
    3
    """

    name = "xmeans"
    title = "X-means"
    options = (replace(_K_INIT, default=16), _K_MAX, SEED)

    def _min_split_size(self) -> int:
        return 4  # the children's variance needs points beyond their two centers

    def _split_strength(self, points, children) -> Optional[float]:
        parent = spherical_bic(points, np.zeros(len(points), dtype=int), points.mean(axis=0, keepdims=True))
        child = spherical_bic(points, children.labels_, children.cluster_centers_)
        return child - parent if child > parent else None


_ALPHA = Option(
    "alpha",
    float,
    0.0001,
    "significance level",
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=True,
    choices=tuple(sorted(GMEANS_CRITICAL_VALUES)),
)


class GMeansClusterer(_SplittingKMeans):
    """G-means: split a cluster while its points, projected on the axis of its two 2-means children, fail the
    Anderson-Darling test (Hamerly & Elkan's ``A2 (1 + 4/n - 25/n^2)``) at ``alpha``; clusters under
    ``min_split_size`` points stay whole, the test meaning little on so few.

    >>> rng = np.random.default_rng(0)
    >>> pts = np.vstack([rng.normal(c, 0.05, size=(30, 10)) for c in np.eye(10)[:3]])
    >>> len(set(GMeansClusterer(k_init=1).fit_labels(pts)))
    3
    """

    name = "gmeans"
    title = "G-means"
    options = (replace(_K_INIT, default=8), _K_MAX, SEED, _ALPHA, _INIT)

    def __init__(
        self,
        k_init: int = 1,
        k_max: int = 20,
        seed: int = 0,
        alpha: float = 0.0001,
        init: str = _KMEANS_PLUS_PLUS,
        min_split_size: int = 8,
        n_init: int = 10,
    ) -> None:
        super().__init__(k_init, k_max, seed, n_init)
        self.alpha, self.min_split_size = _ALPHA.check(alpha), int(min_split_size)
        self.init = _INIT.check(init)

    def params(self) -> dict[str, Any]:
        """Its options for the signature: the seeded start by its seed alone (as before it was an option, so
        earlier signatures and cached clusters still read the same), the greedy one by name.

        >>> GMeansClusterer(init="greedy").params(), GMeansClusterer(seed=3).params()
        ({'k_init': 1, 'k_max': 20, 'alpha': 0.0001, 'init': 'greedy'}, {'k_init': 1, 'k_max': 20, 'seed': 3, 'alpha': 0.0001})
        """
        params = super().params()
        if self.init == _KMEANS_PLUS_PLUS:
            del params["init"]
        else:
            del params["seed"]
        return params

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
    """``scipy.stats.anderson(x, "norm").statistic`` with SciPy's operations, without SciPy (why:
    docs/probeval.md, "Scale"); it agrees to 1e-12 relative.

    >>> round(anderson_normal_statistic(np.array([0.1, 0.4, 0.2, 0.9, 0.5])), 6)
    0.238667
    """
    y = np.sort(x)
    xbar = np.mean(x, axis=0)
    N = len(y)
    s = np.std(x, ddof=1, axis=0)
    w = ((y - xbar) / s).tolist()
    logcdf = np.array([_log_ndtr(v) for v in w])
    logsf = np.array([_log_ndtr(-v) for v in w])
    i = np.arange(1, N + 1)
    return float(-N - np.sum((2 * i - 1.0) / N * (logcdf + logsf[::-1]), axis=0))


_SQRT_HALF = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log_ndtr(x: float) -> float:
    """The log of the standard normal CDF at ``x``, as ``scipy.special.log_ndtr`` evaluates it; below -20, where
    ``erfc`` nears underflow, the Mills ratio's asymptotic series (terms below 1e-17 long before they diverge).

    >>> _log_ndtr(0.0) == math.log(0.5), round(_log_ndtr(-40.0), 6)
    (True, -804.608442)
    """
    if x < -20.0:
        inverse_square, term, total, k = 1.0 / (x * x), 1.0, 1.0, 1
        while abs(term) > 1e-17:
            term *= -(2 * k - 1) * inverse_square
            total += term
            k += 1
        return -0.5 * x * x - math.log(-x) - _LOG_SQRT_2PI + math.log(total)
    t = x * _SQRT_HALF
    if x < -1.0:
        return math.log(math.erfc(-t) / 2)
    return math.log1p(-math.erfc(t) / 2)


def make_clusterer(name: str, **options: Any) -> Optional[Clusterer]:
    """The clusterer called ``name`` with ``options`` and the declared defaults (None for ``human``).

    >>> make_clusterer("gmeans", k_init=2).params()
    {'k_init': 2, 'k_max': 20, 'seed': 0, 'alpha': 0.0001}
    >>> make_clusterer("human") is None
    True
    """
    clustering = CLUSTERINGS.get(name)
    return None if clustering is None else clustering.from_options(options)


def clustering_options() -> dict[str, tuple[tuple[str, Option], ...]]:
    """Every option a registered clustering declares, by name, with the clusterings declaring it; one declared
    by several is one flag, so a type or range that differs is a TypeError.

    >>> [(name, [c for c, _ in owners]) for name, owners in clustering_options().items()][2:4]
    [('k_init', ['xmeans', 'gmeans']), ('k_max', ['xmeans', 'gmeans'])]
    """
    found: dict[str, list[tuple[str, Option]]] = {}
    for name in CLUSTERINGS:
        clustering = CLUSTERINGS[name]
        for option in () if clustering is None else clustering.options:
            owners = found.setdefault(option.name, [])
            if owners and _accepted(owners[0][1]) != _accepted(option):
                raise TypeError(
                    f"clustering {name!r} declares option {option.name!r} with another type or range "
                    f"than clustering {owners[0][0]!r}; one option name means one thing"
                )
            owners.append((name, option))
    return {name: tuple(owners) for name, owners in found.items()}


def _accepted(option: Option) -> tuple[Any, ...]:
    return (option.kind, option.low, option.high, option.low_open, option.high_open, option.choices, option.shared)


def describe_option(name: str) -> str:
    """What an option is, for ``--help`` and the ``evaluate`` module.

    >>> describe_option("k_init")
    'X-means/G-means initial number of clusters (default 16 / 8)'
    """
    owners = clustering_options()[name]
    titles = "/".join(dict.fromkeys(CLUSTERINGS[c].title or c for c, _ in owners))
    defaults = " / ".join(dict.fromkeys(str(o.default) for _, o in owners))
    return f"{titles} {owners[0][1].help} (default {defaults})"
