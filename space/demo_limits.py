"""The Space's bounds on outside input: caps checked before any scoring, and scoring under a budget.

The caps and the budget are :mod:`protoqa_integrations.hub.serving`'s, shared with the Hub-folder
apps; here they are applied to the Space's questions and answers, and a
:class:`~protoqa_integrations.hub.serving.LimitError` becomes a :class:`~demo_errors.DemoError`
for the page. The real data stays well below the caps (ProtoQA and CFC: at most 35
clusters, 124 answer strings per question, 126 characters and 22 words per cluster answer;
stored samples up to 530 characters), while they bound the memory and the number of
comparisons of any input; the time budget stops whatever is still too slow within them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Optional, Union

from demo_answers import Answers
from demo_errors import DemoError
from demo_scoring import DemoResult, as_question, score_answers

from protoqa_integrations.hub import serving
from protoqa_metric import Question

__all__ = ["check_question", "check_limits", "run_with_budget", "scored_within_budget"]


def check_question(text: Optional[str]) -> str:
    """A typed question, whitespace collapsed; :class:`DemoError` when empty or too long.

    >>> check_question("  Name   a fruit ")
    'Name a fruit'
    """
    text = " ".join((text or "").split())
    if not text:
        raise DemoError("type a question, or clear the box to use a question from the data set")
    if len(text) > serving.MAX_QUESTION_CHARS:
        raise DemoError(f"the question has {len(text)} characters; at most {serving.MAX_QUESTION_CHARS} are allowed")
    return text


def check_limits(question: Optional[Question], answers: Answers) -> None:
    """Refuse, with a message, an input bigger than the Space scores (the ``MAX_*`` caps of :mod:`protoqa_integrations.hub.serving`).

    Runs before any scoring, so an oversized request costs only this check.

    >>> from demo_answers import answers_from_ranked_list
    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog " * 40,), 6),))
    >>> check_limits(q, answers_from_ranked_list(["dog"], "test"))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DemoError: cluster 'q1.0' has an answer of 40 words; at most 25 are allowed
    """
    most = serving.MAX_ANSWERS
    if answers.num_samples > most or len(answers.samples) > most or len(answers.ranked) > most:
        raise DemoError(f"{max(answers.num_samples, len(answers.ranked))} answers; at most {most} are scored")
    extra = [a for a in answers.ranked if a not in answers.samples]
    clusters = question.clusters if question is not None else ()
    text = max(question.question, question.question_original, key=len) if question is not None else ""
    try:
        serving.check_question_limits(
            [c.answers for c in clusters],
            [c.count for c in clusters],
            list(answers.samples) + extra,
            text,
            [c.id for c in clusters],
        )
    except serving.LimitError as exc:
        raise DemoError(str(exc)) from None


def run_with_budget(
    function: Callable[..., Any],
    *args: Any,
    seconds: float = serving.SCORE_TIME_BUDGET,
    memory: int = serving.SCORE_MEMORY_BUDGET,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)`` in a forked process, stopped after ``seconds`` (:class:`DemoError`).

    :func:`protoqa_integrations.hub.serving.run_with_budget`, the budget the Hub-folder apps use
    too; its :class:`~protoqa_integrations.hub.serving.LimitError` becomes a :class:`DemoError`.

    >>> run_with_budget(sum, [1, 2, 3])
    6
    >>> import time
    >>> run_with_budget(time.sleep, 5, seconds=0.5)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DemoError: scoring took longer than the 0.5 s budget and was stopped
    """
    try:
        return serving.run_with_budget(function, *args, seconds=seconds, memory=memory, **kwargs)
    except serving.LimitError as exc:
        raise DemoError(str(exc)) from None


def scored_within_budget(
    dataset_key: str, question: Union[None, Question, Mapping[str, Any]], answers: Answers, **kwargs: Any
) -> DemoResult:
    """:func:`check_limits`, then :func:`score_answers` under :func:`run_with_budget`.

    >>> from demo_answers import answers_from_ranked_list
    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> scored_within_budget("protoqa", q, answers_from_ranked_list(["dog"], "test")).protoqa.scores["wordnet"]["max_answers@1"]
    1.0
    """
    question = as_question(question)
    check_limits(question, answers)
    if question is None or not question.clusters:
        return score_answers(dataset_key, question, answers, **kwargs)  # nothing to score
    return run_with_budget(score_answers, dataset_key, question, answers, **kwargs)
