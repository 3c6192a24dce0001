"""What every similarity's cost is bounded by, and how a bounded value is reported.

Every similarity has a worst-case cost for strings of any length:

* ``exact_match``: one string comparison, ``O(min(|x|, |y|))``.
* character similarities: see :mod:`protoqa_core.similarity.strings`; with a
  prediction of at most 50 characters each is linear in the cluster string's length.
* WordNet similarities: tokenizing is linear in the string length. Then each side
  keeps at most :data:`MAX_SIMILARITY_TOKENS` (64) content tokens: a longer string is
  scored on its first 64 tokens followed by one token that matches nothing, standing
  for the rest. That is the best matching that leaves the rest unmatched, a lower
  bound of the exact value (and equal to it whenever the best matching does not use
  the rest). A 50-character prediction has at most 50 tokens, so only cluster
  strings are ever cut, and no string of the ProtoQA or CFC data has more than 14
  content tokens. The partition search then runs under fixed, deterministic budgets
  (:mod:`protoqa_core.similarity.partition_alignment`); if one runs out, the best matching
  found is used, again a lower bound.

Whenever either rule changes a value, the pair is *approximated*: the metric names
the question and cluster in a warning and marks the result's signature (see
:func:`collect_approximations`). Every other value is exact.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Optional

from ..text import content_tokens

__all__ = ["MAX_SIMILARITY_TOKENS", "ApproximationWarning", "collect_approximations", "bounded", "capped", "first_best"]

MAX_SIMILARITY_TOKENS = 64
"""Content tokens a side keeps for the WordNet similarities; the rest count as one unmatched token."""


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

    >>> from protoqa_core.similarity import wordnet_similarity
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


def capped(tokens: tuple[str, ...], side: int) -> tuple[tuple[str, ...], bool]:
    """``tokens`` cut to :data:`MAX_SIMILARITY_TOKENS` (the rest stands as one token of ``side``), and whether they were.

    >>> capped(("a", "b"), 0)
    (('a', 'b'), False)
    """
    if len(tokens) <= MAX_SIMILARITY_TOKENS:
        return tokens, False
    return tokens[:MAX_SIMILARITY_TOKENS] + (_REST_TOKENS[side],), True


def _empty_side(a: tuple[str, ...], b: tuple[str, ...], all_stopword_match: bool) -> float:
    # A side with no content tokens is the single empty group "", which equals
    # only another empty group.
    return 1.0 if (not a and not b and all_stopword_match) else 0.0


def bounded(
    tokens_similarity: Callable[[tuple[str, ...], tuple[str, ...]], tuple[float, bool]],
    prediction: str,
    answer: str,
    all_stopword_match: bool,
) -> float:
    """Apply the token cap, run the token-level similarity, report approximations."""
    a, b = content_tokens(prediction), content_tokens(answer)
    if not a or not b:
        return _empty_side(a, b, all_stopword_match)
    a, cut_a = capped(a, 0)
    b, cut_b = capped(b, 1)
    value, exact = tokens_similarity(a, b)
    if cut_a or cut_b or not exact:
        _report_approximation(prediction, answer)
    return value


def first_best(
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
