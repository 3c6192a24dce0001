"""Batched nucleus sampling of answers from a causal language model: the one sampling code path.

``protoqa-eval generate``, the ``protoqa-hf`` backend of the lm-evaluation-harness
tasks and the Trainer hooks (:func:`protoqa_integrations.training.sample_question_answers`)
all draw their samples here, so the same model, prompts, settings and seed give the
same answers everywhere.

How a sample is drawn (the ProtoQA paper's protocol, :class:`SamplingConfig`):

* nucleus sampling, top_p 0.9, temperature 0.69, no top-k, at most 10 new tokens;
* a sample ends at its first line break or period (the stop strings ``"\\n"`` and
  ``"."``, :data:`STOP_STRINGS`) or at the end-of-text token; the text before it,
  cleaned by :func:`~protoqa_integrations.prompts.clean_answer`, is the answer
  (:func:`answer_from_text`); an empty answer is kept as ``""``;
* the answers of a question are ranked by how often they were sampled
  (:func:`~protoqa_core.ranking.rank_by_frequency`).

How it is batched: ``model.generate`` with ``num_return_sequences`` draws many samples
of a prompt in one forward pass over a left-padded batch with the KV cache (the prompt is
run through the model once and its cache repeated for the samples); when a
question needs fewer samples than ``batch_size``, several prompts share a pass. A
stopping criterion ends each row at its first stop string.

How it is seeded: the randomness of sample ``j`` of a question at generation step ``t``
is a counter-based hash of ``(question seed, j, t)`` (SplitMix64), so a question's
samples do not depend on which other questions share its batch, nor on the global
torch RNG (which is left untouched). Question ``i`` of a list gets ``seed + i``. The
output is deterministic for a given seed, batch size and device; another batch size
or device changes only the floating-point rounding of the logits.

``torch`` and ``transformers`` are imported when sampling starts, not with this module.

>>> config = SamplingConfig(num_samples=300)
>>> config.signature()
'samples:300|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|stop:newline,period|batch:100|seed:42|rng:splitmix64'
>>> answer_from_text(" A Beach Towel. And more")
'a beach towel'
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from .prompts import PROMPT_STYLES, clean_answer, prompt_for

__all__ = [
    "PAPER_TOP_P",
    "PAPER_TEMPERATURE",
    "PAPER_MAX_NEW_TOKENS",
    "PROTOQA_NUM_SAMPLES",
    "CFC_NUM_SAMPLES",
    "STOP_STRINGS",
    "PROMPT_STYLES",
    "GenerationError",
    "SamplingConfig",
    "PromptSamples",
    "default_protocol",
    "prompt_function",
    "cut_at_stop",
    "answer_from_text",
    "sample_uniforms",
    "nucleus_tokens",
    "plan_batches",
    "context_length",
    "check_tokenizer",
    "resolve_device",
    "load_model",
    "iter_prompt_samples",
    "sample_prompts",
]

PAPER_TOP_P = 0.9
PAPER_TEMPERATURE = 0.69
PAPER_MAX_NEW_TOKENS = 10
PROTOQA_NUM_SAMPLES = 300
"""Samples per ProtoQA question in the paper's GPT-2 baseline."""
CFC_NUM_SAMPLES = 100
"""Samples per CFC question (ProbEval's protocol)."""
STOP_STRINGS = ("\n", ".")
"""A sample ends at the first of these; the same strings are the ``until`` of the lm-eval tasks."""


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
    protoqa_integrations.generation.GenerationError: num_samples must be >= 1, got 0
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
            f"|max_new_tokens:{self.max_new_tokens}|stop:newline,period|batch:{self.batch_size}"
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
    """The question-to-prompt function of a prompt style: :func:`~protoqa_integrations.prompts.prompt_for`.

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


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    # Arrays, not numpy scalars: uint64 arithmetic on arrays wraps around silently.
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


def sample_uniforms(seeds: Sequence[int], sample_indices: Sequence[int], step: int) -> np.ndarray:
    """Uniform numbers in [0, 1), one per (question seed, sample index) pair, for one generation step.

    A counter-based generator: the number depends only on its three inputs.

    >>> u = sample_uniforms([42, 42, 43], [0, 1, 0], step=0)
    >>> bool(((0 <= u) & (u < 1)).all()), len(set(u.tolist()))
    (True, 3)
    >>> float(sample_uniforms([42], [1], 0)[0]) == float(u[1])
    True
    """
    keys = np.array([int(s) & 0xFFFFFFFFFFFFFFFF for s in seeds], dtype=np.uint64)
    counters = np.array([int(j) for j in sample_indices], dtype=np.uint64)
    x = _splitmix64(_splitmix64(_splitmix64(keys) ^ counters) ^ np.full_like(keys, step))
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def _nucleus_threshold(probs: Any, top_p: float) -> Any:
    """Per row, the smallest probability ``v`` such that the mass of tokens more likely than ``v`` is below ``top_p``.

    A radix select on the bits of the float32 probabilities (non-negative floats order
    like their bit patterns): three passes over 12, 12 and 8 bits, each summing the mass
    per bucket, instead of sorting the vocabulary.
    """
    import torch

    rows = probs.shape[0]
    bits = probs.contiguous().view(torch.int32)
    weights = probs.double()
    offset = torch.zeros(rows, dtype=torch.float64, device=probs.device)  # mass above the chosen buckets
    prefix = torch.zeros(rows, dtype=torch.int64, device=probs.device)
    active = None
    for shift, width in ((20, 12), (8, 12), (0, 8)):
        size = 1 << width
        key = ((bits >> shift) & (size - 1)).long()
        mass = torch.zeros(rows, size, dtype=torch.float64, device=probs.device)
        mass.scatter_add_(1, key, weights if active is None else weights * active)
        descending = mass.flip(-1)
        above = offset.unsqueeze(-1) + descending.cumsum(-1) - descending
        # Buckets holding some mass with less than top_p above them; `above` grows downwards,
        # so the last such bucket holds the threshold.
        candidates = (above < top_p) & (descending > 0)
        positions = torch.arange(size, device=probs.device).expand(rows, size)
        last = torch.where(candidates, positions, torch.full_like(positions, -1)).max(-1).values.clamp(min=0)
        bucket = size - 1 - last
        offset = above.gather(1, last.unsqueeze(-1)).squeeze(-1)
        inside = key == bucket.unsqueeze(-1)
        active = inside if active is None else active & inside
        prefix = (prefix << width) | bucket
    return prefix.to(torch.int32).view(torch.float32)


def nucleus_tokens(logits: Any, uniforms: Any, *, top_p: float, temperature: float, top_k: int = 0) -> Any:
    """One token per row of ``logits``, drawn by inverse transform of ``uniforms`` (a 1-D tensor).

    Temperature first, then top-k (0: off), then the nucleus: the tokens such that the
    mass of the tokens more likely than them is below ``top_p`` (the most likely token
    always; tokens tied in probability are kept or dropped together), renormalized. The
    uniform picks a token by the cumulative probability in vocabulary order.

    >>> import torch
    >>> logits = torch.tensor([[0.0, 5.0, 1.0], [0.0, 0.1, 0.2]])
    >>> nucleus_tokens(logits, torch.tensor([0.3, 0.99]), top_p=0.9, temperature=1.0)
    tensor([1, 2])
    """
    import torch

    scaled = logits.float() / float(temperature)
    if 0 < top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k, dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = torch.softmax(scaled, dim=-1)
    if top_p < 1.0:
        probs = probs * (probs >= _nucleus_threshold(probs, top_p).unsqueeze(-1))
    cumulative = probs.cumsum(dim=-1)
    target = uniforms.to(cumulative.device, torch.float32).unsqueeze(-1) * cumulative[:, -1:]
    position = torch.searchsorted(cumulative, target, right=True).squeeze(-1)
    # Rounding can put the target at the very end: take the last token with mass then.
    size = probs.shape[-1]
    last_kept = size - 1 - (probs.flip(-1) > 0).int().argmax(-1)
    position = torch.where(position >= size, last_kept, position)
    return position


def plan_batches(num_prompts: int, num_samples: int, batch_size: int) -> list[list[tuple[int, int, int]]]:
    """The generate calls: each a list of ``(prompt, first sample index, count)`` with one count.

    A question needing more than ``batch_size`` samples gets equal chunks, one call
    each; otherwise as many questions as fit share a call.

    >>> plan_batches(2, 300, 128)
    [[(0, 0, 100)], [(0, 100, 100)], [(0, 200, 100)], [(1, 0, 100)], [(1, 100, 100)], [(1, 200, 100)]]
    >>> plan_batches(3, 5, 10)
    [[(0, 0, 5), (1, 0, 5)], [(2, 0, 5)]]
    """
    chunks = -(-num_samples // batch_size)
    if chunks > 1:
        base, extra = divmod(num_samples, chunks)
        calls = []
        for prompt in range(num_prompts):
            start = 0
            for c in range(chunks):
                count = base + (1 if c < extra else 0)
                calls.append([(prompt, start, count)])
                start += count
        return calls
    per_call = max(1, batch_size // num_samples)
    return [
        [(p, 0, num_samples) for p in range(first, min(first + per_call, num_prompts))]
        for first in range(0, num_prompts, per_call)
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
    """``(eos id, pad id)`` of a tokenizer; :class:`GenerationError` when it has no eos token.

    The pad id is the tokenizer's pad token, else its eos.

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
    """The KV cache of every prompt but its last token, computed once and repeated ``count`` times.

    ``generate`` with ``num_return_sequences`` would otherwise run each prompt through the
    model ``count`` times before sampling. Positions follow ``generate``'s rule for left
    padding. None when the prompt is one token or the model keeps no such cache.
    """
    import torch

    if input_ids.shape[1] < 2 or count < 2:
        return None
    positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
    with torch.no_grad():
        prefix = model(
            input_ids=input_ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1], use_cache=True
        )
    cache = getattr(prefix, "past_key_values", None)
    if cache is None or not hasattr(cache, "batch_repeat_interleave"):
        return None
    cache.batch_repeat_interleave(count)
    return cache


