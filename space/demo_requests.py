"""One request of the page, end to end: the question picked or typed, answers sampled or stored, scored.

* :func:`generate_result`: sample answers from the model and score them;
* :func:`stored_result`: score the stored GPT-2 answers of a data set's question;
* :func:`first_view_result`: the page's first view, from ``first_view.json``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, Union

from demo_answers import answers_from_ranked_list, answers_from_samples
from demo_data import DemoData
from demo_errors import DemoError
from demo_limits import check_limits, check_question, scored_within_budget
from demo_model import ModelHolder, SamplingSettings, prompt_for, prompt_style_of, sample_answers
from demo_scoring import DemoResult, as_question, score_answers

from protoqa_metric import Question

__all__ = ["FIRST_VIEW_PATH", "resolve_question", "generate_result", "stored_result", "first_view_result"]

FIRST_VIEW_PATH = Path(__file__).resolve().parent / "first_view.json"
"""The default question's export row and the stored GPT-2 answers to it, shown on load."""


def resolve_question(
    data: DemoData, dataset_key: str, question_id: Optional[str], custom_question: Optional[str] = None
) -> tuple[Optional[Question], str]:
    """(question with clusters or None, text to ask): a typed question wins over the picked one.

    >>> resolve_question(DemoData("/nowhere"), "protoqa", None, "Name a fruit")
    (None, 'Name a fruit')
    """
    if custom_question and custom_question.strip():
        return None, check_question(custom_question)
    if not question_id:
        raise DemoError("pick a question of the data set, or type your own")
    question = data.question(dataset_key, question_id)
    return question, question.question_original or question.question


def generate_result(
    data: DemoData,
    models: ModelHolder,
    dataset_key: str,
    question_id: Optional[str],
    custom_question: Optional[str],
    settings: SamplingSettings,
    on_progress: Optional[Callable[[int, int], None]] = None,
    on_stage: Optional[Callable[[str], None]] = None,
) -> DemoResult:
    """Sample answers from the model for a picked or typed question and score them.

    ``on_stage(message)`` is told when loading, sampling and scoring start;
    ``on_progress(done, total)`` follows the sampling.

    >>> generate_result(DemoData(), ModelHolder(), "protoqa", "r1q1", None, SamplingSettings())  # doctest: +SKIP
    """
    question, text = resolve_question(data, dataset_key, question_id, custom_question)
    style = prompt_style_of(dataset_key)
    prompt = prompt_for(dataset_key, question.question if question is not None else text, style)
    if on_stage:
        on_stage(f"Loading the model {models.name}")
    loaded = models.get(retry=True)
    if on_stage:
        on_stage(f"Sampling {settings.num_samples} answers")
    cleaned, seconds = _timed(lambda: sample_answers(loaded, prompt, settings, on_progress))
    answers = answers_from_samples(cleaned, f"nucleus samples from {loaded.name}")
    if on_stage and question is not None:
        on_stage("Scoring (exact match, WordNet, ProbEval)")
    return scored_within_budget(
        dataset_key,
        question,
        answers,
        question_text=text,
        prompt=prompt,
        sampling_signature=settings.signature(loaded.name, style),
        sampling_seconds=seconds,
    )


def stored_result(
    data: DemoData, dataset_key: str, question_id: Optional[str], custom_question: Optional[str] = None
) -> DemoResult:
    """Score the stored GPT-2 answers of a data set's question.

    >>> stored_result(DemoData("../shared/data"), "cfc", "r1q1").probeval.kl  # doctest: +SKIP
    3.459...
    """
    if custom_question and custom_question.strip():
        raise DemoError("stored answers exist only for the data set's questions: clear the typed question")
    question, text = resolve_question(data, dataset_key, question_id)
    return scored_within_budget(
        dataset_key, question, data.stored_answers(dataset_key, question.id), question_text=text
    )


def _timed(function: Callable[[], Any]) -> tuple[Any, float]:
    """``(function(), seconds it took)``.

    >>> _timed(lambda: 3)[0]
    3
    """
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def first_view_result(path: Union[str, os.PathLike] = FIRST_VIEW_PATH) -> DemoResult:
    """The page's first view: the default question's export row and its stored GPT-2 answers, scored.

    >>> first_view_result().question.id  # doctest: +SKIP
    'r1q1'
    """
    try:
        with open(path, encoding="utf-8") as fh:
            stored = json.load(fh)
        row, ranked, origin = stored["row"], stored["ranked"], stored["origin"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DemoError(f"cannot read the first view from {path}: {exc}") from exc
    answers = answers_from_ranked_list(ranked, origin)
    question = as_question(row)
    check_limits(question, answers)
    return score_answers(stored.get("dataset", "protoqa"), question, answers)
