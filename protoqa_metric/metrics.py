"""The standard ProtoQA metric set and data-set level evaluation.

One similarity matrix is computed per question and shared by every metric of the
set, so asking for all ten metrics costs little more than asking for one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from protoqa_core.readers import ProtoQAWarning, Question
from protoqa_core.similarity import Similarity

from .scoring import QuestionScore

__all__ = [
    "MetricSpec",
    "STANDARD_METRICS",
    "PAPER_METRICS",
    "ProtoQAWarning",
    "EvaluationResult",
    "evaluate_predictions",
    "metric_specs",
]


@dataclass(frozen=True)
class MetricSpec:
    """One ranked-list metric: its limits and whether clusters are weighted by count."""

    name: str
    max_answers: Optional[int] = None
    max_incorrect: Optional[int] = None
    weighted: bool = True


STANDARD_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("max_answers@1", max_answers=1),
    MetricSpec("max_answers@3", max_answers=3),
    MetricSpec("max_answers@5", max_answers=5),
    MetricSpec("max_answers@10", max_answers=10),
    MetricSpec("max_answers@all"),
    MetricSpec("max_incorrect@1", max_incorrect=1),
    MetricSpec("max_incorrect@3", max_incorrect=3),
    MetricSpec("max_incorrect@5", max_incorrect=5),
    MetricSpec("max_incorrect@all"),
    MetricSpec("set_intersection", weighted=False),
)
"""Every metric the reference evaluator reports, with the keys the CLI's ``--json`` uses."""

PAPER_METRICS: tuple[MetricSpec, ...] = tuple(
    m for m in STANDARD_METRICS if m.name in {
        "max_answers@1", "max_answers@3", "max_answers@5", "max_answers@10",
        "max_incorrect@1", "max_incorrect@3", "max_incorrect@5",
    }
)
"""The seven metrics reported in the ProtoQA paper."""

_METRIC_SETS = {"standard": STANDARD_METRICS, "paper": PAPER_METRICS}


def metric_specs(names: Union[str, Iterable[str]] = "standard") -> tuple[MetricSpec, ...]:
    """Metric specs by set name (``standard``, ``paper``) or by metric names.

    >>> [m.name for m in metric_specs(["max_answers@1", "set_intersection"])]
    ['max_answers@1', 'set_intersection']
    """
    if isinstance(names, str):
        if names in _METRIC_SETS:
            return _METRIC_SETS[names]
        names = [n.strip() for n in names.split(",") if n.strip()]
    by_name = {m.name: m for m in STANDARD_METRICS}
    out = []
    for name in names:
        if name not in by_name:
            raise ValueError(
                f"unknown metric {name!r}; choose from {', '.join(by_name)} or a set: {', '.join(_METRIC_SETS)}"
            )
        out.append(by_name[name])
    return tuple(out)


@dataclass
class EvaluationResult:
    """Data-set scores with everything needed to trust and reproduce them.

    Attributes:
        scores: metric name -> mean score over the scored questions.
        per_question: question id -> metric name -> :class:`QuestionScore`.
        num_questions: how many questions the means are over.
        missing: target ids without predictions (scored 0 unless excluded).
        skipped: target ids left out because their clusters total 0.
        ignored: prediction ids not among the targets (when ignored).
        signature: reproducibility signature, e.g.
            ``sim:wordnet|stop:match|metrics:standard|missing:zero|n:52|wordnet:3.0|version:0.1.0``.
    """

    scores: dict[str, float]
    per_question: dict[str, dict[str, QuestionScore]]
    num_questions: int
    missing: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    signature: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The scores plus ``signature``, as printed by ``protoqa-eval --json``."""
        return {**self.scores, "signature": self.signature}


def evaluate_predictions(
    targets: Union[Mapping[str, Question], Sequence[Question]],
    predictions: Mapping[str, Sequence[str]],
    similarity: Union[str, Similarity] = "wordnet",
    metrics: Union[str, Iterable[str], Sequence[MetricSpec]] = "standard",
    *,
    only_predicted: bool = False,
    ignore_unknown: bool = False,
    all_stopword_match: bool = True,
    progress: bool = False,
) -> EvaluationResult:
    """Score ranked answer lists against a set of questions and average over questions.

    The same as ``ProtoQA(similarity, metrics, all_stopword_match=...).evaluate(...)``
    (:class:`protoqa_metric.ProtoQA`), which is worth keeping when scoring several
    prediction sets under one configuration.

    Args:
        targets: questions with clusters (as from :func:`read_targets`).
        predictions: question id -> ranked answers.
        similarity: ``exact_match``, ``wordnet``, ``wordnet_wup``, ``lcs`` or a
            :class:`Similarity`.
        metrics: ``"standard"`` (the ten metrics), ``"paper"`` (seven), metric names
            or :class:`MetricSpec` objects.
        only_predicted: average only over questions that have predictions (the
            reference evaluator's behaviour). By default a question without
            predictions scores 0 and is named in a warning.
        ignore_unknown: drop predictions for ids not in the targets (with a warning)
            instead of raising :class:`DataFormatError`.
        all_stopword_match: WordNet similarities only: two all-stopword strings
            score 1 (the published behaviour) or, with False, 0.
        progress: show a progress bar on stderr (when stderr is a terminal).

    >>> from protoqa_core.readers import Question, Cluster
    >>> qs = [Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))]
    >>> r = evaluate_predictions(qs, {"q1": ["cat", "dog"]}, "exact_match")
    >>> r.scores["max_answers@1"], r.scores["max_answers@all"]
    (0.6666666666666666, 1.0)
    """
    from .metric import ProtoQA  # metric.py builds on this module's specs and result type

    return ProtoQA(similarity, metrics, all_stopword_match=all_stopword_match).evaluate(
        targets, predictions, only_predicted=only_predicted, ignore_unknown=ignore_unknown, progress=progress)
