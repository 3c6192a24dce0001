"""Distributed evaluation: two real OS processes give the same scores as one.

* the ``evaluate`` module in its multi-process mode (``num_process``, ``process_id``,
  ``experiment_id``, a shared ``cache_dir``): each process adds its own batches,
  process 0 computes, the others get ``None``;
* ``ProtoQAEvalCallback`` under ``torch.distributed`` (gloo): each process samples its
  share of the questions and every process ends with the scores of one process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "data" / "protoqa"
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",
}

EVALUATE_WORKER = """
import json, sys
import evaluate

module_path, rank, world, cache_dir, experiment_id, payload_path, out_path = sys.argv[1:]
rank, world = int(rank), int(world)
with open(payload_path) as fh:
    payload = json.load(fh)
results = {}
for config in payload["configs"]:
    metric = evaluate.load(module_path, config, num_process=world, process_id=rank,
                           experiment_id=f"{experiment_id}-{config}", cache_dir=cache_dir)
    for batch in payload["batches"][rank]:
        metric.add_batch(predictions=batch["predictions"], references=batch["references"])
    results[config] = metric.compute()
with open(out_path, "w") as fh:
    json.dump(results, fh)
"""

CALLBACK_WORKER = """
import json, sys
import torch
import torch.distributed as dist

rank, world, store, model_dir, targets, out_path = sys.argv[1:]
torch.set_num_threads(1)
dist.init_process_group("gloo", init_method="file://" + store, rank=int(rank), world_size=int(world))
from transformers import AutoModelForCausalLM, AutoTokenizer
from protoqa_metric import read_targets
from protoqa_integrations.training.hooks import ProtoQAEvalCallback

model = AutoModelForCausalLM.from_pretrained(model_dir)
tokenizer = AutoTokenizer.from_pretrained(model_dir)
callback = ProtoQAEvalCallback(read_targets(targets), num_samples=5, batch_size=3, max_new_tokens=4,
                               similarity="exact_match", seed=11)
scores = callback.evaluate_model(model, tokenizer)
with open(out_path, "w") as fh:
    json.dump({"scores": scores, "samples": callback.last_samples}, fh)
dist.destroy_process_group()
"""


def run_two_processes(script: Path, per_rank_args, timeout: float = 180) -> None:
    """Start one OS process per argument list at once, wait for all, fail with their stderr."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            cwd=script.parent,
        )
        for args in per_rank_args
    ]
    errors = []
    for rank, proc in enumerate(procs):
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
        if proc.returncode != 0:
            errors.append(f"process {rank} exited with {proc.returncode}:\n{err[-3000:]}")
    assert not errors, "\n".join(errors)


# ---------------------------------------------------------------- evaluate's multi-process mode


@pytest.fixture(scope="module")
def dev_rows():
    """Predictions and clusters of the first crowdsourced dev questions, as the evaluate module takes them."""
    dev, predictions = DATA / "dev.crowdsourced.jsonl", DATA / "dev.predictions.gpt2finetuned.json"
    if not (dev.is_file() and predictions.is_file()):
        pytest.skip(f"shared ProtoQA data not found under {DATA}")
    from protoqa_metric import read_predictions, read_targets

    questions = list(read_targets(dev).values())[:9]
    ranked = read_predictions(predictions)
    return (
        [ranked[q.id] for q in questions],
        [[{"answers": list(c.answers), "count": c.count} for c in q.clusters] for q in questions],
    )


def in_batches(predictions, references, size):
    return [
        {"predictions": predictions[i : i + size], "references": references[i : i + size]}
        for i in range(0, len(predictions), size)
    ]


