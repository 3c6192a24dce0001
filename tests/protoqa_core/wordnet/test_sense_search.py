"""The best Wu-Palmer of two synset groups, by one bound or a pruned search, equals scoring every pair."""

from __future__ import annotations

import itertools
import math

import pytest

from protoqa_core.wordnet.lookup import open_wordnet, synset_keys
from protoqa_core.wordnet.sense_search import Senses, bound_reached, search_pairs
from protoqa_core.wordnet.synset_tables import SynsetTables
from protoqa_core.wordnet.walk_file import open_walk_file, walk_file_path

WORDS = ["dog", "cat", "good", "bank", "quickly", "person", "blue", "eat", "ice cream", "happily"]


@pytest.fixture(scope="module")
def key_walk():
    """Each synset's walk from the walk file, as the Wu-Palmer object reads it."""
    table = open_walk_file(walk_file_path(open_wordnet()))
    if table is None:
        pytest.skip("no walk file (protoqa-eval prepare builds it)")

    def walk(key):
        found = table.walk(key)
        assert found is not None, key
        steps, root_path = found
        return steps, root_path, frozenset(step[0] for step in steps)

    return walk


@pytest.fixture(scope="module")
def every_pair():
    """The best Wu-Palmer of two groups by scoring each pair as NLTK does."""
    tables = SynsetTables(open_wordnet())

    def best(first, second):
        return max((tables.wup_from_keys(a, b) for a, b in itertools.product(first, second)), default=0.0)

    return best


@pytest.fixture(scope="module")
def groups():
    return [synset_keys(word) for word in WORDS]


@pytest.mark.parametrize("i", range(len(WORDS)))
def test_the_search_equals_every_pair(key_walk, every_pair, groups, i):
    first = groups[i]
    mine = Senses(first, key_walk)
    for second in groups + [first | groups[0]]:
        exact = every_pair(first, second)
        assert search_pairs(mine, Senses(second, key_walk), first, second, math.inf) == exact, (WORDS[i], second)


@pytest.mark.parametrize("i", range(len(WORDS)))
def test_the_bound_is_never_beaten_and_settles_only_the_exact_best(key_walk, every_pair, groups, i):
    first = groups[i]
    settled = 0
    for second in groups:
        value, bound = bound_reached(Senses(first, key_walk), Senses(second, key_walk))
        exact = every_pair(first, second)
        assert bound >= exact
        if value is not None:
            assert value == exact
            settled += 1
    assert settled  # at least the group with itself


def test_the_search_stops_once_a_pair_reaches_enough(key_walk, every_pair):
    first, second = synset_keys("dog"), synset_keys("cat")
    exact = every_pair(first, second)
    for enough in (0.1, 0.5, exact):
        found = search_pairs(Senses(first, key_walk), Senses(second, key_walk), first, second, enough)
        assert enough <= found <= exact


def test_a_group_knows_its_nouns_root_paths_and_who_holds_each_hypernym(key_walk):
    keys = synset_keys("blue")
    senses = Senses(keys, key_walk)
    ordered = sorted(keys)
    assert [key for key, _, _ in senses.walks] == ordered
    assert senses.noun_mask == sum(1 << i for i, key in enumerate(ordered) if key[0] == "n")
    assert senses.root_any == min((length, i) for i, length in enumerate(senses.root_paths))
    assert senses.root_non_noun[0] == min(r for r, key in zip(senses.root_paths, ordered, strict=True) if key[0] != "n")
    for hypernym, (mask, pairs, shortest) in senses.holders.items():
        assert mask == sum(1 << i for i, _ in pairs) and shortest == pairs[0][1] == senses.shortest[hypernym][0]
        assert [length for _, length in pairs] == sorted(length for _, length in pairs)
    assert senses.hypernyms == frozenset(senses.holders)


def test_groups_of_nouns_only_have_no_simulated_root(key_walk):
    assert Senses(synset_keys("ice cream"), key_walk).root_non_noun is None
