"""Character-level similarities with costs bounded in both string lengths.

The two common-string measures are bit-parallel: a string becomes one bit mask per character
(a Python integer) and the other is walked a character at a time, a few word operations per 64
characters. In the metric the prediction is at most 50 characters, so each similarity is linear
in the cluster string's length: a 1 MB cluster string costs milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

from .registry import Similarity

__all__ = [
    "lcs_ratio",
    "longest_common_substring_ratio",
    "jaro_similarity",
    "jaro_winkler",
    "JARO_WINKLER_PREFIX_SCALE",
    "JARO_WINKLER_MAX_PREFIX",
    "best_lcs_ratios",
    "LCS",
    "LONGEST_COMMON_SUBSTRING",
    "JARO_WINKLER",
]

JARO_WINKLER_PREFIX_SCALE = 0.1
"""Winkler's prefix scale ``p`` (NLTK's default, used by the reference evaluator)."""
JARO_WINKLER_MAX_PREFIX = 4
"""Longest common prefix that earns the Winkler bonus (NLTK's ``max_l``)."""

# Strings up to this length get their masks from a plain loop; longer ones through
# numpy, which builds each mask in C.
_NUMPY_MASKS_FROM = 512


def _char_masks(text: str, alphabet: frozenset[str]) -> dict[str, int]:
    """Bit mask of the positions of each character of ``alphabet`` in ``text``."""
    if len(text) < _NUMPY_MASKS_FROM:
        masks: dict[str, int] = {}
        for j, ch in enumerate(text):
            if ch in alphabet:
                masks[ch] = masks.get(ch, 0) | (1 << j)
        return masks
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out = {}
    for ch in alphabet:
        hits = codes == ord(ch)
        if hits.any():
            out[ch] = int.from_bytes(np.packbits(hits, bitorder="little").tobytes(), "little")
    return out


def _lcs_vector(walk: str, masks: dict[str, int], full: int) -> int:
    """Hyyro's bit-vector LCS recurrence after walking ``walk``: bit ``j`` is 0 where the LCS with ``y[:j+1]`` grew.

    Bits clear in ``full`` stay clear, so one vector can hold several strings between guard bits.
    """
    v = full
    for ch in walk:
        m = masks.get(ch)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return v


def _lcs_length_bits(walk: str, masks: dict[str, int], length: int) -> int:
    """Longest common subsequence of ``walk`` and the string of ``length`` characters ``masks`` describes."""
    return length - _lcs_vector(walk, masks, (1 << length) - 1).bit_count()


def _empty_score(prediction: str, answer: str) -> float:
    """The score when a string is empty: 1 for two empty strings, else 0."""
    return 1.0 if not prediction and not answer else 0.0


def _shorter_and_masks(prediction: str, answer: str) -> tuple[str, str, dict[str, int]]:
    """The shorter string, the longer one, and the longer one's character bit masks."""
    short, long_ = sorted((prediction, answer), key=len)
    return short, long_, _char_masks(long_, frozenset(short))


def lcs_ratio(prediction: str, answer: str) -> float:
    """Length of the longest common (character) subsequence over the longer length.

    Two empty strings score 1. The exact LCS, where the reference evaluator's difflib blocks can
    miss it; ``min(|x|, |y|)`` steps of ``O(max(|x|, |y|) / 64)`` word operations.

    >>> lcs_ratio("color", "colour")
    0.8333333333333334
    """
    if not prediction or not answer:
        return _empty_score(prediction, answer)
    short, long_, masks = _shorter_and_masks(prediction, answer)
    return _lcs_length_bits(short, masks, len(long_)) / len(long_)


@lru_cache(maxsize=4096)
def _packed_answers(answers: tuple[str, ...]) -> tuple[dict[str, int], int, int, tuple[tuple[int, int], ...]]:
    """All answers of a cluster side by side in one bit string, each followed by a guard bit (0 in every mask,
    so an LCS carry stops there)."""
    segments = []
    position = 0
    for answer in answers:
        segments.append((position, len(answer)))
        position += len(answer) + 1
    text = "".join(answer + "\x00" for answer in answers)
    masks = _char_masks(text, frozenset(text))
    guards = sum(1 << (start + length) for start, length in segments)
    # Separators that happen to be "\x00" inside an answer are real characters there.
    nul = masks.pop("\x00", 0) & ~guards
    if nul:
        masks["\x00"] = nul
    return masks, position, guards, tuple(segments)


def best_lcs_ratios(prediction: str, answers: Sequence[str]) -> float:
    """``max(lcs_ratio(prediction, y) for y in answers)`` in one bit-parallel pass over the packed answers (0 for none).

    >>> best_lcs_ratios("colour", ["dog", "color"])
    0.8333333333333334
    """
    if not answers:
        return 0.0
    key = tuple(answers)
    if not prediction:
        return 1.0 if any(not y for y in key) else 0.0
    masks, length, guards, segments = _packed_answers(key)
    v = _lcs_vector(prediction, masks, ((1 << length) - 1) & ~guards)
    best = 0.0
    p = len(prediction)
    for start, size in segments:
        if not size:
            continue
        lcs = size - ((v >> start) & ((1 << size) - 1)).bit_count()
        value = lcs / max(p, size)
        if value > best:
            best = value
    return best


def longest_common_substring_ratio(prediction: str, answer: str) -> float:
    """Longest common substring over the longer length.

    The reference evaluator's ``longest_common_substring_score``, but two empty strings score 1 (the
    reference divides by zero) and it is exact (difflib's junk heuristic misses some past 200 characters).

    >>> longest_common_substring_ratio("color", "colour")
    0.6666666666666666
    """
    if not prediction or not answer:
        return _empty_score(prediction, answer)
    short, long_, masks = _shorter_and_masks(prediction, answer)
    best = 0
    n = len(short)
    for start in range(n):
        if n - start <= best:
            break
        run = masks.get(short[start], 0)
        size = 0
        # Bit j of run: short[start:start+size+1] ends at position j of long_.
        while run:
            size += 1
            if start + size == n:
                break
            run = (run << 1) & masks.get(short[start + size], 0)
        if size > best:
            best = size
    return best / len(long_)


def _jaro_matches(s1: str, s2: str) -> tuple[list[int], list[int]]:
    """The greedy Jaro matching: each character of ``s1`` takes the first free equal character of ``s2`` in its window.

    The windows move right, so the positions a character takes increase: no position is scanned
    twice for the same character.
    """
    len1, len2 = len(s1), len(s2)
    bound = max(len1, len2) // 2 - 1
    resume: dict[str, int] = {}
    flagged_1: list[int] = []
    flagged_2: list[int] = []
    for i, ch in enumerate(s1):
        lo = max(0, i - bound)
        hi = min(i + bound, len2 - 1)
        if lo > hi:
            continue
        start = max(lo, resume.get(ch, 0))
        if start > hi:
            continue
        j = s2.find(ch, start, hi + 1)
        if j < 0:
            resume[ch] = hi + 1
            continue
        resume[ch] = j + 1
        flagged_1.append(i)
        flagged_2.append(j)
    return flagged_1, flagged_2


def jaro_similarity(s1: str, s2: str) -> float:
    """NLTK's ``jaro_similarity`` (equal strings score 1), for strings of any length.

    >>> round(jaro_similarity("dixon", "dickson"), 3)
    0.79
    """
    if s1 == s2:
        return 1.0
    flagged_1, flagged_2 = _jaro_matches(s1, s2)
    matches = len(flagged_1)
    if matches == 0:
        return 0.0
    flagged_2.sort()
    transpositions = sum(1 for i, j in zip(flagged_1, flagged_2, strict=True) if s1[i] != s2[j])
    # Same expression, in the same order, as NLTK: the floats are bit-identical.
    return 1 / 3 * (matches / len(s1) + matches / len(s2) + (matches - transpositions // 2) / matches)


def jaro_winkler(prediction: str, answer: str) -> float:
    """Jaro-Winkler similarity as NLTK's ``jaro_winkler_similarity(s1, s2)`` computes it.

    Jaro plus ``l * 0.1 * (1 - jaro)`` for a common prefix of ``l <= 4`` characters, no boost
    threshold; the prediction is NLTK's first argument (the matching is not symmetric).

    >>> round(jaro_winkler("massie", "massey"), 3)
    0.933
    """
    jaro = jaro_similarity(prediction, answer)
    prefix = len(os.path.commonprefix([prediction[:JARO_WINKLER_MAX_PREFIX], answer[:JARO_WINKLER_MAX_PREFIX]]))
    return jaro + (prefix * JARO_WINKLER_PREFIX_SCALE * (1 - jaro))


LCS = Similarity("lcs", lcs_ratio, description="longest common subsequence ratio", best_of=best_lcs_ratios)
"""The ``lcs`` similarity of :data:`~protoqa_core.similarity.SIMILARITIES`."""

LONGEST_COMMON_SUBSTRING = Similarity(
    "longest_common_substring", longest_common_substring_ratio, description="longest common substring ratio"
)
"""The ``longest_common_substring`` similarity of :data:`~protoqa_core.similarity.SIMILARITIES`."""

JARO_WINKLER = Similarity("jaro_winkler", jaro_winkler, description="Jaro-Winkler similarity (NLTK's)")
"""The ``jaro_winkler`` similarity of :data:`~protoqa_core.similarity.SIMILARITIES`."""
