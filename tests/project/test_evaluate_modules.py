"""Both metrics' ``evaluate`` modules: the project's word ``targets=`` beside ``references=``, the
module folders' docstring examples, and a prediction nested 100,000 deep given to each, in a new process."""

from __future__ import annotations

import pytest

import cfc_probeval
import protoqa_metric
from tests.support.lazy import lazy_import
from tests.support.processes import run_python

evaluate = lazy_import("evaluate")

pytestmark = pytest.mark.usefixtures("hub_offline")


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


@pytest.mark.slow
def test_predictions_nested_100000_deep_are_a_data_format_error(tmp_path):

    from tests.support.offline import offline_env

    result = run_python(
        ["-c", DEEP_PREDICTIONS], tmp_path, offline_env(HF_MODULES_CACHE=str(tmp_path / "modules")), timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 10, result.stdout + result.stderr[-2000:]
    assert all(line.startswith("DataFormatError question ") and "must contain only strings" in line for line in lines)
    assert lines[0].startswith("DataFormatError question 'r1q1'")


REFS = [
    {"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]},
    {"id": ["r.0"], "answers": [["tea"]], "count": [3]},
]


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
