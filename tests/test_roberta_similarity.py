"""The ProtoQA paper's RoBERTa similarity, on a tiny random RoBERTa built here (no download).

Checks the mechanics: vector shapes and the answer-token mean, the GP regression and its
repetition, the threshold, the exact-string rule, determinism, the signature, the
same numbers from the library, the command line and the ``evaluate`` module, and the
error naming ``--encoder`` when the default encoder cannot be had offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from protoqa_core.embedding import ContextEncoder, ModelLocation, model_revision  # noqa: E402
from protoqa_core.gaussian_process import fit_one_vs_all  # noqa: E402
from protoqa_core.readers import Cluster, Question  # noqa: E402
from protoqa_core.roberta_similarity import RobertaSimilarity  # noqa: E402
from protoqa_metric import ProtoQA  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[1]


def _byte_alphabet() -> list[str]:
    """GPT-2's byte-level alphabet (printable bytes as themselves, the others moved past 255)."""
    printable = set(range(33, 127)) | set(range(161, 173)) | set(range(174, 256))
    out, shifted = [], 0
    for b in range(256):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(256 + shifted))
            shifted += 1
    return out


def build_tiny_roberta(folder: Path) -> Path:
    """A random RoBERTa (16 dimensions, one layer) with a byte-level tokenizer without merges."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    vocab = {t: i for i, t in enumerate(specials)}
    for ch in _byte_alphabet():
        vocab.setdefault(ch, len(vocab))
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True)
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=300,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )
    RobertaModel(config).save_pretrained(folder)
    return folder


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
    assert np.allclose(vectors[0], hidden[-4:-1].mean(dim=0).numpy(), atol=1e-6)
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
    for i in range(2, 5):  # the best cluster when its score passes 0.1, else none
        best = scores[i].max()
        expected = (scores[i] == best).astype(float) if best > 0.1 else np.zeros(2)
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
    assert sim.label == f"roberta(tiny-roberta@{sim.revision},gp-rbf,thr=0.1)"
    # The default is the paper's fixed length scale 1; every other choice has its own label.
    assert sim.length_scale == 1.0 and RobertaSimilarity(tiny, length_scale=1).label == sim.label
    fitted = RobertaSimilarity(tiny, length_scale="fit")
    assert fitted.label == f"roberta(tiny-roberta@{sim.revision},gp-rbf:fit,thr=0.1)"
    other = RobertaSimilarity(tiny, length_scale=2.5)
    assert other.label == f"roberta(tiny-roberta@{sim.revision},gp-rbf:l=2.5,thr=0.1)"
    question = pet_question()
    predictions = ["puppies", "a pet dog", "kitten"]
    assert np.array_equal(
        RobertaSimilarity(tiny, length_scale=1.0).scores(question, predictions), sim.scores(question, predictions)
    )
    assert not np.array_equal(fitted.scores(question, predictions), sim.scores(question, predictions))
    with pytest.raises(ValueError, match="length scale must be 'fit' or a positive number"):
        RobertaSimilarity(tiny, length_scale="auto")
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
    from protoqa_core.readers import read_predictions, read_targets

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
    assert {k: v for k, v in result.items() if k != "signature"} == library.scores
    assert result["signature"] == library.signature
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
