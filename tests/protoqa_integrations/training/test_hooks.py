"""compute_metrics, the evaluation callback and the fine-tuning example, with a tiny random GPT-2."""

from __future__ import annotations

import copy
import importlib.util
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.support.lazy import lazy_import, require

torch = lazy_import("torch")
transformers = lazy_import("transformers")
require("accelerate")  # the Trainer needs it


from protoqa_core.ranking import rank_by_frequency  # noqa: E402
from protoqa_integrations.generation.prompts import generation_prompt, training_line  # noqa: E402
from protoqa_integrations.training import hooks  # noqa: E402  (the callback class is made, with transformers, when read)
from protoqa_integrations.training.hooks import decode_answers, make_compute_metrics  # noqa: E402
from protoqa_integrations.training.samples import (  # noqa: E402
    PROBEVAL_KEY,
    metric_key,
    sample_answers,
    sample_question_answers,
    score_sampled_answers,
)
from protoqa_metric import Cluster, Question, evaluate_predictions  # noqa: E402
from tests.support.metric_names import PAPER_KEYS  # noqa: E402
from tests.support.tiny_lm import tiny_gpt2 as build_model  # noqa: E402
from tests.support.tiny_lm import word_tokenizer as build_tokenizer  # noqa: E402 (after the importorskip calls above)
from tests.support.training_rows import generating_trainer, pad_to_longest  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "data" / "protoqa"

QUESTIONS = (
    Question("q1", "name a pet", (Cluster("q1.0", ("dog", "puppy"), 6), Cluster("q1.1", ("cat",), 4))),
    Question(
        "q2",
        "name something you eat for breakfast",
        (Cluster("q2.0", ("eggs",), 5), Cluster("q2.1", ("toast", "bread"), 3), Cluster("q2.2", ("cereal",), 2)),
    ),
    Question("q3", "how can you tell it is winter", (Cluster("q3.0", ("snow",), 7), Cluster("q3.1", ("cold",), 3))),
)


def lines_of(questions):
    return [training_line(q.question, c.answers[0]) for q in questions for c in q.clusters]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer(lines_of(QUESTIONS) + [a for q in QUESTIONS for c in q.clusters for a in c.answers])


def ids(tokenizer, text):
    return tokenizer(text)["input_ids"]


