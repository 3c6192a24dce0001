"""The WordNet groups a token sequence offers: every contiguous group WordNet knows, found without
looking up groups that cannot start a collocation, and the index of them by token and by synset."""

from __future__ import annotations

import random

from protoqa_core.similarity.spans import equal_token_pairs, span_index, spans_with_synsets
from protoqa_core.wordnet.lookup import max_lemma_tokens, synset_keys
from tests.support.words import FAST_PATH_WORDS


def _every_known_group(tokens: tuple[str, ...]) -> list[tuple[int, int, frozenset]]:
    """Every group of at most the longest WordNet entry's length, looked up one by one."""
    found = []
    for start in range(len(tokens)):
        for end in range(start + 1, min(len(tokens), start + max_lemma_tokens()) + 1):
            keys = synset_keys(" ".join(tokens[start:end]))
            if keys:
                found.append((start, end, keys))
    return found


def test_the_groups_are_every_group_wordnet_knows_in_order():
    rng = random.Random(51)
    words = [w for phrase in FAST_PATH_WORDS for w in phrase.split()] + ["of", "the", "a"]
    for _ in range(200):
        tokens = tuple(rng.choice(words) for _ in range(rng.randint(0, 6)))
        assert list(spans_with_synsets(tokens)) == _every_known_group(tokens), tokens


def test_collocations_and_words_wordnet_does_not_know():
    groups = {(start, end): keys for start, end, keys in spans_with_synsets(("chewing", "gum"))}
    assert set(groups) == {(0, 1), (0, 2), (1, 2)}
    assert groups[(0, 2)] == synset_keys("chewing gum") and groups[(1, 2)] == synset_keys("gum")
    assert spans_with_synsets(("qwertyuiop", "zxcvbnm")) == ()
    assert spans_with_synsets(()) == ()
    # Three words of which the last two are an entry: the first word starts none with them.
    assert [(s, e) for s, e, _ in spans_with_synsets(("red", "ice", "cream"))] == [(0, 1), (1, 2), (1, 3), (2, 3)]


def test_the_index_holds_every_position_of_a_token_and_every_span_of_a_synset():
    tokens = ("hot", "dog", "qwertyuiop", "dog")
    index = span_index(tokens)
    assert index.token_positions == {"hot": (0,), "dog": (1, 3), "qwertyuiop": (2,)}
    for key in synset_keys("hot dog"):
        assert (0, 2) in index.by_synset[key]
    for key in synset_keys("dog"):
        assert {(1, 2), (3, 4)} <= set(index.by_synset[key])
    spans = {span for spans in index.by_synset.values() for span in spans}
    assert spans == {(s, e) for s, e, _ in spans_with_synsets(tokens)}  # an unknown word offers no span


def test_equal_tokens_pair_every_position_with_every_position():
    left, right = span_index(("dog", "cat", "dog")), span_index(("cat", "dog", "qwertyuiop"))
    shared = left.token_positions.keys() & right.token_positions.keys()
    assert sorted(equal_token_pairs(left, right, shared)) == [(0, 1, 1, 2), (1, 2, 0, 1), (2, 3, 1, 2)]
    assert list(equal_token_pairs(left, right, [])) == []
