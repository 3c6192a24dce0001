"""The `probeval` evaluate module: loading by path and by name, configurations, compute,
add_batch, raw answers in every form, bad input."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.support.lazy import lazy_import

evaluate = lazy_import("evaluate")

import cfc_probeval  # noqa: E402
from cfc_probeval import ProbEval, targets_from_reference  # noqa: E402

HAC_SIGNATURE = "clustering:hac(linkage=complete,threshold=0.3,metric=cosine)|"

REPO = Path(__file__).resolve().parents[3]
STORED = [  # the `clusters` field of dataset rows
    {"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]},
    {"id": ["r.0", "r.1"], "answers": [["tea"], ["coffee"]], "count": [3, 1]},
]
RECORDS = [
    [{"answers": ["dog", "puppy"], "count": 6}, {"answers": ["cat"], "count": 4}],
    [{"answers": ["tea"], "count": 3}, {"answers": ["coffee"], "count": 1}],
]
PREDICTIONS = [["dog"] * 5 + ["cat"] * 3 + ["banana"] * 2, ["tea", "tea", "juice"]]


pytestmark = pytest.mark.usefixtures("hub_offline")


def library_kls(references, **settings):
    """Each question's KL from the library, at the most samples any question has, as the module scores them."""
    pe = ProbEval(**settings)
    count = max(len(p) for p in PREDICTIONS)
    return [
        pe.score_question(targets_from_reference(r, str(i)), _counts(p), num_samples=count).kl
        for i, (r, p) in enumerate(zip(references, PREDICTIONS, strict=True))
    ]


def _counts(samples):
    out = {}
    for s in samples:
        out[s] = out.get(s, 0) + 1
    return out


@pytest.mark.slow
def test_load_by_helper_path_from_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "human")
    out = module.compute(predictions=PREDICTIONS, references=STORED)
    expected = library_kls(STORED, clustering="human")
    assert out["per_question_kl"] == pytest.approx(expected)
    assert out["kl"] == pytest.approx(sum(expected) / 2)
    assert out["num_questions"] == 2
    assert out["signature"].startswith("clustering:human|embedder:none|matching:wordnet(stop=match)|")


@pytest.mark.slow
def test_load_by_name_from_repository_root(monkeypatch):
    monkeypatch.chdir(REPO)
    module = evaluate.load("probeval", "human-cosine")
    out = module.compute(predictions=PREDICTIONS, references=STORED, embedder="char-ngrams", threshold=0.8)
    assert out["per_question_kl"] == pytest.approx(
        library_kls(STORED, clustering="human", matching="cosine", embedder="char-ngrams", threshold=0.8)
    )
    assert "matching:cosine(threshold=0.8)" in out["signature"]


def test_records_and_stored_references_give_the_same_numbers():
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "human")
    stored = module.compute(predictions=PREDICTIONS, references=STORED)
    records = module.compute(predictions=PREDICTIONS, references=RECORDS)
    assert records["per_question_kl"] == pytest.approx(stored["per_question_kl"])
    without_ids = module.compute(
        predictions=PREDICTIONS, references=[{"answers": r["answers"], "count": r["count"]} for r in STORED]
    )
    assert without_ids["kl"] == pytest.approx(stored["kl"])


def test_add_batch_equals_compute_and_details_list_the_clusters():
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "hac")
    whole = module.compute(predictions=PREDICTIONS, references=STORED, embedder="char-ngrams")
    for p, r in zip(PREDICTIONS, STORED, strict=True):
        module.add_batch(predictions=[p], references=[r])
    batched = module.compute(embedder="char-ngrams", details=True, question_ids=["pets", "drinks"])
    assert batched["per_question_kl"] == pytest.approx(whole["per_question_kl"])
    assert batched["signature"] == whole["signature"]
    assert batched["signature"].startswith(HAC_SIGNATURE)
    pets = batched["details"][0]
    assert pets["id"] == "pets" and pets["clusters"][-1]["id"] == "wrong"
    assert pets["clusters"][-1]["predictions"] == {"banana": 2.0}


def test_configurations_and_keyword_arguments():
    default = evaluate.load(cfc_probeval.evaluate_module_path())
    gmeans = evaluate.load(cfc_probeval.evaluate_module_path(), "gmeans")
    out = default.compute(predictions=PREDICTIONS, references=STORED, clustering="human")
    assert out["signature"].startswith("clustering:human|")
    out = gmeans.compute(predictions=PREDICTIONS, references=STORED, embedder="char-ngrams", k_init=1, seed=3)
    assert out["signature"].startswith("clustering:gmeans(k_init=1,k_max=20,seed=3,alpha=0.0001)|")
    assert all(math.isfinite(v) for v in out["per_question_kl"])
    with pytest.raises(ValueError, match="unknown configuration"):
        evaluate.load(cfc_probeval.evaluate_module_path(), "kmeans")


