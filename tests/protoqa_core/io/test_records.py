"""Questions and clusters: the field checks every reader shares, and the three targets layouts."""

from __future__ import annotations

import pytest

from protoqa_core.io.files import MAX_COUNT, DataFormatError
from protoqa_core.io.records import Cluster, Question, check_answers, check_count, preview_ids, question_from_json


def test_a_cluster_refuses_a_bare_string_and_normalizes_unicode():
    with pytest.raises(DataFormatError, match="cluster 'c0': answers must be a list of strings, got a string"):
        Cluster("c0", "dog", 3)  # type: ignore[arg-type]
    composed = Cluster("c0", ("cafe\u0301", "tea"), 2)
    assert composed.answers == ("caf\u00e9", "tea")


def test_total_count_sums_the_clusters():
    question = Question("q1", "name a pet", (Cluster("a", ("dog",), 3), Cluster("b", ("cat",), 4)))
    assert question.total_count == 7 and question.raw_answers == {}
    assert Question("q2", "x", ()).total_count == 0


def test_check_count_takes_numpy_integers_and_refuses_the_rest():
    np = pytest.importorskip("numpy")
    assert check_count(np.int64(5), "count") == 5 and type(check_count(np.int64(5), "count")) is int
    assert check_count(0, "count") == 0 and check_count(MAX_COUNT, "count") == MAX_COUNT
    for bad in (True, -1, 2.0, "3", None, np.float64(2.0)):
        with pytest.raises(DataFormatError, match="q1': c must be a non-negative integer"):
            check_count(bad, "c", "t.jsonl", 2, "q1")
    with pytest.raises(
        DataFormatError, match=rf"t\.jsonl, line 2, question 'q1': c is too large .*at most {MAX_COUNT}"
    ):
        check_count(MAX_COUNT + 1, "c", "t.jsonl", 2, "q1")


def test_preview_ids_shows_all_up_to_the_limit():
    assert preview_ids(["a", "b"]) == "a, b"
    assert preview_ids([f"q{i}" for i in range(10)]) == ", ".join(f"q{i}" for i in range(10))
    assert preview_ids([f"q{i}" for i in range(11)]).endswith("q9, ... (11 in all)")
    assert preview_ids([]) == ""


def test_check_answers_names_what_is_wrong():
    assert check_answers([], "answers", None, None, None) == ()
    with pytest.raises(
        DataFormatError, match=r"t\.jsonl, line 3, question 'q1': answers must be a list of strings, got str"
    ):
        check_answers("dog", "answers", "t.jsonl", 3, "q1")
    with pytest.raises(DataFormatError, match=r"question 'q1': answers must contain only strings, found None"):
        check_answers(["dog", None], "answers", "t.jsonl", 3, "q1")


def test_the_protoqa_layout():
    row = {
        "metadata": {"id": "r1q1", "source": "crowd"},
        "question": {"original": "Name a pet.", "normalized": "name a pet"},
        "answers": {"raw": {"dog": 3, "puppy": 1}, "clusters": {"r1q1.0": {"count": 4, "answers": ["dog", "puppy"]}}},
    }
    question = question_from_json(row)
    assert question == Question(
        "r1q1", "name a pet", (Cluster("r1q1.0", ("dog", "puppy"), 4),), "Name a pet.", "crowd", {"dog": 3, "puppy": 1}
    )


def test_the_older_layouts_make_one_cluster_per_entry():
    mapping = question_from_json(
        {"questionid": "q1", "normalized-question": "name a pet", "answers-cleaned": {"dog": 3, "cat": 2}}
    )
    assert mapping.clusters == (Cluster("q1.0", ("dog",), 3), Cluster("q1.1", ("cat",), 2))
    assert mapping.question == mapping.question_original == "name a pet"
    listed = question_from_json(
        {"questionid": "q2", "question": "Name a pet", "answers-cleaned": [{"count": 5, "answers": ["dog", "hound"]}]}
    )
    assert listed.clusters == (Cluster("q2.0", ("dog", "hound"), 5),) and listed.question == "Name a pet"


def test_a_question_without_answers_has_no_clusters():
    question = question_from_json({"metadata": {"id": "q1"}, "question": {"normalized": "name a pet"}})
    assert question.clusters == () and question.total_count == 0 and question.source == ""


@pytest.mark.parametrize(
    "row, message",
    [
        ([1, 2], r"t\.jsonl, line 5: expected a JSON object, got list"),
        ({"question": {"normalized": "x"}}, r"line 5: missing question id \(metadata\.id\)"),
        ({"metadata": {"id": ""}, "question": "x"}, r"line 5: question id must be a non-empty string, got ''"),
        ({"metadata": {"id": 7}, "question": "x"}, r"line 5: question id must be a non-empty string, got 7"),
        ({"metadata": {"id": "q1"}}, r"line 5, question 'q1': missing question text"),
        ({"metadata": {"id": "q1"}, "question": "x", "answers": []}, r"question 'q1': answers must be an object"),
        (
            {"metadata": {"id": "q1"}, "question": "x", "answers": {"clusters": []}},
            r"question 'q1': answers\.clusters must be an object",
        ),
        (
            {"metadata": {"id": "q1"}, "question": "x", "answers": {"raw": {"dog": -1}}},
            r"question 'q1': raw answer 'dog' count must be a non-negative integer, got -1",
        ),
        (
            {"questionid": "q1", "question": "x", "answers-cleaned": "dog"},
            r"question 'q1': answers-cleaned must be a list of \{count, answers\} or an object",
        ),
        (
            {"questionid": "q1", "question": "x", "answers-cleaned": [{"count": 1}]},
            r"question 'q1': answers-cleaned\[0\] needs 'count' and 'answers'",
        ),
        (
            {"questionid": "q1", "question": "x", "answers-cleaned": {"dog": 1.5}},
            r"question 'q1': answer 'dog' count must be a non-negative integer",
        ),
    ],
)
def test_bad_rows_name_file_line_and_question(row, message):
    with pytest.raises(DataFormatError, match=message):
        question_from_json(row, "t.jsonl", 5)
