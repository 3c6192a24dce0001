"""The arithmetic of seeded batched nucleus sampling, checked against plain reference versions:
SplitMix64 written out in Python integers, the nucleus by sorting, the batch plan by its promises."""

from __future__ import annotations

import pytest

from protoqa_integrations.generation.nucleus import nucleus_tokens, plan_batches, sample_uniforms

MASK = (1 << 64) - 1


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_uniform(seed: int, index: int, step: int) -> float:
    x = splitmix64(splitmix64(splitmix64(seed & MASK) ^ index) ^ step)
    return (x >> 11) / float(1 << 53)


def test_uniforms_are_splitmix64_of_seed_sample_and_step():
    seeds = [0, 42, 2**63 + 5, MASK, 10**6]
    indices = [0, 299, 7, 1, 123456]
    for step in (0, 1, 9):
        got = sample_uniforms(seeds, indices, step).tolist()
        assert got == [reference_uniform(s, j, step) for s, j in zip(seeds, indices, strict=True)]


def test_seeds_are_taken_modulo_two_to_the_64():
    assert sample_uniforms([-1], [3], 2).tolist() == sample_uniforms([MASK], [3], 2).tolist()
    assert sample_uniforms([2**64 + 42], [0], 0).tolist() == sample_uniforms([42], [0], 0).tolist()
    assert sample_uniforms([], [], 0).tolist() == []


def covered(calls):
    drawn: dict[int, list[int]] = {}
    for call in calls:
        for prompt, start, count in call:
            drawn.setdefault(prompt, []).extend(range(start, start + count))
    return drawn


@pytest.mark.parametrize(("prompts", "samples", "batch"), [(3, 1, 1), (2, 7, 7), (2, 8, 7), (1, 1000, 3), (9, 2, 5)])
def test_every_sample_is_planned_once_in_calls_of_one_count_within_the_batch(prompts, samples, batch):
    calls = plan_batches(prompts, samples, batch)
    assert covered(calls) == {p: list(range(samples)) for p in range(prompts)}
    assert all(len({count for _, _, count in call}) == 1 for call in calls)
    assert all(sum(count for _, _, count in call) <= batch for call in calls)
    counts = [count for call in calls for _, _, count in call]
    assert max(counts) - min(counts) <= 1  # chunks as equal as they can be


def test_no_prompt_no_call_and_a_full_batch_is_one_call_per_question():
    assert plan_batches(0, 300, 100) == []
    assert plan_batches(2, 100, 100) == [[(0, 0, 100)], [(1, 0, 100)]]


def reference_nucleus(probs, top_p):
    """The tokens kept: every token whose strictly more likely tokens hold less than top_p."""
    more_likely = (probs.unsqueeze(-2) > probs.unsqueeze(-1)).double()  # [row, token, other]
    above = (more_likely * probs.double().unsqueeze(-2)).sum(-1)
    return above < top_p


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_the_nucleus_is_the_one_sorting_finds_ties_included():
    import torch

    from protoqa_integrations.generation.nucleus import _nucleus_threshold

    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(32, 500, generator=generator) * torch.linspace(0.1, 8, 32).unsqueeze(-1)
    logits[0, :10] = 40.0  # ten tokens tied at the top
    logits[1, 5] = 60.0  # one token holds nearly all the mass
    probs = torch.softmax(logits, dim=-1)
    for top_p in (0.05, 0.5, 0.9, 0.999):
        kept = probs >= _nucleus_threshold(probs, top_p).unsqueeze(-1)
        assert torch.equal(kept, reference_nucleus(probs, top_p)), top_p
    u = torch.linspace(0, 1 - 1e-7, 201)
    ties = nucleus_tokens(logits[:1].expand(len(u), -1), u, top_p=0.05, temperature=1.0)
    assert set(ties.tolist()) == set(range(10))  # tied tokens are kept together, never split at top_p
    assert set(nucleus_tokens(logits[1:2].expand(len(u), -1), u, top_p=0.9, temperature=1.0).tolist()) == {5}


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_a_uniform_next_to_one_never_picks_a_token_outside_the_nucleus():
    import torch

    logits = torch.log(torch.tensor([[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]]))
    below_one = torch.tensor([1.0 - 2**-53, 1.0 - 2**-53])
    assert nucleus_tokens(logits, below_one, top_p=0.8, temperature=1.0).tolist() == [1, 2]
    assert nucleus_tokens(logits, torch.zeros(2), top_p=0.8, temperature=1.0).tolist() == [0, 1]
    # top_k before the nucleus: with top_k 2 the nucleus of the renormalized pair is drawn from.
    assert nucleus_tokens(logits, below_one, top_p=1.0, temperature=1.0, top_k=2).tolist() == [1, 2]