def test_question_without_answers_is_reported_as_none():
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "human")
    refs = [STORED[0], {"id": [], "answers": [], "count": []}]
    with pytest.warns(UserWarning, match="without target answers"):
        out = module.compute(predictions=PREDICTIONS, references=refs)
    assert out["num_questions"] == 1 and out["per_question_kl"][1] is None


RAW = [
    {"answer": ["dog", "puppy", "cat", "broken socks"], "count": [5, 1, 4, 1]},
    {"answer": ["tea", "coffee"], "count": [3, 1]},
]


def test_raw_answers_in_the_dataset_form_equal_every_other_form():
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "hac")
    settings = {"predictions": PREDICTIONS, "references": STORED, "embedder": "char-ngrams", "distance_threshold": 0.9}
    dataset_form = module.compute(raw_answers=RAW, **settings)
    mapping = module.compute(raw_answers=[dict(zip(r["answer"], r["count"], strict=True)) for r in RAW], **settings)
    records = module.compute(
        raw_answers=[[{"answer": a, "count": c} for a, c in zip(r["answer"], r["count"], strict=True)] for r in RAW],
        **settings,
    )
    shared = module.compute(**settings)
    assert dataset_form == mapping == records
    assert "answers:shared" not in dataset_form["signature"]
    # Without raw counts dog and puppy weigh 3 and 3 instead of 5 and 1: other numbers, another signature.
    assert shared["signature"] == dataset_form["signature"].replace("|embedder:", "|answers:shared|embedder:")
    assert shared["kl"] != pytest.approx(dataset_form["kl"])
    expected = [
        ProbEval("hac", embedder="char-ngrams", distance_threshold=0.9)
        .score_question(targets_from_reference(ref, str(i), raw), _counts(p), num_samples=10)
        .kl
        for i, (ref, raw, p) in enumerate(zip(STORED, RAW, PREDICTIONS, strict=True))
    ]
    assert dataset_form["per_question_kl"] == pytest.approx(expected, abs=1e-12)


def test_human_clusters_do_not_depend_on_raw_answers():
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "human")
    with_raw = module.compute(predictions=PREDICTIONS, references=STORED, raw_answers=RAW)
    without = module.compute(predictions=PREDICTIONS, references=STORED)
    assert with_raw == without and "answers:" not in without["signature"]


@pytest.mark.parametrize(
    "raw, message",
    [
        ([["dog", "cat"], RAW[1]], "raw answers must be the `raw_answers` field of a dataset row"),
        (["dog", RAW[1]], "raw answers must be .*got str"),
        ([{"answer": ["dog", "dog"], "count": [1, 2]}, RAW[1]], "raw answer 'dog' is given twice"),
        ([{"answer": ["dog"], "count": [1, 2]}, RAW[1]], "two lists of the same length"),
        ([{"dog": -1}, RAW[1]], "must be a non-negative number"),
        ([{"dog": float("nan")}, RAW[1]], "must be a non-negative number"),
        ([RAW[0]], r"raw_answers: expected one entry per reference \(2\), got 1"),
        ("dog", "raw_answers: expected a list with one entry per reference, got str"),
    ],
)
def test_raw_answer_forms_that_are_not_understood_are_errors(raw, message):
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "human")
    with pytest.raises(ValueError, match=message):
        module.compute(predictions=PREDICTIONS, references=STORED, raw_answers=raw)


def test_reference_forms_that_are_not_understood_are_errors():
    from cfc_probeval import DataFormatError

    with pytest.raises(DataFormatError, match="a reference must be .*records; got an object with keys"):
        targets_from_reference({"clusters": STORED[0], "raw_answers": RAW[0]}, "q")
    with pytest.raises(DataFormatError, match="a reference must be"):
        targets_from_reference("dog", "q")


def test_duplicate_question_ids_are_an_error():
    module = evaluate.load(cfc_probeval.evaluate_module_path(), "human")
    with pytest.raises(ValueError, match="duplicate question_ids: a"):
        module.compute(predictions=PREDICTIONS, references=STORED, question_ids=["a", "a"])
