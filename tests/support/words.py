"""Words the WordNet property tests draw from: synonyms, plurals, unrelated nouns, collocations
and a string WordNet does not know; phrases of them, stopwords and two-word WordNet entries; and the
random long phrases of the apps' costliest requests."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

WUP_WORDS = [
    "person",
    "someone",
    "somebody",
    "individual",
    "human",
    "dog",
    "dogs",
    "cat",
    "giraffe",
    "algebra",
    "car",
    "run",
    "running",
    "hot",
    "ice",
    "cream",
    "teeth",
    "brush",
    "the",
    "a",
    "house",
]


FAST_PATH_WORDS = WUP_WORDS + [
    "hot dog",
    "ice cream",
    "chewing gum",
    "gum",
    "chewing",
    "brush teeth",
    "qwertyuiop",
    "new york",
    "york",
    "state",
    "united states",
    "light",
    "bank",
]

WORDNET_WORDS = [
    "dog",
    "dogs",
    "cat",
    "hot",
    "car",
    "cars",
    "gum",
    "chewing",
    "run",
    "running",
    "shower",
    "take",
    "brush",
    "teeth",
    "tooth",
    "age",
    "name",
    "play",
    "house",
    "work",
    "go",
    "home",
    "ice",
    "cream",
    "bun",
    "keys",
    "wallet",
    "phone",
    "coffee",
    "break",
    "fast",
    "breakfast",
    "new",
    "york",
    "hot",
    "water",
    "sun",
    "glasses",
    "sunglasses",
    "high",
    "school",
]


def collocation_words() -> list[str]:
    """The words of 60 two-word WordNet entries, drawn with a fixed seed."""
    import random

    from protoqa_core.wordnet.nltk_reader import get_wordnet, nltk_lemma_offsets

    names = sorted(n for n in nltk_lemma_offsets(get_wordnet()) if n.count("_") == 1 and n.replace("_", "").isalpha())
    return [w for n in random.Random(3).sample(names, 60) for w in n.split("_")]


def wordnet_phrases(max_size: int) -> Any:
    """A hypothesis strategy of phrases of up to ``max_size`` words: :data:`WORDNET_WORDS`, English
    stopwords, and words of two-word WordNet entries (looked up when first drawn)."""
    from hypothesis import strategies as st

    from protoqa_core.text import ENGLISH_STOPWORDS

    token = st.one_of(
        st.sampled_from(WORDNET_WORDS),
        st.sampled_from(sorted(ENGLISH_STOPWORDS)),
        st.deferred(lambda: st.sampled_from(collocation_words())),
    )
    return st.lists(token, max_size=max_size).map(" ".join)


def random_phrases(seed: int = 0) -> Callable[[int], str]:
    """A function of ``n`` that draws phrases of ``n`` words from 18 common ones, seeded: the long answers of
    the costliest requests the apps' caps let through.

    >>> phrase = random_phrases(0)
    >>> len(phrase(3).split())
    3
    """
    rng = random.Random(seed)
    words = "dog cat car house tree bird fish book door road water fire table chair apple bread milk egg".split()
    return lambda n: " ".join(rng.choice(words) for _ in range(n))
