"""Batched nucleus sampling of answers from a causal language model: the one sampling code path.

``protoqa-eval generate``, the ``protoqa-hf`` lm-eval backend and the Trainer hooks all sample
here, so one model, prompt, settings and seed give the same answers everywhere. The protocol,
the batching and the counter-based seeding are described in docs/evaluate-a-model.md; the
settings live in :mod:`~protoqa_integrations.generation.settings`, the seeded draw and batch plan
in :mod:`~protoqa_integrations.generation.nucleus`. ``torch`` and ``transformers`` are imported
when sampling starts, not with this module.

>>> SamplingConfig(num_samples=300).signature()
'samples:300|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|stop:newline,period|batch:100|seed:42|rng:splitmix64'
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

from protoqa_core.install import install_command
from protoqa_core.progress import report_progress
from protoqa_integrations.generation.nucleus import nucleus_tokens, plan_batches, sample_uniforms
from protoqa_integrations.generation.prompts import clean_answer
from protoqa_integrations.generation.settings import (
    STOP_STRINGS,
    GenerationError,
    PromptSamples,
    SamplingConfig,
    cut_at_stop,
)

__all__ = [
    "context_length",
    "check_tokenizer",
    "resolve_device",
    "is_local_model",
    "load_model",
    "iter_prompt_samples",
    "sample_prompts",
]


def context_length(model: Any) -> Optional[int]:
    """The most tokens (prompt + answer) the model can attend to, from its config; None if unstated.

    >>> from types import SimpleNamespace
    >>> context_length(SimpleNamespace(config=SimpleNamespace(n_positions=1024)))
    1024
    """
    config = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def check_tokenizer(tokenizer: Any, name: str = "the model") -> tuple[int, int]:
    """``(eos id, pad id)`` of a tokenizer (pad falls back to eos); :class:`GenerationError` without eos.

    >>> from types import SimpleNamespace
    >>> check_tokenizer(SimpleNamespace(eos_token_id=2, pad_token_id=None))
    (2, 2)
    """
    eos_id = getattr(tokenizer, "eos_token_id", None)
    if eos_id is None:
        raise GenerationError(
            f"the tokenizer of {name} has no end-of-text (eos) token, so sampled answers "
            "cannot end; use a tokenizer that defines eos_token"
        )
    pad_id = getattr(tokenizer, "pad_token_id", None)
    return int(eos_id), int(pad_id if pad_id is not None else eos_id)


_STOP_TABLES: dict[int, tuple[Any, Any]] = {}


def _stop_table(tokenizer: Any, vocab_size: int) -> Any:
    """Bool tensor over token ids: the token's text contains a stop string."""
    import torch

    cached = _STOP_TABLES.get(id(tokenizer))
    if cached is not None and cached[0] is tokenizer and cached[1].shape[0] == vocab_size:
        return cached[1]
    texts = tokenizer.batch_decode([[i] for i in range(min(vocab_size, len(tokenizer)))], skip_special_tokens=True)
    table = torch.zeros(vocab_size, dtype=torch.bool)
    for i, text in enumerate(texts):
        if any(stop in text for stop in STOP_STRINGS):
            table[i] = True
    _STOP_TABLES.clear()  # one tokenizer at a time is what the callers use
    _STOP_TABLES[id(tokenizer)] = (tokenizer, table)
    return table


def _vocab_size(model: Any, tokenizer: Any) -> int:
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is not None and getattr(head, "weight", None) is not None:
        return int(head.weight.shape[0])
    return int(getattr(model.config, "vocab_size", None) or len(tokenizer))


