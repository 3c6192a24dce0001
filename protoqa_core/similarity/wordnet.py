"""``wordnet``: the partition similarity of docs/spec.md, groups agreeing when they share a synset."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ..text import content_tokens
from .bounds import bounded, capped, first_best
from .partition_alignment import SpanPair, best_partition_alignment_checked
from .registry import Similarity
from .spans import equal_token_pairs, span_index

__all__ = ["wordnet_similarity", "best_wordnet_similarity", "wordnet_reaches", "WORDNET"]


@lru_cache(maxsize=100_000)
def _wordnet_tokens_similarity(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[float, bool]:
    """``(value, exact)`` of the WordNet partition similarity of two token tuples."""
    if a == b:
        return 1.0, True
    ia, ib = span_index(a), span_index(b)
    # Most pairs share nothing at all; set intersections find that fast.
    shared_synsets = ia.by_synset.keys() & ib.by_synset.keys()
    shared_tokens = ia.token_positions.keys() & ib.token_positions.keys()
    if not shared_synsets and not shared_tokens:
        return 0.0, True
    spans = {(sa, ea, sb, eb) for key in shared_synsets for sa, ea in ia.by_synset[key] for sb, eb in ib.by_synset[key]}
    spans.update(equal_token_pairs(ia, ib, shared_tokens))
    return best_partition_alignment_checked(len(a), len(b), [SpanPair(*s, 1.0) for s in sorted(spans)])


def wordnet_similarity(prediction: str, answer: str, *, all_stopword_match: bool = True) -> float:
    """The WordNet similarity of docs/spec.md: the best partition alignment of the content tokens.

    Groups of contiguous content tokens agree when equal or sharing a synset; the score is the best
    ``matched groups / max(groups)``, exact (:mod:`~protoqa_core.similarity.partition_alignment`).
    Two all-stopword strings score 1 (the published numbers) unless ``all_stopword_match`` is False.

    >>> wordnet_similarity("chewing gum", "gum")
    1.0
    >>> wordnet_similarity("red car", "car")
    0.5
    """
    return bounded(_wordnet_tokens_similarity, prediction, answer, all_stopword_match)


# About 1 KB an entry (one per cluster): capped near 10 MB.
@lru_cache(maxsize=10_000)
def _answers_offer(answers: tuple[str, ...]) -> tuple[frozenset, frozenset]:
    """Every synset and token that any answer of a cluster can match on."""
    synsets: set = set()
    tokens: set = set()
    for answer in answers:
        index = span_index(capped(content_tokens(answer), 1)[0])
        synsets.update(index.by_synset)
        tokens.update(index.token_positions)
    return frozenset(synsets), frozenset(tokens)


def best_wordnet_similarity(prediction: str, answers: Sequence[str], *, all_stopword_match: bool = True) -> float:
    """``max(wordnet_similarity(prediction, y) for y in answers)``, 0 at once when no token or synset is shared.

    >>> best_wordnet_similarity("puppies", ["dog", "puppy"])
    1.0
    """
    if _shares_nothing(prediction, answers):
        return 0.0
    return first_best(wordnet_similarity, prediction, answers, all_stopword_match)


def _shares_nothing(prediction: str, answers: Sequence[str]) -> bool:
    """Whether the prediction has content tokens and shares no token and no synset with any answer."""
    a = capped(content_tokens(prediction), 0)[0]
    if not a:
        return False
    synsets, tokens = _answers_offer(tuple(answers))
    index = span_index(a)
    return synsets.isdisjoint(index.by_synset) and tokens.isdisjoint(index.token_positions)


def wordnet_reaches(prediction: str, answers: Sequence[str], level: float, *, all_stopword_match: bool = True) -> bool:
    """Whether ``best_wordnet_similarity(prediction, answers) >= level``, stopping at the first that reaches it.

    >>> from protoqa_core.similarity import ABOVE_HALF
    >>> wordnet_reaches("red car", ["car", "bus"], ABOVE_HALF), wordnet_reaches("car", ["red car"], 0.5)
    (False, True)
    """
    if level > 0.0 and _shares_nothing(prediction, answers):
        return False
    return first_best(wordnet_similarity, prediction, answers, all_stopword_match, enough=level) >= level


WORDNET = Similarity(
    "wordnet",
    wordnet_similarity,
    description="WordNet synsets over token partitions",
    rounded=True,
    uses_wordnet=True,
    best_of=best_wordnet_similarity,
    reaches_of=wordnet_reaches,
)
"""The ``wordnet`` similarity of :data:`~protoqa_core.similarity.SIMILARITIES`."""
