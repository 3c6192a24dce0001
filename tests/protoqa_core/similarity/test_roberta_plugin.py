"""The roberta similarity's declaration: scored per question, its options, and a scorer built from them."""

from __future__ import annotations

import re

import pytest

from protoqa_core.similarity.roberta_plugin import DEVICE, ENCODER, LENGTH_SCALE, ROBERTA


def test_it_declares_scoring_per_question_from_the_question_text_and_three_options():
    assert ROBERTA.per_question is not None and ROBERTA.needs_question_text
    assert ROBERTA.options == (ENCODER, DEVICE, LENGTH_SCALE)
    assert (ENCODER.default, DEVICE.default, LENGTH_SCALE.default) == (None, "cpu", None)
    assert DEVICE.shared and not ENCODER.shared and not LENGTH_SCALE.shared
    # The rule is the scorer's to check: a number or a rule's text passes the declaration as given.
    assert LENGTH_SCALE.check(1) == 1 and LENGTH_SCALE.check("median*2") == "median*2"


def test_it_is_never_scored_per_string_pair():
    with pytest.raises(ValueError, match="this similarity is scored per question"):
        ROBERTA.function("dog", "cat")


def test_a_scorer_is_built_with_the_options_given(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(FileNotFoundError, match=re.escape(f"the encoder {tmp_path / 'gone'} was not found")):
        ROBERTA.per_question(encoder=str(tmp_path / "gone"), device="cpu", length_scale="fit")
