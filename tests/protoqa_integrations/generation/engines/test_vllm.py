"""The ``vllm`` engine's own logic, without vLLM: its argument checks, the errors a user sees when vLLM
is missing or cannot start, the requests it builds, the prompts it skips, what it does with vLLM's
outputs, and vLLM's progress as the project's report. A stand-in ``vllm`` module records what the
engine asks of it; real vLLM runs in test_engines_real.py (slow, in the vLLM side environment)."""

from __future__ import annotations

import sys
import types

import pytest

from protoqa_integrations.generation.engines.base import EngineError, answers_of, request_seed
from protoqa_integrations.generation.engines.vllm import MEMORY_HINT, VLLMEngine, _vllm_bar
from protoqa_integrations.generation.settings import STOP_STRINGS, SamplingConfig


class Params:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


class Completion:
    def __init__(self, index: int, text: str) -> None:
        self.index, self.text, self.token_ids = index, text, [0] * len(text.split())


class Tokenizer:
    def __call__(self, text):
        return {"input_ids": list(range(len(text.split())))}


class LLM:
    """vLLM's ``LLM``: context of 8 tokens; each prompt answered with its samples in reverse index order."""

    made: list[dict] = []
    fail_with: BaseException | None = None

    def __init__(self, **kwargs):
        if LLM.fail_with is not None:
            raise LLM.fail_with
        LLM.made.append(kwargs)
        self.llm_engine = types.SimpleNamespace(model_config=types.SimpleNamespace(max_model_len=8))
        self.calls: list[tuple] = []
        self.broken = False

    def get_tokenizer(self):
        return Tokenizer()

    def generate(self, prompts, params, use_tqdm):
        return self._answer("generate", prompts, params, use_tqdm)

    def chat(self, messages, params, use_tqdm):
        return self._answer("chat", messages, params, use_tqdm)

    def _answer(self, how, prompts, params, use_tqdm):
        self.calls.append((how, prompts, params, use_tqdm))
        if self.broken:
            raise RuntimeError("CUDA error: device-side assert triggered\ndetails")
        return [
            types.SimpleNamespace(
                prompt_token_ids=[0, 1, 2],
                outputs=[Completion(j, f" Sample {j}. more") for j in reversed(range(p.kwargs["n"]))],
            )
            for p in params
        ]


@pytest.fixture
def vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM, module.SamplingParams, module.__version__ = LLM, Params, "0.0-stand-in"
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_cpu=lambda: False)
    module.platforms = platforms
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    monkeypatch.setattr(LLM, "made", [])
    monkeypatch.setattr(LLM, "fail_with", None)
    return module


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tensor_parallel_size": 0}, "--tensor-parallel-size must be >= 1, got 0"),
        ({"pipeline_parallel_size": True}, "--pipeline-parallel-size must be >= 1, got True"),
        ({"data_parallel_size": "2"}, "--data-parallel-size must be >= 1, got '2'"),
        ({"gpu_memory_utilization": 0}, r"--gpu-memory-utilization must be a number in \(0, 1\], got 0"),
        ({"gpu_memory_utilization": 1.5}, r"--gpu-memory-utilization must be a number in \(0, 1\], got 1.5"),
        ({"max_model_len": 0}, "--max-model-len must be >= 1, got 0"),
        # Like the integer options, a share given as text (a config file, a caller's string) is refused.
        ({"gpu_memory_utilization": "0.5"}, r"--gpu-memory-utilization must be a number in \(0, 1\], got '0.5'"),
        ({"gpu_memory_utilization": True}, r"--gpu-memory-utilization must be a number in \(0, 1\], got True"),
        ({"gpu_memory_utilization": None}, r"--gpu-memory-utilization must be a number in \(0, 1\], got None"),
        ({"gpu_memory_utilization": float("nan")}, r"--gpu-memory-utilization must be a number in \(0, 1\], got nan"),
        ({"max_model_len": "4096"}, "--max-model-len must be >= 1, got '4096'"),
        ({"max_model_len": 4096.0}, "--max-model-len must be >= 1, got 4096.0"),
    ],
)
def test_bad_settings_are_refused_before_vllm_is_imported(monkeypatch, options, message):
    monkeypatch.setitem(sys.modules, "vllm", None)  # importing it would fail: the check comes first
    with pytest.raises(EngineError, match=message):
        VLLMEngine("some/model", **options)


def test_without_vllm_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(EngineError) as error:
        VLLMEngine("some/model")
    from protoqa_core.install import install_command

    # the command for this installation (the project is on no package index)
    assert str(error.value).startswith("the vllm engine needs vLLM (") and install_command("vllm") in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("fault", "hint"),
    [
        (RuntimeError("CUDA out of memory. Tried to allocate 2 GiB\ntrace"), f"; {MEMORY_HINT}"),
        (ValueError("No available memory for the cache blocks."), f"; {MEMORY_HINT}"),
        (RuntimeError("Engine core initialization failed. See root cause above."), "; if vLLM's log above shows"),
        (OSError("some/model is not a local folder and is not a valid model identifier"), ""),
    ],
)
def test_a_model_vllm_cannot_start_is_one_line_with_a_memory_hint_where_it_helps(vllm, fault, hint):
    LLM.fail_with = fault
    with pytest.raises(EngineError) as error:
        VLLMEngine("some/model")
    message = str(error.value)
    first = str(fault).splitlines()[0]
    assert message.startswith(f"vLLM could not start some/model: {first}") and "\n" not in message
    assert (hint in message) if hint else message == f"vLLM could not start some/model: {first}"


