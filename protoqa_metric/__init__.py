"""ProtoQA ranked-list evaluation: exact-match and WordNet similarity, Max Answers@k and Max Incorrect@k.

>>> from protoqa_metric import evaluate_predictions, read_targets, read_predictions  # doctest: +SKIP
>>> result = evaluate_predictions(read_targets("dev.crowdsourced.jsonl"),
...                               read_predictions("predictions.jsonl"), "wordnet")  # doctest: +SKIP
>>> result.scores["max_answers@10"], result.signature  # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.1.0"

from pathlib import Path

from .metrics import (
    PAPER_METRICS,
    STANDARD_METRICS,
    EvaluationResult,
    MetricSpec,
    ProtoQAWarning,
    evaluate_predictions,
    metric_specs,
)
from .readers import Cluster, DataFormatError, Question, clusters_from_records, read_predictions, read_targets
from .rows import question_from_row, questions_from_rows
from .scoring import QuestionScore, oracle_score, score_matrix, score_question, similarity_matrix
from .similarity import SIMILARITIES, exact_match, get_similarity, lcs_ratio, wordnet_similarity, wup_similarity
from .text import ENGLISH_STOPWORDS, content_tokens, normalize_prediction
from .wordnet_access import WordNetUnavailableError, get_wordnet

__all__ = [
    "__version__",
    "evaluate_module_path",
    "PAPER_METRICS",
    "STANDARD_METRICS",
    "EvaluationResult",
    "MetricSpec",
    "ProtoQAWarning",
    "evaluate_predictions",
    "metric_specs",
    "Cluster",
    "DataFormatError",
    "Question",
    "clusters_from_records",
    "read_predictions",
    "read_targets",
    "question_from_row",
    "questions_from_rows",
    "QuestionScore",
    "oracle_score",
    "score_matrix",
    "score_question",
    "similarity_matrix",
    "SIMILARITIES",
    "exact_match",
    "get_similarity",
    "lcs_ratio",
    "wordnet_similarity",
    "wup_similarity",
    "ENGLISH_STOPWORDS",
    "content_tokens",
    "normalize_prediction",
    "WordNetUnavailableError",
    "get_wordnet",
]


def evaluate_module_path() -> str:
    """Path of the ``evaluate`` metric module shipped in this package.

    >>> import evaluate  # doctest: +SKIP
    >>> metric = evaluate.load(evaluate_module_path())  # doctest: +SKIP
    """
    return str(Path(__file__).resolve().parent / "protoqa_metric.py")
