"""The Space's RoBERTa column, shown when an encoder is set, on a tiny random RoBERTa built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lazy import require
from tests.support.tiny_roberta import pet_question, require_roberta

require_roberta()
require("gradio", minversion="6.31")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[2]


def test_the_space_adds_a_roberta_column_when_an_encoder_is_set(tiny_roberta, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "space"))
    import demo_answers
    import demo_render
    import demo_scoring
    import demo_settings

    question = pet_question()
    monkeypatch.delenv(demo_settings.ROBERTA_ENCODER_ENV, raising=False)
    assert demo_scoring.space_similarities() == ("exact_match", "wordnet")
    monkeypatch.setenv(demo_settings.ROBERTA_ENCODER_ENV, tiny_roberta)
    scores = demo_scoring.protoqa_scores(question, ["cat", "dog"])
    assert scores.scores["roberta"]["max_answers@1"] == 4 / 6 and scores.claims["roberta"][:2] == ("q.1", "q.0")
    assert scores.signatures["roberta"].startswith("sim:roberta(tiny-roberta@")
    result = demo_scoring.score_answers("protoqa", question, demo_answers.answers_from_samples(["dog"] * 3, "test"))
    assert "RoBERTa" in demo_render.scores_html(result)
