"""NLTK's Wu-Palmer similarity of WordNet synsets, from tables built once per synset.

NLTK's ``Synset.wup_similarity`` recomputes hypernym closures on every call; :class:`WuPalmer`
builds each synset's tables once (:mod:`protoqa_core.wordnet.synset_tables`) and reads the walks
from the walk file where ``protoqa-eval prepare`` built it (docs/protoqa-metric.md). The
functions below use one :class:`WuPalmer` of this process's WordNet, made on first use.
"""

from __future__ import annotations

import logging
import threading
from itertools import groupby
from typing import Literal, Optional, Union

from .lookup import open_wordnet
from .reader import SynsetKey, WordNetReader
from .sense_search import Senses, bound_reached, search_pairs
from .synset_tables import (
    CODE_POS,
    POS_CODE,
    ROOT,
    KeyWalk,
    SynsetTables,
    WalkStep,
    first_among_equals,
    hypernym_pointers,
    path_lengths,
    set_tables_from_parents,
)
from .walk_file import open_walk_file, walk_file_path
from .walk_table import WalkTable

logger = logging.getLogger(__name__)

__all__ = [
    "WuPalmer",
    "wup_from_keys",
    "best_wup",
    "best_wup_reaches",
]

WalkTableChoice = Union[WalkTable, None, Literal["find"]]


class WuPalmer(SynsetTables):
    """NLTK's Wu-Palmer similarity on the WordNet of ``reader``, with every table it builds.

    ``walk_table``: ``"find"`` opens this WordNet's walk file on first use (:meth:`walk_table`), a
    :class:`~protoqa_core.wordnet.walk_table.WalkTable` is read as given, ``None`` computes every
    walk in the process; the values are the same either way.

    >>> from protoqa_core.wordnet.lookup import synset_keys
    >>> wup = WuPalmer(open_wordnet(), walk_table=None)
    >>> round(wup.best_wup(synset_keys("dog"), synset_keys("cat")), 4)
    0.8571
    """

    def __init__(self, reader: WordNetReader, walk_table: WalkTableChoice = "find") -> None:
        super().__init__(reader)
        self._walk_file_lock = threading.Lock()
        self._walk_file_state: WalkTableChoice = walk_table
        self._walk_file_damaged = False
        self._key_walks: dict[SynsetKey, KeyWalk] = {}
        self._senses_cache: dict[frozenset[SynsetKey], Senses] = {}
        # The same tables for the walks computed in the process, each synset known by its key
        # code (see _coded_walk): parents, minimum and maximum depth, hypernym distances.
        self._coded_parents: dict[int, tuple[int, ...]] = {}
        self._coded_min_depth: dict[int, int] = {}
        self._coded_max_depth: dict[int, int] = {}
        self._coded_distances: dict[int, dict[int, int]] = {}

    # --- walks computed in the process: synsets known by key codes, named where needed ---

    def _coded_register(self, code: int) -> None:
        """:meth:`_register` for a synset known by its key code, without naming it (a name costs an index look-up)."""
        if code in self._coded_distances:
            return
        _, rest = self._line_fields(CODE_POS[code >> 32], code & 0xFFFFFFFF)
        # Satellite adjectives are filed under "a", as synset_keys() gives them.
        parents = tuple(POS_CODE["a" if p == "s" else p] << 32 | o for p, o in hypernym_pointers(rest[-1]))
        for parent in parents:  # recursion depth is the synset's depth (under 20)
            self._coded_register(parent)
        set_tables_from_parents(code, parents, self._coded_min_depth, self._coded_max_depth, self._coded_distances)
        self._coded_parents[code] = parents

    def _coded_name(self, code: int) -> str:
        return self._record((CODE_POS[code >> 32], code & 0xFFFFFFFF))[0]

    def _coded_walk(self, code: int) -> tuple[tuple[WalkStep, ...], int]:
        """:meth:`_walk` of a synset known by its key code, each step's synset as its key code.

        Only synsets that tie on minimum depth, and those of depth 0 (beside the root), are named.
        """
        self._coded_register(code)
        dist = self._coded_distances[code]
        max_depth = self._coded_max_depth
        min_depth = self._coded_min_depth
        paths = path_lengths(dist, max_depth, self._coded_parents)
        runs = [list(run) for _, run in groupby(sorted(dist, key=min_depth.__getitem__, reverse=True), min_depth.get)]
        # A run of equal minimum depth goes by name.
        order = [c for run in runs for c in (sorted(run, key=self._coded_name) if len(run) > 1 else run)]
        first_among_equals(order, code, min_depth)
        steps = tuple(
            (c, max_depth[c] + 1, paths[c], c != code and min_depth[c] == 0 and ROOT < self._coded_name(c))
            for c in order
        )
        return steps, max(dist.values()) + 1

    def _key_walk(self, key: SynsetKey) -> KeyWalk:
        """A synset's walk, root path and the synsets on its walk: from the walk file when there is one, else computed."""
        found = self._key_walks.get(key)
        if found is None:
            table = self.walk_table()
            if table is None:
                # Without the file every walk of this object is computed, and its synsets
                # are known by key codes, not names: the same identities in every walk.
                steps, root_path = self._coded_walk(POS_CODE[key[0]] << 32 | key[1])
            else:
                try:
                    walk = None if self._walk_file_damaged else table.walk(key)
                except ValueError as exc:
                    # The file's walks and those computed by name name synsets alike, so the run goes on
                    # with the same values.
                    self._walk_file_damaged = True
                    logger.warning(
                        "%s: this run computes the walks it needs (rebuild the file with `protoqa-eval prepare`)", exc
                    )
                    walk = None
                steps, root_path = walk if walk is not None else self._walk(self._register(key))
            found = self._key_walks[key] = (steps, root_path, frozenset(step[0] for step in steps))
        return found

    def walk_table(self) -> Optional[WalkTable]:
        """The walk file of this WordNet, opened on first use, or None while there is none.

        Without it the process computes the walks it needs, and one warning says how to build it.

        >>> WuPalmer(open_wordnet(), walk_table=None).walk_table() is None
        True
        """
        if self._walk_file_state == "find":
            with self._walk_file_lock:
                if self._walk_file_state == "find":
                    table: Optional[WalkTable] = None
                    path = None
                    try:
                        path = walk_file_path(self._reader)
                        table = open_walk_file(path)
                        if table is None:
                            logger.warning(
                                "no Wu-Palmer walk file at %s: this run computes the walks it needs "
                                "(build the file once with `protoqa-eval prepare`)",
                                path,
                            )
                    except (OSError, ValueError) as exc:
                        logger.warning(
                            "the Wu-Palmer walk file %s cannot be read (%s): this run computes the walks it "
                            "needs (rebuild the file with `protoqa-eval prepare`)",
                            path,
                            exc,
                        )
                    self._walk_file_state = table
        return self._walk_file_state

    # --- groups of synsets --------------------------------------------------------------

    def _senses(self, keys: frozenset[SynsetKey]) -> Senses:
        found = self._senses_cache.get(keys)
        if found is None:
            if len(self._senses_cache) >= 200_000:  # keep memory bounded; a miss only rebuilds from the tables
                self._senses_cache.clear()
            found = self._senses_cache[keys] = Senses(keys, self._key_walk)
        return found

    def best_wup(self, first: frozenset[SynsetKey], second: frozenset[SynsetKey]) -> float:
        """The best Wu-Palmer over the pairs of two groups of synsets; see :func:`best_wup`."""
        if not first or not second:
            return 0.0
        senses = self._senses_cache
        mine = senses.get(first) or self._senses(first)
        other = senses.get(second) or self._senses(second)
        found, _ = bound_reached(mine, other)
        if found is not None:
            return found
        return search_pairs(mine, other, first, second, 1.0)

    def best_wup_reaches(self, first: frozenset[SynsetKey], second: frozenset[SynsetKey], level: float) -> bool:
        """Whether ``best_wup(first, second) >= level``; see :func:`best_wup_reaches`."""
        if not first or not second:
            return 0.0 >= level
        senses = self._senses_cache
        mine = senses.get(first) or self._senses(first)
        other = senses.get(second) or self._senses(second)
        found, bound = bound_reached(mine, other)
        if found is not None:
            return found >= level
        if bound < level:
            return False
        return search_pairs(mine, other, first, second, level) >= level


