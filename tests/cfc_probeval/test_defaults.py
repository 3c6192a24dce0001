"""ProbEval's defaults: human clusters when the targets carry them, else the automatic default;
the signature says which ran; cluster counts per question; every surface resolves the same way."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest

from cfc_probeval import (
    AUTO,
    DEFAULTS,
    ProbEval,
    evaluate_probeval,
    has_human_clusters,
    read_targets,
    resolve_clustering,
    targets_from_raw_answers,
    targets_from_reference,
)
from cfc_probeval.cli import main
from cfc_probeval.clustering import GMeansClusterer, HACClusterer, XMeansClusterer
from cfc_probeval.embedders import CharNgramEmbedder
from cfc_probeval.inputs import QuestionTargets
from protoqa_core.io.records import Cluster, Question

PETS = QuestionTargets(
    "pets",
    (Cluster("pets.0", ("dog", "puppy"), 6), Cluster("pets.1", ("cat", "kitten"), 4)),
    {"dog": 5, "puppy": 1, "cat": 3, "kitten": 1},
)
DRINKS = QuestionTargets(
    "drinks",
    (Cluster("drinks.0", ("tea",), 3), Cluster("drinks.1", ("coffee",), 1), Cluster("drinks.2", ("juice",), 1)),
    {"tea": 3, "coffee": 1, "juice": 1},
)
SAMPLES = {"pets": ["dog"] * 5 + ["cat"] * 3 + ["banana"] * 2, "drinks": ["tea", "tea", "juice"]}
GMEANS = "gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)"


def raw(truth: QuestionTargets) -> QuestionTargets:
    """The same answers without their clusters."""
    return QuestionTargets(truth.question_id, (), dict(truth.answer_counts))


def test_the_defaults_are_the_validation_studys_choice():
    assert (DEFAULTS.clustering, GMeansClusterer.option("k_init").default, DEFAULTS.embedder, DEFAULTS.matching) == (
        "gmeans",
        8,
        "minilm",
        "wordnet",
    )
    assert (DEFAULTS.cosine_threshold, DEFAULTS.gp_threshold) == (0.6, 0.4)
    # Kept, so that an explicitly chosen HAC or X-means gives the numbers it gave before.
    assert HACClusterer.option_values() == {"linkage": "complete", "distance_threshold": 0.3}
    assert XMeansClusterer.option_values() == {"k_init": 16, "k_max": 20, "seed": 0}
    import cfc_probeval.defaults as module

    assert "reports/validation.md" in module.__doc__ and "Automatic default" in module.__doc__
    assert "reports/clusters.md" in module.__doc__ and "protocol.toml" in module.__doc__
    assert ProbEval().clustering_name == AUTO == "auto"


def test_what_carries_human_clusters():
    assert has_human_clusters(PETS) and not has_human_clusters(raw(PETS))
    row = targets_from_reference({"answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}, "q1")
    assert has_human_clusters(row)
    q = Question("q2", "name a pet", (), raw_answers={"dog": 3, "cat": 1})
    assert not has_human_clusters(targets_of(q))
    assert not has_human_clusters(targets_from_raw_answers({"dog": 3, "cat": 1}, "q3"))


def targets_of(question: Question) -> QuestionTargets:
    from cfc_probeval.inputs import targets_from_question

    return targets_from_question(question)


def test_resolution_of_auto():
    assert resolve_clustering("auto", [PETS, DRINKS]) == "human"
    assert resolve_clustering("auto", [raw(PETS), raw(DRINKS)]) == DEFAULTS.clustering
    # Questions without any answer are left out whatever the clustering; they do not decide.
    assert resolve_clustering("auto", [PETS, QuestionTargets("empty", ())]) == "human"
    assert resolve_clustering("auto", []) == "human"
    for name in ("human", "hac", "xmeans", "gmeans"):
        assert resolve_clustering(name, [raw(PETS)]) == name
    with pytest.raises(ValueError, match=r"1 of 2 question\(s\) have raw answers without human clusters: drinks"):
        resolve_clustering("auto", [PETS, raw(DRINKS)])


def test_default_uses_human_clusters_with_the_same_numbers_as_human():
    auto = evaluate_probeval([PETS, DRINKS], SAMPLES)
    human = evaluate_probeval([PETS, DRINKS], SAMPLES, clustering="human")
    assert auto.per_question == human.per_question and auto.kl == human.kl
    assert auto.signature == human.signature.replace("clustering:human|", "clustering:auto->human|")
    assert auto.clusters_per_question == auto.human_clusters_per_question == 2.5
    assert auto.as_dict()["clusters_per_question"] == 2.5 and auto.as_dict()["human_clusters_per_question"] == 2.5


def test_default_clusters_raw_answers_automatically_as_the_forced_clustering_does():
    emb = CharNgramEmbedder()
    auto = evaluate_probeval([raw(PETS), raw(DRINKS)], SAMPLES, embedder=emb)
    forced = evaluate_probeval([raw(PETS), raw(DRINKS)], SAMPLES, clustering="gmeans", embedder=emb)
    assert auto.per_question == forced.per_question
    assert auto.signature.startswith(f"clustering:auto->{GMEANS}|embedder:char-ngrams:3x256|matching:wordnet")
    assert forced.signature == auto.signature.replace("clustering:auto->", "clustering:")
    assert auto.human_clusters_per_question is None and auto.clusters_per_question >= 1
    # Forcing an automatic clustering on references that have human clusters reports both counts.
    both = evaluate_probeval([PETS, DRINKS], SAMPLES, clustering="gmeans", embedder=emb)
    assert both.human_clusters_per_question == 2.5
    assert both.clusters_per_question == sum(len(q.clusters) - 1 for q in both.questions.values()) / 2


def test_mixed_references_are_refused_until_a_clustering_is_named():
    with pytest.raises(ValueError, match='pass clustering="human" to leave them out'):
        evaluate_probeval([PETS, raw(DRINKS)], SAMPLES)
    with pytest.warns(UserWarning, match="without target answers or human clusters: drinks"):
        human = evaluate_probeval([PETS, raw(DRINKS)], SAMPLES, clustering="human")
    assert human.num_questions == 1 and human.skipped == ["drinks"]


def test_clustering_options_need_a_named_clustering():
    with pytest.raises(ValueError, match="with clustering auto the targets decide the clustering"):
        ProbEval(k_init=2)
    with pytest.raises(ValueError, match="unknown clustering 'kmeans'; choose one of auto, human, hac"):
        ProbEval("kmeans")


def test_one_auto_configuration_serves_both_kinds_of_references_and_keeps_its_caches():
    pe = ProbEval(embedder=CharNgramEmbedder())
    human = pe.evaluate([PETS, DRINKS], SAMPLES)
    automatic = pe.evaluate([raw(PETS), raw(DRINKS)], SAMPLES)
    assert human.signature.startswith("clustering:auto->human|")
    assert automatic.signature.startswith("clustering:auto->gmeans(")
    assert pe.resolved([PETS]) is pe.resolved([DRINKS])
    assert pe.resolved([PETS]).matcher is pe.matcher  # one WordNet cache
    # score_question decides per question.
    assert pe.score_question(PETS, {"dog": 6, "cat": 4}).clusters[0].id == "pets.0"
    assert pe.score_question(raw(PETS), {"dog": 6, "cat": 4}).clusters[0].id.startswith("pets.auto")


def test_human_clusters_with_wordnet_load_no_embedding_model():
    pe = ProbEval()
    result = pe.evaluate([PETS], {"pets": SAMPLES["pets"]})
    assert pe.embedder is None and result.stats["strings_embedded"] == 0
    assert "|embedder:none|" in result.signature


@pytest.fixture
def files(tmp_path):
    def targets(name, with_clusters):
        path = tmp_path / name
        lines = []
        for t in (PETS, DRINKS):
            answers = {"raw": {a: int(n) for a, n in t.answer_counts.items()}}
            if with_clusters:
                answers["clusters"] = {c.id: {"count": c.count, "answers": list(c.answers)} for c in t.clusters}
            lines.append(
                json.dumps({"metadata": {"id": t.question_id}, "question": {"normalized": "q?"}, "answers": answers})
            )
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    samples = tmp_path / "samples.json"
    samples.write_text(json.dumps(SAMPLES), encoding="utf-8")
    return targets("clustered.jsonl", True), targets("raw.jsonl", False), samples


def test_cli_default_is_auto_and_reports_cluster_counts(files, capsys):
    clustered, raw_file, samples = files
    assert main([str(clustered), str(samples), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    library = evaluate_probeval(read_targets(clustered), SAMPLES)
    assert out["kl"] == library.kl and out["signature"] == library.signature
    assert out["signature"].startswith("clustering:auto->human|")
    assert out["clusters_per_question"] == out["human_clusters_per_question"] == 2.5

    assert main([str(raw_file), str(samples), "--embedder", "char-ngrams"]) == 0
    text = capsys.readouterr().out
    assert "clustering:auto->gmeans(" in text
    assert "clusters per question: " in text and "human clusters" not in text

    assert main([str(clustered), str(samples), "--clustering", "gmeans", "--embedder", "char-ngrams"]) == 0
    text = capsys.readouterr().out
    assert "(human clusters: 2.5)" in text and "signature: clustering:gmeans(" in text


def test_cli_refuses_clustering_options_with_auto_in_one_line(files, capsys):
    clustered, _, samples = files
    assert main([str(clustered), str(samples), "--k-init", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "name one (e.g. gmeans)" in err


def test_cli_compare_resolves_auto(files, tmp_path, capsys):
    clustered, _, samples = files
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"pets": ["cat"] * 10, "drinks": ["coffee"] * 3}), encoding="utf-8")
    assert main(["compare", str(clustered), str(samples), str(other), "--json", "--resamples", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["signature"].startswith("clustering:auto->human|") and out["kl_a"] < out["kl_b"]


def test_cli_help_names_auto():
    done = subprocess.run(
        [sys.executable, "-m", "cfc_probeval", "evaluate", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0
    assert "{auto,human,hac,xmeans,gmeans}" in done.stdout and "auto (default)" in done.stdout


def test_evaluate_module_resolves_auto_from_the_references(monkeypatch, tmp_path):
    evaluate = pytest.importorskip("evaluate")
    import cfc_probeval

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    module = evaluate.load(cfc_probeval.evaluate_module_path())
    ids = ["pets", "drinks"]
    predictions = [SAMPLES[q] for q in ids]
    clusters = [
        {"answers": [list(c.answers) for c in t.clusters], "count": [c.count for c in t.clusters]}
        for t in (PETS, DRINKS)
    ]
    raw_rows = [
        {"answer": list(t.answer_counts), "count": [int(n) for n in t.answer_counts.values()]} for t in (PETS, DRINKS)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        human = module.compute(predictions=predictions, references=clusters, question_ids=ids)
        automatic = module.compute(
            predictions=predictions, references=raw_rows, question_ids=ids, embedder="char-ngrams"
        )
    library_human = evaluate_probeval([PETS, DRINKS], SAMPLES)
    library_auto = evaluate_probeval([raw(PETS), raw(DRINKS)], SAMPLES, embedder=CharNgramEmbedder())
    assert human["signature"] == library_human.signature and human["kl"] == pytest.approx(library_human.kl, abs=1e-12)
    assert human["clusters_per_question"] == human["human_clusters_per_question"] == 2.5
    assert automatic["signature"] == library_auto.signature
    assert automatic["kl"] == pytest.approx(library_auto.kl, abs=1e-12)
    assert automatic["human_clusters_per_question"] is None
    with pytest.raises(ValueError, match="the reference is already raw answers"):
        module.compute(predictions=predictions, references=raw_rows, raw_answers=raw_rows)
    cosine = evaluate.load(cfc_probeval.evaluate_module_path(), "auto-cosine")
    out = cosine.compute(predictions=predictions, references=clusters, embedder="char-ngrams")
    assert out["signature"].startswith(
        "clustering:auto->human|embedder:char-ngrams:3x256|matching:cosine(threshold=0.6)"
    )
