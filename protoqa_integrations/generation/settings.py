"""What a sample is: the paper's sampling settings, their checked bundle, and how a text becomes an answer.

Every engine (:mod:`protoqa_integrations.generation.engines`) and both harnesses' tasks share these, so
the same settings and cleaning hold wherever samples are drawn; the sampler itself is
:mod:`protoqa_integrations.generation.sampling`, which names all of them too.

>>> SamplingConfig(num_samples=100).signature().split("|")[:3]
['samples:100', 'top_p:0.9', 'temperature:0.69']
>>> answer_from_text(" A Beach Towel. And more")
'a beach towel'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from protoqa_integrations.generation.prompts import PROMPT_STYLES, clean_answer, prompt_for

__all__ = [
    "PAPER_TOP_P",
    "PAPER_TEMPERATURE",
    "CHAT_MAX_NEW_TOKENS",
    "PAPER_MAX_NEW_TOKENS",
    "PROTOQA_NUM_SAMPLES",
    "CFC_NUM_SAMPLES",
    "STOP_STRINGS",
    "GenerationError",
    "SamplingConfig",
    "PromptSamples",
    "default_protocol",
    "prompt_function",
    "cut_at_stop",
    "answer_from_text",
    "stop_words",
    "sampling_words",
]

PAPER_TOP_P = 0.9
"""Nucleus sampling's probability mass in the ProtoQA paper's GPT-2 baseline."""

PAPER_TEMPERATURE = 0.69
"""Softmax temperature in the ProtoQA paper's GPT-2 baseline."""

PAPER_MAX_NEW_TOKENS = 10
"""New tokens per sample in the ProtoQA paper's GPT-2 baseline."""

CHAT_MAX_NEW_TOKENS = 32
"""New tokens of a chat reply: room for a short preamble before the answer (the lm-eval chat tasks' too)."""

PROTOQA_NUM_SAMPLES = 300
"""Samples per ProtoQA question in the paper's GPT-2 baseline."""


CFC_NUM_SAMPLES = 100
"""Samples per CFC question (ProbEval's protocol)."""


STOP_STRINGS = ("\n", ".")
"""A sample ends at the first of these; the same strings are the ``until`` of the lm-eval tasks."""


_STOP_NAMES = {"\n": "newline", ".": "period", "\t": "tab"}

# How the harnesses name the settings that SamplingConfig.signature names otherwise.
_SETTING_WORDS = {
    "max_tokens": "max_new_tokens",
    "max_gen_toks": "max_new_tokens",
    "stop_seqs": "stop",
    "until": "stop",
    "stop_tokens": "stop",
    "stop_sequences": "stop",
}


def stop_words(stops: Sequence[str]) -> str:
    """Stop strings in the words of :meth:`SamplingConfig.signature`: ``newline``, ``period``, others escaped
    (no raw control characters), comma-separated; ``none`` for none.

    >>> stop_words(STOP_STRINGS), stop_words([]), stop_words(["Q:", "\\r"])
    ('newline,period', 'none', 'Q:,\\\\r')
    """
    words = [_STOP_NAMES.get(stop) or stop.encode("unicode_escape").decode("ascii") for stop in stops]
    return ",".join(words) or "none"


