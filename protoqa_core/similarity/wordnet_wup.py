"""``wordnet_wup``: the WordNet partition similarity with group pairs weighted by Wu-Palmer similarity."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import lru_cache

from ..text import content_tokens
from ..wordnet.lookup import synset_keys
from ..wordnet.reader import SynsetKey
from ..wordnet.wu_palmer import best_wup, best_wup_reaches
from .bounds import MAX_SIMILARITY_TOKENS, bounded, first_best
from .partition_alignment import SpanPair, best_partition_alignment_checked
from .registry import Similarity
from .spans import equal_token_pairs, span_index, spans_with_synsets

__all__ = ["wup_similarity", "best_wup_similarity", "wup_reaches", "WORDNET_WUP"]


@lru_cache(maxsize=200_000)
def _phrase_wup(names_a: frozenset[SynsetKey], names_b: frozenset[SynsetKey]) -> float:
    """Best Wu-Palmer similarity between the groups' synsets; shared synsets get no shortcut (as in the reference)."""
    return best_wup(names_a, names_b)


@lru_cache(maxsize=200_000)
def _phrase_wup_reaches(names_a: frozenset[SynsetKey], names_b: frozenset[SynsetKey], level: float) -> bool:
    """Whether :func:`_phrase_wup` of the two groups reaches ``level`` (often decided by a bound alone)."""
    return best_wup_reaches(names_a, names_b, level)


# With one token on one side, every matching is one group pair, so the similarity is
# the best ``w / (1 + gaps)`` over the other side's groups; the partition search gives
# the same maximum (proven: a side of one token makes one search call; one b token
# against n a-tokens makes at most n * (9n + 1) calls, under its budgets for n <= 40,
# 9 being the most tokens of a WordNet entry).
_ONE_TOKEN_CLOSED_FORM_MAX = 40


