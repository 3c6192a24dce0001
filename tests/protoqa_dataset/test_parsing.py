"""Targets files as dataset rows: what a row holds, what a split promises (answers or none), the
errors naming file, line and question, and the questions of a config and split found and verified."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from protoqa_core.io.data import SourceError, SourceVerificationError
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Question
from protoqa_dataset.parsing import load_questions, question_to_row, questions_file, read_questions, read_rows


def record(qid: str, clusters: dict | None = None, raw: dict | None = None, **extra) -> str:
    line = {"metadata": {"id": qid, "source": "test"}, "question": {"original": f"Name {qid}?", "normalized": qid}}
    if clusters is not None or raw is not None:
        line["answers"] = {"raw": raw or {}, "clusters": clusters or {}}
    return json.dumps({**line, **extra})


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_row_keeps_file_order_and_counts_the_clusters_not_the_files_total(tmp_path):
    clusters = {"q1.1": {"count": 2, "answers": ["cat", "kitten"]}, "q1.0": {"count": 5, "answers": ["dog"]}}
    path = write(tmp_path / "t.jsonl", record("q1", clusters, {"dog": 5, "cat": 1, "kitten": 1}, num={"answers": 99}))
    (row,) = read_rows(path)
    assert row == {
        "id": "q1",
        "question": "q1",
        "question_original": "Name q1?",
        "source": "test",
        "raw_answers": {"answer": ["dog", "cat", "kitten"], "count": [5, 1, 1]},
        "clusters": {"id": ["q1.1", "q1.0"], "answers": [["cat", "kitten"], ["dog"]], "count": [2, 5]},
        "num_answers": 7,
    }


def test_an_answered_split_needs_clusters_on_every_question(tmp_path):
    good = record("q1", {"q1.0": {"count": 3, "answers": ["a"]}})
    path = write(tmp_path / "dev.jsonl", good, "", "   ", record("q2", raw={"a": 1}))
    with pytest.raises(DataFormatError) as error:
        read_rows(path)
    message = str(error.value)
    assert str(path) in message and "line 4, question 'q2'" in message  # blank lines still count
    assert "no answer clusters (answers.clusters)" in message


@pytest.mark.parametrize(
    "answers", [{"clusters": {"q2.0": {"count": 1, "answers": ["a"]}}}, {"raw": {"a": 1}}], ids=["clusters", "raw"]
)
def test_an_unanswered_split_refuses_any_answer(tmp_path, answers):
    line = json.loads(record("q2"))
    line["answers"] = {"raw": {}, "clusters": {}, **answers}
    path = write(tmp_path / "test.jsonl", record("q1"), json.dumps(line))
    with pytest.raises(DataFormatError, match=r"line 2, question 'q2': has answers, but this file is expected"):
        read_rows(path, has_answers=False)
    assert [row["clusters"] for row in read_rows(write(tmp_path / "ok.jsonl", record("q1")), has_answers=False)] == [
        {"id": [], "answers": [], "count": []}
    ]


def test_the_readers_errors_name_file_and_line(tmp_path):
    path = write(tmp_path / "t.jsonl", record("q1", {"q1.0": {"count": 1, "answers": ["a"]}}), "{not json")
    with pytest.raises(DataFormatError, match=r"t\.jsonl, line 2: malformed JSON"):
        read_rows(path)


def test_the_shared_splits_read_as_rows(shared):
    assert len(read_rows(shared / "cfc" / "dev.targets.jsonl")) == 54
    test_rows = read_rows(shared / "protoqa" / "test.questions.jsonl", has_answers=False)
    assert len(test_rows) == 102 and all(row["num_answers"] == 0 for row in test_rows)
    with pytest.raises(DataFormatError, match="has answers"):
        read_rows(shared / "cfc" / "test.targets.jsonl", has_answers=False)


def test_questions_of_a_config_come_with_their_absolute_origin(shared, monkeypatch):
    questions, origin = load_questions("cfc", "validation", str(shared))
    assert len(questions) == 54 and questions[0].id == "r1q1"
    assert origin == str((shared / "cfc" / "dev.targets.jsonl").resolve())
    monkeypatch.chdir(shared.parent)  # a relative data folder still gives an absolute origin
    path, origin = questions_file("cfc", "test", shared.name)
    assert not path.is_absolute() and origin == str((shared / "cfc" / "test.targets.jsonl").resolve())


def test_a_local_file_that_is_not_upstreams_is_refused_unless_unverified(shared, tmp_path):
    (tmp_path / "cfc").mkdir()
    copy = shutil.copyfile(shared / "cfc" / "dev.targets.jsonl", tmp_path / "cfc" / "dev.targets.jsonl")
    lines = copy.read_text(encoding="utf-8").splitlines()
    write(copy, *lines[:10])
    with pytest.raises(SourceVerificationError):
        load_questions("cfc", "validation", str(tmp_path))
    questions, _ = load_questions("cfc", "validation", str(tmp_path), verify=False)
    assert len(questions) == 10


def test_questions_are_checked_as_the_split_promises(tmp_path):
    answered = write(tmp_path / "answered.jsonl", record("q1", {"q1.0": {"count": 1, "answers": ["a"]}}))
    assert [q.id for q in read_questions(answered, "cfc", "test")] == ["q1"]
    with pytest.raises(DataFormatError, match="has answers"):
        read_questions(answered, "protoqa", "test")
    with pytest.raises(SourceError, match="config 'cfc' has no split 'train'; choose one of validation, test"):
        load_questions("cfc", "train", str(tmp_path))


def test_question_to_row_of_a_question_without_answers():
    row = question_to_row(Question("t1", "name a fruit", ()))
    assert row["clusters"] == {"id": [], "answers": [], "count": []} and row["num_answers"] == 0
    assert row["raw_answers"] == {"answer": [], "count": []}


def test_unicode_line_breaks_inside_a_record_do_not_shift_line_numbers(tmp_path):
    # JSON allows U+2028, U+0085 and form feeds unescaped in strings; only "\n" ends a record.
    line = json.loads(record("q1", {"q1.0": {"count": 1, "answers": ["a"]}}))
    line["question"]["normalized"] = "name a\u2028pet\x85or\x0ctwo"
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n" + record("q2", raw={"a": 1}) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"line 2, question 'q2': no answer clusters"):
        read_rows(path)
    # A byte-order mark and Windows line ends read as plain lines.
    path.write_bytes(("\ufeff" + json.dumps(line, ensure_ascii=False) + "\r\n").encode("utf-8"))
    assert [row["question"] for row in read_rows(path)] == ["name a\u2028pet\x85or\x0ctwo"]


def test_a_gzip_file_or_a_carriage_return_between_fields_is_numbered_as_the_targets_reader_reads_it(tmp_path):
    good = record("q1", {"q1.0": {"count": 3, "answers": ["a"]}})
    path = tmp_path / "dev.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join([good, "", record("q2", raw={"a": 1})]) + "\n").encode("utf-8")))
    with pytest.raises(DataFormatError, match=r"dev\.jsonl\.gz, line 3, question 'q2': no answer clusters"):
        read_rows(path)
    # JSON allows a carriage return between fields; only "\n" ends a record.
    path = tmp_path / "dev.jsonl"
    path.write_bytes(
        ("\n".join([good.replace(', "question"', ',\r"question"'), "", record("q2", raw={"a": 1})]) + "\n").encode()
    )
    with pytest.raises(DataFormatError, match=r"line 3, question 'q2': no answer clusters"):
        read_rows(path)
