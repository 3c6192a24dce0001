"""What both training hooks share: logged metric names, the hook options read, sampled answers scored,
and how a question's samples are asked of the one sampler (checked here with the sampler replaced;
the hooks run a real tiny model in test_hooks.py)."""

from __future__ import annotations

import math
import re

import pytest

from protoqa_core.io.records import Cluster, Question
from protoqa_integrations.generation import sampling
from protoqa_integrations.generation.prompts import prompt_for
from protoqa_integrations.generation.settings import (
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROTOQA_NUM_SAMPLES,
    PromptSamples,
)
from protoqa_integrations.training.samples import (
    PROBEVAL_KEY,
    finetuned_prompt,
    metric_key,
    probeval_function,
    probeval_with_human_clusters,
    sample_answers,
    sample_question_answers,
    score_sampled_answers,
    similarity_names,
)
from protoqa_metric.metric_set import PAPER_METRICS

PET = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
FRUIT = Question("q2", "name a fruit", (Cluster("q2.0", ("apple",), 7), Cluster("q2.1", ("banana",), 3)))


def test_every_paper_metric_gets_a_distinct_name_every_logger_accepts():
    keys = [metric_key(similarity, m.name) for similarity in ("wordnet", "exact_match") for m in PAPER_METRICS]
    assert len(set(keys)) == len(keys) == 2 * len(PAPER_METRICS)
    assert all(re.fullmatch(r"[a-z0-9_]+", key) for key in keys), keys
    assert metric_key("exact_match", "max_incorrect@5", prefix="eval_protoqa") == (
        "eval_protoqa_exact_match_max_incorrect_at_5"
    )


def test_the_default_prompt_is_the_finetuned_style():
    assert finetuned_prompt("Name something you take to the beach.") == prompt_for(
        "Name something you take to the beach.", "finetuned"
    )


def test_similarity_names_take_one_name_or_several_and_refuse_none():
    assert similarity_names(["wordnet", "exact_match"]) == ("wordnet", "exact_match")
    assert similarity_names(("exact_match",)) == ("exact_match",)
    with pytest.raises(ValueError, match="give at least one similarity"):
        similarity_names([])


def test_the_probeval_option_reads_true_false_none_or_a_function():
    def own(questions, samples):
        return 0.5

    assert probeval_function(True) is probeval_with_human_clusters
    assert probeval_function(False) is None and probeval_function(None) is None
    assert probeval_function(own) is own
    for wrong in ("yes", 1, 0.0):
        with pytest.raises(TypeError, match=f"probeval must be True, False or a function .* got {wrong!r}"):
            probeval_function(wrong)


def test_probeval_with_human_clusters_is_zero_for_the_human_distribution_and_checks_lengths():
    assert (
        probeval_with_human_clusters([PET, FRUIT], [["dog"] * 6 + ["cat"] * 4, ["apple"] * 7 + ["banana"] * 3]) == 0.0
    )
    off = probeval_with_human_clusters([PET], [["cat"] * 9 + ["dog"]])
    assert off > probeval_with_human_clusters([PET], [["cat"] * 5 + ["dog"] * 5]) > 0
    with pytest.raises(ValueError, match="1 sample lists for 2 questions"):
        probeval_with_human_clusters([PET, FRUIT], [["dog"]])


def test_answers_are_ranked_by_how_often_they_were_sampled():
    # "cat" drawn twice ranks above "dog" drawn once: one answer scores cat's 4 of the best 6.
    scores = score_sampled_answers(
        [PET], [["dog", "cat", "cat", ""]], similarity="exact_match", metrics=["max_answers@1"]
    )
    assert scores == {"protoqa_exact_match_max_answers_at_1": pytest.approx(4 / 6)}


