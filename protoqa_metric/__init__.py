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
    from protoqa_core.io.predictions import read_predictions
    from protoqa_core.io.question_index import QuestionIndex
    from protoqa_core.io.readers import clusters_from_records, read_targets
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
    "QuestionIndex",
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
__getattr__ = lazy_exports(sys.modules[__name__])
