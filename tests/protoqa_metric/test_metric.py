"""The configured metric object, the id gate, the paired compare, the command-line sub-commands, and
what the metric makes of missing, unknown, empty and repeated predictions."""

from __future__ import annotations

import json
import random
import warnings

import pytest

from protoqa_core.io.files import DataFormatError, ProtoQAWarning
from protoqa_core.io.predictions import read_predictions
from protoqa_core.io.readers import read_targets
from protoqa_core.io.records import Cluster, Question
from protoqa_core.similarity import ApproximationWarning
from protoqa_metric import ProtoQA, evaluate_predictions, score_question, scoring
from protoqa_metric import cli as metric_cli
from protoqa_metric import metric as metric_module
from tests.support.compare_files import compare_files
from tests.support.spec_reference import reference_question_score, reference_wup_similarity
from tests.support.target_rows import target_line


@pytest.fixture(scope="module")
def dev(shared_data):
    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    predictions = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    return targets, predictions


def _as_plain(result):
    return (
        result.scores,
        result.per_question,
        result.num_questions,
        result.missing,
        result.skipped,
        result.ignored,
        result.signature,
    )


# --- ProtoQA -----------------------------------------------------------------------------------


@pytest.mark.parametrize("similarity", ["exact_match", "wordnet", "lcs"])
@pytest.mark.parametrize("only_predicted", [False, True])
def test_protoqa_object_equals_evaluate_predictions_on_dev(dev, similarity, only_predicted):
    targets, predictions = dev
    some = {qid: predictions[qid] for qid in list(predictions)[:40]}  # leaves questions missing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = ProtoQA(similarity, "standard", all_stopword_match=False).evaluate(
            targets, some, only_predicted=only_predicted
        )
        theirs = evaluate_predictions(
            targets, some, similarity, "standard", only_predicted=only_predicted, all_stopword_match=False
        )
    assert _as_plain(ours) == _as_plain(theirs)  # exact equality: every float bit for bit
    assert ours.signature == ProtoQA(similarity, all_stopword_match=False).signature(
        ours.num_questions, "skip" if only_predicted else "zero"
    )


def test_protoqa_score_question_equals_score_question_for_every_metric(dev):
    targets, predictions = dev
    pq = ProtoQA("wordnet")
    for qid in list(predictions)[:10]:
        by_metric = pq.score_question(targets[qid], predictions[qid])
        assert by_metric == pq.score_question(targets[qid].clusters, predictions[qid])
        for spec in pq.metrics:
            assert by_metric[spec.name] == score_question(
                predictions[qid],
                targets[qid].clusters,
                "wordnet",
                max_answers=spec.max_answers,
                max_incorrect=spec.max_incorrect,
                weighted=spec.weighted,
            )


def test_protoqa_resolves_similarity_once_and_normalizes_each_prediction_once(dev, monkeypatch):
    targets, predictions = dev
    resolved = []
    real_get = metric_module.get_similarity
    monkeypatch.setattr(metric_module, "get_similarity", lambda name: resolved.append(name) or real_get(name))
    normalized = []
    real_normalize = metric_module.normalize_prediction
    monkeypatch.setattr(metric_module, "normalize_prediction", lambda a: normalized.append(a) or real_normalize(a))

    def no_second_normalization(_):
        raise AssertionError("a prediction was normalized again")

    monkeypatch.setattr(scoring, "normalize_prediction", no_second_normalization)
    pq = ProtoQA("exact_match")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pq.evaluate(targets, predictions)
        pq.evaluate(targets, predictions)
    assert resolved == ["exact_match"]
    scored = [qid for qid in targets if targets[qid].total_count > 0]
    assert len(normalized) == 2 * sum(len(predictions.get(qid, ())) for qid in scored)


def test_protoqa_rejects_unknown_names_when_configured():
    with pytest.raises(ValueError, match="unknown metric 'max_answers@7'"):
        ProtoQA("exact_match", ["max_answers@7"])
    with pytest.raises(ValueError):
        ProtoQA("no_such_similarity")


def test_protoqa_repr_names_the_configuration():
    assert repr(ProtoQA("exact_match", "paper")) == (
        "ProtoQA(similarity='exact_match', metrics='paper', all_stopword_match=True)"
    )


# --- command lines -----------------------------------------------------------------------------


