"""Questions from dataset rows: the export's row, its record form, and every malformed field named."""

from __future__ import annotations

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.readers import read_targets
from protoqa_core.io.records import Cluster, Question
from protoqa_core.io.rows import question_from_row, questions_from_rows, raw_answer_counts

ROW = {
    "id": "q1",
    "question": "name a pet",
    "question_original": "Name a pet.",
    "source": "crowd",
    "clusters": {"id": ["q1.0", "q1.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 2]},
    "raw_answers": {"answer": ["dog", "puppy", "cat"], "count": [5, 1, 2]},
    "num_answers": 8,
    "input_ids": [1, 2, 3],
}


def test_a_row_and_its_record_form_give_the_same_question():
    question = question_from_row(ROW)
    assert question == Question(
        "q1",
        "name a pet",
        (Cluster("q1.0", ("dog", "puppy"), 6), Cluster("q1.1", ("cat",), 2)),
        "Name a pet.",
        "crowd",
        {"dog": 5, "puppy": 1, "cat": 2},
    )
    records = {
        **ROW,
        "clusters": [
            {"id": "q1.0", "answers": ["dog", "puppy"], "count": 6},
            {"id": "q1.1", "answers": ["cat"], "count": 2},
        ],
        "raw_answers": [{"answer": a, "count": c} for a, c in question.raw_answers.items()],
    }
    assert question_from_row(records) == question
    assert question_from_row(question) is question


def test_optional_fields_default_and_none_clusters_mean_none():
    question = question_from_row({"id": "q2", "question": "name a fruit", "clusters": None})
    assert question.clusters == () and question.question_original == "name a fruit" and question.source == ""
    assert question.raw_answers == {}


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"id": ""}, DataFormatError, r"a row needs a non-empty string 'id', got ''"),
        ({"id": 3}, DataFormatError, r"a row needs a non-empty string 'id', got 3"),
        ({"question": None}, DataFormatError, r"question 'q1': a row needs a string 'question', got NoneType"),
        ({"source": 5}, DataFormatError, r"question 'q1': 'question_original' and 'source' must be strings"),
        (
            {"clusters": {"id": ["a"], "answers": [["x"]], "count": [1.5]}},
            DataFormatError,
            r"question 'q1': cluster 0 count must be a non-negative integer, got 1\.5",
        ),
        (
            {"raw_answers": {"answer": ["x"], "count": [0.5]}},
            DataFormatError,
            r"question 'q1': count of raw answer 'x' must be a non-negative integer",
        ),
    ],
)
def test_a_bad_row_is_named(change, error, message):
    with pytest.raises(error, match=message):
        question_from_row({**ROW, **change})


def test_a_row_that_is_not_a_mapping_is_a_type_error():
    with pytest.raises(TypeError, match="a row must be a mapping .*got list"):
        question_from_row(["q1", "name a pet"])  # type: ignore[arg-type]


def test_raw_answer_counts_takes_real_counts_unless_whole():
    np = pytest.importorskip("numpy")
    assert raw_answer_counts(None) is None
    assert raw_answer_counts({"answer": np.array(["a", "b"]), "count": np.array([1.5, 2])}) == {"a": 1.5, "b": 2.0}
    assert raw_answer_counts({"a": np.float32(0.25)}) == {"a": 0.25}
    with pytest.raises(DataFormatError, match="count of raw answer 'a' must be a non-negative integer"):
        raw_answer_counts({"a": 1.5}, "q1", whole=True)


@pytest.mark.parametrize(
    "value, message",
    [
        ({"answer": ["a", "b"], "count": [1]}, r"raw answers \{.*\} need two lists of the same length"),
        ({"answer": ["a"], "count": 1}, r"raw answers \{.*\} need two lists of the same length"),
        ({"a": -1}, r"count of raw answer 'a' must be a non-negative number, got -1"),
        ({"a": float("nan")}, r"count of raw answer 'a' must be a non-negative number, got nan"),
        ({"a": True}, r"count of raw answer 'a' must be a non-negative number, got True"),
        ({1: 2}, r"raw answers must be strings, found 1; accepted forms:"),
        ([{"answer": "a", "count": 1}, {"answer": "a", "count": 2}], r"raw answer 'a' is given twice"),
        ("dog", r"raw answers must be .*; got str"),
        ([{"answer": "a"}], r"raw answers must be .*; got a list of dict"),
    ],
)
def test_bad_raw_answers_name_the_question_and_the_accepted_forms(value, message):
    with pytest.raises(DataFormatError, match=rf"question 'q1': {message}"):
        raw_answer_counts(value, "q1")


def test_questions_from_rows_takes_a_list_a_mapping_or_questions(shared_data):
    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    assert questions_from_rows(targets) == list(targets.values())
    assert questions_from_rows(targets.values()) == list(targets.values())
    assert [q.id for q in questions_from_rows([ROW, targets["r1q1"]])] == ["q1", "r1q1"]
    assert questions_from_rows([]) == []


@pytest.mark.parametrize(
    "rows, message",
    [
        ("r1q1", r"questions must be a datasets\.Dataset .*; got str"),
        (b"r1q1", r"got bytes"),
        (42, r"got int"),
        ({"q1": ROW}, r"got a mapping whose values are not Questions"),
        ([ROW, 7], r"questions\[1\] must be a Question or a dataset row \(dict\), got int"),
    ],
)
def test_anything_else_is_a_type_error_naming_the_accepted_forms(rows, message):
    with pytest.raises(TypeError, match=message):
        questions_from_rows(rows)


def test_the_argument_is_named_as_the_caller_names_it():
    with pytest.raises(TypeError, match=r"^eval_questions must be"):
        questions_from_rows("x", what="eval_questions")


@pytest.mark.slow  # imports datasets
def test_a_dataset_keeps_only_the_question_columns_and_needs_the_three():
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list([{k: v for k, v in ROW.items() if k != "raw_answers"}])
    assert questions_from_rows(rows)[0].clusters == question_from_row(ROW).clusters
    with pytest.raises(TypeError, match=r"evals: the dataset has no column\(s\) clusters \(it has id, question"):
        questions_from_rows(rows.remove_columns("clusters"), what="evals")
