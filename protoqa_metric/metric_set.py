"""The standard ProtoQA metric set (every metric shares a question's one similarity matrix) and the result of a
data-set level evaluation."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from .scoring import QuestionScore

__all__ = [
    "MetricSpec",
    "STANDARD_METRICS",
    "PAPER_METRICS",
    "EvaluationResult",
    "format_table",
    "metric_specs",
    "METRIC_SETS",
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
    m for m in STANDARD_METRICS if m.name not in ("max_answers@all", "max_incorrect@all", "set_intersection")
)
"""The seven metrics reported in the ProtoQA paper."""

METRIC_SETS = {"standard": STANDARD_METRICS, "paper": PAPER_METRICS}


def metric_specs(names: Union[str, Iterable[Union[str, MetricSpec]]] = "standard") -> tuple[MetricSpec, ...]:
    """Metric specs by set name (``standard``, ``paper``), or by metric names and :class:`MetricSpec`
    objects (kept as given), each name at most once.

    >>> [m.name for m in metric_specs(["max_answers@1", "set_intersection"])]
    ['max_answers@1', 'set_intersection']
    """
    if isinstance(names, str):
        if names in METRIC_SETS:
            return METRIC_SETS[names]
        names = [n.strip() for n in names.split(",") if n.strip()]
    by_name = {m.name: m for m in STANDARD_METRICS}
    out: list[MetricSpec] = []
    for name in names:
        if isinstance(name, MetricSpec):
            spec = name
        elif name in by_name:
            spec = by_name[name]
        else:
            raise ValueError(
                f"unknown metric {name!r}; choose from {', '.join(by_name)} or a set: {', '.join(METRIC_SETS)}"
            )
        if any(m.name == spec.name for m in out):
            # Scores are keyed by name: a second copy would be merged into the first without a word.
            raise ValueError(f"metric {spec.name!r} is given twice; name each metric once")
        out.append(spec)
    if not out:
        raise ValueError(f"no metric given; choose from {', '.join(by_name)} or a set: {', '.join(METRIC_SETS)}")
    return tuple(out)


@dataclass
class EvaluationResult:
    """Data-set scores with everything needed to trust and reproduce them: each metric's mean, each question's
    scores, the ids ``missing`` (no predictions), ``skipped`` (clusters total 0) and ``ignored``, the signature,
    and each metric's scores in ``question_ids`` order (8 bytes a question, what a bootstrap needs).
    ``exact_match_only`` (learned similarities only) is True when the similarity sent no prediction that is
    not a cluster string to a cluster, so that it scored as exact match does."""

    scores: dict[str, float]
    per_question: dict[str, dict[str, QuestionScore]]
    num_questions: int
    missing: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    signature: str = ""
    question_ids: list[str] = field(default_factory=list)
    question_scores: dict[str, array] = field(default_factory=dict)
    exact_match_only: Optional[bool] = None

    def as_dict(self) -> dict[str, Any]:
        """The scores plus ``signature`` (and ``exact_match_only`` where set), as printed by ``protoqa-eval --json``.

        >>> EvaluationResult({"max_answers@1": 0.5}, {}, 1, signature="sig", exact_match_only=True).as_dict()
        {'max_answers@1': 0.5, 'signature': 'sig', 'exact_match_only': True}
        """
        out: dict[str, Any] = {**self.scores, "signature": self.signature}
        if self.exact_match_only is not None:
            out["exact_match_only"] = self.exact_match_only
        return out


def format_table(results: dict[str, EvaluationResult]) -> str:
    """Metrics as rows, similarities as columns, then one signature line per similarity.

    >>> print(format_table({"exact_match": EvaluationResult({"max_answers@1": 0.5}, {}, 1, signature="sig")}))
    metric         exact_match
    max_answers@1       0.5000
    <BLANKLINE>
    exact_match: sig

    No result gives the header alone (``"metric"``), as the leaderboard's table of no system does;
    results that score different metrics raise ValueError naming them.
    """
    sims = list(results)
    metrics = list(results[sims[0]].scores) if sims else []
    for s in sims[1:]:
        if set(results[s].scores) != set(metrics):
            raise ValueError(
                f"cannot put the results in one table: {s} scores {', '.join(results[s].scores) or 'no metric'}, "
                f"{sims[0]} scores {', '.join(metrics) or 'no metric'}"
            )
    width = max([len("metric"), *(len(m) for m in metrics)])
    cols = [max(len(s), 6) for s in sims]
    lines = ["metric".ljust(width) + "".join(f"  {s:>{w}}" for s, w in zip(sims, cols, strict=True))]
    for m in metrics:
        lines.append(
            m.ljust(width) + "".join(f"  {results[s].scores[m]:>{w}.4f}" for s, w in zip(sims, cols, strict=True))
        )
    if sims:
        lines.append("")
        lines += [f"{s}: {results[s].signature}" for s in sims]
    return "\n".join(lines)
