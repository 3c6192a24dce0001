"""Similarity between one predicted answer and one answer string of a cluster.

Every function takes a normalized prediction and a cluster string as it is, and returns a float in
[0, 1]; ``roberta`` is scored per question instead. The similarities are listed in
docs/protoqa-metric.md. "Rounded" ones have the metric's score matrix rounded half-to-even, as the
ProtoQA evaluator does. Every similarity has a worst-case cost for strings of any length, and a
value computed under a bound is reported (:mod:`protoqa_core.similarity.bounds`). A similarity's
module is imported only when it, or a function of its module, is first asked for.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports
from .registry import (
    ABOVE_HALF,
    DECLARING_OPTIONS,
    SIMILARITIES,
    Similarity,
    check_similarity_options,
    get_similarity,
    similarity_options,
)

if TYPE_CHECKING:
    from .bounds import MAX_SIMILARITY_TOKENS, ApproximationWarning, collect_approximations
    from .exact import exact_match
    from .roberta import RobertaSimilarity
    from .strings import jaro_winkler, lcs_ratio, longest_common_substring_ratio
    from .wordnet import best_wordnet_similarity, wordnet_reaches, wordnet_similarity
    from .wordnet_wup import best_wup_similarity, wup_reaches, wup_similarity

__all__ = [
    "Similarity",
    "SIMILARITIES",
    "get_similarity",
    "exact_match",
    "wordnet_similarity",
    "best_wordnet_similarity",
    "wup_similarity",
    "best_wup_similarity",
    "wordnet_reaches",
    "wup_reaches",
    "ABOVE_HALF",
    "lcs_ratio",
    "longest_common_substring_ratio",
    "jaro_winkler",
    "MAX_SIMILARITY_TOKENS",
    "DECLARING_OPTIONS",
    "similarity_options",
    "check_similarity_options",
    "ApproximationWarning",
    "collect_approximations",
    "RobertaSimilarity",
]

__getattr__ = lazy_exports(sys.modules[__name__])
