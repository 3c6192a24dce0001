"""Both metrics for one question's answers, and what the page shows of them.

:func:`score_answers` gives ProtoQA's ranked-list scores (:func:`protoqa_metric.evaluate_predictions`)
and ProbEval's KL (:class:`cfc_probeval.ProbEval`, human clusters) of a question given as a
:class:`~protoqa_metric.Question` or a row of the dataset export, with the claimed clusters
and cluster labels the page shows. It scores whatever it is given: input from outside goes
through :func:`demo_limits.scored_within_budget`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from demo_answers import Answers
from demo_errors import DemoError
from demo_settings import ROBERTA_ENCODER_ENV

from protoqa_core.environment import env_setting
from protoqa_metric import PAPER_METRICS, Question, evaluate_predictions, question_from_row

__all__ = [
    "SIMILARITIES",
    "CLAIM_METRIC",
    "ProtoQAScores",
    "DemoResult",
    "protoqa_scores",
    "space_similarities",
    "probeval_score",
    "as_question",
    "score_answers",
]

SIMILARITIES = ("exact_match", "wordnet")
"""Every question is scored under these; :func:`space_similarities` adds ``roberta`` when an encoder is set."""
CLAIM_METRIC = "max_answers@10"
"""The ranked-answers table shows the clusters claimed under this metric (the paper's headline)."""


@dataclass(frozen=True)
class ProtoQAScores:
    """ProtoQA's paper metrics for one question under each similarity.

    Attributes:
        scores: similarity -> metric name (``max_answers@1`` ...) -> score in [0, 1].
        claims: similarity -> cluster id claimed by each of the first ten ranked answers
            under Max Answers@10 (None: claims nothing).
        signatures: similarity -> reproducibility signature.
    """

    scores: Mapping[str, Mapping[str, float]]
    claims: Mapping[str, tuple[Optional[str], ...]]
    signatures: Mapping[str, str]


def protoqa_scores(question: Question, ranked: Sequence[str]) -> ProtoQAScores:
    """Max Answers@1/3/5/10 and Max Incorrect@1/3/5 of a ranked list, exact match and WordNet.

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> s = protoqa_scores(q, ["cat", "fish"])
    >>> s.scores["exact_match"]["max_answers@1"], s.claims["exact_match"]
    (0.6666666666666666, ('q1.1', None))
    """
    scores, claims, signatures = {}, {}, {}
    for similarity in space_similarities():
        if similarity == "roberta":
            result = _roberta_metric().evaluate({question.id: question}, {question.id: list(ranked)})
        else:
            result = evaluate_predictions({question.id: question}, {question.id: list(ranked)}, similarity, "paper")
        per_metric = result.per_question[question.id]
        scores[similarity] = {m.name: per_metric[m.name].score for m in PAPER_METRICS}
        claims[similarity] = per_metric[CLAIM_METRIC].assignment
        signatures[similarity] = result.signature
    return ProtoQAScores(scores, claims, signatures)


def space_similarities() -> tuple[str, ...]:
    """Exact match and WordNet, and ``roberta`` when ``$PROTOQA_SPACE_ROBERTA_ENCODER`` names an encoder.

    >>> space_similarities()[:2]
    ('exact_match', 'wordnet')
    """
    return SIMILARITIES + (("roberta",) if env_setting(ROBERTA_ENCODER_ENV) else ())


_roberta_lock = threading.Lock()
_roberta: dict[str, Any] = {}


def _roberta_metric() -> Any:
    """The ``roberta`` ProtoQA metric (paper metrics) for the configured encoder, built once."""
    from protoqa_metric import ProtoQA

    encoder = os.environ[ROBERTA_ENCODER_ENV].strip()
    with _roberta_lock:
        if encoder not in _roberta:
            _roberta[encoder] = ProtoQA("roberta", "paper", encoder=encoder)
        return _roberta[encoder]


_probeval_lock = threading.Lock()
_probeval: Any = None


def _probeval_instance() -> Any:
    global _probeval
    with _probeval_lock:
        if _probeval is None:
            from cfc_probeval import ProbEval

            # The human clusters are what the page shows, and WordNet matching (the
            # default) needs no embedding model, so nothing is downloaded.
            _probeval = ProbEval("human")
        return _probeval


def probeval_score(question: Question, samples: Mapping[str, int]) -> tuple[Any, str]:
    """ProbEval of one question: (``cfc_probeval.QuestionResult``, signature), human clusters.

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> result, signature = probeval_score(q, {"dog": 6, "cat": 4})
    >>> round(result.kl, 6), [c.id for c in result.clusters], signature.split("|")[5:7]
    (0.0, ['q1.0', 'q1.1', 'wrong'], ['n:1', 'n_samples:10'])
    """
    from cfc_probeval import targets_from_question

    probeval = _probeval_instance()
    with _probeval_lock:  # its WordNet caches are shared
        result = probeval.score_question(targets_from_question(question), dict(samples))
        return result, probeval.signature(1, num_samples=result.num_samples)


@dataclass
class DemoResult:
    """Everything the page shows for one question.

    Attributes:
        dataset_key: ``protoqa`` or ``cfc``.
        question_text: the question as asked.
        question: the data set's question with its clusters, or None for a typed question.
        prompt: the prompt the model completed, or None for stored answers.
        answers: the model's answers.
        protoqa: ProtoQA scores (None without clusters).
        probeval: ``cfc_probeval.QuestionResult`` (None without clusters).
        signatures: name -> signature (sampling, ProtoQA per similarity, ProbEval).
        cluster_labels: cluster id -> short label (``C1 age``), most popular first.
        probeval_clusters: normalized answer -> ids of the clusters it went to under ProbEval.
        seconds: time spent sampling (0 for stored answers).
    """

    dataset_key: str
    question_text: str
    question: Optional[Question]
    prompt: Optional[str]
    answers: Answers
    protoqa: Optional[ProtoQAScores] = None
    probeval: Any = None
    signatures: dict[str, str] = field(default_factory=dict)
    cluster_labels: dict[str, str] = field(default_factory=dict)
    probeval_clusters: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def scored(self) -> bool:
        """Whether there are human clusters and hence scores."""
        return self.protoqa is not None


def _cluster_labels(question: Question, probeval_result: Any) -> dict[str, str]:
    representatives = {c.id: c.representative for c in probeval_result.clusters}
    ordered = sorted(question.clusters, key=lambda c: -c.count)  # stable: data order breaks ties
    return {c.id: f"C{i} {representatives.get(c.id) or c.answers[0]}" for i, c in enumerate(ordered, start=1)}


def score_answers(
    dataset_key: str,
    question: Union[None, Question, Mapping[str, Any]],
    answers: Answers,
    *,
    question_text: Optional[str] = None,
    prompt: Optional[str] = None,
    sampling_signature: Optional[str] = None,
    sampling_seconds: float = 0.0,
) -> DemoResult:
    """Both metrics for a question's answers (none for a typed question without clusters).

    ``question`` is a :class:`~protoqa_metric.Question` or a row of the dataset export
    (``load_dataset(export, "protoqa")["validation"][0]``), as it is. Call
    :func:`check_limits` first for input from outside. ``sampling_seconds`` is shown with
    the answers (it is not the scoring budget of :func:`run_with_budget`).

    >>> from demo_answers import answers_from_samples
    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> r = score_answers("protoqa", q, answers_from_samples(["dog", "dog", "fish"], "test"))
    >>> r.cluster_labels, r.probeval_clusters
    ({'q1.0': 'C1 dog', 'q1.1': 'C2 cat'}, {'dog': ['q1.0'], 'fish': ['wrong']})
    """
    question = as_question(question)
    text = question_text or (question.question_original or question.question if question else "")
    result = DemoResult(dataset_key, text, question, prompt, answers, seconds=sampling_seconds)
    if sampling_signature:
        result.signatures["sampling"] = sampling_signature
    if question is None or not question.clusters:
        return result
    if answers.num_samples == 0:
        # ProbEval's smoothed empty distribution would rate no answer above real ones (docs/spec.md,
        # "Missing samples and the number of samples"): nothing is scored, the page says why.
        raise DemoError(
            "there are no answers to score: ProbEval scores a question's samples, and an empty list would be "
            "rated above real answers; give at least one answer"
        )
    result.protoqa = protoqa_scores(question, answers.ranked)
    for similarity, signature in result.protoqa.signatures.items():
        result.signatures[f"protoqa ({similarity})"] = signature
    result.probeval, result.signatures["probeval"] = probeval_score(question, answers.samples)
    result.cluster_labels = _cluster_labels(question, result.probeval)
    for cluster in result.probeval.clusters:
        for answer in cluster.predictions:
            result.probeval_clusters.setdefault(answer, []).append(cluster.id)
    return result


def as_question(question: Union[None, Question, Mapping[str, Any]]) -> Optional[Question]:
    """A :class:`~protoqa_metric.Question` from a question or a dataset export row (None stays None).

    >>> as_question({"id": "q1", "question": "name a pet",
    ...              "clusters": {"id": ["q1.0"], "answers": [["dog"]], "count": [6]}}).clusters[0].count
    6
    """
    if question is None or isinstance(question, Question):
        return question
    if isinstance(question, Mapping):
        try:
            return question_from_row(question)
        except ValueError as exc:
            raise DemoError(str(exc)) from exc
    raise DemoError(
        f"a question must be a protoqa_metric.Question or a dataset row (dict), got {type(question).__name__}"
    )
