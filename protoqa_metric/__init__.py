"""ProtoQA ranked-list evaluation: exact-match and WordNet similarity, Max Answers@k and Max Incorrect@k.

>>> from protoqa_metric import ProtoQA, read_targets, read_predictions  # doctest: +SKIP
>>> protoqa = ProtoQA("wordnet", metrics="standard")  # doctest: +SKIP
>>> result = protoqa.evaluate(read_targets("dev.crowdsourced.jsonl"),
...                           read_predictions("predictions.jsonl"))  # doctest: +SKIP
>>> result.scores["max_answers@10"], result.signature  # doctest: +SKIP
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from protoqa_core import __version__
from protoqa_core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from protoqa_core.io.files import DataFormatError, ProtoQAWarning
    from protoqa_core.io.predictions import PackedPredictions, read_packed_predictions, read_predictions
    from protoqa_core.io.readers import TargetStream, clusters_from_records, read_targets
    from protoqa_core.io.records import Cluster, Question
    from protoqa_core.io.rows import question_from_row, questions_from_rows
    from protoqa_core.similarity import (
        SIMILARITIES,
        exact_match,
        get_similarity,
        lcs_ratio,
        wordnet_similarity,
        wup_similarity,
    )
    from protoqa_core.text import ENGLISH_STOPWORDS, content_tokens, normalize_prediction
    from protoqa_core.wordnet.files import WordNetUnavailableError
    from protoqa_core.wordnet.nltk_reader import get_wordnet

    from .metric import ProtoQA, evaluate_predictions, score_question
    from .metric_set import PAPER_METRICS, STANDARD_METRICS, EvaluationResult, MetricSpec, metric_specs
    from .scoring import QuestionScore, oracle_score, score_matrix, similarity_matrix

__all__ = [
    "__version__",
    "evaluate_module_path",
    "ProtoQA",
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
    "TargetStream",
    "PackedPredictions",
    "read_packed_predictions",
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
    """Path of the ``protoqa`` ``evaluate`` module script shipped in this package (works from anywhere).

    >>> Path(evaluate_module_path()).relative_to(Path(__file__).resolve().parent).as_posix()
    'evaluate_modules/protoqa/protoqa.py'
    >>> import evaluate  # doctest: +SKIP
    >>> protoqa = evaluate.load(evaluate_module_path(), "wordnet")  # doctest: +SKIP
    """
    return str(Path(__file__).resolve().parent / "evaluate_modules" / "protoqa" / "protoqa.py")


# The names are imported from their modules when first read: a command that needs a few of
# them (``protoqa-eval --help`` needs none) loads those modules alone.
__getattr__ = lazy_exports(
    sys.modules[__name__],
    {
        "DataFormatError": "protoqa_core.io.files",
        "ProtoQAWarning": "protoqa_core.io.files",
        "PackedPredictions": "protoqa_core.io.predictions",
        "read_packed_predictions": "protoqa_core.io.predictions",
        "read_predictions": "protoqa_core.io.predictions",
        "TargetStream": "protoqa_core.io.readers",
        "clusters_from_records": "protoqa_core.io.readers",
        "read_targets": "protoqa_core.io.readers",
        "Cluster": "protoqa_core.io.records",
        "Question": "protoqa_core.io.records",
        "question_from_row": "protoqa_core.io.rows",
        "questions_from_rows": "protoqa_core.io.rows",
        "SIMILARITIES": "protoqa_core.similarity",
        "exact_match": "protoqa_core.similarity",
        "get_similarity": "protoqa_core.similarity",
        "lcs_ratio": "protoqa_core.similarity",
        "wordnet_similarity": "protoqa_core.similarity",
        "wup_similarity": "protoqa_core.similarity",
        "ENGLISH_STOPWORDS": "protoqa_core.text",
        "content_tokens": "protoqa_core.text",
        "normalize_prediction": "protoqa_core.text",
        "WordNetUnavailableError": "protoqa_core.wordnet.files",
        "get_wordnet": "protoqa_core.wordnet.nltk_reader",
        "ProtoQA": ".metric",
        "evaluate_predictions": ".metric",
        "score_question": ".metric",
        "PAPER_METRICS": ".metric_set",
        "STANDARD_METRICS": ".metric_set",
        "EvaluationResult": ".metric_set",
        "MetricSpec": ".metric_set",
        "metric_specs": ".metric_set",
        "QuestionScore": ".scoring",
        "oracle_score": ".scoring",
        "score_matrix": ".scoring",
        "similarity_matrix": ".scoring",
    },
)
