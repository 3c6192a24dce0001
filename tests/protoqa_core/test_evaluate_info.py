"""What both ``evaluate`` modules declare about themselves, in one shape; ``evaluate`` loaded only when asked."""

from __future__ import annotations

import subprocess
import sys

import pytest

from protoqa_core.evaluate_info import ModuleDescription, metric_info

DESCRIPTION = ModuleDescription(
    "A metric.",
    "@inproceedings{x,\n}\n",
    "Args: predictions, references.",
    "https://code.example",
    "https://paper.example",
)


def test_the_core_loads_without_evaluate_or_datasets():
    code = (
        "import sys, protoqa_core.evaluate_info, protoqa_core.reference_checks; "
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
