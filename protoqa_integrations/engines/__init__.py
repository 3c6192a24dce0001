"""Sampling engines: one interface, several ways of drawing a question's samples.

* ``hf``: the batched ``transformers`` sampler of :mod:`protoqa_integrations.generation`
  (the default; its answers are those of that module, bit for bit);
* ``vllm``: vLLM's offline engine, every prompt in one call (``pip install 'protoqa-eval[vllm]'``);
* ``openai``: any OpenAI-compatible server, completions or chat completions
  (``pip install 'protoqa-eval[openai]'``; the key is read from ``$OPENAI_API_KEY`` only).

Every engine takes a list of prompts (a string, or a list of chat messages), a
:class:`~protoqa_integrations.generation.SamplingConfig` and one seed per prompt, and
yields :class:`~protoqa_integrations.generation.PromptSamples`; :func:`make_engine` builds
one by name. Engine modules import their heavy packages only when an engine is built.

>>> ENGINES
('hf', 'vllm', 'openai')
"""

from __future__ import annotations

from typing import Any

from .base import (
    CHAT_MAX_NEW_TOKENS,
    COLLAPSE_SHARE,
    ENGINES,
    Engine,
    EngineError,
    collapsed_share,
    is_collapsed,
)

__all__ = [
    "ENGINES",
    "CHAT_MAX_NEW_TOKENS",
    "COLLAPSE_SHARE",
    "Engine",
    "EngineError",
    "collapsed_share",
    "is_collapsed",
    "make_engine",
]


def make_engine(name: str, model: str, **options: Any) -> Engine:
    """The engine ``name`` for ``model`` (a Hub id or local folder; for ``openai`` the served model name).

    ``options`` are the engine's own (see each engine class).

    >>> make_engine("gpu", "gpt2")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    EngineError: unknown engine 'gpu'; choose one of hf, vllm, openai
    """
    if name == "hf":
        from .hf import HFEngine

        return HFEngine.load(model, **options)
    if name == "vllm":
        from .vllm import VLLMEngine

        return VLLMEngine(model, **options)
    if name == "openai":
        from .openai import OpenAIEngine

        return OpenAIEngine(model, **options)
    raise EngineError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
