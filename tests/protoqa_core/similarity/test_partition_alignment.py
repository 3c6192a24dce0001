"""The exact partition alignment: hand cases, the search against brute-force enumeration of
partitions, the integer program against the search, and what a spent budget returns."""

from __future__ import annotations

import random
import sys

import pytest

from protoqa_core.similarity import partition_alignment as pm
from protoqa_core.similarity.partition_alignment import (
    SpanPair,
    best_partition_alignment,
    best_partition_alignment_checked,
)
from tests.support.spec_reference import contiguous_partitions


def test_contiguous_partitions_counts():
    assert list(contiguous_partitions([])) == [[""]]
    assert len(list(contiguous_partitions(list("abcde")))) == 2**4


def test_partition_alignment_value_examples():
    # a = [x y z], b = [x z]: x~x, z~z; y is one gap in a -> 2 / (2 + 1)
    pairs = [SpanPair(0, 1, 0, 1, 1.0), SpanPair(2, 3, 1, 2, 1.0)]
    assert best_partition_alignment(3, 2, pairs) == pytest.approx(2 / 3)
    assert best_partition_alignment(3, 2, []) == 0.0
    with pytest.raises(ValueError):
        best_partition_alignment(0, 2, pairs)


def test_partition_alignment_integer_program_agrees_with_search(monkeypatch):
    """Force the integer-programming fallback and compare with the plain search."""
    rng = random.Random(7)
    for _ in range(25):
        n_a, n_b = rng.randint(1, 7), rng.randint(1, 7)
        pairs = []
        for _ in range(rng.randint(0, 12)):
            s = rng.randrange(n_a)
            e = min(n_a, s + rng.choice([1, 1, 2]))
            t = rng.randrange(n_b)
            f = min(n_b, t + rng.choice([1, 1, 2]))
            pairs.append(SpanPair(s, e, t, f, rng.choice([1.0, 1.0, 0.5, 0.8])))
        expected = pm.best_partition_alignment(n_a, n_b, pairs)
        monkeypatch.setattr(pm, "SEARCH_STEP_BUDGET", 0)
        assert pm.best_partition_alignment(n_a, n_b, pairs) == pytest.approx(expected, abs=1e-9)
        monkeypatch.setattr(pm, "SEARCH_STEP_BUDGET", 20_000)


# --- against the definition: every pair of partitions, every matching of their groups -----------


def _groups(n: int) -> list[list[tuple[int, int]]]:
    """Every partition of ``range(n)`` into contiguous groups, as half-open spans."""
    partitions = []
    for partition in contiguous_partitions([str(i) for i in range(n)]):
        spans = []
        for group in partition:
            tokens = [int(t) for t in group.split()]
            spans.append((tokens[0], tokens[-1] + 1))
        partitions.append(spans)
    return partitions


def _best_matching(groups_a, groups_b, weight, used=frozenset()) -> float:
    """Largest total weight of a matching between the groups (each group matched at most once)."""
    if not groups_a:
        return 0.0
    first, rest = groups_a[0], groups_a[1:]
    best = _best_matching(rest, groups_b, weight, used)
    for j, group in enumerate(groups_b):
        w = weight.get((*first, *group), 0.0)
        if j not in used and w > 0:
            best = max(best, w + _best_matching(rest, groups_b, weight, used | {j}))
    return best


def _by_definition(n_a: int, n_b: int, pairs: list[SpanPair]) -> float:
    weight: dict[tuple[int, int, int, int], float] = {}
    for p in pairs:
        key = (p.a_start, p.a_end, p.b_start, p.b_end)
        weight[key] = max(weight.get(key, 0.0), p.weight)
    return max(_best_matching(P, Q, weight) / max(len(P), len(Q)) for P in _groups(n_a) for Q in _groups(n_b))


def test_the_search_equals_the_maximum_over_every_pair_of_partitions():
    rng = random.Random(21)
    for _ in range(150):
        n_a, n_b = rng.randint(1, 4), rng.randint(1, 4)
        pairs = []
        for _ in range(rng.randint(0, 7)):
            s, t = rng.randrange(n_a), rng.randrange(n_b)
            e, f = rng.randint(s + 1, n_a), rng.randint(t + 1, n_b)
            pairs.append(SpanPair(s, e, t, f, rng.choice([1.0, 1.0, 0.9, 0.5, 0.25, 0.0])))
        value, proven = best_partition_alignment_checked(n_a, n_b, pairs)
        assert proven and value == pytest.approx(_by_definition(n_a, n_b, pairs), abs=1e-12), (n_a, n_b, pairs)


def test_weights_below_one_and_pairs_of_weight_zero():
    assert best_partition_alignment_checked(1, 1, [SpanPair(0, 1, 0, 1, 0.5)]) == (0.5, True)
    assert best_partition_alignment_checked(1, 1, [SpanPair(0, 1, 0, 1, 0.0)]) == (0.0, True)
    # "hot dog" ~ "hot dog bun": two tokens matched one to one, one gap in b -> 2 / 3
    assert best_partition_alignment(2, 3, [SpanPair(0, 1, 0, 1, 1.0), SpanPair(1, 2, 1, 2, 1.0)]) == 2 / 3


@pytest.mark.parametrize("n_a, n_b", [(0, 1), (1, 0), (-1, 3)])
def test_an_empty_side_is_refused(n_a, n_b):
    with pytest.raises(ValueError, match="both token sequences must be non-empty"):
        best_partition_alignment_checked(n_a, n_b, [])


def test_a_spent_budget_gives_a_flagged_lower_bound(monkeypatch):
    # Long repeated words: many candidate pairs, so the search needs more than a handful of states.
    rng = random.Random(22)
    words_a = [rng.choice("xyz") for _ in range(12)]
    words_b = [rng.choice("xyz") for _ in range(12)]
    pairs = [SpanPair(i, i + 1, j, j + 1, 1.0) for i, x in enumerate(words_a) for j, y in enumerate(words_b) if x == y]
    exact, proven = best_partition_alignment_checked(12, 12, pairs)
    assert proven
    monkeypatch.setattr(pm, "SEARCH_STEP_BUDGET", 5)
    monkeypatch.setattr(pm, "MILP_MAX_PAIRS", 0)  # too many pairs for the integer program
    bound, proven = best_partition_alignment_checked(12, 12, pairs)
    assert not proven and 0.0 <= bound <= exact
    monkeypatch.setattr(pm, "MILP_MAX_PAIRS", 120)  # the integer program finishes the job
    assert best_partition_alignment_checked(12, 12, pairs) == pytest.approx((exact, True))


def test_sequences_longer_than_the_recursion_limit_and_the_limit_restored():
    n = sys.getrecursionlimit() + 500
    limit = sys.getrecursionlimit()
    pairs = [SpanPair(i, i + 1, i, i + 1, 1.0) for i in range(n)]
    assert best_partition_alignment_checked(n, n, pairs) == (1.0, True)
    assert sys.getrecursionlimit() == limit
