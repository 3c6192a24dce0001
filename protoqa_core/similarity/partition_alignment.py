"""Exact best alignment of two token sequences' partitions, without enumerating partitions.

The WordNet similarity of docs/spec.md maximizes ``matching(P, Q) / max(|P|, |Q|)`` over every pair
of partitions of two token lists; enumerating them costs ``2**(n-1) * 2**(m-1)`` matchings. The
search here is over *matched spans*: unmatched tokens between two matched groups can always be
merged into one group, so a candidate is ``K`` disjoint span pairs worth
``W / (K + max(gaps_a, gaps_b))`` (``gaps``: maximal runs of uncovered tokens on a side); and equal
multi-token spans never need matching as wholes, so only single tokens and spans with a weight of
their own (a WordNet collocation) are candidates.

A depth-first search with a bound and a memo settles ordinary answers in well under a millisecond.
Long strings whose words repeat can defeat the bound, so after a fixed number of steps an exact
integer program takes over (Dinkelbach's method, each step a ``scipy.optimize.milp``). Every stage
has a deterministic budget (the constants below); when one runs out the result is the best value
found, a lower bound. No string of the ProtoQA or CFC data comes near the budgets.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Optional

__all__ = [
    "SpanPair",
    "best_partition_alignment",
    "best_partition_alignment_checked",
    "SEARCH_STEP_BUDGET",
    "SEARCH_CALL_BUDGET",
    "MILP_NODE_LIMIT",
    "MILP_MAX_PAIRS",
    "DINKELBACH_MAX_ROUNDS",
]


@dataclass(frozen=True)
class SpanPair:
    """A candidate pair: tokens ``a[a_start:a_end]`` matched with ``b[b_start:b_end]``."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    weight: float


class _BudgetExceeded(Exception):
    pass


def _run_starts(covered: int, length: int) -> int:
    """Number of maximal runs of zero bits among the low ``length`` bits of ``covered``."""
    uncovered = ~covered & ((1 << length) - 1)
    # A run starts at every uncovered bit whose lower neighbour is covered (or absent).
    starts = uncovered & ~(uncovered << 1)
    return starts.bit_count()


SEARCH_STEP_BUDGET = 20_000
"""Distinct states the depth-first search may visit before the integer program takes over."""
SEARCH_CALL_BUDGET = 150_000
"""Search calls (distinct or repeated states, pruned or not) allowed in all."""
MILP_NODE_LIMIT = 64
"""Branch-and-bound nodes each integer program may explore (a deterministic budget)."""
MILP_MAX_PAIRS = 120
"""Largest number of candidate pairs handed to the integer program."""
DINKELBACH_MAX_ROUNDS = 4
"""Most ratio-improvement rounds; each round is one integer program."""


def _value_of(n_a: int, n_b: int, chosen: Sequence[SpanPair]) -> float:
    """``W / (K + max(gaps_a, gaps_b))`` of a set of disjoint span pairs."""
    if not chosen:
        return 0.0
    cover_a = cover_b = 0
    for p in chosen:
        cover_a |= ((1 << (p.a_end - p.a_start)) - 1) << p.a_start
        cover_b |= ((1 << (p.b_end - p.b_start)) - 1) << p.b_start
    gaps = max(_run_starts(cover_a, n_a), _run_starts(cover_b, n_b))
    return sum(p.weight for p in chosen) / (len(chosen) + gaps)


