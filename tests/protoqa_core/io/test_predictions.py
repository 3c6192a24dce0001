"""Prediction files: every accepted layout read to ranked lists, each error naming file, line and question."""

from __future__ import annotations

import io
import json
import os

import pytest

from protoqa_core.io import json_values
from protoqa_core.io.files import DataFormatError, ProtoQAWarning
from protoqa_core.io.predictions import (
    duplicate_id_error,
    prediction_items,
    prediction_line,
    ranked_answers,
    read_prediction_document,
    read_prediction_lists,
    read_predictions,
    stream_items,
    too_many_answers_error,
)


@pytest.mark.parametrize(
    "name, content",
    [
        ("jsonl-lines", '{"q1": ["dog"]}\n{"q2": ["tea", ""]}\n'),
        ("multi-id line", '{"q1": ["dog"], "q2": ["tea", ""]}\n'),
        (
            "question_id lines",
            '{"question_id": "q1", "ranked_answers": ["dog"]}\n{"question_id": "q2", "ranked_answers": ["tea", ""]}\n',
        ),
        ("json object", json.dumps({"q1": ["dog"], "q2": ["tea", ""]})),
        ("model_answers", json.dumps({"model_answers": {"q1": ["dog"], "q2": ["tea", ""]}})),
        ("with counts", json.dumps({"model_answers_with_count": {"q1": [["dog", 3]], "q2": [["", 1], ["tea", 2]]}})),
    ],
)
def test_read_predictions_formats(tmp_path, name, content):
    path = tmp_path / "p.json"
    path.write_text(content)
    assert read_predictions(path) == {"q1": ["dog"], "q2": ["tea", ""]}


def test_model_ranked_answers_preferred_and_field_selectable(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"model_answers": {"q1": ["b", "a", "a"]}, "model_ranked_answers": {"q1": ["a", "b"]}}))
    assert read_predictions(path) == {"q1": ["a", "b"]}
    assert read_predictions(path, field="model_answers") == {"q1": ["b", "a", "a"]}
    with pytest.raises(DataFormatError, match="no field 'nope'"):
        read_predictions(path, field="nope")


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"q1": ["dog"]}\n{"q2": ["tea"\n', r"p\.jsonl, line 2: malformed JSON"),
        ('{"q1": "dog"}\n', r"line 1, question 'q1': answers must be a list"),
        ('{"q1": ["dog", 3]}\n', r"question 'q1': answers must contain only strings, found 3"),
        ('{"q1": ["dog"]}\n{"q1": ["cat"]}\n', r"line 2, question 'q1': duplicate question id \(first on line 1\)"),
        ('["dog"]\n["cat"]\n', r"line 1: expected a JSON object"),
    ],
)
def test_bad_predictions_name_file_line_and_id(tmp_path, content, message):
    path = tmp_path / "p.jsonl"
    path.write_text(content)
    with pytest.raises(DataFormatError, match=message):
        read_predictions(path)


def test_empty_predictions_file_warns_naming_it(tmp_path):

    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.warns(ProtoQAWarning, match="empty.jsonl: the predictions file holds no predictions"):
        assert read_predictions(empty) == {}


def test_real_predictions_files_read_whole_and_as_lists(shared_data):
    ranked = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    assert len(ranked) == 52 and all(isinstance(a, str) for answers in ranked.values() for a in answers)
    human = shared_data / "cfc" / "dev.predictions.human.json"
    assert read_prediction_lists(human) == read_prediction_document(human).lists()


def test_counted_answers_rank_by_count_ties_in_file_order_and_lists_stay_raw(tmp_path):
    path = tmp_path / "c.json"
    pairs = [["a", 1], ["b", 3], ["c", 3], ["d", 0]]
    path.write_text(json.dumps({"model_answers_with_count": {"q1": pairs}}))
    assert read_predictions(path) == {"q1": ["b", "c", "a", "d"]}
    assert read_prediction_lists(path) == {"q1": pairs}


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([["a", 1], ["b"]], r"question 'q1': expected \[answer, count\], found \['b'\]"),
        ([["a", 1], [2, 3]], r"question 'q1': expected \[answer, count\], found \[2, 3\]"),
        ([["a", -1]], r"question 'q1': count of 'a' must be a non-negative integer, got -1"),
        ([["a", 1.5]], r"question 'q1': count of 'a' must be a non-negative integer, got 1.5"),
    ],
)
def test_bad_counted_answers_name_the_question(tmp_path, pairs, message):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model_answers_with_count": {"q1": pairs}}))
    with pytest.raises(DataFormatError, match=rf"c\.json, line 1, {message}"):
        read_predictions(path)


def test_a_record_line_needs_a_string_id(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"question_id": "q1", "ranked_answers": ["a"]}\n{"question_id": 7, "ranked_answers": ["b"]}\n')
    with pytest.raises(DataFormatError, match=r"p\.jsonl, line 2: question id must be a string, got 7"):
        read_predictions(path)