def _processors(seeds: Any, indices: Any, prompt_width: int, config: SamplingConfig, stop_table: Any):
    from transformers import LogitsProcessor, StoppingCriteria

    class CounterNucleusSampler(LogitsProcessor):
        """Draws each row's token from its own counter-based uniform; returns one-hot logits."""

        def __call__(self, input_ids, scores):
            import torch

            step = input_ids.shape[1] - prompt_width
            uniforms = torch.from_numpy(sample_uniforms(seeds, indices, step))
            tokens = nucleus_tokens(
                scores, uniforms, top_p=config.top_p, temperature=config.temperature, top_k=config.top_k
            )
            chosen = torch.full_like(scores, float("-inf"))
            chosen.scatter_(1, tokens.unsqueeze(-1), 0.0)
            return chosen

    class StopAtStopString(StoppingCriteria):
        """A row is done once its last token's text holds a stop string."""

        def __call__(self, input_ids, scores, **kwargs):
            if input_ids.shape[1] <= prompt_width:
                import torch

                return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
            last = input_ids[:, -1].to("cpu").clamp(0, stop_table.shape[0] - 1)
            return stop_table[last].to(input_ids.device)

    return CounterNucleusSampler(), StopAtStopString()


def _shared_prompt_cache(model: Any, input_ids: Any, mask: Any, count: int) -> Any:
    """The KV cache of every prompt but its last token, computed once and repeated ``count`` times; or None.

    ``generate`` with ``num_return_sequences`` would otherwise run each prompt ``count`` times.
    """
    import torch

    if input_ids.shape[1] < 2 or count < 2:
        return None
    positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
    with torch.no_grad():
        prefix = model(
            input_ids=input_ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1], use_cache=True
        )
    # Read under this transformers' own name: reading `past_key_values` where it is `cache` warns on every run.
    cache = getattr(prefix, _cache_keyword(), None)
    if cache is None or not hasattr(cache, "batch_repeat_interleave"):
        return None
    cache.batch_repeat_interleave(count)
    return cache


def _cache_keyword() -> str:
    """``generate``'s keyword for a precomputed KV cache: ``cache`` in newer transformers, else ``past_key_values``."""
    from transformers.generation import utils

    return "cache" if "cache" in getattr(utils, "ALL_CACHE_NAMES", ()) else "past_key_values"


def _generation_config(config: SamplingConfig, count: int, eos_id: int, pad_id: int) -> Any:
    from transformers import GenerationConfig

    # The sampler above picks every token; the model's own generation settings must not
    # reshape the logits first, so they are set to their neutral values here.
    return GenerationConfig(
        do_sample=True,
        num_beams=1,
        num_return_sequences=count,
        max_new_tokens=config.max_new_tokens,
        temperature=1.0,
        top_k=0,
        top_p=1.0,
        typical_p=1.0,
        epsilon_cutoff=0.0,
        eta_cutoff=0.0,
        repetition_penalty=1.0,
        encoder_repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        min_length=0,
        renormalize_logits=False,
        pad_token_id=pad_id,
        eos_token_id=eos_id,
        use_cache=True,
    )


def _decode_rows(tokenizer: Any, rows: Any, eos_id: int, pad_id: int) -> tuple[list[str], list[int]]:
    """Each row's text up to its stop string, and the number of tokens it generated before its end."""
    ends = {eos_id, pad_id}
    cut = []
    for ids in rows.tolist():
        stop = 0
        while stop < len(ids) and ids[stop] not in ends:
            stop += 1
        cut.append(ids[:stop])
    texts = [cut_at_stop(text) for text in tokenizer.batch_decode(cut, skip_special_tokens=True)]
    return texts, [len(ids) for ids in cut]


