"""The `protoqa` evaluate module: loading by name and by path, compute, add_batch, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lazy import lazy_import

evaluate = lazy_import("evaluate")

import cfc_probeval  # noqa: E402
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
    assert set(out) == {
        "max_answers@1",
        "max_answers@3",
        "max_answers@5",
        "max_answers@10",
        "max_incorrect@1",
        "max_incorrect@3",
        "max_incorrect@5",
        "signature",
    }
    assert out["max_answers@3"] == pytest.approx(4 / 10)


def test_add_batch_equals_one_compute():
    metric = evaluate.load(protoqa_metric.evaluate_module_path(), "exact_match")
    metric.add_batch(predictions=[["cat", "dog"]], references=[REFS[0]])
    metric.add(predictions=["coffee", "tea"], references=REFS[1])
    batched = metric.compute()
    once = metric.compute(predictions=[["cat", "dog"], ["coffee", "tea"]], references=REFS)
    assert batched == once


@pytest.mark.parametrize("path", [protoqa_metric.evaluate_module_path(), cfc_probeval.evaluate_module_path()])
def test_targets_is_another_name_for_references(path):
    """`evaluate` fixes the name references; the project's word, targets=, is taken too (not both)."""
    metric = evaluate.load(path)
    predictions = [["cat", "dog"], ["coffee", "tea"]]
    assert metric.compute(predictions=predictions, targets=REFS) == metric.compute(
        predictions=predictions, references=REFS
    )
    metric.add_batch(predictions=predictions, targets=REFS)
    assert metric.compute() == metric.compute(predictions=predictions, references=REFS)
    with pytest.raises(ValueError, match="as references= or as targets=, not both"):
        metric.compute(predictions=predictions, references=REFS, targets=REFS)
    assert metric._info().module_type == "metric" and len(metric._info().reference_urls) == 1


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


def test_dataset_rows_work_unchanged(shared_data, tmp_path):
    """The `clusters` column of `load_dataset` on the Parquet export is a reference as it is."""
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("pyarrow")
    import subprocess
    import sys

    out = tmp_path / "export"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "protoqa_dataset",
            "export",
            str(out),
            "--data-dir",
            str(shared_data),
            "--config",
            "protoqa",
            "--skip-unavailable",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = datasets.load_dataset(str(out), "protoqa", split="validation")
    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    preds = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    metric = evaluate.load(protoqa_metric.evaluate_module_path(), "wordnet")
    got = metric.compute(
        predictions=[preds[i] for i in rows["id"]], references=rows["clusters"], question_ids=rows["id"]
    )
    lib = evaluate_predictions(targets, preds, "wordnet")
    assert {k: got[k] for k in lib.scores} == lib.scores
    assert got["signature"] == lib.signature


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


@pytest.mark.parametrize("name", ["protoqa_metric.evaluate_modules", "cfc_probeval.evaluate_modules"])
def test_docstring_examples_of_the_module_folders(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# Both metrics' modules given a prediction nested 100,000 deep, in a new process: each call ends in
# the library's DataFormatError naming the question, never in a RecursionError.
DEEP_PREDICTIONS = """
import evaluate, sys
import cfc_probeval, protoqa_metric
from protoqa_core.io.files import DataFormatError

deep = "x"
for _ in range(100_000):
    deep = [deep]
refs = [{"id": ["q.0"], "answers": [["dog"]], "count": [6]}]
for path, config in ((protoqa_metric.evaluate_module_path(), "exact_match"), (cfc_probeval.evaluate_module_path(), "human")):
    metric = evaluate.load(path, config)
    calls = (
        lambda: metric.compute(predictions=[deep], references=refs, question_ids=["r1q1"]),
        lambda: metric.compute(predictions=deep, references=refs),
        lambda: metric.add_batch(predictions=[deep], references=refs),
        lambda: metric.add(prediction=deep, reference=refs[0]),
        lambda: metric.add(predictions=deep, references=refs[0]),
    )
    for call in calls:
        try:
            call()
        except DataFormatError as exc:
            print(type(exc).__name__, exc)
"""


def test_predictions_nested_100000_deep_are_a_data_format_error(tmp_path):
    import subprocess
    import sys

    from tests.support.offline import offline_env

    result = subprocess.run(
        [sys.executable, "-c", DEEP_PREDICTIONS],
        cwd=tmp_path,
        env=offline_env(HF_MODULES_CACHE=str(tmp_path / "modules")),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 10, result.stdout + result.stderr[-2000:]
    assert all(line.startswith("DataFormatError question ") and "must contain only strings" in line for line in lines)
    assert lines[0].startswith("DataFormatError question 'r1q1'")
