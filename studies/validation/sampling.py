"""Answer sets for the agreement study: centered sampling and three error types.

Two procedures draw the answer sets of a question; ``authors`` (the default) follows
the ProbEval authors' published code (``get_kl_divergence.py`` of qxc101/PROBEVAL_CFC),
``pool`` is the procedure of this project's first study, kept as a sensitivity row.

**The answer pool.** Each category (a human cluster, or "wrong", last) has a pool of
answer strings with counts: the answers the gold matching (``annotated_prediction_data``)
puts there. Under ``authors``, 50 ground-truth answers are added, stratified by cluster:
cluster ``k`` gets ``ceil(50 * n_k / N)`` of its own answer instances (at most as many
as it has), drawn without replacement (:func:`stratified_answers`), so that every human
cluster has answers to draw. Under ``pool``, a cluster with no annotated answer falls
back to its own human answer strings, and a question without annotated wrong answers
borrows the other questions' ones (except strings that are right here).

**The target distribution** ``p`` over the categories comes from a generator:

* ``centered``: ``p = z*P_model + w1*P_gold + w2*Uniform`` with ``z ~ U(0.5, 1)`` and
  ``1 - z`` split between ``w1`` and ``w2`` by two ``U(0, 1)`` draws;
* ``missing_answers``: ``P_gold`` with some categories set to 0, renormalized;
* ``wrong_ranking``: ``P_gold`` with its probabilities permuted (redrawn until it changes);
* ``wrong_score``: ``P_gold`` with every probability moved by a random fraction
  (the set's severity times ``U(-1, 1)``) of half the gap to its nearer neighbour in
  probability order, so the order is kept; renormalized.

Under ``authors``, ``P_model`` and ``P_gold`` are Laplace-smoothed as in the authors'
code (``(count + 1) / (N + K + 1)`` over the K clusters and "wrong"), so "wrong" has a
small positive probability in ``P_gold`` and the error types perturb it like any
category: it can be permuted into a large probability, perturbed, or dropped;
``missing_answers`` zeroes ``m ~ U{1, ..., K - 1}`` of the K + 1 categories (the
authors' ``randint(1, len - 1)``). Under ``pool``, ``P_gold`` is unsmoothed, "wrong"
stays at 0 in the error types and ``missing_answers`` zeroes 1 to n - 1 of the n
non-empty clusters.

**The set size and the draw.** Under ``authors`` (:func:`authors_counts`), every category
has ``c_k + 1`` slots (its pool count plus the smoothing slot), ``T`` slots in all; the
wanted counts ``T * p_k`` are scaled down by the largest ratio that fits every category
(``min_k (c_k + 1) / (T p_k)``, at most 1) and rounded, so a set is as large as the
scarcest category allows (median about 140 answers on ProtoQA dev, 65 on CFC dev, under
centered sampling); for the two error types
whose point is the shape of ``p`` (wrong ranking, wrong score), a category rounded to 0
makes every category get one more, as the authors' code does. The answers are drawn
**without replacement** from the category's slots; drawing the smoothing slot yields no
answer (so a set can be one answer short per category, as in the authors' code). Under
``pool``, the set has as many answers as the annotated pool (169 to 538 on ProtoQA
dev), allotted by largest-remainder rounding of ``size * p`` and drawn **with**
replacement in proportion to the pool counts.

Every drawn answer keeps the category it was drawn for: that is its gold matching.

Not reproduced from the authors' code: its loop that raises the scaling ratio by 0.1
until the rounded counts keep the intended ranking (wrong ranking, wrong score); the
study reports the sets as drawn.

Random numbers come from ``numpy.random.default_rng([seed, sampling index, crc32(question id)])``
(the stratified answers from the sampling index 99): a question's sets do not depend on
which other questions are studied.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np

from cfc_probeval.distributions import WRONG
from cfc_probeval.inputs import QuestionTargets
from protoqa_core.io.files import DataFormatError

__all__ = [
    "SAMPLINGS",
    "Annotation",
    "CategoryPool",
    "QuestionPool",
    "AnswerSet",
    "read_annotations",
    "build_pools",
    "centered_distribution",
    "missing_answers_distribution",
    "wrong_ranking_distribution",
    "wrong_score_distribution",
    "quota_counts",
    "draw_answer_set",
    "draw_answer_sets",
    "question_rng",
    "PROCEDURES",
    "STRATIFIED_ANSWERS",
    "stratified_answers",
    "smoothed",
    "authors_counts",
    "draw_authors_set",
]

PROCEDURES = ("authors", "pool")
"""How answer sets are drawn: the ProbEval authors' procedure, or the earlier pool-sized one."""

