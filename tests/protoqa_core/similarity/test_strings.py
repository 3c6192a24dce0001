"""The character similarities: each against its definition, NLTK or difflib, on short, long
and hostile strings, and the one-pass cluster maximum against the plain one."""

from __future__ import annotations

import difflib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protoqa_core.similarity import SIMILARITIES, get_similarity
from protoqa_core.similarity.strings import (
    JARO_WINKLER_MAX_PREFIX,
    LCS,
    best_lcs_ratios,
    jaro_similarity,
    jaro_winkler,
    lcs_ratio,
    longest_common_substring_ratio,
)

# --- Jaro-Winkler and longest common substring, written from their definitions ------
#
# The reference evaluator uses NLTK's jaro_winkler_similarity (its tests) and
# difflib's longest match over max(len) for the substring score. These copies follow
# the published definitions, independently of the package's implementation.


def _jaro_by_definition(s1: str, s2: str) -> float:
    # Jaro (1989) with NLTK's conventions: equal strings score 1; the match window is
    # floor(max(|s1|, |s2|) / 2) - 1 around each position; each character of s1 takes
    # the first unmatched equal character of s2 in its window; t is half the number
    # of matched characters out of order, rounded down.
    if s1 == s2:
        return 1.0
    window = max(len(s1), len(s2)) // 2 - 1
    used = [False] * len(s2)
    matched_1, matched_2 = [], []
    for i, c in enumerate(s1):
        for j in range(max(0, i - window), min(i + window, len(s2) - 1) + 1):
            if not used[j] and s2[j] == c:
                used[j] = True
                matched_1.append(c)
                matched_2.append(j)
                break
    m = len(matched_1)
    if m == 0:
        return 0.0
    in_order_2 = [s2[j] for j in sorted(matched_2)]
    t = sum(a != b for a, b in zip(matched_1, in_order_2, strict=True)) // 2
    return 1 / 3 * (m / len(s1) + m / len(s2) + (m - t) / m)


def _jaro_winkler_by_definition(s1: str, s2: str) -> float:
    # Winkler (1990): add l * p * (1 - jaro) for a common prefix of l <= 4, p = 0.1,
    # with no boost threshold (NLTK's jaro_winkler_similarity defaults).
    jaro = _jaro_by_definition(s1, s2)
    prefix = 0
    for a, b in zip(s1, s2, strict=False):
        if a != b or prefix == 4:
            break
        prefix += 1
    return jaro + prefix * 0.1 * (1 - jaro)


def _longest_common_substring_by_definition(x: str, y: str) -> float:
    best = 0
    previous = [0] * (len(y) + 1)
    for a in x:
        current = [0] * (len(y) + 1)
        for j, b in enumerate(y):
            if a == b:
                current[j + 1] = previous[j] + 1
                best = max(best, current[j + 1])
        previous = current
    return best / max(len(x), len(y))


