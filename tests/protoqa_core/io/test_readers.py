"""Readers: every accepted format and every error, named by file, line and question."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.predictions import read_predictions
from protoqa_core.io.readers import clusters_from_records, read_targets, read_targets_and_sha256
from tests.support.target_rows import target_line


def test_read_targets_real_files(shared_data):
    dev = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    assert len(dev) == 52
    r1q1 = dev["r1q1"]
    biggest = max(r1q1.clusters, key=lambda c: c.count)
    assert biggest.count == 35 and "age" in biggest.answers
    test = read_targets(shared_data / "protoqa" / "test.questions.jsonl")
    assert len(test) == 102 and all(not q.clusters for q in test.values())
    assert len(read_targets(shared_data / "cfc" / "dev.targets.jsonl")) == 54


@pytest.mark.parametrize(
    "line, message",
    [
        (target_line("q1", {"q1.0": {"count": -1, "answers": ["a"]}}), "count must be a non-negative integer"),
        (target_line("q1", {"q1.0": {"count": 2.5, "answers": ["a"]}}), "count must be a non-negative integer"),
        (target_line("q1", {"q1.0": {"count": 2, "answers": "a"}}), "answers must be a list of strings"),
        (target_line("q1", {"q1.0": {"answers": ["a"]}}), "needs 'count' and 'answers'"),
        (json.dumps({"question": {"normalized": "x"}}), "missing question id"),
        ("{not json", "malformed JSON"),
    ],
)
def test_bad_targets_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "t.jsonl"
    path.write_text(target_line("q0", {"q0.0": {"count": 1, "answers": ["x"]}}) + "\n" + line + "\n")
    with pytest.raises(DataFormatError, match=rf"t\.jsonl, line 2.*{message}"):
        read_targets(path)


def test_duplicate_target_ids(tmp_path):
    path = tmp_path / "t.jsonl"
    line = target_line("q0", {"q0.0": {"count": 1, "answers": ["x"]}})
    path.write_text(line + "\n" + line + "\n")
    with pytest.raises(DataFormatError, match="line 2, question 'q0': duplicate question id"):
        read_targets(path)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="targets file not found"):
        read_targets(tmp_path / "nope.jsonl")
    with pytest.raises(FileNotFoundError, match="predictions file not found"):
        read_predictions(tmp_path / "nope.jsonl")


def test_clusters_from_records_both_shapes_and_errors():
    stored = {"id": ["c0", "c1"], "answers": [["dog"], ["cat"]], "count": [6, 4]}
    records = [{"answers": ["dog"], "count": 6}, {"answers": ["cat"], "count": 4}]
    a, b = clusters_from_records(stored), clusters_from_records(records)
    assert [c.answers for c in a] == [c.answers for c in b] and [c.id for c in a] == ["c0", "c1"]
    with pytest.raises(DataFormatError, match="question 'q9': cluster 0 count must be a non-negative integer"):
        clusters_from_records([{"answers": ["x"], "count": -2}], "q9")
    with pytest.raises(DataFormatError, match="same length"):
        clusters_from_records({"answers": [["x"]], "count": [1, 2]})


def test_utf8_byte_order_mark_and_gzip_are_read(tmp_path):
    import gzip

    line = target_line("q0", {"q0.0": {"count": 2, "answers": ["x"]}})
    with_bom = tmp_path / "bom.jsonl"
    with_bom.write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\n")
    packed = tmp_path / "packed.jsonl.gz"
    packed.write_bytes(gzip.compress(line.encode() + b"\n"))
    assert read_targets(with_bom) == read_targets(packed)
    predictions = tmp_path / "p.json"
    predictions.write_bytes(b"\xef\xbb\xbf" + b'{"q0": ["x"]}')
    assert read_predictions(predictions) == {"q0": ["x"]}


def test_duplicate_keys_are_errors_with_their_line(tmp_path):
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text('{"q0": ["x"]}\n{"q1": ["a"], "q1": ["b"]}\n')
    with pytest.raises(DataFormatError, match=r"p.jsonl, line 2: duplicate key 'q1'"):
        read_predictions(jsonl)
    nested = tmp_path / "n.json"
    nested.write_text('{"model_answers": {"q0": ["x"]},\n "model_answers": {"q0": ["y"]}}')
    with pytest.raises(DataFormatError, match=r"n.json, line 2: duplicate key 'model_answers'"):
        read_predictions(nested)


def test_counts_are_bounded_and_strings_valid(tmp_path):
    from protoqa_core.io.files import MAX_COUNT

    ok = tmp_path / "ok.jsonl"
    ok.write_text(target_line("q0", {"q0.0": {"count": MAX_COUNT, "answers": ["x"]}}) + "\n")
    assert read_targets(ok)["q0"].total_count == MAX_COUNT
    big = tmp_path / "big.jsonl"
    big.write_text(target_line("q0", {"q0.0": {"count": MAX_COUNT + 1, "answers": ["x"]}}) + "\n")
    with pytest.raises(DataFormatError, match="line 1, question 'q0': cluster 'q0.0' count is too large"):
        read_targets(big)
    pair = tmp_path / "pair.json"
    pair.write_text('{"q0": ["\\ud83d\\ude00"]}')
    assert read_predictions(pair) == {"q0": ["\U0001f600"]}
    lone = tmp_path / "lone.json"
    lone.write_text('{"q0": ["\\udc00"]}')
    with pytest.raises(DataFormatError, match="lone.json, line 1: .*lone surrogate"):
        read_predictions(lone)


def test_targets_and_their_sha256_come_from_one_read_of_the_decompressed_bytes(tmp_path, shared_data):
    source = shared_data / "cfc" / "dev.targets.jsonl"
    packed = tmp_path / "dev.targets.jsonl.gz"
    packed.write_bytes(gzip.compress(source.read_bytes()))
    for path in (source, packed):
        targets, digest = read_targets_and_sha256(path)
        assert targets == read_targets(source)
        assert digest == hashlib.sha256(source.read_bytes()).hexdigest()


def test_a_block_every_line_carries_is_read_with_the_targets_and_checked_line_by_line(tmp_path):
    from protoqa_core.io.readers import ChecksumSpool, read_targets_and_block

    def line(qid, block):
        record = {"metadata": {"id": qid}, "question": {"normalized": "a"}}
        return json.dumps({**record, **({"made": block} if block is not None else {})}) + "\n"

    path = tmp_path / "t.jsonl"
    path.write_text(line("q1", {"by": "x"}) + "\n" + line("q2", {"by": "x"}))
    spool = ChecksumSpool()
    questions, block = read_targets_and_block(path, "made", spool=spool)
    assert list(questions) == ["q1", "q2"] and block == {"by": "x"}
    assert spool.hexdigest() == hashlib.sha256(path.read_bytes()).hexdigest()
    assert read_targets_and_block(path, "other") == (questions, None)
    for second, message in (({"by": "y"}, "line 3"), (None, "line 3")):
        path.write_text(line("q1", {"by": "x"}) + "\n" + line("q2", second))
        with pytest.raises(DataFormatError, match=f"{message}.*its made differs from the first line's"):
            read_targets_and_block(path, "made")
    path.write_text(line("q1", None) + line("q2", {"by": "x"}))
    with pytest.raises(DataFormatError, match="line 2"):
        read_targets_and_block(path, "made")
    path.write_text(line("q1", ["not", "an", "object"]))
    with pytest.raises(DataFormatError, match="made must be an object"):
        read_targets_and_block(path, "made")