STRATIFIED_ANSWERS = 50
"""Ground-truth answers added to each question's pool under the ``authors`` procedure."""

SAMPLINGS = ("centered", "missing_answers", "wrong_ranking", "wrong_score")
"""The answer-set generators, in the order their seeds are numbered."""


@dataclass(frozen=True)
class Annotation:
    """One annotated answer: the cluster a human put it in (or ``"wrong"``) and how often it was given."""

    cluster: str
    count: int


@dataclass(frozen=True)
class CategoryPool:
    """The strings an answer of one category (a cluster or "wrong") is drawn from, with weights.

    ``source`` says where they come from: ``annotated``, ``human answers`` or ``other questions``.
    """

    strings: tuple[str, ...]
    weights: tuple[float, ...]
    source: str


@dataclass(frozen=True)
class QuestionPool:
    """What answer sets of one question are drawn from.

    Attributes:
        question_id: the question.
        cluster_ids: its human clusters, in the ground truth's order; category
            ``len(cluster_ids)`` is "wrong".
        gold_counts: how many people gave an answer in each human cluster.
        annotated_counts: pool answers per category ("wrong" last): ``P_model``'s counts
            (the annotated answers, plus the stratified ground-truth answers if any).
        categories: the answer pool of every category ("wrong" last).
        stratified: how many ground-truth answers were added to the pool (0: none).
    """

    question_id: str
    cluster_ids: tuple[str, ...]
    gold_counts: tuple[float, ...]
    annotated_counts: tuple[float, ...]
    categories: tuple[CategoryPool, ...]
    stratified: int = 0

    @property
    def num_clusters(self) -> int:
        """K, the number of human clusters ("wrong" not counted)."""
        return len(self.cluster_ids)

    @property
    def pool_size(self) -> int:
        """How many answers the annotated pool holds (the default size of an answer set)."""
        return int(round(sum(self.annotated_counts)))

    @property
    def p_gold(self) -> np.ndarray:
        """Human cluster counts normalized, with 0 for "wrong" (length K + 1)."""
        counts = np.append(np.asarray(self.gold_counts, dtype=np.float64), 0.0)
        return counts / counts.sum()

    @property
    def p_model(self) -> np.ndarray:
        """The annotated pool's distribution over the clusters and "wrong" (length K + 1)."""
        counts = np.asarray(self.annotated_counts, dtype=np.float64)
        total = counts.sum()
        return counts / total if total > 0 else np.full(len(counts), 1.0 / len(counts))

    @property
    def p_gold_smoothed(self) -> np.ndarray:
        """The authors' ``P_gold``: ``(n_k + 1) / (N + K + 1)``, "wrong" ``1 / (N + K + 1)``."""
        return smoothed(np.append(np.asarray(self.gold_counts, dtype=np.float64), 0.0))

    @property
    def p_model_smoothed(self) -> np.ndarray:
        """The authors' ``P_model``: the pool counts plus one per category, normalized."""
        return smoothed(self.annotated_counts)


def smoothed(counts: Sequence[float]) -> np.ndarray:
    """Counts plus one, normalized (the authors' smoothing of ``P_gold`` and ``P_model``).

    >>> smoothed([3, 0, 1]).tolist()
    [0.5714285714285714, 0.14285714285714285, 0.2857142857142857]
    """
    values = np.asarray(counts, dtype=np.float64) + 1.0
    return values / values.sum()


@dataclass(frozen=True)
class AnswerSet:
    """One drawn answer set.

    Attributes:
        answers: answer string -> how many times it was drawn (what a metric sees).
        gold: answers drawn per category, "wrong" last (the gold matching's counts).
        target: the distribution ``p`` the set was drawn from.
    """

    answers: Mapping[str, int]
    gold: tuple[int, ...]
    target: tuple[float, ...]


