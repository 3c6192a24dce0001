"""The hypernym tables of WordNet synsets that NLTK's Wu-Palmer similarity reads, built once per synset.

A synset's *walk* is its candidate subsumers in the order NLTK prefers them:
:class:`~protoqa_core.wordnet.wu_palmer.WuPalmer` scores groups of synsets from walks.
"""

from __future__ import annotations

import re
from typing import Optional, TypeVar, Union

from .files import WordNetUnavailableError
from .reader import SynsetKey, WordNetFormatError, WordNetReader
from .walk_table import Walk

__all__ = [
    "SynsetTables",
    "CODE_POS",
    "SynsetId",
    "KeyWalk",
    "POS_CODE",
    "ROOT",
    "WalkStep",
    "first_among_equals",
    "hypernym_pointers",
    "path_lengths",
    "set_tables_from_parents",
]

ROOT = "*ROOT*"  # NLTK's simulated root, which joins the verb (and adjective) trees

# A hypernym or instance-hypernym pointer between whole synsets ("0000"): only a pointer symbol
# can be "@" or "@i" in a data line's pointer list, so a match is a pointer field.
_HYPERNYM_POINTER = re.compile(r" @i? (\d{8}) ([nvasr]) 0000(?= |$)")

# A synset on a walk: its NLTK name (from the walk file, or :meth:`SynsetTables._walk`) or its
# key code (from :meth:`WuPalmer._coded_walk`); one object uses one kind throughout.
SynsetId = Union[str, int]
WalkStep = tuple[SynsetId, int, int, bool]  # (synset, depth, path length, to root), as in Walk
KeyWalk = tuple[tuple[WalkStep, ...], int, frozenset[SynsetId]]  # steps, root path, the synsets on them

POS_CODE = {"n": 0, "v": 1, "a": 2, "r": 3}
CODE_POS = "nvar"


def hypernym_pointers(pointers: str) -> tuple[tuple[str, int], ...]:
    """The ``(part of speech, offset)`` hypernym and instance-hypernym pointers of a data line's pointer field."""
    return tuple((target_pos, int(target)) for target, target_pos in _HYPERNYM_POINTER.findall(" " + pointers))


_Node = TypeVar("_Node", str, int)


def set_tables_from_parents(
    node: _Node,
    parents: tuple[_Node, ...],
    min_depth: dict[_Node, int],
    max_depth: dict[_Node, int],
    distances_by_node: dict[_Node, dict[_Node, int]],
) -> None:
    """Record ``node``'s NLTK depths and hypernym distances, each one more than its parents' (recorded first).

    >>> mins, maxs, dists = {"r": 0}, {"r": 0}, {"r": {"r": 0}}
    >>> set_tables_from_parents("a", ("r",), mins, maxs, dists)
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


def path_lengths(
    dist: dict[_Node, int], max_depth: dict[_Node, int], parents_by_node: dict[_Node, tuple[_Node, ...]]
) -> dict[_Node, int]:
    """NLTK's ``shortest_path_distance`` from a synset to each of its hypernyms (``dist``: its hypernym distances).

    A path is the direct distance or one more than the path to a parent (parents come first).

    >>> path_lengths({"s": 0, "p": 1, "r": 1}, {"r": 0, "p": 1, "s": 2}, {"r": (), "p": ("r",), "s": ("p", "r")})
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


def first_among_equals(order: list[_Node], node: _Node, min_depth: dict[_Node, int]) -> None:
    """Move ``node`` in ``order`` before the synsets of its minimum depth (NLTK prefers the synset itself).

    >>> order = ["a", "b", "c"]; first_among_equals(order, "c", {"a": 2, "b": 1, "c": 1}); order
    ['a', 'c', 'b']
    """
    at = order.index(node)
    first = at
    while first and min_depth[order[first - 1]] == min_depth[node]:
        first -= 1
    if first != at:
        del order[at]
        order.insert(first, node)


