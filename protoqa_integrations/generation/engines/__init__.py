"""Sampling engines: one interface, several ways of drawing a question's samples.

``hf`` (the default, :mod:`protoqa_integrations.generation.sampling` bit for bit), ``vllm`` and
``openai`` (docs/api/protoqa_integrations.md). :func:`make_engine` builds one by name from
:data:`ENGINES`, which imports a built-in engine's module when it is first asked for; engine
modules import their heavy packages only when an engine is built.

>>> list(ENGINES)
['hf', 'openai', 'vllm']
"""

from __future__ import annotations

from typing import Any

from protoqa_integrations.generation.engines.base import (
    COLLAPSE_SHARE,
    ENGINES,
    Engine,
    EngineError,
    EngineOption,
    collapsed_share,
    engine_class,
    is_collapsed,
)

__all__ = [
    "ENGINES",
    "COLLAPSE_SHARE",
    "Engine",
    "EngineError",
    "EngineOption",
    "collapsed_share",
    "engine_class",
    "is_collapsed",
    "make_engine",
]


def make_engine(name: str, model: str, **options: Any) -> Engine:
    """The engine ``name`` for ``model`` (a Hub id or local folder; for ``openai`` the served model name).

    >>> make_engine("gpu", "gpt2")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    EngineError: unknown engine 'gpu'; choose one of: hf, openai, vllm
    >>> make_engine("openai", "m", batch=8)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    EngineError: the openai engine has no option 'batch'; its options: base_url, chat, revision, ...
    """
    cls = engine_class(name)
    known = cls.defaults()
    for key in options:
        if key not in known:
            raise EngineError(f"the {name} engine has no option {key!r}; its options: {', '.join(known)}")
    return cls.build(model, **options)