def _cache_keyword() -> str:
    """The name under which ``generate`` takes a precomputed KV cache in this transformers.

    Newer releases renamed ``past_key_values`` to ``cache`` (the old name warns, then goes);
    they list the new name in ``ALL_CACHE_NAMES``.
    """
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


_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def hub_unavailable(timeout: float = 3.0) -> Optional[str]:
    """Why the Hugging Face Hub cannot be reached (offline mode, or no connection within ``timeout``), else None.

    Offline mode is ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set to a true value; the
    connection is tried to ``$HF_ENDPOINT`` (default huggingface.co), except behind a proxy.

    >>> os.environ["HF_HUB_OFFLINE"] = "1"; hub_unavailable()  # doctest: +SKIP
    'offline mode is on (HF_HUB_OFFLINE=1)'
    """
    import socket
    from urllib.parse import urlsplit

    for variable in _OFFLINE_VARIABLES:
        value = os.environ.get(variable, "").strip().lower()
        if value and value not in {"0", "false", "no", "off"}:
            return f"offline mode is on ({variable}={os.environ[variable]})"
    if any(os.environ.get(v) for v in _PROXY_VARIABLES):
        return None  # only the proxy knows; let the download try
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
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


def load_model(
    name: str, device: str = "auto", dtype: str = "auto", cache_dir: Optional[str] = None
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a causal language model (Hub id or local folder), no remote code, in eval mode.

    ``cache_dir`` is where Hub downloads go (default: the Hub's own cache). Every
    failure is a :class:`GenerationError` saying why, in one line; so is a tokenizer
    without an end-of-text token (:func:`check_tokenizer`). When the Hub cannot be reached
    (:func:`hub_unavailable`) only the cache is read, and a model missing from it fails at
    once.

    >>> load_model("/no/such/folder")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    GenerationError: there is no model folder /no/such/folder
    """
    looks_local = os.path.isabs(name) or name.startswith((".", "~"))
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
        raise GenerationError(
            f"generating needs torch and transformers ({exc}); pip install 'protoqa-eval[train]'"
        ) from exc
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
    """The ``from_pretrained`` keyword for the weights' dtype in the installed transformers.

    transformers 4.56 renamed ``torch_dtype`` to ``dtype``; older releases reject ``dtype=``
    and newer ones warn on ``torch_dtype=``.
    """
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

    Prompts are yielded in order. Prompt ``i`` is sampled under ``seeds[i]`` (default
    ``config.seed + i``). A prompt that tokenizes to nothing, or whose tokens plus
    ``max_new_tokens`` exceed the model's context, is yielded with ``skipped`` set and
    no samples. The model is put in eval mode and back; the global RNG is untouched.
    ``progress`` shows a bar (tqdm, stderr) with questions done and samples per second
    (None: only on a terminal); ``on_progress(samples drawn, samples in all)`` is called
    after each ``generate`` call.

    >>> config = SamplingConfig(num_samples=5)
    >>> for done in iter_prompt_samples(model, tokenizer, ["One fruit is"], config):  # doctest: +SKIP
    ...     print(done.index, done.answers)
    0 ['an apple', 'a banana', 'an apple', '', 'the orange']
    """
    import torch
    from transformers import LogitsProcessorList, StoppingCriteriaList

    prompts = list(prompts)
    seeds = [config.seed + i for i in range(len(prompts))] if seeds is None else [int(s) for s in seeds]
    if len(seeds) != len(prompts):
        raise GenerationError(f"{len(seeds)} seeds for {len(prompts)} prompts")
    eos_id, pad_id = check_tokenizer(tokenizer, model_name)
    limit = context_length(model)
    encoded: dict[int, list[int]] = {}
    skipped: dict[int, str] = {}
    for i, prompt in enumerate(prompts):
        ids = list(tokenizer(prompt)["input_ids"])
        if not ids:
            skipped[i] = "the prompt tokenizes to nothing"
        elif limit is not None and len(ids) + config.max_new_tokens > limit:
            skipped[i] = (
                f"the prompt has {len(ids)} tokens; with {config.max_new_tokens} new tokens that exceeds "
                f"the model's context of {limit}"
            )
        else:
            encoded[i] = ids
    eligible = list(encoded)
    calls = (
        [
            [(eligible[p], start, count) for p, start, count in call]
            for call in plan_batches(len(eligible), config.num_samples, config.batch_size)
        ]
        if eligible
        else []
    )
    remaining = dict.fromkeys(eligible, config.num_samples)
    texts: dict[int, list[str]] = {i: [] for i in eligible}
    usage: dict[int, dict[str, int]] = {i: {"prompt_tokens": 0, "completion_tokens": 0} for i in eligible}

    device = next(model.parameters()).device
    stop_table = _stop_table(tokenizer, _vocab_size(model, tokenizer))
    bar = None
    if progress is not False:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(prompts), desc="sampling", unit="question", disable=None if progress is None else False)
    started, drawn = time.perf_counter(), 0
    next_to_yield = 0

    def ready() -> Iterator[PromptSamples]:
        nonlocal next_to_yield
        while next_to_yield < len(prompts):
            i = next_to_yield
            if i in skipped:
                done = PromptSamples(i, skipped=skipped[i])
            elif remaining.get(i) == 0:
                done = PromptSamples(i, texts.pop(i), [], usage=usage.pop(i))
                done.answers = [clean_answer(t) for t in done.texts]
            else:
                return
            next_to_yield += 1
            if bar is not None:
                bar.update(1)
            yield done

    was_training = model.training
    model.eval()
    try:
        yield from ready()
        for call in calls:
            count = call[0][2]
            width = max(len(encoded[p]) for p, _, _ in call)
            input_ids = torch.full((len(call), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(call), width), dtype=torch.long)
            for row, (p, _, _) in enumerate(call):
                ids = encoded[p]
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                mask[row, width - len(ids) :] = 1
            row_seeds = [seeds[p] for p, _, _ in call for _ in range(count)]
            row_indices = [start + j for _, start, _ in call for j in range(count)]
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
            decoded, lengths = _decode_rows(tokenizer, output[:, width:].cpu(), eos_id, pad_id)
            for k, (p, _, _) in enumerate(call):
                texts[p].extend(decoded[k * count : (k + 1) * count])
                remaining[p] -= count
                usage[p]["prompt_tokens"] += len(encoded[p])
                usage[p]["completion_tokens"] += sum(lengths[k * count : (k + 1) * count])
            drawn += len(decoded)
            if on_progress is not None:
                on_progress(drawn, config.num_samples * len(eligible))
            if bar is not None:
                bar.set_postfix_str(f"{drawn / max(time.perf_counter() - started, 1e-9):.1f} samples/s")
            yield from ready()
        yield from ready()
    finally:
        model.train(was_training)
        if bar is not None:
            bar.close()


def sample_prompts(
    model: Any, tokenizer: Any, prompts: Sequence[str], config: SamplingConfig = SamplingConfig(), **options: Any
) -> list[PromptSamples]:
    """:func:`iter_prompt_samples` as a list, one :class:`PromptSamples` per prompt.

    >>> done = sample_prompts(model, tokenizer, ["One fruit is"], SamplingConfig(num_samples=2))  # doctest: +SKIP
    >>> [s.answers for s in done]  # doctest: +SKIP
    [['an apple', 'banana']]
    """
    return list(iter_prompt_samples(model, tokenizer, prompts, config, **options))
