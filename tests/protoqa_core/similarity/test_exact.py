"""``exact_match``: equal strings only, after the normalization the metric applies, with no rounding."""

from __future__ import annotations

from protoqa_core.similarity import get_similarity
from protoqa_core.similarity.exact import EXACT_MATCH, exact_match


def test_only_identical_strings_score():
    assert exact_match("age", "age") == 1.0
    for other in ("Age", "age ", "their age", "", "ages"):
        assert exact_match("age", other) == 0.0, other
    assert exact_match("", "") == 1.0


def test_it_is_the_registered_exact_match_and_needs_no_wordnet():
    assert get_similarity("exact_match") is EXACT_MATCH
    assert EXACT_MATCH.function is exact_match
    assert not EXACT_MATCH.rounded and not EXACT_MATCH.uses_wordnet
    assert EXACT_MATCH.best("age", ["their age", "age"]) == 1.0
    assert EXACT_MATCH.best("age", ["their age"]) == 0.0