def read_annotations(path: Union[str, os.PathLike]) -> dict[str, dict[str, Annotation]]:
    """The gold matching of a ``{"annotated_prediction_data": {id: {answer: {"cluster", "count"}}}}`` file.

    >>> anns = read_annotations("../shared/data/cfc/dev.predictions.human.annotated.json")  # doctest: +SKIP
    >>> anns["r1q1"]["evening"]  # doctest: +SKIP
    Annotation(cluster='r1q1.2', count=41)
    """
    path = Path(path)
    try:
        whole = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataFormatError(f"not a JSON file: {exc}", path) from None
    data = whole.get("annotated_prediction_data") if isinstance(whole, dict) else None
    if not isinstance(data, dict):
        raise DataFormatError('no "annotated_prediction_data" object', path)
    out: dict[str, dict[str, Annotation]] = {}
    for qid, answers in data.items():
        if not isinstance(answers, dict):
            raise DataFormatError(
                f'expected {{answer: {{"cluster", "count"}}}}, got {type(answers).__name__}', path, question_id=qid
            )
        parsed: dict[str, Annotation] = {}
        for answer, info in answers.items():
            cluster = info.get("cluster") if isinstance(info, dict) else None
            count = info.get("count") if isinstance(info, dict) else None
            if not isinstance(cluster, str) or isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise DataFormatError(
                    f'answer {answer!r}: expected {{"cluster": str, "count": int >= 0}}, got {info!r}',
                    path,
                    question_id=qid,
                )
            parsed[answer] = Annotation(cluster, count)
        out[qid] = parsed
    return out


def _weighted(items: Mapping[str, float], source: str) -> CategoryPool:
    kept = [(s, float(w)) for s, w in items.items() if w > 0]
    return CategoryPool(tuple(s for s, _ in kept), tuple(w for _, w in kept), source)


def stratified_answers(truth: QuestionTargets, num: int, rng: np.random.Generator) -> list[Counter]:
    """``num`` ground-truth answer instances stratified by cluster, drawn without replacement.

    Cluster ``k`` with ``n_k`` of the ``N`` answers gets ``min(ceil(num * n_k / N), its
    instances)``; an instance is one person's answer (a string repeated by its count,
    strings sorted). A cluster whose strings have no count offers each string once.

    >>> from protoqa_core.io.records import Cluster
    >>> gt = QuestionTargets("q", (Cluster("q.0", ("dog", "puppy"), 6), Cluster("q.1", ("cat",), 4)),
    ...                  {"dog": 5, "puppy": 1, "cat": 4})
    >>> [sum(c.values()) for c in stratified_answers(gt, 5, np.random.default_rng(0))]
    [3, 2]
    """
    total = sum(float(c.count) for c in truth.clusters)
    out: list[Counter] = []
    for cluster in truth.clusters:
        strings = sorted(dict.fromkeys(cluster.answers))
        instances = [a for a in strings for _ in range(int(round(truth.answer_counts.get(a, 0))))] or strings
        wanted = math.ceil(num * float(cluster.count) / total) if total > 0 else 0
        k = min(len(instances), wanted)
        picks = rng.choice(len(instances), size=k, replace=False) if k else []
        out.append(Counter(instances[int(i)] for i in picks))
    return out


