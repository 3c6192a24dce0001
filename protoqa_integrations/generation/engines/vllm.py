"""``vllm``: vLLM's offline engine, every prompt in one ``generate`` (or ``chat``) call.

``SamplingParams(n=num_samples, top_p, temperature, max_tokens, stop, seed)`` per prompt,
prefix caching on (the samples of a question, and the one-shot CFC example shared by all
questions, reuse the prompt's cache). Tensor, pipeline and data parallelism are vLLM's
own options; several nodes are joined with vLLM's Ray support (README, "Evaluate a model").

vLLM starts worker processes: a script that builds this engine must do it under
``if __name__ == "__main__":`` (``protoqa-eval generate`` does).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Optional

from protoqa_core.install import install_command
from protoqa_core.progress import report_progress
from protoqa_integrations.generation.engines.base import (
    Engine,
    EngineError,
    EngineOption,
    Prompt,
    answers_of,
    request_seed,
)
from protoqa_integrations.generation.settings import STOP_STRINGS, PromptSamples, SamplingConfig

__all__ = ["VLLMEngine", "MEMORY_HINT"]

MEMORY_HINT = (
    "lower --gpu-memory-utilization (the share of GPU memory, or of RAM for vLLM's CPU build, that "
    "vLLM reserves) or --max-model-len, or spread the model with --tensor-parallel-size"
)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _check_options(sizes: tuple[int, int, int], share: float, max_model_len: Optional[int]) -> None:
    """Refuse engine options vLLM would misread (``sizes``: tensor, pipeline, data parallel): types first.

    >>> _check_options((1, 1, 1), "0.5", None)
    Traceback (most recent call last):
    ...
    protoqa_integrations.generation.engines.base.EngineError: --gpu-memory-utilization must be a number in (0, 1], got '0.5'
    """
    names = ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size")
    for option, value in zip(names, sizes, strict=True):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineError(f"{option} must be >= 1, got {value!r}")
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise EngineError(f"--gpu-memory-utilization must be a number in (0, 1], got {share!r}")
    if max_model_len is not None and (
        isinstance(max_model_len, bool) or not isinstance(max_model_len, int) or max_model_len < 1
    ):
        raise EngineError(f"--max-model-len must be >= 1, got {max_model_len!r}")


class VLLMEngine(Engine):
    """vLLM's ``LLM`` on ``model`` (Hub id or local folder; no remote code).

    >>> engine = VLLMEngine("meta-llama/Llama-2-7b-hf", tensor_parallel_size=2)  # doctest: +SKIP
    >>> next(engine.sample(["One fruit is"], SamplingConfig(num_samples=300))).answers[:2]  # doctest: +SKIP
    ['an apple', 'a banana']
    """

    name = "vllm"
    summary = "vLLM's offline engine"
    common = ("revision", "chat", "dtype", "seed")
    options = (
        EngineOption("tensor_parallel_size", "--tensor-parallel-size", "GPUs per model replica", int, recorded=True),
        EngineOption(
            "pipeline_parallel_size", "--pipeline-parallel-size", "pipeline stages (nodes)", int, recorded=True
        ),
        EngineOption("data_parallel_size", "--data-parallel-size", "model replicas", int),
        EngineOption(
            "gpu_memory_utilization",
            "--gpu-memory-utilization",
            "share of GPU memory (RAM on vLLM's CPU build) to reserve",
            float,
        ),
        EngineOption("max_model_len", "--max-model-len", "context length (default: the model's)", int, recorded=True),
        EngineOption(
            "enforce_eager", "--enforce-eager", "no graph compilation or capture (starts sooner, samples slower)"
        ),
    )

    def __init__(
        self,
        model: str,
        *,
        revision: Optional[str] = None,
        chat: bool = False,
        tensor_parallel_size: int = 1,
        pipeline_parallel_size: int = 1,
        data_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: Optional[int] = None,
        dtype: str = "auto",
        seed: int = 42,
        enforce_eager: bool = False,
    ) -> None:
        super().__init__()
        _check_options(
            (tensor_parallel_size, pipeline_parallel_size, data_parallel_size), gpu_memory_utilization, max_model_len
        )
        self.model_name, self.revision, self.chat = model, revision, chat
        self.settings = {
            "tensor_parallel_size": tensor_parallel_size,
            "pipeline_parallel_size": pipeline_parallel_size,
            "data_parallel_size": data_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "dtype": dtype,
        }
        try:
            from vllm import LLM
        except ImportError as exc:
            raise EngineError(f"the vllm engine needs vLLM ({_first_line(exc)}); {install_command('vllm')}") from exc
        kwargs: dict[str, Any] = {
            "model": model,
            "revision": revision,
            "tensor_parallel_size": tensor_parallel_size,
            "pipeline_parallel_size": pipeline_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
            "dtype": dtype,
            "seed": seed,
            "enable_prefix_caching": True,
            "trust_remote_code": False,
            "enforce_eager": enforce_eager,
        }
        if data_parallel_size > 1:
            kwargs["data_parallel_size"] = data_parallel_size
        if max_model_len is not None:
            kwargs["max_model_len"] = max_model_len
        try:
            self.llm = LLM(**kwargs)
        except Exception as exc:  # vLLM reports memory, config and download faults with many types
            message = _first_line(exc)
            memory = "memory" in message.lower() or "OutOfMemory" in type(exc).__name__ or "cache blocks" in message
            # vLLM's engine runs in its own process and reports only "initialization failed" here;
            # its log above holds the cause, which at start-up is most often memory.
            hidden = "initialization failed" in message.lower()
            hint = (
                f"; {MEMORY_HINT}"
                if memory
                else (f"; if vLLM's log above shows it ran out of memory, {MEMORY_HINT}" if hidden else "")
            )
            raise EngineError(f"vLLM could not start {model}: {message}{hint}") from exc
        self.max_model_len = int(self.llm.llm_engine.model_config.max_model_len)
        self.vllm_version = __import__("vllm").__version__
        from vllm.platforms import current_platform

        # vLLM's CPU build cannot seed a request's sampler ("CPU Generator does not use offset"):
        # there the engine-wide seed alone makes a run repeatable.
        self.request_seeds = not current_platform.is_cpu()
        self.settings["request_seeds"] = self.request_seeds

    def describe(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "model": self.model_name,
            "revision": self.revision,
            "chat": self.chat,
            "vllm": self.vllm_version,
            **self.settings,
        }

    def _params(self, config: SamplingConfig, seed: int) -> Any:
        from vllm import SamplingParams

        options: dict[str, Any] = {}
        if config.top_k > 0:  # 0 (off) is left out: some vLLM releases reject it
            options["top_k"] = config.top_k
        if self.request_seeds:
            # vLLM seeds sample j of a request with seed + j: spread the questions' seeds apart.
            options["seed"] = request_seed(seed, 0)
        return SamplingParams(
            n=config.num_samples,
            top_p=config.top_p,
            temperature=config.temperature,
            max_tokens=config.max_new_tokens,
            stop=None if self.chat else list(STOP_STRINGS),
            **options,
        )

    def _sample(
        self, prompts: list[Prompt], config: SamplingConfig, seeds: list[int], progress: Optional[bool]
    ) -> Iterator[PromptSamples]:
        skipped: dict[int, str] = {}
        if not self.chat:
            tokenizer = self.llm.get_tokenizer()
            for i, prompt in enumerate(prompts):
                size = len(tokenizer(prompt)["input_ids"])
                if size == 0:
                    skipped[i] = "the prompt tokenizes to nothing"
                elif size + config.max_new_tokens > self.max_model_len:
                    skipped[i] = (
                        f"the prompt has {size} tokens; with {config.max_new_tokens} new tokens that "
                        f"exceeds the model's context of {self.max_model_len}"
                    )
        todo = [i for i in range(len(prompts)) if i not in skipped]
        for i in skipped:
            yield PromptSamples(i, skipped=skipped[i])
        if not todo:
            return
        params = [self._params(config, seeds[i]) for i in todo]
        try:
            if self.chat:
                outputs = self.llm.chat([list(prompts[i]) for i in todo], params, use_tqdm=_vllm_bar(progress))
            else:
                outputs = self.llm.generate([prompts[i] for i in todo], params, use_tqdm=_vllm_bar(progress))
        except Exception as exc:
            raise EngineError(
                f"vLLM failed while sampling: {_first_line(exc)}; the questions already sampled are "
                "kept, run the same command again to resume"
            ) from exc
        for i, output in zip(todo, outputs, strict=True):
            completions = sorted(output.outputs, key=lambda o: o.index)
            self.usage["prompt_tokens"] = self.usage.get("prompt_tokens", 0) + len(output.prompt_token_ids or ())
            self.usage["completion_tokens"] = self.usage.get("completion_tokens", 0) + sum(
                len(o.token_ids) for o in completions
            )
            texts = [o.text for o in completions]
            yield PromptSamples(i, texts, answers_of(texts, self.chat))

    def close(self) -> None:
        self.llm = None


class _SamplesDone:
    """What vLLM's one sampling call reports (samples drawn of all asked), as the project's progress."""

    def __init__(self, bar: Any) -> None:
        self.bar, self.n, self.started = bar, 0, time.monotonic()

    @property
    def format_dict(self) -> dict[str, float]:
        return {"elapsed": max(time.monotonic() - self.started, 1e-9)}

    @property
    def postfix(self) -> str:
        return ""

    @postfix.setter
    def postfix(self, text: str) -> None:
        self.bar.set_postfix_str(text.replace("est. speed ", ""), refresh=False)

    def update(self, samples: int = 1) -> None:
        self.n += samples
        self.bar.update(samples)

    def refresh(self) -> None:
        """Nothing to redraw before the report's own next line."""

    def close(self) -> None:
        self.bar.close()


def _vllm_bar(progress: Optional[bool]) -> Any:
    """vLLM's ``use_tqdm``: False, or a maker of the project's report (:mod:`protoqa_core.progress`).

    >>> _vllm_bar(False)
    False
    """
    if progress is False:
        return False

    def make(*items: Any, total: Optional[int] = None, **_: Any) -> Any:
        if items:  # vLLM adding the requests (quick): nothing to report
            return items[0]
        return _SamplesDone(report_progress(total, "sampling", "sample", enabled=progress))

    maker: Callable[..., Any] = make
    return maker
