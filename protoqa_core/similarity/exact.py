"""``exact_match``: identical strings score 1."""

from __future__ import annotations

from .registry import SIMILARITIES, Similarity

__all__ = ["exact_match"]


def exact_match(prediction: str, answer: str) -> float:
    """1.0 when the two strings are equal, else 0.0.

    >>> exact_match("age", "age"), exact_match("age", "their age")
    (1.0, 0.0)
    """
    return 1.0 if prediction == answer else 0.0


SIMILARITIES.add("exact_match", Similarity("exact_match", exact_match, False, False, "identical strings"))
