"""Bounded similarities: the long-string rule, search budgets, Wu-Palmer as the reference
computes it, and the character similarities against their definitions."""

from __future__ import annotations

import difflib
import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protoqa_core.similarity import (
    MAX_SIMILARITY_TOKENS,
    SIMILARITIES,
    ApproximationWarning,
    collect_approximations,
    get_similarity,
    wordnet_similarity,
    wup_similarity,
)
from protoqa_core.similarity import partition_alignment as pm
from protoqa_core.similarity.strings import (
    best_lcs_ratios,
    jaro_winkler,
    lcs_ratio,
    longest_common_substring_ratio,
)
from protoqa_core.wordnet.lookup import open_wordnet, synset_keys
from protoqa_core.wordnet.nltk_reader import (
    get_wordnet,
    nltk_hypernym_pointers,
    nltk_lemma_offsets,
    nltk_shortest_hypernym_paths,
)
from protoqa_core.wordnet.wu_palmer import WuPalmer, best_wup, best_wup_reaches, wup_from_keys
from tests.support.spec_reference import (
    reference_wordnet_similarity,
    reference_wup_similarity,
)
from tests.support.words import FAST_PATH_WORDS, WUP_WORDS

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


# --- Wu-Palmer as NLTK and the reference evaluator compute it ------------------------


def test_wup_of_a_synset_with_itself_is_nltks():
    wn = get_wordnet()
    for name, expected in [("person.n.01", 0.8571428571428571), ("dog.n.01", 0.9285714285714286)]:
        synset = wn.synset(name)
        key = (synset.pos(), synset.offset())
        assert wup_from_keys(key, key) == expected == synset.wup_similarity(synset)
    assert wup_similarity("person", "someone") == pytest.approx(0.8571428571428571, abs=1e-15)
    assert reference_wup_similarity("person", "someone") == wup_similarity("person", "someone")


def test_wup_from_keys_equals_nltk_on_random_synsets():
    wn = get_wordnet()
    rng = random.Random(4)
    synsets = [
        s
        for word in [
            "dog",
            "cat",
            "person",
            "run",
            "bank",
            "light",
            "fast",
            "play",
            "house",
            "good",
            "break",
            "give",
            "take",
            "quickly",
            "green",
            "school",
            "water",
            "fire",
        ]
        for s in wn.synsets(word)
    ]
    for _ in range(1500):
        a, b = rng.choice(synsets), rng.choice(synsets)
        ka = ("a" if a.pos() == "s" else a.pos(), a.offset())
        kb = ("a" if b.pos() == "s" else b.pos(), b.offset())
        expected = a.wup_similarity(b)
        assert wup_from_keys(ka, kb) == (0.0 if expected is None else expected), (a, b)


def test_hypernym_tables_read_from_data_lines_equal_nltk():
    # A random sample of every part of speech, satellites and multi-parent synsets included.
    wup = WuPalmer(open_wordnet(), walk_table=None)
    wn = get_wordnet()
    rng = random.Random(5)
    lemmas = rng.sample(sorted(nltk_lemma_offsets(wn)), 600)
    sample = [s for lemma in lemmas for s in wn.synsets(lemma)]
    sample += wn.synsets("person") + wn.synsets("good") + wn.synsets("Einstein")
    for s in sample:
        name, parents = wup._record(("a" if s.pos() == "s" else s.pos(), s.offset()))
        assert name == s.name()
        assert sorted(wup._record(p)[0] for p in parents) == sorted(h.name() for h in nltk_hypernym_pointers(s))


def test_best_wup_on_random_words_equals_all_pairs():
    wn = get_wordnet()
    rng = random.Random(6)
    words = rng.sample(sorted(nltk_lemma_offsets(wn)), 150) + ["go", "run", "set", "make", "name", "thought"]
    for _ in range(800):
        kx, ky = synset_keys(rng.choice(words)), synset_keys(rng.choice(words))
        assert best_wup(kx, ky) == max((wup_from_keys(a, b) for a in kx for b in ky), default=0.0)


