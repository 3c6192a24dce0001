"""The Trainer hooks on the dataset export's rows (stock ``load_dataset``), with a tiny random GPT-2.

* rows of ``load_dataset(export, "protoqa")`` give the same questions as the targets file;
* ``make_compute_metrics`` and ``ProtoQAEvalCallback`` take those rows; a wrong type
  fails at construction naming the accepted forms;
* prompt-only evaluation rows (no ``labels``) are refused with what to add, and with it
  a real ``Seq2SeqTrainer`` gives ``eval_protoqa_*`` keys;
* the callback follows ``metric_key_prefix`` and a dict ``eval_dataset``;
* the example script, in a new process, on ``load_dataset`` rows.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest

from tests.support.lazy import lazy_import, require
from tests.support.processes import run_python

torch = lazy_import("torch")
transformers = lazy_import("transformers")
require("accelerate")
datasets = lazy_import("datasets")

from protoqa_integrations.generation.prompts import generation_prompt, training_line  # noqa: E402
from protoqa_integrations.training import hooks  # noqa: E402  (the callback class is made, with transformers, when read)
from protoqa_integrations.training.hooks import LABELS_NEEDED, make_compute_metrics  # noqa: E402
from protoqa_integrations.training.samples import metric_key, score_sampled_answers  # noqa: E402
from protoqa_metric import question_from_row, questions_from_rows, read_targets  # noqa: E402
from tests.support.metric_names import PAPER_KEYS  # noqa: E402
from tests.support.tiny_lm import build_word_gpt2  # noqa: E402
from tests.support.tiny_lm import tiny_gpt2 as build_model  # noqa: E402
from tests.support.tiny_lm import word_tokenizer as build_tokenizer  # noqa: E402
from tests.support.training_rows import generating_trainer, pad_to_longest  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
SHARED_DATA = REPO.parent / "shared" / "data"
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",
    "PYTHONPATH": str(REPO),
}
EM_KEYS = [metric_key("exact_match", k) for k in PAPER_KEYS]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def dev_rows(dataset_export, tmp_path_factory):
    """Crowdsourced dev as stock ``load_dataset`` gives it."""
    cache = tmp_path_factory.mktemp("hf-cache")
    return datasets.load_dataset(str(dataset_export), "protoqa", split="validation", cache_dir=str(cache))


@pytest.fixture(scope="module")
def tokenizer(dev_rows):
    texts = [generation_prompt(r["question"]) for r in dev_rows.select(range(4))]
    texts += [a for r in dev_rows.select(range(4)) for answers in r["clusters"]["answers"] for a in answers]
    return build_tokenizer(texts)


@pytest.fixture(scope="module")
def model(tokenizer):
    return build_model(tokenizer, seed=1)


def test_rows_give_the_questions_of_the_targets_file(dev_rows):
    from_file = read_targets(SHARED_DATA / "protoqa" / "dev.crowdsourced.jsonl")
    from_rows = questions_from_rows(dev_rows)
    assert [q.id for q in from_rows] == list(from_file)
    for question in from_rows:
        assert question == from_file[question.id]
    assert question_from_row(dev_rows[0]) == from_file["r1q1"]
    # A row as a list of records, and questions given as they are.
    row = dev_rows[0]
    records = {
        **row,
        "clusters": [
            {"id": i, "answers": a, "count": c}
            for i, a, c in zip(row["clusters"]["id"], row["clusters"]["answers"], row["clusters"]["count"], strict=True)
        ],
        "raw_answers": [
            {"answer": a, "count": c}
            for a, c in zip(row["raw_answers"]["answer"], row["raw_answers"]["count"], strict=True)
        ],
    }
    assert question_from_row(records) == from_file["r1q1"]
    assert questions_from_rows(from_file) == list(from_file.values())


def test_wrong_question_forms_fail_at_construction_naming_the_accepted_ones(dev_rows, tokenizer):
    for bad in ("r1q1", 3, [1, 2], {"r1q1": "text"}, dev_rows.select_columns(["id", "question"])):
        with pytest.raises(TypeError, match="datasets.Dataset of the ProtoQA export"):
            make_compute_metrics(tokenizer, bad, strip_prompt=False)
        with pytest.raises(TypeError, match="datasets.Dataset of the ProtoQA export"):
            hooks.ProtoQAEvalCallback(bad)
    broken = {**dev_rows[0], "clusters": {"answers": [["age"]], "count": [-1]}}
    with pytest.raises(ValueError, match="question 'r1q1': cluster 0 count must be a non-negative integer"):
        hooks.ProtoQAEvalCallback([broken])
    with pytest.raises(ValueError, match="answer clusters"):
        hooks.ProtoQAEvalCallback(
            datasets.Dataset.from_list([{**dev_rows[0], "clusters": {"id": [], "answers": [], "count": []}}])
        )


def prompt_rows(rows, tokenizer):
    """The export rows with the tokenized generation prompt of each question (and nothing else added)."""
    return rows.map(lambda r: {"input_ids": tokenizer(generation_prompt(r["question"]))["input_ids"]})


def one_row_batches(batch):
    return {k: torch.tensor([row[k] for row in batch]) for k in ("input_ids", "labels") if k in batch[0]}


def test_prompt_only_rows_are_refused_and_scored_once_labelled(dev_rows, tokenizer, model, tmp_path):
    rows = prompt_rows(dev_rows.select(range(3)), tokenizer)
    with pytest.raises(ValueError, match="no labels") as refused:
        make_compute_metrics(tokenizer, rows, similarity="exact_match")
    assert LABELS_NEEDED in str(refused.value) and "include_for_metrics=['inputs']" in str(refused.value)

    # Why it is refused: the Trainer never calls compute_metrics on such rows.
    silent = generating_trainer(
        model,
        tokenizer,
        rows,
        one_row_batches,
        make_compute_metrics(tokenizer, questions_from_rows(rows), similarity="exact_match"),
        tmp_path / "s2s",
    )
    assert not any("protoqa" in k for k in silent.evaluate(max_new_tokens=3, do_sample=False))

    # What the message says to add: any labels.
    labelled = rows.map(lambda r: {"labels": r["input_ids"]})
    trainer = generating_trainer(
        model,
        tokenizer,
        labelled,
        one_row_batches,
        make_compute_metrics(tokenizer, labelled, similarity="exact_match"),
        tmp_path / "s2s",
    )
    metrics = trainer.evaluate(max_new_tokens=3, do_sample=False)
    keys = {f"eval_{k}" for k in EM_KEYS}
    assert keys <= set(metrics)
    assert all(math.isfinite(metrics[k]) and 0.0 <= metrics[k] <= 1.0 for k in keys)


def lm_lines(rows, tokenizer):
    return [
        {"input_ids": tokenizer(training_line(q.question, c.answers[0]))["input_ids"] + [tokenizer.eos_token_id]}
        for q in questions_from_rows(rows)
        for c in q.clusters
    ]


def test_callback_on_rows_follows_the_prefix_and_several_eval_sets(dev_rows, tokenizer, model, tmp_path):
    first, second = dev_rows.select(range(2)), dev_rows.select(range(2, 3))
    lines = lm_lines(first, tokenizer)
    args = transformers.TrainingArguments(
        str(tmp_path / "run"), per_device_eval_batch_size=4, report_to="none", use_cpu=True
    )
    trainer = transformers.Trainer(
        model=model,
        args=args,
        eval_dataset={"dev": lines, "other": lines[:2]},
        data_collator=pad_to_longest,
        processing_class=tokenizer,
    )
    sampling = {"num_samples": 4, "batch_size": 4, "max_new_tokens": 3, "similarity": "exact_match", "seed": 5}
    shared = hooks.ProtoQAEvalCallback(first, **sampling)
    per_set = hooks.ProtoQAEvalCallback({"dev": first, "other": second}, **sampling)
    trainer.add_callback(shared.bind(trainer))
    metrics = trainer.evaluate()
    for name in ("dev", "other"):
        assert {f"eval_{name}_{k}" for k in EM_KEYS} <= set(metrics)
    assert not any(k.startswith("eval_protoqa") for k in metrics)
    # One question set, sampled once at this step, scored into both evaluations.
    assert all(metrics[f"eval_dev_{k}"] == metrics[f"eval_other_{k}"] for k in EM_KEYS)
    library = score_sampled_answers(
        questions_from_rows(first), list(shared.last_samples.values()), similarity="exact_match"
    )
    assert {k: metrics[f"eval_dev_{k}"] for k in library} == library

    trainer.remove_callback(shared)
    trainer.add_callback(per_set.bind(trainer))
    metrics = trainer.evaluate()
    assert set(per_set.last_samples) == {second[0]["id"]}  # "other" was evaluated last, with its own questions
    own = score_sampled_answers(
        questions_from_rows(second), list(per_set.last_samples.values()), similarity="exact_match"
    )
    assert {k: metrics[f"eval_other_{k}"] for k in own} == own

    with pytest.warns(UserWarning, match="no questions for the evaluation 'test'"):
        single = trainer.evaluate(eval_dataset=lines, metric_key_prefix="test")
    assert not any(k.startswith("test_protoqa") for k in single)  # no set named "test"
    trainer.remove_callback(per_set)
    trainer.add_callback(shared)
    single = trainer.evaluate(eval_dataset=lines, metric_key_prefix="test")
    assert {f"test_{k}" for k in EM_KEYS} <= set(single)
    logged = [e for e in trainer.state.log_history if any(k.startswith("eval_dev_protoqa") for k in e)]
    assert logged and all(set(e) >= {f"eval_dev_{k}" for k in EM_KEYS} for e in logged)


def test_unmatched_eval_set_warns(dev_rows, tokenizer, model):

    callback = hooks.ProtoQAEvalCallback(
        {"dev": dev_rows.select(range(1))}, num_samples=2, batch_size=2, max_new_tokens=2, similarity="exact_match"
    )
    metrics = {"eval_scraped_loss": 1.0, "eval_scraped_runtime": 0.1}
    with pytest.warns(UserWarning, match="no questions for the evaluation 'eval_scraped'"):
        callback.on_evaluate(
            None,
            transformers.TrainerState(global_step=1),
            transformers.TrainerControl(),
            metrics=metrics,
            model=model,
            processing_class=tokenizer,
        )
    assert set(metrics) == {"eval_scraped_loss", "eval_scraped_runtime"}


@pytest.mark.slow
def test_example_script_on_load_dataset_rows_in_a_new_process(dataset_export, tmp_path):
    rows = datasets.load_dataset(str(dataset_export), "protoqa", split="validation", cache_dir=str(tmp_path / "c0"))
    dev = questions_from_rows(rows.select(range(3)))
    texts = [training_line(q.question, a) for q in dev for c in q.clusters for a in c.answers]
    model_dir = build_word_gpt2(tmp_path / "tiny-gpt2", texts)
    out = tmp_path / "out"
    probeval = ["--probeval"] if __import__("importlib").util.find_spec("cfc_probeval") else []

    started = time.perf_counter()
    run = run_python(
        [
            str(REPO / "examples" / "finetune_protoqa_gpt2.py"),
            "--model",
            str(model_dir),
            "--dataset",
            str(dataset_export),
            "--train-config",
            "protoqa_scraped_dev",
            "--train-split",
            "validation",
            "--output-dir",
            str(out),
            "--max-steps",
            "2",
            "--eval-steps",
            "1",
            "--num-samples",
            "4",
            "--eval-questions",
            "3",
            "--similarity",
            "exact_match",
            "--per-device-train-batch-size",
            "4",
            "--use-cpu",
            *probeval,
        ],
        tmp_path,
        {**ENV, "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets")},
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    assert run.returncode == 0, run.stderr[-3000:]
    print(f"example script: {elapsed:.1f} s")

    keys = {f"eval_{k}" for k in EM_KEYS}
    final = json.loads((out / "eval_results.json").read_text())
    assert keys <= set(final)
    assert all(math.isfinite(final[k]) and 0.0 <= final[k] <= 1.0 for k in keys)
    if probeval:
        assert math.isfinite(final["eval_probeval_kl"]) and final["eval_probeval_kl"] >= 0.0
    history = json.loads((out / "trainer_state.json").read_text())["log_history"]
    assert [e["step"] for e in history if keys <= set(e)] == [1, 2]
    predictions = [json.loads(line) for line in (out / "dev_predictions.jsonl").read_text().splitlines()]
    assert [next(iter(p)) for p in predictions] == [q.id for q in dev]
    assert (out / "config.json").is_file()
    assert "eval_protoqa_exact_match_max_answers_at_10" in run.stdout


@pytest.mark.slow
def test_example_script_bad_option_exits_2(tmp_path):
    run = run_python(
        [str(REPO / "examples" / "finetune_protoqa_gpt2.py"), "--eval-questions", "0"], tmp_path, ENV, timeout=120
    )
    assert run.returncode == 2 and "--eval-questions must be >= 1" in run.stderr
    assert "Traceback" not in run.stderr


def test_rows_module_docstring_examples():
    import doctest

    import protoqa_core.io.rows

    result = doctest.testmod(protoqa_core.io.rows, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