def _lcs_by_definition(x: str, y: str) -> int:
    previous = [0] * (len(y) + 1)
    for a in x:
        current = [0]
        for j, b in enumerate(y):
            current.append(previous[j] + 1 if a == b else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _random_pairs(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    words = [
        "dog",
        "cat",
        "car",
        "care",
        "card",
        "brush teeth",
        "ice cream",
        "massie",
        "massey",
        "dwayne",
        "duane",
        "dixon",
        "dickson",
        "a",
        "ab",
        "aa",
    ]
    pairs = []
    for k in range(n):
        kind = k % 3
        if kind == 0:  # small alphabet: many matches and transpositions
            x = "".join(rng.choice("abcd ") for _ in range(rng.randint(1, 24)))
            y = "".join(rng.choice("abcd ") for _ in range(rng.randint(1, 24)))
        elif kind == 1:  # words and their edits
            x = rng.choice(words)
            y = "".join(c for c in rng.choice(words) if rng.random() > 0.15) or rng.choice(words)
        else:  # longer mixed strings
            x = "".join(rng.choice("abcdefghij xyz") for _ in range(rng.randint(1, 120)))
            y = "".join(rng.choice("abcdefghij xyz") for _ in range(rng.randint(1, 120)))
        pairs.append((x, y))
    return pairs


def test_jaro_winkler_equals_its_definition_and_nltk_on_2000_pairs():
    import nltk
    from nltk.metrics.distance import jaro_winkler_similarity

    # NLTK 3.9.1 scores two equal one-character strings 0.1 (fixed by 3.10): compare with
    # NLTK's function only where it follows the definition.
    nltk_agrees = tuple(int(p) for p in nltk.__version__.split(".")[:2]) >= (3, 10)
    for x, y in _random_pairs(2000, seed=1):
        expected = _jaro_winkler_by_definition(x, y)
        assert jaro_winkler(x, y) == expected, (x, y)
        if nltk_agrees:
            assert jaro_winkler(x, y) == jaro_winkler_similarity(x, y), (x, y)


def test_jaro_winkler_textbook_values():
    # Winkler's Jaro values (0.889 and 0.790), plus the prefix bonus at scale 0.1.
    assert round(jaro_winkler("massie", "massey"), 3) == round(0.8889 + 4 * 0.1 * (1 - 0.8889), 3) == 0.933
    assert round(jaro_winkler("dixon", "dickson"), 3) == round(0.7905 + 2 * 0.1 * (1 - 0.7905), 3) == 0.832
    assert jaro_winkler("billy", "susan") == 0.0
    assert jaro_winkler("", "") == 1.0 and jaro_winkler("a", "a") == 1.0
    assert jaro_winkler("", "abc") == 0.0


def test_longest_common_substring_equals_its_definition_and_difflib_on_2000_pairs():
    for x, y in _random_pairs(2000, seed=2):
        expected = _longest_common_substring_by_definition(x, y)
        assert longest_common_substring_ratio(x, y) == expected, (x, y)
        # The reference's own formula; difflib's junk heuristic starts at 200 characters.
        match = difflib.SequenceMatcher(None, x, y).find_longest_match(0, len(x), 0, len(y))
        assert longest_common_substring_ratio(x, y) == match.size / max(len(x), len(y))


def test_longest_common_substring_edges():
    assert longest_common_substring_ratio("", "") == 1.0
    assert longest_common_substring_ratio("abc", "") == 0.0
    assert longest_common_substring_ratio("ice cream", "cream cheese") == 5 / 12
    # The exact answer even where difflib's popularity heuristic gives up.
    long_answer = "x" * 300 + "hello" + "x" * 300
    assert longest_common_substring_ratio("hello", long_answer) == 5 / len(long_answer)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abc d\x00é", max_size=30), st.text(alphabet="abc d\x00é", max_size=30))
def test_bit_parallel_lcs_equals_dynamic_programming(x, y):
    if not x and not y:
        assert lcs_ratio(x, y) == 1.0
        return
    expected = _lcs_by_definition(x, y) / max(len(x), len(y))
    assert lcs_ratio(x, y) == expected


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="abc d\x00", max_size=12),
    st.lists(st.text(alphabet="abc d\x00", max_size=15), min_size=1, max_size=6),
)
def test_cluster_lcs_in_one_pass_equals_the_maximum(prediction, answers):
    assert best_lcs_ratios(prediction, answers) == max(lcs_ratio(prediction, y) for y in answers)


def test_character_similarities_on_long_strings_are_exact():
    rng = random.Random(5)
    long_answer = "".join(rng.choice("abcdefgh ") for _ in range(5000))
    prediction = "cab bad face dead beef ab"
    assert lcs_ratio(prediction, long_answer) == _lcs_by_definition(prediction, long_answer) / 5000
    assert longest_common_substring_ratio(prediction, long_answer) == pytest.approx(
        _longest_common_substring_by_definition(prediction, long_answer), abs=0
    )
    assert jaro_winkler(prediction, long_answer) == _jaro_winkler_by_definition(prediction, long_answer)


def test_new_similarities_are_registered():
    for name in ("jaro_winkler", "longest_common_substring"):
        assert name in SIMILARITIES
        assert not get_similarity(name).rounded