def test_best_wup_prunes_without_changing_the_maximum():
    words = ["dog", "cat", "person", "someone", "run", "bank", "light", "give", "green", "good"]
    for x in words:
        for y in words:
            kx, ky = synset_keys(x), synset_keys(y)
            assert best_wup(kx, ky) == max(wup_from_keys(a, b) for a in kx for b in ky), (x, y)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(WUP_WORDS), max_size=4).map(" ".join),
    st.lists(st.sampled_from(WUP_WORDS), max_size=4).map(" ".join),
)
def test_wup_similarity_equals_brute_force_with_multi_path_synsets(a, b):
    assert wup_similarity(a, b) == pytest.approx(reference_wup_similarity(a, b), abs=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(WUP_WORDS), max_size=5).map(" ".join),
    st.lists(st.sampled_from(WUP_WORDS), max_size=5).map(" ".join),
)
def test_wordnet_similarity_fits_the_bound_and_equals_brute_force(a, b):
    with collect_approximations() as cut:
        value = wordnet_similarity(a, b)
    assert not cut
    assert value == pytest.approx(reference_wordnet_similarity(a, b), abs=1e-12)


# --- the long-string rule and the search budgets ------------------------------------


def test_long_cluster_string_is_scored_on_its_first_tokens_and_reported():
    answer = " ".join(["zebra", "piano"] * 60)  # 120 content tokens
    capped = " ".join(answer.split()[:MAX_SIMILARITY_TOKENS]) + " qqxqq"  # "qqxqq" matches nothing
    with collect_approximations() as cut:
        value = wordnet_similarity("zebra", answer)
        assert value == wordnet_similarity("zebra", capped) == 1 / 2
    assert cut == [("zebra", answer), ("zebra", capped)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wordnet_similarity("piano", answer)
    assert any(issubclass(w.category, ApproximationWarning) for w in caught)


def test_strings_within_the_limit_are_not_reported():
    answer = " ".join(["zebra", "piano"] * (MAX_SIMILARITY_TOKENS // 2))
    with collect_approximations() as cut:
        assert wordnet_similarity("zebra piano", answer) == reference_wordnet_similarity(
            "zebra piano", "zebra piano zebra"
        )
    assert not cut


def test_one_megabyte_answer_scores_under_every_similarity():
    answer = "dog " * 250_000
    for name in SIMILARITIES:
        with collect_approximations():
            value = get_similarity(name).best("dog", [answer])
        assert 0.0 <= value <= 1.0, name


def test_exhausted_search_gives_a_flagged_lower_bound(monkeypatch):
    rng = random.Random(3)
    a = " ".join(rng.choice(["dog", "cat", "car"]) for _ in range(9))
    b = " ".join(rng.choice(["dog", "cat", "car"]) for _ in range(9))
    from protoqa_core.similarity import wordnet as sim_module

    sim_module._wordnet_tokens_similarity.cache_clear()
    exact = wordnet_similarity(a, b)
    sim_module._wordnet_tokens_similarity.cache_clear()
    monkeypatch.setattr(pm, "SEARCH_CALL_BUDGET", 3)
    monkeypatch.setattr(pm, "MILP_MAX_PAIRS", 0)
    with collect_approximations() as cut:
        bound = wordnet_similarity(a, b)
    sim_module._wordnet_tokens_similarity.cache_clear()
    assert cut and 0.0 <= bound <= exact


def test_signature_shows_approximations_only_when_there_are_some():
    from protoqa_core.signature import make_signature

    assert "approx" not in make_signature("exact_match", "standard", "zero", 3)
    assert "|approx:2|" in make_signature("exact_match", "standard", "zero", 3, approximated=2)


# --- the fast paths against a straightforward evaluation ----------------------------


def _wup_by_search(a: str, b: str) -> float:
    """Wu-Palmer partition similarity the straightforward way: every group pair weighted by
    the pair-by-pair maximum of NLTK's Wu-Palmer (equal tokens 1), then the partition search."""
    from protoqa_core.similarity.spans import spans_with_synsets
    from protoqa_core.text import content_tokens

    x, y = content_tokens(a), content_tokens(b)
    if not x or not y:
        return 1.0 if not x and not y else 0.0
    if x == y:
        return 1.0
    weights = {}
    for sa, ea, na in spans_with_synsets(x):
        for sb, eb, nb in spans_with_synsets(y):
            w = max(wup_from_keys(k1, k2) for k1 in na for k2 in nb)
            if w > 0:
                weights[(sa, ea, sb, eb)] = w
    for i, tok in enumerate(x):
        for j, other in enumerate(y):
            if tok == other:
                weights[(i, i + 1, j, j + 1)] = 1.0
    if not weights:
        return 0.0
    value, proven = pm.best_partition_alignment_checked(
        len(x), len(y), [pm.SpanPair(*k, w) for k, w in sorted(weights.items())]
    )
    assert proven
    return value


def test_wup_fast_paths_equal_the_search_on_random_word_lists():
    # One side a single token (the closed form), both sides one token, and longer
    # lists on both sides, all bit for bit against the plain evaluation.
    rng = random.Random(11)
    from protoqa_core.similarity import wordnet_wup as sim_module

    for trial in range(400):
        sizes = rng.choice([(1, 1), (1, 2), (2, 1), (1, 5), (6, 1), (2, 3), (3, 2)])
        a = " ".join(rng.choice(FAST_PATH_WORDS) for _ in range(sizes[0]))
        b = " ".join(rng.choice(FAST_PATH_WORDS) for _ in range(sizes[1]))
        if trial % 2:
            sim_module._wup_tokens_similarity.cache_clear()
            sim_module._phrase_wup.cache_clear()
        assert wup_similarity(a, b) == _wup_by_search(a, b), (a, b)


def test_wup_closed_form_covers_equal_tokens_and_collocations():
    for a, b in [
        ("dog", "hot dog"),
        ("hot dog", "dog"),
        ("gum", "chewing gum"),
        ("qwertyuiop", "qwertyuiop car"),
        ("car", "qwertyuiop car qwertyuiop"),
        ("ice cream", "cream"),
        ("dog", "cat dog cat dog cat"),
    ]:
        assert wup_similarity(a, b) == _wup_by_search(a, b), (a, b)
    assert wup_similarity("qwertyuiop", "qwertyuiop car") == 0.5
    assert wup_similarity("car", "qwertyuiop car qwertyuiop") == 1.0 / 3


def test_every_data_line_parses_as_field_by_field():
    # The hypernym pointers found by one pattern against NLTK's field-by-field reading
    # (counted pointers, four fields each), for every synset of every data file.
    wup = WuPalmer(open_wordnet(), walk_table=None)
    wn = get_wordnet()
    checked = 0
    for _pos, fileid in (("n", "data.noun"), ("v", "data.verb"), ("a", "data.adj"), ("r", "data.adv")):
        with open(wn.abspath(fileid), encoding="utf-8") as f:
            for line in f:
                if line.startswith(" "):
                    continue  # the license header
                fields = line.split("|", 1)[0].split()
                at = 4 + 2 * int(fields[3], 16)
                expected = tuple(
                    (fields[at + 3 + 4 * k], int(fields[at + 2 + 4 * k]))
                    for k in range(int(fields[at]))
                    if fields[at + 1 + 4 * k] in ("@", "@i") and fields[at + 4 + 4 * k] == "0000"
                )
                _, parents = wup._synset_record(fields[2], int(fields[0]))
                assert parents == expected, line
                checked += 1
    assert checked == 117_659


def test_tables_from_parents_equal_nltks_breadth_first_search():
    wup = WuPalmer(open_wordnet(), walk_table=None)
    wn = get_wordnet()
    rng = random.Random(12)
    lemmas = rng.sample(sorted(nltk_lemma_offsets(wn)), 400)
    sample = [s for lemma in lemmas for s in wn.synsets(lemma)] + wn.synsets("person") + wn.synsets("Einstein")
    for s in sample:
        name = wup._register(("a" if s.pos() == "s" else s.pos(), s.offset()))
        assert name == s.name()
        expected = {h.name(): d for h, d in nltk_shortest_hypernym_paths(s, False).items()}
        assert wup._distances(name, False) == expected
        assert wup._depths(name) == (s.min_depth(), s.max_depth())
        order = [c for c, _, _, _ in wup._walk(name)[0]]
        assert order == sorted(expected, key=lambda c: (-wn.synset(c).min_depth(), c != name, c))


def test_wup_cluster_maximum_equals_the_plain_maximum():
    # The one-token answers of a cluster scored at once, against the plain maximum over
    # answers, bit for bit; approximated answers are reported the same way.
    from protoqa_core.similarity import best_wup_similarity

    rng = random.Random(13)
    words = FAST_PATH_WORDS + ["the", "a"]
    for _ in range(300):
        prediction = " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 2, 3])))
        answers = [
            " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 1, 2, 3]))) for _ in range(rng.randint(1, 6))
        ]
        plain = max(wup_similarity(prediction, y) for y in answers)
        assert best_wup_similarity(prediction, answers) == plain, (prediction, answers)
    long_answer = " ".join(["zebra", "piano"] * 40)  # over the token limit: reported when scored
    for answers, reported in (
        (["cat", "car", long_answer], True),
        (["dog", "cat", long_answer], False),
        ([long_answer, "cat", "hound"], True),
    ):
        with collect_approximations() as cut:
            value = get_similarity("wordnet_wup").best("dog", answers)
        with collect_approximations():
            assert value == max(wup_similarity("dog", y) for y in answers)
        # as the plain loop: scored (and reported) unless an earlier answer reached 1
        assert cut == ([("dog", long_answer)] if reported else [])


def test_reaches_equals_the_maximum_compared_with_the_level():
    # The metric's decision per cell (does the best similarity exceed 1/2?) against the
    # plain maximum, at that level and at others, for both WordNet similarities.
    from protoqa_core.similarity import ABOVE_HALF

    rng = random.Random(14)
    words = FAST_PATH_WORDS + ["the", "a", "of"]
    levels = (ABOVE_HALF, 0.5, 0.3, 0.9, 1.0)
    for _trial in range(300):
        prediction = " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 2, 3])))
        answers = [
            " ".join(rng.choice(words) for _ in range(rng.choice([1, 1, 1, 2, 3, 4]))) for _ in range(rng.randint(1, 6))
        ]
        for name in ("wordnet", "wordnet_wup"):
            sim = get_similarity(name)
            plain = max(sim.function(prediction, y) for y in answers)
            for level in levels:
                assert sim.reaches(prediction, answers, level) == (plain >= level), (name, prediction, answers, level)


@pytest.mark.slow
def test_walk_file_equals_the_computed_walk_of_every_synset():
    # The file the Wu-Palmer hot path reads, against the walks computed in the process
    # from the data lines (which the tests above check against NLTK), for all 117,659.
    table = WuPalmer(open_wordnet()).walk_table()
    assert table is not None and len(table) == 117_659
    # A WuPalmer of its own computes the walks, so its tables of every synset go with it.
    wup = WuPalmer(open_wordnet(), walk_table=None)
    wn = get_wordnet()
    checked = 0
    for pos, fileid in (("n", "data.noun"), ("v", "data.verb"), ("a", "data.adj"), ("r", "data.adv")):
        with open(wn.abspath(fileid), "rb") as f:
            for line in f:
                if line.startswith(b" "):
                    continue
                key = (pos, int(line[:8]))
                name = wup._register(key)
                assert table.name(key) == name
                assert table.walk(key) == wup._walk(name), key
                checked += 1
    assert checked == 117_659


def test_wup_without_the_walk_file_gives_the_same_values(monkeypatch, tmp_path):
    # A cache folder that cannot be written: walks are computed in the process, same numbers.
    words = ["person", "someone", "dog", "cat", "take", "run", "quick", "happily", "bank", "ice cream"]
    with_file = {(x, y): best_wup(synset_keys(x), synset_keys(y)) for x in words for y in words}
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(blocked))  # a file: no folder can be made in it
    wup = WuPalmer(open_wordnet())
    assert wup.walk_table() is None
    without = {(x, y): wup.best_wup(synset_keys(x), synset_keys(y)) for x in words for y in words}
    assert without == with_file


def test_best_wup_reaches_equals_the_maximum_compared_with_the_level():
    # The bound decides most group pairs; the rest go to the search stopped at the level.
    from protoqa_core.similarity import ABOVE_HALF

    rng = random.Random(15)
    words = FAST_PATH_WORDS + ["run", "quick", "happily", "take", "set", "blue", "eat"]
    groups = [synset_keys(w) for w in words] + [frozenset()]
    for _ in range(400):
        first = rng.choice(groups) | (rng.choice(groups) if rng.random() < 0.3 else frozenset())
        second = rng.choice(groups)
        exact = best_wup(first, second)
        for level in (ABOVE_HALF, 0.5, 0.25, 0.8, 0.9, 1.0, exact):
            assert best_wup_reaches(first, second, level) == (exact >= level), (first, second, level)