def resolve_device(device: str) -> str:
    """``auto`` becomes ``cuda`` when a GPU is visible, else ``cpu``; other names are kept.

    >>> resolve_device("cpu")
    'cpu'
    """
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def hub_unavailable(timeout: float = 3.0) -> Optional[str]:
    """Why the Hugging Face Hub cannot be reached (offline mode, or no connection within ``timeout``), else None.

    >>> os.environ["HF_HUB_OFFLINE"] = "1"; hub_unavailable()  # doctest: +SKIP
    'offline mode is on (HF_HUB_OFFLINE=1)'
    """
    import socket
    from urllib.parse import urlsplit

    from protoqa_core.similarity.embedding import hub_endpoint, hub_offline_setting

    offline = hub_offline_setting()
    if offline:
        return f"offline mode is on ({offline})"
    if any(os.environ.get(v) for v in _PROXY_VARIABLES):
        return None  # only the proxy knows; let the download try
    endpoint = urlsplit(hub_endpoint())
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((endpoint.hostname or "", port), timeout=timeout).close()
    except OSError as exc:
        return f"the Hub ({endpoint.hostname}) cannot be reached ({exc.strerror or exc})"
    return None


def _in_hub_cache(name: str, cache_dir: Optional[str]) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return True  # cannot tell: let from_pretrained decide
    try:
        found = try_to_load_from_cache(name, "config.json", cache_dir=cache_dir)
    except Exception:  # noqa: BLE001 (a cache probe: on any failure, e.g. an invalid id, from_pretrained gives the better message)
        return True
    return isinstance(found, str)


def is_local_model(name: str) -> bool:
    """Whether :func:`load_model` reads ``name`` as a local folder: one exists there (``models/tiny`` as well as
    ``./models/tiny``, as for ``from_pretrained``), or the name starts with ``/``, ``.`` or ``~``; else a Hub id.

    >>> is_local_model("~/models/gpt2"), is_local_model("openai-community/gpt2")
    (True, False)
    """
    return os.path.isabs(name) or name.startswith((".", "~")) or Path(name).expanduser().is_dir()


