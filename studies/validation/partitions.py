"""Agreement of two clusterings of the same mentions: BLANC, the adjusted Rand index, V-measure.

Every measure reads a weighted contingency table: ``table[i, j]`` is the weight (e.g. the
number of raw answer occurrences) of the mentions that the key puts in cluster ``i`` and
the response in cluster ``j``. Pairs of mentions are counted as ``w (w - 1) / 2`` for a
cell or margin of weight ``w``, so integer weights give exactly the figures of the
clusterings with every occurrence written out (what scikit-learn computes on the
expanded labels).

BLANC (Recasens & Hovy, 2011), the CFC paper's measure, averages the F1 of the
coreference links (pairs in one cluster) and of the non-coreference links (pairs in two
clusters). Where a side has no link of a kind, its definition applies: with no
coreference link in either clustering BLANC is the non-coreference F1, with no
non-coreference link in either it is the coreference F1, and a kind present on one side
only scores F1 0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["contingency", "blanc", "adjusted_rand", "v_measure"]


def contingency(key: Sequence[Hashable], response: Sequence[Hashable], weights: Sequence[float]) -> np.ndarray:
    """Key clusters x response clusters table of summed ``weights`` (one key label, response label, weight per item).

    >>> contingency(["a", "a", "b"], [0, 1, 1], [2, 1, 1]).tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    if not len(key) == len(response) == len(weights):
        raise ValueError(f"{len(key)} key labels, {len(response)} response labels and {len(weights)} weights")
    rows: dict[Hashable, int] = {}
    cols: dict[Hashable, int] = {}
    cells = [
        (rows.setdefault(k, len(rows)), cols.setdefault(r, len(cols)), float(w))
        for k, r, w in zip(key, response, weights, strict=True)
    ]
    table = np.zeros((len(rows), len(cols)))
    for i, j, w in cells:
        if not (w >= 0 and math.isfinite(w)):
            raise ValueError(f"weights must be finite and >= 0, got {w!r}")
        table[i, j] += w
    return table


def _pairs(w: np.ndarray) -> float:
    return float(np.sum(w * (w - 1.0) / 2.0))


def _f1(p_num: float, p_den: float, r_den: float) -> float:
    if p_den <= 0 or r_den <= 0 or p_num <= 0:
        return 0.0
    p, r = p_num / p_den, p_num / r_den
    return 2 * p * r / (p + r)


def blanc(table: np.ndarray) -> float:
    """BLANC of the response (columns) against the key (rows); 1.0 for fewer than two mentions.

    >>> round(blanc(np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 2.0]])), 6)  # 16/21, see the tests
    0.761905
    >>> blanc(np.array([[1.0, 1.0, 1.0]]))  # one key cluster, answered with singletons: no link right
    0.0
    """
    table = np.asarray(table, dtype=np.float64)
    total = _pairs(np.array([table.sum()]))
    if total <= 0:
        return 1.0
    both = _pairs(table)
    key_c, resp_c = _pairs(table.sum(axis=1)), _pairs(table.sum(axis=0))
    key_n, resp_n = total - key_c, total - resp_c
    both_n = total - key_c - resp_c + both
    f_c = _f1(both, resp_c, key_c)
    f_n = _f1(both_n, resp_n, key_n)
    if key_c <= 0 and resp_c <= 0:
        return f_n
    if key_n <= 0 and resp_n <= 0:
        return f_c
    return (f_c + f_n) / 2


def adjusted_rand(table: np.ndarray) -> float:
    """Hubert and Arabie's adjusted Rand index of the table (1.0 when both clusterings are trivial alike).

    >>> round(adjusted_rand(np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 2.0]])), 6)  # 6/11
    0.545455
    """
    table = np.asarray(table, dtype=np.float64)
    total = _pairs(np.array([table.sum()]))
    index = _pairs(table)
    a, b = _pairs(table.sum(axis=1)), _pairs(table.sum(axis=0))
    if total <= 0:
        return 1.0
    expected = a * b / total
    top = (a + b) / 2
    if top == expected:  # as scikit-learn: both one cluster, or both all singletons
        return 1.0
    return (index - expected) / (top - expected)


def _entropy(weights: np.ndarray) -> float:
    w = weights[weights > 0]
    total = w.sum()
    return float(-np.sum(w / total * np.log(w / total))) if total > 0 else 0.0


def v_measure(table: np.ndarray) -> float:
    """V-measure (beta 1) of the response against the key: harmonic mean of homogeneity and completeness.

    >>> round(v_measure(np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 2.0]])), 6)
    0.778979
    """
    table = np.asarray(table, dtype=np.float64)
    total = table.sum()
    if total <= 0:
        return 1.0
    h_key, h_resp = _entropy(table.sum(axis=1)), _entropy(table.sum(axis=0))
    nz = table > 0
    joint = table[nz] / total
    col = (table.sum(axis=0)[None, :] * np.ones_like(table))[nz] / total
    row = (table.sum(axis=1)[:, None] * np.ones_like(table))[nz] / total
    h_key_given_resp = float(-np.sum(joint * np.log(joint / col)))
    h_resp_given_key = float(-np.sum(joint * np.log(joint / row)))
    homogeneity = 1.0 if h_key == 0 else 1.0 - h_key_given_resp / h_key
    completeness = 1.0 if h_resp == 0 else 1.0 - h_resp_given_key / h_resp
    if homogeneity + completeness == 0:
        return 0.0
    return 2 * homogeneity * completeness / (homogeneity + completeness)
