"""Bounded similarities: the long-string rule, search budgets, and Wu-Palmer as the reference
computes it."""

from __future__ import annotations

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
        if get_similarity(name).per_question is not None:
            continue  # scores whole questions, never a string pair: bounded by the encoder's own caps
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


# --- hypernym tables and walks against NLTK; the metric's decision per cell ----------


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
        assert (wup._min_depth[name], wup._max_depth[name]) == (s.min_depth(), s.max_depth())
        order = [c for c, _, _, _ in wup._walk(name)[0]]
        assert order == sorted(expected, key=lambda c: (-wn.synset(c).min_depth(), c != name, c))


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
