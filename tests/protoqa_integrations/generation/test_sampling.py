"""The one sampling code path: what it reads of a model and tokenizer, whether the Hub can be reached,
how a model is loaded (and refused), and what ``iter_prompt_samples`` hands back: prompts in order,
skipped prompts with their reason, token counts, progress, the model's mode and the global RNG left as
they were. Runs on a tiny random GPT-2 over a word-level tokenizer (the sampler's determinism and its
independence from batch neighbours are checked on fitted models in test_generation.py)."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from protoqa_integrations.generation.sampling import (
    check_tokenizer,
    context_length,
    hub_unavailable,
    is_local_model,
    iter_prompt_samples,
    load_model,
    resolve_device,
    sample_prompts,
)
from protoqa_integrations.generation.settings import GenerationError, SamplingConfig


def model_with(**config):
    return SimpleNamespace(config=SimpleNamespace(**config))


def test_the_context_length_is_the_first_positive_integer_the_config_states():
    assert context_length(model_with(max_position_embeddings=2048, n_positions=1024)) == 2048
    assert context_length(model_with(max_position_embeddings=None, n_ctx=512)) == 512
    assert context_length(model_with(n_positions=True, seq_length=256)) == 256  # a flag is not a length
    assert context_length(model_with(n_positions=0, max_sequence_length=-1)) is None
    assert context_length(SimpleNamespace()) is None


def test_a_tokenizer_without_eos_is_refused_naming_the_model_and_pad_falls_back_to_eos():
    assert check_tokenizer(SimpleNamespace(eos_token_id=2, pad_token_id=0)) == (2, 0)
    assert check_tokenizer(SimpleNamespace(eos_token_id=5)) == (5, 5)
    with pytest.raises(GenerationError, match="the tokenizer of org/model has no end-of-text"):
        check_tokenizer(SimpleNamespace(eos_token_id=None, pad_token_id=0), "org/model")


def test_a_named_device_is_kept():
    assert [resolve_device(d) for d in ("cpu", "cuda:1", "mps")] == ["cpu", "cuda:1", "mps"]


@pytest.fixture
def hub_env(monkeypatch):
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_offline_mode_is_read_from_either_variable_and_false_values_are_not_offline(hub_env):
    hub_env.setenv("TRANSFORMERS_OFFLINE", "True")
    assert hub_unavailable() == "offline mode is on (TRANSFORMERS_OFFLINE=True)"
    for off in ("0", "false", "No", "OFF", ""):
        hub_env.setenv("TRANSFORMERS_OFFLINE", off)
        hub_env.setenv("HF_HUB_OFFLINE", off)
        hub_env.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")  # then only the proxy can tell
        assert hub_unavailable() is None


def test_the_endpoint_is_tried_and_a_refused_connection_is_named(hub_env):
    # The endpoint huggingface_hub will use: read from its constants once it is imported, as here.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        hub_env.setattr("huggingface_hub.constants.ENDPOINT", f"http://127.0.0.1:{port}")
        assert hub_unavailable(timeout=2) is None
    # closed now
    reason = hub_unavailable(timeout=2)
    assert reason is not None and reason.startswith("the Hub (127.0.0.1) cannot be reached (")


def test_a_missing_folder_or_an_uncached_model_without_the_hub_fails_at_once(hub_env, tmp_path):
    with pytest.raises(GenerationError, match=f"there is no model folder {tmp_path / 'nothing'}"):
        load_model(str(tmp_path / "nothing"))
    with pytest.raises(GenerationError, match="there is no model folder ./nothing"):
        load_model("./nothing")
    hub_env.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(GenerationError) as error:
        load_model("someone/not-cached", cache_dir=str(tmp_path / "cache"))
    assert str(error.value) == (
        "cannot load the model 'someone/not-cached': it is not in the local cache and offline mode is on "
        "(HF_HUB_OFFLINE=1); download it where the Hub is reachable, or give a local model folder"
    )


WORDS = ["one pet is", "a dog", "a cat", "the fish", "one fruit is", "an apple", "."]


@pytest.fixture(scope="module")
def tiny():
    from tests.support.tiny_lm import tiny_gpt2, word_tokenizer

    tokenizer = word_tokenizer(WORDS)
    return tiny_gpt2(tokenizer, n_positions=16), tokenizer


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_prompts_come_back_in_order_with_skips_usage_and_progress(tiny):
    import torch

    model, tokenizer = tiny
    model.train()
    long_prompt = " ".join(["a dog"] * 5)  # 10 tokens + 8 new > the context of 16
    prompts = ["one pet is", "", long_prompt, "one fruit is"]
    config = SamplingConfig(num_samples=3, batch_size=4, max_new_tokens=8, seed=5)
    progress = []
    state = torch.random.get_rng_state()
    done = list(iter_prompt_samples(model, tokenizer, prompts, config, on_progress=lambda *p: progress.append(p)))
    assert [d.index for d in done] == [0, 1, 2, 3]
    assert done[1].skipped == "the prompt tokenizes to nothing" and done[1].texts == done[1].answers == []
    assert done[2].skipped == "the prompt has 10 tokens; with 8 new tokens that exceeds the model's context of 16"
    for d in (done[0], done[3]):
        assert d.skipped is None and len(d.texts) == len(d.answers) == 3
        assert d.usage["prompt_tokens"] == 3 and 0 <= d.usage["completion_tokens"] <= 3 * 8
    assert progress[-1] == (6, 6)  # samples drawn, of all the eligible prompts' samples
    assert model.training and torch.equal(torch.random.get_rng_state(), state)  # mode and global RNG as they were
    # Seeds default to seed + position: the last prompt alone under seed 8 draws the same samples.
    again = sample_prompts(model, tokenizer, ["one fruit is"], config, seeds=[8])
    assert again[0].texts == done[3].texts


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_seeds_must_match_the_prompts_and_a_tokenizer_needs_eos(tiny):
    model, tokenizer = tiny
    with pytest.raises(GenerationError, match="1 seeds for 2 prompts"):
        sample_prompts(model, tokenizer, ["one pet is", "one fruit is"], SamplingConfig(num_samples=1), seeds=[1])
    no_eos = SimpleNamespace(eos_token_id=None, pad_token_id=0)
    with pytest.raises(GenerationError, match="the tokenizer of tiny-gpt2 has no end-of-text"):
        list(iter_prompt_samples(model, no_eos, ["x"], SamplingConfig(num_samples=1), model_name="tiny-gpt2"))


@pytest.mark.slow
def test_an_unknown_dtype_or_a_folder_without_a_model_is_one_line(tmp_path):
    from tests.support.tiny_lm import build_word_gpt2

    folder = build_word_gpt2(tmp_path / "tiny", WORDS)
    with pytest.raises(GenerationError, match="unknown dtype 'float8'; choose one of auto, float32, float16, bfloat16"):
        load_model(str(folder), device="cpu", dtype="float8")
    model, tokenizer = load_model(str(folder), device="cpu")
    assert not model.training and tokenizer.eos_token_id == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(GenerationError, match=r"cannot load the model '.*empty': ") as error:
        load_model(str(tmp_path / "empty"), device="cpu")
    assert "\n" not in str(error.value)


def test_a_model_name_is_a_local_folder_when_it_is_one_or_is_written_as_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    local = ["models/tiny", "./missing", "~/models/gpt2", "/no/such/folder"]
    assert [is_local_model(name) for name in local] == [True] * 4
    assert [is_local_model(name) for name in ["gpt2", "openai-community/gpt2", "models/missing"]] == [False] * 3
