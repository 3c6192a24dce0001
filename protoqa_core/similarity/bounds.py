"""What every similarity's cost is bounded by, and how a bounded value is reported.

The costs and the long-string rule are in docs/protoqa-metric.md: a WordNet similarity keeps
:data:`MAX_SIMILARITY_TOKENS` content tokens a side, the rest standing as one token that matches
nothing (a lower bound), and its partition search runs under fixed budgets. Whenever either changes
a value, the pair is *approximated*: the metric names the question and cluster in a warning and
marks the signature (:func:`collect_approximations`). Every other value is exact.
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

    Inside the block they are appended to the yielded list instead of each raising an :class:`ApproximationWarning`.

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
    """The largest ``similarity`` of ``prediction`` to ``answers`` (at least ``best``), in order, stopping at the
    first that reaches ``enough``: with 1, the plain maximum, scoring (and reporting) the same strings."""
    for answer in answers:
        value = similarity(prediction, answer, all_stopword_match=all_stopword_match)
        if value > best:
            best = value
            if best >= enough:
                break
    return best
