"""NLTK's hypernym tables and Wu-Palmer values, from the data lines without building NLTK's synsets."""

from __future__ import annotations

import itertools

import pytest

from protoqa_core.wordnet.files import WordNetUnavailableError
from protoqa_core.wordnet.lookup import open_wordnet, synset_keys
from protoqa_core.wordnet.synset_tables import SynsetTables, hypernym_pointers, path_lengths, set_tables_from_parents

DOG, CAT, ENTITY = ("n", 2084071), ("n", 2121620), ("n", 1740)
RUN, WALK = ("v", 1926329), ("v", 1904948)


@pytest.fixture(scope="module")
def tables() -> SynsetTables:
    return SynsetTables(open_wordnet())


def test_only_whole_synset_hypernym_pointers_are_followed():
    field = (
        "@ 02083346 n 0000 @i 09999999 s 0000 ~ 01322604 n 0000 + 01234567 v 0101 "
        "@ 00000001 n 0102 #m 08011266 n 0000 | a gloss with @ 12345678 n 0000 in it"
    )
    assert hypernym_pointers(field.split(" | ")[0]) == (("n", 2083346), ("s", 9999999))
    assert hypernym_pointers("") == ()
    # A verb frame "+ 08 00" or a lexical pointer is never taken for a hypernym.
    assert hypernym_pointers("+ 08 00 + 11 00") == ()


def test_two_parents_give_the_least_distance_and_both_depths():
    mins, maxs, dists = {}, {}, {}
    set_tables_from_parents("root", (), mins, maxs, dists)
    set_tables_from_parents("mid", ("root",), mins, maxs, dists)
    set_tables_from_parents("low", ("mid",), mins, maxs, dists)
    set_tables_from_parents("leaf", ("low", "root"), mins, maxs, dists)
    assert (mins["leaf"], maxs["leaf"]) == (1, 3)
    assert dists["leaf"] == {"root": 1, "mid": 2, "low": 1, "leaf": 0}
    assert (mins["root"], maxs["root"], dists["root"]) == (0, 0, {"root": 0})


def test_a_path_through_a_parent_can_be_shorter_than_the_hypernym_distance():
    parents = {"root": (), "mid": ("root",), "low": ("mid",), "leaf": ("low", "root")}
    max_depth = {"root": 0, "mid": 1, "low": 2, "leaf": 3}
    # ``mid`` is 2 hypernym steps up from ``leaf``, and 2 by the path up to root and down again.
    assert path_lengths({"leaf": 0, "low": 1, "mid": 2, "root": 1}, max_depth, parents) == {
        "root": 1,
        "mid": 2,
        "low": 1,
        "leaf": 0,
    }


def test_nltks_values_for_nouns_verbs_and_across_parts_of_speech(tables):
    # NLTK 3's wup_similarity of the same synsets (dog.n.01, cat.n.01, entity.n.01, run.v.01, walk.v.01).
    assert tables.wup_from_keys(DOG, CAT) == pytest.approx(0.8571428571428571)
    assert tables.wup_from_keys(ENTITY, DOG) == pytest.approx(0.2)
    assert tables.wup_from_keys(CAT, CAT) == 1.0
    assert tables.wup_from_keys(DOG, DOG) == pytest.approx(0.9285714285714286)  # two hypernym paths
    assert tables.wup_from_keys(RUN, WALK) == pytest.approx(0.2857142857142857)
    assert tables.wup_from_keys(DOG, RUN) == pytest.approx(0.14285714285714285)  # through the simulated root


def test_a_key_with_no_synset_names_the_data_file(tables):
    with pytest.raises(WordNetUnavailableError, match=r"data\.noun has no synset at offset 5"):
        tables.wup_from_keys(("n", 5), DOG)


def test_values_do_not_depend_on_what_was_asked_before():
    keys = sorted(synset_keys("bank") | synset_keys("run") | synset_keys("good"))[:24]
    pairs = list(itertools.product(keys, repeat=2))
    first = SynsetTables(open_wordnet())
    forward = {pair: first.wup_from_keys(*pair) for pair in pairs}
    second = SynsetTables(open_wordnet())
    backward = {pair: second.wup_from_keys(*pair) for pair in reversed(pairs)}
    assert forward == backward and all(0.0 <= v <= 1.0 for v in forward.values())


@pytest.mark.slow
def test_every_pair_of_some_words_scores_as_nltk_scores_it():
    pytest.importorskip("nltk")
    from protoqa_core.wordnet.nltk_reader import get_wordnet

    wn = get_wordnet()
    tables = SynsetTables(open_wordnet())
    synsets = [s for word in ("dog", "run", "good", "bank", "quickly", "set") for s in wn.synsets(word)]
    for a, b in itertools.product(synsets, repeat=2):
        key_a, key_b = (
            ("a" if a.pos() == "s" else a.pos(), a.offset()),
            ("a" if b.pos() == "s" else b.pos(), b.offset()),
        )
        assert tables.wup_from_keys(key_a, key_b) == (a.wup_similarity(b) or 0.0), (a, b)