def test_prediction_items_stream_in_file_order_with_their_lines(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"q2": ["b"]}\n\n{"q1": ["a"], "q3": []}\n')
    assert list(prediction_items(path, None)) == [
        (None, "q2", ["b"], 1),
        (None, "q1", ["a"], 3),
        (None, "q3", [], 3),
    ]
    with pytest.raises(DataFormatError, match=r"p\.jsonl, line 1, question 'q2': more than 0 answers"):
        list(prediction_items(path, None, max_answers=0))


def test_stream_items_gives_every_field_and_the_other_members():
    document = {"model_answers": {"q1": ["b", "a"]}, "metadata": {"model": "m"}, "model_ranked_answers": {"q1": ["a"]}}
    items = list(stream_items(io.BytesIO(json.dumps(document).encode()), "p.json"))
    assert sorted(items, key=str) == sorted(
        [
            ("model_answers", "q1", ["b", "a"], 1),
            ("model_ranked_answers", "q1", ["a"], 1),
            ("metadata", None, {"model": "m"}, 1),
        ],
        key=str,
    )


def test_the_document_is_read_once_and_answers_like_the_readers(tmp_path):
    path = tmp_path / "a.json"
    document = {
        "model_answers_with_count": {"q1": [["x", 1], ["y", 2]]},
        "model_answers": {"q1": ["x", "y", "y"]},
        "generation": {"temperature": 1.0},
    }
    path.write_text(json.dumps(document))
    read = read_prediction_document(path)
    assert read.fields == ("model_answers_with_count", "model_answers")
    assert read.members == {"generation": {"temperature": 1.0}}
    for field in (None, *read.fields):
        assert read.ranked(field) == read_predictions(path, field)
        assert read.lists(field) == read_prediction_lists(path, field)
    with pytest.raises(
        DataFormatError, match=r"a\.json: no field 'nope'; the file has \['generation', 'model_answers'"
    ):
        read.ranked("nope")


def test_a_plain_document_has_no_fields(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"q1": ["a"]}\n{"q2": []}\n')
    read = read_prediction_document(path)
    assert read.fields == () and read.members == {} and read.ranked() == {"q1": ["a"], "q2": []}


def test_the_document_refuses_a_repeated_id_within_a_field(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"q1": ["a"]}\n{"q2": []}\n{"q1": ["b"]}\n')
    with pytest.raises(
        DataFormatError, match=r"p\.jsonl, line 3, question 'q1': duplicate question id \(first on line 1\)"
    ):
        read_prediction_document(path)


def test_the_shared_errors_name_file_line_and_question():
    assert (
        str(duplicate_id_error("p.json", 5, "q1", 2))
        == "p.json, line 5, question 'q1': duplicate question id (first on line 2)"
    )
    assert str(duplicate_id_error("p.json", None, "q1", None)) == "p.json, question 'q1': duplicate question id"
    message = str(too_many_answers_error("p.json", 3, "q9", 1000))
    assert message.startswith("p.json, line 3, question 'q9': more than 1,000 answers") and "--max-answers" in message


def test_ranked_answers_keeps_plain_lists_and_checks_their_strings():
    assert ranked_answers(["b", "", "b"], "p.json", 1, "q1") == ["b", "", "b"]
    assert ranked_answers([], "p.json", 1, "q1") == []
    assert ranked_answers([["a", 1], ["b", 2]], "p.json", 1, "q1") == ["b", "a"]
    with pytest.raises(DataFormatError, match=r"p\.json, line 1, question 'q1': answers must contain only strings"):
        ranked_answers(["a", ["b", 2]], "p.json", 1, "q1")


# A line longer than LARGE_LINE_BYTES is parsed incrementally. Whether the file is JSONL or one
# document over several lines is told by where the first value ends, never by the line's length.

LONG_LIST = ["an answer of some length"] * 48_000  # a first line of about 1.3 MB, over the 1 MB of a long line


def test_a_document_whose_first_line_is_over_a_megabyte_reads_as_a_document(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"q1": ' + json.dumps(LONG_LIST) + ',\n "q2": ["b"]\n}\n')
    assert path.read_bytes().index(b"\n") > json_values.LARGE_LINE_BYTES
    assert read_predictions(path) == {"q1": LONG_LIST, "q2": ["b"]}


def test_a_jsonl_file_whose_first_line_is_over_a_megabyte_reads_as_lines(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"q1": LONG_LIST}) + "\n\n" + '{"q2": ["b"]}\n')
    items = [(qid, line) for _, qid, _, line in prediction_items(path, None)]
    assert items == [("q1", 1), ("q2", 3)]


@pytest.fixture
def long_lines(monkeypatch):
    """Every line of more than a few bytes is a long line, parsed incrementally."""
    monkeypatch.setattr(json_values, "LARGE_LINE_BYTES", 8)


