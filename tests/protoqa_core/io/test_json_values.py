"""A file's JSON values: lines decoded strictly, JSON parsed strictly, and large predictions read a
piece at a time giving what reading them whole gives, with the same checks.

The thresholds (a long JSONL line, a large document) are lowered here so that small files
take the incremental path; each case is read both ways and compared.
"""

from __future__ import annotations

import gzip
import io
import json

import pytest

from protoqa_core.io import json_values
from protoqa_core.io import predictions as predictions_module
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.json_values import (
    MalformedJSONError,
    decode_line,
    iter_text_lines,
    member_line,
    parse_json,
    read_text,
)
from protoqa_core.io.predictions import read_prediction_lists, read_predictions


@pytest.fixture
def incremental(monkeypatch):
    """Every line and every document of more than a few bytes is parsed incrementally."""
    monkeypatch.setattr(json_values, "LARGE_LINE_BYTES", 8)
    monkeypatch.setattr(json_values, "WHOLE_DOCUMENT_BYTES", 8)


LISTS = {"q1": ["dog", "cat", "dog"], "q2": [], "q3": ["a fish", "é", "\U0001f600 emoji"]}
DOCUMENTS = {
    "plain": LISTS,
    "answers then ranked": {"model_answers": {"q1": ["b", "a", "a"]}, "model_ranked_answers": {"q1": ["a", "b"]}},
    "ranked then answers": {"model_ranked_answers": {"q1": ["a", "b"]}, "model_answers": {"q1": ["b"]}},
    "answers only": {"model_answers": LISTS},
    "with counts": {"model_answers_with_count": {"q1": [["a", 1], ["b", 3], ["c", 3]]}},
    "with counts and answers": {
        "model_answers_with_count": {"q1": [["a", 1], ["b", 3]]},
        "model_answers": {"q1": ["z"]},
        "metadata": {"model": "m"},
    },
    "record": {"question_id": "q9", "ranked_answers": ["x", "y"]},
}


@pytest.mark.parametrize("name", list(DOCUMENTS))
@pytest.mark.parametrize("layout", ["one line", "pretty", "gzip"])
def test_incremental_reading_equals_whole_reading(tmp_path, monkeypatch, name, layout):
    document = DOCUMENTS[name]
    text = json.dumps(document, indent=1 if layout == "pretty" else None, ensure_ascii=False)
    path = tmp_path / ("p.json.gz" if layout == "gzip" else "p.json")
    path.write_bytes(gzip.compress(text.encode()) if layout == "gzip" else text.encode())
    whole = read_predictions(path), read_prediction_lists(path)
    fields = [f for f in predictions_module.PREDICTION_FIELDS if f in document]
    whole_by_field = {f: read_prediction_lists(path, f) for f in fields}
    monkeypatch.setattr(json_values, "LARGE_LINE_BYTES", 8)
    monkeypatch.setattr(json_values, "WHOLE_DOCUMENT_BYTES", 8)
    assert (read_predictions(path), read_prediction_lists(path)) == whole
    assert {f: read_prediction_lists(path, f) for f in fields} == whole_by_field