_lock = threading.Lock()
_shared: Optional[WuPalmer] = None


def _wu_palmer() -> WuPalmer:
    """The :class:`WuPalmer` of this process's WordNet (:func:`~protoqa_core.wordnet.lookup.open_wordnet`),
    made on first use."""
    global _shared
    found = _shared
    if found is None:
        with _lock:
            if _shared is None:
                _shared = WuPalmer(open_wordnet())
            found = _shared
    return found


def wup_from_keys(first: SynsetKey, second: SynsetKey) -> float:
    """NLTK's ``first.wup_similarity(second)`` (0.0 where NLTK gives None), from cached tables.

    NLTK's subsumer is the common hypernym of greatest *minimum* depth (ties by name, the first
    synset itself first): a synset with several hypernym paths scores below 1 with itself.

    >>> from protoqa_core.wordnet.lookup import synset_from_key, synset_keys
    >>> person = min(k for k in synset_keys("person") if synset_from_key(k).name() == "person.n.01")
    >>> round(wup_from_keys(person, person), 4)
    0.8571
    """
    return (_shared or _wu_palmer()).wup_from_keys(first, second)


def best_wup(first: frozenset[SynsetKey], second: frozenset[SynsetKey]) -> float:
    """``max(wup_from_keys(x, y) for x in first for y in second)``, 0.0 for none.

    Most group pairs are settled by :func:`bound_reached`; the others by the bounded search of
    :mod:`protoqa_core.wordnet.sense_search`, one walk down each synset's candidate subsumers.

    >>> from protoqa_core.wordnet.lookup import synset_keys
    >>> best_wup(synset_keys("dog"), synset_keys("dog")) == max(
    ...     wup_from_keys(x, y) for x in synset_keys("dog") for y in synset_keys("dog"))
    True
    """
    return (_shared or _wu_palmer()).best_wup(first, second)


def best_wup_reaches(first: frozenset[SynsetKey], second: frozenset[SynsetKey], level: float) -> bool:
    """Whether ``best_wup(first, second) >= level``.

    Decided by :func:`bound_reached` where it suffices, else by :func:`best_wup`'s search stopped at the level.

    >>> from protoqa_core.wordnet.lookup import synset_keys
    >>> best_wup_reaches(synset_keys("dog"), synset_keys("cat"), 0.5)
    True
    >>> best_wup_reaches(synset_keys("dog"), synset_keys("run"), 0.5)
    False
    """
    return (_shared or _wu_palmer()).best_wup_reaches(first, second, level)
