"""The ``roberta`` similarity through the metric: ``ProtoQA``, the command line and the ``evaluate``
module, on a tiny random RoBERTa built here (no download). The similarity itself is tested in
tests/protoqa_core/similarity/test_roberta.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from protoqa_core.io.records import Question
from protoqa_core.similarity.roberta import RobertaSimilarity
from protoqa_metric import ProtoQA
from tests.support.processes import run_python
from tests.support.tiny_roberta import pet_question, require_roberta

require_roberta()

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[2]


def test_the_metric_signs_with_the_similarity_label_and_counts(tiny_roberta):
    sim = RobertaSimilarity(tiny_roberta)
    protoqa = ProtoQA("roberta", encoder=tiny_roberta)
    result = protoqa.evaluate([pet_question()], {"q": ["cat", "dog"]})
    assert result.signature.startswith(f"sim:{sim.label}|metrics:standard|")
    assert result.scores["max_answers@1"] == 4 / 6 and result.scores["max_answers@all"] == 1.0
    # Without crowd counts, every string counts once, and the signature says so.
    with pytest.warns(UserWarning, match="no crowd counts"):
        bare = protoqa.evaluate([pet_question(raw={})], {"q": ["cat", "dog"]})
    assert "|uncounted:1|" in bare.signature


def test_the_question_text_is_needed(tiny_roberta):
    with pytest.raises(ValueError, match="needs the Question"):
        ProtoQA("roberta", encoder=tiny_roberta).score_question(list(pet_question().clusters), ["dog"])
    nameless = Question("q", "", pet_question().clusters)
    with pytest.raises(Exception, match="question 'q'.*no text"):
        ProtoQA("roberta", encoder=tiny_roberta).score_question(nameless, ["dog"])
    with pytest.raises(ValueError, match="roberta similarity only"):
        ProtoQA("wordnet", encoder=tiny_roberta)


def _run_cli(args, cwd, **env):
    environment = {**os.environ, "PYTHONPATH": str(REPO), **env}
    return run_python(["-m", "protoqa_metric", *args], cwd, environment, timeout=300)


def _roberta_run(encoder: str, folder: Path) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """The data written in ``folder`` and the command line's ``--json`` run on it with the roberta similarity and
    ``encoder``, checked to end with status 0."""
    targets, predictions = _write_data(folder)
    args = [str(targets), str(predictions), "--similarity", "roberta", "--encoder", encoder, "--json"]
    run = _run_cli(args, folder)
    assert run.returncode == 0, run.stderr
    return targets, predictions, run


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
def test_cli_library_and_evaluate_module_agree(tiny_roberta, tmp_path):
    targets, predictions, run = _roberta_run(tiny_roberta, tmp_path)
    from_cli = json.loads(run.stdout)
    from protoqa_core.io.predictions import read_predictions
    from protoqa_core.io.readers import read_targets

    library = ProtoQA("roberta", encoder=tiny_roberta).evaluate(read_targets(targets), read_predictions(predictions))
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
        encoder=tiny_roberta,
    )
    assert {k: v for k, v in result.items() if k not in ("signature", "exact_match_only")} == library.scores
    assert result["signature"] == library.signature
    assert result["exact_match_only"] is library.exact_match_only is from_cli["exact_match_only"]
    with pytest.raises(ValueError, match="pass questions="):
        module.compute(predictions=[["dog"]], references=[[{"answers": ["dog"], "count": 1}]], encoder=tiny_roberta)


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


@pytest.mark.slow
def test_an_encoder_folder_without_a_model_or_asking_for_remote_code_is_one_line_naming_encoder(tmp_path, tiny_roberta):
    targets, predictions = _write_data(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    remote = tmp_path / "remote"
    shutil.copytree(tiny_roberta, remote)
    config = json.loads((remote / "config.json").read_text())
    (remote / "config.json").write_text(json.dumps({**config, "auto_map": {"AutoModel": "modeling.Custom"}}))
    no_weights = tmp_path / "no-weights"
    shutil.copytree(tiny_roberta, no_weights)
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


def test_a_similarity_that_matches_only_identical_strings_says_so(tiny_roberta, tmp_path):
    question = pet_question()
    predictions = {"q": ["kittens", "dog", "zebra"]}
    # A length scale far below every distance: the regression is 0 away from the training strings.
    blind = ProtoQA("roberta", encoder=tiny_roberta)
    blind._per_question = RobertaSimilarity(tiny_roberta, length_scale=1e-9)
    with pytest.warns(UserWarning, match=r"sent none of the 2 predictions that are not a cluster string"):
        result = blind.evaluate([question], predictions)
    assert result.exact_match_only is True and result.as_dict()["exact_match_only"] is True
    exact = ProtoQA("exact_match").evaluate([question], predictions)
    assert result.scores == exact.scores and "exact_match_only" not in exact.as_dict()
    # The counters start again for the next evaluation: all predictions identical says nothing.
    assert blind.evaluate([question], {"q": ["dog"]}).exact_match_only is False
    # A rule that matches a near string gives no warning (the tiny_roberta random model needs the paper's low threshold).
    import warnings

    permissive = ProtoQA("roberta", encoder=tiny_roberta)
    permissive._per_question = RobertaSimilarity(tiny_roberta, threshold=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="the roberta setting of this result")
        matched = permissive.evaluate([question], {"q": ["puppies", "a pet dog"]})
    assert matched.exact_match_only is False


def test_a_rule_not_measured_with_its_encoder_is_marked_in_the_signature_and_warned_of(tiny_roberta):
    question = pet_question()
    metric = ProtoQA("roberta", encoder=tiny_roberta)
    with pytest.warns(
        UserWarning, match=r"roberta setting of this result \(tiny-roberta@.*\) was not validated.*similarity-controls"
    ) as seen:
        result = metric.evaluate([question], {"q": ["dog", "kittens"]})
    assert sum("not validated" in str(w.message) for w in seen) == 1  # one warning per result
    assert result.signature.startswith("sim:roberta(tiny-roberta@") and ",unvalidated)|" in result.signature


def test_the_command_line_warns_when_roberta_is_exact_match(tiny_roberta, tmp_path):
    targets, predictions, run = _roberta_run(tiny_roberta, tmp_path)
    default = json.loads(run.stdout)
    assert default["exact_match_only"] is ("exact match" in run.stderr)  # the field and the warning say the same
    exact = _run_cli([str(targets), str(predictions), "--similarity", "exact_match", "--json"], tmp_path)
    assert exact.returncode == 0 and "exact_match_only" not in json.loads(exact.stdout)
    # A length scale far below every distance: only identical strings match, and the command says so.
    args = [str(targets), str(predictions), "--similarity", "roberta", "--encoder", tiny_roberta, "--json"]
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
