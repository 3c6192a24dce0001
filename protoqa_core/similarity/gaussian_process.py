"""One-vs-all Gaussian processes over answer vectors: which cluster does an answer belong to?

Shared by ProbEval's ``gp`` matcher (``classification``, on unit vectors of distinct answers) and
the ``roberta`` similarity (``regression``, on the crowd answers with repetition), so that neither
metric imports the other. An answer given ``n`` times with noise ``alpha`` each has the same
posterior mean as one copy with noise ``alpha / n``, which the regression uses (fewer points, a
better-conditioned system). No length-scale rule has random restarts: the result depends only on
the vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

__all__ = [
    "GP_MODELS",
    "OneVsAll",
    "fit_one_vs_all",
    "length_scale_rule",
    "median_distance",
    "REGRESSION_ALPHA",
    "REGRESSION_LENGTH_SCALE",
]

GP_MODELS = ("regression", "classification")
REGRESSION_ALPHA = 1e-7
"""The regression's noise variance per training answer (the ProtoQA paper's code)."""
REGRESSION_LENGTH_SCALE = 1.0
"""The RBF kernel's fixed length scale in the papers' code, in the vectors' own L2 units."""

LengthScale = Union[float, str]


def length_scale_rule(value: object) -> LengthScale:
    """A checked length-scale rule: a positive number, ``"fit"``, ``"median"`` or ``"median*<factor>"``.

    Equal rules come back in one spelling, so that they compare (and are labelled) equal.

    >>> length_scale_rule(2), length_scale_rule("fit"), length_scale_rule("median*1"), length_scale_rule("median*0.50")
    (2.0, 'fit', 'median', 'median*0.5')
    >>> length_scale_rule("auto")
    Traceback (most recent call last):
    ...
    ValueError: the length scale must be a positive number, 'fit', 'median' or 'median*<factor>', got 'auto'
    """
    message = f"the length scale must be a positive number, 'fit', 'median' or 'median*<factor>', got {value!r}"
    if isinstance(value, str):
        text = value.strip()
        if text in ("fit", "median"):
            return text
        if text.startswith("median*"):
            try:
                factor = float(text[len("median*") :])
            except ValueError:
                raise ValueError(message) from None
            if np.isfinite(factor) and factor > 0:
                return "median" if factor == 1.0 else f"median*{factor:g}"
        raise ValueError(message)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
        raise ValueError(message)
    return float(value)


def median_distance(vectors: np.ndarray) -> Optional[float]:
    """The median L2 distance between distinct rows (None when fewer than two rows differ).

    >>> median_distance(np.array([[0.0], [3.0], [3.0], [4.0]]))
    3.0
    """
    squared = _squared_distances(np.asarray(vectors, dtype=np.float64), np.asarray(vectors, dtype=np.float64))
    return _median_of_squared(squared)


def _median_of_squared(squared: np.ndarray) -> Optional[float]:
    upper = squared[np.triu_indices(len(squared), k=1)]
    positive = upper[upper > 0]
    return float(np.sqrt(np.median(positive))) if positive.size else None


@dataclass(frozen=True)
class OneVsAll:
    """Fitted one-vs-all models: per cluster a fitted model, or a constant score when there was nothing to learn."""

    model: str
    fitted: tuple[Any, ...]

    def scores(self, vectors: np.ndarray) -> np.ndarray:
        """``S[i, c]``: the score of vector ``i`` for cluster ``c`` (a probability, or a regression's mean).

        >>> fit_one_vs_all(np.eye(2), np.array([[True, False], [False, True]])).scores(np.eye(2)).round(6).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """
        out = np.zeros((len(vectors), len(self.fitted)))
        if len(vectors) == 0:
            return out
        for j, model in enumerate(self.fitted):
            if isinstance(model, float):
                out[:, j] = model
            elif isinstance(model, _Regression):
                out[:, j] = model.mean(vectors)
            else:
                out[:, j] = model.predict_proba(vectors)[:, 1]
        return out


@dataclass(frozen=True)
class _Regression:
    """A GP regression's posterior mean: ``k(x, X) @ weights``, RBF kernel of amplitude 1."""

    train: np.ndarray
    weights: np.ndarray
    length_scale: float

    def mean(self, vectors: np.ndarray) -> np.ndarray:
        squared = _squared_distances(np.asarray(vectors, dtype=np.float64), self.train)
        return np.exp(-0.5 * squared / (self.length_scale * self.length_scale)) @ self.weights


