"""The functions the task YAML files name: data, prompts, answer cleaning, per-question scores.

Everything here is plain Python on dicts and lists (no ``lm_eval`` import), so it is
tested without the harness and shared by every backend.

Data (:func:`load_split`): from ``--metadata '{"data_dir": DIR}'`` or ``$PROTOQA_DATA_DIR``
(the JSONL files, any layout ``protoqa_dataset`` accepts), else from
``--metadata '{"parquet": DIR_OR_HUB_ID}'`` or ``$PROTOQA_PARQUET`` (the Parquet export of
``python -m protoqa_dataset export``, read by stock ``datasets.load_dataset``), else
downloaded from upstream and checked against the pinned checksums. No loading script.

>>> doc = {"id": "q1", "question": "name a pet", "clusters": {"id": ["q1.0", "q1.1"],
...        "answers": [["dog"], ["cat"]], "count": [6, 4]}}
>>> protoqa_prompt(doc)
'one pet is'
>>> scores = process_results(doc, [answers_filter([[" dog.", " cat", " dog"]], [doc])[0]])
>>> scores["exact_match_max_answers@1"], round(scores["probeval_kl"], 4)
(1.0, 0.0355)
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Optional

from protoqa_core.io.cli import write_output_file
from protoqa_core.io.readers import Question, clusters_from_records
from protoqa_core.ranking import rank_by_frequency
from protoqa_core.signature import make_signature
from protoqa_integrations.engines.base import COLLAPSE_SHARE, is_collapsed
from protoqa_integrations.generation import PAPER_TEMPERATURE, answer_from_text
from protoqa_integrations.prompts import (
    CFC_EXAMPLE,
    answer_from_reply,
    cfc_chat_messages,
    prompt_for,
    protoqa_chat_messages,
)
from protoqa_metric.metric import evaluate_predictions

__all__ = [
    "SIMILARITIES",
    "PARQUET_ENV",
    "LEADERBOARD_ENV",
    "load_split",
    "protoqa_prompt",
    "cfc_one_shot_prompt",
    "answers_filter",
    "chat_answers_filter",
    "protoqa_chat_prompt",
    "cfc_chat_prompt",
    "cfc_chat_example",
    "chat_target",
    "mean_warning_collapsed",
    "question_from_doc",
    "process_results",
    "process_test_results",
    "mean",
    "mean_logging_wordnet_signature",
    "mean_logging_exact_match_signature",
    "mean_logging_probeval_signature",
    "write_leaderboard",
]

SIMILARITIES = ("wordnet", "exact_match")
PARQUET_ENV = "PROTOQA_PARQUET"
LEADERBOARD_ENV = "PROTOQA_LEADERBOARD_FILE"
"""Where ``protoqa_test`` writes the leaderboard file (default ``protoqa_test.leaderboard.jsonl``)."""

logger = logging.getLogger("lm_eval.protoqa_eval")


def load_split(
    protoqa_config: str,
    protoqa_split: str,
    data_dir: Optional[str] = None,
    parquet: Optional[str] = None,
    verify: bool = True,
    **_metadata: Any,
) -> Any:
    """``DatasetDict`` with one split of a ``protoqa_dataset`` config (the ``custom_dataset`` of the tasks).

    >>> load_split("cfc", "test", data_dir="../shared/data")["test"].num_rows  # doctest: +SKIP
    46
    """
    import datasets

    from protoqa_dataset.parsing import load_questions, question_to_row
    from protoqa_dataset.schema import FEATURES
    from protoqa_dataset.sources import data_dir_from_env

    data_dir = data_dir or data_dir_from_env()
    parquet = parquet or os.environ.get(PARQUET_ENV, "").strip() or None
    if data_dir is None and parquet is not None:
        split = datasets.load_dataset(parquet, protoqa_config, split=protoqa_split)
        return datasets.DatasetDict({protoqa_split: split})
    questions, _ = load_questions(protoqa_config, protoqa_split, data_dir, verify=verify)
    rows = [question_to_row(q) for q in questions]
    return datasets.DatasetDict({protoqa_split: datasets.Dataset.from_list(rows, features=FEATURES)})


def protoqa_prompt(doc: dict) -> str:
    """The docs/spec.md statement prompt of a ProtoQA question (its normalized text).

    >>> protoqa_prompt({"question": "name something people bring to a picnic."})
    'one thing people bring to a picnic is'
    """
    return prompt_for(doc["question"], "statement")


def cfc_one_shot_prompt(doc: dict) -> str:
    """The one-shot prompt of a CFC question.

    >>> cfc_one_shot_prompt({"question": "a man reads. where is he?"}).splitlines()[-2:]
    ['Q: a man reads. where is he?', 'A:']
    """
    return prompt_for(doc["question"], "cfc-one-shot")


def answers_filter(resps: Iterable[Sequence[str]], docs: Sequence[dict]) -> list[list[str]]:
    """Every sample of every question as a cleaned answer (``""`` for none), sample order kept.

    >>> answers_filter([["  Dog.", "\\ncat"]], [{}])
    [['dog', '']]
    """
    return [[answer_from_text(text) for text in samples] for samples in resps]


def chat_answers_filter(resps: Iterable[Sequence[str]], docs: Sequence[dict]) -> list[list[str]]:
    """Every chat reply of every question as its answer (:func:`~protoqa_integrations.prompts.answer_from_reply`).

    >>> chat_answers_filter([["1. **Dog**", "Sure! Here's one: a cat."]], [{}])
    [['dog', 'a cat']]
    """
    return [[answer_from_reply(text) for text in samples] for samples in resps]


def protoqa_chat_prompt(doc: dict) -> str:
    """The user turn of the ProtoQA chat prompt (instruction and question).

    >>> protoqa_chat_prompt({"question": "name a pet."}).splitlines()[-1]
    'Q: name a pet?'
    """
    return protoqa_chat_messages(doc["question"])[-1]["content"]


def cfc_chat_prompt(doc: dict) -> str:
    """The user turn of a CFC question in the chat prompt; the worked example comes as a few-shot turn.

    >>> cfc_chat_prompt({"question": "a man reads. where is he?"})
    '[Q]: a man reads. where is he?'
    """
    return cfc_chat_messages(doc["question"])[-1]["content"]


def cfc_chat_example(*_args: Any) -> list[dict]:
    """The CFC one-shot example as a document, for the chat task's few-shot turn (user, then assistant).

    Its text is the first user turn of :func:`~protoqa_integrations.prompts.cfc_chat_messages`
    (instruction and example question), its target the example answer.

    >>> cfc_chat_example()[0]["chat_target"]
    'into the lake'
    """
    first_turn = cfc_chat_messages(CFC_EXAMPLE[0])[0]["content"]
    return [{"id": "cfc-example", "question": CFC_EXAMPLE[0], "chat_text": first_turn, "chat_target": CFC_EXAMPLE[1]}]


def cfc_chat_text(doc: dict) -> str:
    """The user turn of a document: the example's own text, else :func:`cfc_chat_prompt`.

    >>> cfc_chat_text({"question": "a. b?"})
    '[Q]: a. b?'
    """
    return doc.get("chat_text") or cfc_chat_prompt(doc)


def chat_target(doc: dict) -> str:
    """The assistant turn of a few-shot document ("" for a question to answer).

    >>> chat_target({"chat_target": "into the lake"}), chat_target({"id": "q"})
    ('into the lake', '')
    """
    return doc.get("chat_target", "")


def question_from_doc(doc: dict) -> Question:
    """The :class:`~protoqa_core.io.readers.Question` of a dataset row.

    >>> question_from_doc({"id": "q1", "question": "name a pet", "clusters": {"id": ["q1.0"],
    ...                    "answers": [["dog"]], "count": [3]}}).clusters[0].count
    3
    """
    clusters = clusters_from_records(doc.get("clusters") or [], doc["id"]) if doc.get("clusters") else ()
    return Question(doc["id"], doc["question"], clusters, doc.get("question_original") or "")


_PROBEVAL: Any = None


def _probeval() -> Any:
    global _PROBEVAL
    if _PROBEVAL is None:
        from cfc_probeval import ProbEval

        _PROBEVAL = ProbEval("human", "wordnet")
    return _PROBEVAL


def process_results(doc: dict, results: Sequence[Sequence[str]]) -> dict[str, Any]:
    """One question's scores: the paper's seven metrics per similarity and ProbEval's KL (floats),
    and ``collapsed``: the question id with whether its samples collapsed.

    ``results[0]`` holds the question's cleaned samples (after :func:`answers_filter`).
    The metrics are those of ``protoqa-eval`` on the frequency-ranked answers, and the
    KL that of ``probeval`` on all samples (human clusters, WordNet matching).
    """
    from cfc_probeval import targets_from_question
    from cfc_probeval.inputs import sample_counts

    samples = list(results[0])
    question = question_from_doc(doc)
    ranked = {question.id: rank_by_frequency(samples)}
    scores: dict[str, Any] = {}
    for similarity in SIMILARITIES:
        result = evaluate_predictions([question], ranked, similarity, "paper")
        scores.update({f"{similarity}_{name}": float(value) for name, value in result.scores.items()})
    truth = targets_from_question(question)
    scores["probeval_kl"] = float(_probeval().score_question(truth, sample_counts(samples, question_id=question.id)).kl)
    # The tasks sample at PAPER_TEMPERATURE; nearly identical samples there mean a backend repeated itself.
    scores["collapsed"] = (question.id, is_collapsed(samples, PAPER_TEMPERATURE))
    return scores


def mean_warning_collapsed(items: Sequence[tuple[str, bool]]) -> float:
    """The share of questions whose samples collapsed to one answer; a warning names them.

    More than :data:`~protoqa_integrations.engines.base.COLLAPSE_SHARE` of a question's
    samples being one answer at the tasks' temperature is what a backend that sends the
    same seed with every repeat produces (``local-completions`` does, use
    ``protoqa-local-completions``).

    >>> mean_warning_collapsed([("q1", True), ("q2", False)])
    0.5
    """
    collapsed = [qid for qid, flag in items if flag]
    if collapsed:
        logger.warning(
            "%d of %d questions got the same answer in more than %d%% of their samples at temperature "
            "%s: the backend may send a fixed seed with every request (use protoqa-local-completions or "
            "protoqa-local-chat-completions): %s",
            len(collapsed),
            len(items),
            int(COLLAPSE_SHARE * 100),
            PAPER_TEMPERATURE,
            ", ".join(collapsed[:10]),
        )
    return mean([1.0 if flag else 0.0 for _, flag in items])


def process_test_results(doc: dict, results: Sequence[Sequence[str]]) -> dict[str, tuple[str, list[str]]]:
    """A test question (no answers to score against): its id and ranked answers, for :func:`write_leaderboard`.

    >>> process_test_results({"id": "t1"}, [["dog", "cat", "dog", ""]])
    {'answered': ('t1', ['dog', 'cat'])}
    """
    return {"answered": (doc["id"], rank_by_frequency(results[0]))}


def mean(values: Sequence[float]) -> float:
    """The exactly rounded mean (``math.fsum``), as ``protoqa-eval`` and ``probeval`` average.

    >>> mean([0.25, 0.5, 0.125])
    0.2916666666666667
    """
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


def mean_logging_wordnet_signature(values: Sequence[float]) -> float:
    """:func:`mean`, logging the signature of the WordNet scores (once per task, on Max Answers@1)."""
    logger.info(
        "protoqa signature (wordnet): %s",
        make_signature("wordnet", "paper", "zero", len(values), all_stopword_match=True),
    )
    return mean(values)


def mean_logging_exact_match_signature(values: Sequence[float]) -> float:
    """:func:`mean`, logging the signature of the exact-match scores."""
    logger.info("protoqa signature (exact_match): %s", make_signature("exact_match", "paper", "zero", len(values)))
    return mean(values)


def mean_logging_probeval_signature(values: Sequence[float]) -> float:
    """:func:`mean`, logging ProbEval's signature."""
    logger.info("probeval signature: %s", _probeval().signature(len(values)))
    return mean(values)


def write_leaderboard(items: Sequence[tuple[str, list[str]]]) -> float:
    """Write the ProtoQA leaderboard file (JSONL ``{id: [ranked answers]}``); returns the share answered.

    The file is ``$PROTOQA_LEADERBOARD_FILE`` or ``protoqa_test.leaderboard.jsonl`` in the
    working folder.
    """
    path = Path(os.environ.get(LEADERBOARD_ENV) or "protoqa_test.leaderboard.jsonl")

    def write(fh) -> None:
        for qid, ranked in items:
            fh.write(json.dumps({qid: list(ranked)}, ensure_ascii=False) + "\n")

    # A new temporary file replaces the name: a link planted there is never written through.
    write_output_file(path, write)
    logger.info(
        "protoqa_test: ranked answers of %d questions written to %s (ProtoQA leaderboard format)",
        len(items),
        path.resolve(),
    )
    return mean([1.0 if ranked else 0.0 for _, ranked in items])
