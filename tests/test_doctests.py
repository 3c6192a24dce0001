"""Run the docstring examples of the library modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "protoqa_core.text",
    "protoqa_core.wordnet_access",
    "protoqa_core.wordnet_files",
    "protoqa_core.wordnet_reader",
    "protoqa_core.wordnet_cache",
    "protoqa_core.wordnet_nltk",
    "protoqa_core.walk_table",
    "protoqa_core.treebank",
    "protoqa_core.partition_matching",
    "protoqa_core.similarity",
    "spec_reference",
    "protoqa_core.readers",
    "protoqa_metric.scoring",
    "protoqa_metric.metrics",
    "protoqa_core.signature",
    "protoqa_metric.cli",
    "protoqa_core.cli_io",
    "protoqa_core.significance",
    "protoqa_integrations.prompts",
    "protoqa_integrations.training",
    "protoqa_core.citations",
    "protoqa_integrations.hub",
    "protoqa_integrations.cli",
    "protoqa_core.module_paths",
    "protoqa_core.moved",
    "protoqa_core.evaluate_info",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
