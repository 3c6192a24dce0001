"""Matching model samples to answer clusters: WordNet, cosine similarity, Gaussian process.

A matcher says for each normalized sample of a question which clusters it belongs to: none means
"wrong", several split its weight evenly. WordNet matches on a raw similarity of 1, not a rounded
one (why: docs/probeval.md, "WordNet rule").
"""

from __future__ import annotations

import itertools
import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Optional

import numpy as np

from protoqa_core.options import Option
from protoqa_core.similarity import collect_approximations, wordnet_similarity
from protoqa_core.similarity.spans import span_index
from protoqa_core.text import content_tokens

from .defaults import DEFAULTS
from .options import SEED, THRESHOLD
from .registry import MATCHINGS

if TYPE_CHECKING:
    from protoqa_core.similarity.gaussian_process import OneVsAll

    from .embedders import Embedder

__all__ = [
    "Matcher",
    "WordNetMatcher",
    "CosineMatcher",
    "GPMatcher",
    "MatchingOptions",
    "make_matcher",
    "wordnet_scores_one",
    "best_clusters",
]


@dataclass(frozen=True)
class MatchingOptions:
    """The options every matching is built from (:meth:`Matcher.from_options`); a None threshold is the default.

    >>> MatchingOptions().embedder_for("cosine")
    Traceback (most recent call last):
    ...
    ValueError: cosine matching needs an embedder
    """

    embedder: Optional[Embedder] = None
    threshold: Optional[float] = None
    seed: int = 0
    all_stopword_match: bool = True

    def embedder_for(self, matching: str) -> Embedder:
        """The embedder, which ``matching`` cannot do without."""
        if self.embedder is None:
            raise ValueError(f"{matching} matching needs an embedder")
        return self.embedder


def wordnet_scores_one(similarity: float) -> bool:
    """Whether a WordNet similarity "scores 1": the raw similarity is 1 (not just rounds to 1).

    >>> wordnet_scores_one(1.0), wordnet_scores_one(2 / 3), wordnet_scores_one(0.5)
    (True, False, False)
    """
    return similarity >= 1.0


def best_clusters(scores: np.ndarray, threshold: float, strict: bool = False) -> list[tuple[int, ...]]:
    """Per row, the columns with the row's best score when that score passes ``threshold``.

    ``strict`` asks for ``score > threshold`` instead of ``>=``. Ties share the row.

    >>> best_clusters(np.array([[0.9, 0.9, 0.1], [0.2, 0.3, 0.1]]), 0.5)
    [(0, 1), ()]
    """
    out: list[tuple[int, ...]] = []
    for row in scores:
        if row.size == 0:
            out.append(())
            continue
        best = float(row.max())
        passes = best > threshold if strict else best >= threshold
        out.append(tuple(int(j) for j in np.flatnonzero(row == best)) if passes else ())
    return out