@pytest.mark.parametrize(
    "text",
    [
        '{"q1": ["dog", "cat"],\n"q2": ["b"]}',
        '{"model_answers": {"q1": ["dog", "cat"]},\n "model_ranked_answers": {"q2": ["b"], "q1": ["a"]}}\n\n',
        '\n\n{"q1": ["dog", "cat"], "q2":\n["b"]\n}',
        '\ufeff{"q1": ["dog", "cat"],\n"q2": ["b"]}\n',
        '{"q1": ["\\ud83d\\ude00 dog", "cat"],\n"q2": ["b"]}',
    ],
    ids=["plain", "fields", "blank lines", "byte order mark", "surrogate pair"],
)
def test_a_document_with_a_long_first_line_reads_as_it_reads_whole(tmp_path, monkeypatch, text):
    path = tmp_path / "p.json"
    path.write_text(text, encoding="utf-8")
    whole = read_predictions(path), read_prediction_lists(path, "model_answers" if "model_" in text else None)
    monkeypatch.setattr(json_values, "LARGE_LINE_BYTES", 8)
    assert (read_predictions(path), read_prediction_lists(path, "model_answers" if "model_" in text else None)) == whole


def test_jsonl_lines_after_a_long_first_line_are_read_one_at_a_time(tmp_path, long_lines):
    path = tmp_path / "p.jsonl"
    path.write_text('{"q1": ["dog", "cat"]}\n{"q2": ["b"]}\n\n{"q3": []}\n')
    assert [(qid, line) for _, qid, _, line in prediction_items(path, None)] == [("q1", 1), ("q2", 2), ("q3", 4)]


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"q1": ["dog", "cat"],\n"q2": ["b"', r"^\S*p\.json: malformed JSON"),  # cut short: no line 1
        (
            '{"q1": ["dog", "cat"],\n"q1": ["b"]}',
            r"^\S*p\.json, question 'q1': duplicate question id \(first on line 1\)",  # where the first one is
        ),
        ('{"q1": ["dog", "cat"]}\n{"q2": ["b"]', r"^\S*p\.json, line 2: malformed JSON"),
        ('{"q1": ["dog", "cat"]} {"q2": []}\n', r"^\S*p\.json, line 1: malformed JSON"),
        ('{"q1": ["dog", "cat"]}\n{"q1": ["b"]}', r"p\.json, line 2, question 'q1': duplicate question id"),
    ],
    ids=["document cut short", "document duplicate", "jsonl line 2", "two values on line 1", "jsonl duplicate"],
)
def test_errors_after_a_long_first_line_name_the_line_only_for_jsonl(tmp_path, long_lines, text, message):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=message):
        read_predictions(path)


def test_each_line_after_a_long_first_line_is_parsed_once(tmp_path, long_lines, monkeypatch):
    parsed: list[str] = []
    real_parse = json_values.parse_json
    real_events = json_values.json_events

    def parse_json(text, *args):
        parsed.append(text.strip())
        return real_parse(text, *args)

    def json_events(stream, path, line):
        parsed.append(f"stream from line {line}")
        return real_events(stream, path, line)

    monkeypatch.setattr(json_values, "parse_json", parse_json)
    monkeypatch.setattr(json_values, "json_events", json_events)
    path = tmp_path / "p.jsonl"
    path.write_text('{"q1": ["dog", "cat"]}\n{"q":[]}\n')  # a second line of 8 bytes: not a long line
    assert read_predictions(path) == {"q1": ["dog", "cat"], "q": []}
    assert parsed == ["stream from line 1", '{"q":[]}']


@pytest.mark.parametrize(
    "text, lines",
    # In a document, an answer list read before the value went past the first line keeps that line.
    [('{"q1": ["dog", "cat"],\n"q2": ["b"]}\n', [1, None]), ('{"q1": ["dog", "cat"]}\n{"q2": ["b"]}\n', [1, 2])],
    ids=["document", "jsonl"],
)
def test_a_long_first_line_of_a_gzip_file_is_told_the_same_way(tmp_path, long_lines, text, lines):
    import gzip

    path = tmp_path / "p.json.gz"
    path.write_bytes(gzip.compress(text.encode()))
    items = list(prediction_items(path, None))
    assert [(qid, value, line) for _, qid, value, line in items] == [
        ("q1", ["dog", "cat"], lines[0]),
        ("q2", ["b"], lines[1]),
    ]


def test_prediction_line_finds_an_id_in_its_field_of_a_document_over_several_lines(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(
        '{"model_ranked_answers": {"q1": ["a"], "caf\u00e9": []},\n'
        ' "model_answers": {\n  "q1": ["a"],\n  "caf\u00e9": []}}\n',
        encoding="utf-8",
    )
    assert prediction_line(path, "caf\u00e9") == 1 and prediction_line(path, "caf\u00e9", "model_answers") == 4
    assert prediction_line(path, "q9") is None and prediction_line(tmp_path / "none.json", "q1") is None
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert prediction_line(fifo, "q1") is None  # not opened again: that would wait for a writer
