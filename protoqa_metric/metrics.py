"""The standard ProtoQA metric set and data-set level evaluation.

One similarity matrix is computed per question and shared by every metric of the
set, so asking for all ten metrics costs little more than asking for one.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from protoqa_core.readers import DataFormatError, ProtoQAWarning, Question, preview_ids
from .scoring import QuestionScore, score_matrix, similarity_matrix
from protoqa_core.signature import make_signature
from protoqa_core.similarity import Similarity, get_similarity
from protoqa_core.text import normalize_prediction

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


def _warn(message: str) -> None:
    warnings.warn(message, ProtoQAWarning, stacklevel=3)


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
    sim = get_similarity(similarity) if isinstance(similarity, str) else similarity
    if isinstance(metrics, (str,)) or not all(isinstance(m, MetricSpec) for m in metrics):
        specs = metric_specs(metrics)  # type: ignore[arg-type]
        metric_set_name = metrics if isinstance(metrics, str) and metrics in _METRIC_SETS else "custom"
    else:
        specs = tuple(metrics)  # type: ignore[arg-type]
        metric_set_name = "custom"
    questions = dict(targets) if isinstance(targets, Mapping) else {q.id: q for q in targets}

    unknown = [qid for qid in predictions if qid not in questions]
    if unknown:
        if not ignore_unknown:
            raise DataFormatError(
                f"predictions for {len(unknown)} question id(s) that are not in the targets: {preview_ids(unknown)} "
                "(pass ignore_unknown=True / --ignore-unknown to drop them)"
            )
        _warn(f"ignored predictions for {len(unknown)} unknown question id(s): {preview_ids(unknown)}")
    for qid, answers in predictions.items():
        if isinstance(answers, str) or not isinstance(answers, Sequence):
            raise DataFormatError(f"answers must be a list of strings, got {type(answers).__name__}", question_id=qid)
        for a in answers:
            if not isinstance(a, str):
                raise DataFormatError(f"answers must be strings, found {type(a).__name__}", question_id=qid)

    skipped = [qid for qid, q in questions.items() if q.total_count <= 0]
    if skipped:
        _warn(f"left out {len(skipped)} question(s) whose clusters total 0: {preview_ids(skipped)}")
    missing = [qid for qid in questions if qid not in predictions and qid not in skipped]
    if missing:
        if only_predicted:
            _warn(f"{len(missing)} question(s) have no predictions and are left out of the means: {preview_ids(missing)}")
        else:
            _warn(f"{len(missing)} question(s) have no predictions and score 0: {preview_ids(missing)}")

    options = {} if not sim.uses_wordnet or all_stopword_match else {"all_stopword_match": False}
    per_question: dict[str, dict[str, QuestionScore]] = {}
    scored_ids = [qid for qid in questions if qid not in skipped and not (only_predicted and qid in missing)]
    iterator: Iterable[str] = scored_ids
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(scored_ids, desc=f"scoring ({sim.name})", unit="question", leave=False, disable=None)
    approximated = 0
    for qid in iterator:
        q = questions[qid]
        answers = list(predictions.get(qid, ()))
        cut: list[tuple[int, int]] = []
        matrix = similarity_matrix(answers, q.clusters, sim, approximated=cut, **options)
        if cut:
            approximated += len(cut)
            _warn(f"question {qid}: {sim.name} similarity is a lower bound for cluster(s) "
                  f"{preview_ids(sorted({q.clusters[j].id for _, j in cut}))} (a string over "
                  "the token limit, or the search budget ran out; see protoqa_core.similarity)")
        preds = [normalize_prediction(a) for a in answers]
        per_question[qid] = {
            m.name: score_matrix(matrix, q.clusters, max_answers=m.max_answers, max_incorrect=m.max_incorrect,
                                 weighted=m.weighted, rounded=sim.rounded, predictions=preds)
            for m in specs
        }
    n = len(per_question)
    scores = {
        m.name: (math.fsum(per_question[qid][m.name].score for qid in per_question) / n if n else 0.0)
        for m in specs
    }
    signature = make_signature(
        similarity=sim.name,
        all_stopword_match=all_stopword_match if sim.uses_wordnet else None,
        metrics=metric_set_name,
        missing="skip" if only_predicted else "zero",
        num_questions=n,
        approximated=approximated,
    )
    return EvaluationResult(scores, per_question, n, missing, skipped, unknown if ignore_unknown else [], signature)
