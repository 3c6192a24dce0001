"""NLTK's Wu-Palmer similarity of WordNet synsets, from tables built once per synset.

NLTK's ``Synset.wup_similarity`` recomputes hypernym closures by breadth-first search on
every call (and re-reads a file header twice per call). :class:`WuPalmer` computes the
same value from per-synset tables (hypernym links, depths, hypernym distances, and each
synset's *walk*: its candidate subsumers in the order NLTK prefers them), each built
once, and caches every pair. One :class:`WuPalmer` holds every table of one WordNet;
the functions below use the one of this process's WordNet, made on first use.

The walks of every synset are also kept in a per-installation file (see
:mod:`protoqa_core.wordnet.walk_table`), read through a memory map, so that a run does not
compute them again. It is built by an explicit step, :func:`prepare_wordnet` (run by
``scripts/setup.sh`` and ``protoqa-eval prepare``); a run that finds none computes the
walks it needs in its own process (the same values) and says once, on stderr, how to
build the file. Nothing is started in the background. Synsets are found by
:mod:`protoqa_core.wordnet.lookup`.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal, Optional, TypeVar, Union

from .cache import table_path
from .files import REQUIRED_FILES, WordNetUnavailableError, is_wordnet_db
from .lookup import max_lemma_tokens, open_wordnet
from .reader import SynsetKey, WordNetFormatError, WordNetReader
from .walk_table import MAGIC, Walk, WalkTable, write_walk_table

logger = logging.getLogger(__name__)

__all__ = [
    "WuPalmer",
    "wup_from_keys",
    "best_wup",
    "best_wup_reaches",
    "prepare_wordnet",
]

# How long a build waits for another process's build of the same file (one takes about
# 12 s of CPU) before it gives up with an error.
_LOCK_WAIT_SECONDS = 600.0

_ROOT = "*ROOT*"  # NLTK's simulated root, which joins the verb (and adjective) trees

# A hypernym or instance-hypernym pointer between whole synsets ("0000"), as it stands
# in a data line's pointer list: symbol, target offset, target part of speech, source/
# target. Only a pointer symbol can be "@" or "@i" (offsets are digits, parts of speech
# letters, source/target hex digits, verb frames "+ NN NN"), so a match is a pointer field.
_HYPERNYM_POINTER = re.compile(r" @i? (\d{8}) ([nvasr]) 0000(?= |$)")

WalkTableChoice = Union[WalkTable, None, Literal["find"]]

# A synset on a walk: its NLTK name (from the walk file, or :meth:`WuPalmer._walk`) or its
# key code (from :meth:`WuPalmer._coded_walk`); one object uses one kind throughout.
_Id = Union[str, int]
_Step = tuple[_Id, int, int, bool]  # (synset, depth, path length, to root), as in Walk
_KeyWalk = tuple[tuple[_Step, ...], int, frozenset[_Id]]  # steps, root path, the synsets on them

_POS_CODE = {"n": 0, "v": 1, "a": 2, "r": 3}
_CODE_POS = "nvar"


def _hypernym_pointers(pointers: str) -> tuple[tuple[str, int], ...]:
    """The hypernym and instance-hypernym pointers of a data line's pointer field, as
    ``(part of speech, offset)``: NLTK's hypernyms() follow only those between whole synsets."""
    return tuple((target_pos, int(target)) for target, target_pos in _HYPERNYM_POINTER.findall(" " + pointers))


_Node = TypeVar("_Node", str, int)


def _set_tables_from_parents(
    node: _Node,
    parents: tuple[_Node, ...],
    min_depth: dict[_Node, int],
    max_depth: dict[_Node, int],
    distances_by_node: dict[_Node, dict[_Node, int]],
) -> None:
    """Record ``node``'s depths and hypernym distances, following from its parents' (recorded first).

    NLTK's ``min_depth``/``max_depth`` are one more than the least/greatest of the parents',
    and its ``_shortest_hypernym_paths`` distance to an ancestor is one more than the least
    of the parents' distances to it (the breadth-first search NLTK runs).

    >>> mins, maxs, dists = {"r": 0}, {"r": 0}, {"r": {"r": 0}}
    >>> _set_tables_from_parents("a", ("r",), mins, maxs, dists)
    >>> mins["a"], maxs["a"], dists["a"]
    (1, 1, {'r': 1, 'a': 0})
    """
    if not parents:
        min_depth[node] = max_depth[node] = 0
        distances = {node: 0}
    else:
        min_depth[node] = 1 + min(min_depth[p] for p in parents)
        max_depth[node] = 1 + max(max_depth[p] for p in parents)
        distances = {c: d + 1 for c, d in distances_by_node[parents[0]].items()}
        for p in parents[1:]:
            for c, d in distances_by_node[p].items():
                if d + 1 < distances.get(c, d + 2):
                    distances[c] = d + 1
        distances[node] = 0
    distances_by_node[node] = distances


