"""ProbEval's warnings are the project's warnings: one filter silences or raises both."""

from __future__ import annotations

import warnings

import pytest

from cfc_probeval.errors import ProbEvalWarning
from protoqa_core.io.files import ProtoQAWarning


def test_probeval_warnings_are_protoqa_warnings_and_user_warnings():
    assert issubclass(ProbEvalWarning, ProtoQAWarning) and issubclass(ProbEvalWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProtoQAWarning)
        with pytest.raises(ProbEvalWarning, match="skipped"):
            warnings.warn("2 questions skipped", ProbEvalWarning, stacklevel=1)
