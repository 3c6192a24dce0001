"""Run the docstring examples of the library modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "protoqa_metric.text",
    "protoqa_metric.wordnet_access",
    "protoqa_metric.partition_matching",
    "protoqa_metric.similarity",
    "protoqa_metric.spec_reference",
    "protoqa_metric.readers",
    "protoqa_metric.scoring",
    "protoqa_metric.metrics",
    "protoqa_metric.signature",
    "protoqa_metric.cli",
    "protoqa_metric.cli_io",
    "protoqa_metric.significance",
    "protoqa_metric.prompts",
    "protoqa_metric.training",
    "protoqa_metric.citations",
    "protoqa_metric.hub",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
