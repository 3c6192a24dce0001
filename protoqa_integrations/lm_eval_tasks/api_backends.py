"""lm-evaluation-harness API backends that give each repeat of a request an independent sample.

The harness's ``local-completions`` and ``local-chat-completions`` backends send the same
``"seed": 1234`` with every request; a server that honours it (vLLM's, llama.cpp's)
answers a question's 300 repeats with one identical text. The harness's
``openai-completions`` sends the tasks' ``top_k``, which OpenAI's API rejects. These
subclasses send no seed (every request is sampled afresh by the server) and leave
``top_k`` out when it is 0 (off); everything else is the harness's own code:

* ``protoqa-local-completions``, ``protoqa-local-chat-completions``: any OpenAI-compatible server;
* ``protoqa-openai-completions``, ``protoqa-openai-chat-completions``: OpenAI's API.

Importing this module registers them (it needs ``lm-eval[api]``);
``python -m protoqa_integrations.lm_eval_tasks run ...`` imports it. The tasks' guard
(:func:`~protoqa_integrations.lm_eval_tasks.harness.collapsed_questions`) still reports a
question whose samples came back identical, whatever the backend.

>>> payload_without_fixed_seed({"prompt": "p", "seed": 1234, "top_k": 0, "top_p": 0.9})
{'prompt': 'p', 'top_p': 0.9}
"""

from __future__ import annotations

from typing import Any

__all__ = ["payload_without_fixed_seed", "register"]


def payload_without_fixed_seed(payload: dict[str, Any]) -> dict[str, Any]:
    """A generation request's payload without the seed, and without ``top_k`` when it is off (0 or -1).

    >>> payload_without_fixed_seed({"seed": 1, "top_k": 5})
    {'top_k': 5}
    """
    payload = dict(payload)
    payload.pop("seed", None)
    if payload.get("top_k") in (0, -1, None):
        payload.pop("top_k", None)
    return payload


def _independent(base: Any) -> Any:
    class Independent(base):
        __doc__ = f"{base.__name__} sending no fixed seed and no top_k of 0 with generation requests."

        def _create_payload(
            self,
            messages: Any,
            generate: bool = False,
            gen_kwargs: Any = None,
            seed: int = 1234,
            eos: Any = None,
            **kwargs: Any,
        ) -> dict:
            payload = super()._create_payload(
                messages, generate=generate, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs
            )
            return payload_without_fixed_seed(payload) if generate else payload

    Independent.__name__ = Independent.__qualname__ = f"Independent{base.__name__}"
    return Independent


def register() -> dict[str, Any]:
    """Register the four backends with the harness; returns name -> class."""
    from lm_eval.api.registry import register_model
    from lm_eval.models.openai_completions import (
        LocalChatCompletion,
        LocalCompletionsAPI,
        OpenAIChatCompletion,
        OpenAICompletionsAPI,
    )

    classes = {
        "protoqa-local-completions": LocalCompletionsAPI,
        "protoqa-local-chat-completions": LocalChatCompletion,
        "protoqa-openai-completions": OpenAICompletionsAPI,
        "protoqa-openai-chat-completions": OpenAIChatCompletion,
    }
    registered = {}
    for name, base in classes.items():
        registered[name] = register_model(name)(_independent(base))
    return registered


REGISTERED = register()
