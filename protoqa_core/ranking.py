"""Ranking sampled answers by frequency: the one ranker every surface of the project uses.

As the ProtoQA paper's GPT-2 baseline ranks them: distinct answers, normalized as docs/spec.md
section 1 normalizes predictions, most often sampled first, ties to the first to appear.

>>> rank_by_frequency(["Night", "Night", "night", "night", "evening", "evening", "evening"])
['night', 'evening']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Optional, Union

from .text import normalize_prediction

__all__ = ["SampledAnswers", "answer_frequencies", "rank_by_frequency"]

SampledAnswers = Union[Iterable[str], Mapping[str, int]]
"""Sampled answers: the samples themselves (repeats kept), or ``{answer: how often it was sampled}``."""


def _counted(answers: SampledAnswers) -> Iterable[tuple[str, int]]:
    if isinstance(answers, str):
        raise TypeError("answers must be a list of sampled answers or an {answer: count} mapping, not one string")
    if isinstance(answers, Mapping):
        for answer, count in answers.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"the count of answer {answer!r} must be a non-negative integer, got {count!r}")
            yield answer, count
    else:
        for answer in answers:
            yield answer, 1


def answer_frequencies(answers: SampledAnswers) -> dict[str, int]:
    """Normalized answer -> how often it was sampled, in order of first appearance.

    Answers that normalize alike add up; the empty answer is kept (still a sample), one counted 0 is not.

    >>> answer_frequencies({"Night": 2, "evening": 3, "night": 2, "": 1})
    {'night': 4, 'evening': 3, '': 1}
    >>> answer_frequencies(["Dog ", "cat", "dog"])
    {'dog': 2, 'cat': 1}
    """
    counts: dict[str, int] = {}
    for answer, count in _counted(answers):
        if not isinstance(answer, str):
            raise TypeError(f"answers must be strings, found {answer!r}")
        if count:
            key = normalize_prediction(answer)
            counts[key] = counts.get(key, 0) + count
    return counts


def rank_by_frequency(answers: SampledAnswers, max_answers: Optional[int] = None) -> list[str]:
    """Distinct normalized non-empty answers, most frequent first; ties in order of first appearance.

    >>> rank_by_frequency(["cat", "dog", "", "dog", "bird", "cat", "dog"])
    ['dog', 'cat', 'bird']
    >>> rank_by_frequency({"Night": 2, "night": 2, "evening": 3})
    ['night', 'evening']
    >>> rank_by_frequency(["b", "a", "a", "b", "c"], max_answers=2)
    ['b', 'a']
    """
    if max_answers is not None and (
        isinstance(max_answers, bool) or not isinstance(max_answers, int) or max_answers < 0
    ):
        raise ValueError(f"max_answers must be a non-negative integer or None, got {max_answers!r}")
    counts = answer_frequencies(answers)
    counts.pop("", None)
    # dicts keep first-appearance order and sorted() is stable, so ties stay in that order.
    ranked = sorted(counts, key=lambda answer: -counts[answer])
    return ranked if max_answers is None else ranked[:max_answers]
