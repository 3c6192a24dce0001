"""What ProbEval returns: a data set's result, each question's, each cluster's.

:class:`ProbEvalResult` holds the mean KL, the signature and every question's
:class:`QuestionResult`, whose :class:`ClusterResult` rows give each cluster's counts and
probabilities (:class:`AnswerCluster` is a cluster of the targets as scored).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = ["AnswerCluster", "ClusterResult", "QuestionResult", "ProbEvalResult"]


@dataclass(frozen=True)
class AnswerCluster:
    """A cluster of the target answers: id, answer strings, how many people gave them, a representative."""

    id: str
    answers: tuple[str, ...]
    count: float
    representative: str


@dataclass(frozen=True)
class ClusterResult:
    """One cluster of a scored question, ready for a table or a bar plot.

    Attributes:
        id: cluster id (``"wrong"`` for the extra cluster).
        representative: its most frequent target answer ("" for "wrong").
        answers: its target answer strings.
        human_count: target answers in it (before smoothing).
        model_count: sample weight it received (before smoothing; split samples count a share).
        p_g: smoothed target (human) probability.
        p_h: smoothed model probability.
        predictions: normalized sample -> weight it gave this cluster.
    """

    id: str
    representative: str
    answers: tuple[str, ...]
    human_count: float
    model_count: float
    p_g: float
    p_h: float
    predictions: Mapping[str, float]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "id": self.id,
            "representative": self.representative,
            "answers": list(self.answers),
            "human_count": self.human_count,
            "model_count": self.model_count,
            "p_g": self.p_g,
            "p_h": self.p_h,
            "predictions": dict(self.predictions),
        }


@dataclass(frozen=True)
class QuestionResult:
    """KL of one question with its clusters (the "wrong" cluster last)."""

    question_id: str
    kl: float
    num_samples: int
    clusters: tuple[ClusterResult, ...]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, as written by ``probeval --per-question FILE.jsonl``."""
        return {
            "id": self.question_id,
            "kl": self.kl,
            "num_samples": self.num_samples,
            "clusters": [c.as_dict() for c in self.clusters],
        }


@dataclass
class ProbEvalResult:
    """Data-set ProbEval result with everything needed to trust and reproduce it.

    Attributes:
        kl: mean KL(P_G || P_H) over the scored questions (lower is better).
        per_question: question id -> KL.
        questions: question id -> :class:`QuestionResult` (clusters, probabilities, matches).
        num_questions: how many questions the mean is over.
        signature: reproducibility signature (clustering, embedder, matching, versions).
        clusters_per_question: mean number of target clusters the scored questions
            were scored with ("wrong" not counted); None when no question was scored.
        human_clusters_per_question: the annotators' mean number of clusters over the same
            questions, when every scored question carries human clusters (else None).
        empty: questions answered with no sample (scored as ``num_samples`` wrong answers).
        skipped: questions left out for lack of target answers.
        ignored: sample ids dropped because they are not among the targets.
        stats: work done: ``strings_embedded``, ``wordnet_pairs_scored``, ``samples``,
            ``distinct_samples``, ``target_answers``.
        num_samples: the number of samples every question was scored at (counted from the
            samples: the most any question has, unless set); None when nothing was scored.
        short: questions with fewer samples, their missing samples counted as wrong answers.
    """

    kl: float
    per_question: dict[str, float]
    questions: dict[str, QuestionResult]
    num_questions: int
    signature: str
    empty: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    clusters_per_question: Optional[float] = None
    human_clusters_per_question: Optional[float] = None
    num_samples: Optional[int] = None
    short: list[str] = field(default_factory=list)

    def as_dict(self, details: bool = False) -> dict[str, Any]:
        """``kl``, ``num_questions``, ``per_question``, ``signature``, cluster counts, ...

        With ``details``, every question's clusters too.
        """
        out: dict[str, Any] = {
            "kl": self.kl,
            "num_questions": self.num_questions,
            "num_samples": self.num_samples,
            "per_question": dict(self.per_question),
            "signature": self.signature,
            "clusters_per_question": self.clusters_per_question,
            "human_clusters_per_question": self.human_clusters_per_question,
            "empty": list(self.empty),
            "short": list(self.short),
            "skipped": list(self.skipped),
            "ignored": list(self.ignored),
            "stats": dict(self.stats),
        }
        if details:
            out["questions"] = [q.as_dict() for q in self.questions.values()]
        return out

    def cluster_rows(self) -> list[dict[str, Any]]:
        """One flat row per (question, cluster), for a CSV table or a plot.

        >>> from cfc_probeval.inputs import QuestionTargets
        >>> from protoqa_core.io.records import Cluster
        >>> gt = QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6),))
        >>> from cfc_probeval import evaluate_probeval
        >>> [r["cluster"] for r in evaluate_probeval([gt], {"q1": ["dog"]}, clustering="human").cluster_rows()]
        ['q1.0', 'wrong']
        """
        rows = []
        for q in self.questions.values():
            for c in q.clusters:
                top = sorted(c.predictions.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
                rows.append(
                    {
                        "question": q.question_id,
                        "kl": q.kl,
                        "cluster": c.id,
                        "representative": c.representative,
                        "human_count": c.human_count,
                        "model_count": c.model_count,
                        "p_g": c.p_g,
                        "p_h": c.p_h,
                        "num_answers": len(c.answers),
                        "top_predictions": "; ".join(s for s, _ in top),
                    }
                )
        return rows
