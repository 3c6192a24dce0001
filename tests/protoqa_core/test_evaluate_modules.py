"""What both ``evaluate`` modules share: their ``_info`` in one shape (``evaluate`` loaded only when asked), and
the checks a module runs before ``datasets`` casts its inputs, on a recording metric.

The modules themselves, with ``evaluate``, are tested in tests/project/test_evaluate_modules.py;
here the mixin sits on a stand-in for ``evaluate.Metric`` that records what reaches it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from protoqa_core.evaluate_modules import (
    CheckedReferences,
    ModuleDescription,
    metric_info,
    per_question_values,
    stored_clusters,
)
from protoqa_core.io.files import DataFormatError

DESCRIPTION = ModuleDescription(
    "A metric.",
    "@inproceedings{x,\n}\n",
    "Args: predictions, references.",
    "https://code.example",
    "https://paper.example",
)


def test_the_core_loads_without_evaluate_or_datasets():
    code = (
        "import sys, protoqa_core.evaluate_modules; "
        "print(sorted(m for m in ('evaluate', 'datasets') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout == "[]\n"


@pytest.mark.slow  # imports evaluate and datasets
def test_every_field_reaches_the_metric_info_and_each_input_form_is_kept_in_order():
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("evaluate")
    lists = datasets.Features({"predictions": datasets.Sequence(datasets.Value("string"))})
    strings = datasets.Features({"predictions": datasets.Value("string")})
    info = metric_info(DESCRIPTION, (lists, strings))
    assert (info.description, info.citation, info.inputs_description) == (
        "A metric.",
        "@inproceedings{x,\n}\n",
        "Args: predictions, references.",
    )
    assert info.homepage == info.codebase_urls[0] == "https://code.example"
    assert info.reference_urls == ["https://paper.example"] and info.module_type == "metric"
    assert info.features == [lists, strings]


class _Recorder:
    """What ``evaluate.Metric`` would receive, kept for the test to read."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def compute(self, **kwargs):
        self.calls.append(("compute", kwargs))
        return "result"

    def add_batch(self, **kwargs):
        self.calls.append(("add_batch", kwargs))

    def add(self, **kwargs):
        self.calls.append(("add", kwargs))


class Checked(CheckedReferences, _Recorder):
    def check_references(self, references, question_ids):
        return [stored_clusters(r, q) for r, q in zip(references, question_ids, strict=True)]


REFERENCE = [{"answers": ["dog", "puppy"], "count": 3}, {"answers": ["cat"], "count": 1}]
STORED = {"id": ["0", "1"], "answers": [["dog", "puppy"], ["cat"]], "count": [3, 1]}


def test_compute_hands_on_checked_references_and_lists_of_strings():
    metric = Checked()
    assert metric.compute(predictions=[("dog", "cat")], references=[REFERENCE], question_ids=["q1"]) == "result"
    ((name, kwargs),) = metric.calls
    assert name == "compute" and kwargs["references"] == [STORED] and kwargs["predictions"] == [["dog", "cat"]]
    assert kwargs["question_ids"] == ["q1"]


def test_targets_is_the_same_as_references_but_not_both():
    metric = Checked()
    metric.compute(predictions=[["dog"]], targets=[REFERENCE])
    assert metric.calls[0][1]["references"] == [STORED] and "targets" not in metric.calls[0][1]
    with pytest.raises(ValueError, match="pass the targets once: as references= or as targets=, not both"):
        metric.compute(predictions=[["dog"]], references=[REFERENCE], targets=[REFERENCE])
    metric.add_batch(predictions=[["dog"]], targets=[REFERENCE])
    assert metric.calls[-1] == ("add_batch", {"predictions": [["dog"]], "references": [STORED]})


