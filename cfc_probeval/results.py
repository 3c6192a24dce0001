"""What ProbEval returns: a data set's result, each question's, each cluster's."""

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
    """One cluster of a scored question (``"wrong"`` for the extra one): its counts before smoothing (a split
    sample counts a share), smoothed probabilities, and the weight each normalized sample gave it."""

    id: str
    representative: str
    answers: tuple[str, ...]
    human_count: float
    model_count: float
    p_g: float
    p_h: float
    predictions: Mapping[str, float]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field, in field order."""
        return {**vars(self), "answers": list(self.answers), "predictions": dict(self.predictions)}


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
    """Data-set ProbEval result with everything needed to trust and reproduce it: the mean KL (lower is better),
    each question's, the signature, the clusters per question (and the annotators' when all have human
    clusters), the questions ``empty``, ``skipped`` (no target answers) and ``short`` (made up with wrong
    answers to ``num_samples``), the sample ids ``ignored``, and the work done (``stats``)."""

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
        """A JSON-ready dict of the result (with ``details``, every question's clusters too)."""
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