def test_jsonl_with_long_lines_keeps_its_line_numbers(tmp_path, incremental):
    path = tmp_path / "p.jsonl"
    path.write_text('{"q1": ["dog"]}\n\n{"q2": ["cat"], "q3": []}\n{"q1": ["again"]}\n', encoding="utf-8")
    with pytest.raises(
        DataFormatError, match=r"p.jsonl, line 4, question 'q1': duplicate question id \(first on line 1\)"
    ):
        read_predictions(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"q1": ["\\ud800"]}', "lone surrogate"),
        ('{"q1": ["\\udc00 x"]}', "lone surrogate"),
        ('{"q1": ["dog"], "q1": ["cat"]}', "duplicate question id"),
        ('{"model_answers": {"q1": []}, "model_answers": {"q1": []}}', "duplicate key 'model_answers'"),
        ('{"q1": ["dog", 3]}', "question 'q1': answers must contain only strings"),
        ('{"q1": "dog"}', "question 'q1': answers must be a list, got str"),
        ('{"model_answers": {"q1": []}, "q2": ["x"]}', "question 'model_answers': answers must be a list, got dict"),
        ('{"metadata": {"m": 1}}', "question 'metadata': answers must be a list, got dict"),
        ('{"model_answers": {"q1": []}}', "no field 'nope'"),
        ('{"q1": ["dog"', "malformed JSON"),
        ('{"q1": [NaN]}', "malformed JSON"),
        ('["dog"]', "expected a JSON object, got list"),
        ('{"q1": ["dog"]} {"q2": []}', "malformed JSON"),
    ],
)
def test_incremental_reading_refuses_what_whole_reading_refuses(tmp_path, incremental, text, message):
    path = tmp_path / "p.json"
    path.write_text(text + "\n\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=message):
        read_predictions(path, "nope" if "nope" in message else None)


def test_surrogate_pairs_and_escaped_backslashes_are_kept(tmp_path, incremental):
    path = tmp_path / "p.json"
    path.write_text('{"q1": ["\\ud83d\\ude00", "\\\\ud800", "\\\\\\\\udc00"]}', encoding="utf-8")
    assert read_predictions(path) == {"q1": ["\U0001f600", "\\ud800", "\\\\udc00"]}


@pytest.mark.parametrize("small", [True, False])
def test_the_answers_cap_names_the_file_and_question(tmp_path, monkeypatch, small):
    if not small:
        monkeypatch.setattr(json_values, "LARGE_LINE_BYTES", 8)
        monkeypatch.setattr(json_values, "WHOLE_DOCUMENT_BYTES", 8)
    path = tmp_path / "p.jsonl"
    path.write_text('{"q1": ["a", "b", "c"]}\n{"q2": ["a", "b", "c", "d"]}\n', encoding="utf-8")
    assert len(read_predictions(path, max_answers=4)) == 2
    with pytest.raises(DataFormatError, match=r"p.jsonl, line 2, question 'q2': more than 3 answers for one question"):
        read_predictions(path, max_answers=3)
    counted = tmp_path / "c.json"
    counted.write_text(json.dumps({"model_answers_with_count": {"q1": [["a", 1]] * 5}}), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"question 'q1': more than 4 answers"):
        read_predictions(counted, max_answers=4)


@pytest.mark.parametrize(
    "data, message",
    [
        ("dog".encode("utf-16"), "the file is UTF-16-encoded; save it as UTF-8"),
        ("dog".encode("utf-32"), "the file is UTF-32-encoded; save it as UTF-8"),
        ("dog".encode("utf-16-le"), r"the file holds NUL bytes \(UTF-16 or UTF-32 without a byte order mark\?\)"),
        (b"dog\n\xe9t\xe9\n", r"not valid UTF-8 \(byte 0xe9\)"),
    ],
)
def test_other_encodings_are_refused_naming_the_file(tmp_path, data, message):
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    with pytest.raises(DataFormatError, match=rf"t\.txt(, line \d)?: {message}") as refused:
        read_text(path)
    assert refused.value.line == (2 if b"\n\xe9" in data else None)


def test_decode_line_drops_a_byte_order_mark_only_on_the_first_line():
    assert decode_line(b"\xef\xbb\xbfdog", "f", 1, first=True) == "dog"
    assert decode_line(b"\xef\xbb\xbfdog", "f", 2, first=False) == "\ufeffdog"
    with pytest.raises(DataFormatError, match=r"f, line 7: not valid UTF-8 \(byte 0xff\)"):
        decode_line(b"ok \xff", "f", 7, first=False)


def test_lines_are_numbered_from_one_and_spooled_decompressed(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(b"\xef\xbb\xbfa\n\nb\n"))
    spool = io.BytesIO()
    assert list(iter_text_lines(path, spool)) == [(1, "a\n"), (2, "\n"), (3, "b\n")]
    assert spool.getvalue() == b"\xef\xbb\xbfa\n\nb\n"


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"q1": ["dog"]', r"p\.json, line 1: malformed JSON"),
        ('{"q1": [NaN]}', r"p\.json: unsupported JSON value \(NaN is not a number JSON allows\)"),
        ('{"q1": [-Infinity]}', r"unsupported JSON value \(-Infinity is not a number JSON allows\)"),
        ('{"n": ' + "9" * 5000 + "}", r"unsupported JSON value"),
        ('{"n": [1e999]}', r"p\.json: unsupported JSON value \(number 1e999 is beyond a float's range\)"),
        ("[" * 100_000 + "]" * 100_000, r"p\.json: JSON nested too deeply"),
        ('{"a": 1,\n "b": 2,\n "a": 3}', r"p\.json, line 3: duplicate key 'a' in a JSON object"),
        ('{"q1": ["\\ud800"]}', r"p\.json: string .* holds a lone surrogate escape"),
    ],
)
def test_parse_json_refuses_what_json_allows_loosely(text, message):
    with pytest.raises(DataFormatError, match=message):
        parse_json(text, "p.json")


def test_malformed_json_is_its_own_kind_and_a_jsonl_line_keeps_its_number():
    with pytest.raises(MalformedJSONError, match=r"p\.jsonl, line 9: malformed JSON"):
        parse_json('{"a": 1,\n', "p.jsonl", 9)
    with pytest.raises(DataFormatError) as refused:
        parse_json('{"a": 1, "a": 2}', "p.jsonl", 9)
    assert not isinstance(refused.value, MalformedJSONError) and refused.value.line == 9


def test_parse_json_keeps_valid_escapes():
    assert parse_json('{"s": ["\\ud83d\\ude00", "\\\\ud800"]}') == {"s": ["\U0001f600", "\\ud800"]}


def test_a_member_s_line_is_found_however_its_name_is_written():
    text = '{\n "q1": [],\n "caf\u00e9": [],\n "caf\\u00e9": []\n}'
    assert member_line(text, "caf\u00e9") == 3 and member_line(text, "caf\u00e9", occurrence=2) == 4
    assert member_line(text, "q1", occurrence=2) == 2 and member_line(text, "q9") is None
    assert member_line('{"a": {"q1": []},\n"b": {"q1": []}}', "q1", after="b") == 2
    with pytest.raises(DataFormatError, match="p.json, line 3: duplicate key 'caf\u00e9'"):
        parse_json('{\n "caf\u00e9": [],\n "caf\u00e9": []\n}', "p.json")
