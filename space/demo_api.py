"""The JSON of the page's API: the caller's question, clusters and answers in, a result's numbers out.

>>> custom_result("Name a pet", {"answers": [["dog"]], "count": [6]}, ["dog"]).scored
True
"""

from __future__ import annotations

import json
from typing import Any

from demo_answers import answers_from_ranked_list
from demo_errors import DemoError
from demo_limits import check_question, scored_within_budget
from demo_scoring import DemoResult

from protoqa_integrations.hub import serving

__all__ = ["custom_result", "scores_json"]


def _parse_json(value: Any, what: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DemoError(f"{what} is not valid JSON: {exc}") from None


def custom_result(question: str, clusters: Any, answers: Any) -> DemoResult:
    """Score answers given by the caller against clusters given by the caller.

    ``clusters`` is the export's ``{"id": [...], "answers": [[...]], "count": [...]}`` or a
    list of ``{"answers": [...], "count": n}`` records (or that as JSON text); ``answers``
    a ranked list of strings (or JSON text, or one answer per line). Caps are checked
    before anything is scored.

    >>> r = custom_result("Name a pet", {"answers": [["dog"], ["cat"]], "count": [6, 4]}, "cat\\nfish")
    >>> r.protoqa.scores["exact_match"]["max_answers@1"]
    0.6666666666666666
    """
    if not isinstance(question, str):
        raise DemoError(f"question must be text, got {type(question).__name__}")
    text = check_question(question)
    clusters = _parse_json(clusters, "clusters")
    if isinstance(answers, str):
        stripped = answers.strip()
        answers = _parse_json(stripped, "answers") if stripped.startswith("[") else stripped.splitlines()
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise DemoError("answers must be a list of strings (ranked, best first), or one answer per line")
    if len(answers) > serving.MAX_ANSWERS:
        raise DemoError(f"{len(answers)} answers; at most {serving.MAX_ANSWERS} are scored")
    row = {"id": "custom", "question": text, "clusters": clusters}
    answers_ = answers_from_ranked_list([a.strip() for a in answers], "answers given by the caller")
    return scored_within_budget("protoqa", row, answers_, question_text=text)


def scores_json(result: DemoResult) -> dict[str, Any]:
    """A result's numbers for the API: ProtoQA scores per similarity, ProbEval's KL, signatures.

    >>> from demo_scoring import score_answers
    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> out = scores_json(score_answers("protoqa", q, answers_from_ranked_list(["dog"], "test")))
    >>> out["protoqa"]["wordnet"]["max_answers@1"], type(out["probeval_kl"]).__name__
    (1.0, 'float')
    """
    out: dict[str, Any] = {
        "question_id": result.question.id if result.question else None,
        "question": result.question_text,
        "answers": [{"answer": a, "samples": result.answers.samples.get(a, 0)} for a in result.answers.ranked],
        "protoqa": None,
        "probeval_kl": None,
        "signatures": dict(result.signatures),
    }
    if result.scored:
        out["protoqa"] = {
            s: {m: float(v) for m, v in by_metric.items()} for s, by_metric in result.protoqa.scores.items()
        }
        kl = float(result.probeval.kl)
        out["probeval_kl"] = kl if kl == kl and abs(kl) != float("inf") else None
    return out
