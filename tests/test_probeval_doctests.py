"""Run the docstring examples of the ProbEval modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "cfc_probeval",
    "cfc_probeval.embedders",
    "cfc_probeval.clustering",
    "cfc_probeval.matching",
    "cfc_probeval.distributions",
    "cfc_probeval.inputs",
    "cfc_probeval.probeval",
    "cfc_probeval.cli",
    "cfc_probeval.compare",
    "studies.validation.sampling",
    "studies.validation.study",
    "studies.validation.leaderboard",
    "studies.validation.report",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