def build_pools(
    truths: Mapping[str, QuestionTargets],
    annotations: Mapping[str, Mapping[str, Annotation]],
    *,
    stratified: int = 0,
    seed: int = 0,
) -> dict[str, QuestionPool]:
    """One :class:`QuestionPool` per question that has both ground truth and annotations.

    ``stratified > 0`` adds that many ground-truth answers per question, stratified by
    cluster (:func:`stratified_answers`, the ``authors`` procedure). Raises
    ``DataFormatError`` when an annotation names a cluster the question does not have.

    >>> from protoqa_core.io.records import Cluster
    >>> gt = QuestionTargets("q", (Cluster("q.0", ("dog",), 6), Cluster("q.1", ("cat", "kitten"), 4)),
    ...                  {"dog": 6, "cat": 3, "kitten": 1})
    >>> pool = build_pools({"q": gt}, {"q": {"puppy": Annotation("q.0", 5), "car": Annotation("wrong", 2)}})["q"]
    >>> [(c.strings, c.source) for c in pool.categories]
    [(('puppy',), 'annotated'), (('cat', 'kitten'), 'human answers'), (('car',), 'annotated')]
    >>> pool.p_model.tolist(), pool.p_gold.tolist()
    ([0.7142857142857143, 0.0, 0.2857142857142857], [0.6, 0.4, 0.0])
    """
    shared = [qid for qid in annotations if qid in truths]
    pooled_wrong: Counter = Counter()
    for qid in shared:
        for answer, ann in annotations[qid].items():
            if ann.cluster == WRONG:
                pooled_wrong[answer] += ann.count
    pools: dict[str, QuestionPool] = {}
    for qid in shared:
        truth = truths[qid]
        ids = tuple(c.id for c in truth.clusters)
        index = {cid: j for j, cid in enumerate(ids)}
        by_category: list[Counter] = [Counter() for _ in range(len(ids) + 1)]
        for answer, ann in annotations[qid].items():
            if ann.cluster == WRONG:
                j = len(ids)
            elif ann.cluster in index:
                j = index[ann.cluster]
            else:
                raise DataFormatError(
                    f"answer {answer!r} is annotated with cluster {ann.cluster!r}, which the "
                    f"question does not have (clusters: {', '.join(ids)})",
                    question_id=qid,
                )
            by_category[j][answer] += ann.count
        if stratified > 0:
            rng = np.random.default_rng([int(seed), 99, zlib.crc32(qid.encode("utf-8"))])
            for j, extra in enumerate(stratified_answers(truth, stratified, rng)):
                by_category[j].update(extra)
        categories = []
        for j, cluster in enumerate(truth.clusters):
            if sum(by_category[j].values()) > 0:
                categories.append(_weighted(by_category[j], "annotated"))
                continue
            # No annotated answer landed here: the cluster's own strings, weighted by
            # how many people gave them (evenly when no string has a count).
            strings = list(dict.fromkeys(cluster.answers))
            weights = {a: truth.answer_counts.get(a, 0.0) for a in strings}
            if not any(w > 0 for w in weights.values()):
                weights = dict.fromkeys(strings, 1.0)
            categories.append(_weighted(weights, "human answers"))
        if sum(by_category[-1].values()) > 0:
            categories.append(_weighted(by_category[-1], "annotated"))
        else:
            # An answer this question annotates or has among its human answers is not wrong here.
            own = set(annotations[qid]) | set(truth.answer_counts)
            categories.append(_weighted({a: n for a, n in pooled_wrong.items() if a not in own}, "other questions"))
        pools[qid] = QuestionPool(
            qid,
            ids,
            tuple(float(c.count) for c in truth.clusters),
            tuple(float(sum(c.values())) for c in by_category),
            tuple(categories),
            int(stratified),
        )
    return pools


def question_rng(seed: int, sampling: str, question_id: str) -> np.random.Generator:
    """The random generator of one question's answer sets for one sampling.

    >>> a = question_rng(0, "centered", "r1q1").random()
    >>> a == question_rng(0, "centered", "r1q1").random() != question_rng(1, "centered", "r1q1").random()
    True
    """
    return np.random.default_rng([int(seed), SAMPLINGS.index(sampling), zlib.crc32(question_id.encode("utf-8"))])


def centered_distribution(p_model: Sequence[float], p_gold: Sequence[float], rng: np.random.Generator) -> np.ndarray:
    """The centered sampling of docs/spec.md: ``z*P_model + w1*P_gold + w2*Uniform``, z ~ U(0.5, 1), w1 + w2 = 1 - z.

    >>> p = centered_distribution([0.5, 0.0, 0.5], [0.6, 0.4, 0.0], np.random.default_rng(0))
    >>> round(float(p.sum()), 12), bool(p[1] > 0)
    (1.0, True)
    """
    model, gold = np.asarray(p_model, dtype=np.float64), np.asarray(p_gold, dtype=np.float64)
    if model.shape != gold.shape:
        raise ValueError(f"P_model and P_gold differ in length: {model.shape} and {gold.shape}")
    z = rng.uniform(0.5, 1.0)
    u1, u2 = rng.uniform(0.0, 1.0, size=2)
    w1 = (1.0 - z) * u1 / (u1 + u2)
    w2 = (1.0 - z) - w1
    return z * model + w1 * gold + w2 * np.full(len(model), 1.0 / len(model))


