"""``exact_match``: identical strings score 1."""

from __future__ import annotations

from .registry import Similarity

__all__ = ["exact_match", "EXACT_MATCH"]


def exact_match(prediction: str, answer: str) -> float:
    """1.0 when the two strings are equal, else 0.0.

    >>> exact_match("age", "age"), exact_match("age", "their age")
    (1.0, 0.0)
    """
    return 1.0 if prediction == answer else 0.0


EXACT_MATCH = Similarity("exact_match", exact_match, description="identical strings")
"""The ``exact_match`` similarity of :data:`~protoqa_core.similarity.SIMILARITIES`."""
