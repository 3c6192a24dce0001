"""The ProtoQA paper's RoBERTa similarity, on a tiny random RoBERTa built here (no download).

Checks the mechanics: vector shapes and the answer-token mean, the GP regression and its
repetition, the threshold, the exact-string rule, determinism, the signature, the
same numbers from the library, the command line and the ``evaluate`` module, and the
error naming ``--encoder`` when the default encoder cannot be had offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.lazy import lazy_import, require

torch = lazy_import("torch")
transformers = lazy_import("transformers")
require("tokenizers")

from protoqa_core.io.records import Cluster, Question  # noqa: E402
from protoqa_core.similarity.embedding import ContextEncoder, ModelLocation, model_revision  # noqa: E402
from protoqa_core.similarity.gaussian_process import fit_one_vs_all  # noqa: E402
from protoqa_core.similarity.roberta import RobertaSimilarity  # noqa: E402
from protoqa_metric import ProtoQA  # noqa: E402
from tests.support.tiny_roberta import build_tiny_roberta  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return str(build_tiny_roberta(tmp_path_factory.mktemp("models") / "tiny-roberta"))


def pet_question(raw=None) -> Question:
    clusters = (Cluster("q.0", ("dog", "puppy"), 6), Cluster("q.1", ("cat", "kitten"), 4))
    return Question(
        "q",
        "name a pet",
        clusters,
        raw_answers=raw if raw is not None else {"dog": 5, "puppy": 1, "cat": 3, "kitten": 1},
    )


def test_answer_vectors_average_the_answer_tokens_only(tiny):
    encoder = ContextEncoder(tiny)
    vectors = encoder.embed("name a pet", ["dog", "cat", "dog", ""])
    assert vectors.shape == (4, 16) and vectors.dtype == np.float64
    assert np.array_equal(vectors[0], vectors[2]) and encoder.num_embedded == 3
    assert not vectors[3].any()  # no token of its own: the zero vector
    # By hand: the last layer over "<s>name a pet dog</s>", the mean of the three letters of "dog".
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(tiny), AutoModel.from_pretrained(tiny)
    ids = tokenizer("name a pet dog", return_tensors="pt")
    with torch.no_grad():
        hidden = model(**ids).last_hidden_state[0].double()
    assert np.allclose(vectors[0], hidden[-4:-1].mean(dim=0).numpy(), atol=5.1e-5)  # rounded to 4 decimals
    # The question changes the vectors: they are contextual.
    assert not np.allclose(ContextEncoder(tiny).embed("name a fruit", ["dog"])[0], vectors[0])


def test_long_strings_are_cut_and_counted(tiny):
    encoder = ContextEncoder(tiny)
    vectors = encoder.embed("why " * 500, ["dog " * 500, "cat"])
    assert vectors.shape == (2, 16) and np.isfinite(vectors).all()
    assert encoder.num_cut == 2  # the question and the long answer


def test_repetition_equals_repeated_rows():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(4, 3))
    members = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=bool)
    counts = [3, 1, 2, 1]
    collapsed = fit_one_vs_all(vectors, members, counts=counts, alpha=0.1)
    repeated = fit_one_vs_all(np.repeat(vectors, counts, axis=0), np.repeat(members, counts, axis=0), alpha=0.1)
    test = rng.normal(size=(5, 3))
    assert np.allclose(collapsed.scores(test), repeated.scores(test), atol=1e-10)
    # With noise, repetition pulls the fit towards the answers given most often.
    once = fit_one_vs_all(vectors, members, alpha=0.1)
    assert not np.allclose(once.scores(test), collapsed.scores(test))


def test_regression_scores_and_a_single_cluster():
    members = np.array([[True], [True]])
    model = fit_one_vs_all(np.array([[0.0, 0.0], [0.0, 0.5]]), members)
    near, far = model.scores(np.array([[0.0, 0.25], [9.0, 9.0]]))[:, 0]
    assert near > 0.5 and abs(far) < 1e-6  # a single cluster is learnt too; far away falls to 0
    with pytest.raises(ValueError, match="unknown Gaussian-process model"):
        fit_one_vs_all(np.zeros((1, 1)), members[:1], model="svm")


def test_matrix_threshold_exact_strings_and_determinism(tiny):
    sim = RobertaSimilarity(tiny)
    question = pet_question()
    predictions = ["dog", "kitten", "puppies", "a pet dog", "zebra crossing"]
    scores = sim.scores(question, predictions)
    assert scores.shape == (5, 2)
    matrix, cut = sim.matrix(question, predictions)
    assert cut == [] and set(np.unique(matrix)) <= {0.0, 1.0}
    assert matrix[0].tolist() == [1.0, 0.0] and matrix[1].tolist() == [0.0, 1.0]  # identical strings
    assert sim.threshold == 0.6
    for i in range(2, 5):  # the best cluster when its score passes the threshold, else none
        best = scores[i].max()
        expected = (scores[i] == best).astype(float) if best > sim.threshold else np.zeros(2)
        assert matrix[i].tolist() == expected.tolist()
    # Threshold above every score: only identical strings match.
    strict = RobertaSimilarity(tiny, threshold=float(scores.max()) + 1.0)
    assert strict.matrix(question, predictions)[0][2:].sum() == 0
    # Determinism: a fresh instance, and the predictions in another order.
    again = RobertaSimilarity(tiny)
    assert np.array_equal(again.scores(question, predictions), scores)
    assert np.array_equal(again.matrix(question, predictions[::-1])[0], matrix[::-1])


def test_signature_names_the_encoder_revision_and_settings(tiny):
    sim = RobertaSimilarity(tiny)
    assert sim.revision == model_revision(ModelLocation(tiny, "local")) and sim.revision.startswith("sha256:")
    assert sim.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:median*0.5,thr=0.6)"
    # The default follows the encoder's scale; the papers' fixed 1 and every other rule have their own label.
    assert sim.length_scale == "median*0.5" == RobertaSimilarity(tiny, length_scale="median*0.50").length_scale
    papers = RobertaSimilarity(tiny, length_scale=1)
    assert papers.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:l=1,thr=0.6)" != sim.label
    assert RobertaSimilarity(tiny, length_scale="median").label.endswith(",gp-rbf:median,thr=0.6)")
    assert RobertaSimilarity(tiny, threshold=0.1).label.endswith(",gp-rbf:median*0.5,thr=0.1)")
    fitted = RobertaSimilarity(tiny, length_scale="fit")
    assert fitted.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:fit,thr=0.6)"
    other = RobertaSimilarity(tiny, length_scale=2.5)
    assert other.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:l=2.5,thr=0.6)"
    question = pet_question()
    predictions = ["puppies", "a pet dog", "kitten"]
    assert np.array_equal(
        RobertaSimilarity(tiny, length_scale="median*0.5").scores(question, predictions),
        sim.scores(question, predictions),
    )
    assert not np.array_equal(fitted.scores(question, predictions), sim.scores(question, predictions))
    assert not np.array_equal(papers.scores(question, predictions), sim.scores(question, predictions))
    for bad in ("auto", "median*0", "median*-1", "median*x", 0, float("nan"), True):
        with pytest.raises(ValueError, match="length scale must be a positive number, 'fit', 'median'"):
            RobertaSimilarity(tiny, length_scale=bad)
    assert RobertaSimilarity(tiny, threshold=0.3, repetition=False, context=False).label.endswith(
        "thr=0.3,distinct,no-question)"
    )
    protoqa = ProtoQA("roberta", encoder=tiny)
    result = protoqa.evaluate([pet_question()], {"q": ["cat", "dog"]})
    assert result.signature.startswith(f"sim:{sim.label}|metrics:standard|")
    assert result.scores["max_answers@1"] == 4 / 6 and result.scores["max_answers@all"] == 1.0
    # Without crowd counts, every string counts once, and the signature says so.
    with pytest.warns(UserWarning, match="no crowd counts"):
        bare = protoqa.evaluate([pet_question(raw={})], {"q": ["cat", "dog"]})
    assert "|uncounted:1|" in bare.signature


def test_the_question_text_is_needed(tiny):
    with pytest.raises(ValueError, match="needs the Question"):
        ProtoQA("roberta", encoder=tiny).score_question(list(pet_question().clusters), ["dog"])
    nameless = Question("q", "", pet_question().clusters)
    with pytest.raises(Exception, match="question 'q'.*no text"):
        ProtoQA("roberta", encoder=tiny).score_question(nameless, ["dog"])
    with pytest.raises(ValueError, match="roberta similarity only"):
        ProtoQA("wordnet", encoder=tiny)


def _run_cli(args, cwd, **env):
    environment = {**os.environ, "PYTHONPATH": str(REPO), **env}
    return subprocess.run(
        [sys.executable, "-m", "protoqa_metric", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _write_data(folder: Path) -> tuple[Path, Path]:
    targets = folder / "targets.jsonl"
    rows = [
        {
            "metadata": {"id": "q1"},
            "question": {"normalized": "name a pet"},
            "answers": {
                "raw": {"dog": 5, "puppy": 1, "cat": 3, "kitten": 1},
                "clusters": {
                    "q1.0": {"count": 6, "answers": ["dog", "puppy"]},
                    "q1.1": {"count": 4, "answers": ["cat", "kitten"]},
                },
            },
        },
        {
            "metadata": {"id": "q2"},
            "question": {"normalized": "name a fruit"},
            "answers": {
                "raw": {"apple": 7, "pear": 2},
                "clusters": {"q2.0": {"count": 7, "answers": ["apple"]}, "q2.1": {"count": 2, "answers": ["pear"]}},
            },
        },
    ]
    targets.write_text("".join(json.dumps(r) + "\n" for r in rows))
    predictions = folder / "predictions.json"
    predictions.write_text(json.dumps({"q1": ["Kitten", "puppies", "goldfish"], "q2": ["pears", "apple"]}))
    return targets, predictions


@pytest.mark.slow
def test_cli_library_and_evaluate_module_agree(tiny, tmp_path):
    targets, predictions = _write_data(tmp_path)
    run = _run_cli([str(targets), str(predictions), "--similarity", "roberta", "--encoder", tiny, "--json"], tmp_path)
    assert run.returncode == 0, run.stderr
    from_cli = json.loads(run.stdout)
    from protoqa_core.io.predictions import read_predictions
    from protoqa_core.io.readers import read_targets

    library = ProtoQA("roberta", encoder=tiny).evaluate(read_targets(targets), read_predictions(predictions))
    assert from_cli == library.as_dict()

    evaluate = pytest.importorskip("evaluate")
    import protoqa_metric

    module = evaluate.load(protoqa_metric.evaluate_module_path(), "roberta")
    questions = read_targets(targets)
    result = module.compute(
        predictions=[list(v) for v in json.loads(predictions.read_text()).values()],
        references=[[{"answers": list(c.answers), "count": c.count} for c in q.clusters] for q in questions.values()],
        question_ids=list(questions),
        questions=[q.question for q in questions.values()],
        raw_answers=[dict(q.raw_answers) for q in questions.values()],
        encoder=tiny,
    )
    assert {k: v for k, v in result.items() if k not in ("signature", "exact_match_only")} == library.scores
    assert result["signature"] == library.signature
    assert result["exact_match_only"] is library.exact_match_only is from_cli["exact_match_only"]
    with pytest.raises(ValueError, match="pass questions="):
        module.compute(predictions=[["dog"]], references=[[{"answers": ["dog"], "count": 1}]], encoder=tiny)


def test_offline_without_roberta_base_names_the_override(tmp_path):
    targets, predictions = _write_data(tmp_path)
    run = _run_cli(
        [str(targets), str(predictions), "--similarity", "roberta"],
        tmp_path,
        HF_HUB_OFFLINE="1",
        HF_HUB_CACHE=str(tmp_path / "empty-cache"),
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1
    assert "the encoder roberta-base was not found" in run.stderr and "--encoder" in run.stderr
    wrong = _run_cli([str(targets), str(predictions), "--encoder", "x"], tmp_path)
    assert wrong.returncode == 2 and "--similarity roberta only" in wrong.stderr


def test_an_encoder_folder_without_a_model_or_asking_for_remote_code_is_one_line_naming_encoder(tmp_path, tiny):
    targets, predictions = _write_data(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    remote = tmp_path / "remote"
    shutil.copytree(tiny, remote)
    config = json.loads((remote / "config.json").read_text())
    (remote / "config.json").write_text(json.dumps({**config, "auto_map": {"AutoModel": "modeling.Custom"}}))
    no_weights = tmp_path / "no-weights"
    shutil.copytree(tiny, no_weights)
    for weights in no_weights.glob("*.safetensors"):
        weights.unlink()
    expected = {empty: "holds no model (no config.json)", remote: "asks to run the model's own code", no_weights: ""}
    for folder, reason in expected.items():
        run = _run_cli(
            [str(targets), str(predictions), "--similarity", "roberta", "--encoder", str(folder)],
            tmp_path,
            HF_HUB_OFFLINE="1",
        )
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        assert run.stderr.count("\n") == 1, run.stderr
        assert "--encoder" in run.stderr and reason in run.stderr, run.stderr


def test_gp_matcher_keeps_its_classifier_and_takes_the_papers_regression():
    from cfc_probeval.embedders import CharNgramEmbedder
    from cfc_probeval.matching import GPMatcher

    clusters = [["evening", "night time", "late evening"], ["morning", "breakfast", "early morning"]]
    default = GPMatcher(CharNgramEmbedder(), threshold=0.1)
    assert default.params() == {"threshold": 0.1, "seed": 0} and default.model == "classification"
    regression = GPMatcher(CharNgramEmbedder(), threshold=0.1, model="regression")
    assert regression.params()["model"] == "regression"
    scores = regression.cluster_probabilities(["evening", "breakfasts"], clusters)
    assert scores.shape == (2, 2) and scores[0, 0] > 0.9 and scores[1].argmax() == 1
    with pytest.raises(ValueError, match="unknown Gaussian-process model"):
        GPMatcher(CharNgramEmbedder(), model="svm")


def test_the_space_adds_a_roberta_column_when_an_encoder_is_set(tiny, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "space"))
    import demo_answers
    import demo_render
    import demo_scoring
    import demo_settings

    question = pet_question()
    monkeypatch.delenv(demo_settings.ROBERTA_ENCODER_ENV, raising=False)
    assert demo_scoring.space_similarities() == ("exact_match", "wordnet")
    monkeypatch.setenv(demo_settings.ROBERTA_ENCODER_ENV, tiny)
    scores = demo_scoring.protoqa_scores(question, ["cat", "dog"])
    assert scores.scores["roberta"]["max_answers@1"] == 4 / 6 and scores.claims["roberta"][:2] == ("q.1", "q.0")
    assert scores.signatures["roberta"].startswith("sim:roberta(tiny-roberta@")
    result = demo_scoring.score_answers("protoqa", question, demo_answers.answers_from_samples(["dog"] * 3, "test"))
    assert "RoBERTa" in demo_render.scores_html(result)


def test_the_matching_study_has_a_roberta_arm_at_the_papers_threshold(tiny, shared_data):
    from studies.validation.matching_study import ROBERTA_THRESHOLD, run_matching_study

    result = run_matching_study(shared_data, matchers=["exact_match", "roberta"], num_questions=3, encoder=tiny)
    arm = result["matchers"]["roberta"]
    assert arm["threshold"] == ROBERTA_THRESHOLD == 0.1 and arm["tuned"] is False
    assert arm["similarity"].startswith("roberta(tiny-roberta@") and arm["questions_covered"] == 3
    # Identical strings go to their cluster first, so recall is at least exact matching's.
    assert arm["weighted"]["recall"] >= result["matchers"]["exact_match"]["weighted"]["recall"]
    assert arm["by_threshold_in_sample"]["0.1"] == {k: arm["weighted"][k] for k in ("precision", "recall", "f1")}
    with pytest.raises(ValueError, match="needs an encoder"):
        run_matching_study(shared_data, matchers=["roberta"], num_questions=1)


def test_a_similarity_that_matches_only_identical_strings_says_so(tiny, tmp_path):
    question = pet_question()
    predictions = {"q": ["kittens", "dog", "zebra"]}
    # A length scale far below every distance: the regression is 0 away from the training strings.
    blind = ProtoQA("roberta", encoder=tiny)
    blind._per_question = RobertaSimilarity(tiny, length_scale=1e-9)
    with pytest.warns(UserWarning, match=r"sent none of the 2 predictions that are not a cluster string"):
        result = blind.evaluate([question], predictions)
    assert result.exact_match_only is True and result.as_dict()["exact_match_only"] is True
    exact = ProtoQA("exact_match").evaluate([question], predictions)
    assert result.scores == exact.scores and "exact_match_only" not in exact.as_dict()
    # The counters start again for the next evaluation: all predictions identical says nothing.
    assert blind.evaluate([question], {"q": ["dog"]}).exact_match_only is False
    # A rule that matches a near string gives no warning (the tiny random model needs the paper's low threshold).
    import warnings

    permissive = ProtoQA("roberta", encoder=tiny)
    permissive._per_question = RobertaSimilarity(tiny, threshold=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        matched = permissive.evaluate([question], {"q": ["puppies", "a pet dog"]})
    assert matched.exact_match_only is False


def test_the_command_line_warns_when_roberta_is_exact_match(tiny, tmp_path):
    targets, predictions = _write_data(tmp_path)
    run = _run_cli([str(targets), str(predictions), "--similarity", "roberta", "--encoder", tiny, "--json"], tmp_path)
    assert run.returncode == 0, run.stderr
    default = json.loads(run.stdout)
    assert default["exact_match_only"] is ("exact match" in run.stderr)  # the field and the warning say the same
    exact = _run_cli([str(targets), str(predictions), "--similarity", "exact_match", "--json"], tmp_path)
    assert exact.returncode == 0 and "exact_match_only" not in json.loads(exact.stdout)
    # A length scale far below every distance: only identical strings match, and the command says so.
    args = [str(targets), str(predictions), "--similarity", "roberta", "--encoder", tiny, "--json"]
    blind = _run_cli([*args, "--length-scale", "1e-9"], tmp_path)
    assert blind.returncode == 0, blind.stderr
    result = json.loads(blind.stdout)
    assert result["exact_match_only"] is True and "gp-rbf:l=1e-09" in result["signature"]
    assert "warning: the roberta similarity" in blind.stderr and "scored as exact match" in blind.stderr
    exact_scores = json.loads(exact.stdout)
    assert {k: v for k, v in result.items() if k.startswith("max_")} == {
        k: v for k, v in exact_scores.items() if k.startswith("max_")
    }
    bad = _run_cli([*args, "--length-scale", "median*0"], tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "length scale must be" in bad.stderr
    other = _run_cli([str(targets), str(predictions), "--length-scale", "1"], tmp_path)
    assert other.returncode == 2 and "--length-scale is used by --similarity roberta only" in other.stderr


@pytest.mark.slow
def test_the_length_scale_is_chosen_on_folds_and_reported_held_out(tiny, shared_data, tmp_path):
    from studies.validation.matching_study import run_length_scale_study, run_matching_study

    rules = (1.0, "median*0.5", "median")
    result = run_length_scale_study(shared_data, tiny, rules=rules, num_questions=4, folds=2)
    assert result["rules"] == ["1", "median*0.5", "median"] and result["chosen"] in result["rules"]
    assert set(result["roberta_held_out"]["fold_rules"]) == {"0", "1"}
    per_rule = result["rules_in_sample"]
    assert result["roberta_held_out"]["similarity"] == per_rule[result["chosen"]]["similarity"]
    assert per_rule["median*0.5"]["similarity"].endswith(",gp-rbf:median*0.5,thr=0.1)")
    assert per_rule["1"]["similarity"].endswith(",gp-rbf:l=1,thr=0.1)")
    for figures in per_rule.values():
        assert 0 <= figures["non_identical_accepted"] <= figures["non_identical_answers"] > 0
    # The chosen rule has the best in-sample F1 of all (ties: the earlier rule).
    f1s = [per_rule[r]["in_sample"]["weighted"]["f1"] for r in result["rules"]]
    assert result["chosen"] == result["rules"][f1s.index(max(f1s))]
    baseline = run_matching_study(shared_data, matchers=["exact_match"], num_questions=4, folds=2)
    assert result["exact_match"]["weighted"] == baseline["matchers"]["exact_match"]["weighted"]
    assert result["within_cluster_distance"]["pairs"] > 0 and result["within_cluster_distance"]["median"] > 0
    with pytest.raises(ValueError, match="repeat"):
        run_length_scale_study(shared_data, tiny, rules=("median", "median*1"), num_questions=1)
    run = subprocess.run(
        [sys.executable, "-m", "studies.validation.matching_study", "--choose-length-scale"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and "--choose-length-scale needs --encoder" in run.stderr