def _path_lengths(
    dist: dict[_Node, int], max_depth: dict[_Node, int], parents_by_node: dict[_Node, tuple[_Node, ...]]
) -> dict[_Node, int]:
    """NLTK's ``shortest_path_distance`` from a synset to each of its hypernyms (``dist``: its
    hypernym distances).

    The path goes up from the synset to some common hypernym and down to the hypernym, so it
    is the direct distance or one more than the path to a parent of it; parents have lower
    max depth, so they come first.

    >>> _path_lengths({"s": 0, "p": 1, "r": 1}, {"r": 0, "p": 1, "s": 2}, {"r": (), "p": ("r",), "s": ("p", "r")})
    {'r': 1, 'p': 1, 's': 0}
    """
    paths: dict[_Node, int] = {}
    for c in sorted(dist, key=max_depth.__getitem__):
        length = dist[c]
        for parent in parents_by_node[c]:
            if paths[parent] + 1 < length:
                length = paths[parent] + 1
        paths[c] = length
    return paths


class WuPalmer:
    """NLTK's Wu-Palmer similarity on the WordNet of ``reader``, with every table it builds.

    The tables grow as synsets are scored (bounded where they grow with the pairs
    scored); dropping the object drops them all. ``walk_table`` says where walks come
    from: ``"find"`` (the default) opens this WordNet's walk file on first use, if
    :func:`prepare_wordnet` has built it (see :meth:`walk_table`); a
    :class:`~protoqa_core.wordnet.walk_table.WalkTable` is read as given; ``None`` computes
    every walk in the process. The values are the same either way.

    >>> from protoqa_core.wordnet.lookup import synset_keys
    >>> wup = WuPalmer(open_wordnet(), walk_table=None)
    >>> round(wup.best_wup(synset_keys("dog"), synset_keys("cat")), 4)
    0.8571
    """

    def __init__(self, reader: WordNetReader, walk_table: WalkTableChoice = "find") -> None:
        self._reader = reader
        self._walk_file_lock = threading.Lock()
        self._walk_file_state: WalkTableChoice = walk_table
        # synset name -> its hypernyms' names, NLTK's min_depth() and max_depth(), and its
        # distance to each hypernym (and itself), with and without the simulated root
        self._parents: dict[str, tuple[str, ...]] = {_ROOT: ()}
        self._min_depth: dict[str, int] = {_ROOT: 0}
        self._max_depth: dict[str, int] = {_ROOT: 0}
        self._distances_by_name: dict[str, dict[str, int]] = {_ROOT: {_ROOT: 0}}
        self._distances_with_root: dict[str, dict[str, int]] = {_ROOT: {_ROOT: 0}}
        # NLTK's preference among common hypernyms: greatest minimum depth first, then by name
        self._order_key: dict[str, tuple[int, str]] = {_ROOT: (0, _ROOT)}
        self._records: dict[SynsetKey, tuple[str, tuple[SynsetKey, ...]]] = {}
        self._name_by_key: dict[SynsetKey, str] = {}
        self._order_cache: dict[str, tuple[str, ...]] = {}
        self._walk_cache: dict[str, Walk] = {}
        self._key_walks: dict[SynsetKey, _KeyWalk] = {}
        self._wup_cache: dict[tuple[SynsetKey, SynsetKey], float] = {}
        self._path_cache: dict[tuple[str, str, bool], Optional[int]] = {}
        self._senses_cache: dict[frozenset[SynsetKey], _Senses] = {}
        # The same tables for the walks computed in the process, each synset known by its key
        # code (see _coded_walk): parents, minimum and maximum depth, hypernym distances.
        self._coded_parents: dict[int, tuple[int, ...]] = {}
        self._coded_min_depth: dict[int, int] = {}
        self._coded_max_depth: dict[int, int] = {}
        self._coded_distances: dict[int, dict[int, int]] = {}

    # --- the tables of one synset, from its data line ----------------------------------

    def _data_line(self, pos: str, offset: int) -> str:
        """The line of a WordNet data file at a byte offset."""
        try:
            return self._reader.data_line(pos, offset)
        except WordNetFormatError as exc:
            raise WordNetUnavailableError(str(exc)) from None

    def _synset_record(self, pos: str, offset: int) -> tuple[str, tuple[tuple[str, int], ...]]:
        """NLTK's name of a synset and its hypernym and instance-hypernym pointers.

        Parsed from the data line as NLTK's reader parses it, without building the
        ``Synset`` (its glosses, lemmas and sense keys are most of the cost).
        """
        line_pos, rest = self._line_fields(pos, offset)
        first_lemma = rest[0]
        if first_lemma.endswith(")") and "(" in first_lemma:  # a syntactic marker, as "(a)"
            first_lemma = first_lemma[: first_lemma.rindex("(")]
        first_lemma = first_lemma.lower()
        sense = self._reader.sense_number(first_lemma, line_pos, offset)
        name = f"{first_lemma}.{line_pos}.{sense:02d}"
        return name, _hypernym_pointers(rest[-1])

    def _line_fields(self, pos: str, offset: int) -> tuple[str, list[str]]:
        """A synset's type (``s`` for satellites) and its data line's fields from the first
        lemma on: the lemmas and their lexical ids, then the rest (pointers and frames) in one."""
        head = self._data_line(pos, offset).split("|", 1)[0].split(" ", 4)
        return head[2], head[4].split(" ", 2 * int(head[3], 16))

    def _record(self, key: SynsetKey) -> tuple[str, tuple[SynsetKey, ...]]:
        found = self._records.get(key)
        if found is None:
            name, parents = self._synset_record(*key)
            # Satellite adjectives are filed under "a", as synset_keys() gives them.
            found = self._records[key] = (name, tuple(("a" if p == "s" else p, o) for p, o in parents))
        return found

    def _register(self, key: SynsetKey) -> str:
        """Record the hypernym links, depths and hypernym distances of a synset and all its
        ancestors (:func:`_set_tables_from_parents`); return its name."""
        name = self._name_by_key.get(key)
        if name is not None:
            return name
        name, parent_keys = self._record(key)
        if name not in self._parents:
            # Recursion depth is the synset's depth in the hypernym graph (under 20).
            parents = tuple(self._register(p) for p in parent_keys)
            _set_tables_from_parents(name, parents, self._min_depth, self._max_depth, self._distances_by_name)
            self._order_key[name] = (-self._min_depth[name], name)
            self._parents[name] = parents
        self._name_by_key[key] = name
        return name

    def _synset_name(self, key: SynsetKey) -> str:
        name = self._name_by_key.get(key)
        return self._register(key) if name is None else name

    def _depths(self, name: str) -> tuple[int, int]:
        """NLTK's ``min_depth()`` and ``max_depth()`` of a registered synset."""
        return self._min_depth[name], self._max_depth[name]

    def _distances(self, name: str, simulate_root: bool) -> dict[str, int]:
        """NLTK's ``_shortest_hypernym_paths``: each ancestor (and the synset) with its distance."""
        found = self._distances_by_name[name]
        if not simulate_root:
            return found
        with_root = self._distances_with_root.get(name)
        if with_root is None:
            with_root = self._distances_with_root[name] = {**found, _ROOT: max(found.values()) + 1}
        return with_root

    # --- one pair of synsets ------------------------------------------------------------

    def _path_distance(self, name: str, subsumer: str, simulate_root: bool) -> Optional[int]:
        """NLTK's ``shortest_path_distance`` from a synset to one of its common hypernyms."""
        if name == subsumer:
            return 0
        key = (name, subsumer, simulate_root)
        if key in self._path_cache:
            return self._path_cache[key]
        mine = self._distances(name, simulate_root)
        theirs = self._distances(subsumer, simulate_root) if subsumer != _ROOT else {_ROOT: 0}
        best = None
        for n, d2 in theirs.items():
            d1 = mine.get(n)
            if d1 is not None and (best is None or d1 + d2 < best):
                best = d1 + d2
        self._path_cache[key] = best
        return best

    def _subsumer_order(self, name: str) -> tuple[str, ...]:
        """The synset and its hypernyms, deepest minimum depth first, then by name."""
        order = self._order_cache.get(name)
        if order is None:
            dist = self._distances(name, False)
            for c in dist:
                self._depths(c)
            min_depth = self._min_depth
            order = self._order_cache[name] = tuple(sorted(dist, key=lambda c: (-min_depth[c], c)))
        return order

    def _wup_names(self, n1: str, n2: str, simulate_root: bool) -> float:
        min_depth = self._min_depth
        d2 = self._distances(n2, False)
        subsumer = None
        for c in self._subsumer_order(n1):  # NLTK's lowest_common_hypernyms(use_min_depth=True)[0]
            if c in d2:
                subsumer = c
                break
        if subsumer is None:
            if not simulate_root:
                return 0.0
            subsumer = _ROOT
        elif simulate_root and min_depth[subsumer] == 0 and _ROOT < subsumer:
            subsumer = _ROOT  # the simulated root ties at depth 0 and sorts first by name
        # NLTK prefers the first synset itself among the lowest common hypernyms.
        if subsumer != n1 and n1 in d2 and min_depth[n1] == min_depth.get(subsumer, 0):
            subsumer = n1
        depth = self._max_depth[subsumer] + 1
        len1 = self._path_distance(n1, subsumer, simulate_root)
        len2 = self._path_distance(n2, subsumer, simulate_root)
        if len1 is None or len2 is None:
            return 0.0
        return (2.0 * depth) / (len1 + depth + len2 + depth)

    def wup_from_keys(self, first: SynsetKey, second: SynsetKey) -> float:
        """NLTK's ``first.wup_similarity(second)`` (0.0 where NLTK gives None); see :func:`wup_from_keys`."""
        cached = self._wup_cache.get((first, second))
        if cached is None:
            # NLTK's Synset._needs_root for WordNet 3.0: only the nouns share one root.
            cached = self._wup_names(
                self._synset_name(first), self._synset_name(second), first[0] != "n" or second[0] != "n"
            )
            if len(self._wup_cache) >= 1_000_000:  # keep memory bounded; the tables make a miss cheap
                self._wup_cache.clear()
            self._wup_cache[(first, second)] = cached
        return cached

    # --- walks: a synset's candidate subsumers, for scoring groups of synsets -----------

    def _walk(self, name: str) -> Walk:
        """The candidate subsumers of a synset in the order NLTK prefers them, and its root path.

        Each hypernym (or the synset itself) comes as ``(name, depth, path length, to
        root)``: ``depth`` is NLTK's Wu-Palmer depth (``max_depth() + 1``), ``path
        length`` its ``shortest_path_distance`` from the synset (the same with or without
        the simulated root, since a path through the root is longer), and ``to root``
        whether NLTK takes the simulated root instead when it simulates one (minimum
        depth 0 and named after ``*ROOT*``). The order is NLTK's
        ``lowest_common_hypernyms(use_min_depth=True)`` followed by its preference for
        the synset itself: greatest minimum depth first, the synset before its equals,
        then by name. So for any other synset, the first entry it also has is the
        subsumer of the pair. The root path is the path length to the simulated root.
        """
        found = self._walk_cache.get(name)
        if found is None:
            dist = self._distances_by_name[name]
            max_depth = self._max_depth
            min_depth = self._min_depth
            paths = _path_lengths(dist, max_depth, self._parents)
            order = sorted(dist, key=self._order_key.__getitem__)
            # The synset itself goes first among its equals in minimum depth.
            at = order.index(name)
            first = at
            while first and min_depth[order[first - 1]] == min_depth[name]:
                first -= 1
            if first != at:
                del order[at]
                order.insert(first, name)
            found = self._walk_cache[name] = (
                tuple((c, max_depth[c] + 1, paths[c], c != name and min_depth[c] == 0 and _ROOT < c) for c in order),
                max(dist.values()) + 1,
            )
        return found

    # --- walks computed in the process: synsets known by key codes, named where needed ---

    def _coded_register(self, code: int) -> None:
        """:meth:`_register` for a synset known by its key code, without naming it.

        A name costs a look-up in an index file (its sense number), and the walks of
        a run need names only where NLTK's order does (see :meth:`_coded_walk`).
        """
        if code in self._coded_distances:
            return
        _, rest = self._line_fields(_CODE_POS[code >> 32], code & 0xFFFFFFFF)
        # Satellite adjectives are filed under "a", as synset_keys() gives them.
        parents = tuple(_POS_CODE["a" if p == "s" else p] << 32 | o for p, o in _hypernym_pointers(rest[-1]))
        for parent in parents:  # recursion depth is the synset's depth (under 20)
            self._coded_register(parent)
        _set_tables_from_parents(code, parents, self._coded_min_depth, self._coded_max_depth, self._coded_distances)
        self._coded_parents[code] = parents

    def _coded_name(self, code: int) -> str:
        return self._record((_CODE_POS[code >> 32], code & 0xFFFFFFFF))[0]

    def _coded_walk(self, code: int) -> tuple[tuple[_Step, ...], int]:
        """:meth:`_walk` of a synset known by its key code, each step's synset as its key code.

        The same steps in the same order: NLTK's order is by minimum depth, then by
        name, so only synsets that tie on minimum depth in one walk are named, and
        the synsets of minimum depth 0 (for the simulated root, which sorts by name).
        """
        self._coded_register(code)
        dist = self._coded_distances[code]
        max_depth = self._coded_max_depth
        min_depth = self._coded_min_depth
        paths = _path_lengths(dist, max_depth, self._coded_parents)
        order = sorted(dist, key=min_depth.__getitem__, reverse=True)
        depths = [min_depth[c] for c in order]
        if len(set(depths)) != len(depths):  # a run of equal minimum depth goes by name
            start = 0
            while start < len(order):
                end = start + 1
                while end < len(order) and depths[end] == depths[start]:
                    end += 1
                if end - start > 1:
                    order[start:end] = sorted(order[start:end], key=self._coded_name)
                start = end
        at = order.index(code)
        first = at
        while first and min_depth[order[first - 1]] == min_depth[code]:
            first -= 1
        if first != at:
            del order[at]
            order.insert(first, code)
        steps = tuple(
            (c, max_depth[c] + 1, paths[c], c != code and min_depth[c] == 0 and _ROOT < self._coded_name(c))
            for c in order
        )
        return steps, max(dist.values()) + 1

    def _key_walk(self, key: SynsetKey) -> _KeyWalk:
        """A synset's walk and root path (see :meth:`_walk`), and the names on its walk (the
        synset and its hypernyms): read from the walk file when there is one, else computed."""
        found = self._key_walks.get(key)
        if found is None:
            table = self.walk_table()
            if table is None:
                # Without the file every walk of this object is computed, and its synsets
                # are known by key codes, not names: the same identities in every walk.
                steps, root_path = self._coded_walk(_POS_CODE[key[0]] << 32 | key[1])
            else:
                walk = table.walk(key)
                steps, root_path = walk if walk is not None else self._walk(self._synset_name(key))
            found = self._key_walks[key] = (steps, root_path, frozenset(step[0] for step in steps))
        return found

    def walk_table(self) -> Optional[WalkTable]:
        """The walk file of this WordNet (see :mod:`protoqa_core.wordnet.walk_table`), or None while
        there is none (walks are then computed in the process).

        Opened on first use. Without the file (or with a damaged one) this process
        computes the walks it needs itself, the same values, and a one-line warning says
        how to build the file (``protoqa-eval prepare``); nothing is built or started.

        >>> WuPalmer(open_wordnet(), walk_table=None).walk_table() is None
        True
        """
        if self._walk_file_state == "find":
            with self._walk_file_lock:
                if self._walk_file_state == "find":
                    table: Optional[WalkTable] = None
                    path = None
                    try:
                        path = _walk_file_path(self._reader)
                        table = _open_walk_file(path)
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

    def _senses(self, keys: frozenset[SynsetKey]) -> _Senses:
        found = self._senses_cache.get(keys)
        if found is None:
            if len(self._senses_cache) >= 200_000:  # keep memory bounded; a miss only rebuilds from the tables
                self._senses_cache.clear()
            found = self._senses_cache[keys] = _Senses(keys, self._key_walk)
        return found

    def best_wup(self, first: frozenset[SynsetKey], second: frozenset[SynsetKey]) -> float:
        """The best Wu-Palmer over the pairs of two groups of synsets; see :func:`best_wup`."""
        if not first or not second:
            return 0.0
        senses = self._senses_cache
        mine = senses.get(first) or self._senses(first)
        other = senses.get(second) or self._senses(second)
        found, _ = _bound_reached(mine, other)
        if found is not None:
            return found
        return _search_pairs(mine, other, first, second, 1.0)

    def best_wup_reaches(self, first: frozenset[SynsetKey], second: frozenset[SynsetKey], level: float) -> bool:
        """Whether ``best_wup(first, second) >= level``; see :func:`best_wup_reaches`."""
        if not first or not second:
            return 0.0 >= level
        senses = self._senses_cache
        mine = senses.get(first) or self._senses(first)
        other = senses.get(second) or self._senses(second)
        found, bound = _bound_reached(mine, other)
        if found is not None:
            return found >= level
        if bound < level:
            return False
        return _search_pairs(mine, other, first, second, level) >= level


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

    Follows NLTK 3 exactly, including its choice of subsumer (the common hypernym of
    greatest *minimum* depth, ties by name, the first synset itself first), which is
    why a synset with several hypernym paths scores below 1 with itself.

    >>> from protoqa_core.wordnet.lookup import synset_from_key, synset_keys
    >>> person = min(k for k in synset_keys("person") if synset_from_key(k).name() == "person.n.01")
    >>> round(wup_from_keys(person, person), 4)
    0.8571
    """
    return (_shared or _wu_palmer()).wup_from_keys(first, second)


def best_wup(first: frozenset[SynsetKey], second: frozenset[SynsetKey]) -> float:
    """``max(wup_from_keys(x, y) for x in first for y in second)``, 0.0 for none.

    Most group pairs are settled by :func:`_bound_reached`, which checks one pair
    against a bound on all of them. Otherwise scores every pair as
    :func:`wup_from_keys` does, but finds the subsumers of one synset ``x`` with
    all synsets ``y`` of the other group in one walk down ``x``'s candidate
    subsumers (see :meth:`WuPalmer._walk`): the first that ``y`` also has is the
    subsumer of ``(x, y)``, or the simulated root in its place. The synsets ``y``
    that share a subsumer ``c`` share its depth ``D`` and the path length ``L`` from
    ``x``, so ``2D / (L + 2D + m)``, with ``m`` the shortest path to ``c`` in the
    group, bounds all of them; groups that cannot beat the best so far are not
    scored one by one. No value exceeds 1, so the search stops at 1. Shared synsets
    go first, as they most often reach it.

    >>> from protoqa_core.wordnet.lookup import synset_keys
    >>> best_wup(synset_keys("dog"), synset_keys("dog")) == max(
    ...     wup_from_keys(x, y) for x in synset_keys("dog") for y in synset_keys("dog"))
    True
    """
    return (_shared or _wu_palmer()).best_wup(first, second)


def best_wup_reaches(first: frozenset[SynsetKey], second: frozenset[SynsetKey], level: float) -> bool:
    """Whether ``best_wup(first, second) >= level``.

    Decided by the bound of :func:`_bound_reached` where it suffices (no pair scores
    more than the bound, so a bound below the level settles it), else by the search of
    :func:`best_wup`, stopped at the first pair that reaches the level.

    >>> from protoqa_core.wordnet.lookup import synset_keys
    >>> best_wup_reaches(synset_keys("dog"), synset_keys("cat"), 0.5)
    True
    >>> best_wup_reaches(synset_keys("dog"), synset_keys("run"), 0.5)
    False
    """
    return (_shared or _wu_palmer()).best_wup_reaches(first, second, level)


# --- the walk file ----------------------------------------------------------------------


def _walk_file_path(reader: WordNetReader) -> Path:
    """Where the walk file of ``reader``'s WordNet lives: named after its database files'
    sizes and modification times, and the file format."""
    return table_path(reader, "wup-walks", MAGIC.decode(), ".bin")


def _open_walk_file(path: Path) -> Optional[WalkTable]:
    """The walk file at ``path``, verified, or None when there is none.

    Raises:
        OSError, ValueError: the file is there but cannot be read, or is damaged.
    """
    if not path.exists():
        return None
    return WalkTable(path)


def prepare_wordnet(wordnet_dir: Optional[str | os.PathLike] = None) -> Path:
    """Find WordNet and build its cache files now (the lemma tables and the walk file), as
    ``scripts/setup.sh`` and ``protoqa-eval prepare`` do; return the walk file's path.

    A walk file that is there and intact is kept; a missing or damaged one is built in
    this process (about 12 s of CPU and 250 MB) and written atomically. Processes that
    prepare the same cache at once build it one at a time: the others wait for the
    first and find its file (see :func:`_build_walk_file`).

    >>> prepare_wordnet()  # doctest: +SKIP
    PosixPath('/root/.cache/protoqa_eval/wordnet_tables/wup-walks-10377ce4d5a7a342.bin')

    Raises:
        WordNetUnavailableError: no WordNet 3.0 was found, or ``wordnet_dir`` does not hold one
            (the files of another WordNet are not prepared in its place).
        OSError: the cache folder cannot be written.
    """
    if wordnet_dir is not None and not is_wordnet_db(Path(wordnet_dir).expanduser()):
        raise WordNetUnavailableError(
            f"{wordnet_dir}: not a WordNet database folder (it needs {', '.join(REQUIRED_FILES)})"
        )
    reader = open_wordnet(wordnet_dir)
    max_lemma_tokens()  # reads the lemma tables, writing their file first if there is none
    path = _walk_file_path(reader)
    _build_walk_file(path, reader.folder)
    return path


def _intact(path: Path) -> bool:
    """Whether ``path`` is a readable, verified walk file (a damaged one is named in the log)."""
    try:
        return _open_walk_file(path) is not None
    except (OSError, ValueError) as exc:
        logger.warning("the Wu-Palmer walk file is rebuilt: %s", exc)
        return False


def _build_walk_file(path: Path, wordnet_folder: Path) -> None:
    """Write the walk file of the WordNet in ``wordnet_folder`` to ``path``, unless an intact
    one is there.

    The build holds an exclusive ``flock`` on ``<path>.lock``: a second builder waits for
    the first (at most ``_LOCK_WAIT_SECONDS``) and then finds its file. The system
    releases the lock when its holder ends, killed or not, so no lock outlives a build;
    the file itself appears whole or not at all (a temporary file and one rename).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        _lock_exclusively(fd, lock)
        if not _intact(path):  # checked under the lock: another process may have just built it
            _write_walks(path, wordnet_folder)
    finally:
        os.close(fd)  # releases the lock


