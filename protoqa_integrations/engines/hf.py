"""``hf``: the batched ``transformers`` sampler behind the engine interface."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Optional

from ..generation import PromptSamples, SamplingConfig, iter_prompt_samples, load_model
from .base import Engine, EngineError, Prompt

__all__ = ["HFEngine"]


class HFEngine(Engine):
    """:func:`~protoqa_integrations.generation.iter_prompt_samples` on a loaded model.

    Its answers are exactly that function's. It samples completions only: a chat model
    is served by the ``vllm`` or ``openai`` engine, which apply its chat template.

    >>> engine = HFEngine.load("gpt2", device="cpu")  # doctest: +SKIP
    >>> next(engine.sample(["One fruit is"], SamplingConfig(num_samples=3))).answers  # doctest: +SKIP
    ['an apple', 'the banana', 'a pear']
    """

    name = "hf"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        model_name: str = "the model",
        *,
        revision: Optional[str] = None,
        device: str = "auto",
        dtype: str = "auto",
        chat: bool = False,
    ) -> None:
        super().__init__()
        self.model, self.tokenizer, self.model_name = model, tokenizer, model_name
        self.revision, self.device, self.dtype, self.chat = revision, device, dtype, chat

    @classmethod
    def load(
        cls,
        model: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        revision: Optional[str] = None,
        chat: bool = False,
        **unused: Any,
    ) -> HFEngine:
        """Load ``model`` with :func:`~protoqa_integrations.generation.load_model` and wrap it."""
        loaded, tokenizer = load_model(model, device, dtype)
        if chat:
            raise EngineError("the hf engine samples completions only; use --engine vllm or openai for --chat")
        return cls(
            loaded,
            tokenizer,
            model,
            revision=revision,
            device=str(next(loaded.parameters()).device),
            dtype=dtype,
            chat=chat,
        )

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "model": self.model_name, "revision": self.revision, "chat": self.chat}

    def sampling_signature(self, config: SamplingConfig) -> str:
        # The signature it always had, so earlier answers files compare equal.
        return config.signature()

    def sample(
        self,
        prompts: Sequence[Prompt],
        config: SamplingConfig,
        *,
        seeds: Optional[Sequence[int]] = None,
        progress: Optional[bool] = False,
    ) -> Iterator[PromptSamples]:
        texts = [p for p in prompts if isinstance(p, str)]
        if len(texts) != len(prompts):
            raise EngineError("the hf engine samples completions only; chat prompts need --engine vllm or openai")
        yield from iter_prompt_samples(
            self.model,
            self.tokenizer,
            texts,
            config,
            seeds=seeds,
            progress=progress,
            model_name=self.model_name,
        )
