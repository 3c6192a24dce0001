"""The similarities by name: :data:`SIMILARITIES` (per string pair) and :data:`QUESTION_SIMILARITIES`.

A pairwise similarity joins with one line in its own module,
``SIMILARITIES.add(name, Similarity(name, function, ...))``; a per-question one with
``QUESTION_SIMILARITIES.add(name, QuestionSimilarity(name, build, description))``. The
package imports every similarity module, so the registries are full once
:mod:`protoqa_core.similarity` is imported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Optional

from ..registry import Registry

__all__ = [
    "ABOVE_HALF",
    "Similarity",
    "QuestionSimilarity",
    "SIMILARITIES",
    "QUESTION_SIMILARITIES",
    "get_similarity",
    "question_similarity",
]

ABOVE_HALF = math.nextafter(0.5, 1.0)
"""The least float above 1/2. A rounded similarity counts 1 exactly when its value reaches it
(half-to-even rounding sends 0.5 to 0), so the metric asks :meth:`Similarity.reaches` this level."""


@dataclass(frozen=True)
class Similarity:
    """A named similarity function and whether the metric rounds its scores.

    ``best_of(prediction, answers, **options)``, when given, must equal the maximum
    of ``function`` over the answers; it lets a similarity skip work per cluster.
    ``reaches_of(prediction, answers, level, **options)``, when given, must equal
    ``best(prediction, answers) >= level``; it lets a rounded similarity decide a
    cell of the metric without its exact value.
    """

    name: str
    function: Callable[..., float]
    rounded: bool
    uses_wordnet: bool
    description: str
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

    ``build(**options)`` makes a new scorer for one evaluation.
    """

    name: str
    build: Callable[..., object]
    description: str


def _named_as_registered(name: str, plugin: Similarity | QuestionSimilarity) -> None:
    if plugin.name != name:
        raise ValueError(f"the similarity {plugin.name!r} is registered under another name, {name!r}")


SIMILARITIES: Registry[Similarity] = Registry("similarity", check=_named_as_registered)
"""The pairwise similarities by name, in registration order."""

QUESTION_SIMILARITIES: Registry[QuestionSimilarity] = Registry("per-question similarity", check=_named_as_registered)
"""Similarities scored per question rather than per string pair, by name."""


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
