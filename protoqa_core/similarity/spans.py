"""The groups of contiguous tokens of a string that WordNet knows, indexed for matching.

Both WordNet similarities pair groups of the prediction with groups of the answer; these
are the groups each side offers (:func:`spans_with_synsets`) and an index of them by
token and by synset (:func:`span_index`), cached per distinct token sequence.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from ..wordnet.lookup import max_lemma_tokens, may_start_collocation, synset_keys
from ..wordnet.reader import SynsetKey

__all__: list[str] = []


# The caches of what each distinct string offers are capped by their memory: on inputs where
# every string is new they would otherwise hold hundreds of MB.
@lru_cache(maxsize=20_000)
def spans_with_synsets(tokens: tuple[str, ...]) -> tuple[tuple[int, int, frozenset[SynsetKey]], ...]:
    """Every contiguous group of ``tokens`` that WordNet knows, with its synsets."""
    longest = max_lemma_tokens()
    found = []
    for start in range(len(tokens)):
        for end in range(start + 1, min(len(tokens), start + longest) + 1):
            if end - start > 1 and not may_start_collocation(" ".join(tokens[start : end - 1])):
                break
            names = synset_keys(" ".join(tokens[start:end]))
            if names:
                found.append((start, end, names))
    return tuple(found)


@dataclass(frozen=True)
class _SpanIndex:
    """What one token sequence offers for matching: its tokens and its WordNet groups."""

    token_positions: dict[str, tuple[int, ...]]
    by_synset: dict[SynsetKey, tuple[tuple[int, int], ...]]


# About 2 KB an entry: the cap keeps this cache near 40 MB on inputs with many distinct strings.
@lru_cache(maxsize=20_000)
def span_index(tokens: tuple[str, ...]) -> _SpanIndex:
    """Where each token stands in ``tokens`` and which spans of them name each synset, for the WordNet similarities."""
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens):
        positions.setdefault(tok, []).append(i)
    by_synset: dict[SynsetKey, list[tuple[int, int]]] = {}
    for start, end, keys in spans_with_synsets(tokens):
        for key in keys:
            by_synset.setdefault(key, []).append((start, end))
    return _SpanIndex(
        {t: tuple(p) for t, p in positions.items()},
        {k: tuple(v) for k, v in by_synset.items()},
    )


def equal_token_pairs(
    ia: _SpanIndex, ib: _SpanIndex, shared_tokens: Iterable[str]
) -> Iterator[tuple[int, int, int, int]]:
    """Single-token span pairs ``(i, i+1, j, j+1)`` where the two sequences have the same token."""
    return (
        (i, i + 1, j, j + 1) for tok in shared_tokens for i in ia.token_positions[tok] for j in ib.token_positions[tok]
    )
