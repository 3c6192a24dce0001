"""ProbEval's results as users read them: the JSON of a data set, of a question and of a cluster,
and the flat rows of a table, built here by hand so that each field is checked on its own."""

from __future__ import annotations

import json
from types import MappingProxyType

from cfc_probeval.results import ClusterResult, ProbEvalResult, QuestionResult


def cluster(cid: str, predictions: dict[str, float], answers: tuple[str, ...] = ("dog",)) -> ClusterResult:
    return ClusterResult(
        cid, answers[0] if answers else "", answers, 6.0, sum(predictions.values()), 0.5, 0.25, predictions
    )


def result() -> ProbEvalResult:
    pets = QuestionResult(
        "pets",
        0.125,
        4,
        (
            cluster("pets.0", {"dog": 2.0, "puppy": 0.5}, ("dog", "puppy")),
            cluster("wrong", {"banana": 1.0, "apple": 1.0}, ()),
        ),
    )
    food = QuestionResult("food", 0.5, 0, (cluster("food.0", {}, ("pizza",)),))
    return ProbEvalResult(
        kl=0.3125,
        per_question={"pets": 0.125, "food": 0.5},
        questions={"pets": pets, "food": food},
        num_questions=2,
        signature="clustering:human|n:2",
        empty=["food"],
        stats={"samples": 4},
        clusters_per_question=1.0,
    )


def test_a_cluster_as_json_has_every_field_in_plain_types():
    row = cluster("q.0", MappingProxyType({"dog": 1.5}), ("dog", "hound")).as_dict()
    assert row == {
        "id": "q.0",
        "representative": "dog",
        "answers": ["dog", "hound"],
        "human_count": 6.0,
        "model_count": 1.5,
        "p_g": 0.5,
        "p_h": 0.25,
        "predictions": {"dog": 1.5},
    }
    assert type(row["predictions"]) is dict and json.loads(json.dumps(row)) == row


def test_a_question_as_json_lists_its_clusters_in_order():
    pets = result().questions["pets"].as_dict()
    assert list(pets) == ["id", "kl", "num_samples", "clusters"]
    assert (pets["id"], pets["kl"], pets["num_samples"]) == ("pets", 0.125, 4)
    assert [c["id"] for c in pets["clusters"]] == ["pets.0", "wrong"]


def test_the_data_set_json_and_its_details():
    full = result()
    summary = full.as_dict()
    assert summary == {
        "kl": 0.3125,
        "num_questions": 2,
        "num_samples": None,
        "per_question": {"pets": 0.125, "food": 0.5},
        "signature": "clustering:human|n:2",
        "clusters_per_question": 1.0,
        "human_clusters_per_question": None,
        "empty": ["food"],
        "short": [],
        "skipped": [],
        "ignored": [],
        "stats": {"samples": 4},
    }
    details = full.as_dict(details=True)
    assert [q["id"] for q in details.pop("questions")] == ["pets", "food"] and details == summary
    assert json.loads(json.dumps(full.as_dict(details=True), allow_nan=False))["questions"][1]["clusters"][0]["id"] == (
        "food.0"
    )


def test_the_json_is_a_copy_that_leaves_the_result_alone():
    full = result()
    summary = full.as_dict()
    summary["per_question"]["pets"] = 9.0
    summary["empty"].append("pets")
    summary["stats"]["samples"] = 0
    assert full.per_question["pets"] == 0.125 and full.empty == ["food"] and full.stats == {"samples": 4}


def test_one_row_per_question_and_cluster_with_the_top_five_predictions():
    rows = result().cluster_rows()
    assert [(r["question"], r["cluster"]) for r in rows] == [("pets", "pets.0"), ("pets", "wrong"), ("food", "food.0")]
    assert rows[0] == {
        "question": "pets",
        "kl": 0.125,
        "cluster": "pets.0",
        "representative": "dog",
        "human_count": 6.0,
        "model_count": 2.5,
        "p_g": 0.5,
        "p_h": 0.25,
        "num_answers": 2,
        "top_predictions": "dog; puppy",
    }
    assert rows[1]["top_predictions"] == "apple; banana"  # equal weights: alphabetical
    assert rows[2]["top_predictions"] == "" and rows[2]["model_count"] == 0


def test_the_top_predictions_are_the_five_heaviest():
    weights = {f"s{i}": float(i % 4) for i in range(10)}
    question = QuestionResult("q", 0.0, 10, (cluster("q.0", weights),))
    rows = ProbEvalResult(0.0, {"q": 0.0}, {"q": question}, 1, "sig").cluster_rows()
    assert rows[0]["top_predictions"] == "s3; s7; s2; s6; s1"
