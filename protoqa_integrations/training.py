"""ProtoQA scores inside a ``transformers`` training loop.

Two hooks, both returning flat ``{name: float}`` dicts that the Trainer logs like its
own metrics (TensorBoard, Weights & Biases, MLflow, ... whatever ``report_to`` says):

* :func:`make_compute_metrics` builds a ``compute_metrics`` function for a Trainer that
  generates during evaluation (``Seq2SeqTrainer`` with ``predict_with_generate=True``):
  it decodes the generated token ids, groups the samples of each question, ranks them
  by frequency and scores the ranked lists.
* ``ProtoQAEvalCallback`` (a ``TrainerCallback``) does the sampling itself, for a
  causal language model trained with the plain ``Trainer``: at each evaluation it
  draws nucleus samples for a set of dev questions (the ProtoQA paper's settings: top_p
  0.9, temperature 0.69) and logs the scores next to ``eval_loss``.

Metric names are ``protoqa_<similarity>_<metric>`` with ``@`` written ``_at_``
(``protoqa_wordnet_max_answers_at_10``): ``@`` is not a legal character in TensorBoard
tags or MLflow metric names, so the names are made safe once, here, for every logger.
The Trainer adds its ``eval_`` prefix, giving ``eval_protoqa_wordnet_max_answers_at_10``
(``eval/protoqa_wordnet_max_answers_at_10`` in TensorBoard). With ``probeval=True`` (or
a function, see :data:`ProbEvalFn`) the ProbEval KL divergence is added as
``probeval_kl`` (lower is better).

``transformers`` and ``torch`` are imported only when a hook runs, so this module (and
``import protoqa_metric``) works without them. ``ProtoQAEvalCallback`` is created on
first access, as a subclass of ``transformers.TrainerCallback``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

from protoqa_core.io.readers import Question
from protoqa_core.io.rows import questions_from_rows
from protoqa_core.ranking import rank_by_frequency
from protoqa_metric.metric import evaluate_predictions

from .prompts import clean_answer, prompt_for

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "PAPER_TOP_P",
    "PAPER_TEMPERATURE",
    "PAPER_NUM_SAMPLES",
    "PROBEVAL_KEY",
    "ProbEvalFn",
    "probeval_with_human_clusters",
    "metric_key",
    "score_sampled_answers",
    "decode_answers",
    "make_compute_metrics",
    "generation_rows",
    "QuestionRows",
    "LABELS_NEEDED",
    "finetuned_prompt",
    "sample_question_answers",
    "sample_answers",
    "ProtoQAEvalCallback",
]

PAPER_TOP_P = 0.9
PAPER_TEMPERATURE = 0.69
PAPER_NUM_SAMPLES = 300
PROBEVAL_KEY = "probeval_kl"
IGNORE_INDEX = -100
"""What the Trainer pads predictions, labels and inputs with when it concatenates batches."""

ProbEvalFn = Callable[[Sequence[Question], Sequence[Sequence[str]]], float]
"""``fn(questions, samples) -> mean KL``: ``samples[i]`` holds every cleaned sample drawn
for ``questions[i]``, repeats kept (their counts are the model's distribution), empty
strings included (a sample with no answer matches no cluster)."""

ProbEvalOption = Union[bool, ProbEvalFn]

Similarities = Union[str, Sequence[str]]

QuestionRows = Any
"""Evaluation questions in any accepted form: a ``datasets.Dataset`` of the dataset export
(columns ``id``, ``question``, ``clusters``; extra columns such as ``input_ids`` are
ignored), a list of such rows, a list of :class:`~protoqa_core.io.readers.Question` or a
``{question id: Question}`` mapping (see :func:`~protoqa_core.io.rows.questions_from_rows`)."""

LABELS_NEEDED = (
    "the Trainer calls compute_metrics only when the evaluation batches carry 'labels', so with these rows it "
    "would never score and no eval_protoqa_* key would appear. Build the rows with "
    "protoqa_integrations.training.generation_rows(tokenizer, rows), which adds padded prompts and labels (they "
    "are not read), and pass include_for_metrics=['inputs'] (with predict_with_generate=True) to the training "
    "arguments; or use ProtoQAEvalCallback, which samples by itself and needs no labels"
)
"""Why prompt-only evaluation rows cannot reach ``compute_metrics``, and what to pass instead."""


def finetuned_prompt(question: str) -> str:
    """The hooks' default prompt: :func:`~protoqa_integrations.prompts.prompt_for` in the ``finetuned`` style.

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


def _similarity_names(similarity: Similarities) -> tuple[str, ...]:
    names = (similarity,) if isinstance(similarity, str) else tuple(similarity)
    if not names:
        raise ValueError("give at least one similarity, e.g. 'wordnet'")
    return names


def probeval_with_human_clusters(questions: Sequence[Question], samples: Sequence[Sequence[str]]) -> float:
    """Mean ProbEval KL(P_G || P_H) over questions, with the data's human clusters and WordNet matching.

    The :data:`ProbEvalFn` used by ``probeval=True``; needs the ``cfc_probeval`` package
    (part of this project) but no embedding model, since the clusters are the human ones.

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


def _probeval_function(probeval: ProbEvalOption) -> Optional[ProbEvalFn]:
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

    ``samples[i]`` are the cleaned answers sampled for ``questions[i]``; they are ranked
    by frequency (:func:`~protoqa_core.ranking.rank_by_frequency`) and the ranked lists are
    scored with :func:`~protoqa_metric.evaluate_predictions` under each similarity.
    ``probeval``: ``True`` adds ``probeval_kl`` from :func:`probeval_with_human_clusters`,
    a :data:`ProbEvalFn` adds its value under that key.

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
    for name in _similarity_names(similarity):
        result = evaluate_predictions(questions, ranked, name, metrics)
        scores.update({metric_key(name, metric): float(value) for metric, value in result.scores.items()})
    probeval_fn = _probeval_function(probeval)
    if probeval_fn is not None:
        kl = float(probeval_fn(list(questions), [list(s) for s in samples]))
        if math.isnan(kl):
            raise ValueError("the ProbEval function returned NaN")
        scores[PROBEVAL_KEY] = kl
    return scores


def _special_ids(tokenizer: Any) -> tuple[set[int], set[int]]:
    """(ids that end an answer, ids skipped before it starts)."""
    ends = {i for i in (tokenizer.eos_token_id, tokenizer.pad_token_id) if i is not None}
    return ends | {IGNORE_INDEX}, set(tokenizer.all_special_ids) | {IGNORE_INDEX}


def decode_answers(
    tokenizer: Any,
    sequences: Union[Sequence[Sequence[int]], np.ndarray],
    prompt_lengths: Union[Sequence[int], np.ndarray, None] = None,
) -> list[str]:
    """The cleaned answer in each generated sequence.

    With ``prompt_lengths`` (a decoder-only model's output begins with its prompt) the
    answer starts right after the first ``prompt_lengths[i]`` tokens; without, leading
    special tokens (an encoder-decoder's start token, padding) are skipped. The answer
    ends at the first eos, padding or ``-100``, and the decoded text goes through
    :func:`~protoqa_integrations.prompts.clean_answer`.

    >>> prompt = tokenizer("One thing you wear at the beach is\t")["input_ids"]  # doctest: +SKIP
    >>> output = model.generate(torch.tensor([prompt]), max_new_tokens=10)  # doctest: +SKIP
    >>> decode_answers(tokenizer, output.tolist(), [len(prompt)])  # e.g. ['sun hat']  # doctest: +SKIP
    """
    if prompt_lengths is not None and len(prompt_lengths) != len(sequences):
        raise ValueError(f"{len(prompt_lengths)} prompt lengths for {len(sequences)} sequences")
    end_ids, skip_ids = _special_ids(tokenizer)
    answers = []
    for row, sequence in enumerate(sequences):
        ids = [int(t) for t in sequence]
        start = 0
        if prompt_lengths is not None:
            start = int(prompt_lengths[row])
        else:
            while start < len(ids) and ids[start] in skip_ids:
                start += 1
        stop = start
        while stop < len(ids) and ids[stop] not in end_ids:
            stop += 1
        text = tokenizer.decode(ids[start:stop], skip_special_tokens=True)
        answers.append(clean_answer(text))
    return answers


def _group_by_question(questions: Sequence[Question], answers: Sequence[str]) -> tuple[list[Question], list[list[str]]]:
    """Unique questions in first-seen order, with the answers of all their rows."""
    per_row = len(answers) // len(questions)
    order: dict[str, Question] = {}
    grouped: dict[str, list[str]] = {}
    for row, question in enumerate(questions):
        known = order.setdefault(question.id, question)
        if known is not question and known != question:
            raise ValueError(f"two different questions share the id {question.id!r}")
        grouped.setdefault(question.id, []).extend(answers[row * per_row : (row + 1) * per_row])
    return list(order.values()), [grouped[qid] for qid in order]


def _row_keys(rows: Any) -> Optional[list[str]]:
    """Column names of a dataset, or the keys of a list's first row; None when unknown."""
    names = getattr(rows, "column_names", None)
    if isinstance(names, list):
        return names
    if isinstance(rows, Sequence) and not isinstance(rows, str) and rows and isinstance(rows[0], Mapping):
        return list(rows[0])
    return None


def generation_rows(tokenizer: Any, rows: QuestionRows, *, prompt_fn: Callable[[str], str] = finetuned_prompt) -> Any:
    """Evaluation rows for a Trainer that generates answers with a decoder-only model (GPT-2).

    Adds ``input_ids``, ``attention_mask`` and ``labels`` to each row: the prompt of the row's
    question (``prompt_fn``, default :func:`finetuned_prompt`), padded on the left to the
    longest prompt of the set, so that every generated sequence starts with its whole row
    and batches of any size stack under the Trainer's default collator; ``labels`` are the
    prompt with ``-100`` on the padding (the Trainer calls ``compute_metrics`` only when
    batches carry labels; :func:`make_compute_metrics` does not read them). A tokenizer
    without a padding token (GPT-2's) gets its eos token as padding token, and its padding
    side is set to ``left``, as generation needs. ``rows`` is a ``datasets.Dataset`` of
    the export (a Dataset comes back, the export's columns kept, which the Trainer leaves
    out of the batches), a list of rows (the rows come back with the three fields added) or
    ``Question`` objects (a list of the three fields; pass the questions themselves to
    :func:`make_compute_metrics`).

    >>> rows = generation_rows(tokenizer, load_dataset(export, "protoqa", split="validation"))  # doctest: +SKIP
    >>> len(set(map(len, rows["input_ids"])))  # doctest: +SKIP
    1
    """
    questions = questions_from_rows(rows, "rows")
    if not questions:
        raise ValueError("no questions to evaluate")
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token is None:
            raise ValueError("the tokenizer has neither a padding token nor an eos token to pad with")
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    prompts = [tokenizer(prompt_fn(q.question), add_special_tokens=False)["input_ids"] for q in questions]
    width = max(len(p) for p in prompts)
    pad = tokenizer.pad_token_id
    added = [
        {
            "input_ids": [pad] * (width - len(p)) + list(p),
            "attention_mask": [0] * (width - len(p)) + [1] * len(p),
            "labels": [IGNORE_INDEX] * (width - len(p)) + list(p),
        }
        for p in prompts
    ]
    if hasattr(rows, "map") and hasattr(rows, "column_names"):
        return rows.map(lambda _, i: added[i], with_indices=True)
    if isinstance(rows, Mapping):
        rows = list(rows.values())
    return [{**row, **extra} if isinstance(row, Mapping) else extra for row, extra in zip(rows, added, strict=True)]


def make_compute_metrics(
    tokenizer: Any,
    questions: QuestionRows,
    *,
    strip_prompt: bool = True,
    similarity: Similarities = "wordnet",
    metrics: Union[str, Iterable[str]] = "paper",
    probeval: ProbEvalOption = False,
) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics`` for a Trainer whose predictions are generated token ids.

    Args:
        tokenizer: decodes the ids (its eos and pad ids end an answer).
        questions: the question of each row of the evaluation dataset, in dataset order:
            the evaluation dataset itself when it is (tokenized) export rows, a list of
            rows, or ``Question`` objects (see :data:`QuestionRows`). Tokenized rows
            without ``labels`` are refused here (:data:`LABELS_NEEDED` says why and what
            to add). A question may fill several rows (one sample per row), and with
            ``num_return_sequences=k`` each row holds ``k`` consecutive predictions:
            either way all samples of a question are pooled, ranked by frequency and
            scored.
        strip_prompt: the generated sequences start with the prompt (decoder-only
            models). Each row's prompt length is read from ``EvalPrediction.inputs``, so
            set ``TrainingArguments(include_for_metrics=["inputs"])``. Use ``False`` for
            encoder-decoder models.
        similarity: ``"wordnet"`` (the suggested metric), ``"exact_match"``, ... or a
            list of them, each giving its own set of keys.
        metrics: ``"paper"`` (the paper's seven), ``"standard"`` (all ten) or names.
        probeval: ``True`` adds ``probeval_kl`` (human clusters, WordNet matching, see
            :func:`probeval_with_human_clusters`); a :data:`ProbEvalFn` computes it instead.

    Returns:
        ``compute_metrics(eval_prediction) -> {"protoqa_wordnet_max_answers_at_1": ..., ...}``
        (the Trainer prefixes ``eval_``).

    >>> args = Seq2SeqTrainingArguments("out", predict_with_generate=True,
    ...                                 include_for_metrics=["inputs"])  # doctest: +SKIP
    >>> trainer = Seq2SeqTrainer(model, args, eval_dataset=dev_rows, processing_class=tokenizer,
    ...     compute_metrics=make_compute_metrics(tokenizer, dev_row_questions))  # doctest: +SKIP
    >>> trainer.evaluate(max_new_tokens=10, do_sample=True, top_p=0.9, temperature=0.69, top_k=0,
    ...                  num_return_sequences=30)["eval_protoqa_wordnet_max_answers_at_10"]  # doctest: +SKIP
    """
    keys = _row_keys(questions)
    if keys is not None and "input_ids" in keys and "labels" not in keys:
        raise ValueError(f"the evaluation rows have input_ids but no labels: {LABELS_NEEDED}")
    questions = questions_from_rows(questions, "questions")
    if not questions:
        raise ValueError("no questions to evaluate")
    _similarity_names(similarity)
    _probeval_function(probeval)

    def compute_metrics(eval_prediction: Any) -> dict[str, float]:
        import numpy as np

        predictions = eval_prediction.predictions
        if isinstance(predictions, tuple):
            predictions = predictions[0]  # (generated ids, extra model outputs, ...)
        sequences = np.asarray(predictions)
        if sequences.ndim != 2 or not np.issubdtype(sequences.dtype, np.integer):
            raise ValueError(
                f"expected generated token ids of shape (rows, length), got {sequences.dtype} {sequences.shape}; "
                "evaluate with generation (e.g. Seq2SeqTrainingArguments(predict_with_generate=True))"
            )
        if sequences.shape[0] % len(questions):
            raise ValueError(
                f"{sequences.shape[0]} generated sequences do not divide evenly among the "
                f"{len(questions)} rows of `questions`"
            )
        per_row = sequences.shape[0] // len(questions)
        prompt_lengths = None
        if strip_prompt:
            inputs = getattr(eval_prediction, "inputs", None)
            if inputs is None:
                raise ValueError(
                    "strip_prompt=True needs the prompts: set TrainingArguments(include_for_metrics=['inputs']) "
                    "(or pass strip_prompt=False for an encoder-decoder model)"
                )
            inputs = np.asarray(inputs)
            if inputs.shape[0] != len(questions):
                raise ValueError(f"{inputs.shape[0]} input rows for {len(questions)} questions")
            # Batches are concatenated with -100 padding on the right; within a batch the
            # (left-padded) prompt is exactly what the generated sequence starts with.
            lengths = (inputs != IGNORE_INDEX).sum(axis=1)
            prompt_lengths = np.repeat(lengths, per_row)
        answers = decode_answers(tokenizer, sequences, prompt_lengths)
        unique, samples = _group_by_question(questions, answers)
        return score_sampled_answers(unique, samples, similarity=similarity, metrics=metrics, probeval=probeval)

    return compute_metrics


def sample_question_answers(
    model: Any,
    tokenizer: Any,
    question: str,
    *,
    num_samples: int = PAPER_NUM_SAMPLES,
    batch_size: int = 100,
    max_new_tokens: int = 10,
    top_p: float = PAPER_TOP_P,
    temperature: float = PAPER_TEMPERATURE,
    seed: int = 42,
    prompt_fn: Callable[[str], str] = finetuned_prompt,
) -> list[str]:
    """Nucleus-sample ``num_samples`` answers to one question from a causal language model.

    The samples are drawn ``batch_size`` at a time from ``prompt_fn(question)`` under
    ``seed`` (the global RNG state is saved and restored, so training randomness is not
    disturbed) and cleaned with :func:`~protoqa_integrations.prompts.clean_answer`. Top-k
    filtering is off (``top_k=0``) as in the paper; other settings of the model's
    ``generation_config`` apply. The model is put in eval mode and back.

    >>> answers = sample_question_answers(model, tokenizer, "name a fruit", num_samples=5)  # doctest: +SKIP
    >>> len(answers), rank_by_frequency(answers)[0]  # e.g. (5, 'apple')  # doctest: +SKIP
    """
    from .generation import SamplingConfig, sample_prompts

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

    Seeding each question on its own keeps its samples the same however the
    questions are split among processes.

    >>> samples = sample_answers(model, tokenizer, ["name a fruit", "name a pet"], num_samples=3)  # doctest: +SKIP
    >>> [len(s) for s in samples]  # doctest: +SKIP
    [3, 3]
    """
    from .generation import SamplingConfig, sample_prompts

    prompt_fn = sampling.pop("prompt_fn", finetuned_prompt)
    config = SamplingConfig(
        seed=seed,
        top_k=0,
        **{
            "num_samples": PAPER_NUM_SAMPLES,
            "batch_size": 100,
            "max_new_tokens": 10,
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

    The Trainer does not pass the prefix to callbacks, but it always adds
    ``<prefix>_runtime`` (``eval_runtime``; ``eval_dev_runtime`` for the ``dev`` set of
    a dict ``eval_dataset``; ``test_runtime`` for ``evaluate(metric_key_prefix="test")``).

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


class _ProtoQAEvalCallbackBase:
    """Sampling and scoring for :class:`ProtoQAEvalCallback`, without the transformers base class."""

    def __init__(
        self,
        questions: QuestionRows,
        tokenizer: Any = None,
        *,
        num_samples: int = PAPER_NUM_SAMPLES,
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
        _similarity_names(similarity)
        _probeval_function(probeval)
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

    def bind(self, trainer: Any) -> _ProtoQAEvalCallbackBase:
        """Log through ``trainer`` (so the scores reach its loggers); returns the callback.

        >>> trainer.add_callback(ProtoQAEvalCallback(dev_questions).bind(trainer))  # doctest: +SKIP
        """
        self.trainer = trainer
        return self

    def ranked_predictions(self) -> dict[str, list[str]]:
        """The latest evaluation's answers ranked by frequency, ``{question id: [answer, ...]}``.

        The format of ``protoqa-eval`` prediction files.
        """
        return {qid: rank_by_frequency(samples) for qid, samples in self.last_samples.items()}

    def evaluate_model(self, model: Any, tokenizer: Any, eval_set: Optional[str] = None) -> dict[str, float]:
        """Sample answers for the evaluation questions and score them (keys without a prefix).

        ``eval_set`` names the question set when the callback was given one per eval set.
        Under ``torch.distributed`` each process samples every ``world_size``-th question
        and the samples are exchanged, so every process returns the same scores.
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
        """Add ``<prefix>_protoqa_...`` scores to the evaluation metrics and log them.

        The prefix is the Trainer's ``metric_key_prefix`` (``eval``, ``eval_dev`` for the
        ``dev`` set of a dict ``eval_dataset``, ...).
        """
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


_CALLBACK_DOC = """Score a causal language model on ProtoQA questions at every evaluation.

``questions`` are the dataset export's rows (a ``datasets.Dataset`` from
``load_dataset``, or a list of rows), ``Question`` objects, or one of these per eval
set: ``{"dev": dev_rows, "scraped": scraped_rows}`` for a Trainer whose
``eval_dataset`` is a dict with those names (a ``DatasetDict`` works as such a mapping).

At each ``on_evaluate`` the callback samples ``num_samples`` answers per question
(prompt from :func:`finetuned_prompt`, nucleus sampling with
the paper's top_p 0.9 and temperature 0.69, ``batch_size`` samples per ``generate``
call, question ``i`` seeded with ``seed + i``), ranks them by frequency, scores them
and adds ``<prefix>_protoqa_<similarity>_<metric>`` (and ``<prefix>_probeval_kl`` with
``probeval=True`` or a :data:`ProbEvalFn`) to the evaluation metrics, so
``metric_for_best_model`` can use them. ``<prefix>`` is the Trainer's
``metric_key_prefix``: ``eval``, or ``eval_dev`` for the ``dev`` set of a dict
``eval_dataset``. Each question set is sampled once per training step, however many
evaluations share it.
Bound to the Trainer (:meth:`bind`), it also logs them with ``trainer.log``, which sends
them to every logger in ``report_to`` and to ``trainer.state.log_history``.

>>> dev = load_dataset("path/to/export", "protoqa", split="validation")  # doctest: +SKIP
>>> callback = ProtoQAEvalCallback(dev, num_samples=50, similarity="wordnet")  # doctest: +SKIP
>>> trainer = Trainer(model, args, train_dataset=train, eval_dataset=dev_lines, processing_class=tokenizer)  # doctest: +SKIP
>>> trainer.add_callback(callback.bind(trainer))  # doctest: +SKIP
"""


def _make_callback_class() -> type:
    from transformers import TrainerCallback

    return type(
        "ProtoQAEvalCallback",
        (_ProtoQAEvalCallbackBase, TrainerCallback),
        {"__doc__": _CALLBACK_DOC, "__module__": __name__},
    )


if TYPE_CHECKING:
    # Built by __getattr__ on first access; declared for type checkers and linters.
    ProtoQAEvalCallback: type[_ProtoQAEvalCallbackBase]


def __getattr__(name: str) -> Any:
    # The callback subclasses transformers.TrainerCallback; building it on first use
    # keeps transformers (and torch) out of a plain import of this module.
    if name == "ProtoQAEvalCallback":
        callback_class = _make_callback_class()
        globals()[name] = callback_class
        return callback_class
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