def _lock_exclusively(fd: int, lock: Path) -> None:
    """Take an exclusive ``flock`` on ``fd``, waiting at most ``_LOCK_WAIT_SECONDS`` for its holder."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): builders may overlap; each writes whole files
        return
    deadline = time.monotonic() + _LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise OSError(
                    f"{lock}: another process has been building the Wu-Palmer walk file for "
                    f"{_LOCK_WAIT_SECONDS:.0f} s; try again when it has finished"
                ) from None
            time.sleep(0.1)


def _write_walks(path: Path, wordnet_folder: Path) -> None:
    """Compute the walk of every synset of the WordNet in ``wordnet_folder`` and write the file."""
    reader = WordNetReader(wordnet_folder)
    wup = WuPalmer(reader, walk_table=None)  # its tables (about 250 MB) go when it returns

    def rows() -> Iterator[tuple[SynsetKey, str, Walk]]:
        for pos in "nvar":  # satellites ("s") are lines of data.adj, filed under "a"
            for offset, _ in reader.data_lines(pos):
                key = (pos, offset)
                name = wup._register(key)
                yield key, name, wup._walk(name)

    write_walk_table(path, rows())


# --- scoring two groups of synsets at once ----------------------------------------------


class _Senses:
    """The synsets of one group, with what Wu-Palmer needs to score them all at once."""

    __slots__ = (
        "walks",
        "noun_mask",
        "root_paths",
        "shortest",
        "hypernyms",
        "ancestors",
        "root_any",
        "root_non_noun",
        "_holders",
    )

    def __init__(
        self,
        keys: frozenset[SynsetKey],
        key_walk: Callable[[SynsetKey], _KeyWalk],
    ) -> None:
        ordered = sorted(keys)
        found = [key_walk(k) for k in ordered]
        # each synset's key, candidate subsumers and root path (see WuPalmer._walk), in key order
        self.walks = tuple((key, steps, root_path) for key, (steps, root_path, _) in zip(ordered, found, strict=True))
        self.root_paths = tuple(root_path for _, _, root_path in self.walks)  # to the simulated root
        # hypernym (or synset) c -> (the group's shortest path m to c, the first synset
        # with that path, c's depth D), for the bound 2D / (m1 + m2 + 2D) on pairs with c
        if len(ordered) == 1:
            shortest = {c: (length, 0, depth) for c, depth, length, _ in self.walks[0][1]}
        else:
            shortest = {}
            for index, (_, walk, _) in enumerate(self.walks):
                for c, depth, length, _ in walk:
                    known = shortest.get(c)
                    if known is None or length < known[0]:
                        shortest[c] = (length, index, depth)
        self.shortest = shortest
        self.hypernyms = frozenset(shortest)
        self.ancestors = tuple(names for _, _, names in found)  # each synset's hypernyms (and itself)
        nouns = [k[0] == "n" for k in ordered]
        self.noun_mask = sum(1 << i for i, noun in enumerate(nouns) if noun)  # bit i: synset i is a noun
        # (root path, synset) of the shortest root path, over all synsets and over non-nouns
        self.root_any = min((length, i) for i, length in enumerate(self.root_paths))
        self.root_non_noun = min(
            ((length, i) for i, length in enumerate(self.root_paths) if not nouns[i]), default=None
        )
        self._holders: Optional[dict[_Id, tuple[int, tuple[tuple[int, int], ...], int]]] = None

    @property
    def holders(self) -> dict[_Id, tuple[int, tuple[tuple[int, int], ...], int]]:
        """Hypernym (or synset) -> (bit mask of the synsets having it, (synset, path length)
        pairs shortest path first, the shortest of those path lengths); built on first use."""
        if self._holders is None:
            members: dict[_Id, list[tuple[int, int]]] = {}
            for index, (_, walk, _) in enumerate(self.walks):
                for c, _, length, _ in walk:
                    members.setdefault(c, []).append((index, length))
            self._holders = {
                c: (
                    sum(1 << i for i, _ in pairs),
                    tuple(sorted(pairs, key=lambda pair: (pair[1], pair[0]))),
                    min(length for _, length in pairs),
                )
                for c, pairs in members.items()
            }
        return self._holders


def _bound_reached(mine: _Senses, other: _Senses) -> tuple[Optional[float], float]:
    """The best Wu-Palmer of two groups when one pair reaches the bound on all pairs (else
    None), and that bound: no pair scores more.

    A pair whose subsumer is the common hypernym ``c`` scores at most
    ``2D / (m1 + m2 + 2D)``, with ``m1`` and ``m2`` the two groups' shortest paths
    to ``c`` (the same float expression NLTK evaluates, which only falls as the
    paths grow); pairs with the simulated root score at most ``2 / (r1 + r2 + 2)``
    with the shortest root paths. When the pair behind the greatest bound has
    ``c`` as its subsumer, it scores exactly that bound, which is then the best.
    The common hypernyms come from one set intersection (a few, against dozens of
    hypernyms a side); ties go to the greatest ``2D / (m1 + 2D)``, then the first
    name, so the pair checked does not depend on set order.
    """
    mine_shortest = mine.shortest
    other_shortest = other.shortest
    bound = 0.0
    behind = None
    for c in mine.hypernyms & other.hypernyms:
        m1, _, depth = mine_shortest[c]
        value = (2.0 * depth) / (m1 + depth + other_shortest[c][0] + depth)
        if value > bound:
            bound = value
            behind = c
        elif value == bound and behind is not None and _earlier(c, behind, mine_shortest):
            behind = c
    # The pairs NLTK simulates a root for (those with a non-noun) with the shortest root paths.
    # (the least sum of root paths, then the first synsets: min() over the two candidates)
    mine_non_noun, other_non_noun = mine.root_non_noun, other.root_non_noun
    if mine_non_noun is None and other_non_noun is None:
        rooted = None  # nouns only: one root, nothing simulated
    else:
        rooted = None
        if mine_non_noun is not None:
            rooted = (mine_non_noun[0] + other.root_any[0], mine_non_noun[1], other.root_any[1])
        if other_non_noun is not None:
            candidate = (mine.root_any[0] + other_non_noun[0], mine.root_any[1], other_non_noun[1])
            if rooted is None or candidate < rooted:
                rooted = candidate
    if behind is None:  # no common hypernym: every pair scores 0 or with the simulated root
        value = 2.0 / (rooted[0] + 1 + 1) if rooted else 0.0
        return value, value
    if rooted:
        total, index, other_index = rooted
        root_value = 2.0 / (total + 1 + 1)
        if root_value > bound:
            x, walk, _ = mine.walks[index]
            above_y = other.ancestors[other_index]
            for subsumer, _, _, to_root in walk:
                if subsumer in above_y:
                    return (root_value if to_root else None), root_value
            return root_value, root_value
    c = behind
    index = mine_shortest[c][1]
    other_index = other_shortest[c][1]
    x, walk, _ = mine.walks[index]
    above_y = other.ancestors[other_index]
    for subsumer, _, _, to_root in walk:
        if subsumer in above_y:
            if subsumer != c or (to_root and (x[0] != "n" or not other.noun_mask >> other_index & 1)):
                return None, bound
            return bound, bound
    return None, bound


def _earlier(c: _Id, behind: _Id, shortest: dict[_Id, tuple[int, int, int]]) -> bool:
    """Whether hypernym ``c`` comes before ``behind`` among equal bounds: greater
    ``2D / (m + 2D)`` on this side first, then the first name."""
    m1, _, d1 = shortest[c]
    m0, _, d0 = shortest[behind]
    return (-(2.0 * d1) / (m1 + d1 + d1), c) < (-(2.0 * d0) / (m0 + d0 + d0), behind)


def _search_pairs(
    mine: _Senses, other: _Senses, first: frozenset[SynsetKey], second: frozenset[SynsetKey], enough: float
) -> float:
    """The best Wu-Palmer over every pair of the two groups (see :func:`best_wup`), or, once
    a pair reaches ``enough``, that pair's value."""
    holders = other.holders.get
    root_paths = other.root_paths
    everyone = (1 << len(root_paths)) - 1
    noun_mask = other.noun_mask
    best = 0.0
    walks: Sequence[tuple[SynsetKey, tuple[_Step, ...], int]] = mine.walks
    if not first.isdisjoint(second):
        walks = sorted(walks, key=lambda entry: entry[0] not in second)
    for x, walk, root_x in walks:
        # Pairs with a non-noun get NLTK's simulated root.
        simulated = everyone & ~noun_mask if x[0] == "n" else everyone
        seen = 0
        for c, depth, len1, to_root in walk:
            held = holders(c)
            if held is None:
                continue
            mask, pairs, shortest = held
            fresh = mask & ~seen
            if not fresh:
                continue
            seen |= fresh
            if to_root and fresh & simulated:
                for index, len2 in pairs:
                    if fresh >> index & 1:
                        if simulated >> index & 1:
                            value = 2.0 / (root_x + 1 + root_paths[index] + 1)
                        else:
                            value = (2.0 * depth) / (len1 + depth + len2 + depth)
                        if value > best:
                            best = value
            elif (2.0 * depth) / (len1 + depth + shortest + depth) > best:
                # The pairs go shortest path first, and the value falls as the path grows.
                for index, len2 in pairs:
                    if fresh >> index & 1:
                        value = (2.0 * depth) / (len1 + depth + len2 + depth)
                        if value > best:
                            best = value
                        break
            if seen == everyone:
                break
        # No common hypernym: the simulated root where NLTK simulates one, else 0.
        rootless = everyone & ~seen & simulated
        index = 0
        while rootless:
            if rootless & 1:
                value = 2.0 / (root_x + 1 + root_paths[index] + 1)
                if value > best:
                    best = value
            rootless >>= 1
            index += 1
        if best >= enough:
            return best
    return best
