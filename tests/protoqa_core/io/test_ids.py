"""Reconciling prediction ids with target ids: order kept, missing and unknown ids listed, and the
error that names the file, the line and the first unknown id, bounded however many there are."""

from __future__ import annotations

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.ids import IdReconciliation, reconcile_ids, unknown_ids_error


def test_reconcile_ids_keeps_prediction_order_and_lists_missing_in_target_order():
    r = reconcile_ids(["q3", "q1", "q2"], {"q2": [], "zz": [], "q3": [], "aa": []}, ignore_unknown=True)
    assert r == IdReconciliation(
        ("q2", "q3"),
        ("q1",),
        ("zz", "aa"),
        "ignored predictions for 2 question id(s) that are not in the targets: zz, aa",
    )


def test_reconcile_ids_without_unknown_ids_has_no_message():
    r = reconcile_ids(iter(["q1", "q2"]), iter(["q1", "q2"]))
    assert r == IdReconciliation(("q1", "q2"), (), (), None)


def test_reconcile_ids_error_names_file_line_and_first_unknown_id():
    with pytest.raises(DataFormatError) as info:
        reconcile_ids(["q1"], ["q1", "x7", "x8"], path="p.jsonl", locate={"x7": 2}.get)
    assert str(info.value) == (
        "p.jsonl, line 2, question 'x7': predictions for 2 question id(s) that are not in the targets: x7, x8 "
        "(pass ignore_unknown=True / --ignore-unknown to drop them)"
    )
    assert (info.value.path, info.value.line, info.value.question_id) == ("p.jsonl", 2, "x7")


def test_reconcile_ids_bounds_the_message_for_many_unknown_ids():
    r = reconcile_ids([], [f"q{i}" for i in range(10_000)], ignore_unknown=True)
    assert len(r.ignored) == 10_000 and r.message.endswith("q9, ... (10000 in all)")


def test_unknown_ids_error_names_file_line_and_first_id_and_says_when_none_is_known():
    error = unknown_ids_error(["x7", "x8"], none_known=False, path="p.jsonl", line=2)
    assert (error.path, error.line, error.question_id) == ("p.jsonl", 2, "x7")
    assert "(pass ignore_unknown=True" in str(error)
    assert "none of the 2 question id(s)" in str(unknown_ids_error(["x7", "x8"], none_known=True))
