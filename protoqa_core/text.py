"""String handling shared by every similarity: prediction clean-up, tokens, stopwords.

The stopwords are the 179 words NLTK's corpus shipped when ProtoQA was published, written out:
newer NLTK data changed the list (and WordNet scores with it), and offline machines cannot download it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "ENGLISH_STOPWORDS",
    "MAX_PREDICTION_CHARS",
    "normalize_prediction",
    "normalize_unicode",
    "content_tokens",
]

MAX_PREDICTION_CHARS = 50

ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours
    yourself yourselves he him his himself she she's her hers herself it it's its
    itself they them their theirs themselves what which who whom this that that'll
    these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in
    out on off over under again further then once here there when where why how all
    any both each few more most other some such no nor not only own same so than too
    very s t can will just don don't should should've now d ll m o re ve y ain aren
    aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven
    haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't
    shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
    """.split()
)
assert len(ENGLISH_STOPWORDS) == 179, len(ENGLISH_STOPWORDS)

# Words made of letters only, separated by single spaces, come out of the Treebank
# tokenizer unchanged except for the contractions it splits ("cannot" -> "can not");
# for them str.split() gives the same tokens about 50x faster. The tests compare both
# paths on every answer string of the data and on random strings.
_PLAIN_WORDS = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*")
_SPLIT_BY_TREEBANK = frozenset({"cannot", "gimme", "gonna", "gotta", "lemme", "wanna"})


# Zero-width characters that NFKC keeps but that no reader sees: space, non-joiner, joiner,
# word joiner, byte-order mark / zero-width no-break space.
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")


def normalize_unicode(text: str) -> str:
    """``text`` in Unicode NFKC with the zero-width characters removed.

    One spelling for what reads the same, for predictions and cluster strings alike.

    >>> normalize_unicode("cafe\u0301") == normalize_unicode("caf\u00e9") == "caf\u00e9"
    True
    >>> normalize_unicode("\uff43\uff41\uff54"), normalize_unicode("ca\u200dt")
    ('cat', 'cat')
    """
    if text.isascii():
        return text
    return _ZERO_WIDTH.sub("", unicodedata.normalize("NFKC", text))


def normalize_prediction(answer: str, max_chars: int = MAX_PREDICTION_CHARS) -> str:
    """Unicode-normalize a predicted answer, lower-case it, cut it to ``max_chars`` characters and strip it.

    >>> normalize_prediction("  Brush Teeth ")
    'brush teeth'
    >>> normalize_prediction("\uff22rush")
    'brush'
    """
    return normalize_unicode(answer).lower()[:max_chars].strip()


@lru_cache(maxsize=50_000)
def content_tokens(text: str) -> tuple[str, ...]:
    """Treebank-style word tokens of ``text`` with the English stopwords removed.

    >>> content_tokens("the chewing gum")
    ('chewing', 'gum')
    """
    if _PLAIN_WORDS.fullmatch(text) and _SPLIT_BY_TREEBANK.isdisjoint(text.lower().split()):
        tokens = text.split()
    else:
        # The Treebank rules (and the regex package) load for the first string that needs them.
        from .treebank import treebank_tokens

        tokens = treebank_tokens(text)
    return tuple(tok for tok in tokens if tok not in ENGLISH_STOPWORDS)
