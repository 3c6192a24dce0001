"""The arithmetic of seeded batched nucleus sampling: counter-based uniforms, the nucleus draw, the batch plan.

:func:`sample_uniforms` hashes ``(question seed, j, t)`` (SplitMix64), so a question's samples do
not depend on which questions share its batch; :func:`nucleus_tokens` turns one uniform per row
into a token; :func:`plan_batches` packs the samples into ``generate`` calls.

>>> plan_batches(3, 2, 4)
[[(0, 0, 2), (1, 0, 2)], [(2, 0, 2)]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["sample_uniforms", "nucleus_tokens", "plan_batches"]

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

    Temperature, then top-k (0: off), then the nucleus (tied tokens kept or dropped together),
    renormalized; the uniform picks by cumulative probability in vocabulary order.

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