def test_the_engine_starts_vllm_with_prefix_caching_and_no_remote_code(vllm):
    engine = VLLMEngine("some/model", revision="abc", tensor_parallel_size=2, max_model_len=4096, seed=7)
    (made,) = LLM.made
    assert made["enable_prefix_caching"] is True and made["trust_remote_code"] is False
    assert (made["model"], made["revision"], made["tensor_parallel_size"], made["seed"]) == ("some/model", "abc", 2, 7)
    assert made["max_model_len"] == 4096 and "data_parallel_size" not in made  # 1 is vLLM's own default
    assert engine.describe() == {
        "engine": "vllm",
        "model": "some/model",
        "revision": "abc",
        "chat": False,
        "vllm": "0.0-stand-in",
        "tensor_parallel_size": 2,
        "pipeline_parallel_size": 1,
        "data_parallel_size": 1,
        "gpu_memory_utilization": 0.9,
        "max_model_len": 4096,
        "dtype": "auto",
        "request_seeds": True,
    }
    VLLMEngine("m", data_parallel_size=2)
    assert LLM.made[-1]["data_parallel_size"] == 2


def test_each_request_asks_for_every_sample_with_the_protocol_settings_and_a_spread_seed(vllm):
    config = SamplingConfig(num_samples=5, top_k=0, seed=3)
    params = VLLMEngine("m")._params(config, 11).kwargs
    assert params == {
        "n": 5,
        "top_p": config.top_p,
        "temperature": config.temperature,
        "max_tokens": config.max_new_tokens,
        "stop": list(STOP_STRINGS),
        "seed": request_seed(11, 0),
    }
    assert VLLMEngine("m")._params(SamplingConfig(top_k=40), 1).kwargs["top_k"] == 40
    assert VLLMEngine("m", chat=True)._params(config, 1).kwargs["stop"] is None  # a chat reply ends on its own
    vllm.platforms.current_platform = types.SimpleNamespace(is_cpu=lambda: True)
    cpu = VLLMEngine("m")
    assert "seed" not in cpu._params(config, 11).kwargs and cpu.describe()["request_seeds"] is False


def test_prompts_that_cannot_be_sampled_are_skipped_and_the_rest_sampled_in_one_call(vllm):
    engine = VLLMEngine("m")
    config = SamplingConfig(num_samples=3, max_new_tokens=4, seed=0)
    done = sorted(engine.sample(["one pet is", "", "a b c d e", "one fruit is"], config), key=lambda d: d.index)
    assert done[1].skipped == "the prompt tokenizes to nothing"
    assert done[2].skipped == "the prompt has 5 tokens; with 4 new tokens that exceeds the model's context of 8"
    ((how, prompts, params, progress),) = engine.llm.calls
    assert how == "generate" and prompts == ["one pet is", "one fruit is"] and progress is False
    assert [p.kwargs["seed"] for p in params] == [request_seed(0, 0), request_seed(3, 0)]  # seeds of positions 0, 3
    assert done[0].texts == [" Sample 0. more", " Sample 1. more", " Sample 2. more"]  # in sample order
    assert done[0].answers == ["sample 0", "sample 1", "sample 2"]
    assert engine.usage == {"prompt_tokens": 6, "completion_tokens": 2 * 3 * 3}


def test_chat_prompts_go_to_vllm_chat_and_replies_are_read_as_replies(vllm):
    engine = VLLMEngine("m", chat=True)
    messages = [{"role": "user", "content": "Name a pet."}]
    (done,) = engine.sample([messages], SamplingConfig(num_samples=1))
    ((how, prompts, _, _),) = engine.llm.calls
    assert how == "chat" and prompts == [messages] and done.answers == answers_of(done.texts, chat=True)


def test_a_fault_while_sampling_says_the_work_is_kept(vllm):
    engine = VLLMEngine("m")
    engine.llm.broken = True
    with pytest.raises(EngineError) as error:
        list(engine.sample(["one pet is"], SamplingConfig(num_samples=2, max_new_tokens=4)))
    assert str(error.value) == (
        "vLLM failed while sampling: CUDA error: device-side assert triggered; the questions already sampled are "
        "kept, run the same command again to resume"
    )
    engine.close()
    assert engine.llm is None


def test_vllm_progress_becomes_the_project_report_of_samples(monkeypatch):
    assert _vllm_bar(False) is False
    make = _vllm_bar(True)
    requests = ["r1", "r2"]
    assert make(requests, desc="Adding requests") is requests  # adding requests: nothing reported
    shown = []
    monkeypatch.setattr(
        "protoqa_integrations.generation.engines.vllm.report_progress",
        lambda total, desc, unit, enabled: types.SimpleNamespace(
            update=lambda n: shown.append(("update", n)),
            set_postfix_str=lambda text, refresh: shown.append(("postfix", text)),
            close=lambda: shown.append(("close",)),
            total=total,
        ),
    )
    bar = make(total=600, desc="Processed prompts")
    bar.update(300)
    bar.postfix = "est. speed input: 10 toks/s"
    bar.refresh()
    bar.close()
    assert bar.n == 300 and bar.postfix == "" and bar.format_dict["elapsed"] > 0
    assert shown == [("update", 300), ("postfix", "input: 10 toks/s"), ("close",)]