def fit_one_vs_all(
    vectors: np.ndarray,
    members: np.ndarray,
    *,
    counts: Optional[Sequence[float]] = None,
    model: str = "regression",
    seed: int = 0,
    alpha: float = REGRESSION_ALPHA,
    length_scale: LengthScale = REGRESSION_LENGTH_SCALE,
) -> OneVsAll:
    """Fit one model per cluster: ``members[i, c]`` says whether training answer ``i`` is in cluster ``c``.

    ``counts`` (regression only) says how often each answer was given; ``model`` is ``regression``
    (the ProtoQA paper's) or ``classification`` (``GaussianProcessClassifier(1.0 * RBF(1.0))``,
    seeded). A ``median`` length scale is the factor times the median distance between distinct
    answers (1 when fewer than two differ). Under the classifier a cluster that every answer (or
    none) belongs to gets that constant score; under the regression only an empty cluster does (0).

    >>> m = fit_one_vs_all(np.array([[0.0], [0.1], [5.0]]), np.array([[1, 0], [1, 0], [0, 1]], bool), counts=[3, 1, 2])
    >>> (m.scores(np.array([[0.05], [9.0]])).round(2) + 0.0).tolist()  # near the first cluster; far from both
    [[1.0, 0.0], [0.0, 0.0]]
    """
    vectors = np.asarray(vectors, dtype=np.float64)
    members = np.asarray(members, dtype=bool).reshape(len(vectors), -1)
    if model == "regression":
        return OneVsAll(model, _fit_regressions(vectors, members, counts, alpha, length_scale))
    if model == "classification":
        if counts is not None:
            raise ValueError("the Gaussian-process classifier trains on distinct answers: give no counts")
        return OneVsAll(model, _fit_classifiers(vectors, members, seed))
    raise ValueError(f"unknown Gaussian-process model {model!r}; choose one of {', '.join(GP_MODELS)}")


def _fit_regressions(
    vectors: np.ndarray,
    members: np.ndarray,
    counts: Optional[Sequence[float]],
    alpha: float,
    length_scale: LengthScale,
) -> tuple[Any, ...]:
    from scipy.linalg import cho_factor, cho_solve

    if len(vectors) == 0:
        return tuple(0.0 for _ in range(members.shape[1]))
    weights = np.ones(len(vectors)) if counts is None else np.asarray(counts, dtype=np.float64)
    if weights.shape != (len(vectors),) or not np.all(weights > 0):
        raise ValueError("counts must be one positive number per training answer")
    labels = members.astype(np.float64)
    noise = alpha / weights
    squared = _squared_distances(vectors, vectors)
    rule = length_scale_rule(length_scale)
    if rule == "fit":
        scales = [
            _fitted_length_scale(squared, noise, labels[:, j]) if members[:, j].any() else 1.0
            for j in range(members.shape[1])
        ]
    elif isinstance(rule, str):
        factor = float(rule.split("*")[1]) if "*" in rule else 1.0
        median = _median_of_squared(squared)
        scales = [factor * (median if median is not None else REGRESSION_LENGTH_SCALE)] * members.shape[1]
    else:
        scales = [rule] * members.shape[1]
    fitted: list[Any] = []
    solved_by_scale: dict[float, np.ndarray] = {}
    for j, scale in enumerate(scales):
        if not members[:, j].any():
            fitted.append(0.0)
            continue
        if scale not in solved_by_scale:
            # One factorization per length scale serves every cluster that has it.
            kernel = np.exp(-0.5 * squared / (scale * scale))
            kernel[np.diag_indices_from(kernel)] += noise
            solved_by_scale[scale] = cho_solve(cho_factor(kernel, lower=True), labels)
        fitted.append(_Regression(vectors, solved_by_scale[scale][:, j].copy(), scale))
    return tuple(fitted)


def _squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    squared = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * (a @ b.T)
    return np.maximum(squared, 0.0)


def _fitted_length_scale(squared: np.ndarray, noise: np.ndarray, labels: np.ndarray) -> float:
    """The RBF length scale that maximizes the marginal likelihood of ``labels``: a bounded Brent search on
    the log scale, within 100 times the median distance either way."""
    from scipy.linalg import LinAlgError, cho_factor, cho_solve
    from scipy.optimize import minimize_scalar

    median = _median_of_squared(squared) or 1.0

    def negative_log_likelihood(log_scale: float) -> float:
        scale = float(np.exp(log_scale))
        kernel = np.exp(-0.5 * squared / (scale * scale))
        kernel[np.diag_indices_from(kernel)] += noise
        try:
            factor = cho_factor(kernel, lower=True)
        except LinAlgError:
            return float("inf")
        return float(0.5 * labels @ cho_solve(factor, labels) + np.log(np.diag(factor[0])).sum())

    bounds = (float(np.log(median / 100.0)), float(np.log(median * 100.0)))
    found = minimize_scalar(negative_log_likelihood, bounds=bounds, method="bounded", options={"xatol": 1e-3})
    return float(np.exp(found.x))


def _fit_classifiers(vectors: np.ndarray, members: np.ndarray, seed: int) -> tuple[Any, ...]:
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel
    from threadpoolctl import threadpool_limits

    fitted: list[Any] = []
    for j in range(members.shape[1]):
        labels = members[:, j].astype(int)
        if labels.min() == labels.max():
            fitted.append(float(labels[0]))  # every answer is (or none is) in this cluster
            continue
        classifier = GaussianProcessClassifier(ConstantKernel(1.0) * RBF(1.0), random_state=seed)
        # Tens of training points: BLAS threads only add start-up cost.
        with threadpool_limits(limits=1):
            fitted.append(classifier.fit(vectors, labels))
    return tuple(fitted)
