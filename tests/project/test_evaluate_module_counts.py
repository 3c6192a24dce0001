"""The `evaluate` modules refuse counts that `datasets` would cast, in a new process outside the checkout.

`datasets` casts every input to the declared features (2.9 -> 2, "5" -> 5, True -> 1), so both
modules run the library's own checks first: the same errors as the library and the Space, and
the cluster form without "id" that the Space accepts.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from tests.support.processes import run_python

# Found, not imported: the modules run in a new process, and importing evaluate here costs seconds.
# One process loads both modules and runs every case (tens of seconds): slow.
pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("evaluate") is None, reason="evaluate is not installed"),
    pytest.mark.slow,
]

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import evaluate
import cfc_probeval, protoqa_metric

def evaluate_module_path(name):
    return (protoqa_metric if name == "protoqa" else cfc_probeval).evaluate_module_path()

CASES = {
    "float": [{"id": ["a", "b"], "answers": [["cat"], ["dog"]], "count": [2.9, 2]}],
    "string": [{"id": ["a"], "answers": [["cat"]], "count": ["5"]}],
    "bool": [{"id": ["a"], "answers": [["cat"]], "count": [True]}],
    "records_float": [[{"answers": ["cat"], "count": 2.9}, {"answers": ["dog"], "count": 2}]],
    "huge": [{"id": ["a"], "answers": [["cat"]], "count": [2 ** 63]}],
    "mixed": [[{"answers": ["cat"], "count": 3}, ["dog"]]],
    "no_id": [{"answers": [["cat"], ["dog"]], "count": [3, 2]}],
}
out = {}
for name, config in (("protoqa", "exact_match"), ("probeval", "human")):
    metric = evaluate.load(str(evaluate_module_path(name)), config)
    for case, refs in CASES.items():
        try:
            result = metric.compute(predictions=[["cat", "dog"]], references=refs, question_ids=["q7"])
            out[f"{name}/{case}"] = {k: v for k, v in result.items() if isinstance(v, float)}
        except Exception as exc:
            out[f"{name}/{case}"] = f"{type(exc).__name__}: {exc}"
    try:
        metric.add(prediction=["cat"], reference={"answers": [["cat"]], "count": [1.5]})
        out[f"{name}/add"] = "accepted"
    except Exception as exc:
        out[f"{name}/add"] = f"{type(exc).__name__}: {exc}"
raw = evaluate.load(str(evaluate_module_path("probeval")), "hac")
for case, counts in (("raw_string", ["5", 1]), ("raw_fraction", [2.5, 1]), ("raw_whole", [2, 1])):
    try:
        out[f"probeval/{case}"] = raw.compute(
            predictions=[["cat", "dog", "dog"]], references=[{"answer": ["cat", "dog"], "count": counts}],
            embedder="char-ngrams", matching="cosine", distance_threshold=0.1)["kl"]
    except Exception as exc:
        out[f"probeval/{case}"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict:
    cwd = tmp_path_factory.mktemp("outside")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(cwd / "modules")}
    done = run_python(["-c", SCRIPT], cwd, env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("module", ["protoqa", "probeval"])
@pytest.mark.parametrize(
    "case, shown",
    [("float", "2.9"), ("string", "'5'"), ("bool", "True"), ("records_float", "2.9"), ("huge", "9223372036854775808")],
)
def test_counts_datasets_would_cast_are_refused(outcomes, module, case, shown):
    message = outcomes[f"{module}/{case}"]
    assert message.startswith("DataFormatError: question 'q7': cluster 0 count"), message
    assert shown in message


@pytest.mark.parametrize("module", ["protoqa", "probeval"])
def test_add_checks_the_reference_too(outcomes, module):
    assert outcomes[f"{module}/add"].startswith("DataFormatError: question '0': cluster 0 count"), outcomes


@pytest.mark.parametrize("module", ["protoqa", "probeval"])
def test_records_mixed_with_other_values_name_the_accepted_forms(outcomes, module):
    message = outcomes[f"{module}/mixed"]
    assert message.startswith("DataFormatError: question 'q7': cluster 1 needs 'answers' and 'count'"), message
    assert '"id" optional' in message


def test_clusters_without_id_are_scored(outcomes):
    assert outcomes["protoqa/no_id"]["max_answers@1"] == 1.0
    assert outcomes["protoqa/no_id"]["max_answers@all"] == 1.0
    assert outcomes["probeval/no_id"]["kl"] >= 0.0


def test_raw_answer_counts_are_checked_and_never_cast(outcomes):
    assert outcomes["probeval/raw_string"].startswith("DataFormatError: question '0'"), outcomes["probeval/raw_string"]
    assert "'5'" in outcomes["probeval/raw_string"]
    # Raw answer counts may be fractional in the library: 2.5 must not be scored as 2.
    assert isinstance(outcomes["probeval/raw_fraction"], float), outcomes["probeval/raw_fraction"]
    assert outcomes["probeval/raw_fraction"] != pytest.approx(outcomes["probeval/raw_whole"])
