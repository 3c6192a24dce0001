"""docs/spec.md section 1 written out literally: partition enumeration, no caching.

This is the yardstick, not the implementation: the tests check the fast
similarity against it on random strings, and the benchmark times it as the
baseline. It is exponential in the number of tokens; keep its inputs short.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations, pairwise
from typing import Optional

import numpy as np

from protoqa_core.text import content_tokens
from protoqa_core.wordnet.nltk_reader import get_wordnet
from tests.support.lazy import lazy_import

scipy_optimize = lazy_import("scipy.optimize")

__all__ = [
    "contiguous_partitions",
    "reference_wordnet_similarity",
    "reference_wup_similarity",
    "reference_question_score",
]


def contiguous_partitions(tokens: Sequence[str]) -> Iterator[list[str]]:
    """Every partition of ``tokens`` into contiguous groups, each group joined by spaces.

    An empty token list has the single partition ``[""]``.

    >>> list(contiguous_partitions(["a", "b"]))
    [['a b'], ['a', 'b']]
    """
    n = len(tokens)
    if n == 0:
        yield [""]
        return
    for size in range(n):
        for cuts in combinations(range(1, n), size):
            bounds = (0, *cuts, n)
            yield [" ".join(tokens[s:e]) for s, e in pairwise(bounds)]


def _part_agrees(x: str, y: str) -> float:
    if x == y:
        return 1.0
    wn = get_wordnet()
    sx = wn.synsets(x.replace(" ", "_"))
    sy = wn.synsets(y.replace(" ", "_"))
    return 1.0 if any(a == b for a in sx for b in sy) else 0.0


def _part_wup(x: str, y: str) -> float:
    if x == y:
        return 1.0
    wn = get_wordnet()
    best = 0.0
    for a in wn.synsets(x.replace(" ", "_")):
        for b in wn.synsets(y.replace(" ", "_")):
            best = max(best, a.wup_similarity(b) or 0.0)
    return best


def _partition_similarity(a: str, b: str, part_score: Callable[[str, str], float], all_stopword_match: bool) -> float:
    ta, tb = content_tokens(a), content_tokens(b)
    if not ta and not tb and not all_stopword_match:
        return 0.0
    best = 0.0
    for p in contiguous_partitions(ta):
        for q in contiguous_partitions(tb):
            m = np.array([[part_score(x, y) for y in q] for x in p])
            rows, cols = scipy_optimize.linear_sum_assignment(-m)
            best = max(best, m[rows, cols].sum() / max(len(p), len(q)))
    return float(best)


def reference_wordnet_similarity(a: str, b: str, all_stopword_match: bool = True) -> float:
    """The WordNet similarity of docs/spec.md by brute force over all partition pairs.

    >>> reference_wordnet_similarity("chewing gum", "gum")
    1.0
    """
    return _partition_similarity(a, b, _part_agrees, all_stopword_match)


def reference_wup_similarity(a: str, b: str, all_stopword_match: bool = True) -> float:
    """The Wu-Palmer WordNet similarity by brute force over all partition pairs.

    >>> reference_wup_similarity("dog", "dog")
    1.0
    """
    return _partition_similarity(a, b, _part_wup, all_stopword_match)


def _nfkc(text: str) -> str:
    return re.sub("[\u200b\u200c\u200d\u2060\ufeff]", "", unicodedata.normalize("NFKC", text))


def reference_question_score(
    predictions: Sequence[str],
    clusters: Sequence[tuple[Sequence[str], int]],
    similarity: Callable[[str, str], float],
    *,
    max_answers: Optional[int] = None,
    max_incorrect: Optional[int] = None,
    weighted: bool = True,
    rounded: bool = True,
) -> float:
    """docs/spec.md section 1 steps 1-6 for one question, computed the plain way.

    ``clusters`` is a list of ``(answers, count)``. Every similarity is computed
    afresh (no caching), as the straightforward implementation would.

    >>> reference_question_score(["Dog", "cat"], [(["dog"], 6), (["cat"], 4)], lambda a, b: float(a == b), max_answers=1)
    1.0
    """
    preds = list(predictions)
    if max_answers is not None:
        preds = preds[:max_answers]
    # Unicode NFKC without zero-width characters on both sides (the README's normalization note).
    preds = [_nfkc(p).lower()[:50].strip() for p in preds]
    clusters = [([_nfkc(y) for y in answers], count) for answers, count in clusters]
    s = np.zeros((len(preds), len(clusters)))
    for i, p in enumerate(preds):
        for j, (answers, _) in enumerate(clusters):
            s[i, j] = max((similarity(p, y) for y in answers), default=0.0)
    if rounded:
        s = np.round(s)
    if max_incorrect is not None:
        wrong = 0
        for i in range(s.shape[0]):
            if not s[i].any():
                wrong += 1
                if wrong == max_incorrect:
                    s = s[: i + 1]
                    break
    counts = np.array([c for _, c in clusters], dtype=float)
    weights = counts if weighted else np.ones(len(clusters))
    raw = 0.0
    if s.size:
        w = s * weights[None, :]
        rows, cols = scipy_optimize.linear_sum_assignment(w, maximize=True)
        raw = float(w[rows, cols].sum())
    ordered = sorted(weights, reverse=True)
    oracle = float(sum(ordered[:max_answers] if max_answers is not None else ordered))
    return raw / oracle
