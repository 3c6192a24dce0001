"""What both training hooks share: the metric names they log, sampling a model's answers, scoring them.

:mod:`protoqa_integrations.training.hooks` builds the hooks on these (and names them all);
``transformers`` and ``torch`` are imported only when answers are sampled.

>>> metric_key("wordnet", "max_answers@10")
'protoqa_wordnet_max_answers_at_10'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Optional, Union

from protoqa_core.io.records import Question
from protoqa_core.ranking import rank_by_frequency
from protoqa_integrations.generation.prompts import prompt_for
from protoqa_integrations.generation.settings import (
    PAPER_MAX_NEW_TOKENS,
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROTOQA_NUM_SAMPLES,
)
from protoqa_metric.metric import evaluate_predictions

__all__ = [
    "PROBEVAL_KEY",
    "ProbEvalFn",
    "QuestionRows",
    "probeval_with_human_clusters",
    "metric_key",
    "score_sampled_answers",
    "finetuned_prompt",
    "sample_question_answers",
    "sample_answers",
    "probeval_function",
    "similarity_names",
]

PROBEVAL_KEY = "probeval_kl"


ProbEvalFn = Callable[[Sequence[Question], Sequence[Sequence[str]]], float]
"""``fn(questions, samples) -> mean KL``: ``samples[i]`` holds every cleaned sample drawn
for ``questions[i]``, repeats kept (their counts are the model's distribution), empty
strings included (a sample with no answer matches no cluster)."""


ProbEvalOption = Union[bool, ProbEvalFn]


Similarities = Union[str, Sequence[str]]


QuestionRows = Any
"""Evaluation questions in any accepted form: a ``datasets.Dataset`` of the dataset export
(columns ``id``, ``question``, ``clusters``; extra columns such as ``input_ids`` are
ignored), a list of such rows, a list of :class:`~protoqa_core.io.records.Question` or a
``{question id: Question}`` mapping (see :func:`~protoqa_core.io.rows.questions_from_rows`)."""


def finetuned_prompt(question: str) -> str:
    """The hooks' default prompt: :func:`~protoqa_integrations.generation.prompts.prompt_for` in the ``finetuned`` style.

    >>> finetuned_prompt("Name a fruit")
    'one fruit is\\t'
    """
    return prompt_for(question, "finetuned")


def metric_key(similarity: str, metric: str, prefix: str = "protoqa") -> str:
    """The logged name of one ProtoQA metric, safe for every Trainer logger.

    >>> metric_key("wordnet", "max_answers@10")
    'protoqa_wordnet_max_answers_at_10'
    """
    return f"{prefix}_{similarity}_{metric.replace('@', '_at_')}"


def similarity_names(similarity: Similarities) -> tuple[str, ...]:
    """A hook's ``similarity`` option as a tuple of names.

    >>> similarity_names("wordnet")
    ('wordnet',)
    """
    names = (similarity,) if isinstance(similarity, str) else tuple(similarity)
    if not names:
        raise ValueError("give at least one similarity, e.g. 'wordnet'")
    return names


def probeval_with_human_clusters(questions: Sequence[Question], samples: Sequence[Sequence[str]]) -> float:
    """Mean ProbEval KL(P_G || P_H) over questions, with the data's human clusters and WordNet matching.

    The :data:`ProbEvalFn` of ``probeval=True``; no embedding model, since the clusters are the human ones.

    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> probeval_with_human_clusters([q], [["dog"] * 6 + ["cat"] * 4])  # the human distribution
    0.0
    >>> probeval_with_human_clusters([q], [["cat"] * 10]) > 0
    True
    """
    from cfc_probeval import evaluate_probeval

    if len(questions) != len(samples):
        raise ValueError(f"{len(samples)} sample lists for {len(questions)} questions")
    by_id = {q.id: list(s) for q, s in zip(questions, samples, strict=True)}
    return float(evaluate_probeval(list(questions), by_id, clustering="human", matching="wordnet").kl)


def probeval_function(probeval: ProbEvalOption) -> Optional[ProbEvalFn]:
    """The ProbEval function a hook's ``probeval`` option asks for: the human clusters' for True, none for False.

    >>> probeval_function(False) is None
    True
    """
    if probeval is True:
        return probeval_with_human_clusters
    if probeval is False or probeval is None:
        return None
    if callable(probeval):
        return probeval
    raise TypeError(f"probeval must be True, False or a function (questions, samples) -> KL, got {probeval!r}")


def score_sampled_answers(
    questions: Sequence[Question],
    samples: Sequence[Sequence[str]],
    *,
    similarity: Similarities = "wordnet",
    metrics: Union[str, Iterable[str]] = "paper",
    probeval: ProbEvalOption = False,
) -> dict[str, float]:
    """ProtoQA scores (and ProbEval's KL) of the answers sampled for each question.

    ``samples[i]`` are the cleaned answers sampled for ``questions[i]``, ranked by frequency and
    scored under each similarity; ``probeval`` adds ``probeval_kl``.

    >>> from protoqa_metric import Cluster, Question
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> score_sampled_answers([q], [["cat", "dog", "dog"]], similarity="exact_match",
    ...                       metrics=["max_answers@1"])
    {'protoqa_exact_match_max_answers_at_1': 1.0}
    """
    if len(questions) != len(samples):
        raise ValueError(f"{len(samples)} sample lists for {len(questions)} questions")
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError("each question must appear once; group the samples of a question together")
    ranked = {q.id: rank_by_frequency(answers) for q, answers in zip(questions, samples, strict=True)}
    scores: dict[str, float] = {}
    for name in similarity_names(similarity):
        result = evaluate_predictions(questions, ranked, name, metrics)
        scores.update({metric_key(name, metric): float(value) for metric, value in result.scores.items()})
    probeval_fn = probeval_function(probeval)
    if probeval_fn is not None:
        kl = float(probeval_fn(list(questions), [list(s) for s in samples]))
        if math.isnan(kl):
            raise ValueError("the ProbEval function returned NaN")
        scores[PROBEVAL_KEY] = kl
    return scores


def sample_question_answers(
    model: Any,
    tokenizer: Any,
    question: str,
    *,
    num_samples: int = PROTOQA_NUM_SAMPLES,
    batch_size: int = 100,
    max_new_tokens: int = 10,
    top_p: float = PAPER_TOP_P,
    temperature: float = PAPER_TEMPERATURE,
    seed: int = 42,
    prompt_fn: Callable[[str], str] = finetuned_prompt,
) -> list[str]:
    """Nucleus-sample ``num_samples`` answers to one question from a causal language model.

    Drawn ``batch_size`` at a time from ``prompt_fn(question)`` under ``seed``, leaving the global
    RNG (and so the training's randomness) as it was; top-k is off, as in the paper.

    >>> answers = sample_question_answers(model, tokenizer, "name a fruit", num_samples=5)  # doctest: +SKIP
    >>> len(answers), rank_by_frequency(answers)[0]  # e.g. (5, 'apple')  # doctest: +SKIP
    """
    from protoqa_integrations.generation.sampling import sample_prompts
    from protoqa_integrations.generation.settings import SamplingConfig

    config = SamplingConfig(
        num_samples=num_samples,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
        top_p=top_p,
        temperature=temperature,
        top_k=0,
        seed=seed,
    )
    (done,) = sample_prompts(model, tokenizer, [prompt_fn(question)], config, seeds=[seed])
    if done.skipped:
        raise ValueError(f"cannot sample answers to {question!r}: {done.skipped}")
    return done.answers


def sample_answers(
    model: Any,
    tokenizer: Any,
    questions: Sequence[str],
    *,
    seed: int = 42,
    **sampling: Any,
) -> list[list[str]]:
    """:func:`sample_question_answers` for each question, question ``i`` under ``seed + i``.

    Seeding each question on its own keeps its samples the same however processes split the questions.

    >>> samples = sample_answers(model, tokenizer, ["name a fruit", "name a pet"], num_samples=3)  # doctest: +SKIP
    >>> [len(s) for s in samples]  # doctest: +SKIP
    [3, 3]
    """
    from protoqa_integrations.generation.sampling import sample_prompts
    from protoqa_integrations.generation.settings import SamplingConfig

    prompt_fn = sampling.pop("prompt_fn", finetuned_prompt)
    config = SamplingConfig(
        seed=seed,
        top_k=0,
        **{
            "num_samples": PROTOQA_NUM_SAMPLES,
            "batch_size": 100,
            "max_new_tokens": PAPER_MAX_NEW_TOKENS,
            "top_p": PAPER_TOP_P,
            "temperature": PAPER_TEMPERATURE,
            **sampling,
        },
    )
    results = sample_prompts(model, tokenizer, [prompt_fn(q) for q in questions], config)
    for question, done in zip(questions, results, strict=True):
        if done.skipped:
            raise ValueError(f"cannot sample answers to {question!r}: {done.skipped}")
    return [done.answers for done in results]