def missing_answers_distribution(
    p_gold: Sequence[float], rng: np.random.Generator, include_wrong: bool = False
) -> np.ndarray:
    """``p_gold`` with 1 to n - 1 of its n non-empty clusters set to 0, renormalized ("wrong" stays 0).

    With a single non-empty cluster nothing can be dropped and ``p_gold`` is returned.
    ``include_wrong`` (the authors' procedure): ``m ~ U{1, ..., n - 2}`` of all n
    categories, "wrong" included, are set to 0.

    >>> p = missing_answers_distribution([0.4, 0.3, 0.2, 0.1], np.random.default_rng(0), include_wrong=True)
    >>> 1 <= int((p == 0).sum()) <= 2, round(float(p.sum()), 12)
    (True, 1.0)

    >>> p = missing_answers_distribution([0.5, 0.3, 0.2, 0.0], np.random.default_rng(0))
    >>> 1 <= int((p[:3] == 0).sum()) <= 2, round(float(p.sum()), 12)
    (True, 1.0)
    """
    gold = np.asarray(p_gold, dtype=np.float64)
    if include_wrong:
        if len(gold) < 3:
            return gold.copy()
        dropped = rng.choice(len(gold), size=int(rng.integers(1, len(gold) - 1)), replace=False)
        out = gold.copy()
        out[dropped] = 0.0
        return out / out.sum()
    clusters = np.flatnonzero(gold[:-1] > 0)
    if len(clusters) < 2:
        return gold.copy()
    dropped = rng.choice(clusters, size=int(rng.integers(1, len(clusters))), replace=False)
    out = gold.copy()
    out[dropped] = 0.0
    return out / out.sum()


def wrong_ranking_distribution(
    p_gold: Sequence[float], rng: np.random.Generator, include_wrong: bool = False
) -> np.ndarray:
    """``p_gold`` with the clusters' probabilities permuted ("wrong" stays last), differing from ``p_gold``.

    ``include_wrong`` (the authors' procedure) permutes "wrong" with the clusters.

    When every cluster has the same probability no permutation changes anything,
    and ``p_gold`` is returned.

    >>> p = wrong_ranking_distribution([0.5, 0.3, 0.2, 0.0], np.random.default_rng(0))
    >>> sorted(p[:3].tolist()), p[:3].tolist() != [0.5, 0.3, 0.2]
    ([0.2, 0.3, 0.5], True)
    """
    gold = np.asarray(p_gold, dtype=np.float64)
    end = len(gold) if include_wrong else len(gold) - 1
    clusters = gold[:end]
    out = gold.copy()
    if np.ptp(clusters) == 0:
        return out
    while True:
        out[:end] = clusters[rng.permutation(len(clusters))]
        if not np.array_equal(out[:end], clusters):
            return out


def wrong_score_distribution(
    p_gold: Sequence[float], rng: np.random.Generator, include_wrong: bool = False
) -> np.ndarray:
    """``p_gold`` with every cluster probability moved by less than half the gap to its neighbours.

    The order of the clusters by probability is kept (ties stay tied); "wrong" stays 0,
    unless ``include_wrong`` (the authors' procedure) moves it like a cluster.

    >>> gold = np.array([0.5, 0.3, 0.2, 0.0])
    >>> p = wrong_score_distribution(gold, np.random.default_rng(3))
    >>> np.argsort(-p[:3]).tolist(), bool(np.any(np.abs(p - gold) > 0)), round(float(p.sum()), 12)
    ([0, 1, 2], True, 1.0)
    """
    gold = np.asarray(p_gold, dtype=np.float64)
    end = len(gold) if include_wrong else len(gold) - 1
    clusters = gold[:end]
    order = np.argsort(-clusters, kind="stable")
    ranked = clusters[order]
    above = np.append(np.inf, ranked[:-1] - ranked[1:])  # gap to the next larger
    below = np.append(ranked[:-1] - ranked[1:], ranked[-1])  # gap to the next smaller (or to 0)
    half_gap = np.minimum(above, below) / 2.0
    severity = rng.uniform(0.0, 1.0)
    moved = ranked + severity * rng.uniform(-1.0, 1.0, size=len(ranked)) * half_gap
    out = gold.copy()
    out[order] = moved
    out[:end] /= out[:end].sum()
    return out


_AUTHORS_GENERATORS: dict[str, Callable[[QuestionPool, np.random.Generator], np.ndarray]] = {
    "centered": lambda pool, rng: centered_distribution(pool.p_model_smoothed, pool.p_gold_smoothed, rng),
    "missing_answers": lambda pool, rng: missing_answers_distribution(pool.p_gold_smoothed, rng, True),
    "wrong_ranking": lambda pool, rng: wrong_ranking_distribution(pool.p_gold_smoothed, rng, True),
    "wrong_score": lambda pool, rng: wrong_score_distribution(pool.p_gold_smoothed, rng, True),
}

