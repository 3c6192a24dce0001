"""The batched sampler and ``protoqa-eval generate`` / ``score-generated``, on tiny GPT-2s.

The lm-eval tasks run on the same models in tests/protoqa_integrations/harnesses/lm_eval_tasks/.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.generation_commands import generate_cmd
from tests.support.lazy import lazy_import, require
from tests.support.paths import DATA, PROTOQA_DEV, needs_data

torch = lazy_import("torch")
transformers = lazy_import("transformers")
require("datasets")

from protoqa_dataset.parsing import load_questions  # noqa: E402
from protoqa_integrations.generation.answers_file import answers_document  # noqa: E402
from protoqa_integrations.generation.answers_journal import seal_record  # noqa: E402
from protoqa_integrations.generation.nucleus import nucleus_tokens, plan_batches, sample_uniforms  # noqa: E402
from protoqa_integrations.generation.prompts import cfc_prompt, question_to_prompt  # noqa: E402
from protoqa_integrations.generation.sampling import sample_prompts  # noqa: E402
from protoqa_integrations.generation.settings import GenerationError, SamplingConfig, answer_from_text  # noqa: E402
from tests.support.offline import offline_env  # noqa: E402
from tests.support.tiny_lm import build_tiny_gpt2  # noqa: E402


def run(args, cwd, env, timeout=900):
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return result


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------- sampler pieces


def test_uniforms_are_counter_based_and_uniform():
    u = sample_uniforms([7] * 20000, list(range(20000)), step=3)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(float(u.mean()) - 0.5) < 0.01
    # The number of a (seed, sample, step) triple does not depend on its neighbours.
    assert float(sample_uniforms([7], [123], 3)[0]) == float(u[123])
    assert float(sample_uniforms([8], [123], 3)[0]) != float(u[123])
    assert float(sample_uniforms([7], [123], 4)[0]) != float(u[123])


@pytest.mark.slow
def test_nucleus_tokens_follow_the_nucleus_and_the_distribution():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    # top_p 0.9: the nucleus is the first three tokens (mass before the fourth is 0.95 >= 0.9).
    u = torch.linspace(0, 1 - 1e-9, 10001)
    tokens = nucleus_tokens(logits.expand(len(u), -1), u, top_p=0.9, temperature=1.0)
    counts = torch.bincount(tokens, minlength=4).double() / len(u)
    assert counts[3] == 0
    assert torch.allclose(counts[:3], torch.tensor([0.5, 0.3, 0.15], dtype=torch.double) / 0.95, atol=1e-3)
    # top_k 1 is greedy; a low temperature concentrates on the most likely token.
    assert set(nucleus_tokens(logits.expand(len(u), -1), u, top_p=1.0, temperature=1.0, top_k=1).tolist()) == {0}
    assert nucleus_tokens(logits.expand(len(u), -1), u, top_p=1.0, temperature=0.05).float().mean() < 0.01


def test_batch_plan_chunks_evenly_and_packs_small_questions():
    assert plan_batches(1, 300, 100) == [[(0, 0, 100)], [(0, 100, 100)], [(0, 200, 100)]]
    assert [c[0][2] for c in plan_batches(1, 301, 100)] == [76, 75, 75, 75]
    assert plan_batches(5, 20, 64) == [[(0, 0, 20), (1, 0, 20), (2, 0, 20)], [(3, 0, 20), (4, 0, 20)]]
    for calls in (plan_batches(4, 37, 10), plan_batches(7, 3, 10)):
        drawn = {}
        for call in calls:
            assert len({count for _, _, count in call}) == 1 and sum(c for _, _, c in call) <= 10
            for prompt, start, count in call:
                drawn.setdefault(prompt, []).extend(range(start, start + count))
        assert all(sorted(v) == list(range(len(v))) for v in drawn.values())


def test_answers_end_at_the_first_newline_or_period():
    assert answer_from_text(" A Beach Towel. Then") == "a beach towel"
    assert answer_from_text(" sun hat\nQ: next") == "sun hat"
    assert answer_from_text("1.5 hours") == "1"  # the harness's `until` cuts here too
    assert answer_from_text("\nlate") == ""


def test_settings_are_checked():
    for bad in (
        {"num_samples": 0},
        {"batch_size": 0},
        {"top_p": 0},
        {"top_p": 1.5},
        {"temperature": 0},
        {"temperature": float("nan")},
        {"top_k": -1},
        {"max_new_tokens": 0},
    ):
        with pytest.raises(GenerationError):
            SamplingConfig(**bad)


# ---------------------------------------------------------------- sampling with a model


def test_sampling_is_deterministic_and_independent_of_the_batch_neighbours(dev3_model, dev3):
    model, tokenizer = dev3_model
    prompts = [question_to_prompt(q.question) for q in dev3]
    config = SamplingConfig(num_samples=5, batch_size=64, seed=11)
    state = torch.random.get_rng_state()
    together = sample_prompts(model, tokenizer, prompts, config)  # the three share one forward pass
    assert torch.equal(torch.random.get_rng_state(), state)
    again = sample_prompts(model, tokenizer, prompts, config)
    assert [s.answers for s in again] == [s.answers for s in together]
    alone = [sample_prompts(model, tokenizer, [p], config, seeds=[11 + i])[0] for i, p in enumerate(prompts)]
    assert [s.answers for s in alone] == [s.answers for s in together]
    assert [len(s.answers) for s in together] == [5, 5, 5]
    assert any(a for s in together for a in s.answers)  # the fitted model answers
    other = sample_prompts(model, tokenizer, prompts, SamplingConfig(num_samples=5, batch_size=64, seed=12))
    assert [s.answers for s in other] != [s.answers for s in together]
    for s in together:
        assert s.answers == [answer_from_text(t) for t in s.texts]
        assert all("\n" not in t and "." not in t for t in s.texts)


def test_the_prompt_cache_shared_by_the_samples_changes_nothing(dev3_model, dev3, monkeypatch):
    import protoqa_integrations.generation.sampling as generation

    model, tokenizer = dev3_model
    prompts = [question_to_prompt(q.question) for q in dev3] + ["One is"]  # left padding in one batch
    config = SamplingConfig(num_samples=6, batch_size=64, seed=3)
    shared = [s.texts for s in sample_prompts(model, tokenizer, prompts, config)]
    monkeypatch.setattr(generation, "_shared_prompt_cache", lambda *args: None)
    assert [s.texts for s in sample_prompts(model, tokenizer, prompts, config)] == shared


def test_a_prompt_longer_than_the_context_is_skipped_not_fatal(tmp_path, dev3):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = build_tiny_gpt2(tmp_path / "short", [question_to_prompt(q.question) for q in dev3], n_positions=16)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    long_prompt = cfc_prompt("a man throws a ball to his dog in the park on a sunny day. where is the ball?")
    done = sample_prompts(model, tokenizer, ["One is", long_prompt], SamplingConfig(num_samples=3, max_new_tokens=4))
    assert done[0].skipped is None and len(done[0].answers) == 3
    assert "exceeds the model's context of 16" in done[1].skipped and done[1].answers == []


def test_a_tokenizer_without_eos_is_refused(dev3_model):
    model, tokenizer = dev3_model
    from types import SimpleNamespace

    no_eos = SimpleNamespace(eos_token_id=None, pad_token_id=None)
    with pytest.raises(GenerationError, match="no end-of-text"):
        sample_prompts(model, no_eos, ["One is"], SamplingConfig(num_samples=1))


def test_answers_document_counts_empty_samples_and_skipped_questions(dev3):
    doc = answers_document(
        dev3[:2], {dev3[0].id: ["age", "", "age", "name"], dev3[1].id: []}, {dev3[1].id: "too long"}, {"model": "m"}
    )
    assert doc["model_ranked_answers"] == {dev3[0].id: ["age", "name"], dev3[1].id: []}
    assert doc["model_answers_with_count"][dev3[0].id] == [["age", 2], ["name", 1]]
    assert doc["generation"]["empty_samples"] == {dev3[0].id: 1}
    assert doc["generation"]["skipped"] == {dev3[1].id: "too long"}
    assert doc["generation"]["questions_without_answer"] == []


# ---------------------------------------------------------------- the command line, in new processes


@pytest.mark.slow
@needs_data
def test_generate_and_score_offline_print_scores(dev3_gpt2, tmp_path):
    env = offline_env()
    answers = tmp_path / "answers.json"
    result = run(generate_cmd(dev3_gpt2, answers, "--limit", "3"), tmp_path, env)
    assert result.returncode == 0, result.stderr
    # transformers' warnings about names it renamed (past_key_values -> cache) are not the user's to act on
    assert "deprecated" not in result.stderr, result.stderr
    doc = json.loads(answers.read_text())
    assert set(doc) == {"model_answers", "model_answers_with_count", "model_ranked_answers", "generation"}
    assert [len(v) for v in doc["model_answers"].values()] == [300, 300, 300]
    assert doc["generation"]["sampling"].startswith("samples:300|top_p:0.9|temperature:0.69|top_k:0")
    assert not (tmp_path / "answers.json.partial.jsonl").exists()
    # What was loaded and with what, as vllm and openai record it
    details = doc["generation"]["engine_details"]
    assert details["engine"] == "hf" and details["model_path"] == str(dev3_gpt2)
    assert details["torch"] and details["transformers"] and details["device"] == "cpu"
    usage = doc["generation"]["usage"]
    assert 0 < usage["completion_tokens"] <= 3 * 300 * 10 and usage["prompt_tokens"] > 0
    command = [sys.executable, "-m", "protoqa_integrations", "score-generated", str(answers), "--data-dir", str(DATA)]
    # Three questions of the data set (--limit 3): refused, unless the score is restricted to them.
    refused = run(command, tmp_path, env)
    assert refused.returncode == 2 and "answers 3 of the 52 target questions" in refused.stderr
    scored = run([*command, "--only-predicted"], tmp_path, env)
    assert scored.returncode == 0, scored.stderr
    assert "max_answers@10" in scored.stdout and "probeval_kl" in scored.stdout
    assert "sim:wordnet|stop:match|metrics:paper|missing:skip|n:3" in scored.stdout
    assert "|missing:skip|n:3|n_samples:300|" in scored.stdout
    # Both existing command lines read the answers file.
    protoqa = run(
        [
            sys.executable,
            "-m",
            "protoqa_metric",
            str(PROTOQA_DEV),
            str(answers),
            "--only-predicted",
            "--json",
            "--similarity",
            "exact_match",
        ],
        tmp_path,
        env,
    )
    assert protoqa.returncode == 0, protoqa.stderr
    probeval = run(
        [
            sys.executable,
            "-m",
            "cfc_probeval",
            str(PROTOQA_DEV),
            str(answers),
            "--clustering",
            "human",
            "--only-predicted",
            "--json",
        ],
        tmp_path,
        env,
    )
    assert probeval.returncode == 0, probeval.stderr
    score_json = json.loads(
        run(
            [
                sys.executable,
                "-m",
                "protoqa_integrations",
                "score-generated",
                str(answers),
                "--data-dir",
                str(DATA),
                "--only-predicted",
                "--json",
            ],
            tmp_path,
            env,
        ).stdout
    )
    assert json.loads(probeval.stdout)["kl"] == score_json["probeval"]["kl"]
    em = json.loads(protoqa.stdout.splitlines()[0])
    assert em["max_answers@10"] == score_json["protoqa"]["exact_match"]["max_answers@10"]


@pytest.mark.slow
@needs_data
def test_generate_resumes_from_a_partial_file_and_refuses_bad_input(dev3_gpt2, tmp_path):
    env = offline_env()
    answers = tmp_path / "a.json"
    args = ("--limit", "3", "--num-samples", "6", "--batch-size", "4", "--seed", "5")
    full = tmp_path / "full.json"
    assert run(generate_cmd(dev3_gpt2, full, *args), tmp_path, env).returncode == 0
    # An interrupted run: the journal has the header, one question and a line cut short.
    lines = [json.dumps({"header": None})]
    journal_path = tmp_path / "a.json.partial.jsonl"
    first = json.loads(full.read_text())
    header = {
        k: v
        for k, v in first["generation"].items()
        if k not in ("num_questions", "empty_samples", "questions_without_answer", "skipped", "engine_details", "usage")
    }
    qid = next(iter(first["model_answers"]))
    # Each record sealed as a run seals it (an unsealed or edited one is refused: test_answers_journal.py).
    lines = [
        json.dumps(seal_record({"header": header})),
        json.dumps(seal_record({"id": qid, "samples": ["planted"] * 6, "skipped": None})),
        '{"id": "r1q2", "samp',
    ]
    journal_path.write_text("\n".join(lines))
    result = run(generate_cmd(dev3_gpt2, answers, *args), tmp_path, env)
    assert result.returncode == 0, result.stderr
    resumed = json.loads(answers.read_text())
    assert resumed["model_answers"][qid] == ["planted"] * 6  # kept, not sampled again
    assert {k: v for k, v in resumed["model_answers"].items() if k != qid} == {
        k: v for k, v in first["model_answers"].items() if k != qid
    }
    assert not journal_path.exists()
    # A journal written with other settings is not mixed in.
    journal_path.write_text(json.dumps({"header": {**header, "sampling": "other"}}) + "\n")
    other = tmp_path / "b.json"
    (tmp_path / "b.json.partial.jsonl").write_text(journal_path.read_text())
    result = run(generate_cmd(dev3_gpt2, other, *args), tmp_path, env)
    assert result.returncode == 2 and "other settings" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    # Bad input: one line, exit 2.
    for bad, message in (
        (generate_cmd(tmp_path / "no-model", tmp_path / "c.json"), "no model folder"),
        (generate_cmd(dev3_gpt2, full, *args), "exists"),
        (generate_cmd(dev3_gpt2, tmp_path / "d.json", "--num-samples", "0"), "num_samples"),
        (generate_cmd("no-such-org/no-such-model", tmp_path / "e.json"), "cannot load the model"),
    ):
        result = run(bad, tmp_path, env)
        assert result.returncode == 2, (bad, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.slow
@needs_data
def test_a_tokenizer_without_eos_is_a_one_line_error(tmp_path, dev3):
    folder = build_tiny_gpt2(tmp_path / "noeos", [question_to_prompt(q.question) for q in dev3])
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["eos_token"] = None
    config["bos_token"] = None
    config["unk_token"] = None
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    result = run(generate_cmd(folder, tmp_path / "x.json", "--limit", "1"), tmp_path, offline_env())
    assert result.returncode == 2 and "no end-of-text (eos) token" in result.stderr, result.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
@needs_data
def test_test_questions_get_the_leaderboard_file(dev3_gpt2, tmp_path):
    answers = tmp_path / "test.json"
    result = run(
        generate_cmd(dev3_gpt2, answers, "--split", "test", "--limit", "2", "--num-samples", "4"),
        tmp_path,
        offline_env(),
    )
    assert result.returncode == 0, result.stderr
    board = [json.loads(line) for line in (tmp_path / "test.leaderboard.jsonl").read_text().splitlines()]
    doc = json.loads(answers.read_text())
    assert board == [{qid: ranked} for qid, ranked in doc["model_ranked_answers"].items()]
    test_ids = [q.id for q in load_questions("protoqa", "test", str(DATA))[0][:2]]
    assert [next(iter(line)) for line in board] == test_ids
    scored = run(
        [sys.executable, "-m", "protoqa_integrations", "score-generated", str(answers), "--data-dir", str(DATA)],
        tmp_path,
        offline_env(),
    )
    assert scored.returncode == 2 and "leaderboard" in scored.stderr


# ---------------------------------------------------------------- one sampler, three ways


@pytest.mark.parametrize(
    "name",
    [
        "protoqa_integrations.generation.sampling",
        "protoqa_integrations.generation.settings",
        "protoqa_integrations.generation.nucleus",
        "protoqa_integrations.generation.cli",
        "protoqa_integrations.generation.answers_file",
        "protoqa_integrations.generation.answers_journal",
        "protoqa_integrations.harnesses.lm_eval_tasks",
        "protoqa_integrations.harnesses.lm_eval_tasks.harness",
        "protoqa_integrations.harnesses.task_functions",
    ],
)
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
