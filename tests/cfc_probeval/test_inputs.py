"""Reading targets and samples: formats, counts, and errors naming file, line and question id."""

from __future__ import annotations

import json
import warnings

import pytest

from cfc_probeval.errors import ProbEvalWarning
from cfc_probeval.inputs import (
    answer_counts_from_clusters,
    drop_unknown_ids,
    read_samples,
    read_targets,
    sample_counts,
    targets_from_question,
    targets_from_reference,
)
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Cluster, Question


def test_sample_counts_from_lists_pairs_and_mappings():
    assert sample_counts(["b", "a", "b"]) == {"b": 2, "a": 1}
    assert list(sample_counts(["b", "a", "b"])) == ["b", "a"]  # first appearance order
    assert sample_counts([["b", 2], ["a", 1], ["b", 1]]) == {"b": 3, "a": 1}
    assert sample_counts({"x": 4}) == {"x": 4}
    assert sample_counts([]) == {}


@pytest.mark.parametrize(
    "bad, message",
    [
        (["ok", 3], "samples must be strings, found 3"),
        ("night", "must be a list of strings"),
        ([["a", -1]], "non-negative integer"),
        ([["a", 1, 2]], r"expected \[answer, count\]"),
    ],
)
def test_sample_counts_errors_name_the_question(bad, message):
    with pytest.raises(DataFormatError, match=message) as info:
        sample_counts(bad, question_id="r1q1")
    assert "question 'r1q1'" in str(info.value)


def test_targets_use_raw_counts_of_cluster_strings_only():
    q = Question(
        "q1",
        "name a pet",
        (Cluster("q1.0", ("dog", "puppy"), 6), Cluster("q1.1", ("cat",), 4)),
        raw_answers={"dog": 5, "puppy": 1, "cat": 4, "broken socks": 1},
    )
    truth = targets_from_question(q)
    assert truth.answer_counts == {"dog": 5.0, "puppy": 1.0, "cat": 4.0}
    assert truth.total == 10


def test_answer_counts_share_a_cluster_count_without_raw_counts():
    counts = answer_counts_from_clusters([Cluster("c", ("a", "b", "c"), 5)], {"a": 2})
    assert counts == {"a": 2.0, "b": 1.5, "c": 1.5}


def test_targets_from_both_reference_forms():
    stored = targets_from_reference({"id": ["x.1", "x.2"], "answers": [["dog"], ["cat"]], "count": [6, 4]}, "x")
    records = targets_from_reference([{"answers": ["dog"], "count": 6}, {"answers": ["cat"], "count": 4}], "x")
    assert [c.id for c in stored.clusters] == ["x.1", "x.2"]
    assert [c.id for c in records.clusters] == ["x.0", "x.1"]
    assert stored.answer_counts == records.answer_counts == {"dog": 6.0, "cat": 4.0}
    with_raw = targets_from_reference({"answers": [["dog", "puppy"]], "count": [6]}, "x", {"dog": 5, "puppy": 1})
    assert with_raw.answer_counts == {"dog": 5.0, "puppy": 1.0}


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_read_samples_jsonl_object_and_model_answers_files(tmp_path):
    jsonl = write(tmp_path / "s.jsonl", '{"q1": ["a", "a", "b"]}\n{"q2": []}\n')
    assert read_samples(jsonl) == {"q1": {"a": 2, "b": 1}, "q2": {}}
    obj = write(tmp_path / "s.json", json.dumps({"q1": ["a"], "q2": ["b", "b"]}))
    assert read_samples(obj) == {"q1": {"a": 1}, "q2": {"b": 2}}
    full = write(
        tmp_path / "m.json",
        json.dumps(
            {
                "model_answers": {"q1": ["a", "a", "b"]},
                "model_ranked_answers": {"q1": ["a", "b"]},
                "model_answers_with_count": {"q1": [["a", 2], ["b", 1]]},
            }
        ),
    )
    assert read_samples(full) == {"q1": {"a": 2, "b": 1}}  # model_answers, not the ranked list
    assert read_samples(full, "model_answers_with_count") == {"q1": {"a": 2, "b": 1}}
    ranked = write(tmp_path / "r.json", json.dumps({"model_ranked_answers": {"q1": ["a", "b"]}}))
    with pytest.warns(ProbEvalWarning, match="one sample per answer"):
        assert read_samples(ranked) == {"q1": {"a": 1, "b": 1}}


def test_read_samples_errors_name_file_line_and_id(tmp_path):
    jsonl = write(tmp_path / "s.jsonl", '{"q1": ["a"]}\n{"q2": ["b", 7]}\n')
    with pytest.raises(DataFormatError) as info:
        read_samples(jsonl)
    assert str(info.value).startswith(f"{jsonl}, line 2, question 'q2': samples must be strings, found 7")
    pretty = write(tmp_path / "m.json", json.dumps({"model_answers": {"q1": ["a"], "q2": [None]}}, indent=1))
    with pytest.raises(DataFormatError, match=r"m.json, line 6, question 'q2'"):
        read_samples(pretty)
    broken = write(tmp_path / "b.jsonl", '{"q1": ["a"]}\n{"q2": [\n')
    with pytest.raises(DataFormatError, match=r"b.jsonl, line 2: malformed JSON"):
        read_samples(broken)
    with pytest.raises(FileNotFoundError):
        read_samples(tmp_path / "missing.json")


def test_unknown_ids_are_an_error_naming_file_and_line_unless_ignored(tmp_path):
    jsonl = write(tmp_path / "s.jsonl", '{"q1": ["a"]}\n{"zz": ["b"]}\n')
    samples = read_samples(jsonl)
    with pytest.raises(DataFormatError, match=r"s.jsonl, line 2, question 'zz': predictions for 1 question id"):
        drop_unknown_ids(samples, {"q1"}, path=jsonl)
    with pytest.warns(ProbEvalWarning, match=r"ignored predictions for 1 question id\(s\) that are not in the targets"):
        assert drop_unknown_ids(samples, {"q1"}, path=jsonl, ignore_unknown=True) == {"q1": {"a": 1}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert drop_unknown_ids({"q1": {}}, {"q1"}) == {"q1": {}}
    several = write(tmp_path / "s.json", '{\n "q1": ["a"],\n "caf\u00e9": ["b"]\n}\n')
    with pytest.raises(DataFormatError, match="s.json, line 3, question 'caf\u00e9': predictions for 1 question id"):
        drop_unknown_ids(read_samples(several), {"q1"}, path=several)


def test_read_targets_on_cfc_dev(shared_data):
    truths = read_targets(shared_data / "cfc" / "dev.targets.jsonl")
    assert len(truths) == 54
    r1q1 = truths["r1q1"]
    assert sum(r1q1.answer_counts.values()) == r1q1.total == sum(c.count for c in r1q1.clusters)
    assert r1q1.answer_counts["evening"] == 41
