"""Similarity between one predicted answer and one answer string of a cluster.

Every function takes ``(prediction, answer)`` and returns a float in [0, 1]. The
prediction is expected to be normalized already (see
:func:`protoqa_core.text.normalize_prediction`); cluster strings are used as
they are.

============================ ============================================================ =======
name                         what scores 1                                                rounded
============================ ============================================================ =======
``exact_match``              identical strings                                            no
``wordnet``                  partition similarity of docs/spec.md (shared synsets)        yes
``wordnet_wup``              as ``wordnet``, part pairs weighted by Wu-Palmer similarity   yes
``lcs``                      longest common subsequence / longer length (characters)      no
``longest_common_substring`` longest common substring / longer length (characters)        no
``jaro_winkler``             Jaro-Winkler similarity (NLTK's, prefix scale 0.1, 4 chars)  no
``roberta``                  the cluster a GP over contextual vectors sends it to (below) 0/1
============================ ============================================================ =======

``roberta`` (the ProtoQA paper's RoBERTa similarity) is scored per question, not per
string pair: it needs the question and all of its clusters' crowd answers, to train a
Gaussian process per cluster. It is listed in :data:`QUESTION_SIMILARITIES`, built by
:func:`question_similarity`, and lives in :mod:`protoqa_core.roberta_similarity` (which
imports torch and transformers only when it first encodes).

"Rounded" similarities have the metric's score matrix rounded half-to-even, as the
ProtoQA evaluator does, so that a WordNet similarity of exactly 0.5 counts as 0.

Bounded cost
------------
Every similarity has a worst-case cost for strings of any length:

* ``exact_match``: one string comparison, ``O(min(|x|, |y|))``.
* character similarities: see :mod:`protoqa_core.string_similarity`; with a
  prediction of at most 50 characters each is linear in the cluster string's length.
* WordNet similarities: tokenizing is linear in the string length. Then each side
  keeps at most :data:`MAX_SIMILARITY_TOKENS` (64) content tokens: a longer string is
  scored on its first 64 tokens followed by one token that matches nothing, standing
  for the rest. That is the best matching that leaves the rest unmatched, a lower
  bound of the exact value (and equal to it whenever the best matching does not use
  the rest). A 50-character prediction has at most 50 tokens, so only cluster
  strings are ever cut, and no string of the ProtoQA or CFC data has more than 14
  content tokens. The partition search then runs under fixed, deterministic budgets
  (:mod:`protoqa_core.partition_alignment`); if one runs out, the best matching
  found is used, again a lower bound.

Whenever either rule changes a value, the pair is *approximated*: the metric names
the question and cluster in a warning and marks the result's signature (see
:func:`collect_approximations`). Every other value is exact.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from .partition_alignment import SpanPair, best_partition_alignment_checked
from .string_similarity import best_lcs_ratios, jaro_winkler, lcs_ratio, longest_common_substring_ratio
from .text import content_tokens
from .wordnet.lookup import max_lemma_tokens, may_start_collocation, synset_keys
from .wordnet.reader import SynsetKey
from .wordnet.wu_palmer import best_wup, best_wup_reaches

__all__ = [
    "Similarity",
    "SIMILARITIES",
    "get_similarity",
    "exact_match",
    "wordnet_similarity",
    "best_wordnet_similarity",
    "wup_similarity",
    "best_wup_similarity",
    "wordnet_reaches",
    "wup_reaches",
    "ABOVE_HALF",
    "lcs_ratio",
    "longest_common_substring_ratio",
    "jaro_winkler",
    "MAX_SIMILARITY_TOKENS",
    "QUESTION_SIMILARITIES",
    "ALL_SIMILARITIES",
    "question_similarity",
    "ApproximationWarning",
    "collect_approximations",
]

MAX_SIMILARITY_TOKENS = 64
"""Content tokens a side keeps for the WordNet similarities; the rest count as one unmatched token."""

ABOVE_HALF = math.nextafter(0.5, 1.0)
"""The least float above 1/2. A rounded similarity counts 1 exactly when its value reaches it
(half-to-even rounding sends 0.5 to 0), so the metric asks :meth:`Similarity.reaches` this level."""


class ApproximationWarning(UserWarning):
    """A similarity was computed under the long-string rule or an exhausted search budget."""


_collector: contextvars.ContextVar[Optional[list[tuple[str, str]]]] = contextvars.ContextVar(
    "protoqa_similarity_approximations", default=None
)


@contextlib.contextmanager
def collect_approximations() -> Iterator[list[tuple[str, str]]]:
    """Collect the ``(prediction, answer)`` pairs whose similarity was approximated.

    Inside the block, approximated pairs are appended to the yielded list instead of
    raising an :class:`ApproximationWarning` each; the caller reports them (the
    metric names question and cluster, and marks the signature).

    >>> with collect_approximations() as pairs:
    ...     _ = wordnet_similarity("dog", "dog " * 70)
    >>> len(pairs)
    1
    """
    found: list[tuple[str, str]] = []
    token = _collector.set(found)
    try:
        yield found
    finally:
        _collector.reset(token)


def _report_approximation(prediction: str, answer: str) -> None:
    found = _collector.get()
    if found is not None:
        found.append((prediction, answer))
        return
    warnings.warn(
        f"similarity of {_preview(prediction)} and {_preview(answer)} is a lower bound: "
        f"a string longer than {MAX_SIMILARITY_TOKENS} content tokens, or a search budget ran out",
        ApproximationWarning,
        stacklevel=4,
    )


def _preview(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


# Stand-ins for the cut-off rest of a long string; they match nothing, not even each
# other (no WordNet entry, and the two sides use different ones).
_REST_TOKENS = ("\x00rest-of-prediction", "\x00rest-of-answer")


def _capped(tokens: tuple[str, ...], side: int) -> tuple[tuple[str, ...], bool]:
    if len(tokens) <= MAX_SIMILARITY_TOKENS:
        return tokens, False
    return tokens[:MAX_SIMILARITY_TOKENS] + (_REST_TOKENS[side],), True


def exact_match(prediction: str, answer: str) -> float:
    """1.0 when the two strings are equal, else 0.0.

    >>> exact_match("age", "age"), exact_match("age", "their age")
    (1.0, 0.0)
    """
    return 1.0 if prediction == answer else 0.0


# The caches of what each distinct string offers are capped by their memory: on inputs where
# every string is new they would otherwise hold hundreds of MB.
@lru_cache(maxsize=20_000)
def _spans_with_synsets(tokens: tuple[str, ...]) -> tuple[tuple[int, int, frozenset[SynsetKey]], ...]:
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
def _span_index(tokens: tuple[str, ...]) -> _SpanIndex:
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens):
        positions.setdefault(tok, []).append(i)
    by_synset: dict[SynsetKey, list[tuple[int, int]]] = {}
    for start, end, keys in _spans_with_synsets(tokens):
        for key in keys:
            by_synset.setdefault(key, []).append((start, end))
    return _SpanIndex(
        {t: tuple(p) for t, p in positions.items()},
        {k: tuple(v) for k, v in by_synset.items()},
    )


def _equal_token_pairs(
    ia: _SpanIndex, ib: _SpanIndex, shared_tokens: Iterable[str]
) -> Iterator[tuple[int, int, int, int]]:
    """Single-token span pairs ``(i, i+1, j, j+1)`` where the two sequences have the same token."""
    return (
        (i, i + 1, j, j + 1) for tok in shared_tokens for i in ia.token_positions[tok] for j in ib.token_positions[tok]
    )


@lru_cache(maxsize=100_000)
def _wordnet_tokens_similarity(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[float, bool]:
    """``(value, exact)`` of the WordNet partition similarity of two token tuples."""
    if a == b:
        return 1.0, True
    ia, ib = _span_index(a), _span_index(b)
    # Most pairs share nothing at all; set intersections find that fast.
    shared_synsets = ia.by_synset.keys() & ib.by_synset.keys()
    shared_tokens = ia.token_positions.keys() & ib.token_positions.keys()
    if not shared_synsets and not shared_tokens:
        return 0.0, True
    spans = {(sa, ea, sb, eb) for key in shared_synsets for sa, ea in ia.by_synset[key] for sb, eb in ib.by_synset[key]}
    spans.update(_equal_token_pairs(ia, ib, shared_tokens))
    return best_partition_alignment_checked(len(a), len(b), [SpanPair(*s, 1.0) for s in sorted(spans)])


def _empty_side(a: tuple[str, ...], b: tuple[str, ...], all_stopword_match: bool) -> float:
    # A side with no content tokens is the single empty group "", which equals
    # only another empty group.
    return 1.0 if (not a and not b and all_stopword_match) else 0.0


def wordnet_similarity(prediction: str, answer: str, *, all_stopword_match: bool = True) -> float:
    """The WordNet similarity of docs/spec.md: the best partition alignment of the content tokens.

    Both strings are tokenized (NLTK Treebank tokenizer) and stripped of English
    stopwords; groups of contiguous tokens agree when they are equal or share a
    WordNet synset; the score is the best ``matched groups / max(groups)`` over all
    partitions of both token lists. Computed exactly, without enumerating
    partitions (see :mod:`protoqa_core.partition_alignment`).

    Args:
        all_stopword_match: two strings made only of stopwords ("the" vs "a") score
            1, as in the published ProtoQA numbers. Pass False to score them 0.

    >>> wordnet_similarity("chewing gum", "gum")
    1.0
    >>> wordnet_similarity("red car", "car")
    0.5
    """
    return _bounded(_wordnet_tokens_similarity, prediction, answer, all_stopword_match)


def _bounded(
    tokens_similarity: Callable[[tuple[str, ...], tuple[str, ...]], tuple[float, bool]],
    prediction: str,
    answer: str,
    all_stopword_match: bool,
) -> float:
    """Apply the token cap, run the token-level similarity, report approximations."""
    a, b = content_tokens(prediction), content_tokens(answer)
    if not a or not b:
        return _empty_side(a, b, all_stopword_match)
    a, cut_a = _capped(a, 0)
    b, cut_b = _capped(b, 1)
    value, exact = tokens_similarity(a, b)
    if cut_a or cut_b or not exact:
        _report_approximation(prediction, answer)
    return value


# About 1 KB an entry (one per cluster): capped near 10 MB.
@lru_cache(maxsize=10_000)
def _answers_offer(answers: tuple[str, ...]) -> tuple[frozenset, frozenset]:
    """Every synset and token that any answer of a cluster can match on."""
    synsets: set = set()
    tokens: set = set()
    for answer in answers:
        index = _span_index(_capped(content_tokens(answer), 1)[0])
        synsets.update(index.by_synset)
        tokens.update(index.token_positions)
    return frozenset(synsets), frozenset(tokens)


def _first_best(
    similarity: Callable[..., float],
    prediction: str,
    answers: Iterable[str],
    all_stopword_match: bool,
    best: float = 0.0,
    enough: float = 1.0,
) -> float:
    """The largest ``similarity`` of ``prediction`` to ``answers`` (at least ``best``), in order,
    stopping at the first that reaches ``enough``. With ``enough`` 1 that is the maximum, and
    the strings scored (and any approximation reported) are those of the plain maximum."""
    for answer in answers:
        value = similarity(prediction, answer, all_stopword_match=all_stopword_match)
        if value > best:
            best = value
            if best >= enough:
                break
    return best


def best_wordnet_similarity(prediction: str, answers: Sequence[str], *, all_stopword_match: bool = True) -> float:
    """``max(wordnet_similarity(prediction, y) for y in answers)``, skipping hopeless clusters.

    A prediction that shares no token and no synset with any answer of the cluster
    scores 0 against all of them, which one set intersection shows.

    >>> best_wordnet_similarity("puppies", ["dog", "puppy"])
    1.0
    """
    if _shares_nothing(prediction, answers):
        return 0.0
    return _first_best(wordnet_similarity, prediction, answers, all_stopword_match)


def _shares_nothing(prediction: str, answers: Sequence[str]) -> bool:
    """Whether the prediction has content tokens and shares no token and no synset with
    any answer, so that its WordNet similarity to each of them is 0."""
    a = _capped(content_tokens(prediction), 0)[0]
    if not a:
        return False
    synsets, tokens = _answers_offer(tuple(answers))
    index = _span_index(a)
    return synsets.isdisjoint(index.by_synset) and tokens.isdisjoint(index.token_positions)


def wordnet_reaches(prediction: str, answers: Sequence[str], level: float, *, all_stopword_match: bool = True) -> bool:
    """Whether ``best_wordnet_similarity(prediction, answers) >= level``, stopping at the
    first answer that reaches ``level``.

    >>> wordnet_reaches("red car", ["car", "bus"], ABOVE_HALF), wordnet_reaches("car", ["red car"], 0.5)
    (False, True)
    """
    if level > 0.0 and _shares_nothing(prediction, answers):
        return False
    return _first_best(wordnet_similarity, prediction, answers, all_stopword_match, enough=level) >= level


@lru_cache(maxsize=200_000)
def _phrase_wup(names_a: frozenset[SynsetKey], names_b: frozenset[SynsetKey]) -> float:
    """Best Wu-Palmer similarity between a synset of one group and one of the other.

    As the reference evaluator's part score, shared synsets get no shortcut: NLTK's
    Wu-Palmer similarity of a synset with itself is below 1 for synsets with several
    hypernym paths (person.n.01 scores 0.857 with itself).
    """
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
    spans_b = _spans_with_synsets(b)
    for a_start, a_end, names_a in _spans_with_synsets(a):
        for b_start, b_end, names_b in spans_b:
            w = _phrase_wup(names_a, names_b)
            if w > 0:
                weights[(a_start, a_end, b_start, b_end)] = w
    ia, ib = _span_index(a), _span_index(b)
    for key in _equal_token_pairs(ia, ib, ia.token_positions.keys() & ib.token_positions.keys()):
        weights[key] = 1.0  # equal groups score 1 (the reference's exact-match part score)
    # Equal multi-token groups also score 1; matching their tokens one to one is at
    # least as good (see partition_alignment), so they need no pair of their own.
    if not weights:
        return 0.0, True
    return best_partition_alignment_checked(len(a), len(b), [SpanPair(*k, w) for k, w in sorted(weights.items())])


def _wup_against_one_token(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """The Wu-Palmer partition similarity when ``a`` or ``b`` is a single token.

    A matching is then one group ``g`` of the longer side paired with the token, and
    scores ``w / (1 + gaps)``: ``w`` is 1 for an equal token and otherwise the best
    Wu-Palmer of the two groups' synsets, ``gaps`` counts the runs of the longer side
    left out (0, 1 or 2). That is the partition search's own float expression, so the
    maximum is the same number. Groups are tried fewest gaps first and a level stops
    once ``1 / (1 + gaps)`` cannot beat the best, which skips their Wu-Palmer values.
    """
    single_is_a = len(a) == 1
    token, longer = (a[0], b) if single_is_a else (b[0], a)
    return _wup_against_tokens(longer, (token,), synset_keys(token), single_is_a)


def _wup_against_tokens(
    longer: tuple[str, ...], tokens: Collection[str], names_of_tokens: frozenset[SynsetKey], tokens_first: bool
) -> float:
    """The best :func:`_wup_against_one_token` of ``longer`` against each single token of
    ``tokens`` (``names_of_tokens`` the union of their synsets; ``tokens_first`` when the
    tokens are the first argument).

    For one group of ``longer``, the best over the tokens is 1 when one of them equals
    it, else the best Wu-Palmer between its synsets and the union of theirs, which is
    the maximum of the tokens' own; dividing by ``1 + gaps`` keeps the order of floats.
    """
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
    """The groups a single token can be paired with, by the runs of ``tokens`` they leave
    out (0, 1, 2): every single token (with its synsets, maybe none) and every longer
    group WordNet knows."""
    n = len(tokens)
    levels: tuple[list, list, list] = ([], [], [])
    for start, end, names in _spans_with_synsets(tokens):
        if end - start > 1:
            levels[(start > 0) + (end < n)].append((start, end, names))
    for j, tok in enumerate(tokens):
        levels[(j > 0) + (j + 1 < n)].append((j, j + 1, synset_keys(tok)))
    return tuple(tuple(level) for level in levels)


def wup_similarity(prediction: str, answer: str, *, all_stopword_match: bool = True) -> float:
    """WordNet partition similarity with Wu-Palmer weights on the group pairs.

    As :func:`wordnet_similarity`, but a group pair scores 1 when the two groups are
    equal and otherwise the best NLTK Wu-Palmer similarity between their synsets
    (the reference evaluator's ``wordnet_wup_score``), and the matching between
    groups maximizes the total weight. Same bounds as :func:`wordnet_similarity`.

    >>> wup_similarity("dog", "cat") > 0.8
    True
    >>> round(wup_similarity("person", "someone"), 4)  # one synset, below 1 with itself
    0.8571
    """
    return _bounded(_wup_tokens_similarity, prediction, answer, all_stopword_match)


def best_wup_similarity(prediction: str, answers: Sequence[str], *, all_stopword_match: bool = True) -> float:
    """``max(wup_similarity(prediction, y) for y in answers)``, the one-token answers at once.

    Against answers of a single token each, the best value is the Wu-Palmer partition
    similarity against one group holding all their synsets (see
    :func:`_wup_against_tokens`): one Wu-Palmer maximum per group of the prediction
    instead of one per answer. The other answers are scored one by one, in order.
    When that shortcut finds 1 (an answer equal to the prediction, or a synset pair
    scoring 1), the answers are scored one by one instead, stopping at the first that
    reaches 1 as before, so the same strings are scored (and reported if approximated).

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
    return _first_best(wup_similarity, prediction, others, all_stopword_match, best)


@lru_cache(maxsize=100_000)
def _whole_group(tokens: tuple[str, ...]) -> frozenset[SynsetKey]:
    """The synsets of ``tokens`` taken as one group (a WordNet entry of them all), or none."""
    if len(tokens) == 1:
        return synset_keys(tokens[0])
    return next(
        (names for start, end, names in _spans_with_synsets(tokens) if start == 0 and end == len(tokens)), frozenset()
    )


def wup_reaches(prediction: str, answers: Sequence[str], level: float, *, all_stopword_match: bool = True) -> bool:
    """Whether ``best_wup_similarity(prediction, answers) >= level``, stopping at the first
    answer that reaches ``level``.

    Above 1/2 (the metric asks :data:`ABOVE_HALF`), a pair with a single token on one
    side reaches the level only through a matching of one group with no gap (see
    :func:`_wup_against_one_token`: any other scores ``w / 2`` or less), so only the
    whole other side as one group can: equal to the token, or a WordNet entry whose
    Wu-Palmer with the token reaches the level. Those pairs need no partition search.
    The one-token answers are checked first, token by token (each token's synsets are
    one group, whose tables every cluster with that token shares). The other answers
    are scored one by one, in order; approximated ones are reported as they are scored.

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
    return _first_best(wup_similarity, prediction, others, all_stopword_match, enough=level) >= level


@dataclass(frozen=True)
class Similarity:
    """A named similarity function and whether the metric rounds its scores.

    ``best_of(prediction, answers, **options)``, when given, must equal the maximum
    of ``function`` over the answers; it lets a similarity skip work per cluster.
    ``reaches_of(prediction, answers, level, **options)``, when given, must equal
    ``best(prediction, answers) >= level``; it lets a rounded similarity decide a
    cell of the metric without its exact value.
    """

    name: str
    function: Callable[..., float]
    rounded: bool
    uses_wordnet: bool
    description: str
    best_of: Optional[Callable[..., float]] = None
    reaches_of: Optional[Callable[..., bool]] = None

    def best(self, prediction: str, answers: Sequence[str], **options: bool) -> float:
        """The best similarity of ``prediction`` to any of ``answers`` (0 for none).

        >>> get_similarity("exact_match").best("cat", ["dog", "cat"])
        1.0
        """
        if self.best_of is not None:
            return self.best_of(prediction, answers, **options)
        best = 0.0
        for answer in answers:
            value = self.function(prediction, answer, **options)
            if value > best:
                best = value
                if best >= 1.0:
                    break
        return best

    def reaches(self, prediction: str, answers: Sequence[str], level: float, **options: bool) -> bool:
        """Whether the best similarity of ``prediction`` to ``answers`` is at least ``level``.

        The metric's rounded score of a cell is 1 exactly when the best similarity
        reaches :data:`ABOVE_HALF`; a similarity may decide that with less work.

        >>> get_similarity("wordnet_wup").reaches("dog", ["cat", "red car"], ABOVE_HALF)
        True
        """
        if self.reaches_of is not None:
            return self.reaches_of(prediction, answers, level, **options)
        return self.best(prediction, answers, **options) >= level


SIMILARITIES: dict[str, Similarity] = {
    s.name: s
    for s in (
        Similarity("exact_match", exact_match, False, False, "identical strings"),
        Similarity(
            "wordnet",
            wordnet_similarity,
            True,
            True,
            "WordNet synsets over token partitions",
            best_wordnet_similarity,
            wordnet_reaches,
        ),
        Similarity(
            "wordnet_wup",
            wup_similarity,
            True,
            True,
            "Wu-Palmer weighted WordNet partitions",
            best_wup_similarity,
            wup_reaches,
        ),
        Similarity("lcs", lcs_ratio, False, False, "longest common subsequence ratio", best_lcs_ratios),
        Similarity(
            "longest_common_substring", longest_common_substring_ratio, False, False, "longest common substring ratio"
        ),
        Similarity("jaro_winkler", jaro_winkler, False, False, "Jaro-Winkler similarity (NLTK's)"),
    )
}


QUESTION_SIMILARITIES: dict[str, str] = {
    "roberta": "the ProtoQA paper's RoBERTa similarity: contextual vectors, a Gaussian process per cluster",
}
"""Similarities scored per question rather than per string pair (name -> description)."""

ALL_SIMILARITIES: tuple[str, ...] = (*SIMILARITIES, *QUESTION_SIMILARITIES)
"""Every similarity name the metric takes: the pairwise ones, then the per-question ones."""


def question_similarity(name: str, **options: object) -> object:
    """A new per-question similarity (``roberta``: a
    :class:`~protoqa_core.roberta_similarity.RobertaSimilarity` with ``options``).

    >>> question_similarity("wordnet")
    Traceback (most recent call last):
    ...
    ValueError: 'wordnet' is not a per-question similarity; those are: roberta
    """
    if name == "roberta":
        from .roberta_similarity import RobertaSimilarity

        return RobertaSimilarity(**options)  # type: ignore[arg-type]
    raise ValueError(f"{name!r} is not a per-question similarity; those are: {', '.join(QUESTION_SIMILARITIES)}")


def get_similarity(name: str) -> Similarity:
    """Look up a pairwise similarity by name (``exact_match``, ``wordnet``, ``wordnet_wup``, ``lcs``,
    ``longest_common_substring``, ``jaro_winkler``).

    >>> get_similarity("wordnet").rounded
    True
    """
    try:
        return SIMILARITIES[name]
    except KeyError:
        if name in QUESTION_SIMILARITIES:
            raise ValueError(
                f"{name!r} is scored per question (it needs the question's text and crowd answers), not per string pair"
            ) from None
        raise ValueError(f"unknown similarity {name!r}; choose one of: {', '.join(ALL_SIMILARITIES)}") from None
