"""WordNet look-ups for the similarities: the reader of this process, the synsets of a phrase
and the lemma tables that bound which look-ups can succeed."""

from __future__ import annotations

import os
import threading
from typing import Optional

from .cache import LemmaTables, lemma_tables
from .files import WordNetUnavailableError, find_wordnet
from .reader import SynsetKey, WordNetFormatError, WordNetReader

__all__ = [
    "open_wordnet",
    "wordnet_version",
    "synset_keys",
    "synset_from_key",
    "max_lemma_tokens",
    "may_start_collocation",
]

_lock = threading.Lock()
_reader: Optional[WordNetReader] = None
_synset_cache: dict[str, frozenset[SynsetKey]] = {}
#: Phrases whose synsets :func:`synset_keys` remembers; past this the memo starts again empty
#: (a few hundred bytes an entry: about 10 MB), so memory stays flat however many strings a run sees.
SYNSET_CACHE = 1 << 15
_lemma_tables: Optional[LemmaTables] = None


def open_wordnet(wordnet_dir: Optional[str | os.PathLike] = None, download: bool = True) -> WordNetReader:
    """The WordNet 3.0 reader of this process, finding WordNet on first use (:func:`~protoqa_core.wordnet.files.find_wordnet`).

    >>> open_wordnet().version()
    '3.0'
    """
    global _reader
    if _reader is None:
        with _lock:
            if _reader is None:
                _reader = WordNetReader(find_wordnet(wordnet_dir, download))
    return _reader


def wordnet_version() -> str:
    """The version string of the WordNet database, e.g. ``"3.0"``.

    >>> wordnet_version()
    '3.0'
    """
    try:
        return open_wordnet().version()
    except WordNetFormatError as exc:
        raise WordNetUnavailableError(str(exc)) from None


def synset_keys(phrase: str) -> frozenset[SynsetKey]:
    """The synsets WordNet gives for ``phrase``, as ``(data file, offset)`` keys.

    Exactly NLTK's ``wordnet.synsets(phrase.replace(" ", "_"))``, satellite adjectives filed under ``"a"``.

    >>> sorted(synset_keys("dogs"))[:2]
    [('n', 2084071), ('n', 2710044)]
    """
    found = _synset_cache.get(phrase)
    if found is None:
        found = open_wordnet().synset_keys(phrase.replace(" ", "_"))
        if len(_synset_cache) >= SYNSET_CACHE:
            _synset_cache.clear()
        _synset_cache[phrase] = found
    return found


def synset_from_key(key: SynsetKey):
    """The NLTK ``Synset`` for a key from :func:`synset_keys` (needs NLTK).

    >>> synset_from_key(min(synset_keys("dog"))).pos() in {"n", "v"}
    True
    """
    from .nltk_reader import get_wordnet  # NLTK's objects only when asked for: scoring never needs them

    return get_wordnet().synset_from_pos_and_offset(*key)


def _tables() -> LemmaTables:
    global _lemma_tables
    if _lemma_tables is None:
        tables = lemma_tables(open_wordnet())
        with _lock:
            if _lemma_tables is None:
                _lemma_tables = tables
    return _lemma_tables


def max_lemma_tokens() -> int:
    """The most space-separated words a WordNet look-up can match (longest collocation): bounds the spans looked up.

    >>> max_lemma_tokens() >= 2
    True
    """
    return _tables().max_tokens


def may_start_collocation(words: str) -> bool:
    """Whether some multi-word WordNet entry starts with ``words`` followed by more words.

    Morphology only rewrites the end of a look-up, so a group of ``k`` tokens can match a
    collocation only if its first ``k - 1`` tokens begin one literally (up to case).

    >>> may_start_collocation("chewing"), may_start_collocation("qwertyuiop")
    (True, False)
    """
    return words.lower().replace(" ", "_") in _tables().prefixes
