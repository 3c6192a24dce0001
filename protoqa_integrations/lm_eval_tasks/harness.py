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
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from protoqa_integrations.generation import answer_from_text
from protoqa_metric.metric import evaluate_predictions
from protoqa_integrations.prompts import cfc_prompt, question_to_prompt
from protoqa_core.ranking import rank_by_frequency
from protoqa_core.readers import Question, clusters_from_records
from protoqa_core.signature import make_signature

__all__ = [
    "SIMILARITIES",
    "PARQUET_ENV",
    "LEADERBOARD_ENV",
    "load_split",
    "protoqa_prompt",
    "cfc_one_shot_prompt",
    "answers_filter",
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


def load_split(protoqa_config: str, protoqa_split: str, data_dir: Optional[str] = None,
               parquet: Optional[str] = None, verify: bool = True, **_metadata: Any) -> Any:
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
    """SPEC's statement prompt of a ProtoQA question (its normalized text).

    >>> protoqa_prompt({"question": "name something people bring to a picnic."})
    'one thing people bring to a picnic is'
    """
    return question_to_prompt(doc["question"])


def cfc_one_shot_prompt(doc: dict) -> str:
    """The one-shot prompt of a CFC question.

    >>> cfc_one_shot_prompt({"question": "a man reads. where is he?"}).splitlines()[-2:]
    ['Q: a man reads. where is he?', 'A:']
    """
    return cfc_prompt(doc["question"])


def answers_filter(resps: Iterable[Sequence[str]], docs: Sequence[dict]) -> list[list[str]]:
    """Every sample of every question as a cleaned answer (``""`` for none), sample order kept.

    >>> answers_filter([["  Dog.", "\\ncat"]], [{}])
    [['dog', '']]
    """
    return [[answer_from_text(text) for text in samples] for samples in resps]


def question_from_doc(doc: dict) -> Question:
    """The :class:`~protoqa_core.readers.Question` of a dataset row.

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


def process_results(doc: dict, results: Sequence[Sequence[str]]) -> dict[str, float]:
    """One question's scores: the paper's seven metrics per similarity and ProbEval's KL.

    ``results[0]`` holds the question's cleaned samples (after :func:`answers_filter`).
    The metrics are those of ``protoqa-eval`` on the frequency-ranked answers, and the
    KL that of ``probeval`` on all samples (human clusters, WordNet matching).
    """
    from cfc_probeval import ground_truth_from_question
    from cfc_probeval.inputs import sample_counts

    samples = list(results[0])
    question = question_from_doc(doc)
    ranked = {question.id: rank_by_frequency(samples)}
    scores: dict[str, float] = {}
    for similarity in SIMILARITIES:
        result = evaluate_predictions([question], ranked, similarity, "paper")
        scores.update({f"{similarity}_{name}": float(value) for name, value in result.scores.items()})
    truth = ground_truth_from_question(question)
    scores["probeval_kl"] = float(_probeval().score_question(truth, sample_counts(samples, question_id=question.id)).kl)
    return scores


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
    logger.info("protoqa signature (wordnet): %s",
                make_signature("wordnet", "paper", "zero", len(values), all_stopword_match=True))
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
    partial = path.with_name(path.name + ".writing")
    with open(partial, "w", encoding="utf-8") as fh:
        for qid, ranked in items:
            fh.write(json.dumps({qid: list(ranked)}, ensure_ascii=False) + "\n")
    os.replace(partial, path)
    logger.info("protoqa_test: ranked answers of %d questions written to %s (ProtoQA leaderboard format)",
                len(items), path.resolve())
    return mean([1.0 if ranked else 0.0 for _, ranked in items])