def load_model(
    name: str, device: str = "auto", dtype: str = "auto", cache_dir: Optional[str] = None
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a causal language model (Hub id or local folder), no remote code, in eval mode.

    ``name`` is a local folder or a Hub id as :func:`is_local_model` tells them apart.
    Every failure is a one-line :class:`GenerationError`; without the Hub only its cache is read.

    >>> load_model("/no/such/folder")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    GenerationError: there is no model folder /no/such/folder
    """
    looks_local = is_local_model(name)
    if looks_local and not Path(name).expanduser().is_dir():
        raise GenerationError(f"there is no model folder {name}")
    # Without the Hub, a model missing from the cache fails here in milliseconds, before torch is
    # imported, instead of after a minute of connection retries.
    hub_missing = None if looks_local else hub_unavailable()
    if hub_missing and not _in_hub_cache(name, cache_dir):
        raise GenerationError(
            f"cannot load the model {name!r}: it is not in the local cache and {hub_missing}; "
            "download it where the Hub is reachable, or give a local model folder"
        )
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise GenerationError(f"generating needs torch and transformers ({exc}); {install_command('train')}") from exc
    device = resolve_device(device)
    dtypes = {"auto": "auto", "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    if dtype not in dtypes:
        raise GenerationError(f"unknown dtype {dtype!r}; choose one of {', '.join(dtypes)}")
    source = str(Path(name).expanduser()) if looks_local else name
    try:
        local = {"local_files_only": True} if hub_missing else {}
        tokenizer = AutoTokenizer.from_pretrained(source, cache_dir=cache_dir, trust_remote_code=False, **local)
        # Any: transformers annotates the decorated .to() as if it took the model as its first argument
        model: Any = AutoModelForCausalLM.from_pretrained(
            source, cache_dir=cache_dir, **{_dtype_keyword(): dtypes[dtype]}, trust_remote_code=False, **local
        )
        model.to(device)
    except Exception as exc:  # hub, network, file, format and device errors all mean "cannot use it"
        text = str(exc).strip()
        first_line = text.splitlines()[0] if text else type(exc).__name__
        raise GenerationError(f"cannot load the model {name!r}: {first_line}") from exc
    check_tokenizer(tokenizer, name)
    model.eval()
    return model, tokenizer


def _dtype_keyword() -> str:
    """``from_pretrained``'s dtype keyword: transformers 4.56 renamed ``torch_dtype`` (older reject ``dtype``)."""
    import transformers
    from packaging.version import Version

    return "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"


def iter_prompt_samples(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    config: SamplingConfig = SamplingConfig(),
    *,
    seeds: Optional[Sequence[int]] = None,
    progress: Optional[bool] = False,
    on_progress: Optional[Callable[[int, int], None]] = None,
    model_name: str = "the model",
) -> Iterator[PromptSamples]:
    """Sample ``config.num_samples`` answers for each prompt, yielding each prompt as it completes.

    Prompt ``i`` is sampled under ``seeds[i]`` (default ``config.seed + i``); a prompt that tokenizes
    to nothing or outgrows the model's context is yielded with ``skipped`` set. ``progress`` is as in
    :func:`protoqa_core.progress.report_progress`; ``on_progress(drawn, in all)`` follows each ``generate``.

    >>> config = SamplingConfig(num_samples=5)
    >>> for done in iter_prompt_samples(model, tokenizer, ["One fruit is"], config):  # doctest: +SKIP
    ...     print(done.index, done.answers)
    0 ['an apple', 'a banana', 'an apple', '', 'the orange']
    """
    prompts = list(prompts)
    seeds = [config.seed + i for i in range(len(prompts))] if seeds is None else [int(s) for s in seeds]
    if len(seeds) != len(prompts):
        raise GenerationError(f"{len(seeds)} seeds for {len(prompts)} prompts")
    eos_id, pad_id = check_tokenizer(tokenizer, model_name)
    encoded, skipped = _encode_prompts(tokenizer, prompts, config.max_new_tokens, context_length(model))
    eligible = list(encoded)
    calls = (
        [
            [(eligible[p], start, count) for p, start, count in call]
            for call in plan_batches(len(eligible), config.num_samples, config.batch_size)
        ]
        if eligible
        else []
    )
    collected = _Collected(len(prompts), skipped, dict.fromkeys(eligible, config.num_samples))
    device = next(model.parameters()).device
    stop_table = _stop_table(tokenizer, _vocab_size(model, tokenizer))
    bar = report_progress(len(prompts), "sampling", enabled=progress)
    started, drawn = time.perf_counter(), 0
    was_training = model.training
    model.eval()
    try:
        yield from collected.ready(bar)
        for call in calls:
            rows = [(encoded[p], seeds[p], start, count) for p, start, count in call]
            decoded, lengths = _draw_call(model, tokenizer, rows, config, stop_table, device, (eos_id, pad_id))
            collected.add(call, decoded, lengths, encoded)
            drawn += len(decoded)
            if on_progress is not None:
                on_progress(drawn, config.num_samples * len(eligible))
            bar.set_postfix_str(f"{drawn / max(time.perf_counter() - started, 1e-9):.1f} samples/s")
            yield from collected.ready(bar)
        yield from collected.ready(bar)
    finally:
        model.train(was_training)
        bar.close()


def _encode_prompts(
    tokenizer: Any, prompts: Sequence[str], max_new_tokens: int, limit: Optional[int]
) -> tuple[dict[int, list[int]], dict[int, str]]:
    """Each prompt's token ids by position, and why each prompt that cannot be sampled is skipped."""
    encoded: dict[int, list[int]] = {}
    skipped: dict[int, str] = {}
    for i, prompt in enumerate(prompts):
        ids = list(tokenizer(prompt)["input_ids"])
        if not ids:
            skipped[i] = "the prompt tokenizes to nothing"
        elif limit is not None and len(ids) + max_new_tokens > limit:
            skipped[i] = (
                f"the prompt has {len(ids)} tokens; with {max_new_tokens} new tokens that exceeds "
                f"the model's context of {limit}"
            )
        else:
            encoded[i] = ids
    return encoded, skipped


class _Collected:
    """The samples drawn so far per prompt, handed out in prompt order as each prompt completes."""

    def __init__(self, count: int, skipped: dict[int, str], remaining: dict[int, int]) -> None:
        self.count, self.skipped, self.remaining = count, skipped, remaining
        self.texts: dict[int, list[str]] = {i: [] for i in remaining}
        self.usage = {i: {"prompt_tokens": 0, "completion_tokens": 0} for i in remaining}
        self.next_to_yield = 0

    def add(
        self,
        call: Sequence[tuple[int, int, int]],
        decoded: list[str],
        lengths: list[int],
        encoded: dict[int, list[int]],
    ) -> None:
        """Record one ``generate`` call's rows: ``count`` consecutive rows per prompt of the call."""
        count = call[0][2]
        for k, (p, _, _) in enumerate(call):
            self.texts[p].extend(decoded[k * count : (k + 1) * count])
            self.remaining[p] -= count
            self.usage[p]["prompt_tokens"] += len(encoded[p])
            self.usage[p]["completion_tokens"] += sum(lengths[k * count : (k + 1) * count])

    def ready(self, bar: Any) -> Iterator[PromptSamples]:
        """The prompts, in order, that are complete (or skipped) and not yet handed out."""
        while self.next_to_yield < self.count:
            i = self.next_to_yield
            if i in self.skipped:
                done = PromptSamples(i, skipped=self.skipped[i])
            elif self.remaining.get(i) == 0:
                done = PromptSamples(i, self.texts.pop(i), [], usage=self.usage.pop(i))
                done.answers = [clean_answer(t) for t in done.texts]
            else:
                return
            self.next_to_yield += 1
            bar.update(1)
            yield done


def _draw_call(
    model: Any,
    tokenizer: Any,
    rows: Sequence[tuple[list[int], int, int, int]],
    config: SamplingConfig,
    stop_table: Any,
    device: Any,
    eos_pad: tuple[int, int],
) -> tuple[list[str], list[int]]:
    """One ``generate`` call over a left-padded batch: each sample's text and token count.

    ``rows`` holds each prompt's ``(token ids, seed, first sample index, samples)``, samples alike.
    """
    import torch
    from transformers import LogitsProcessorList, StoppingCriteriaList

    eos_id, pad_id = eos_pad
    count = rows[0][3]
    width = max(len(ids) for ids, _, _, _ in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, (ids, _, _, _) in enumerate(rows):
        input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
        mask[row, width - len(ids) :] = 1
    row_seeds = [seed for _, seed, _, _ in rows for _ in range(count)]
    row_indices = [start + j for _, _, start, _ in rows for j in range(count)]
    sampler, stopper = _processors(row_seeds, row_indices, width, config, stop_table)
    input_ids, mask = input_ids.to(device), mask.to(device)
    cache = _shared_prompt_cache(model, input_ids, mask, count)
    # The sampler decides every token; generate's own multinomial over the one-hot
    # result is certain, but it would advance the global RNG, hence the fork.
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        output = model.generate(
            input_ids=input_ids,
            attention_mask=mask,
            generation_config=_generation_config(config, count, eos_id, pad_id),
            logits_processor=LogitsProcessorList([sampler]),
            stopping_criteria=StoppingCriteriaList([stopper]),
            **({_cache_keyword(): cache} if cache is not None else {}),
        )
    return _decode_rows(tokenizer, output[:, width:].cpu(), eos_id, pad_id)


def sample_prompts(
    model: Any, tokenizer: Any, prompts: Sequence[str], config: SamplingConfig = SamplingConfig(), **options: Any
) -> list[PromptSamples]:
    """:func:`iter_prompt_samples` as a list, one :class:`PromptSamples` per prompt.

    >>> done = sample_prompts(model, tokenizer, ["One fruit is"], SamplingConfig(num_samples=2))  # doctest: +SKIP
    >>> [s.answers for s in done]  # doctest: +SKIP
    [['an apple', 'banana']]
    """
    return list(iter_prompt_samples(model, tokenizer, prompts, config, **options))
