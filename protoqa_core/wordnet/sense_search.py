"""The best Wu-Palmer over the pairs of two groups of synsets, without scoring every pair.

:func:`bound_reached` settles most group pairs by one bound. :func:`search_pairs` walks down each
synset ``x``'s candidate subsumers: the first that a synset ``y`` of the other group also has is
their subsumer, and the ``y`` sharing subsumer ``c`` share its depth ``D`` and path ``L`` from
``x``, so ``2D / (L + 2D + m)`` (``m`` the group's shortest path to ``c``) bounds them all and
groups that cannot beat the best so far are skipped. No value exceeds 1, so the search stops there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

from .reader import SynsetKey
from .synset_tables import KeyWalk, SynsetId, WalkStep


class Senses:
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
        key_walk: Callable[[SynsetKey], KeyWalk],
    ) -> None:
        ordered = sorted(keys)
        found = [key_walk(k) for k in ordered]
        # each synset's key, candidate subsumers and root path (see SynsetTables._walk), in key order
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
        self._holders: Optional[dict[SynsetId, tuple[int, tuple[tuple[int, int], ...], int]]] = None

    @property
    def holders(self) -> dict[SynsetId, tuple[int, tuple[tuple[int, int], ...], int]]:
        """Hypernym -> (mask of the synsets having it, their (synset, path length) shortest first, the shortest path)."""
        if self._holders is None:
            members: dict[SynsetId, list[tuple[int, int]]] = {}
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


def bound_reached(mine: Senses, other: Senses) -> tuple[Optional[float], float]:
    """The best Wu-Palmer of two groups when one pair reaches the bound on all pairs (else None), and that bound.

    A pair with subsumer ``c`` scores at most ``2D / (m1 + m2 + 2D)`` (NLTK's float expression, the
    groups' shortest paths to ``c``), one with the simulated root at most ``2 / (r1 + r2 + 2)``; when
    the pair behind the greatest bound has ``c`` as its subsumer, it scores that bound. Ties go to the
    greatest ``2D / (m1 + 2D)``, then the first name, so the pair checked does not depend on set order.
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
    # The pairs NLTK simulates a root for (those with a non-noun; none among nouns only) with the least sum
    # of root paths, then the first synsets.
    mine_non_noun, other_non_noun = mine.root_non_noun, other.root_non_noun
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


def _earlier(c: SynsetId, behind: SynsetId, shortest: dict[SynsetId, tuple[int, int, int]]) -> bool:
    """Whether hypernym ``c`` comes before ``behind`` among equal bounds: greater
    ``2D / (m + 2D)`` on this side first, then the first name."""
    m1, _, d1 = shortest[c]
    m0, _, d0 = shortest[behind]
    return (-(2.0 * d1) / (m1 + d1 + d1), c) < (-(2.0 * d0) / (m0 + d0 + d0), behind)


def search_pairs(
    mine: Senses, other: Senses, first: frozenset[SynsetKey], second: frozenset[SynsetKey], enough: float
) -> float:
    """The best Wu-Palmer over every pair of the two groups (see :func:`best_wup`), or, once
    a pair reaches ``enough``, that pair's value."""
    holders = other.holders.get
    root_paths = other.root_paths
    everyone = (1 << len(root_paths)) - 1
    noun_mask = other.noun_mask
    best = 0.0
    walks: Sequence[tuple[SynsetKey, tuple[WalkStep, ...], int]] = mine.walks
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