def test_protoqa_eval_compare_sub_command(tmp_path, capsys):
    targets, good, bad = compare_files(tmp_path)
    assert metric_cli.main(["compare", str(targets), str(good), str(bad), "--similarity", "exact_match"]) == 2
    assert f"{bad}, line 1, question 'zz': predictions for 1 question id(s)" in capsys.readouterr().err
    assert (
        metric_cli.main(
            [
                "compare",
                str(targets),
                str(good),
                str(bad),
                "--similarity",
                "exact_match",
                "--ignore-unknown",
                "--json",
                "--resamples",
                "100",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["metrics"]["max_answers@1"]["difference"] == 1.0
    assert out["signature"].endswith("|bootstrap:100|seed:12345")
    assert "ignored predictions for 1 question id(s) that are not in the targets: zz" in captured.err


@pytest.fixture
def targets_file(tmp_path):
    path = tmp_path / "targets.jsonl"
    path.write_text(
        "\n".join(
            [
                target_line(
                    "q1", {"q1.0": {"count": 6, "answers": ["dog", "puppy"]}, "q1.1": {"count": 4, "answers": ["cat"]}}
                ),
                target_line("q2", {"q2.0": {"count": 5, "answers": ["tea"]}}),
            ]
        )
        + "\n"
    )
    return path


def test_missing_predictions_score_zero_with_warning(targets_file):
    targets = read_targets(targets_file)
    with pytest.warns(ProtoQAWarning, match=r"1 question\(s\) have no predictions and score 0: q2"):
        r = evaluate_predictions(targets, {"q1": ["dog"]}, "exact_match")
    assert r.num_questions == 2 and r.missing == ["q2"]
    assert r.scores["max_answers@all"] == pytest.approx((0.6 + 0.0) / 2)
    with pytest.warns(ProtoQAWarning, match="left out of the means"):
        r = evaluate_predictions(targets, {"q1": ["dog"]}, "exact_match", only_predicted=True)
    assert r.num_questions == 1 and r.scores["max_answers@all"] == pytest.approx(0.6)
    assert "missing:skip" in r.signature


def test_unknown_prediction_ids_are_an_error_unless_ignored(targets_file):
    targets = read_targets(targets_file)
    preds = {"q1": ["dog"], "q2": ["tea"], "zz9": ["x"]}
    with pytest.raises(DataFormatError, match="not in the targets: zz9"):
        evaluate_predictions(targets, preds, "exact_match")
    with pytest.warns(
        ProtoQAWarning, match=r"ignored predictions for 1 question id\(s\) that are not in the targets: zz9"
    ):
        r = evaluate_predictions(targets, preds, "exact_match", ignore_unknown=True)
    assert r.ignored == ["zz9"] and r.scores["max_answers@all"] == pytest.approx(0.8)


def test_zero_total_question_left_out_never_nan():
    qs = [
        Question("a", "", (Cluster("a.0", ("x",), 0),)),
        Question("b", "", (Cluster("b.0", ("y",), 2),)),
        Question("t", "", ()),
    ]
    with pytest.warns(ProtoQAWarning, match=r"left out 2 question\(s\) whose clusters total 0: a, t"):
        r = evaluate_predictions(qs, {"a": ["x"], "b": ["y"]}, "exact_match")
    assert r.num_questions == 1 and r.skipped == ["a", "t"]
    assert all(v == 1.0 for v in r.scores.values())


def test_non_string_answers_in_memory_are_rejected():
    qs = [Question("a", "", (Cluster("a.0", ("x",), 1),))]
    with pytest.raises(DataFormatError, match="question 'a': answers must be strings"):
        evaluate_predictions(qs, {"a": ["x", None]}, "exact_match")
    with pytest.raises(DataFormatError, match="question 'a': answers must be a list"):
        evaluate_predictions(qs, {"a": "x"}, "exact_match")


def test_empty_strings_and_duplicates_are_legal():
    qs = [Question("a", "", (Cluster("a.0", ("x",), 3), Cluster("a.1", ("",), 1)))]
    r = evaluate_predictions(qs, {"a": ["x", "x", ""]}, "exact_match")
    assert r.scores["max_answers@all"] == 1.0
    assert r.per_question["a"]["max_answers@all"].assignment == ("a.0", None, "a.1")


def test_results_are_deterministic(shared_data):
    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    preds = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    first = evaluate_predictions(targets, preds, "wordnet")
    second = evaluate_predictions(dict(reversed(list(targets.items()))), dict(reversed(list(preds.items()))), "wordnet")
    assert first.scores == second.scores
    assert first.signature == second.signature


def test_the_character_similarities_score_unrounded_and_sign():
    clusters = [Cluster("c0", ("colour",), 4), Cluster("c1", ("dog",), 1)]
    r = evaluate_predictions([Question("q", "", tuple(clusters))], {"q": ["color"]}, "jaro_winkler", ["max_answers@1"])
    assert r.signature.startswith("sim:jaro_winkler|")
    assert 0.0 < r.scores["max_answers@1"] < 1.0


def test_wup_question_example_matches_the_reference():
    clusters = (Cluster("q.0", ("someone algebra",), 10), Cluster("q.1", ("cat",), 5))
    r = evaluate_predictions([Question("q", "", clusters)], {"q": ["person giraffe"]}, "wordnet_wup", ["max_answers@1"])
    expected = reference_question_score(
        ["person giraffe"], [(("someone algebra",), 10), (("cat",), 5)], reference_wup_similarity, max_answers=1
    )
    assert r.scores["max_answers@1"] == expected == 0.0


def test_no_string_of_the_data_is_approximated(shared_data):
    from protoqa_metric import read_predictions, read_targets

    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    predictions = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximationWarning)
        result = evaluate_predictions(targets, predictions, "wordnet")
    assert "approx" not in result.signature


def test_the_500_token_case_is_bounded_named_and_signed():
    rng = random.Random(0)
    answer = " ".join(rng.choice(["dog", "cat", "car"]) for _ in range(500))
    clusters = (Cluster("q7.0", (answer,), 3), Cluster("q7.1", ("bird",), 1))
    prediction = "dog cat car dog cat car dog cat car dog cat car d"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = evaluate_predictions([Question("q7", "", clusters)], {"q7": [prediction]}, "wordnet", ["max_answers@1"])
    messages = [str(w.message) for w in caught]
    assert any("q7" in m and "q7.0" in m and "lower bound" in m for m in messages), messages
    assert "|approx:1|" in r.signature
    assert r.scores["max_answers@1"] == 1.0  # 0.857 or more rounds to 1 either way


def test_the_metrics_asked_are_all_kept_once_whatever_iterable_holds_them():
    from protoqa_metric.metric_set import MetricSpec

    names = ["max_answers@1", "max_answers@3"]
    assert [m.name for m in ProtoQA("exact_match", iter(names)).metrics] == names  # the first is not lost
    assert [m.name for m in ProtoQA("exact_match", (n for n in names)).metrics] == names
    with pytest.raises(ValueError, match="metric 'a' is given twice"):
        ProtoQA("exact_match", [MetricSpec("a", max_answers=1), MetricSpec("a", max_answers=3)])