def _solve_by_integer_programming(n_a: int, n_b: int, pairs: Sequence[SpanPair], start: float) -> tuple[float, bool]:
    """Exact maximum by Dinkelbach iterations, and whether it is proven.

    For a ratio guess ``lam``, maximize ``sum (w_p - lam) x_p - lam * G`` with every token covered
    at most once and ``G`` bounding each side's gap count; an optimum of zero proves ``lam``.
    """
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_matrix

    n_p = len(pairs)
    # Variable layout: x_p (n_p), gap starts s_a (n_a), s_b (n_b), G (1).
    sa0, sb0, g_col = n_p, n_p + n_a, n_p + n_a + n_b
    n_var = g_col + 1
    rows = n_a + n_b + n_a + n_b + 2
    A = lil_matrix((rows, n_var))
    lower = np.full(rows, -np.inf)
    upper = np.full(rows, np.inf)
    # Coverage of each token at most once: rows 0 .. n_a + n_b - 1.
    for j, p in enumerate(pairs):
        A[p.a_start : p.a_end, j] = 1
        A[n_a + p.b_start : n_a + p.b_end, j] = 1
    upper[: n_a + n_b] = 1
    # Gap starts: s_t >= cov_{t-1} - cov_t, and s_0 >= 1 - cov_0.
    base = n_a + n_b
    for side, (n, cov0, s0) in enumerate(((n_a, 0, sa0), (n_b, n_a, sb0))):
        for t in range(n):
            r = base + (0 if side == 0 else n_a) + t
            A[r, s0 + t] = 1
            A[r, :n_p] = A[r, :n_p] + A[cov0 + t, :n_p]
            if t > 0:
                A[r, :n_p] = A[r, :n_p] - A[cov0 + t - 1, :n_p]
                lower[r] = 0
            else:
                lower[r] = 1
    # G bounds each side's gap count.
    r = base + n_a + n_b
    A[r, g_col] = A[r + 1, g_col] = 1
    A[r, sa0 : sa0 + n_a] = -1
    A[r + 1, sb0 : sb0 + n_b] = -1
    lower[r : r + 2] = 0
    constraints = LinearConstraint(A.tocsr(), lower, upper)
    integrality = np.zeros(n_var)
    integrality[:n_p] = 1
    bounds = Bounds(np.zeros(n_var), np.concatenate([np.ones(n_p), np.full(n_a + n_b + 1, np.inf)]))
    weights = np.array([p.weight for p in pairs])

    best = start
    for _ in range(DINKELBACH_MAX_ROUNDS):
        c = np.zeros(n_var)
        c[:n_p] = -(weights - best)
        c[g_col] = best
        res = milp(
            c,
            constraints=constraints,
            integrality=integrality,
            bounds=bounds,
            options={"mip_rel_gap": 0.0, "node_limit": MILP_NODE_LIMIT, "presolve": True},
        )
        if res.x is None:  # node limit before any feasible point: keep what we have
            return best, False
        chosen = [p for p, v in zip(pairs, res.x[:n_p], strict=True) if v > 0.5]
        value = _value_of(n_a, n_b, chosen)
        proven = res.status == 0
        if value <= best + 1e-12:
            return best, proven
        best = value
        if not proven:
            return best, False
    return best, False


def best_partition_alignment(n_a: int, n_b: int, pairs: Sequence[SpanPair]) -> float:
    """Maximum over partitions of two token sequences of ``matched weight / max(|P|, |Q|)``.

    >>> best_partition_alignment(2, 1, [SpanPair(0, 2, 0, 1, 1.0)])  # "chewing gum" ~ "gum"
    1.0
    """
    return best_partition_alignment_checked(n_a, n_b, pairs)[0]


def best_partition_alignment_checked(
    n_a: int,
    n_b: int,
    pairs: Sequence[SpanPair],
) -> tuple[float, bool]:
    """Maximum over partitions of two token sequences of ``matched weight / max(|P|, |Q|)``, and whether it is proven.

    ``pairs`` holds every span pair (half-open token ranges) that may be matched, with its weight in
    (0, 1]. When a budget runs out, the value is a lower bound and the flag is False.

    >>> best_partition_alignment_checked(2, 1, [SpanPair(1, 2, 0, 1, 1.0)])  # "red car" ~ "car"
    (0.5, True)
    """
    if n_a <= 0 or n_b <= 0:
        raise ValueError("both token sequences must be non-empty")
    tables = _index_pairs(n_a, n_b, pairs)
    if tables is None:
        return 0.0, True
    best, proven = _search_within_budget(n_a, n_b, tables)
    if proven:
        return best, True
    live = [p for p in pairs if p.weight > 0]
    if len(live) > MILP_MAX_PAIRS:
        return best, False
    return _solve_by_integer_programming(n_a, n_b, live, best)


class _PairTables(NamedTuple):
    """The span pairs of one problem indexed for the search, and the counts its bound reads."""

    options: list[list[tuple[int, int, float]]]  # by a-start: (a end, b mask, weight), best first
    coverable_b: int  # mask of the b tokens some pair covers
    never_b: int  # mask of the b tokens no pair covers
    max_ratio_ab: float  # most a-tokens one pair covers per b-token
    max_ratio_ba: float
    rem_coverable_a: list[int]  # coverable a tokens at or after i
    unc_after: list[bool]  # an uncoverable a token at or after i


