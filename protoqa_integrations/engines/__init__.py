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

from .base import (
    CHAT_MAX_NEW_TOKENS,
    COLLAPSE_SHARE,
    ENGINES,
    Engine,
    EngineError,
    collapsed_share,
    is_collapsed,
    make_engine,
)

__all__ = ["ENGINES", "CHAT_MAX_NEW_TOKENS", "COLLAPSE_SHARE", "Engine", "EngineError", "collapsed_share",
           "is_collapsed", "make_engine"]
