"""Scoring one question (docs/spec.md section 1, steps 1 to 6): similarity matrix, limits, assignment, oracle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Union

import numpy as np

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Cluster
from protoqa_core.similarity import ABOVE_HALF, Similarity, collect_approximations, get_similarity
from protoqa_core.text import normalize_prediction
from protoqa_metric.assignment import max_weight_assignment

__all__ = [
    "QuestionScore",
    "similarity_matrix",
    "matrix_of_normalized",
    "score_matrix",
    "ScoringTable",
    "oracle_score",
    "check_predictions",
]


@dataclass(frozen=True, slots=True)
class QuestionScore:
    """The score of one question under one metric: ``raw_score / oracle_score`` (0 when the oracle's is 0), and
    for each normalized prediction kept after the limits, the id of the cluster it claimed, or None."""

    score: float
    raw_score: float
    oracle_score: float
    assignment: tuple[Optional[str], ...]
    predictions: tuple[str, ...]


def similarity_matrix(
    predictions: Sequence[str],
    clusters: Sequence[Cluster],
    similarity: Union[str, Similarity] = "wordnet",
    approximated: Optional[list[tuple[int, int]]] = None,
    **similarity_options: bool,
) -> np.ndarray:
    """``S[i, j]`` = best similarity of prediction ``i`` to any answer of cluster ``j``.

    Predictions are normalized, cluster strings used as they are; the matrix is not rounded. Entries that are
    lower bounds go to ``approximated`` when it is a list, else into one warning.

    >>> from protoqa_core.io.records import Cluster
    >>> similarity_matrix(["Age"], [Cluster("c0", ("age", "birthday"), 35)], "exact_match")
    array([[1.]])
    """
    check_predictions(predictions)
    sim = get_similarity(similarity) if isinstance(similarity, str) else similarity
    preds = [normalize_prediction(p) for p in predictions]
    return matrix_of_normalized(preds, clusters, sim, approximated, similarity_options)


def matrix_of_normalized(
    preds: Sequence[str],
    clusters: Sequence[Cluster],
    sim: Similarity,
    approximated: Optional[list[tuple[int, int]]],
    similarity_options: Mapping[str, bool],
    rounded: bool = False,
) -> np.ndarray:
    """:func:`similarity_matrix` of predictions that are already normalized, with a resolved similarity.

    With ``rounded``, each entry is the metric's half-to-even rounding, decided by
    :meth:`~protoqa_core.similarity.Similarity.reaches` (over 1/2?), which needs less work than the exact value.

    >>> from protoqa_core.io.records import Cluster
    >>> from protoqa_core.similarity import get_similarity
    >>> matrix_of_normalized(["age"], [Cluster("c0", ("age",), 35)], get_similarity("exact_match"), None, {})
    array([[1.]])
    """
    rows: list[list[float]] = []
    first_row: dict[str, int] = {}
    cut_columns: dict[int, list[int]] = {}
    with collect_approximations() as found:
        for i, pred in enumerate(preds):
            if pred in first_row:  # a repeated answer scores as its first occurrence
                rows.append(rows[first_row[pred]])
                cut_columns[i] = cut_columns.get(first_row[pred], [])
                continue
            first_row[pred] = i
            row = []
            for j, cluster in enumerate(clusters):
                before = len(found)
                if rounded:
                    row.append(1.0 if sim.reaches(pred, cluster.answers, ABOVE_HALF, **similarity_options) else 0.0)
                else:
                    row.append(sim.best(pred, cluster.answers, **similarity_options))
                if len(found) > before:
                    cut_columns.setdefault(i, []).append(j)
            rows.append(row)
    # Filled as Python lists and converted once: a numpy item assignment per cell costs more than the cell.
    out = np.array(rows, dtype=float).reshape(len(preds), len(clusters))
    if approximated is not None:
        approximated.extend((i, j) for i, columns in sorted(cut_columns.items()) for j in columns)
    if found and approximated is None:
        import warnings

        from protoqa_core.similarity import ApproximationWarning

        warnings.warn(
            f"{len(found)} similarity value(s) are lower bounds (long string or search budget; "
            "see protoqa_core.similarity)",
            ApproximationWarning,
            stacklevel=3,
        )
    return out


def check_predictions(predictions: Sequence[str]) -> None:
    """Refuse a ranked answer list that is not a list of strings (a bare string included).

    >>> check_predictions("dog")
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: predictions must be a list of strings, got a string
    """
    # A bare string is a Sequence of its characters: scoring it would silently be wrong.
    if isinstance(predictions, (str, bytes)):
        raise DataFormatError("predictions must be a list of strings, got a string")
    for p in predictions:
        if not isinstance(p, str):
            raise DataFormatError(f"predictions must contain only strings, found {type(p).__name__}")


def oracle_score(counts: Sequence[int], max_answers: Optional[int] = None, weighted: bool = True) -> float:
    """The best raw score possible: the clusters' own answers, most popular first.

    >>> oracle_score([35, 28, 10], max_answers=2)
    63.0
    >>> oracle_score([35, 28, 10], weighted=False)
    3.0
    """
    weights = sorted((float(c) if weighted else 1.0 for c in counts), reverse=True)
    if max_answers is not None:
        weights = weights[:max_answers]
    return float(sum(weights))


def score_matrix(
    matrix: np.ndarray,
    clusters: Sequence[Cluster],
    *,
    max_answers: Optional[int] = None,
    max_incorrect: Optional[int] = None,
    weighted: bool = True,
    rounded: bool = False,
    predictions: Sequence[str] = (),
) -> QuestionScore:
    """Score a question from its similarity matrix (rows in rank order); docs/spec.md section 1, steps 3 to 6.

    ``max_answers`` keeps the first k predictions, ``max_incorrect`` stops at the k-th that matches nothing;
    ``weighted=False`` is set intersection; ``rounded`` rounds half-to-even first.

    >>> import numpy as np
    >>> from protoqa_core.io.records import Cluster
    >>> cl = [Cluster("a", ("x",), 3), Cluster("b", ("y",), 1)]
    >>> score_matrix(np.array([[1.0, 1.0], [1.0, 0.0]]), cl).score
    1.0
    """
    return ScoringTable(matrix, clusters, rounded=rounded, predictions=predictions).score(
        max_answers=max_answers, max_incorrect=max_incorrect, weighted=weighted
    )


class ScoringTable:
    """What every metric of one question shares, computed once: docs/spec.md steps 3 to 6 for any limits.

    Each metric scores a leading block of rows; a block that earns nothing scores 0 without the solver.

    >>> import numpy as np
    >>> from protoqa_core.io.records import Cluster
    >>> table = ScoringTable(np.array([[0.0, 1.0], [1.0, 0.0]]), [Cluster("a", ("x",), 3), Cluster("b", ("y",), 1)])
    >>> table.score(max_answers=1).score, table.score().score, table.score(max_answers=1, weighted=False).score
    (0.3333333333333333, 1.0, 1.0)
    """

    __slots__ = ("_clusters", "_counts", "_matrix", "_wrong_rows", "_weighting", "_predictions")

    def __init__(
        self, matrix: np.ndarray, clusters: Sequence[Cluster], *, rounded: bool = False, predictions: Sequence[str] = ()
    ) -> None:
        self._clusters = clusters
        self._counts = [c.count for c in clusters]
        self._matrix = np.round(matrix) if rounded else matrix  # half to even: exactly 0.5 counts as 0
        self._wrong_rows = [r for r, hit in enumerate(np.any(self._matrix, axis=1).tolist()) if not hit]
        # weighted -> (weights, first row that earns anything, oracle weights best first)
        self._weighting: dict[bool, tuple[np.ndarray, int, list[float]]] = {}
        # Slicing a tuple to its full length returns the tuple itself: metrics share it.
        self._predictions = tuple(predictions)

    def _weights(self, weighted: bool) -> tuple[np.ndarray, int, list[float]]:
        if weighted not in self._weighting:
            m, counts = self._matrix, self._counts
            weights = m * (np.asarray(counts, dtype=float) if weighted else np.ones(len(counts)))[None, :]
            earning = (weights > 0).any(axis=1).tolist() if weights.size else []
            first = earning.index(True) if True in earning else m.shape[0]
            oracle = sorted((float(c) if weighted else 1.0 for c in counts), reverse=True)
            self._weighting[weighted] = (weights, first, oracle)
        return self._weighting[weighted]

    def score(
        self, *, max_answers: Optional[int] = None, max_incorrect: Optional[int] = None, weighted: bool = True
    ) -> QuestionScore:
        """The score under one metric's limits and weighting (see :func:`score_matrix`)."""
        if max_answers is not None and max_answers < 1:
            raise ValueError(f"max_answers must be at least 1, got {max_answers}")
        if max_incorrect is not None and max_incorrect < 1:
            raise ValueError(f"max_incorrect must be at least 1, got {max_incorrect}")
        weights, first_earning_row, oracle_weights = self._weights(weighted)
        oracle = float(sum(oracle_weights if max_answers is None else oracle_weights[:max_answers]))
        rows = weights.shape[0] if max_answers is None else min(max_answers, weights.shape[0])
        if max_incorrect is not None:
            wrong = [r for r in self._wrong_rows if r < rows]
            if len(wrong) >= max_incorrect:
                rows = wrong[max_incorrect - 1] + 1
        if rows <= first_earning_row or not weights.shape[1]:
            # Nothing earned: one shared tuple of Nones (a million questions hold ten of these each).
            return QuestionScore(0.0, 0.0, oracle, _nothing_claimed(rows), self._predictions[:rows])
        assignment: list[Optional[str]] = [None] * rows
        block = weights[:rows]
        chosen_rows, chosen_cols = max_weight_assignment(block)
        raw = float(block[chosen_rows, chosen_cols].sum())
        for r, c in zip(chosen_rows, chosen_cols, strict=True):
            if block[r, c] > 0:
                assignment[r] = self._clusters[c].id
        # Clusters that total 0 leave nothing to earn: the score is 0, never NaN.
        score = raw / oracle if oracle > 0 else 0.0
        return QuestionScore(score, raw, oracle, tuple(assignment), self._predictions[:rows])


@lru_cache(maxsize=64)
def _nothing_claimed(rows: int) -> tuple[None, ...]:
    return (None,) * rows
