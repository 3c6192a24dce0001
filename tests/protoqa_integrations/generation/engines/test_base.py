"""The engine interface: the registry, seeds, chat prompts and answers from chat replies.

The openai engine's faults are tested in test_openai.py, the waits between its retries in
test_request_bounds.py; the real engines (vLLM offline, ``vllm serve``, lm-eval's API backends)
in test_engines_real.py.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

from protoqa_integrations.generation.engines import (
    ENGINES,
    Engine,
    EngineError,
    collapsed_share,
    is_collapsed,
    make_engine,
)
from protoqa_integrations.generation.engines.base import answers_of, request_seed
from protoqa_integrations.generation.prompts import answer_from_reply, cfc_chat_messages, protoqa_chat_messages
from protoqa_integrations.generation.settings import PromptSamples, SamplingConfig
from tests.support.paths import REPO
from tests.support.processes import run_python

KEY = "sk-test-secret-0123456789"


@pytest.mark.parametrize(
    "name",
    [
        "protoqa_integrations.generation.engines.base",
        "protoqa_integrations.generation.engines.openai",
        "protoqa_integrations.generation.engines.request_bounds",
        "protoqa_integrations.generation.engines.hf",
        "protoqa_integrations.generation.engines.vllm",
        "protoqa_integrations.generation.engines",
    ],
)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


# ---------------------------------------------------------------- chat prompts and replies


@pytest.mark.parametrize(
    "reply, answer",
    [
        ("1. Brush teeth", "brush teeth"),
        ("**Coffee**", "coffee"),
        ("Sure! Here's one: a beach towel.", "a beach towel"),
        ("Sure! Here's one:\n\n**Sunscreen**\n\nIt protects you from the sun.", "sunscreen"),
        ("- Umbrella\n- Hat", "umbrella"),
        ('"Pizza"', "pizza"),
        ("\u201cA dog\u201d", "a dog"),
        ("A: into the lake.", "into the lake"),
        ("Answer: the kitchen", "the kitchen"),
        ("2) _Hot dogs_", "hot dogs"),
        ("Pizza! Definitely.", "pizza"),
        ("Certainly: the bathroom", "the bathroom"),
        ("", ""),
        ("\n\n  \n", ""),
        ("1.5 hours", "1.5 hours"),
        # markdown tables: never the header row
        ("| # | answer |\n|---|---|\n| 1 | Sunscreen |\n| 2 | Hat |", "sunscreen"),
        ("Here are a few:\n\n| Answer |\n| :---: |\n| **Pizza** |", "pizza"),
        ("| # | answer |\n|---|---|", ""),
        # several answers in one line: the first
        ("Sunscreen, a hat, a towel.", "sunscreen"),
        ("Salt; pepper", "salt"),
        ("Bread and butter", "bread and butter"),
        ("Milk, please", "milk, please"),
        # quotes, headings, a preamble with nothing after it
        ("> Sunscreen", "sunscreen"),
        ("### Sunscreen", "sunscreen"),
        ("Sure! Here's one:", ""),
        # nothing but punctuation, separators or invisible characters: no answer
        ("...", ""),
        ("\u2014", ""),
        ("---\n***", ""),
        ("\u200b\u200c\u200d\ufeff", ""),
        ("\u00a0\u3000\u2028", ""),
        ("\u2066\u202e", ""),
        # bidi controls and zero-width characters inside an answer are removed
        ("\u202eazzip\u202c", "azzip"),
        ("piz\u200bza", "pizza"),
        ("\u2067Coffee\u2069", "coffee"),
    ],
)
def test_answers_from_chat_replies_of_real_shapes(reply, answer):
    assert answer_from_reply(reply) == answer


def test_an_over_long_reply_gives_a_capped_answer():
    assert len(answer_from_reply("word " * 500)) <= 80


def test_chat_prompts_are_turns_with_an_optional_system_prompt():
    turns = protoqa_chat_messages("Name something people bring to a picnic.", system_prompt="Be brief.")
    assert [t["role"] for t in turns] == ["system", "user"]
    assert turns[1]["content"].endswith("Q: Name something people bring to a picnic?")
    cfc = cfc_chat_messages("a farmer with crops. where are the farmers?")
    assert [t["role"] for t in cfc] == ["user", "assistant", "user"]
    assert cfc[0]["content"].endswith(
        "[Q]: a man throws a stick into the lake for his dog. where does the man throw the stick?"
    )
    assert cfc[2]["content"] == "[Q]: a farmer with crops. where are the farmers?"
    with pytest.raises(ValueError):
        protoqa_chat_messages("  ")


def test_the_guard_flags_collapsed_samples_only_above_temperature_zero():
    assert is_collapsed(["x"] * 300, 0.69)
    assert not is_collapsed(["x"] * 300, 0.0)
    assert not is_collapsed(["x"] * 5, 0.69)  # too few to judge
    assert not is_collapsed(["x"] * 270 + [str(i) for i in range(30)], 0.69)  # 90%: not more than 90%
    assert is_collapsed(["x"] * 271 + [str(i) for i in range(29)], 0.69)
    assert collapsed_share([]) == 0.0
    assert answers_of(["1. **Sun hat**"], chat=True) == ["sun hat"]


def test_request_seeds_are_distinct_and_repeatable():
    seeds = {request_seed(q, r) for q in range(50) for r in range(5)}
    assert len(seeds) == 250 and all(0 <= s < 2**31 for s in seeds)


class _Echo(Engine):
    """An engine that draws its own way: each prompt's text and seed."""

    def _sample(self, prompts, config, seeds, progress):
        for i in reversed(range(len(prompts))):  # any order, as the contract allows
            yield PromptSamples(i, [f"{prompts[i]}{seeds[i]}"], [prompts[i]])


def test_engine_sample_lists_the_prompts_and_gives_each_its_seed():
    config = SamplingConfig(num_samples=1, seed=7)
    assert [s.texts for s in _Echo().sample(iter(["a", "b"]), config)] == [["b8"], ["a7"]]
    assert [s.texts for s in _Echo().sample(["a"], config, seeds=[3.0])] == [["a3"]]
    samples = _Echo().sample(["a", "b"], config, seeds=[1])  # checked when drawn, as the engines' own were
    with pytest.raises(EngineError, match="^1 seeds for 2 prompts$"):
        next(samples)


def test_the_engine_registry_checks_and_names_what_joins_it():
    assert ENGINES.names() == ("hf", "openai", "vllm") and ENGINES["openai"].name == "openai"
    with pytest.raises(EngineError, match="unknown engine 'gpu'; choose one of: hf, openai, vllm"):
        make_engine("gpu", "gpt2")
    out = run_python(
        [
            "-c",
            "from protoqa_integrations.generation.engines import ENGINES, Engine\n"
            "class Echo(Engine):\n"
            "    common = ('device',)\n"
            "    def __init__(self, model, *, device='cpu'):\n"
            "        super().__init__()\n"
            "ENGINES.register('echo')(Echo)\n"
            "print(ENGINES.names(), Echo.name)\n"
            "class Bad(Engine):\n"
            "    common = ('gpu',)\n"
            "for name, cls in (('bad', Bad), ('echo', Echo)):\n"
            "    try:\n"
            "        ENGINES.register(name)(cls)\n"
            "    except ValueError as exc:\n"
            "        print(exc)\n",
        ],
        REPO,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    registered, bad, twice = out.stdout.splitlines()
    assert registered == "('hf', 'openai', 'vllm', 'echo') echo"
    assert bad == "engine 'bad': Bad.build takes no keyword 'gpu'"
    assert twice.endswith("name 'echo' is registered already")