def test_each_similarity_logs_its_own_scores_and_probeval_is_added_once():
    seen = []

    def own(questions, samples):
        seen.append(([q.id for q in questions], samples))
        return 0.25

    scores = score_sampled_answers(
        [PET, FRUIT],
        [("dogs", "dogs"), ["banana"]],
        similarity=["wordnet", "exact_match"],
        metrics=["max_answers@1"],
        probeval=own,
    )
    assert scores == {
        "protoqa_wordnet_max_answers_at_1": pytest.approx((1.0 + 3 / 7) / 2),  # WordNet: "dogs" is "dog"
        "protoqa_exact_match_max_answers_at_1": pytest.approx((0.0 + 3 / 7) / 2),
        PROBEVAL_KEY: 0.25,
    }
    assert seen == [(["q1", "q2"], [["dogs", "dogs"], ["banana"]])]  # lists, repeats kept, once for all
    with_human = score_sampled_answers([PET], [["dog"] * 6 + ["cat"] * 4], similarity="exact_match", probeval=True)
    assert with_human[PROBEVAL_KEY] == 0.0 and len(with_human) == len(PAPER_METRICS) + 1


def test_an_infinite_probeval_is_reported_but_nan_is_refused():
    assert (
        score_sampled_answers(
            [PET], [["dog"]], similarity="exact_match", metrics=["max_answers@1"], probeval=lambda q, s: math.inf
        )[PROBEVAL_KEY]
        == math.inf
    )
    with pytest.raises(ValueError, match="the ProbEval function returned NaN"):
        score_sampled_answers([PET], [["dog"]], similarity="exact_match", probeval=lambda q, s: float("nan"))


class FakeSampler:
    """Stands in for the sampler: records what it is asked, answers with the prompt's position."""

    def __init__(self, skip: int = -1) -> None:
        self.calls: list[tuple[list[str], object, dict]] = []
        self.skip = skip

    def __call__(self, model, tokenizer, prompts, config, **options):
        self.calls.append((list(prompts), config, options))
        return [
            PromptSamples(i, skipped="the prompt is longer than the context")
            if i == self.skip
            else PromptSamples(i, [f"t{i}"] * config.num_samples, [f"a{i}"] * config.num_samples)
            for i in range(len(prompts))
        ]


def test_one_question_is_sampled_under_its_seed_with_the_paper_settings(monkeypatch):
    fake = FakeSampler()
    monkeypatch.setattr(sampling, "sample_prompts", fake)
    assert sample_question_answers("model", "tokenizer", "Name a pet", num_samples=4, seed=9) == ["a0"] * 4
    ((prompts, config, options),) = fake.calls
    assert prompts == [finetuned_prompt("Name a pet")] and options == {"seeds": [9]}
    assert (config.num_samples, config.seed, config.top_k) == (4, 9, 0)
    assert (config.top_p, config.temperature, config.max_new_tokens) == (PAPER_TOP_P, PAPER_TEMPERATURE, 10)


def test_several_questions_share_one_sampler_call_and_keep_their_own_prompt_function(monkeypatch):
    fake = FakeSampler()
    monkeypatch.setattr(sampling, "sample_prompts", fake)
    answers = sample_answers("m", "t", ["Name a pet", "Name a fruit"], seed=3, prompt_fn=str.upper, top_p=0.5)
    assert answers == [["a0"] * PROTOQA_NUM_SAMPLES, ["a1"] * PROTOQA_NUM_SAMPLES]
    ((prompts, config, options),) = fake.calls
    assert prompts == ["NAME A PET", "NAME A FRUIT"] and options == {}  # question i under seed + i
    assert (config.seed, config.top_p, config.top_k, config.batch_size) == (3, 0.5, 0, 100)


def test_a_question_the_sampler_skips_is_an_error_naming_the_question(monkeypatch):
    monkeypatch.setattr(sampling, "sample_prompts", FakeSampler(skip=1))
    with pytest.raises(
        ValueError, match="cannot sample answers to 'Name a fruit': the prompt is longer than the context"
    ):
        sample_answers("m", "t", ["Name a pet", "Name a fruit"], num_samples=2)
    monkeypatch.setattr(sampling, "sample_prompts", FakeSampler(skip=0))
    with pytest.raises(ValueError, match="cannot sample answers to 'Name a pet': the prompt is longer"):
        sample_question_answers("m", "t", "Name a pet", num_samples=2)