_GENERATORS: dict[str, Callable[[QuestionPool, np.random.Generator], np.ndarray]] = {
    "centered": lambda pool, rng: centered_distribution(pool.p_model, pool.p_gold, rng),
    "missing_answers": lambda pool, rng: missing_answers_distribution(pool.p_gold, rng),
    "wrong_ranking": lambda pool, rng: wrong_ranking_distribution(pool.p_gold, rng),
    "wrong_score": lambda pool, rng: wrong_score_distribution(pool.p_gold, rng),
}


def quota_counts(p: Sequence[float], size: int) -> np.ndarray:
    """``size`` items allotted in proportion to ``p`` by largest remainders (ties: lower index first).

    >>> quota_counts([0.5, 0.25, 0.25], 5).tolist()
    [3, 1, 1]
    """
    probs = np.asarray(p, dtype=np.float64)
    if probs.ndim != 1 or probs.size == 0 or np.any(probs < 0) or not probs.sum() > 0:
        raise ValueError(f"need a non-negative, non-zero probability vector, got {list(probs)}")
    exact = probs / probs.sum() * size
    counts = np.floor(exact).astype(int)
    remainder = size - int(counts.sum())
    if remainder > 0:
        order = sorted(range(len(exact)), key=lambda j: (-(exact[j] - counts[j]), j))
        for j in order[:remainder]:
            counts[j] += 1
    return counts


def draw_answer_set(pool: QuestionPool, p: Sequence[float], size: int, rng: np.random.Generator) -> AnswerSet:
    """``size`` answers with category counts ``quota_counts(p)``, strings drawn from the category pools.

    Categories with an empty pool get probability 0 first.

    >>> from protoqa_core.io.records import Cluster
    >>> gt = QuestionTargets("q", (Cluster("q.0", ("dog",), 6),), {"dog": 6})
    >>> pool = build_pools({"q": gt}, {"q": {"dog": Annotation("q.0", 2), "car": Annotation("wrong", 1)}})["q"]
    >>> s = draw_answer_set(pool, [0.75, 0.25], 4, np.random.default_rng(0))
    >>> dict(s.answers), s.gold
    ({'dog': 3, 'car': 1}, (3, 1))
    """
    probs = np.asarray(p, dtype=np.float64).copy()
    if len(probs) != len(pool.categories):
        raise ValueError(f"{len(probs)} probabilities for {len(pool.categories)} categories")
    for j, category in enumerate(pool.categories):
        if not category.strings:
            probs[j] = 0.0
    if not probs.sum() > 0:
        raise ValueError(f"question {pool.question_id}: no category with both probability and answers to draw")
    counts = quota_counts(probs, size)
    answers: Counter = Counter()
    for category, n in zip(pool.categories, counts, strict=True):
        if n == 0:
            continue
        weights = np.asarray(category.weights, dtype=np.float64)
        picks = rng.choice(len(category.strings), size=int(n), p=weights / weights.sum())
        for i in picks:
            answers[category.strings[int(i)]] += 1
    return AnswerSet(dict(answers), tuple(int(n) for n in counts), tuple(float(x) for x in probs / probs.sum()))


def authors_counts(p: Sequence[float], pool_counts: Sequence[float], *, one_more_if_empty: bool = False) -> np.ndarray:
    """Answers per category under the authors' procedure: ``T p`` scaled to fit every category's slots.

    Category ``k`` has ``c_k + 1`` slots; ``T`` is their total. The counts are
    ``round(r T p_k)`` with ``r = min(1, min_k (c_k + 1) / (T p_k))``;
    ``one_more_if_empty`` adds one to every category when one rounds to 0 (the
    authors' filter for wrong ranking and wrong score), never beyond its slots.

    >>> authors_counts([0.5, 0.25, 0.25], [9, 1, 20]).tolist()  # T = 33; category 1 has 2 slots
    [4, 2, 2]
    """
    probs = np.asarray(p, dtype=np.float64)
    slots = np.asarray(pool_counts, dtype=np.float64).round() + 1.0
    if probs.shape != slots.shape:
        raise ValueError(f"{len(probs)} probabilities for {len(slots)} categories")
    wanted = slots.sum() * probs
    over = wanted > slots
    ratio = min(1.0, float(np.min(slots[over] / wanted[over]))) if over.any() else 1.0
    counts = np.floor(ratio * wanted + 0.5).astype(int)
    if one_more_if_empty and (counts == 0).any():
        counts += 1
    return np.minimum(counts, slots.astype(int))


