"""The paired ProbEval comparison: the sign of the difference, the shared questions only, and the
seeded bootstrap."""

from __future__ import annotations

import inspect

import pytest

from cfc_probeval.cli import parse_args
from cfc_probeval.compare import compare_probeval
from cfc_probeval.inputs import QuestionTargets
from cfc_probeval.probeval import ProbEval
from protoqa_core.io.records import Cluster
from protoqa_core.significance import DEFAULT_RESAMPLES, DEFAULT_SEED

TARGETS = {
    f"q{i}": QuestionTargets(f"q{i}", (Cluster(f"q{i}.0", ("dog",), 6), Cluster(f"q{i}.1", ("cat",), 4)))
    for i in range(12)
}
GOOD = {q: ["dog"] * 6 + ["cat"] * 4 for q in TARGETS}
BAD = {q: ["dog"] * 2 + ["car"] * 8 for q in TARGETS}


def test_the_difference_is_a_minus_b_so_the_closer_system_gives_a_negative_one():
    human = ProbEval("human")
    forward = compare_probeval(TARGETS, GOOD, BAD, human, resamples=200)
    backward = compare_probeval(TARGETS, BAD, GOOD, human, resamples=200)
    assert forward.difference.mean < 0 < backward.difference.mean
    assert forward.difference.mean == pytest.approx(-backward.difference.mean)


def test_different_question_sets_are_refused_unless_only_the_common_questions_are_compared():
    human = ProbEval("human")
    partial = {q: GOOD[q] for q in list(TARGETS)[:5]}
    with pytest.raises(ValueError, match="a lacks 7 question"):
        compare_probeval(TARGETS, partial, BAD, human, resamples=200)
    result = compare_probeval(TARGETS, partial, BAD, human, resamples=200, only_common=True)
    subset = {q: TARGETS[q] for q in partial}
    whole = compare_probeval(subset, partial, {q: BAD[q] for q in partial}, human, resamples=200)
    assert result.difference == whole.difference and result.num_questions == 5
    assert "|missing:skip|n:5|n_samples:10|" in result.signature and "|missing:wrong|n:5|" in whole.signature
    with pytest.raises(ValueError, match="share no question"):
        compare_probeval(TARGETS, {"q0": GOOD["q0"]}, {"q1": BAD["q1"]}, human)


def test_different_sample_counts_are_refused_unless_accepted_and_then_marked():
    human = ProbEval("human")
    fewer = {q: ["dog"] * 3 + ["cat"] * 2 for q in TARGETS}
    with pytest.raises(ValueError, match=r"different sample counts \(a: 10 per question, b: 5\)"):
        compare_probeval(TARGETS, GOOD, fewer, human, resamples=200)
    accepted = compare_probeval(TARGETS, GOOD, fewer, human, resamples=200, accept_samples=True)
    assert accepted.num_samples == (10, 5)
    assert "|n_samples:10,5|" in accepted.signature and accepted.signature.endswith("|accepted-mismatch:samples")


def test_the_bootstrap_is_seeded():
    human = ProbEval("human")
    assert compare_probeval(TARGETS, GOOD, BAD, human, resamples=200, seed=3) == compare_probeval(
        TARGETS, GOOD, BAD, human, resamples=200, seed=3
    )


def _raw_cfc_dev(shared_data, questions: int = 10):
    """The first CFC dev questions as raw answers without clusters, and GPT-2 XL's and the humans' samples."""
    import json

    from cfc_probeval.inputs import read_targets

    truths = list(read_targets(shared_data / "cfc" / "dev.targets.jsonl").values())[:questions]
    raw = {t.question_id: QuestionTargets(t.question_id, (), dict(t.answer_counts)) for t in truths}
    systems = []
    for name in ("dev.predictions.gpt2-xl.oneshot.json", "dev.predictions.human.json"):
        document = json.loads((shared_data / "cfc" / name).read_text(encoding="utf-8"))
        samples = document.get("model_answers", document)
        systems.append({qid: samples[qid] for qid in raw})
    return raw, systems


def test_a_seeded_clustering_is_redrawn_with_the_resamples(shared_data):
    from cfc_probeval.compare import CLUSTERING_DRAWS

    targets, (gpt2, human) = _raw_cfc_dev(shared_data)
    seeded = ProbEval("gmeans", embedder="char-ngrams", seed=3)
    result = compare_probeval(targets, gpt2, human, seeded, resamples=300, accept_samples=True)
    assert result.clustering_draws == CLUSTERING_DRAWS and "|clustering_draws:5" in result.signature
    # The means are over the clusterings at seeds 3 to 7, each scored as ProbEval scores it alone.
    alone = [ProbEval("gmeans", embedder="char-ngrams", seed=s).evaluate(targets, gpt2).kl for s in range(3, 8)]
    assert result.mean_a == pytest.approx(sum(alone) / len(alone))
    one = compare_probeval(targets, gpt2, human, seeded, resamples=300, draws=1, accept_samples=True)
    assert one.clustering_draws == 1 and "clustering_draws" not in one.signature
    assert one.mean_a == pytest.approx(alone[0])
    # A clustering that reads no seed is scored once, and its signature names no seed.
    greedy = compare_probeval(
        targets, gpt2, human, ProbEval("gmeans", embedder="char-ngrams", init="greedy"), accept_samples=True
    )
    assert greedy.clustering_draws == 1 and "init=greedy" in greedy.signature and "seed=" not in greedy.signature


def test_the_bootstrap_defaults_are_the_core_s_in_the_library_and_on_the_command_line():
    defaults = inspect.signature(compare_probeval).parameters
    args = parse_args(["compare", "t.jsonl", "a.json", "b.json"])
    assert defaults["resamples"].default == args.resamples == DEFAULT_RESAMPLES
    assert defaults["seed"].default == args.seed == DEFAULT_SEED