class SynsetTables:
    """NLTK's depths, hypernym distances and walks of the synsets of ``reader``'s WordNet, each built once.

    >>> from protoqa_core.wordnet.lookup import open_wordnet, synset_from_key, synset_keys
    >>> tables = SynsetTables(open_wordnet())
    >>> person = min(k for k in synset_keys("person") if synset_from_key(k).name() == "person.n.01")
    >>> round(tables.wup_from_keys(person, person), 4)  # two hypernym paths: below 1 with itself
    0.8571
    """

    def __init__(self, reader: WordNetReader) -> None:
        self._reader = reader
        # synset name -> its hypernyms' names, NLTK's min_depth() and max_depth(), and its
        # distance to each hypernym (and itself), with and without the simulated root
        self._parents: dict[str, tuple[str, ...]] = {ROOT: ()}
        self._min_depth: dict[str, int] = {ROOT: 0}
        self._max_depth: dict[str, int] = {ROOT: 0}
        self._distances_by_name: dict[str, dict[str, int]] = {ROOT: {ROOT: 0}}
        self._distances_with_root: dict[str, dict[str, int]] = {ROOT: {ROOT: 0}}
        # NLTK's preference among common hypernyms: greatest minimum depth first, then by name
        self._order_key: dict[str, tuple[int, str]] = {ROOT: (0, ROOT)}
        self._records: dict[SynsetKey, tuple[str, tuple[SynsetKey, ...]]] = {}
        self._name_by_key: dict[SynsetKey, str] = {}
        self._order_cache: dict[str, tuple[str, ...]] = {}
        self._walk_cache: dict[str, Walk] = {}
        self._wup_cache: dict[tuple[SynsetKey, SynsetKey], float] = {}
        self._path_cache: dict[tuple[str, str, bool], Optional[int]] = {}

    # --- the tables of one synset, from its data line ----------------------------------

    def _synset_record(self, pos: str, offset: int) -> tuple[str, tuple[tuple[str, int], ...]]:
        """NLTK's name of a synset and its hypernym pointers, without building the ``Synset`` (most of the cost)."""
        line_pos, rest = self._line_fields(pos, offset)
        first_lemma = rest[0]
        if first_lemma.endswith(")") and "(" in first_lemma:  # a syntactic marker, as "(a)"
            first_lemma = first_lemma[: first_lemma.rindex("(")]
        first_lemma = first_lemma.lower()
        sense = self._reader.sense_number(first_lemma, line_pos, offset)
        name = f"{first_lemma}.{line_pos}.{sense:02d}"
        return name, hypernym_pointers(rest[-1])

    def _line_fields(self, pos: str, offset: int) -> tuple[str, list[str]]:
        """A synset's type (``s`` for satellites) and its data line's fields from the first lemma on: the lemmas
        and their lexical ids, then the rest (pointers and frames) in one."""
        try:
            line = self._reader.data_line(pos, offset)
        except WordNetFormatError as exc:
            raise WordNetUnavailableError(str(exc)) from None
        head = line.split("|", 1)[0].split(" ", 4)
        return head[2], head[4].split(" ", 2 * int(head[3], 16))

    def _record(self, key: SynsetKey) -> tuple[str, tuple[SynsetKey, ...]]:
        found = self._records.get(key)
        if found is None:
            name, parents = self._synset_record(*key)
            # Satellite adjectives are filed under "a", as synset_keys() gives them.
            found = self._records[key] = (name, tuple(("a" if p == "s" else p, o) for p, o in parents))
        return found

    def _register(self, key: SynsetKey) -> str:
        """Record the tables of a synset and all its ancestors, once; return its name."""
        name = self._name_by_key.get(key)
        if name is not None:
            return name
        name, parent_keys = self._record(key)
        if name not in self._parents:
            # Recursion depth is the synset's depth in the hypernym graph (under 20).
            parents = tuple(self._register(p) for p in parent_keys)
            set_tables_from_parents(name, parents, self._min_depth, self._max_depth, self._distances_by_name)
            self._order_key[name] = (-self._min_depth[name], name)
            self._parents[name] = parents
        self._name_by_key[key] = name
        return name

    def _distances(self, name: str, simulate_root: bool) -> dict[str, int]:
        """NLTK's ``_shortest_hypernym_paths``: each ancestor (and the synset) with its distance."""
        found = self._distances_by_name[name]
        if not simulate_root:
            return found
        with_root = self._distances_with_root.get(name)
        if with_root is None:
            with_root = self._distances_with_root[name] = {**found, ROOT: max(found.values()) + 1}
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
        theirs = self._distances(subsumer, simulate_root) if subsumer != ROOT else {ROOT: 0}
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
            min_depth = self._min_depth
            order = self._order_cache[name] = tuple(
                sorted(self._distances(name, False), key=lambda c: (-min_depth[c], c))
            )
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
            subsumer = ROOT
        elif simulate_root and min_depth[subsumer] == 0 and ROOT < subsumer:
            subsumer = ROOT  # the simulated root ties at depth 0 and sorts first by name
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
            cached = self._wup_names(self._register(first), self._register(second), first[0] != "n" or second[0] != "n")
            if len(self._wup_cache) >= 1_000_000:  # keep memory bounded; the tables make a miss cheap
                self._wup_cache.clear()
            self._wup_cache[(first, second)] = cached
        return cached

    # --- walks: a synset's candidate subsumers, for scoring groups of synsets -----------

    def _walk(self, name: str) -> Walk:
        """The candidate subsumers of a synset in the order NLTK prefers them, and its path length to the root.

        Each step is ``(name, max_depth() + 1, shortest_path_distance, whether NLTK takes the simulated
        root instead)``; for any other synset, the first step it also has is the pair's subsumer.
        """
        found = self._walk_cache.get(name)
        if found is None:
            dist = self._distances_by_name[name]
            max_depth = self._max_depth
            min_depth = self._min_depth
            paths = path_lengths(dist, max_depth, self._parents)
            order = sorted(dist, key=self._order_key.__getitem__)
            first_among_equals(order, name, min_depth)
            found = self._walk_cache[name] = (
                tuple((c, max_depth[c] + 1, paths[c], c != name and min_depth[c] == 0 and ROOT < c) for c in order),
                max(dist.values()) + 1,
            )
        return found
