"""Paired comparison of two systems under ProbEval: which one is closer to the human distribution."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from protoqa_core.significance import PairedComparison, compare_paired

from .inputs import QuestionTargets
from .probeval import ProbEval

__all__ = ["compare_probeval"]


def compare_probeval(
    targets: Mapping[str, QuestionTargets],
    samples_a: Mapping[str, Any],
    samples_b: Mapping[str, Any],
    probeval: Optional[ProbEval] = None,
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 12345,
) -> PairedComparison:
    """Paired bootstrap comparison of two systems' ProbEval KL on the questions both answered.

    ``difference`` is ``KL(a) - KL(b)``: negative means ``a`` is closer to the human
    distribution. Questions missing from either side are left out; the test is
    :func:`protoqa_core.significance.compare_paired`.

    >>> from protoqa_core.io.records import Cluster
    >>> gts = {f"q{i}": QuestionTargets(f"q{i}", (Cluster(f"q{i}.0", ("dog",), 6), Cluster(f"q{i}.1", ("cat",), 4)))
    ...        for i in range(20)}
    >>> good = {q: ["dog"] * 6 + ["cat"] * 4 for q in gts}
    >>> bad = {q: ["car"] * 10 for q in gts}
    >>> r = compare_probeval(gts, good, bad, ProbEval("human"))
    >>> r.difference.mean < 0, r.p_value < 0.05
    (True, True)
    """
    pe = probeval or ProbEval()
    shared = [qid for qid in targets if qid in samples_a and qid in samples_b]
    if not shared:
        raise ValueError("the two systems share no question with the targets")
    subset = {qid: targets[qid] for qid in shared}
    a = pe.evaluate(subset, {q: samples_a[q] for q in shared}).per_question
    b = pe.evaluate(subset, {q: samples_b[q] for q in shared}).per_question
    return compare_paired(a, b, level=level, resamples=resamples, seed=seed)
