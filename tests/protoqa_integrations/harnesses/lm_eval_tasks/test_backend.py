"""The ``protoqa-hf`` backend's own logic: which requests it serves with ProtoQA's sampler (the rest go to
lm-eval's ``hf`` backend), and how a question's repeats are gathered, seeded and put back in place.

The sampler is replaced here by one that records what it is asked; the backend runs a real tiny
model under ``lm_eval.simple_evaluate`` in test_harness.py. Importing the backend imports lm-eval,
transformers and torch (seconds), so these tests are marked slow.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from protoqa_integrations.generation.settings import STOP_STRINGS, PromptSamples, SamplingConfig
from tests.support.harnesses import lm_eval_command

pytestmark = pytest.mark.slow

NUCLEUS = {"do_sample": True, "until": ["\n", "."], "temperature": 0.69, "top_p": 0.9, "top_k": 0, "max_gen_toks": 10}


def backend():
    pytest.importorskip("lm_eval")
    from protoqa_integrations.harnesses.lm_eval_tasks import backend

    return backend


def test_nucleus_requests_with_the_protocol_stop_strings_get_their_sampling_config():
    sampling_config = backend().sampling_config
    config = sampling_config(NUCLEUS, 300, 64, 7)
    assert config == SamplingConfig(
        num_samples=300, batch_size=64, seed=7, max_new_tokens=10, temperature=0.69, top_p=0.9, top_k=0
    )
    assert set(NUCLEUS["until"]) == set(STOP_STRINGS)
    reordered = {**NUCLEUS, "until": [".", "\n"], "max_gen_toks": None, "max_new_tokens": 6}
    assert sampling_config(reordered, 3, 2, 1).max_new_tokens == 6
    plain = sampling_config({"do_sample": True, "until": ["\n", "."]}, 3, 2, 1)
    assert (plain.temperature, plain.top_p, plain.top_k, plain.max_new_tokens) == (1.0, 1.0, 0, 10)


@pytest.mark.parametrize(
    "gen_kwargs",
    [
        {**NUCLEUS, "do_sample": False},  # greedy
        {k: v for k, v in NUCLEUS.items() if k != "do_sample"},
        {**NUCLEUS, "until": ["\n"]},  # other stop strings
        {**NUCLEUS, "until": "\n"},
        {**NUCLEUS, "until": ["\n", ".", "Q:"]},
        {**NUCLEUS, "repetition_penalty": 1.2},  # a setting the sampler does not have
    ],
)
def test_requests_the_sampler_cannot_serve_as_asked_are_left_to_the_hf_backend(gen_kwargs):
    assert backend().sampling_config(gen_kwargs, 10, 5, 42) is None


def test_a_setting_given_as_none_takes_its_default_and_top_k_zero_stays_off():
    sampling_config = backend().sampling_config
    unset = {"temperature": None, "top_p": None, "top_k": None, "max_gen_toks": None, "max_new_tokens": None}
    config = sampling_config({**NUCLEUS, **unset}, 3, 2, 1)
    assert (config.temperature, config.top_p, config.top_k, config.max_new_tokens) == (1.0, 1.0, 0, 10)
    assert sampling_config({**NUCLEUS, "top_k": 0}, 3, 2, 1).top_k == 0
    # lm-eval's --gen_kwargs parses numbers, but a Python caller may pass them as text.
    config = sampling_config({**NUCLEUS, "temperature": "0.5", "top_k": "40", "max_gen_toks": "12"}, 3, 2, 1)
    assert (config.temperature, config.top_k, config.max_new_tokens) == (0.5, 40, 12)
    agreeing = sampling_config({**NUCLEUS, "max_gen_toks": 12, "max_new_tokens": 12}, 3, 2, 1)
    assert agreeing.max_new_tokens == 12


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"max_gen_toks": 0}, "gen_kwargs max_gen_toks must be an integer >= 1, got 0"),
        ({"max_gen_toks": None, "max_new_tokens": 0}, "gen_kwargs max_new_tokens must be an integer >= 1, got 0"),
        ({"max_gen_toks": 10.5}, "gen_kwargs max_gen_toks must be an integer >= 1, got 10.5"),
        ({"max_gen_toks": True}, "gen_kwargs max_gen_toks must be an integer >= 1, got True"),
        ({"max_gen_toks": "ten"}, "gen_kwargs max_gen_toks must be an integer >= 1, got 'ten'"),
        ({"max_gen_toks": 10, "max_new_tokens": 20}, "gen_kwargs max_gen_toks (10) and max_new_tokens (20) disagree"),
        ({"temperature": 0}, "gen_kwargs temperature must be a number > 0 when do_sample is true, got 0"),
        ({"temperature": "hot"}, "gen_kwargs temperature must be a number > 0 when do_sample is true, got 'hot'"),
        ({"temperature": float("nan")}, "gen_kwargs temperature must be a number > 0 when do_sample is true, got nan"),
        ({"temperature": [0.7]}, "gen_kwargs temperature must be a number > 0 when do_sample is true, got [0.7]"),
        ({"top_p": 0}, "gen_kwargs top_p must be a number in (0, 1], got 0"),
        ({"top_p": 1.5}, "gen_kwargs top_p must be a number in (0, 1], got 1.5"),
        ({"top_p": "most"}, "gen_kwargs top_p must be a number in (0, 1], got 'most'"),
        ({"top_k": -1}, "gen_kwargs top_k must be an integer >= 0 (0: off), got -1"),
        ({"top_k": "all"}, "gen_kwargs top_k must be an integer >= 0 (0: off), got 'all'"),
    ],
)
def test_a_setting_the_sampler_cannot_use_is_refused_with_its_key(changes, message):
    from protoqa_integrations.generation.settings import GenerationError

    with pytest.raises(GenerationError, match=re.escape(message)):
        backend().sampling_config({**NUCLEUS, **changes}, 3, 2, 1)


def test_the_runner_refuses_a_setting_from_gen_kwargs_without_a_traceback(dev3_gpt2, tmp_path):

    from tests.support.offline import offline_env

    backend()
    command = lm_eval_command(sys.executable, f"pretrained={dev3_gpt2}", "protoqa", 1, "--gen_kwargs", "max_gen_toks=0")
    result = subprocess.run(command, cwd=tmp_path, env=offline_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "error: gen_kwargs max_gen_toks must be an integer >= 1, got 0" in result.stderr
    assert "Traceback" not in result.stderr


class Request:
    def __init__(self, context: str, gen_kwargs: dict, doc_id: int) -> None:
        self.args = (context, gen_kwargs)
        self.doc_id = doc_id


def bare_backend(module, seed: int = 100, sample_batch_size: int = 4):
    """A ProtoQAHFLM without a model: only what generate_until reads."""
    lm = module.ProtoQAHFLM.__new__(module.ProtoQAHFLM)
    lm._model, lm.tokenizer, lm._rank = "model", "tokenizer", 0
    lm.sampling_seed, lm.sample_batch_size = seed, sample_batch_size
    return lm


def test_each_question_is_sampled_once_under_seed_plus_doc_id_and_answers_go_back_in_place(monkeypatch):
    module = backend()
    calls = []

    def sampler(model, tokenizer, prompts, config, *, seeds, progress):
        calls.append((prompts, config, seeds))
        for index in reversed(range(len(prompts))):  # the positions come from the index, not the order
            if prompts[index] == "too long":
                yield PromptSamples(index, skipped="the prompt is longer than the context")
            else:
                yield PromptSamples(index, [f"{prompts[index]}:{j}" for j in range(config.num_samples)])

    monkeypatch.setattr(module, "iter_prompt_samples", sampler)
    pet, fruit, long = Request("pet", NUCLEUS, 3), Request("fruit", NUCLEUS, 8), Request("too long", NUCLEUS, 9)
    # The harness repeats a request as the same object; repeats of questions interleave.
    requests = [pet, fruit, pet, long, fruit, pet, long, fruit, long]
    got = bare_backend(module).generate_until(requests, disable_tqdm=True)
    assert got == ["pet:0", "fruit:0", "pet:1", "", "fruit:1", "pet:2", "", "fruit:2", ""]
    (prompts, config, seeds), *_ = calls
    assert len(calls) == 1 and prompts == ["pet", "fruit", "too long"] and seeds == [103, 108, 109]
    assert (config.num_samples, config.batch_size, config.seed) == (3, 4, 100)


def test_questions_with_other_repeat_counts_are_sampled_in_their_own_call(monkeypatch):
    module = backend()
    calls = []

    def sampler(model, tokenizer, prompts, config, *, seeds, progress):
        calls.append((list(prompts), config.num_samples))
        yield from (PromptSamples(i, [p] * config.num_samples) for i, p in enumerate(prompts))

    monkeypatch.setattr(module, "iter_prompt_samples", sampler)
    a, b = Request("a", NUCLEUS, 0), Request("b", NUCLEUS, 1)
    assert bare_backend(module).generate_until([a, b, a], disable_tqdm=True) == ["a", "b", "a"]
    assert sorted(calls) == [(["a"], 2), (["b"], 1)]


def test_one_request_it_cannot_serve_sends_the_whole_batch_to_the_hf_backend(monkeypatch):
    module = backend()
    handed = []
    monkeypatch.setattr(
        module.HFLM,
        "generate_until",
        lambda self, requests, disable_tqdm=False: handed.append(requests) or ["x"] * len(requests),
    )
    monkeypatch.setattr(module, "iter_prompt_samples", lambda *a, **k: pytest.fail("the sampler must not run"))
    greedy = Request("b", {**NUCLEUS, "do_sample": False}, 1)
    requests = [Request("a", NUCLEUS, 0), greedy]
    assert bare_backend(module).generate_until(requests) == ["x", "x"] and handed == [requests]
