"""The similarity controls, recomputed by hand on a small made-up example: wrong-question and random-word lists,
shares with paired intervals, precision and recall against judgements, and the choice of the roberta rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from protoqa_core.io.records import Cluster, Question
from protoqa_metric import ProtoQA
from studies.validation.similarity_controls import (
    MIN_PRECISION,
    WRONG_QUESTION_MARGIN,
    Measured,
    Rule,
    choose_rule,
    common_words,
    control_share,
    judged_answers,
    measure,
    precision_recall,
    random_word_lists,
    wrong_question_lists,
)

QUESTIONS = {
    "pet": Question("pet", "name a pet", (Cluster("pet.0", ("dog", "puppy"), 6), Cluster("pet.1", ("cat",), 4))),
    "fruit": Question("fruit", "name a fruit", (Cluster("fruit.0", ("apple",), 7), Cluster("fruit.1", ("pear",), 3))),
    "room": Question("room", "name a room", (Cluster("room.0", ("kitchen",), 5), Cluster("room.1", ("bedroom",), 5))),
}
LISTS = {"pet": ["dog", "cat", "kitchen"], "fruit": ["pear", "dog"], "room": ["kitchen", "apple"]}


def test_wrong_question_lists_shift_by_one_in_file_order():
    lists = wrong_question_lists(list(QUESTIONS), LISTS)
    assert lists == {"pet": ["pear", "dog"], "fruit": ["kitchen", "apple"], "room": ["dog", "cat", "kitchen"]}


def test_random_word_lists_are_seeded_distinct_and_from_the_committed_list():
    words = common_words()
    assert len(words) >= 300 and words == sorted(set(words)) and all(w == w.strip().lower() for w in words)
    a, b = random_word_lists(list(QUESTIONS), words, 0), random_word_lists(list(QUESTIONS), words, 0)
    assert a == b and a != random_word_lists(list(QUESTIONS), words, 1)
    for drawn in a.values():
        assert len(drawn) == 10 == len(set(drawn)) and set(drawn) <= set(words)


def test_control_share_and_difference_by_hand():
    real, control = np.array([1.0, 0.5, 0.5, 0.0]), np.array([0.5, 0.0, 0.5, 0.0])
    out = control_share(real, control, resamples=500)
    assert out["share"] == pytest.approx(1.0 / 2.0) and out["difference"] == pytest.approx(0.25)
    low, high = out["share_interval"]["low"], out["share_interval"]["high"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    assert out == control_share(real, control, resamples=500)  # seeded


@pytest.mark.parametrize("similarity", ["exact_match", "wordnet"])
def test_each_control_recomputed_by_hand(similarity):
    ids = list(QUESTIONS)
    controls = {
        "wrong_question": wrong_question_lists(ids, LISTS),
        "words": {"pet": ["tree"], "fruit": [], "room": ["x"]},
    }
    judged = judged_answers(
        QUESTIONS,
        {"pet": ["Dog", "kitchen"], "fruit": ["apple"], "room": ["bedroom", "zzz"]},
        {
            "pet": {"Dog": {"cluster": "pet.0"}, "kitchen": {"cluster": "wrong"}},
            "fruit": {"apple": {"cluster": "fruit.0"}},
            "room": {"bedroom": {"cluster": "room.1"}, "zzz": {"cluster": "wrong"}},
        },
    )
    got = measure(ProtoQA(similarity, "paper"), similarity, QUESTIONS, LISTS, controls, judged)
    # Real lists: pet finds dog (6) and cat (4) of 10; fruit finds pear (3) of 10; room finds kitchen (5) of 10.
    assert [got.real[q]["max_answers@10"] for q in ids] == pytest.approx([1.0, 0.3, 0.5])
    # Wrong question: pet gets ["pear", "dog"] (dog: 6 of 10), fruit gets ["kitchen", "apple"] (apple: 7),
    # room gets ["dog", "cat", "kitchen"] (kitchen: 5).
    assert [got.controls["wrong_question"][q]["max_answers@10"] for q in ids] == pytest.approx([0.6, 0.7, 0.5])
    assert [got.controls["words"][q]["max_answers@10"] for q in ids] == [0.0, 0.0, 0.0]
    assert got.judged["pet"] == [(("pet.0",), "pet.0"), ((), None)]
    assert got.judged["room"] == [(("room.1",), "room.1"), ((), None)]
    figures = precision_recall([row for q in ids for row in got.judged[q]])
    assert (figures["precision"], figures["recall"], figures["wrong_assigned"]) == (1.0, 1.0, 0)
    real = np.array([got.real[q]["max_answers@10"] for q in ids])
    control = np.array([got.controls["wrong_question"][q]["max_answers@10"] for q in ids])
    assert control_share(real, control, resamples=100)["share"] == pytest.approx(1.8 / 1.8)


def test_judged_answers_refuse_an_answer_without_a_judgement():
    with pytest.raises(ValueError, match="question pet: the human answer 'ferret' has no judgement"):
        judged_answers(QUESTIONS, {"pet": ["ferret"]}, {"pet": {}})


def test_precision_recall_by_hand():
    rows = [(("a",), "a"), (("a", "b"), "b"), ((), "a"), (("c",), None), ((), None)]
    out = precision_recall(rows)
    assert out["precision"] == pytest.approx(1.5 / 3) and out["recall"] == pytest.approx(1.5 / 3)
    assert (out["assigned"], out["wrong_assigned"], out["judged_wrong"]) == (3, 1, 2)
    assert math.isnan(precision_recall([])["precision"])


def _measured(real: list[float], wrong: list[float], judged: list[tuple[tuple[str, ...], object]]) -> Measured:
    ids = [f"q{i}" for i in range(len(real))]
    return Measured(
        {q: {"max_answers@10": r} for q, r in zip(ids, real, strict=True)},
        {"wrong_question": {q: {"max_answers@10": w} for q, w in zip(ids, wrong, strict=True)}},
        {ids[0]: list(judged), **{q: [] for q in ids[1:]}},  # type: ignore[dict-item]
    )


def test_the_rule_meets_both_constraints_then_maximizes_recall():
    ids = ["q0", "q1"]
    wordnet = _measured([1.0, 1.0], [0.1, 0.1], [])  # wrong-question share 0.1: the limit is 0.1 + margin
    precise = [(("a",), "a")] * 9 + [(("a",), None)] + [((), "a")] * 10  # precision 0.9, recall 0.45
    recalls = [(("a",), "a")] * 18 + [(("a",), None)] * 2  # precision 0.9, recall 0.9
    sloppy = [(("a",), "a")] * 20 + [(("a",), None)] * 5  # precision 0.8
    per_rule = {
        Rule(0.375, 0.1): _measured([1.0, 1.0], [0.5, 0.5], recalls),  # rewards wrong answers
        Rule(0.5, 0.5): _measured([1.0, 1.0], [0.1 + WRONG_QUESTION_MARGIN, 0.1], recalls),
        Rule(0.25, 0.5): _measured([1.0, 1.0], [0.1, 0.1], precise),
        Rule(0.25, 0.9): _measured([1.0, 1.0], [0.1, 0.1], sloppy),
    }
    rule, met, figures = choose_rule(per_rule, wordnet, ids)
    assert met and rule == Rule(0.5, 0.5) and figures["precision"] >= MIN_PRECISION
    assert figures["wrong_question_limit"] == pytest.approx(0.1 + WRONG_QUESTION_MARGIN)
    # Nothing meets both: the most precise rule among those meeting the wrong-question limit, flagged.
    del per_rule[Rule(0.5, 0.5)], per_rule[Rule(0.25, 0.5)]
    rule, met, _ = choose_rule(per_rule, wordnet, ids)
    assert not met and rule == Rule(0.25, 0.9)


def test_every_shift_is_scored_and_summarized_by_hand():
    from studies.validation.similarity_controls import shift_difference, shift_scores, shift_summary

    ids = list(QUESTIONS)
    pq = ProtoQA("exact_match", "paper")
    per_shift = shift_scores(pq, QUESTIONS, LISTS)
    # Shift 1 is the wrong-question control; shift 2 gives pet the room list, fruit the pet list, room the fruit list.
    one = measure(pq, "exact_match", QUESTIONS, LISTS, {"w": wrong_question_lists(ids, LISTS)}, {})
    assert per_shift[0].tolist() == pytest.approx([one.controls["w"][q]["max_answers@10"] for q in ids])
    two = wrong_question_lists(ids, LISTS, shift=2)
    assert two == {"pet": ["kitchen", "apple"], "fruit": ["dog", "cat", "kitchen"], "room": ["pear", "dog"]}
    assert per_shift[1].tolist() == pytest.approx([0.0, 0.0, 0.0])
    real = np.array([one.real[q]["max_answers@10"] for q in ids])
    summary = shift_summary(real, per_shift, resamples=200)
    assert summary["shifts"] == 2 and summary["per_shift"][1] == 0.0
    assert summary["mean"] == pytest.approx(np.mean(summary["per_shift"]))
    assert (summary["min"], summary["min_shift"], summary["max_shift"]) == (0.0, 2, 1)
    same = shift_difference(real, per_shift, real, per_shift, resamples=50)
    assert same["difference"] == 0.0 and same["shifts_a_below_b"] == 0
    with pytest.raises(ValueError, match="shift is 1 to 2"):
        wrong_question_lists(ids, LISTS, shift=3)


def test_model_only_judgements_leave_out_human_answers_and_carry_intervals():
    from studies.validation.similarity_controls import judgement_figures

    judged = {"pet": {"dog": {"cluster": "pet.0"}, "Cat ": {"cluster": "pet.1"}, "rock": {"cluster": "wrong"}}}
    model = judged_answers(QUESTIONS, {"pet": ["dog", "Cat ", "rock"]}, judged, exclude={"pet": ["cat"]}, what="model")
    assert model == {"pet": [("dog", "pet.0"), ("rock", None)]}
    got = measure(ProtoQA("exact_match", "paper"), "exact_match", QUESTIONS, LISTS, {}, {}, model)
    figures = judgement_figures(got.judged_model, ["pet"], resamples=100)
    assert (figures["precision"], figures["recall"], figures["answers"], figures["judged_wrong"]) == (1.0, 1.0, 2, 1)
    assert figures["f1_interval"] == {"low": 1.0, "high": 1.0}


def test_documents_state_the_similarity_claims_of_the_committed_report():
    import json
    from pathlib import Path

    from studies.validation.claims import rewrite_claims
    from studies.validation.similarity_controls import TRUST_FILES, shift_sentence, trust_rows

    root = Path(__file__).resolve().parents[2]
    report = json.loads((root / "studies/reports/similarity_controls.json").read_text(encoding="utf-8"))
    roberta = report["similarities"]["roberta (held out)"]
    assert report["protocol"]["judged_model_only_answers"] > 0 and "judgements_model_only" in roberta
    assert roberta["wrong_question_every_shift"]["shifts"] == report["protocol"]["questions"] - 1
    claims = {"trust": trust_rows(report), "shifts": shift_sentence(report)}
    for name in TRUST_FILES:
        text = (root / name).read_text(encoding="utf-8")
        assert "<!-- similarity:trust -->" in text, name
        assert rewrite_claims(text, claims, marker="similarity") == text, (
            f"{name}: run python -m studies.validation similarity-controls"
        )