def draw_authors_set(pool: QuestionPool, p: Sequence[float], sampling: str, rng: np.random.Generator) -> AnswerSet:
    """One answer set by the authors' procedure (:func:`authors_counts`, then slots without replacement).

    >>> from protoqa_core.io.records import Cluster
    >>> gt = QuestionTargets("q", (Cluster("q.0", ("dog",), 6),), {"dog": 6})
    >>> pool = build_pools({"q": gt}, {"q": {"dog": Annotation("q.0", 4), "car": Annotation("wrong", 2)}})["q"]
    >>> s = draw_authors_set(pool, [0.75, 0.25], "centered", np.random.default_rng(0))
    >>> s.gold[0] <= 4 and s.gold[1] <= 2, sum(s.answers.values()) == sum(s.gold)
    (True, True)
    """
    probs = np.asarray(p, dtype=np.float64)
    if len(probs) != len(pool.categories):
        raise ValueError(f"{len(probs)} probabilities for {len(pool.categories)} categories")
    counts = authors_counts(
        probs, pool.annotated_counts, one_more_if_empty=sampling in ("wrong_ranking", "wrong_score")
    )
    answers: Counter = Counter()
    drawn = []
    for category, n in zip(pool.categories, counts, strict=True):
        instances = [a for a, w in zip(category.strings, category.weights, strict=True) for _ in range(int(round(w)))]
        picks = rng.choice(len(instances) + 1, size=int(n), replace=False) if n else []
        got = [instances[int(i)] for i in picks if int(i) < len(instances)]
        answers.update(got)
        drawn.append(len(got))
    return AnswerSet(dict(answers), tuple(drawn), tuple(float(x) for x in probs))


def draw_answer_sets(
    pool: QuestionPool,
    sampling: str,
    num_sets: int,
    *,
    size: Optional[int] = None,
    seed: int = 0,
    procedure: str = "authors",
) -> list[AnswerSet]:
    """``num_sets`` answer sets of one question from one generator (see the module docstring).

    ``procedure`` is ``authors`` (sizes scaled to the pool, without replacement; ``size``
    must be None) or ``pool`` (``size`` answers, default :attr:`QuestionPool.pool_size`,
    with replacement).

    >>> from protoqa_core.io.records import Cluster
    >>> gt = QuestionTargets("q", (Cluster("q.0", ("dog",), 6), Cluster("q.1", ("cat",), 4)), {"dog": 6, "cat": 4})
    >>> pool = build_pools({"q": gt}, {"q": {"dog": Annotation("q.0", 2), "car": Annotation("wrong", 1)}})["q"]
    >>> sets = draw_answer_sets(pool, "centered", 3, size=20, procedure="pool")
    >>> len(sets), all(sum(s.gold) == 20 for s in sets)
    (3, True)
    """
    if sampling not in _GENERATORS:
        raise ValueError(f"unknown sampling {sampling!r}; choose one of {', '.join(SAMPLINGS)}")
    if procedure not in PROCEDURES:
        raise ValueError(f"unknown procedure {procedure!r}; choose one of {', '.join(PROCEDURES)}")
    if procedure == "authors":
        if size is not None:
            raise ValueError("the authors' procedure sizes every set itself; give no size")
        if num_sets < 1:
            raise ValueError(f"need at least one set, got {num_sets}")
        rng = question_rng(seed, sampling, pool.question_id)
        generator = _AUTHORS_GENERATORS[sampling]
        return [draw_authors_set(pool, generator(pool, rng), sampling, rng) for _ in range(num_sets)]
    size = pool.pool_size if size is None else size
    if num_sets < 1 or size < 1:
        raise ValueError(f"need at least one set of at least one answer, got {num_sets} sets of {size}")
    rng = question_rng(seed, sampling, pool.question_id)
    generator = _GENERATORS[sampling]
    return [draw_answer_set(pool, generator(pool, rng), size, rng) for _ in range(num_sets)]