@pytest.mark.parametrize(
    "reference, message",
    [
        (
            [{"answers": ["dog"], "count": 2.9}],
            r"question 'q2': cluster 0 count must be a non-negative integer, got 2\.9",
        ),
        ([{"answers": ["dog"], "count": "5"}], r"question 'q2': cluster 0 count must be a non-negative integer"),
        ([{"answers": ["dog"], "count": True}], r"question 'q2': cluster 0 count must be a non-negative integer"),
        ([{"answers": ["dog"], "count": 2**63}], r"question 'q2': cluster 0 count is too large"),
    ],
)
def test_a_count_datasets_would_cast_is_refused_naming_the_question(reference, message):
    with pytest.raises(DataFormatError, match=message):
        Checked().compute(predictions=[["a"], ["b"]], references=[REFERENCE, reference], question_ids=["q1", "q2"])


def test_a_prediction_that_is_not_a_list_of_strings_is_named_by_its_question():
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(DataFormatError, match=r"question 'q2': answers must contain only strings, found \[\[\[\["):
        Checked().compute(predictions=[["a"], nested], references=[REFERENCE, REFERENCE], question_ids=["q1", "q2"])
    with pytest.raises(DataFormatError, match=r"question '1': answers must be a list of strings, got str"):
        Checked().compute(predictions=[["a"], "dog"], references=[REFERENCE, REFERENCE])


def test_question_ids_must_be_one_per_reference_and_distinct():
    with pytest.raises(DataFormatError, match="1 question_ids for 2 questions"):
        Checked().compute(predictions=[["a"], ["b"]], references=[REFERENCE, REFERENCE], question_ids=["q1"])
    with pytest.raises(DataFormatError, match="duplicate question_ids: q1"):
        Checked().compute(predictions=[["a"], ["b"]], references=[REFERENCE, REFERENCE], question_ids=["q1", "q1"])


@pytest.mark.parametrize("missing", [None, "refs.jsonl", b"refs", 42])
def test_what_is_missing_or_not_a_list_is_left_for_evaluate_to_report(missing):
    metric = Checked()
    metric.compute(predictions=missing, references=missing)
    assert metric.calls[0][1] == {"predictions": missing, "references": missing}


def test_add_checks_one_prediction_and_its_reference():
    metric = Checked()
    metric.add(prediction=("dog",), reference=REFERENCE)
    assert metric.calls[-1] == ("add", {"prediction": ["dog"], "reference": STORED})
    metric.add(predictions=("cat",), reference=REFERENCE)
    assert metric.calls[-1][1]["predictions"] == ["cat"]
    with pytest.raises(DataFormatError, match=r"question '0': answers must contain only strings, found 3"):
        metric.add(prediction=["dog", 3], reference=REFERENCE)
    with pytest.raises(DataFormatError, match=r"question '0': cluster 0 count must be a non-negative integer"):
        metric.add(prediction=["dog"], reference=[{"answers": ["x"], "count": -1}])


def test_the_stored_form_takes_both_shapes_and_keeps_cluster_ids():
    assert stored_clusters(STORED, "q1") == STORED
    given = {"id": ["q1.a", "q1.b"], "answers": [["dog"], ["cat"]], "count": [2, 0]}
    assert stored_clusters(given, "q1") == given
    assert stored_clusters([], "q1") == {"id": [], "answers": [], "count": []}
    with pytest.raises(DataFormatError, match=r"question 'q1': .*same length"):
        stored_clusters({"answers": [["x"]], "count": [1, 2]}, "q1")


def test_a_subclass_must_say_how_it_checks_references():
    with pytest.raises(NotImplementedError):
        CheckedReferences().check_references([], [])


@pytest.mark.parametrize(
    "values, message",
    [
        (["a"], r"raw_answers: expected one entry per reference \(2\), got 1"),
        ("ab", "raw_answers: expected a list with one entry per reference, got str"),
        (7, "raw_answers: expected a list with one entry per reference, got int"),
    ],
)
def test_an_input_given_per_question_needs_one_entry_per_reference(values, message):
    assert per_question_values(None, "raw_answers", 2) == [None, None]
    assert per_question_values(("a", "b"), "raw_answers", 2) == ["a", "b"]
    with pytest.raises(ValueError, match=message):
        per_question_values(values, "raw_answers", 2)
