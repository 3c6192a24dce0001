"""ProtoQA scores inside a ``transformers`` training loop (docs/training.md).

:func:`make_compute_metrics` scores a Trainer that generates during evaluation;
``ProtoQAEvalCallback`` samples by itself at each evaluation, for a causal language model under
the plain ``Trainer``. Both return flat ``{name: float}`` dicts the Trainer logs like its own.
``@`` is written ``_at_`` in the names because TensorBoard tags and MLflow names reject it.

>>> from protoqa_integrations.training.samples import metric_key
>>> metric_key("wordnet", "max_answers@10")
'protoqa_wordnet_max_answers_at_10'

``transformers`` and ``torch`` are imported only when a hook runs, so this module (and
``import protoqa_metric``) works without them: ``ProtoQAEvalCallback`` is created on first access.
The shared parts live in :mod:`~protoqa_integrations.training.samples`, the callback's work in
:mod:`~protoqa_integrations.training.callback`.
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
    """The cleaned answer in each generated sequence, up to its first eos, padding or ``-100``.

    It starts after ``prompt_lengths[i]`` tokens (a decoder-only model's output begins with its
    prompt); without them, after the leading special tokens.

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

    Adds ``input_ids``, ``attention_mask`` and ``labels`` (not read, but the Trainer scores only
    batches with labels): the row's prompt (``prompt_fn``), left-padded to the longest, so that
    batches stack under the default collator. A tokenizer without a padding token gets its eos.
    A Dataset comes back as a Dataset, rows as rows, ``Question`` objects as a list of the fields.

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

    ``questions`` gives each evaluation row's question, in order (:data:`QuestionRows`; tokenized
    rows without ``labels`` are refused, :data:`LABELS_NEEDED`); all samples of a question are
    pooled, ranked and scored. ``strip_prompt`` (decoder-only models) reads each prompt's length
    from ``EvalPrediction.inputs``. ``similarity``, ``metrics`` and ``probeval`` are as in
    docs/training.md.

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

``questions`` are export rows, ``Question`` objects, or a mapping of those per eval set. At each
``on_evaluate`` it samples, ranks and scores every question and adds
``<prefix>_protoqa_<similarity>_<metric>`` to the evaluation metrics; bound to the Trainer
(:meth:`bind`), it also logs them with ``trainer.log`` (docs/training.md).

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
