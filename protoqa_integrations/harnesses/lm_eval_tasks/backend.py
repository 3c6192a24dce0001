"""``protoqa-hf``: lm-evaluation-harness's ``hf`` backend, sampling with :mod:`protoqa_integrations.generation.sampling`.

The ``hf`` backend draws a request's ``repeats`` one by one from the global RNG, in batches that
mix questions: valid samples, but not those of ``protoqa-eval generate``. This backend hands each
question's repeats to :func:`~protoqa_integrations.generation.sampling.iter_prompt_samples`
(seeded with ``seed + doc_id``), so its answers are those of ``generate`` and the Trainer callback;
requests it cannot serve that way go to ``hf`` unchanged. Model arguments: docs/evaluate-a-model.md.
Importing this module registers the backend (it needs ``lm_eval``, ``torch`` and ``transformers``).

>>> import protoqa_integrations.harnesses.lm_eval_tasks.backend  # doctest: +SKIP
>>> lm_eval.simple_evaluate(model="protoqa-hf", model_args="pretrained=gpt2,seed=42", tasks=["protoqa"],
...                         task_manager=TaskManager(include_path=tasks_path()))  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.huggingface import HFLM

from protoqa_integrations.generation.sampling import iter_prompt_samples
from protoqa_integrations.generation.settings import STOP_STRINGS, GenerationError, SamplingConfig

__all__ = ["ProtoQAHFLM", "sampling_config"]


def sampling_config(gen_kwargs: dict, num_samples: int, batch_size: int, seed: int) -> SamplingConfig | None:
    """The :class:`SamplingConfig` of a request's generation kwargs, or None when it is not nucleus sampling
    with the stop strings of :data:`~protoqa_integrations.generation.settings.STOP_STRINGS`.

    A setting given as None takes its default; one the sampler cannot use raises ``GenerationError``.

    >>> sampling_config({"do_sample": True, "until": ["\\n", "."], "temperature": 0.69, "top_p": 0.9,
    ...                  "top_k": 0, "max_gen_toks": 10}, 300, 100, 42).signature()  # doctest: +ELLIPSIS
    'samples:300|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|...'
    """
    until = gen_kwargs.get("until") or []
    until = [until] if isinstance(until, str) else list(until)
    known = {"do_sample", "until", "temperature", "top_p", "top_k", "max_gen_toks", "max_new_tokens"}
    if not gen_kwargs.get("do_sample") or set(until) != set(STOP_STRINGS) or set(gen_kwargs) - known:
        return None
    # None means "not given" (a YAML key left empty, a caller's default); an explicit value is
    # checked as given, so a 0 is refused rather than replaced.
    max_new_tokens = _integer(gen_kwargs, "max_gen_toks", 1, "an integer >= 1")
    alias = _integer(gen_kwargs, "max_new_tokens", 1, "an integer >= 1")
    if max_new_tokens is not None and alias is not None and max_new_tokens != alias:
        raise GenerationError(f"gen_kwargs max_gen_toks ({max_new_tokens}) and max_new_tokens ({alias}) disagree")
    temperature = _number(gen_kwargs, "temperature", lambda x: x > 0, "a number > 0 when do_sample is true")
    top_p = _number(gen_kwargs, "top_p", lambda x: 0 < x <= 1, "a number in (0, 1]")
    top_k = _integer(gen_kwargs, "top_k", 0, "an integer >= 0 (0: off)")
    return SamplingConfig(
        num_samples=num_samples,
        batch_size=batch_size,
        seed=seed,
        max_new_tokens=next((n for n in (max_new_tokens, alias) if n is not None), 10),
        temperature=1.0 if temperature is None else temperature,
        top_p=1.0 if top_p is None else top_p,
        top_k=0 if top_k is None else top_k,
    )


def _integer(gen_kwargs: dict, key: str, minimum: int, requirement: str) -> int | None:
    """``gen_kwargs[key]`` as an int (an int, or its text) of at least ``minimum``: see :func:`_setting`."""
    number = _setting(gen_kwargs, key, int, lambda x: x >= minimum, requirement)
    return None if number is None else int(number)


def _number(gen_kwargs: dict, key: str, valid: Callable[[float], bool], requirement: str) -> float | None:
    """``gen_kwargs[key]`` as a float (a number, or its text) that is ``valid``: see :func:`_setting`."""
    return _setting(gen_kwargs, key, float, valid, requirement)


def _setting(
    gen_kwargs: dict, key: str, kind: type[int] | type[float], valid: Callable[[float], bool], requirement: str
) -> float | None:
    """``gen_kwargs[key]`` as a finite ``kind`` (an int, a float where ``kind`` is float, or the text of
    one), None when absent or None; GenerationError naming the key otherwise."""
    value = gen_kwargs.get(key)
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, (int, kind)) and not isinstance(value, bool):
        number = kind(value)
    elif isinstance(value, str):
        try:
            number = kind(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not valid(number):
        raise GenerationError(f"gen_kwargs {key} must be {requirement}, got {value!r}")
    return number


@register_model("protoqa-hf")
class ProtoQAHFLM(HFLM):
    """The ``hf`` backend with ProtoQA's batched, per-question-seeded sampler for repeated requests."""

    def __init__(self, *args: Any, seed: int = 42, sample_batch_size: int = 100, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sampling_seed = int(seed)
        self.sample_batch_size = int(sample_batch_size)

    def generate_until(self, requests: list, disable_tqdm: bool = False) -> list[str]:
        # The harness repeats a request `repeats` times as the same Instance object.
        groups: dict[int, list[int]] = {}
        for position, request in enumerate(requests):
            groups.setdefault(id(request), []).append(position)
        plans: dict[tuple, list[tuple[Any, list[int]]]] = {}
        for positions in groups.values():
            request = requests[positions[0]]
            context, gen_kwargs = request.args
            config = sampling_config(gen_kwargs, len(positions), self.sample_batch_size, self.sampling_seed)
            if config is None:
                return super().generate_until(requests, disable_tqdm)
            plans.setdefault((config,), []).append((request, positions))
        results: list[str] = [""] * len(requests)
        for (config,), items in plans.items():
            prompts = [request.args[0] for request, _ in items]
            seeds = [self.sampling_seed + int(request.doc_id) for request, _ in items]
            progress = None if (self.rank == 0 and not disable_tqdm) else False
            for done in iter_prompt_samples(
                self.model, self.tokenizer, prompts, config, seeds=seeds, progress=progress
            ):
                _, positions = items[done.index]
                texts = done.texts if done.skipped is None else [""] * len(positions)
                for position, text in zip(positions, texts, strict=True):
                    results[position] = text
        return results
