"""ProbEval: KL divergence between the human and the model answer distributions over clusters.

>>> from cfc_probeval import evaluate_probeval, read_targets, read_samples  # doctest: +SKIP
>>> result = evaluate_probeval(read_targets("dev.targets.jsonl"),
...                            read_samples("dev.predictions.gpt2-xl.oneshot.json"))  # doctest: +SKIP
>>> result.kl, result.signature  # doctest: +SKIP

The defaults are in :mod:`cfc_probeval.defaults`; ``clustering=`` forces one, and the signature says which ran.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from protoqa_core import __version__
from protoqa_core.io.files import DataFormatError
from protoqa_core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .checks import check_settings
    from .clustered import write_clustered_targets
    from .clustering import (
        Clusterer,
        GMeansClusterer,
        HACClusterer,
        XMeansClusterer,
        clustering_options,
        make_clusterer,
    )
    from .defaults import AUTO, DEFAULTS
    from .distributions import WRONG, human_counts, kl_divergence, laplace_smoothed, model_counts
    from .embedders import CharNgramEmbedder, Embedder, FastTextEmbedder, SentenceTransformerEmbedder, get_embedder
    from .errors import ProbEvalWarning
    from .inputs import (
        QuestionTargets,
        has_human_clusters,
        read_samples,
        read_targets,
        targets_from_question,
        targets_from_raw_answers,
        targets_from_reference,
    )
    from .matching import CosineMatcher, GPMatcher, Matcher, MatchingOptions, WordNetMatcher, make_matcher
    from .probeval import ProbEval, evaluate_probeval, resolve_clustering
    from .registry import CLUSTERINGS, EMBEDDERS, MATCHINGS, clustering_choices
    from .results import AnswerCluster, ClusterResult, ProbEvalResult, QuestionResult

__all__ = [
    "__version__",
    "evaluate_module_path",
    "AUTO",
    "DEFAULTS",
    "CLUSTERINGS",
    "clustering_choices",
    "MATCHINGS",
    "EMBEDDERS",
    "WRONG",
    "evaluate_probeval",
    "write_clustered_targets",
    "check_settings",
    "resolve_clustering",
    "ProbEval",
    "ProbEvalResult",
    "QuestionResult",
    "ClusterResult",
    "AnswerCluster",
    "QuestionTargets",
    "targets_from_question",
    "targets_from_reference",
    "targets_from_raw_answers",
    "has_human_clusters",
    "read_targets",
    "read_samples",
    "Clusterer",
    "HACClusterer",
    "XMeansClusterer",
    "GMeansClusterer",
    "clustering_options",
    "make_clusterer",
    "Matcher",
    "WordNetMatcher",
    "CosineMatcher",
    "GPMatcher",
    "MatchingOptions",
    "make_matcher",
    "Embedder",
    "SentenceTransformerEmbedder",
    "FastTextEmbedder",
    "CharNgramEmbedder",
    "get_embedder",
    "human_counts",
    "model_counts",
    "laplace_smoothed",
    "kl_divergence",
    "DataFormatError",
    "ProbEvalWarning",
]

# Each name is imported from its module when first read: ``probeval --help`` and a run with human
# clusters import neither the embedders nor the clusterings they do not use.
__getattr__ = lazy_exports(sys.modules[__name__])


def evaluate_module_path() -> str:
    """Path of the ``probeval`` ``evaluate`` module script shipped in this package (works from anywhere).

    >>> evaluate_module_path().endswith("probeval.py")
    True
    >>> import evaluate  # doctest: +SKIP
    >>> probeval = evaluate.load(evaluate_module_path(), "human")  # doctest: +SKIP
    """
    return str(Path(__file__).resolve().parent / "evaluate_modules" / "probeval" / "probeval.py")