def sampling_words(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A harness's recorded sampling settings in the words of ``protoqa-eval generate``'s signature:
    ``max_new_tokens`` for ``max_tokens`` or ``max_gen_toks``, ``stop`` (:func:`stop_words`) for
    ``stop_seqs``, ``until`` or ``stop_tokens``; other settings as they are, order kept.

    >>> sampling_words({"temperature": 0.69, "max_tokens": 10, "stop_seqs": ["\\n", "."]})
    {'temperature': 0.69, 'max_new_tokens': 10, 'stop': 'newline,period'}
    >>> sampling_words({"until": [], "max_gen_toks": 32})
    {'stop': 'none', 'max_new_tokens': 32}
    """
    worded: dict[str, Any] = {}
    for key, value in settings.items():
        word = _SETTING_WORDS.get(key, key)
        if word == "stop" and isinstance(value, (list, tuple)):
            value = stop_words([str(stop) for stop in value])
        elif word == "stop" and isinstance(value, str):
            value = stop_words([value])
        worded.setdefault(word, value)
    return worded


class GenerationError(ValueError):
    """The model, tokenizer or settings cannot be used for sampling answers."""


def default_protocol(dataset: str) -> tuple[str, int]:
    """``(prompt style, samples per question)`` of a data set's protocol.

    >>> default_protocol("cfc"), default_protocol("protoqa")
    (('cfc-one-shot', 100), ('statement', 300))
    """
    return ("cfc-one-shot", CFC_NUM_SAMPLES) if dataset == "cfc" else ("statement", PROTOQA_NUM_SAMPLES)


@dataclass(frozen=True)
class SamplingConfig:
    """Nucleus sampling settings, checked on creation.

    Attributes:
        num_samples: samples per question.
        max_new_tokens: most tokens a sample may have.
        top_p: nucleus mass (1.0: no nucleus filtering).
        temperature: logits are divided by it (> 0).
        top_k: keep only the k most likely tokens first (0: off, as in the paper).
        batch_size: most sequences per forward pass.
        seed: question ``i`` of a list is sampled under ``seed + i``.

    >>> SamplingConfig(num_samples=0)
    Traceback (most recent call last):
    ...
    protoqa_integrations.generation.settings.GenerationError: num_samples must be >= 1, got 0
    """

    num_samples: int = PROTOQA_NUM_SAMPLES
    max_new_tokens: int = PAPER_MAX_NEW_TOKENS
    top_p: float = PAPER_TOP_P
    temperature: float = PAPER_TEMPERATURE
    top_k: int = 0
    batch_size: int = 100
    seed: int = 42

    def __post_init__(self) -> None:
        for name in ("num_samples", "max_new_tokens", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GenerationError(f"{name} must be >= 1, got {value!r}")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0:
            raise GenerationError(f"top_k must be >= 0 (0: off), got {self.top_k!r}")
        if not (isinstance(self.top_p, (int, float)) and 0 < self.top_p <= 1):
            raise GenerationError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if not (
            isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature) and self.temperature > 0
        ):
            raise GenerationError(f"temperature must be > 0, got {self.temperature!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise GenerationError(f"seed must be an integer, got {self.seed!r}")

    def signature(self) -> str:
        """How the samples were drawn, in the ``key:value|...`` style of the metric signatures."""
        return (
            f"samples:{self.num_samples}|top_p:{self.top_p}|temperature:{self.temperature}|top_k:{self.top_k}"
            f"|max_new_tokens:{self.max_new_tokens}|stop:{stop_words(STOP_STRINGS)}|batch:{self.batch_size}"
            f"|seed:{self.seed}|rng:splitmix64"
        )


@dataclass
class PromptSamples:
    """The samples drawn for one prompt.

    Attributes:
        index: position of the prompt in the list given to the sampler.
        texts: each sample's text up to its stop string, in sample order.
        answers: each sample's cleaned answer (:func:`answer_from_text`), ``""`` for none.
        skipped: why the prompt was not sampled (then both lists are empty), else None.
        usage: tokens the sampler reports for this prompt (``prompt_tokens``: the prompt's tokens
            times the forward passes that ran it; ``completion_tokens``: tokens generated before
            each sample's end), empty when it reports none.
    """

    index: int
    texts: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    skipped: Optional[str] = None
    usage: dict[str, int] = field(default_factory=dict)


def prompt_function(style: str) -> Callable[[str], str]:
    """The question-to-prompt function of a prompt style: :func:`~protoqa_integrations.generation.prompts.prompt_for`.

    >>> prompt_function("statement")("Name a fruit.")
    'one fruit is'
    """
    if style not in PROMPT_STYLES:
        raise GenerationError(f"unknown prompt style {style!r}; choose one of {', '.join(PROMPT_STYLES)}")
    return lambda question: prompt_for(question, style)


def cut_at_stop(text: str, stops: Sequence[str] = STOP_STRINGS) -> str:
    """``text`` up to (not including) the first stop string, as the harness's ``until`` cuts it.

    >>> cut_at_stop(" sun hat. And more")
    ' sun hat'
    """
    for stop in stops:
        if stop:
            text = text.split(stop, 1)[0]
    return text


def answer_from_text(text: str) -> str:
    """The answer in a sampled continuation: cut at the first stop string, then cleaned.

    >>> answer_from_text("Sun Screen\\nQ: next")
    'sun screen'
    >>> answer_from_text("\\nnothing on the first line")
    ''
    """
    return clean_answer(cut_at_stop(text))