def _index_pairs(n_a: int, n_b: int, pairs: Sequence[SpanPair]) -> Optional[_PairTables]:
    """The tables of :class:`_PairTables`, or None when no pair of positive weight is left.

    >>> _index_pairs(2, 1, [SpanPair(1, 2, 0, 1, 1.0)]).rem_coverable_a
    [1, 1, 0]
    """
    options: list[list[tuple[int, int, float]]] = [[] for _ in range(n_a)]
    coverable_a = [False] * n_a
    coverable_b = 0
    max_ratio_ab = 0.0
    max_ratio_ba = 0.0
    for p in pairs:
        if p.weight <= 0:
            continue
        bmask = ((1 << (p.b_end - p.b_start)) - 1) << p.b_start
        options[p.a_start].append((p.a_end, bmask, float(p.weight)))
        for t in range(p.a_start, p.a_end):
            coverable_a[t] = True
        coverable_b |= bmask
        len_a, len_b = p.a_end - p.a_start, p.b_end - p.b_start
        max_ratio_ab = max(max_ratio_ab, len_a / len_b)
        max_ratio_ba = max(max_ratio_ba, len_b / len_a)
    if not coverable_b:
        return None
    for opts in options:
        # Heavier pairs first, then shorter spans: finds a good solution early,
        # which makes the bound prune more.
        opts.sort(key=lambda o: (-o[2], o[0], o[1]))

    # Suffix counts over the first sequence.
    rem_coverable_a = [0] * (n_a + 1)
    unc_after = [False] * (n_a + 1)
    for i in range(n_a - 1, -1, -1):
        rem_coverable_a[i] = rem_coverable_a[i + 1] + coverable_a[i]
        unc_after[i] = unc_after[i + 1] or not coverable_a[i]
    never_b = ~coverable_b & ((1 << n_b) - 1)
    return _PairTables(options, coverable_b, never_b, max_ratio_ab, max_ratio_ba, rem_coverable_a, unc_after)


def _gaps_b_lower_bound(mask: int, never_b: int, n_b: int) -> int:
    """Runs of b tokens no pair covers, separated by covered ones (``mask``): gaps whatever happens next.

    >>> _gaps_b_lower_bound(0b010, 0b101, 3)
    2
    """
    if not never_b:
        return 0
    runs = 0
    inside = False
    for t in range(n_b):
        bit = 1 << t
        if mask & bit:
            inside = False
        elif never_b & bit and not inside:
            runs += 1
            inside = True
    return runs


def _search_within_budget(n_a: int, n_b: int, tables: _PairTables) -> tuple[float, bool]:
    """The branch-and-bound search over partitions: ``(best value found, whether it finished within budget)``."""
    options, coverable_b, never_b, max_ratio_ab, max_ratio_ba, rem_coverable_a, unc_after = tables
    best = 0.0
    steps = calls = 0
    seen: set[tuple[int, bool, int, int, float, int]] = set()

    def search(i: int, prev_uncovered: bool, mask: int, k: int, weight: float, gaps_a: int) -> None:
        nonlocal best
        if best >= 1.0:
            return
        if i == n_a:
            if k:
                g = max(gaps_a, _run_starts(mask, n_b))
                value = weight / (k + g)
                if value > best:
                    best = value
            return
        nonlocal steps, calls
        calls += 1
        if calls > SEARCH_CALL_BUDGET:
            raise _BudgetExceeded
        key = (i, prev_uncovered, mask, k, weight, gaps_a)
        if key in seen:
            return
        seen.add(key)
        steps += 1
        if steps > SEARCH_STEP_BUDGET:
            raise _BudgetExceeded

        free_b = (coverable_b & ~mask).bit_count()
        remaining_a = n_a - i
        more_pairs = min(rem_coverable_a[i], free_b)
        if k + more_pairs == 0:
            return
        # Lower bound on the final gap count of either side.
        a_left_uncovered = unc_after[i] or remaining_a > min(rem_coverable_a[i], int(free_b * max_ratio_ab + 1e-9))
        ga = gaps_a + (1 if a_left_uncovered and not prev_uncovered else 0)
        b_uncovered_now = n_b - mask.bit_count()
        gb = _gaps_b_lower_bound(mask, never_b, n_b)
        if gb == 0 and b_uncovered_now > min(free_b, int(rem_coverable_a[i] * max_ratio_ba + 1e-9)):
            gb = 1
        g = max(ga, gb)
        # value = (weight + x) / (k + x + g) grows with x; x pairs of weight <= 1.
        if (weight + more_pairs) / (k + more_pairs + g) <= best:
            return

        for end, bmask, w in options[i]:
            if not bmask & mask:
                search(end, False, mask | bmask, k + 1, weight + w, gaps_a)
        search(i + 1, True, mask, k, weight, gaps_a + (0 if prev_uncovered else 1))

    # The search recurses once per token of the first sequence.
    needed = n_a + 100
    old_limit = sys.getrecursionlimit()
    if needed > old_limit:
        sys.setrecursionlimit(needed + old_limit)
    try:
        search(0, False, 0, 0, 0.0, 0)
    except _BudgetExceeded:
        return best, False
    finally:
        sys.setrecursionlimit(old_limit)
    return best, True