@pytest.mark.slow
def test_protoqa_metric_two_processes_equal_one(dev_rows, tmp_path):
    evaluate = pytest.importorskip("evaluate")
    from protoqa_metric import evaluate_module_path

    predictions, references = dev_rows
    half = 5  # uneven shares, several batches each
    configs = ["wordnet", "exact_match"]
    payload = {
        "configs": configs,
        "batches": [
            in_batches(predictions[:half], references[:half], 2),
            in_batches(predictions[half:], references[half:], 2),
        ],
    }
    (tmp_path / "payload.json").write_text(json.dumps(payload))
    (tmp_path / "worker.py").write_text(EVALUATE_WORKER)
    experiment_id = uuid.uuid4().hex  # shared by the processes of one evaluation
    run_two_processes(
        tmp_path / "worker.py",
        [
            [
                evaluate_module_path(),
                rank,
                2,
                tmp_path / "cache",
                experiment_id,
                tmp_path / "payload.json",
                tmp_path / f"result{rank}.json",
            ]
            for rank in range(2)
        ],
    )
    distributed = json.loads((tmp_path / "result0.json").read_text())
    assert json.loads((tmp_path / "result1.json").read_text()) == dict.fromkeys(configs)

    for config in configs:
        single = evaluate.load(evaluate_module_path(), config, cache_dir=str(tmp_path / "single"))
        alone = single.compute(predictions=predictions, references=references)
        assert distributed[config] == alone
        assert f"sim:{config}|" in alone["signature"] and f"n:{len(predictions)}|" in alone["signature"]
        assert 0.0 < alone["max_answers@10"] <= 1.0


# ---------------------------------------------------------------- the callback under torch.distributed


def write_targets(path: Path, questions) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for qid, text, clusters in questions:
            fh.write(
                json.dumps(
                    {
                        "metadata": {"id": qid},
                        "question": {"original": text, "normalized": text},
                        "answers": {
                            "raw": {},
                            "clusters": {
                                f"{qid}.{i}": {"count": count, "answers": answers}
                                for i, (answers, count) in enumerate(clusters)
                            },
                        },
                    }
                )
                + "\n"
            )


@pytest.mark.slow
def test_callback_two_processes_equal_one(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available")
    from transformers import GPT2LMHeadModel

    from protoqa_integrations.generation.prompts import generation_prompt
    from protoqa_integrations.training.hooks import ProtoQAEvalCallback
    from protoqa_metric import read_targets
    from tests.support.tiny_lm import tiny_gpt2, word_tokenizer

    questions = [
        ("q1", "name a pet", [(["dog"], 6), (["cat"], 4)]),
        ("q2", "name something you eat for breakfast", [(["eggs"], 5), (["toast"], 3)]),
        ("q3", "how can you tell it is winter", [(["snow"], 7), (["cold"], 3)]),
    ]
    write_targets(tmp_path / "targets.jsonl", questions)
    tokenizer = word_tokenizer(
        [generation_prompt(text) for _, text, _ in questions] + ["dog cat eggs toast snow cold ."]
    )
    model = tiny_gpt2(tokenizer, seed=0, n_positions=32)
    model_dir = tmp_path / "tiny-gpt2"
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)

    (tmp_path / "worker.py").write_text(CALLBACK_WORKER)
    run_two_processes(
        tmp_path / "worker.py",
        [
            [rank, 2, tmp_path / "rendezvous", model_dir, tmp_path / "targets.jsonl", tmp_path / f"out{rank}.json"]
            for rank in range(2)
        ],
    )
    results = [json.loads((tmp_path / f"out{rank}.json").read_text()) for rank in range(2)]

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the workers, so floating-point sums agree
    try:
        callback = ProtoQAEvalCallback(
            read_targets(tmp_path / "targets.jsonl"),
            num_samples=5,
            batch_size=3,
            max_new_tokens=4,
            similarity="exact_match",
            seed=11,
        )
        scores = callback.evaluate_model(GPT2LMHeadModel.from_pretrained(model_dir), tokenizer)
    finally:
        torch.set_num_threads(threads)
    for result in results:
        assert result["samples"] == callback.last_samples
        assert result["scores"] == scores
    assert set(callback.last_samples) == {"q1", "q2", "q3"}
    assert all(len(s) == 5 for s in callback.last_samples.values())
