"""The number of samples a ProbEval score is made at, and the samples each question lacks.

Smoothing pulls a small sample set towards the uniform distribution, so fewer samples would score better: every
question is scored at one count, its missing samples wrong answers (docs/spec.md, "Missing samples ...").
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Optional

from .errors import ScoreMeaningWarning

__all__ = ["scored_sample_count", "shortfall", "warn_short"]


def shortfall(question_id: str, total: int, num_samples: Optional[int]) -> int:
    """How many samples a question with ``total`` lacks to reach ``num_samples`` (0 when None); more is an error, and
    so is a question with no sample and no count to score it at: its smoothed empty distribution would score
    better than real answers.

    >>> shortfall("q1", 95, 100), shortfall("q1", 95, None), shortfall("q1", 0, 100)
    (5, 0, 100)
    >>> shortfall("q1", 0, None)
    Traceback (most recent call last):
    ...
    ValueError: question q1: no samples and no number of samples to score it at: ...
    """
    if total == 0 and not num_samples:
        raise ValueError(
            f"question {question_id}: no samples and no number of samples to score it at: an empty answer list is "
            "not scored, since smoothing would rate it above real answers; give the number of samples "
            "(num_samples), and the missing ones count as wrong answers"
        )
    if num_samples is None:
        return 0
    if total > num_samples:
        raise ValueError(f"question {question_id}: {total} samples, more than the {num_samples} it is scored at")
    return num_samples - total


def scored_sample_count(totals: Mapping[str, int], num_samples: Optional[int]) -> int:
    """The number of samples every question is scored at: ``num_samples`` when given, else the most any
    question has, counted from the samples themselves (docs/spec.md section 2).

    >>> scored_sample_count({"q1": 100, "q2": 95}, None), scored_sample_count({"q1": 100}, 300)
    (100, 300)
    >>> scored_sample_count({"q1": 0, "q2": 0}, None)
    Traceback (most recent call last):
    ...
    ValueError: no question has a sample (2 question(s) answered with none): nothing to score
    >>> scored_sample_count({"q1": 100, "q2": 120}, 100)
    Traceback (most recent call last):
    ...
    ValueError: question q2 has 120 samples, more than the 100 every question is scored at
    """
    if num_samples is not None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples < 1:
            raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")
        over = [qid for qid, n in totals.items() if n > num_samples]
        if over:
            raise ValueError(
                f"question {over[0]} has {totals[over[0]]} samples, more than the {num_samples} every question "
                "is scored at"
            )
        return num_samples
    if not totals:
        raise ValueError("the samples answer no question with target answers: nothing to score")
    count = max(totals.values())
    if count == 0:
        raise ValueError(f"no question has a sample ({len(totals)} question(s) answered with none): nothing to score")
    return count


def warn_short(short: Sequence[str], totals: Mapping[str, int], count: int) -> None:
    """One warning naming the questions made up with wrong answers (:class:`ScoreMeaningWarning`, which ``--quiet``
    never hides), pointing at the caller of ``evaluate``."""
    shown = ", ".join(f"{qid} ({totals[qid]})" for qid in short[:5]) + (" ..." if len(short) > 5 else "")
    warnings.warn(
        f"{len(short)} question(s) have fewer than {count} samples, and their missing samples count as wrong "
        f"answers: {shown}",
        ScoreMeaningWarning,
        stacklevel=4,
    )
