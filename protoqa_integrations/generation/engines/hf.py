"""``hf``: the batched ``transformers`` sampler behind the engine interface."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from protoqa_core.install import install_command
from protoqa_integrations.generation.engines.base import Engine, EngineError, Prompt, library_versions
from protoqa_integrations.generation.sampling import iter_prompt_samples, load_model, resolve_device
from protoqa_integrations.generation.settings import GenerationError, PromptSamples, SamplingConfig

__all__ = ["HFEngine"]


class HFEngine(Engine):
    """:func:`~protoqa_integrations.generation.sampling.iter_prompt_samples` on a loaded model.

    Completions only: the ``vllm`` and ``openai`` engines apply a chat model's template.

    >>> engine = HFEngine.build("gpt2", device="cpu")  # doctest: +SKIP
    >>> next(engine.sample(["One fruit is"], SamplingConfig(num_samples=3))).answers  # doctest: +SKIP
    ['an apple', 'the banana', 'a pear']
    """

    name = "hf"
    summary = "transformers in this process"
    common = ("revision", "device", "dtype")

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        model_name: str = "the model",
        *,
        revision: Optional[str] = None,
        device: str = "auto",
        dtype: str = "auto",
    ) -> None:
        super().__init__()
        self.model, self.tokenizer, self.model_name = model, tokenizer, model_name
        self.revision, self.device, self.dtype = revision, device, dtype

    @classmethod
    def build(  # type: ignore[override]  # its own keywords, which make_engine checks
        cls, model: str, *, revision: Optional[str] = None, device: str = "auto", dtype: str = "auto"
    ) -> HFEngine:
        """Load ``model`` with :func:`~protoqa_integrations.generation.sampling.load_model` and wrap it."""
        loaded, tokenizer = load_model(model, device, dtype)
        return cls(
            loaded, tokenizer, model, revision=revision, device=str(next(loaded.parameters()).device), dtype=dtype
        )

    @classmethod
    def recorded_settings(cls, model: str, options: dict[str, Any]) -> dict[str, Any]:
        # The device changes the samples (float rounding): the one "auto" resolves to is recorded.
        settings = super().recorded_settings(model, options)
        try:
            settings["device"] = resolve_device(options.get("device", "auto"))
        except ImportError as exc:
            raise GenerationError(
                f"the hf engine needs torch and transformers ({exc}); {install_command('train')}"
            ) from exc
        return settings

    @classmethod
    def signature(cls, config: SamplingConfig, settings: dict[str, Any]) -> str:
        # The hf samples also depend on the batch size and the counter-based generator, which the sampler's
        # own signature names.
        return config.signature()

    def describe(self) -> dict[str, Any]:
        # What was loaded, as transformers reports it: the folder or Hub id and, from the Hub, the commit.
        config = getattr(self.model, "config", None)
        loaded = {
            "model_path": getattr(config, "_name_or_path", None) or None,
            "model_commit": getattr(config, "_commit_hash", None) or None,
        }
        return {
            "engine": self.name,
            "model": self.model_name,
            "revision": self.revision,
            "chat": self.chat,
            "device": self.device,
            "dtype": self.dtype,
            **{k: v for k, v in loaded.items() if isinstance(v, str)},
            **library_versions("torch", "transformers"),
        }

    def _sample(
        self, prompts: list[Prompt], config: SamplingConfig, seeds: list[int], progress: Optional[bool]
    ) -> Iterator[PromptSamples]:
        texts = [p for p in prompts if isinstance(p, str)]
        if len(texts) != len(prompts):
            raise EngineError("the hf engine samples completions only; chat prompts need --engine vllm or openai")
        for done in iter_prompt_samples(
            self.model,
            self.tokenizer,
            texts,
            config,
            seeds=seeds,
            progress=progress,
            model_name=self.model_name,
        ):
            for name, count in done.usage.items():
                self.usage[name] = self.usage.get(name, 0) + count
            yield done
