"""The work of :class:`~protoqa_integrations.training.hooks.ProtoQAEvalCallback`: which questions an evaluation gets, sampling them across processes, scoring and logging.

:mod:`protoqa_integrations.training.hooks` joins :class:`ProtoQAEvalCallbackBase` with
``transformers.TrainerCallback`` on first access, so neither module imports ``transformers``
(nor ``torch``) until the callback is used.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Optional, Union

from protoqa_core.io.records import Question
from protoqa_core.io.rows import questions_from_rows
from protoqa_core.ranking import rank_by_frequency
from protoqa_integrations.generation.settings import PAPER_TEMPERATURE, PAPER_TOP_P, PROTOQA_NUM_SAMPLES
from protoqa_integrations.training.samples import (
    ProbEvalOption,
    QuestionRows,
    Similarities,
    finetuned_prompt,
    probeval_function,
    sample_question_answers,
    score_sampled_answers,
    similarity_names,
)

__all__: list[str] = []


def _process_rank_and_count() -> tuple[int, int]:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _all_gather(obj: Any, world_size: int) -> list[Any]:
    if world_size == 1:
        return [obj]
    import torch.distributed as dist

    gathered: list[Any] = [None] * world_size
    dist.all_gather_object(gathered, obj)
    return gathered


def _metric_prefix(metrics: Optional[Mapping[str, Any]]) -> str:
    """The Trainer's ``metric_key_prefix`` of one evaluation, read back from its metrics.

    The Trainer does not pass the prefix to callbacks, but it always adds ``<prefix>_runtime``.

    >>> _metric_prefix({"eval_dev_loss": 2.1, "eval_dev_runtime": 0.5}), _metric_prefix({})
    ('eval_dev', 'eval')
    """
    for key in metrics or {}:
        if key.endswith("_runtime"):
            return key[: -len("_runtime")]
    return "eval"


def _question_sets(questions: Any) -> dict[Optional[str], list[Question]]:
    """``{eval set name: questions}``, or ``{None: questions}`` for one set used by every evaluation."""
    if isinstance(questions, Mapping) and questions and not all(isinstance(v, Question) for v in questions.values()):
        sets: dict[Optional[str], list[Question]] = {}
        for name, rows in questions.items():
            if not isinstance(name, str) or not name:
                raise TypeError(f"eval set names must be non-empty strings, got {name!r}")
            sets[name] = questions_from_rows(rows, f"questions[{name!r}]")
        return sets
    return {None: questions_from_rows(questions, "questions")}


class ProtoQAEvalCallbackBase:
    """Sampling and scoring for :class:`ProtoQAEvalCallback`, without the transformers base class."""

    def __init__(
        self,
        questions: QuestionRows,
        tokenizer: Any = None,
        *,
        num_samples: int = PROTOQA_NUM_SAMPLES,
        batch_size: int = 100,
        max_new_tokens: int = 10,
        top_p: float = PAPER_TOP_P,
        temperature: float = PAPER_TEMPERATURE,
        seed: int = 42,
        similarity: Similarities = "wordnet",
        metrics: Union[str, Iterable[str]] = "paper",
        probeval: ProbEvalOption = False,
        prompt_fn: Callable[[str], str] = finetuned_prompt,
        trainer: Any = None,
    ) -> None:
        self.question_sets = _question_sets(questions)
        for name, qs in self.question_sets.items():
            where = "" if name is None else f" of eval set {name!r}"
            if not qs:
                raise ValueError(f"no questions to evaluate{where}")
            if any(not q.clusters for q in qs):
                raise ValueError(f"every evaluation question{where} needs answer clusters (test questions have none)")
        similarity_names(similarity)
        probeval_function(probeval)
        self.tokenizer = tokenizer
        self.sampling: dict[str, Any] = {
            "num_samples": num_samples,
            "batch_size": batch_size,
            "max_new_tokens": max_new_tokens,
            "top_p": top_p,
            "temperature": temperature,
            "prompt_fn": prompt_fn,
        }
        self.seed = seed
        self.similarity = similarity
        self.metrics = metrics
        self.probeval = probeval
        self.trainer = trainer
        self.last_samples: dict[str, list[str]] = {}
        """Question id -> cleaned samples of the latest evaluation."""
        self.last_scores: dict[str, float] = {}
        """Scores of the latest evaluation, without the metric prefix (``eval_``)."""
        self._scored: dict[Optional[str], tuple[int, dict[str, list[str]], dict[str, float]]] = {}
        self._logged: set[tuple[int, str]] = set()
        self._warned_unbound = False
        self._warned_sets: set[str] = set()

    @property
    def questions(self) -> list[Question]:
        """The evaluation questions (of every eval set, in order, when there are several)."""
        return [q for qs in self.question_sets.values() for q in qs]

    def bind(self, trainer: Any) -> ProtoQAEvalCallbackBase:
        """Log through ``trainer`` (so the scores reach its loggers); returns the callback.

        >>> trainer.add_callback(ProtoQAEvalCallback(dev_questions).bind(trainer))  # doctest: +SKIP
        """
        self.trainer = trainer
        return self

    def ranked_predictions(self) -> dict[str, list[str]]:
        """The latest evaluation's answers ranked by frequency: a ``protoqa-eval`` predictions file."""
        return {qid: rank_by_frequency(samples) for qid, samples in self.last_samples.items()}

    def evaluate_model(self, model: Any, tokenizer: Any, eval_set: Optional[str] = None) -> dict[str, float]:
        """Sample answers for the evaluation questions and score them (keys without a prefix).

        ``eval_set`` names the question set when the callback was given one per eval set. Under
        ``torch.distributed`` every process returns the same scores (docs/training.md).
        """
        if eval_set not in self.question_sets:
            known = ", ".join(repr(n) for n in self.question_sets if n is not None) or "none (one set for all)"
            raise KeyError(f"no questions for eval set {eval_set!r}; the callback has: {known}")
        questions = self.question_sets[eval_set]
        rank, world_size = _process_rank_and_count()
        mine = {
            i: sample_question_answers(model, tokenizer, q.question, seed=self.seed + i, **self.sampling)
            for i, q in enumerate(questions)
            if i % world_size == rank
        }
        samples: dict[int, list[str]] = {}
        for part in _all_gather(mine, world_size):
            samples.update(part)
        ordered = [samples[i] for i in range(len(questions))]
        self.last_samples = {q.id: s for q, s in zip(questions, ordered, strict=True)}
        self.last_scores = score_sampled_answers(
            questions,
            ordered,
            similarity=self.similarity,
            metrics=self.metrics,
            probeval=self.probeval,
        )
        return dict(self.last_scores)

    def _set_for_prefix(self, prefix: str) -> tuple[bool, Optional[str]]:
        """(whether this evaluation is scored, the question set for it)."""
        if None in self.question_sets:
            return True, None
        # "eval_dev" is the "dev" set of a dict eval_dataset; the longest matching name wins.
        matches = [n for n in self.question_sets if n is not None and (prefix == n or prefix.endswith("_" + n))]
        if matches:
            return True, max(matches, key=len)
        return False, None

    def on_evaluate(
        self,
        args: Any,
        state: Any,
        control: Any,
        metrics: Optional[dict] = None,
        model: Any = None,
        processing_class: Any = None,
        **kwargs: Any,
    ) -> None:
        """Add ``<prefix>_protoqa_...`` scores (the Trainer's ``metric_key_prefix``) to the metrics and log them."""
        prefix = _metric_prefix(metrics)
        scored, eval_set = self._set_for_prefix(prefix)
        if not scored:
            if prefix not in self._warned_sets:
                self._warned_sets.add(prefix)
                warnings.warn(
                    f"ProtoQAEvalCallback has no questions for the evaluation {prefix!r} (its eval sets: "
                    f"{', '.join(repr(n) for n in self.question_sets)}); no protoqa scores are added to it",
                    stacklevel=2,
                )
            return
        tokenizer = self.tokenizer if self.tokenizer is not None else processing_class
        if tokenizer is None:
            raise ValueError("ProtoQAEvalCallback needs a tokenizer: pass it, or give the Trainer processing_class=")
        if model is None:
            raise ValueError("ProtoQAEvalCallback got no model from the Trainer")
        # Several evaluation datasets give several on_evaluate calls per step: sample each question set once.
        cached = self._scored.get(eval_set)
        if cached is None or cached[0] != state.global_step:
            self.evaluate_model(model, tokenizer, eval_set)
            cached = (state.global_step, dict(self.last_samples), dict(self.last_scores))
            self._scored[eval_set] = cached
        _, self.last_samples, self.last_scores = cached[0], dict(cached[1]), dict(cached[2])
        scores = {f"{prefix}_{name}": value for name, value in self.last_scores.items()}
        if metrics is not None:
            # The Trainer's best-model selection reads this dict after on_evaluate.
            metrics.update(scores)
        if (state.global_step, prefix) in self._logged:
            return
        self._logged.add((state.global_step, prefix))
        if self.trainer is not None:
            self.trainer.log(dict(scores))
        elif not self._warned_unbound:
            self._warned_unbound = True
            warnings.warn(
                "ProtoQAEvalCallback is not bound to the Trainer: its scores are in the evaluation metrics but "
                "reach no logger; use trainer.add_callback(ProtoQAEvalCallback(...).bind(trainer))",
                stacklevel=2,
            )
