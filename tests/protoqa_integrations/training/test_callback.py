"""The evaluation callback's own work, without transformers: which questions each evaluation gets,
the seeds they are sampled under, how processes share them, and what reaches the metrics and the
logger. The sampler is replaced by one that records its calls; a real Trainer runs the callback in
test_hooks.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from protoqa_core.io.records import Cluster, Question
from protoqa_integrations.training import callback
from protoqa_integrations.training.callback import ProtoQAEvalCallbackBase

PET = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
FRUIT = Question("q2", "name a fruit", (Cluster("q2.0", ("apple",), 7), Cluster("q2.1", ("banana",), 3)))
DRINK = Question("q3", "name a drink", (Cluster("q3.0", ("water",), 5),))
ANSWERS = {"name a pet": ["cat", "dog", "cat"], "name a fruit": ["apple"], "name a drink": ["tea", "water", "water"]}


@pytest.fixture
def sampler(monkeypatch):
    """The sampler replaced: returns ANSWERS for a question and records (question, seed)."""
    calls = []

    def sample(model, tokenizer, question, *, seed, **sampling):
        calls.append((question, seed))
        return list(ANSWERS[question])

    monkeypatch.setattr(callback, "sample_question_answers", sample)
    monkeypatch.setattr(callback, "_process_rank_and_count", lambda: (0, 1))
    return calls


class Trainer:
    def __init__(self) -> None:
        self.logged: list[dict] = []

    def log(self, scores: dict) -> None:
        self.logged.append(scores)


def step(n: int) -> SimpleNamespace:
    return SimpleNamespace(global_step=n)


@pytest.mark.parametrize(
    ("questions", "options", "error", "message"),
    [
        ([], {}, ValueError, "no questions to evaluate"),
        ({"dev": [PET], "test": []}, {}, ValueError, "no questions to evaluate of eval set 'test'"),
        ([Question("t1", "name a pet", ())], {}, ValueError, "needs answer clusters"),
        ({"dev": [PET], "": [FRUIT]}, {}, TypeError, "eval set names must be non-empty strings, got ''"),
        ([PET], {"similarity": []}, ValueError, "give at least one similarity"),
        ([PET], {"probeval": "yes"}, TypeError, "probeval must be True, False or a function"),
    ],
)
def test_bad_options_are_refused_when_the_callback_is_made(questions, options, error, message):
    with pytest.raises(error, match=message):
        ProtoQAEvalCallbackBase(questions, **options)


def test_questions_come_in_every_accepted_form_and_in_order():
    assert ProtoQAEvalCallbackBase({"q2": FRUIT, "q1": PET}).questions == [FRUIT, PET]
    sets = ProtoQAEvalCallbackBase({"dev": [PET, FRUIT], "other": [DRINK]})
    assert list(sets.question_sets) == ["dev", "other"] and sets.questions == [PET, FRUIT, DRINK]
    row = {"id": "q1", "question": "name a pet", "clusters": {"answers": [["dog"], ["cat"]], "count": [6, 4]}}
    assert ProtoQAEvalCallbackBase([row]).questions[0].clusters[1].answers == ("cat",)


def test_question_i_is_sampled_under_seed_plus_i_and_scored(sampler):
    hook = ProtoQAEvalCallbackBase([PET, FRUIT, DRINK], seed=7, similarity="exact_match", metrics=["max_answers@1"])
    scores = hook.evaluate_model("model", "tokenizer")
    assert sampler == [("name a pet", 7), ("name a fruit", 8), ("name a drink", 9)]
    assert scores == {"protoqa_exact_match_max_answers_at_1": pytest.approx((4 / 6 + 1 + 1) / 3)}
    assert hook.last_samples == {"q1": ANSWERS["name a pet"], "q2": ["apple"], "q3": ANSWERS["name a drink"]}
    assert hook.ranked_predictions() == {"q1": ["cat", "dog"], "q2": ["apple"], "q3": ["water", "tea"]}
    with pytest.raises(KeyError, match="no questions for eval set 'dev'; the callback has: none"):
        hook.evaluate_model("model", "tokenizer", "dev")


def test_each_process_samples_every_world_size_th_question_and_all_get_the_same_scores(sampler, monkeypatch):
    others = {0: ["dog"], 2: ["water"]}  # what process 0 drew, handed over by the gather
    monkeypatch.setattr(callback, "_process_rank_and_count", lambda: (1, 2))
    monkeypatch.setattr(callback, "_all_gather", lambda mine, world: [others, mine])
    hook = ProtoQAEvalCallbackBase([PET, FRUIT, DRINK], seed=40, similarity="exact_match", metrics=["max_answers@1"])
    scores = hook.evaluate_model("model", "tokenizer")
    assert sampler == [("name a fruit", 41)]  # this process's share only, under the question's own seed
    assert hook.last_samples == {"q1": ["dog"], "q2": ["apple"], "q3": ["water"]}
    assert scores["protoqa_exact_match_max_answers_at_1"] == pytest.approx(1.0)


def test_scores_join_the_metrics_under_the_trainer_prefix_and_are_logged_once_per_step(sampler):
    trainer = Trainer()
    hook = ProtoQAEvalCallbackBase([PET], similarity="exact_match", metrics=["max_answers@1"]).bind(trainer)
    metrics = {"eval_loss": 2.0, "eval_runtime": 0.1}
    hook.on_evaluate(None, step(10), None, metrics=metrics, model="m", processing_class="tok")
    assert metrics["eval_protoqa_exact_match_max_answers_at_1"] == pytest.approx(4 / 6)
    assert trainer.logged == [{"eval_protoqa_exact_match_max_answers_at_1": pytest.approx(4 / 6)}]
    test_metrics = {"test_runtime": 0.1}
    hook.on_evaluate(None, step(10), None, metrics=test_metrics, model="m", processing_class="tok")
    assert len(sampler) == 1 and "test_protoqa_exact_match_max_answers_at_1" in test_metrics  # same step: no resample
    hook.on_evaluate(None, step(10), None, metrics={"eval_runtime": 0.1}, model="m", processing_class="tok")
    assert len(trainer.logged) == 2  # eval and test logged, eval not twice
    hook.on_evaluate(None, step(20), None, metrics={"eval_runtime": 0.1}, model="m", processing_class="tok")
    assert len(sampler) == 2 and len(trainer.logged) == 3


def test_each_eval_set_gets_its_own_questions_and_an_unknown_one_a_single_warning(sampler):
    hook = ProtoQAEvalCallbackBase({"dev": [PET], "eval_dev": [FRUIT], "other": [DRINK]}, similarity="exact_match")
    hook.bind(Trainer())
    metrics = {"eval_dev_runtime": 0.1}
    hook.on_evaluate(None, step(1), None, metrics=metrics, model="m", processing_class="tok")
    assert sampler == [("name a fruit", 42)]  # "eval_dev" is both sets' name: the longest matching one wins
    hook.on_evaluate(None, step(1), None, metrics={"test_dev_runtime": 0.1}, model="m", processing_class="tok")
    assert sampler[-1] == ("name a pet", 42)
    unknown = {"eval_train_runtime": 0.1}
    with pytest.warns(UserWarning, match="has no questions for the evaluation 'eval_train'"):
        hook.on_evaluate(None, step(1), None, metrics=unknown, model="m", processing_class="tok")
    hook.on_evaluate(None, step(2), None, metrics=unknown, model="m", processing_class="tok")  # warned once
    assert unknown == {"eval_train_runtime": 0.1} and len(sampler) == 2


def test_an_unbound_callback_warns_once_and_a_missing_tokenizer_or_model_is_an_error(sampler):
    hook = ProtoQAEvalCallbackBase([PET], similarity="exact_match", metrics=["max_answers@1"])
    with pytest.raises(ValueError, match="needs a tokenizer: pass it, or give the Trainer processing_class="):
        hook.on_evaluate(None, step(1), None, metrics={}, model="m")
    with pytest.raises(ValueError, match="got no model from the Trainer"):
        hook.on_evaluate(None, step(1), None, metrics={}, processing_class="tok")
    with pytest.warns(UserWarning, match="is not bound to the Trainer"):
        hook.on_evaluate(None, step(1), None, metrics={}, model="m", processing_class="tok")
    hook.on_evaluate(None, step(2), None, metrics={}, model="m", processing_class="tok")  # no second warning
    own = ProtoQAEvalCallbackBase([PET], "own tokenizer", similarity="exact_match", metrics=["max_answers@1"])
    own.bind(Trainer()).on_evaluate(None, step(1), None, metrics={}, model="m", processing_class="trainer's")
    assert sampler[-1] == ("name a pet", 42)
