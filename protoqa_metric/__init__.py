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


# module name -> (package holding it, script path inside that package)
_EVALUATE_MODULES = {
    "protoqa": ("protoqa_metric", "evaluate_modules/protoqa/protoqa.py"),
    "probeval": ("cfc_probeval", "evaluate_modules/probeval/probeval.py"),
}
_DEPRECATED_MODULES = {  # old name -> (package, script, new name); kept for one release
    "protoqa_metric": ("protoqa_metric", "protoqa_metric.py", "protoqa"),
    "cfc_probeval": ("cfc_probeval", "cfc_probeval.py", "probeval"),
}


def evaluate_module_path(name: str = "protoqa") -> str:
    """Path of the script of an ``evaluate`` module shipped in this distribution: ``protoqa`` or ``probeval``.

    Works from any directory, for an installed wheel as for a checkout. The old
    names ``protoqa_metric`` and ``cfc_probeval`` still work for one release, with a
    DeprecationWarning.

    >>> evaluate_module_path("probeval").endswith("probeval.py")
    True
    >>> import evaluate  # doctest: +SKIP
    >>> metric = evaluate.load(evaluate_module_path("protoqa"), "wordnet")  # doctest: +SKIP
    """
    import importlib.util
    import warnings

    if name in _DEPRECATED_MODULES:
        package, script, new = _DEPRECATED_MODULES[name]
        warnings.warn(f'the evaluate module name "{name}" is deprecated and will be removed in the next release; '
                      f'use evaluate_module_path("{new}")', DeprecationWarning, stacklevel=2)
    elif name in _EVALUATE_MODULES:
        package, script = _EVALUATE_MODULES[name]
    else:
        raise ValueError(f"unknown evaluate module {name!r}; choose one of {', '.join(_EVALUATE_MODULES)}")
    if package == __name__:
        folder = Path(__file__).resolve().parent
    else:  # located without importing it: this package does not import the layers built on it
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(f"package {package!r} is not installed (pip install protoqa-eval)")
        folder = Path(list(spec.submodule_search_locations)[0]).resolve()
    return str(folder / script)
