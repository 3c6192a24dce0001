"""The similarities by name: :data:`SIMILARITIES` (per string pair) and :data:`QUESTION_SIMILARITIES`.

Each built-in similarity is an object in its own module, named here in the tables of the two
registries (``name: "module:attribute"``); its module is imported only when the similarity is
first asked for, so listing the names (every ``--help`` and choice check) imports no
similarity. A new pairwise similarity is a :class:`Similarity` in its module and one line
in :data:`SIMILARITIES`' table; a per-question one, a :class:`QuestionSimilarity` and one
line in :data:`QUESTION_SIMILARITIES`' table. What a similarity can do is declared on it:
whether the metric rounds its scores (``rounded``), whether it reads WordNet
(``uses_wordnet``), a faster best-of search (``best_of``, ``reaches_of``); for a
per-question one, the options it takes (``options``) and whether it needs each question's
text (``needs_question_text``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Optional

from ..registry import Registry

__all__ = [
    "ABOVE_HALF",
    "Similarity",
    "QuestionSimilarity",
    "SIMILARITIES",
    "QUESTION_SIMILARITIES",
    "ALL_SIMILARITIES",
    "get_similarity",
    "question_similarity",
]

ABOVE_HALF = math.nextafter(0.5, 1.0)
"""The least float above 1/2. A rounded similarity counts 1 exactly when its value reaches it
(half-to-even rounding sends 0.5 to 0), so the metric asks :meth:`Similarity.reaches` this level."""


@dataclass(frozen=True)
class Similarity:
    """A named similarity function and what the metric may do with it, every property by name.

    ``rounded``: the metric rounds its scores half-to-even; ``uses_wordnet``: it reads
    WordNet (the command line finds WordNet first, and the signature names its version).
    ``best_of(prediction, answers, **options)``, when given, must equal the maximum
    of ``function`` over the answers; it lets a similarity skip work per cluster.
    ``reaches_of(prediction, answers, level, **options)``, when given, must equal
    ``best(prediction, answers) >= level``; it lets a rounded similarity decide a
    cell of the metric without its exact value.
    """

    name: str
    function: Callable[..., float]
    _: KW_ONLY
    description: str
    rounded: bool = False
    uses_wordnet: bool = False
    best_of: Optional[Callable[..., float]] = None
    reaches_of: Optional[Callable[..., bool]] = None

    def best(self, prediction: str, answers: Sequence[str], **options: bool) -> float:
        """The best similarity of ``prediction`` to any of ``answers`` (0 for none).

        >>> get_similarity("exact_match").best("cat", ["dog", "cat"])
        1.0
        """
        if self.best_of is not None:
            return self.best_of(prediction, answers, **options)
        best = 0.0
        for answer in answers:
            value = self.function(prediction, answer, **options)
            if value > best:
                best = value
                if best >= 1.0:
                    break
        return best

    def reaches(self, prediction: str, answers: Sequence[str], level: float, **options: bool) -> bool:
        """Whether the best similarity of ``prediction`` to ``answers`` is at least ``level``.

        The metric's rounded score of a cell is 1 exactly when the best similarity
        reaches :data:`ABOVE_HALF`; a similarity may decide that with less work.

        >>> get_similarity("wordnet_wup").reaches("dog", ["cat", "red car"], ABOVE_HALF)
        True
        """
        if self.reaches_of is not None:
            return self.reaches_of(prediction, answers, level, **options)
        return self.best(prediction, answers, **options) >= level


@dataclass(frozen=True)
class QuestionSimilarity:
    """A similarity scored per question (it needs the question and all its clusters' answers).

    ``build(**options)`` makes a new scorer for one evaluation; ``options`` names the
    keywords it takes (a caller passes only those, and refuses them for a similarity
    that declares none); ``needs_question_text``: it reads each question's text, so
    callers that hold answers alone must be given the questions.
    """

    name: str
    build: Callable[..., object]
    _: KW_ONLY
    description: str
    options: tuple[str, ...] = ()
    needs_question_text: bool = False


def _named_as_registered(name: str, plugin: Similarity | QuestionSimilarity) -> None:
    if plugin.name != name:
        raise ValueError(f"the similarity {plugin.name!r} is registered under another name, {name!r}")


SIMILARITIES: Registry[Similarity] = Registry(
    "similarity",
    plugins={
        "exact_match": "protoqa_core.similarity.exact:EXACT_MATCH",
        "wordnet": "protoqa_core.similarity.wordnet:WORDNET",
        "wordnet_wup": "protoqa_core.similarity.wordnet_wup:WORDNET_WUP",
        "lcs": "protoqa_core.similarity.strings:LCS",
        "longest_common_substring": "protoqa_core.similarity.strings:LONGEST_COMMON_SUBSTRING",
        "jaro_winkler": "protoqa_core.similarity.strings:JARO_WINKLER",
    },
    check=_named_as_registered,
)
"""The pairwise similarities by name, in the order every choice list shows them."""

QUESTION_SIMILARITIES: Registry[QuestionSimilarity] = Registry(
    "per-question similarity",
    plugins={"roberta": "protoqa_core.similarity.roberta:ROBERTA"},
    check=_named_as_registered,
)
"""Similarities scored per question rather than per string pair, by name."""

ALL_SIMILARITIES: tuple[str, ...] = (*SIMILARITIES, *QUESTION_SIMILARITIES)
"""Every built-in similarity name the metric takes: the pairwise ones, then the per-question ones."""


def question_similarity(name: str, **options: object) -> object:
    """A new per-question similarity (``roberta``: a
    :class:`~protoqa_core.similarity.roberta.RobertaSimilarity` with ``options``).

    >>> question_similarity("wordnet")
    Traceback (most recent call last):
    ...
    ValueError: 'wordnet' is not a per-question similarity; those are: roberta
    """
    if name not in QUESTION_SIMILARITIES:
        raise ValueError(f"{name!r} is not a per-question similarity; those are: {', '.join(QUESTION_SIMILARITIES)}")
    return QUESTION_SIMILARITIES[name].build(**options)


def get_similarity(name: str) -> Similarity:
    """Look up a pairwise similarity by name (``exact_match``, ``wordnet``, ``wordnet_wup``, ``lcs``,
    ``longest_common_substring``, ``jaro_winkler``).

    >>> get_similarity("wordnet").rounded
    True
    >>> get_similarity("roberta")
    Traceback (most recent call last):
    ...
    ValueError: 'roberta' is scored per question (it needs the question's text and crowd answers), not per string pair
    """
    if name in SIMILARITIES:
        return SIMILARITIES[name]
    if name in QUESTION_SIMILARITIES:
        raise ValueError(
            f"{name!r} is scored per question (it needs the question's text and crowd answers), not per string pair"
        )
    raise ValueError(
        f"unknown similarity {name!r}; choose one of: {', '.join((*SIMILARITIES, *QUESTION_SIMILARITIES))}"
    )