@lru_cache(maxsize=200_000)
def _wup_tokens_similarity(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[float, bool]:
    """``(value, exact)`` of the Wu-Palmer partition similarity of two token tuples."""
    if a == b:
        return 1.0, True
    if len(a) == 1 or (len(b) == 1 and len(a) <= _ONE_TOKEN_CLOSED_FORM_MAX):
        return _wup_against_one_token(a, b), True
    weights: dict[tuple[int, int, int, int], float] = {}
    spans_b = spans_with_synsets(b)
    for a_start, a_end, names_a in spans_with_synsets(a):
        for b_start, b_end, names_b in spans_b:
            w = _phrase_wup(names_a, names_b)
            if w > 0:
                weights[(a_start, a_end, b_start, b_end)] = w
    ia, ib = span_index(a), span_index(b)
    for key in equal_token_pairs(ia, ib, ia.token_positions.keys() & ib.token_positions.keys()):
        weights[key] = 1.0  # equal groups score 1 (the reference's exact-match part score)
    # Equal multi-token groups also score 1; matching their tokens one to one is at
    # least as good (see partition_alignment), so they need no pair of their own.
    if not weights:
        return 0.0, True
    return best_partition_alignment_checked(len(a), len(b), [SpanPair(*k, w) for k, w in sorted(weights.items())])


def _wup_against_one_token(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """The Wu-Palmer partition similarity when ``a`` or ``b`` is a single token.

    A matching is one group of the longer side with the token, scoring ``w / (1 + gaps)`` (the
    partition search's own float expression), ``gaps`` the runs left out (0, 1 or 2).
    """
    single_is_a = len(a) == 1
    token, longer = (a[0], b) if single_is_a else (b[0], a)
    return _wup_against_tokens(longer, (token,), synset_keys(token), single_is_a)


def _wup_against_tokens(
    longer: tuple[str, ...], tokens: Collection[str], names_of_tokens: frozenset[SynsetKey], tokens_first: bool
) -> float:
    """The best :func:`_wup_against_one_token` of ``longer`` against each of ``tokens`` (their synsets' union
    ``names_of_tokens``), groups tried fewest gaps first: the union's Wu-Palmer is the tokens' maximum."""
    if len(longer) == 1:  # a single token against single tokens: one pair each, no gaps
        if longer[0] in tokens:
            return 1.0
        names = synset_keys(longer[0])
        if not names or not names_of_tokens:
            return 0.0
        return _phrase_wup(names_of_tokens, names) if tokens_first else _phrase_wup(names, names_of_tokens)
    best = 0.0
    for gaps, groups in enumerate(_groups_by_gaps(longer)):
        if best >= 1.0 / (1 + gaps):
            break  # no group of this level or after can beat it (weights are at most 1)
        for start, end, names in groups:
            if end == start + 1 and longer[start] in tokens:
                w = 1.0  # an equal token (the reference's exact-match part score)
            elif names and names_of_tokens:
                w = _phrase_wup(names_of_tokens, names) if tokens_first else _phrase_wup(names, names_of_tokens)
            else:
                continue
            if w > 0:
                value = w / (1 + gaps)
                if value > best:
                    best = value
    return best


@lru_cache(maxsize=100_000)
def _groups_by_gaps(tokens: tuple[str, ...]) -> tuple[tuple[tuple[int, int, frozenset[SynsetKey]], ...], ...]:
    """The groups a single token can be paired with (every token, every longer WordNet entry), by the runs left out."""
    n = len(tokens)
    levels: tuple[list, list, list] = ([], [], [])
    for start, end, names in spans_with_synsets(tokens):
        if end - start > 1:
            levels[(start > 0) + (end < n)].append((start, end, names))
    for j, tok in enumerate(tokens):
        levels[(j > 0) + (j + 1 < n)].append((j, j + 1, synset_keys(tok)))
    return tuple(tuple(level) for level in levels)


def wup_similarity(prediction: str, answer: str, *, all_stopword_match: bool = True) -> float:
    """WordNet partition similarity with Wu-Palmer weights on the group pairs.

    As :func:`wordnet_similarity`, but a group pair scores 1 when equal, else the best NLTK Wu-Palmer
    between their synsets (the reference evaluator's ``wordnet_wup_score``); the matching maximizes the weight.

    >>> wup_similarity("dog", "cat") > 0.8
    True
    >>> round(wup_similarity("person", "someone"), 4)  # one synset, below 1 with itself
    0.8571
    """
    return bounded(_wup_tokens_similarity, prediction, answer, all_stopword_match)


def best_wup_similarity(prediction: str, answers: Sequence[str], *, all_stopword_match: bool = True) -> float:
    """``max(wup_similarity(prediction, y) for y in answers)``, the one-token answers at once.

    The single-token answers are scored as one group holding all their synsets; when that finds 1, the
    answers are scored one by one instead, so the same strings are scored (and reported if approximated).

    >>> best_wup_similarity("dog", ["cat", "hound", "red car"]) == max(
    ...     wup_similarity("dog", y) for y in ["cat", "hound", "red car"])
    True
    """
    a = content_tokens(prediction)
    singles: list[str] = []
    others: list[str] = []
    if a and len(a) <= _ONE_TOKEN_CLOSED_FORM_MAX:
        for answer in answers:
            b = content_tokens(answer)
            if len(b) == 1:
                singles.append(b[0])
            else:
                others.append(answer)
    best = 0.0
    if len(singles) > 1:
        names: frozenset[SynsetKey] = frozenset().union(*(synset_keys(t) for t in singles))
        best = _wup_against_tokens(a, frozenset(singles), names, False)
    if best >= 1.0 or len(singles) <= 1:
        others = list(answers)  # one by one, as the plain maximum
        best = 0.0
    return first_best(wup_similarity, prediction, others, all_stopword_match, best)


@lru_cache(maxsize=100_000)
def _whole_group(tokens: tuple[str, ...]) -> frozenset[SynsetKey]:
    """The synsets of ``tokens`` taken as one group (a WordNet entry of them all), or none."""
    if len(tokens) == 1:
        return synset_keys(tokens[0])
    return next(
        (names for start, end, names in spans_with_synsets(tokens) if start == 0 and end == len(tokens)), frozenset()
    )


def wup_reaches(prediction: str, answers: Sequence[str], level: float, *, all_stopword_match: bool = True) -> bool:
    """Whether ``best_wup_similarity(prediction, answers) >= level``, stopping at the first answer that reaches it.

    Above 1/2, a pair with a single token on one side reaches the level only with the whole other
    side as one group (any gap scores ``w / 2`` or less), so such pairs need no partition search.

    >>> from protoqa_core.similarity import ABOVE_HALF
    >>> wup_reaches("dog", ["car", "cat"], ABOVE_HALF), wup_reaches("dog", ["red car"], ABOVE_HALF)
    (True, False)
    """
    a = content_tokens(prediction)
    if level <= 0.5 or not a or len(a) > _ONE_TOKEN_CLOSED_FORM_MAX:
        return best_wup_similarity(prediction, answers, all_stopword_match=all_stopword_match) >= level
    whole_a = _whole_group(a)
    singles: set[str] = set()
    others: list[str] = []
    for answer in answers:
        b = content_tokens(answer)
        if len(b) == 1:
            singles.add(b[0])
        elif len(a) == 1 and 1 < len(b) <= MAX_SIMILARITY_TOKENS:
            # One token against the whole answer as one group (never equal: b has more tokens).
            whole_b = _whole_group(b)
            if whole_a and whole_b and _phrase_wup_reaches(whole_a, whole_b, level):
                return True
        else:
            others.append(answer)  # both sides longer, an empty side, or over the token limit
    if singles:
        if len(a) == 1 and a[0] in singles:
            return True
        if whole_a:
            for token in sorted(singles):
                names = synset_keys(token)
                if names and _phrase_wup_reaches(whole_a, names, level):
                    return True
    return first_best(wup_similarity, prediction, others, all_stopword_match, enough=level) >= level


WORDNET_WUP = Similarity(
    "wordnet_wup",
    wup_similarity,
    description="Wu-Palmer weighted WordNet partitions",
    rounded=True,
    uses_wordnet=True,
    best_of=best_wup_similarity,
    reaches_of=wup_reaches,
)
"""The ``wordnet_wup`` similarity of :data:`~protoqa_core.similarity.SIMILARITIES`."""
