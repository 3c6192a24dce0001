"""The counts in a leaderboard's signatures: samples per question, counted from each system's answers (never
what a file claims) and compared, since KL depends on them (docs/spec.md, "Missing samples and the number of
samples"); and the number of questions.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Optional

from protoqa_integrations.leaderboard.report import (
    PROBEVAL_KEY,
    Leaderboard,
    LeaderboardError,
    MetricColumn,
    SystemAnswers,
)

__all__ = [
    "RECOUNTED_MISMATCHES",
    "board_sample_counts",
    "check_added_counts",
    "check_sample_counts",
    "check_systems",
    "merge_accepted",
    "samples_of",
    "samples_per_question",
    "with_question_count",
    "with_samples",
    "without_question_count",
    "without_samples",
]

RECOUNTED_MISMATCHES = ("samples",)
"""Accepted mismatches of a board that a new system must accept anew (counted from every system's answers)."""


def check_sample_counts(
    columns: list[MetricColumn], counted: Mapping[str, tuple[int, int]], accept: Collection[str]
) -> tuple[list[MetricColumn], list[str], list[str]]:
    """The columns with the ProbEval signature naming the samples per question (a range when ``accept`` names
    ``samples``, else differing counts are refused), the accepted mismatch and notes on short questions.

    >>> cols = [MetricColumn(PROBEVAL_KEY, "ProbEval KL", False, "clustering:human|missing:wrong|n:3|version:0")]
    >>> check_sample_counts(cols, {"a": (100, 0), "b": (100, 2)}, ())[0][0].signature
    'clustering:human|missing:wrong|n:3|n_samples:100|version:0'
    >>> check_sample_counts(cols, {"a": (100, 0), "b": (30, 0)}, ["samples"])[1]
    ['samples (a: 100, b: 30)']
    """
    if not counted:
        return columns, [], []
    values = {name: count for name, (count, _) in counted.items()}
    distinct = sorted(set(values.values()))
    accepted = []
    if len(distinct) > 1:
        first = next(iter(values))
        other = next(n for n in values if values[n] != values[first])
        if "samples" not in accept:
            raise LeaderboardError(
                f"{first} and {other} differ in samples per question, counted from their answers ({first}: "
                f"{values[first]}, {other}: {values[other]}): their ProbEval KLs are not comparable; sample them "
                "alike, or pass --accept-mismatch samples to rank them anyway"
            )
        accepted.append("samples (" + ", ".join(f"{n}: {c}" for n, c in values.items()) + ")")
    text = str(distinct[0]) if len(distinct) == 1 else f"{distinct[0]}-{distinct[-1]}"
    notes = [
        f"{name}: {short} question(s) have fewer than {count} samples; their missing samples count as wrong answers"
        for name, (count, short) in counted.items()
        if short
    ]
    out = [replace(c, signature=with_samples(c.signature, text)) if c.key == PROBEVAL_KEY else c for c in columns]
    return out, accepted, notes


def check_added_counts(
    board: Leaderboard, columns: list[MetricColumn], counted: Mapping[str, tuple[int, int]], accept: Collection[str]
) -> tuple[list[MetricColumn], list[MetricColumn], list[str], list[str]]:
    """:func:`check_sample_counts` of systems added to ``board``, with the board's: the new columns, the board's
    with the count or range of all, the accepted mismatch (``accept``, the adder's, alone) and the notes.

    >>> a = SystemAnswers("a", "-", "predictions", {"q1": {"dog": 3}}, None)
    >>> column = MetricColumn(PROBEVAL_KEY, "KL", False, "x|n:1|n_samples:3|v")
    >>> board = Leaderboard(["q1"], [column], [a], {}, {}, {}, 0.95, 10, 0, 0.05)
    >>> new = [MetricColumn(PROBEVAL_KEY, "KL", False, "x|n:1|v")]
    >>> check_added_counts(board, new, {"b": (5, 0)}, ["samples"])[1][0].signature
    'x|n:1|n_samples:3-5|v'
    """
    known = {name: (count, 0) for name, count in board_sample_counts(board).items()}
    columns, accepted, notes = check_sample_counts(columns, {**known, **counted}, list(accept))
    text = samples_of(columns, PROBEVAL_KEY)
    board_columns = [
        replace(c, signature=with_samples(without_samples(c.signature), text)) if c.key == PROBEVAL_KEY and text else c
        for c in board.columns
    ]
    return columns, board_columns, accepted, notes


def check_systems(systems: Sequence[SystemAnswers], questions: Sequence[str], accept: Collection[str]) -> None:
    """Refuse, before any scoring, systems with different samples per question unless ``accept`` names ``samples``.

    >>> a = SystemAnswers("a", "-", "predictions", {"q1": {"dog": 3}}, None)
    >>> b = SystemAnswers("b", "-", "predictions", {"q1": {"dog": 1}}, None)
    >>> check_systems([a, b], ["q1"], ["samples"])
    >>> check_systems([a, b], ["q1"], [])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    LeaderboardError: a and b differ in samples per question, counted from their answers (a: 3, b: 1): ...
    """
    check_sample_counts([], {s.name: samples_per_question(s, questions) for s in systems}, accept)


def samples_per_question(system: SystemAnswers, questions: Sequence[str]) -> tuple[int, int]:
    """A system's samples per question on ``questions`` (the most any has) and how many have fewer.

    >>> a = SystemAnswers("a", "-", "predictions", {"q1": {"dog": 3}, "q2": {"cat": 1}}, None)
    >>> samples_per_question(a, ["q1", "q2"])
    (3, 1)
    """
    totals = [sum(system.samples[qid].values()) for qid in questions]
    count = max(totals, default=0)
    return count, sum(1 for t in totals if t < count)


def merge_accepted(accepted: list[str], counted: Sequence[str]) -> None:
    """Add the counted samples mismatch to ``accepted``, in place of a recorded one.

    >>> accepted = ["samples (a: 30, b: 300)", "top_p (a: 0.9, b: 1)"]
    >>> merge_accepted(accepted, ["samples (a: 30, b: 29)"])
    >>> accepted
    ['top_p (a: 0.9, b: 1)', 'samples (a: 30, b: 29)']
    """
    if counted:
        accepted[:] = [a for a in accepted if not a.startswith("samples (")] + list(counted)


def board_sample_counts(board: Leaderboard) -> dict[str, int]:
    """The samples per question of a board's systems: from its signature, or from an accepted mismatch's entry.

    >>> a = SystemAnswers("a", "-", "predictions", {"q1": {"dog": 3}}, None)
    >>> board = Leaderboard(["q1"], [MetricColumn(PROBEVAL_KEY, "KL", False, "x|n:1|n_samples:3|v")], [a], {}, {}, {},
    ...                     0.95, 10, 0, 0.05)
    >>> board_sample_counts(board)
    {'a': 3}

    The entry is read by the systems' names, which may hold ``, `` or ``: `` themselves:

    >>> odd = SystemAnswers("model, v2: big", "-", "predictions", {}, None)
    >>> board.systems, board.accepted = [a, odd], ["samples (a: 3, model, v2: big: 30)"]
    >>> board_sample_counts(board)
    {'a': 3, 'model, v2: big': 30}
    """
    entry = next((a for a in board.accepted if a.startswith("samples (")), None)
    if entry is not None:
        counts = {}
        for system in board.systems:
            found = re.search(rf"(?:\(|, ){re.escape(system.name)}: (\d+)(?=, |\)$)", entry)
            if found:
                counts[system.name] = int(found.group(1))
        return counts
    column = next((c for c in board.columns if c.key == PROBEVAL_KEY), None)
    found = re.search(r"\|n_samples:(\d+)(?=\|)", column.signature) if column is not None else None
    return {s.name: int(found.group(1)) for s in board.systems} if found else {}


def samples_of(columns: Sequence[MetricColumn], key: str) -> Optional[str]:
    """The ``n_samples:`` part of the signature of column ``key`` (a count or a range), None without one.

    >>> samples_of([MetricColumn(PROBEVAL_KEY, "KL", False, "x|n:3|n_samples:30-100|v")], PROBEVAL_KEY)
    '30-100'
    """
    column = next((c for c in columns if c.key == key), None)
    found = re.search(r"\|n_samples:([0-9-]+)", column.signature) if column is not None else None
    return found.group(1) if found else None


def without_samples(signature: str) -> str:
    """A ProbEval signature less its sample count and short questions.

    >>> without_samples("clustering:human|n:3|n_samples:100|short:2|version:0")
    'clustering:human|n:3|version:0'
    """
    return re.sub(r"\|(n_samples|short):[0-9,-]+", "", signature)


def with_samples(signature: str, text: str) -> str:
    """``signature`` with ``n_samples:TEXT`` after its question count.

    >>> with_samples("clustering:human|n:3|version:0", "30-100")
    'clustering:human|n:3|n_samples:30-100|version:0'
    """
    return re.sub(r"(?<![a-z_])(n:\d+)", rf"\1|n_samples:{text}", signature, count=1)


def with_question_count(signature: str, count: int) -> str:
    """``signature`` with its question count (``n:52``) set to ``count``.

    >>> with_question_count("sim:wordnet|n:52|version:0", 3)
    'sim:wordnet|n:3|version:0'
    """
    return re.sub(r"(?<![a-z_])n:\d+", f"n:{count}", signature)


def without_question_count(signature: str) -> str:
    """A signature less its question count (``n:52``), to compare settings on a subset.

    >>> without_question_count("sim:wordnet|n:52|n_samples:300|version:0")
    'sim:wordnet|n:*|n_samples:300|version:0'
    """
    return re.sub(r"(?<![a-z_])n:\d+", "n:*", signature)