class Matcher(ABC):
    """Assigns samples to clusters; ``name`` and :meth:`params` go in signatures."""

    name: str = "matcher"
    needs_embedder: ClassVar[bool] = False
    """Whether it matches on the embedder's vectors (ProbEval then builds one and embeds the strings it matches)."""
    uses_wordnet: ClassVar[bool] = False
    """Whether it reads WordNet (the signature then names WordNet's version)."""
    options: ClassVar[tuple[Option, ...]] = ()
    """The ProbEval settings it reads beyond ``seed`` (``threshold``); another one given is refused."""

    @property
    def num_pairs_scored(self) -> int:
        """How many (sample, answer) pairs it has scored one by one (0 for a matcher that scores none so).

        >>> from cfc_probeval.embedders import CharNgramEmbedder
        >>> CosineMatcher(CharNgramEmbedder(), 0.6).num_pairs_scored, WordNetMatcher().num_pairs_scored
        (0, 0)
        """
        return 0

    @classmethod
    def from_options(cls, options: MatchingOptions) -> Matcher:
        """This matching from the shared options, with the package default threshold (:data:`DEFAULTS`) when
        unset. A matching registered in :data:`MATCHINGS` defines it."""
        raise TypeError(f"{cls.__qualname__} defines no from_options, so it cannot be built by name")

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The settings that determine the result."""

    @abstractmethod
    def match(self, samples: Sequence[str], clusters: Sequence[Sequence[str]]) -> list[tuple[int, ...]]:
        """For each sample, the indices of the clusters it belongs to (empty: "wrong")."""

    def match_reporting(
        self, samples: Sequence[str], clusters: Sequence[Sequence[str]]
    ) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
        """:meth:`match`, and the ``(sample index, cluster index)`` pairs decided on an approximated similarity
        (only WordNet matching approximates).

        >>> CosineMatcher.__mro__[1].match_reporting is Matcher.match_reporting
        True
        """
        return self.match(samples, clusters), []


class _BoundedCache(dict):
    """A dict that forgets its oldest entries beyond ``limit`` (bounded memory on any input)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: Any, value: Any) -> None:
        if len(self) >= self.limit:
            for old in list(itertools.islice(iter(self), max(1, self.limit // 4))):
                del self[old]
        self[key] = value


class WordNetMatcher(Matcher):
    """A sample belongs to every cluster holding a string it fully WordNet-matches (similarity 1).

    Strings sharing no content token and no synset have similarity 0, so an index of the answers gives each
    sample its few candidates; each pair is scored once while among the last ``cache_size``.

    >>> WordNetMatcher().match(["chewing gum", "car"], [["gum", "candy"], ["bus"]])
    [(0,), ()]
    """

    name = "wordnet"
    uses_wordnet = True

    def __init__(self, all_stopword_match: bool = True, cache_size: int = 200_000) -> None:
        self.all_stopword_match = all_stopword_match
        self._scores: _BoundedCache = _BoundedCache(cache_size)
        self._indexes: _BoundedCache = _BoundedCache(cache_size)
        self._key_ids: dict[Any, int] = {}
        self._num_scored = 0

    @classmethod
    def from_options(cls, options: MatchingOptions) -> WordNetMatcher:
        if options.threshold is not None:
            raise ValueError("WordNet matching takes no threshold (a pair matches when its similarity is 1)")
        return cls(options.all_stopword_match)

    def params(self) -> dict[str, Any]:
        return {"stop": "match" if self.all_stopword_match else "zero"}

    @property
    def num_pairs_scored(self) -> int:
        """How many (sample, answer) pairs have had their similarity computed."""
        return self._num_scored

    def similarity(self, sample: str, answer: str) -> float:
        """The WordNet similarity of a normalized sample and an answer string (cached).

        >>> WordNetMatcher().similarity("chewing gum", "gum")
        1.0
        """
        return self._similarity(sample, answer)[0]

    def _similarity(self, sample: str, answer: str) -> tuple[float, bool]:
        """The similarity, and whether it is a lower bound under the long-string rule (cached)."""
        key = (sample, answer)
        known = self._scores.get(key)
        if known is None:
            with collect_approximations() as approximated:
                score = wordnet_similarity(sample, answer, all_stopword_match=self.all_stopword_match)
            known = (score, bool(approximated))
            self._scores.put(key, known)
            self._num_scored += 1
        return known

    def _keys(self, text: str) -> Optional[frozenset]:
        """The ids of the synsets and content tokens of ``text`` (None when it has no content token)."""
        keys = self._indexes.get(text, _MISSING)
        if keys is _MISSING:
            tokens = content_tokens(text)
            if tokens:
                index = span_index(tokens)
                # Small integers hash and compare faster than synset tuples.
                ids = self._key_ids
                keys = frozenset(
                    ids.setdefault(k, len(ids)) for k in itertools.chain(index.by_synset, index.token_positions)
                )
            else:
                keys = None
            self._indexes.put(text, keys)
        return keys

    def match(self, samples: Sequence[str], clusters: Sequence[Sequence[str]]) -> list[tuple[int, ...]]:
        return self.match_reporting(samples, clusters)[0]

    def match_reporting(
        self, samples: Sequence[str], clusters: Sequence[Sequence[str]]
    ) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
        """:meth:`match`, and the ``(sample, cluster)`` index pairs decided on a lower-bound similarity (a string
        over :data:`~protoqa_core.similarity.MAX_SIMILARITY_TOKENS` content tokens, or a search budget run out).

        >>> WordNetMatcher().match_reporting(["dog"], [["cat " * 70 + "dog"], ["dog"]])
        ([(1,)], [(0, 0)])
        """
        if len(self._key_ids) >= 8 * self._indexes.limit:
            # Key ids are renumbered between questions only, never within one.
            self._key_ids.clear()
            self._indexes.clear()
        answers: list[str] = []
        owners: list[list[int]] = []
        position: dict[str, int] = {}
        for j, cluster in enumerate(clusters):
            for answer in cluster:
                i = position.get(answer)
                if i is None:
                    position[answer] = len(answers)
                    answers.append(answer)
                    owners.append([j])
                elif owners[i][-1] != j:
                    owners[i].append(j)
        index: dict[int, list[int]] = {}
        stopwords_only: list[int] = []  # answers without content tokens match only each other
        for i, answer in enumerate(answers):
            keys = self._keys(answer)
            if keys is None:
                stopwords_only.append(i)
            else:
                for key in keys:
                    index.setdefault(key, []).append(i)
        indexed = frozenset(index)
        out: list[tuple[int, ...]] = []
        approximated: list[tuple[int, int]] = []
        for s, sample in enumerate(samples):
            keys = self._keys(sample)
            candidates = stopwords_only if keys is None else sorted(set().union(*[index[k] for k in keys & indexed]))
            hits: set[int] = set()
            bounded: set[int] = set()
            for i in candidates:
                if hits.issuperset(owners[i]):
                    continue
                score, lower_bound = self._similarity(sample, answers[i])
                if lower_bound:
                    bounded.update(owners[i])
                if wordnet_scores_one(score):
                    hits.update(owners[i])
            out.append(tuple(sorted(hits)))
            approximated.extend((s, j) for j in sorted(bounded))
        return out, approximated


_MISSING = object()


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """The rows scaled to unit length; the embedding module is imported by the matchings that embed only."""
    from protoqa_core.similarity.embedding import unit_rows

    return unit_rows(vectors)


def _cluster_max(similarity: np.ndarray, owners: np.ndarray, num_clusters: int) -> np.ndarray:
    """Column-reduce ``similarity`` (samples x answers) to samples x clusters by maximum."""
    out = np.full((similarity.shape[0], num_clusters), -np.inf)
    for j in range(num_clusters):
        columns = similarity[:, owners == j]
        if columns.size:
            out[:, j] = columns.max(axis=1)
    return out


class CosineMatcher(Matcher):
    """A sample goes to the cluster of its most similar answer string if that cosine >= ``threshold``.

    Only clusters tied for the best share a sample: with sentence embeddings, related answers often all pass.

    >>> from cfc_probeval.embedders import CharNgramEmbedder
    >>> CosineMatcher(CharNgramEmbedder(), 0.6).match(["evenings", "zzz"], [["evening"], ["morning"]])
    [(0,), ()]
    """

    name = "cosine"
    needs_embedder = True
    options = (THRESHOLD,)

    def __init__(self, embedder: Embedder, threshold: float) -> None:
        self.embedder, self.threshold = embedder, THRESHOLD.check(threshold)

    @classmethod
    def from_options(cls, options: MatchingOptions) -> CosineMatcher:
        threshold = DEFAULTS.cosine_threshold if options.threshold is None else options.threshold
        return cls(options.embedder_for(cls.name), threshold)

    def params(self) -> dict[str, Any]:
        return {"threshold": self.threshold}

    def match(self, samples: Sequence[str], clusters: Sequence[Sequence[str]]) -> list[tuple[int, ...]]:
        answers = [a for c in clusters for a in c]
        owners = np.array([j for j, c in enumerate(clusters) for _ in c], dtype=int)
        if not samples:
            return []
        if not answers:
            return [() for _ in samples]
        similarity = _unit_rows(self.embedder.embed(list(samples))) @ _unit_rows(self.embedder.embed(answers)).T
        return best_clusters(_cluster_max(similarity, owners, len(clusters)), self.threshold)


class GPMatcher(Matcher):
    """One Gaussian-process classifier per cluster over the distinct answers' embeddings.

    A sample goes to the most probable cluster above ``threshold``. A single cluster has nothing to learn
    against: cosine matching at ``fallback_cosine_threshold`` then decides, with a warning (counted in
    :attr:`fallbacks`). How it differs from the ProtoQA paper's GP: :mod:`protoqa_core.similarity.gaussian_process`.

    >>> from cfc_probeval.embedders import CharNgramEmbedder
    >>> m = GPMatcher(CharNgramEmbedder(), threshold=0.1)
    >>> m.match(["evenings", "breakfasts"], [["evening", "night time", "late evening"],
    ...                                      ["morning", "breakfast", "early morning"]])
    [(0,), (1,)]
    """

    name = "gp"
    needs_embedder = True
    options = (THRESHOLD,)

    def __init__(
        self,
        embedder: Embedder,
        threshold: float = 0.1,
        seed: int = 0,
        fallback_cosine_threshold: Optional[float] = None,
        model: str = "classification",
    ) -> None:
        self.embedder, self.threshold = embedder, THRESHOLD.check(threshold)
        self.seed = SEED.check(seed)
        from protoqa_core.similarity.gaussian_process import GP_MODELS

        if model not in GP_MODELS:
            raise ValueError(f"unknown Gaussian-process model {model!r}; choose one of {', '.join(GP_MODELS)}")
        self.model = model
        self.fallback_cosine_threshold = THRESHOLD.check(
            DEFAULTS.cosine_threshold if fallback_cosine_threshold is None else fallback_cosine_threshold
        )
        self._fitted: dict[tuple[tuple[str, ...], ...], OneVsAll] = {}
        self.fallbacks = 0

    @classmethod
    def from_options(cls, options: MatchingOptions) -> GPMatcher:
        threshold = DEFAULTS.gp_threshold if options.threshold is None else options.threshold
        return cls(options.embedder_for(cls.name), threshold, options.seed)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"threshold": self.threshold, "seed": self.seed}
        if self.model != "classification":
            params["model"] = self.model
        return params

    def _classifiers(self, clusters: Sequence[Sequence[str]]) -> OneVsAll:
        """The fitted one-vs-all models of these clusters, cached by cluster contents."""
        key = tuple(tuple(c) for c in clusters)
        cached = self._fitted.get(key)
        if cached is not None:
            return cached
        answers = sorted({a for c in clusters for a in c})
        train = _unit_rows(self.embedder.embed(answers))
        members = np.array(
            [[a in inside for inside in (set(c) for c in clusters)] for a in answers], dtype=bool
        ).reshape(len(answers), len(clusters))
        from protoqa_core.similarity.gaussian_process import fit_one_vs_all

        fitted = fit_one_vs_all(train, members, model=self.model, seed=self.seed)
        if len(self._fitted) >= 64:  # the same clusters are usually matched again right away, if at all
            self._fitted.pop(next(iter(self._fitted)))
        self._fitted[key] = fitted
        return fitted

    def cluster_probabilities(self, samples: Sequence[str], clusters: Sequence[Sequence[str]]) -> np.ndarray:
        """``P[i, c]``: probability that sample ``i`` belongs to cluster ``c`` (the regression's mean with
        ``model="regression"``)."""
        test = _unit_rows(self.embedder.embed(list(samples)))
        return self._classifiers(clusters).scores(test)

    def match(self, samples: Sequence[str], clusters: Sequence[Sequence[str]]) -> list[tuple[int, ...]]:
        if not samples:
            return []
        if sum(1 for c in clusters if c) < 2:
            self.fallbacks += 1
            warnings.warn(
                "the Gaussian-process matcher needs at least two clusters to train; "
                f"matching this question by cosine similarity >= {self.fallback_cosine_threshold} instead",
                RuntimeWarning,
                stacklevel=2,
            )
            return CosineMatcher(self.embedder, self.fallback_cosine_threshold).match(samples, clusters)
        return best_clusters(self.cluster_probabilities(samples, clusters), self.threshold, strict=True)


def make_matcher(
    name: str,
    embedder: Optional[Embedder] = None,
    *,
    threshold: Optional[float] = None,
    seed: int = 0,
    all_stopword_match: bool = True,
) -> Matcher:
    """The matcher called ``name`` (``wordnet``, ``cosine``, ``gp``), with default thresholds.

    >>> make_matcher("wordnet").name
    'wordnet'
    """
    options = MatchingOptions(embedder, threshold, seed, all_stopword_match)
    return MATCHINGS.get(name).from_options(options)
