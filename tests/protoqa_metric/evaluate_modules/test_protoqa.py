"""The `protoqa` evaluate module: loading by name and by path, compute, add_batch, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lazy import lazy_import
from tests.support.metric_names import PAPER_KEYS

evaluate = lazy_import("evaluate")

import protoqa_metric  # noqa: E402
from protoqa_metric import evaluate_predictions, read_predictions, read_targets  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
REFS = [
    {"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]},
    {"id": ["r.0"], "answers": [["tea"]], "count": [3]},
]


pytestmark = pytest.mark.usefixtures("hub_offline")


def test_load_by_helper_path_from_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    metric = evaluate.load(protoqa_metric.evaluate_module_path(), "exact_match")
    out = metric.compute(predictions=[["cat", "dog"], ["coffee"]], references=REFS)
    assert out["max_answers@1"] == pytest.approx((4 / 6 + 0) / 2)
    assert out["max_answers@all"] == pytest.approx(0.5)
    assert out["signature"].startswith("sim:exact_match|")


def test_load_by_name_from_repository_root(monkeypatch):
    monkeypatch.chdir(REPO)
    metric = evaluate.load("protoqa", "wordnet")
    out = metric.compute(predictions=[["puppies"]], references=[REFS[0]])
    assert out["max_answers@1"] == 1.0
    assert "sim:wordnet" in out["signature"]


def test_module_path_names():
    assert Path(protoqa_metric.evaluate_module_path()).name == "protoqa.py"
    assert Path(protoqa_metric.evaluate_module_path()).is_file()


def test_records_form_and_keyword_arguments():
    metric = evaluate.load(protoqa_metric.evaluate_module_path())
    records = [[{"answers": ["dog", "puppy"], "count": 6}, {"answers": ["cat"], "count": 4}]]
    out = metric.compute(predictions=[["the", "cat"]], references=records, similarity="exact_match", metrics="paper")
    assert set(out) == {*PAPER_KEYS, "signature"}
    assert out["max_answers@3"] == pytest.approx(4 / 10)


def test_add_batch_equals_one_compute():
    metric = evaluate.load(protoqa_metric.evaluate_module_path(), "exact_match")
    metric.add_batch(predictions=[["cat", "dog"]], references=[REFS[0]])
    metric.add(predictions=["coffee", "tea"], references=REFS[1])
    batched = metric.compute()
    once = metric.compute(predictions=[["cat", "dog"], ["coffee", "tea"]], references=REFS)
    assert batched == once


def test_unknown_config_is_rejected():
    with pytest.raises(ValueError, match="unknown configuration 'bleu'"):
        evaluate.load(protoqa_metric.evaluate_module_path(), "bleu")


def test_duplicate_question_ids_are_an_error():
    metric = evaluate.load(protoqa_metric.evaluate_module_path(), "exact_match")
    with pytest.raises(ValueError, match="duplicate question_ids: q1"):
        metric.compute(predictions=[["cat"], ["tea"]], references=REFS, question_ids=["q1", "q1"])
    with pytest.raises(ValueError, match="1 question_ids for 2 questions"):
        metric.compute(predictions=[["cat"], ["tea"]], references=REFS, question_ids=["q1"])


def test_reference_forms_that_are_not_understood_name_the_accepted_forms():
    from protoqa_metric import DataFormatError, clusters_from_records

    row = {"id": "r1q1", "question": "name a pet", "clusters": REFS[0]}
    with pytest.raises(DataFormatError, match="a reference must be the `clusters` field.*pass its 'clusters' field"):
        clusters_from_records(row, "r1q1")
    for bad in ("dog", 3, [["dog"]], {"answers": "dog", "count": [1]}):
        with pytest.raises(DataFormatError, match="clusters|lists of the same length"):
            clusters_from_records(bad, "q")


def test_matches_library_on_dev_set(shared_data):
    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    preds = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    refs = [
        {
            "id": [c.id for c in q.clusters],
            "answers": [list(c.answers) for c in q.clusters],
            "count": [c.count for c in q.clusters],
        }
        for q in targets.values()
    ]
    metric = evaluate.load(protoqa_metric.evaluate_module_path(), "wordnet")
    out = metric.compute(predictions=[preds[qid] for qid in targets], references=refs)
    lib = evaluate_predictions(targets, preds, "wordnet")
    for key, value in lib.scores.items():
        assert out[key] == pytest.approx(value, abs=1e-12)
