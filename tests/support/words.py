"""Words the WordNet property tests draw from: synonyms, plurals, unrelated nouns, collocations
and a string WordNet does not know."""

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
