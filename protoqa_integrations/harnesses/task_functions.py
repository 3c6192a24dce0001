"""The task functions both harnesses share: data, prompts, per-question scores, their means.

The lm-evaluation-harness and lighteval tasks build on these, so the two read the same rows, send
the same prompts and score the same answers the same way; plain Python, no harness import. Where
:func:`load_split` finds the data: docs/evaluate-a-model.md.

>>> doc = {"id": "q1", "question": "name a pet", "clusters": {"id": ["q1.0", "q1.1"],
...        "answers": [["dog"], ["cat"]], "count": [6, 4]}}
>>> protoqa_prompt(doc)
'one pet is'
>>> scores = process_results(doc, [["dog", "cat", "dog"]])
>>> scores["em_ans@1"], round(scores["KL"], 4)
(1.0, 0.0355)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, Optional

from protoqa_core.environment import env_setting
from protoqa_core.io.readers import clusters_from_records
from protoqa_core.io.records import Question
from protoqa_core.ranking import rank_by_frequency
from protoqa_core.signature import make_signature
from protoqa_integrations.generation.engines.base import is_collapsed
from protoqa_integrations.generation.prompts import prompt_for
from protoqa_integrations.generation.settings import PAPER_TEMPERATURE
from protoqa_integrations.harnesses.metric_names import COLLAPSED_NAME, KL_NAME, SCORE_NAMES
from protoqa_metric.metric import evaluate_predictions

__all__ = [
    "SIMILARITIES",
    "PARQUET_ENV",
    "parquet_from_env",
    "load_split",
    "protoqa_prompt",
    "cfc_one_shot_prompt",
    "question_from_doc",
    "process_results",
    "mean",
    "mean_logging_wordnet_signature",
    "mean_logging_exact_match_signature",
    "mean_logging_probeval_signature",
    "metric_signatures",
]

SIMILARITIES = ("wordnet", "exact_match")
PARQUET_ENV = "PROTOQA_PARQUET"


def parquet_from_env() -> Optional[str]:
    """The Parquet export named by ``$PROTOQA_PARQUET`` (a folder or Hub id), or None when unset or blank.

    >>> parquet_from_env() is None or bool(os.environ[PARQUET_ENV].strip())
    True
    """
    return env_setting(PARQUET_ENV)


# lm-eval shows INFO records only of loggers under its own "lm_eval"; lighteval shows them all.
logger = logging.getLogger("lm_eval.protoqa_eval")


def load_split(
    protoqa_config: str,
    protoqa_split: str,
    data_dir: Optional[str] = None,
    parquet: Optional[str] = None,
    verify: bool = True,
    signatures: Optional[dict[str, str]] = None,
    num_samples: Optional[int] = None,
    **_metadata: Any,
) -> Any:
    """``DatasetDict`` with one split of a ``protoqa_dataset`` config (the ``custom_dataset`` of the tasks).

    ``signatures`` (the task's ``metadata.signatures``) is filled with :func:`metric_signatures` of
    the split, so that lm-eval's ``results_*.json`` carry them.

    >>> load_split("cfc", "test", data_dir="../shared/data")["test"].num_rows  # doctest: +SKIP
    46
    """
    import datasets

    from protoqa_core.io.data import data_dir_from_env
    from protoqa_dataset.parsing import load_questions, question_to_row
    from protoqa_dataset.schema import FEATURES

    data_dir = data_dir or data_dir_from_env()
    parquet = parquet or parquet_from_env()
    if data_dir is None and parquet is not None:
        split = datasets.load_dataset(parquet, protoqa_config, split=protoqa_split)
    else:
        questions, _ = load_questions(protoqa_config, protoqa_split, data_dir, verify=verify)
        rows = [question_to_row(q) for q in questions]
        split = datasets.Dataset.from_list(rows, features=FEATURES)
    if signatures is not None:
        signatures.update(metric_signatures(split.num_rows, num_samples))
    return datasets.DatasetDict({protoqa_split: split})


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


def question_from_doc(doc: dict) -> Question:
    """The :class:`~protoqa_core.io.records.Question` of a dataset row.

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
    """One question's scores: ProbEval's KL and the paper's seven metrics per similarity (floats),
    and ``collapsed``: the question id with whether its samples collapsed; under the short names of
    :data:`~protoqa_integrations.harnesses.metric_names.SCORE_NAMES`, in their order.

    ``results[0]`` holds the question's cleaned samples.
    """
    from cfc_probeval import targets_from_question
    from cfc_probeval.inputs import sample_counts

    samples = list(results[0])
    question = question_from_doc(doc)
    ranked = {question.id: rank_by_frequency(samples)}
    by_long_name: dict[str, Any] = {}
    for similarity in SIMILARITIES:
        result = evaluate_predictions([question], ranked, similarity, "paper")
        by_long_name.update({f"{similarity}_{name}": float(value) for name, value in result.scores.items()})
    truth = targets_from_question(question)
    counts = sample_counts(samples, question_id=question.id)
    by_long_name["probeval_kl"] = float(_probeval().score_question(truth, counts).kl)
    # The tasks sample at PAPER_TEMPERATURE; nearly identical samples there mean a backend repeated itself.
    by_long_name[COLLAPSED_NAME] = (question.id, is_collapsed(samples, PAPER_TEMPERATURE))
    return {short: by_long_name[name] for name, short in SCORE_NAMES.items()}


def mean(values: Sequence[float]) -> float:
    """The exactly rounded mean (``math.fsum``), as ``protoqa-eval`` and ``probeval`` average.

    >>> mean([0.25, 0.5, 0.125])
    0.2916666666666667
    """
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


def metric_signatures(num_questions: int, num_samples: Optional[int] = None) -> dict[str, str]:
    """Each score's signature over ``num_questions`` questions (by the short names of :func:`process_results`), and
    ``protoqa-eval``: the project's version, for a harness's results file to carry beside the numbers.
    ``num_samples`` (the completions a question gets) joins ProbEval's signature as ``n_samples:N``.

    >>> signed = metric_signatures(52)
    >>> signed["em_ans@1"]  # doctest: +ELLIPSIS
    'sim:exact_match|metrics:paper|missing:zero|n:52|version:...'
    >>> from protoqa_core import __version__
    >>> signed["KL"].startswith("clustering:human"), signed["protoqa-eval"] == __version__
    (True, True)
    >>> "|n:52|n_samples:300|" in metric_signatures(52, 300)["KL"]
    True
    """
    from protoqa_core import __version__
    from protoqa_metric.metric_set import PAPER_METRICS

    signed: dict[str, str] = {KL_NAME: _probeval().signature(num_questions, num_samples=num_samples)}
    for similarity in SIMILARITIES:
        stopwords = True if similarity == "wordnet" else None
        signature = make_signature(similarity, "paper", "zero", num_questions, all_stopword_match=stopwords)
        signed.update({SCORE_NAMES[f"{similarity}_{metric.name}"]: signature for metric in PAPER_METRICS})
    signed["protoqa-eval"] = __version__
    return signed


def mean_logging_wordnet_signature(values: Sequence[float]) -> float:
    """:func:`mean`, logging the signature of the WordNet scores (once per task, on ``wn_ans@1``)."""
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
