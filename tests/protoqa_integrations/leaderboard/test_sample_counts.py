"""Samples per question on a leaderboard: counted, compared, named in the signature, kept when systems are added."""

from __future__ import annotations

import pytest

from protoqa_integrations.leaderboard.report import (
    PROBEVAL_KEY,
    Leaderboard,
    LeaderboardError,
    MetricColumn,
    SystemAnswers,
)
from protoqa_integrations.leaderboard.sample_counts import (
    board_sample_counts,
    check_sample_counts,
    merge_accepted,
    samples_of,
    samples_per_question,
    with_samples,
    without_samples,
)

SIGNATURE = "clustering:human|missing:wrong|n:3|version:0"
COLUMNS = [
    MetricColumn("max_answers@1", "Max Answers@1", True, "sim:wordnet|n:3"),
    MetricColumn(PROBEVAL_KEY, "ProbEval KL", False, SIGNATURE),
]


def test_one_count_is_named_and_questions_made_up_are_noted():
    columns, accepted, notes = check_sample_counts(COLUMNS, {"a": (100, 0), "b": (100, 3)}, ())
    assert (
        columns[0] == COLUMNS[0]
        and columns[1].signature == "clustering:human|missing:wrong|n:3|n_samples:100|version:0"
    )
    assert accepted == []
    assert notes == ["b: 3 question(s) have fewer than 100 samples; their missing samples count as wrong answers"]


def test_different_counts_are_refused_naming_both_unless_accepted_then_the_range_is_named():
    with pytest.raises(
        LeaderboardError, match=r"a and b differ in samples per question, counted from their answers \(a: 100, b: 30\)"
    ):
        check_sample_counts(COLUMNS, {"a": (100, 0), "b": (30, 0), "c": (100, 0)}, ())
    columns, accepted, _ = check_sample_counts(COLUMNS, {"a": (100, 0), "b": (30, 0)}, ["samples"])
    assert "|n:3|n_samples:30-100|" in columns[1].signature and accepted == ["samples (a: 100, b: 30)"]
    assert check_sample_counts(COLUMNS, {}, ()) == (COLUMNS, [], [])


def test_counts_come_from_the_answers_and_signatures_lose_and_regain_them():
    system = SystemAnswers("a", "-", "predictions", {"q1": {"dog": 2, "cat": 1}, "q2": {}, "q3": {"x": 3}}, None)
    assert samples_per_question(system, ["q1", "q2", "q3"]) == (3, 1)
    assert samples_per_question(system, ["q2"]) == (0, 0)
    signature = "clustering:human|n:3|n_samples:100|short:2|version:0"
    assert without_samples(signature) == "clustering:human|n:3|version:0"
    assert with_samples(without_samples(signature), "100") == "clustering:human|n:3|n_samples:100|version:0"
    assert samples_of([MetricColumn(PROBEVAL_KEY, "KL", False, signature)], PROBEVAL_KEY) == "100"
    assert samples_of(COLUMNS, PROBEVAL_KEY) is None and samples_of(COLUMNS, "nothing") is None


def test_a_boards_counts_are_read_back_from_its_accepted_mismatch_or_its_signature():
    systems = [SystemAnswers(n, "-", "predictions", {"q1": {"dog": 1}}, None) for n in ("a", "b")]
    column = MetricColumn(PROBEVAL_KEY, "KL", False, "x|n:1|n_samples:30|v")
    board = Leaderboard(["q1"], [column], systems, {}, {}, {}, 0.95, 10, 0, 0.05)
    assert board_sample_counts(board) == {"a": 30, "b": 30}
    board.accepted = ["top_p (a: 0.9, b: 1)", "samples (a: 30, b: 300)"]
    assert board_sample_counts(board) == {"a": 30, "b": 300}
    merge_accepted(board.accepted, ["samples (a: 30, b: 300, c: 5)"])
    assert board.accepted == ["top_p (a: 0.9, b: 1)", "samples (a: 30, b: 300, c: 5)"]
    merge_accepted(board.accepted, [])
    assert board.accepted[-1] == "samples (a: 30, b: 300, c: 5)"