@pytest.fixture(scope="module")
def fitted_model(tokenizer):
    """The tiny model after a few hundred milliseconds of fitting the training lines, so it answers."""
    model = build_model(tokenizer, seed=5)
    batch = pad_to_longest(
        [{"input_ids": ids(tokenizer, line) + [tokenizer.eos_token_id]} for line in lines_of(QUESTIONS)]
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(60):
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()
    model.eval()
    return model


# ---------------------------------------------------------------- no torch at import


def test_importing_the_package_and_module_needs_no_torch():
    code = (
        "import sys, protoqa_metric, protoqa_integrations.training.hooks, protoqa_integrations.generation.prompts; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_metric_key_is_safe_for_loggers():
    assert metric_key("wordnet", "max_answers@10") == "protoqa_wordnet_max_answers_at_10"
    assert metric_key("exact_match", "set_intersection") == "protoqa_exact_match_set_intersection"


# ---------------------------------------------------------------- compute_metrics


def expected_scores(questions, samples_by_id, similarity):
    ranked = {qid: rank_by_frequency(samples) for qid, samples in samples_by_id.items()}
    result = evaluate_predictions(list(questions), ranked, similarity, "paper")
    return {metric_key(similarity, name): value for name, value in result.scores.items()}


def left_pad(rows, pad_id):
    longest = max(len(r) for r in rows)
    return [[pad_id] * (longest - len(r)) + r for r in rows]


def concat_batches(batches, fill=-100):
    """What the Trainer does with per-batch arrays: right-pad to the longest with -100."""
    longest = max(len(r) for batch in batches for r in batch)
    return np.array([r + [fill] * (longest - len(r)) for batch in batches for r in batch])


def test_compute_metrics_decoder_only_matches_the_library(tokenizer):
    """Rows: q1 twice and q2, q3 once; two returned sequences per row; two eval batches."""
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    rows = [QUESTIONS[0], QUESTIONS[1], QUESTIONS[0], QUESTIONS[2]]
    continuations = [  # answer text per returned sequence, 2 per row
        ["dog .", "puppy"],
        ["toast . cat", ""],
        ["cat", "dog ."],
        ["snow", "snow ."],
    ]
    batches_inputs, batches_outputs = [], []
    for batch_rows in ([0, 1], [2, 3]):
        prompts = left_pad([ids(tokenizer, generation_prompt(rows[r].question)) for r in batch_rows], pad)
        outputs = []
        for r, prompt in zip(batch_rows, prompts, strict=True):
            for text in continuations[r]:
                outputs.append(prompt + ids(tokenizer, text) + [eos])
        longest = max(map(len, outputs))
        # generate() pads finished sequences with the pad id.
        batches_outputs.append([o + [pad] * (longest - len(o)) for o in outputs])
        batches_inputs.append(prompts)
    prediction = transformers.EvalPrediction(
        predictions=concat_batches(batches_outputs), label_ids=None, inputs=concat_batches(batches_inputs)
    )

    scores = make_compute_metrics(tokenizer, rows, similarity="wordnet")(prediction)

    samples = {"q1": ["dog", "puppy", "cat", "dog"], "q2": ["toast", ""], "q3": ["snow", "snow"]}
    assert scores == expected_scores(QUESTIONS, samples, "wordnet")
    assert set(scores) == {metric_key("wordnet", k) for k in PAPER_KEYS}


def test_compute_metrics_in_a_seq2seq_trainer_with_a_decoder_only_model(tokenizer, fitted_model, tmp_path):
    """Greedy generation through the Trainer scores like generating each prompt by hand."""

    model = fitted_model
    rows = [QUESTIONS[0], QUESTIONS[1], QUESTIONS[2], QUESTIONS[0]]
    prompts = [ids(tokenizer, generation_prompt(q.question)) for q in rows]
    dataset = [{"input_ids": p, "labels": p} for p in prompts]
    trainer = generating_trainer(
        model,
        tokenizer,
        dataset,
        lambda b: {k: torch.tensor([r[k] for r in b]) for k in b[0]},
        make_compute_metrics(tokenizer, rows, similarity="exact_match"),
        tmp_path / "s2s",
    )
    metrics = trainer.evaluate(max_new_tokens=4, do_sample=False)

    by_hand = {}
    for question, prompt in zip(rows, prompts, strict=True):
        output = model.generate(
            torch.tensor([prompt]),
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            max_new_tokens=4,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id,
        )
        by_hand.setdefault(question.id, []).extend(decode_answers(tokenizer, output.tolist(), [len(prompt)]))
    expected = expected_scores(QUESTIONS, by_hand, "exact_match")
    assert {k: metrics[f"eval_{k}"] for k in expected} == expected
    assert expected[metric_key("exact_match", "max_answers@1")] > 0  # the fitted model does answer


def test_compute_metrics_encoder_decoder_and_several_similarities(tokenizer):
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    texts = ["cat", "eggs .", "cold"]
    sequences = [[pad] + ids(tokenizer, t) + [eos] for t in texts]  # decoder start token first
    longest = max(map(len, sequences))
    predictions = np.array([s + [pad] * (longest - len(s)) for s in sequences])
    compute = make_compute_metrics(
        tokenizer, QUESTIONS, strip_prompt=False, similarity=["exact_match", "wordnet"], metrics="standard"
    )
    scores = compute(transformers.EvalPrediction(predictions=(predictions, None), label_ids=None))
    samples = {"q1": ["cat"], "q2": ["eggs"], "q3": ["cold"]}
    for similarity in ("exact_match", "wordnet"):
        ranked = {qid: rank_by_frequency(s) for qid, s in samples.items()}
        library = evaluate_predictions(list(QUESTIONS), ranked, similarity, "standard").scores
        for name, value in library.items():
            assert scores[metric_key(similarity, name)] == value


def test_compute_metrics_passes_grouped_samples_to_probeval(tokenizer):
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    seen = {}

    def share_of_samples_in_a_cluster(questions, samples):
        seen["ids"] = [q.id for q in questions]
        seen["samples"] = samples
        hits = [
            sum(any(s in c.answers for c in q.clusters) for s in ss) / len(ss)
            for q, ss in zip(questions, samples, strict=True)
        ]
        return sum(hits) / len(hits)

    rows = [QUESTIONS[2], QUESTIONS[0], QUESTIONS[2]]
    texts = ["snow", "toast", "."]
    sequences = [[pad] + ids(tokenizer, t) + [eos] for t in texts]
    longest = max(map(len, sequences))
    predictions = np.array([s + [pad] * (longest - len(s)) for s in sequences])
    compute = make_compute_metrics(
        tokenizer, rows, strip_prompt=False, similarity="exact_match", probeval=share_of_samples_in_a_cluster
    )
    scores = compute(transformers.EvalPrediction(predictions=predictions, label_ids=None))
    assert seen == {"ids": ["q3", "q1"], "samples": [["snow", ""], ["toast"]]}
    assert scores[PROBEVAL_KEY] == pytest.approx((0.5 + 0.0) / 2)


def test_probeval_true_uses_human_clusters(tokenizer):
    cfc_probeval = pytest.importorskip("cfc_probeval")
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    texts = ["dog", "cat .", "puppy", "eggs", "eggs", "cereal", "snow", "rain"]
    rows = [QUESTIONS[0]] * 3 + [QUESTIONS[1]] * 3 + [QUESTIONS[2]] * 2
    sequences = [[pad] + ids(tokenizer, t) + [eos] for t in texts]
    longest = max(map(len, sequences))
    predictions = np.array([s + [pad] * (longest - len(s)) for s in sequences])
    scores = make_compute_metrics(tokenizer, rows, strip_prompt=False, similarity="exact_match", probeval=True)(
        transformers.EvalPrediction(predictions=predictions, label_ids=None)
    )
    samples = {"q1": ["dog", "cat", "puppy"], "q2": ["eggs", "eggs", "cereal"], "q3": ["snow", ""]}
    direct = cfc_probeval.evaluate_probeval(list(QUESTIONS), samples, clustering="human", matching="wordnet")
    assert scores[PROBEVAL_KEY] == direct.kl
    assert math.isfinite(scores[PROBEVAL_KEY]) and scores[PROBEVAL_KEY] >= 0


@pytest.mark.parametrize(
    "name",
    [
        "protoqa_integrations.training.hooks",
        "protoqa_integrations.training.samples",
        "protoqa_integrations.training.callback",
    ],
)
def test_docstring_examples(name):
    import doctest

    if importlib.util.find_spec("cfc_probeval") is None:
        pytest.skip("cfc_probeval is not installed")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_compute_metrics_errors(tokenizer):
    predictions = np.array([[3, 4, 2], [3, 4, 2]])
    with pytest.raises(ValueError, match="include_for_metrics"):
        make_compute_metrics(tokenizer, QUESTIONS[:2])(
            transformers.EvalPrediction(predictions=predictions, label_ids=None)
        )
    with pytest.raises(ValueError, match="divide evenly"):
        make_compute_metrics(tokenizer, QUESTIONS, strip_prompt=False)(
            transformers.EvalPrediction(predictions=predictions, label_ids=None)
        )
    with pytest.raises(ValueError, match="token ids"):
        make_compute_metrics(tokenizer, QUESTIONS[:2], strip_prompt=False)(
            transformers.EvalPrediction(predictions=np.zeros((2, 3, 5)), label_ids=None)
        )
    with pytest.raises(ValueError, match="no questions"):
        make_compute_metrics(tokenizer, [])
    other_q1 = Question("q1", "another question", QUESTIONS[0].clusters)
    with pytest.raises(ValueError, match="share the id"):
        make_compute_metrics(tokenizer, [QUESTIONS[0], other_q1], strip_prompt=False)(
            transformers.EvalPrediction(predictions=predictions, label_ids=None)
        )


def test_decode_answers_skips_prompt_padding_and_stops_at_eos(tokenizer):
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    prompt = ids(tokenizer, "one pet is")
    sequence = [pad, pad] + prompt + ids(tokenizer, "dog . cat") + [eos] + ids(tokenizer, "cat") + [-100]
    assert decode_answers(tokenizer, [sequence], [2 + len(prompt)]) == ["dog"]
    assert decode_answers(tokenizer, [[eos, eos, pad]]) == [""]
    # After a prompt, a generated pad or eos ends the answer at once.
    assert decode_answers(tokenizer, [prompt + [pad] + ids(tokenizer, "cat")], [len(prompt)]) == [""]
    # Without one, an encoder-decoder's start token and padding are skipped.
    assert decode_answers(tokenizer, [[pad, pad] + ids(tokenizer, "cat") + [eos]]) == ["cat"]
    with pytest.raises(ValueError):
        decode_answers(tokenizer, [sequence], [1, 2])


def test_score_sampled_answers_checks_its_input():
    with pytest.raises(ValueError, match="sample lists"):
        score_sampled_answers(QUESTIONS, [["dog"]])
    with pytest.raises(ValueError, match="once"):
        score_sampled_answers([QUESTIONS[0], QUESTIONS[0]], [["dog"], ["cat"]])
    with pytest.raises(ValueError, match="NaN"):
        score_sampled_answers(QUESTIONS[:1], [["dog"]], similarity="exact_match", probeval=lambda q, s: math.nan)
    with pytest.raises(TypeError, match="probeval"):
        score_sampled_answers(QUESTIONS[:1], [["dog"]], probeval="yes")


# ---------------------------------------------------------------- sampling


def test_sampling_is_seeded_and_leaves_the_global_rng_alone(tokenizer):
    model = build_model(tokenizer)
    model.train()
    state = torch.random.get_rng_state()
    first = sample_answers(
        model, tokenizer, [q.question for q in QUESTIONS], num_samples=5, batch_size=2, max_new_tokens=4, seed=3
    )
    assert torch.equal(torch.random.get_rng_state(), state)
    assert model.training
    again = [
        sample_question_answers(model, tokenizer, q.question, num_samples=5, batch_size=2, max_new_tokens=4, seed=3 + i)
        for i, q in enumerate(QUESTIONS)
    ]
    assert again == first
    assert [len(s) for s in first] == [5, 5, 5]
    assert all(isinstance(a, str) and a == a.strip().lower() for s in first for a in s)
    other_seed = sample_answers(
        model, tokenizer, [q.question for q in QUESTIONS], num_samples=5, batch_size=2, max_new_tokens=4, seed=4
    )
    assert other_seed != first
    with pytest.raises(ValueError):
        sample_question_answers(model, tokenizer, "name a pet", num_samples=0)


# ---------------------------------------------------------------- the callback


def record_logs():
    """A callback that stands in for TensorBoard / W&B: keeps what reaches on_log (transformers imported here)."""

    class RecordLogs(transformers.TrainerCallback):
        def __init__(self):
            self.logs = []

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.logs.append(dict(logs))

    return RecordLogs()


def test_callback_logs_protoqa_scores_during_training(tokenizer, fitted_model, tmp_path):
    model = copy.deepcopy(fitted_model)
    rows = [{"input_ids": ids(tokenizer, line) + [tokenizer.eos_token_id]} for line in lines_of(QUESTIONS)]
    args = transformers.TrainingArguments(
        str(tmp_path / "run"),
        max_steps=4,
        eval_strategy="steps",
        eval_steps=2,
        logging_steps=1,
        per_device_train_batch_size=4,
        learning_rate=1e-3,
        save_strategy="no",
        report_to="none",
        seed=0,
        use_cpu=True,
        metric_for_best_model="protoqa_exact_match_max_answers_at_10",
    )
    recorder = record_logs()
    trainer = transformers.Trainer(
        model=model,
        args=args,
        train_dataset=rows,
        eval_dataset=rows,
        data_collator=pad_to_longest,
        processing_class=tokenizer,
        callbacks=[recorder],
    )
    callback = hooks.ProtoQAEvalCallback(
        QUESTIONS, num_samples=6, batch_size=4, max_new_tokens=4, similarity="exact_match", seed=1
    )
    trainer.add_callback(callback.bind(trainer))
    trainer.train()

    keys = {f"eval_{metric_key('exact_match', k)}" for k in PAPER_KEYS}
    logged = [log for log in recorder.logs if keys & set(log)]
    assert [log["epoch"] for log in logged] == [e["epoch"] for e in trainer.state.log_history if keys & set(e)]
    assert [e["step"] for e in trainer.state.log_history if keys & set(e)] == [2, 4]
    for log in logged:
        assert set(log) == keys | {"epoch"}
        assert all(math.isfinite(log[k]) and 0.0 <= log[k] <= 1.0 for k in keys)
    assert logged[-1][f"eval_{metric_key('exact_match', 'max_answers@10')}"] > 0  # the fitted model answers
    # What was logged last is the library's score of the samples kept by the callback.
    assert set(callback.last_samples) == {"q1", "q2", "q3"}
    assert all(len(s) == 6 for s in callback.last_samples.values())
    library = score_sampled_answers(
        QUESTIONS, [callback.last_samples[q.id] for q in QUESTIONS], similarity="exact_match"
    )
    assert {k: logged[-1][f"eval_{k}"] for k in library} == library
    assert trainer.state.best_metric == max(
        log[f"eval_{metric_key('exact_match', 'max_answers@10')}"] for log in logged
    )
    # A later evaluate() at the same step reuses the samples and returns the scores.
    metrics = trainer.evaluate()
    assert {k: metrics[f"eval_{k}"] for k in library} == library
    assert callback.ranked_predictions() == {qid: rank_by_frequency(s) for qid, s in callback.last_samples.items()}


def test_unbound_callback_adds_scores_and_warns(tokenizer, tmp_path):
    model = build_model(tokenizer)
    callback = hooks.ProtoQAEvalCallback(
        {q.id: q for q in QUESTIONS},
        num_samples=3,
        batch_size=3,
        max_new_tokens=3,
        similarity="exact_match",
        metrics=["max_answers@1"],
    )
    args = transformers.TrainingArguments(str(tmp_path / "unbound"), report_to="none", use_cpu=True)
    metrics = {"eval_loss": 1.0}
    with pytest.warns(UserWarning, match="not bound"):
        callback.on_evaluate(
            args,
            transformers.TrainerState(global_step=7),
            transformers.TrainerControl(),
            metrics=metrics,
            model=model,
            processing_class=tokenizer,
        )
    assert set(metrics) == {"eval_loss", "eval_protoqa_exact_match_max_answers_at_1"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once only
        callback.on_evaluate(
            args,
            transformers.TrainerState(global_step=8),
            transformers.TrainerControl(),
            metrics={},
            model=model,
            processing_class=tokenizer,
        )
    with pytest.raises(ValueError, match="tokenizer"):
        callback.on_evaluate(
            args, transformers.TrainerState(global_step=9), transformers.TrainerControl(), metrics={}, model=model
        )


def test_callback_rejects_questions_without_clusters():
    with pytest.raises(ValueError, match="clusters"):
        hooks.ProtoQAEvalCallback([Question("t1", "name a pet", ())])
    with pytest.raises(ValueError, match="no questions"):
        hooks.ProtoQAEvalCallback([])
    assert issubclass(hooks.ProtoQAEvalCallback, transformers.TrainerCallback)


# The example script runs in a new process on dataset rows in tests/protoqa_integrations/training/test_training_rows.py.