def test_lcs_ratio_is_exact_lcs():
    assert lcs_ratio("color", "colour") == pytest.approx(5 / 6)
    assert lcs_ratio("", "") == 1.0
    assert lcs_ratio("abc", "") == 0.0
    # difflib's matching blocks find 2 here; the longest common subsequence is 3.
    assert lcs_ratio("abcxyz", "xyzabc") == 0.5
    assert lcs_ratio("axbxc", "abc") == pytest.approx(3 / 5)


# --- edges the definitions leave open ---------------------------------------------------


def test_jaro_textbook_values_and_empty_strings():
    # Winkler's Jaro values: 0.944 for MARTHA/MARHTA (one transposition), 0.790 for DIXON/DICKSON.
    assert round(jaro_similarity("martha", "marhta"), 3) == 0.944
    assert round(jaro_similarity("dixon", "dickson"), 3) == 0.790
    assert jaro_similarity("", "") == 1.0 and jaro_similarity("abc", "") == 0.0 and jaro_similarity("", "abc") == 0.0
    # Characters farther apart than the match window do not match: "ab" vs "ba" has a window of 0.
    assert jaro_similarity("ab", "ba") == 0.0


def test_the_winkler_bonus_stops_at_four_characters():
    jaro = jaro_similarity("abcdefx", "abcdefy")
    assert JARO_WINKLER_MAX_PREFIX == 4
    assert jaro_winkler("abcdefx", "abcdefy") == jaro + 4 * 0.1 * (1 - jaro)
    assert jaro_winkler("xbcdef", "ybcdef") == jaro_similarity("xbcdef", "ybcdef")  # no common prefix, no bonus


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab c\x00é", max_size=25), st.text(alphabet="ab c\x00é", max_size=25))
def test_the_common_string_ratios_are_symmetric_and_in_the_unit_interval(x, y):
    for function in (lcs_ratio, longest_common_substring_ratio):
        value = function(x, y)
        assert value == function(y, x) and 0.0 <= value <= 1.0
        assert (value == 1.0) == (x == y)


def test_long_strings_of_any_characters_take_the_numpy_masks_and_stay_exact():
    # From 512 characters the masks are built through UTF-32 code units: characters outside the
    # Basic Multilingual Plane, a lone surrogate and NUL must each stay one position.
    rng = random.Random(8)
    alphabet = ["a", "b", "😀", "\ud800", "\x00", "é", " "]
    long_answer = "".join(rng.choice(alphabet) for _ in range(700))
    prediction = "".join(rng.choice(alphabet) for _ in range(40))
    assert lcs_ratio(prediction, long_answer) == _lcs_by_definition(prediction, long_answer) / 700
    assert longest_common_substring_ratio(prediction, long_answer) == _longest_common_substring_by_definition(
        prediction, long_answer
    )
    assert lcs_ratio(long_answer, long_answer) == 1.0


def test_the_cluster_maximum_on_edges_and_long_clusters():
    assert best_lcs_ratios("dog", []) == 0.0
    assert best_lcs_ratios("", ["dog", ""]) == 1.0 and best_lcs_ratios("", ["dog"]) == 0.0
    assert best_lcs_ratios("dog", ["", "cat"]) == 0.0
    # Over 512 characters in all, the packed cluster takes the numpy masks.
    rng = random.Random(9)
    answers = ["".join(rng.choice("abcd\x00") for _ in range(rng.randint(0, 200))) for _ in range(8)]
    assert sum(map(len, answers)) > 512
    for prediction in ("abcd", "dcba dcba", "\x00a\x00", "zzz"):
        assert best_lcs_ratios(prediction, answers) == max(lcs_ratio(prediction, y) for y in answers)


def test_the_registered_lcs_takes_the_cluster_maximum_in_one_pass():
    assert SIMILARITIES["lcs"] is LCS and LCS.best_of is best_lcs_ratios
    assert LCS.best("colour", ["dog", "color"]) == lcs_ratio("colour", "color")
    assert get_similarity("jaro_winkler").best("massie", ["massey", "mass"]) == jaro_winkler("massie", "massey")
