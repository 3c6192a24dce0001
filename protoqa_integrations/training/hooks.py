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
a function, see :data:`~protoqa_integrations.training.samples.ProbEvalFn`) the ProbEval KL divergence is added as
``probeval_kl`` (lower is better).

>>> from protoqa_integrations.training.samples import metric_key
>>> metric_key("wordnet", "max_answers@10")
'protoqa_wordnet_max_answers_at_10'

``transformers`` and ``torch`` are imported only when a hook runs, so this module (and
``import protoqa_metric``) works without them. ``ProtoQAEvalCallback`` is created on
first access, as a subclass of ``transformers.TrainerCallback``.

What both hooks share (metric names, sampling and scoring answers) lives in
:mod:`~protoqa_integrations.training.samples`, the callback's work in
:mod:`~protoqa_integrations.training.callback`; this module names all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

from protoqa_core.io.records import Question
from protoqa_core.io.rows import questions_from_rows
from protoqa_integrations.generation.prompts import clean_answer
from protoqa_integrations.training.callback import ProtoQAEvalCallbackBase
from protoqa_integrations.training.samples import (
    ProbEvalOption,
    QuestionRows,
    Similarities,
    finetuned_prompt,
    probeval_function,
    score_sampled_answers,
    similarity_names,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["decode_answers", "make_compute_metrics", "generation_rows", "LABELS_NEEDED", "ProtoQAEvalCallback"]

IGNORE_INDEX = -100
"""What the Trainer pads predictions, labels and inputs with when it concatenates batches."""


LABELS_NEEDED = (
    "the Trainer calls compute_metrics only when the evaluation batches carry 'labels', so with these rows it "
    "would never score and no eval_protoqa_* key would appear. Build the rows with "
    "protoqa_integrations.training.hooks.generation_rows(tokenizer, rows), which adds padded prompts and labels (they "
    "are not read), and pass include_for_metrics=['inputs'] (with predict_with_generate=True) to the training "
    "arguments; or use ProtoQAEvalCallback, which samples by itself and needs no labels"
)
"""Why prompt-only evaluation rows cannot reach ``compute_metrics``, and what to pass instead."""


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
    :func:`~protoqa_integrations.generation.prompts.clean_answer`.

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
    similarity_names(similarity)
    probeval_function(probeval)

    def compute_metrics(eval_prediction: Any) -> dict[str, float]:
        sequences = _generated_sequences(eval_prediction, len(questions))
        per_row = sequences.shape[0] // len(questions)
        prompt_lengths = _prompt_lengths(eval_prediction, len(questions), per_row) if strip_prompt else None
        answers = decode_answers(tokenizer, sequences, prompt_lengths)
        unique, samples = _group_by_question(questions, answers)
        return score_sampled_answers(unique, samples, similarity=similarity, metrics=metrics, probeval=probeval)

    return compute_metrics


def _generated_sequences(eval_prediction: Any, rows: int) -> np.ndarray:
    """The generated token ids of an ``EvalPrediction``, checked: integers, one row per sample, ``rows`` dividing them."""
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
    if sequences.shape[0] % rows:
        raise ValueError(
            f"{sequences.shape[0]} generated sequences do not divide evenly among the {rows} rows of `questions`"
        )
    return sequences


def _prompt_lengths(eval_prediction: Any, rows: int, per_row: int) -> np.ndarray:
    """Each generated sequence's prompt length, read from ``EvalPrediction.inputs``."""
    import numpy as np

    inputs = getattr(eval_prediction, "inputs", None)
    if inputs is None:
        raise ValueError(
            "strip_prompt=True needs the prompts: set TrainingArguments(include_for_metrics=['inputs']) "
            "(or pass strip_prompt=False for an encoder-decoder model)"
        )
    inputs = np.asarray(inputs)
    if inputs.shape[0] != rows:
        raise ValueError(f"{inputs.shape[0]} input rows for {rows} questions")
    # Batches are concatenated with -100 padding on the right; within a batch the
    # (left-padded) prompt is exactly what the generated sequence starts with.
    lengths = (inputs != IGNORE_INDEX).sum(axis=1)
    return np.repeat(lengths, per_row)


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
        (ProtoQAEvalCallbackBase, TrainerCallback),
        {"__doc__": _CALLBACK_DOC, "__module__": __name__},
    )


if TYPE_CHECKING:
    # Built by __getattr__ on first access; declared for type checkers and linters.
    ProtoQAEvalCallback: type[ProtoQAEvalCallbackBase]


def __getattr__(name: str) -> Any:
    # The callback subclasses transformers.TrainerCallback; building it on first use
    # keeps transformers (and torch) out of a plain import of this module.
    if name == "ProtoQAEvalCallback":
        callback_class = _make_callback_class()
        globals()[name] = callback_class
        return callback_class
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
