"""Similarity between one predicted answer and one answer string of a cluster.

Every function takes ``(prediction, answer)`` and returns a float in [0, 1]. The
prediction is expected to be normalized already (see
:func:`protoqa_core.text.normalize_prediction`); cluster strings are used as
they are.

============================ ============================================================ =======
name                         what scores 1                                                rounded
============================ ============================================================ =======
``exact_match``              identical strings                                            no
``wordnet``                  partition similarity of docs/spec.md (shared synsets)        yes
``wordnet_wup``              as ``wordnet``, part pairs weighted by Wu-Palmer similarity   yes
``lcs``                      longest common subsequence / longer length (characters)      no
``longest_common_substring`` longest common substring / longer length (characters)        no
``jaro_winkler``             Jaro-Winkler similarity (NLTK's, prefix scale 0.1, 4 chars)  no
``roberta``                  the cluster a GP over contextual vectors sends it to (below) 0/1
============================ ============================================================ =======

``roberta`` (the ProtoQA paper's RoBERTa similarity) is scored per question, not per
string pair: it needs the question and all of its clusters' crowd answers, to train a
Gaussian process per cluster: its :class:`Similarity` declares that capability
(``per_question``) and the options it takes, in :mod:`protoqa_core.similarity.roberta_plugin`; its
scorer lives in :mod:`protoqa_core.similarity.roberta` (which
imports torch and transformers only when it first encodes).

"Rounded" similarities have the metric's score matrix rounded half-to-even, as the
ProtoQA evaluator does, so that a WordNet similarity of exactly 0.5 counts as 0.

Every similarity has a worst-case cost for strings of any length, and a value computed
under a bound is reported (see :mod:`protoqa_core.similarity.bounds`).

Each similarity lives in its own module, named in the tables of the registries of
:mod:`protoqa_core.similarity.registry`; this package imports a similarity's module only when
the similarity, or a function of its module, is first asked for (``import
protoqa_core.similarity`` and every name list import none of them).
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
