"""Paired comparison of two systems under ProbEval: which one is closer to the human distribution."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from protoqa_core.io.records import preview_ids
from protoqa_core.significance import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    PairedComparison,
    compare_paired,
    compare_paired_draws,
)

from .inputs import QuestionTargets
from .probeval import ProbEval

__all__ = ["ProbEvalComparison", "CLUSTERING_DRAWS", "clustering_draws", "compare_probeval"]

#: How many clusterings a comparison redraws with its resamples when its automatic clustering reads a seed.
CLUSTERING_DRAWS = 5


@dataclass(frozen=True)
class ProbEvalComparison(PairedComparison):
    """A :class:`~protoqa_core.significance.PairedComparison` of two ProbEval results, with each system's samples
    per question and the comparison's signature."""

    num_samples: tuple[int, int] = (0, 0)
    signature: str = ""
    clustering_draws: int = 1


def clustering_draws(probeval: ProbEval, draws: int = CLUSTERING_DRAWS) -> list[ProbEval]:
    """``probeval`` and, when its automatic clustering reads a seed, the same setting at the next ``draws - 1``
    seeds, sharing its embedder and matcher (nothing is embedded twice); else ``probeval`` alone.

    >>> [p.clusterer.seed for p in clustering_draws(ProbEval("gmeans", embedder="char-ngrams", seed=7), 3)]
    [7, 8, 9]
    >>> len(clustering_draws(ProbEval("gmeans", embedder="char-ngrams", init="greedy"))), len(clustering_draws(ProbEval("human")))
    (1, 1)
    """
    clusterer = probeval.clusterer
    if clusterer is None or "seed" not in clusterer.params() or draws <= 1:
        return [probeval]
    values = {option.name: getattr(clusterer, option.name) for option in clusterer.options}
    out = [probeval]
    for k in range(1, draws):
        child = copy.copy(probeval)
        child.clusterer = type(clusterer).from_options({**values, "seed": (values["seed"] + k) % 2**32})
        child._preloaded = {}
        out.append(child)
    return out


def _check_question_sets(
    shared: list[str], targets: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any]
) -> None:
    problems = []
    for name, mine, other in (("a", a, b), ("b", b, a)):
        lacking = [qid for qid in targets if qid not in mine and qid in other]
        if lacking:
            problems.append(f"{name} lacks {len(lacking)} question(s) that the other answers: {preview_ids(lacking)}")
    unanswered = [qid for qid in targets if qid not in a and qid not in b]
    if unanswered:
        problems.append(f"neither answers {len(unanswered)} question(s): {preview_ids(unanswered)}")
    if problems:
        raise ValueError(
            "the two systems do not answer the same full set of questions (" + "; ".join(problems) + "); pass "
            f"only_common=True (--only-common) to compare them on the {len(shared)} question(s) both answer"
        )


def compare_probeval(
    targets: Mapping[str, QuestionTargets],
    samples_a: Mapping[str, Any],
    samples_b: Mapping[str, Any],
    probeval: Optional[ProbEval] = None,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    only_common: bool = False,
    accept_samples: bool = False,
    draws: int = CLUSTERING_DRAWS,
) -> ProbEvalComparison:
    """Paired bootstrap comparison of two systems' ProbEval KL.

    ``difference`` is ``KL(a) - KL(b)`` (negative: ``a`` is closer to the humans). Both systems must answer every
    question unless ``only_common``, and be scored at one sample count unless ``accept_samples``. A seeded
    automatic clustering is drawn ``draws`` times (:func:`clustering_draws`), each resample redrawing it, so
    the interval holds the seed's share (docs/probeval.md).

    >>> from protoqa_core.io.records import Cluster
    >>> gts = {f"q{i}": QuestionTargets(f"q{i}", (Cluster(f"q{i}.0", ("dog",), 6), Cluster(f"q{i}.1", ("cat",), 4)))
    ...        for i in range(20)}
    >>> good = {q: ["dog"] * 6 + ["cat"] * 4 for q in gts}
    >>> bad = {q: ["car"] * 10 for q in gts}
    >>> r = compare_probeval(gts, good, bad, ProbEval("human"))
    >>> r.difference.mean < 0, r.p_value < 0.05, r.num_samples
    (True, True, (10, 10))
    >>> compare_probeval(gts, good, {q: ["car"] * 30 for q in gts}, ProbEval("human"))
    Traceback (most recent call last):
    ...
    ValueError: the systems were scored at different sample counts (a: 10 per question, b: 30), so their KLs are not comparable; sample them alike, or pass accept_samples=True (--accept-mismatch samples) to compare them anyway
    """
    pe = (probeval or ProbEval()).resolved(targets)
    shared = [qid for qid in targets if qid in samples_a and qid in samples_b]
    if not shared:
        raise ValueError("the two systems share no question with the targets")
    if not only_common:
        _check_question_sets(shared, targets, samples_a, samples_b)
    subset = {qid: targets[qid] for qid in shared}
    runs = clustering_draws(pe, draws)
    a_runs = [p.evaluate(subset, {q: samples_a[q] for q in shared}) for p in runs]
    b_runs = [p.evaluate(subset, {q: samples_b[q] for q in shared}) for p in runs]
    a, b = a_runs[0], b_runs[0]
    counts = (a.num_samples or 0, b.num_samples or 0)
    if counts[0] != counts[1] and not accept_samples:
        raise ValueError(
            f"the systems were scored at different sample counts (a: {counts[0]} per question, b: {counts[1]}), so "
            "their KLs are not comparable; sample them alike, or pass accept_samples=True (--accept-mismatch "
            "samples) to compare them anyway"
        )
    missing = "skip" if len(shared) < len(targets) else "wrong"
    if counts[0] == counts[1]:
        signature = pe.signature(len(shared), missing, num_samples=counts[0])
    else:
        signature = pe.signature(len(shared), missing, num_samples=f"{counts[0]},{counts[1]}")
        signature += "|accepted-mismatch:samples"
    if len(runs) == 1:
        paired = compare_paired(a.per_question, b.per_question, level=level, resamples=resamples, seed=seed)
    else:
        paired = compare_paired_draws(
            [r.per_question for r in a_runs],
            [r.per_question for r in b_runs],
            level=level,
            resamples=resamples,
            seed=seed,
        )
        signature += f"|clustering_draws:{len(runs)}"
    return ProbEvalComparison(**vars(paired), num_samples=counts, signature=signature, clustering_draws=len(runs))
