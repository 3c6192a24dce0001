"""One question of the agreement study: its answer sets, gold KLs, every setting's KLs and the baseline.

:class:`QuestionStudy` caches each question's clusters and matches so that every setting and
sampling reuses them; :class:`Toolkit` holds what the questions share (embedder, clusterers,
one matcher per threshold); :func:`mean_spearman` measures the agreement with the gold KL.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.distributions import human_counts, kl_divergence, laplace_smoothed, model_counts
from cfc_probeval.embedders import Embedder, get_embedder
from cfc_probeval.inputs import QuestionTargets, read_targets
from cfc_probeval.matching import GPMatcher, Matcher, make_matcher
from cfc_probeval.probeval import ProbEval, normalized_sample_counts
from cfc_probeval.results import AnswerCluster
from protoqa_core.io.records import Cluster
from protoqa_core.ranking import rank_by_frequency
from protoqa_core.similarity import get_similarity
from protoqa_core.text import normalize_prediction
from protoqa_metric.scoring import score_matrix

from .design import CLUSTERING_LIMITS, POOLED_RESAMPLES, STUDY_SEED, DevSet, Setting
from .sampling import (
    SAMPLINGS,
    STRATIFIED_ANSWERS,
    AnswerSet,
    QuestionPool,
    build_pools,
    draw_answer_sets,
    read_annotations,
)
from .stats import RESAMPLES, bootstrap_interval, interval, spearman

__all__ = [
    "Correlation",
    "mean_spearman",
    "gold_kl",
    "baseline_score",
    "Toolkit",
    "QuestionStudy",
    "load_dev_set",
    "Dev",
    "evaluate_settings",
    "annotations_are_ground_truth",
]


@dataclass(frozen=True)
class Correlation:
    """Spearman correlation with the gold KL: per-question mean (two ways), pooled, with intervals.

    Attributes:
        mean: mean over all questions, a question with a constant side counting 0 (the authors' way).
        per_question: question id -> correlation (only defined ones).
        constant: questions where one side was constant over the sets.
        mean_dropped: mean over the questions with a defined correlation (NaN if none).
        pooled: Spearman over every set of every question together.
        ci: ``{"mean" | "mean_dropped" | "pooled": {"low", "high"} or None}``, 95% bootstrap over questions.
    """

    mean: float
    per_question: Mapping[str, float]
    constant: tuple[str, ...]
    mean_dropped: float = math.nan
    pooled: float = math.nan
    ci: Mapping[str, Optional[Mapping[str, float]]] = field(default_factory=dict)

    @property
    def num_questions(self) -> int:
        """How many questions have a defined correlation."""
        return len(self.per_question)


def mean_spearman(
    scores: Mapping[str, Sequence[float]],
    gold: Mapping[str, Sequence[float]],
    *,
    resamples: int = RESAMPLES,
    pooled_resamples: int = POOLED_RESAMPLES,
    seed: int = 0,
) -> Correlation:
    """Per-question Spearman correlation of ``scores`` with ``gold``: mean (constant = 0), mean of defined, pooled.

    >>> c = mean_spearman({"a": [1, 2, 3], "b": [1, 1, 1]}, {"a": [0.1, 0.3, 0.2], "b": [1, 2, 3]}, resamples=20)
    >>> c.mean, c.mean_dropped, c.constant
    (0.25, 0.5, ('b',))
    """
    ids = list(scores)
    xs, ys, rhos = [], [], []
    for qid in ids:
        x, y = np.asarray(scores[qid], dtype=np.float64), np.asarray(gold[qid], dtype=np.float64)
        if x.shape != y.shape:
            raise ValueError(f"question {qid}: {x.size} scores for {y.size} gold values")
        xs.append(x)
        ys.append(y)
        rhos.append(spearman(x, y))
    values = {qid: r for qid, r in zip(ids, rhos, strict=True) if not math.isnan(r)}
    constant = tuple(qid for qid, r in zip(ids, rhos, strict=True) if math.isnan(r))
    as_zero = np.array([0.0 if math.isnan(r) else r for r in rhos])
    defined = np.array([not math.isnan(r) for r in rhos])

    def mean_zero(idx: np.ndarray) -> float:
        return float(as_zero[idx].mean())

    def mean_defined(idx: np.ndarray) -> float:
        keep = idx[defined[idx]]
        return float(as_zero[keep].mean()) if keep.size else math.nan

    def pooled(idx: np.ndarray) -> float:
        return spearman(np.concatenate([xs[i] for i in idx]), np.concatenate([ys[i] for i in idx]))

    everything = np.arange(len(ids))
    if not ids:
        return Correlation(math.nan, {}, (), math.nan, math.nan, {})
    ci = {
        name: interval(bootstrap_interval(stat, len(ids), resamples=n, seed=seed)) if n else None
        for name, stat, n in (
            ("mean", mean_zero, resamples),
            ("mean_dropped", mean_defined, resamples),
            ("pooled", pooled, min(resamples, pooled_resamples)),
        )
    }
    return Correlation(mean_zero(everything), values, constant, mean_defined(everything), pooled(everything), ci)


def gold_kl(cluster_counts: Sequence[float], answers_per_category: Sequence[float]) -> float:
    """The gold KL of an answer set: human clusters, human matching, Laplace smoothing, KL(P_G || P_H).

    ``answers_per_category`` has one entry per human cluster and "wrong" last.

    >>> round(gold_kl([6, 4], [5, 3, 2]), 4)  # P_G = [7, 5, 1] / 13, P_H = [6, 4, 3] / 13
    0.0843
    """
    counts = np.asarray(answers_per_category, dtype=np.float64)
    if len(counts) != len(cluster_counts) + 1:
        raise ValueError(f'{len(counts)} category counts for {len(cluster_counts)} clusters plus "wrong"')
    return kl_divergence(laplace_smoothed(human_counts(cluster_counts)), laplace_smoothed(counts))


def baseline_score(
    answers: Mapping[str, int],
    clusters: Sequence[Cluster],
    similarity_row: Callable[[str], Sequence[float]],
    max_answers: int = 10,
) -> float:
    """1 - Max Answers@k of an answer set, its answers ranked by :func:`rank_by_frequency`.

    ``answers`` are the set's answers with counts (normalized and merged by the ranker,
    ties in order of first appearance); ``similarity_row(answer)`` gives the unrounded
    WordNet similarity of a normalized answer to every cluster (rounded here, as the
    ProtoQA metric does).

    >>> cl = [Cluster("a", ("dog",), 3), Cluster("b", ("cat",), 1)]
    >>> round(baseline_score({"cat": 5, "dog": 1}, cl, lambda s: [float(s == "dog"), float(s == "cat")],
    ...                      max_answers=1), 4)  # "cat" claims 1 of the 3 an oracle gets
    0.6667
    """
    # A drawn set lists its answers category by category (gold clusters first, "wrong" last);
    # that order would leak the gold matching into tie-breaks, so the set is given in
    # alphabetical order, which then breaks the ties.
    ranked = rank_by_frequency(dict(sorted(answers.items())), max_answers)
    matrix = np.array([similarity_row(a) for a in ranked], dtype=np.float64).reshape(len(ranked), len(clusters))
    return 1.0 - score_matrix(matrix, clusters, max_answers=max_answers, rounded=True, predictions=ranked).score


class Toolkit:
    """What every question of a study shares: the embedder, ProbEval's clusterers and one matcher per threshold.

    Matchers come from :func:`~cfc_probeval.matching.make_matcher`, one per
    ``(matching, threshold)`` and never changed afterwards: one
    :class:`~cfc_probeval.matching.WordNetMatcher` serves every clustering (a (sample,
    answer) pair is scored once), and each GP matcher keeps its fitted classifiers.
    """

    def __init__(self, embedder: Union[str, Embedder, None] = None, seed: int = STUDY_SEED) -> None:
        self.embedder = get_embedder(embedder)
        self.seed = seed
        self._probevals: dict[tuple, ProbEval] = {}
        self._matchers: dict[tuple[str, Optional[float]], Matcher] = {}

    @property
    def gp_fallbacks(self) -> int:
        """Questions the GP matchers matched by cosine similarity because they had a single cluster."""
        return sum(m.fallbacks for m in self._matchers.values() if isinstance(m, GPMatcher))

    def probeval(self, setting: Setting) -> ProbEval:
        """The ProbEval configuration that makes a setting's clusters (cached per clustering).

        >>> Toolkit("char-ngrams").probeval(Setting("human", "wordnet")).clustering_name
        'human'
        """
        key = (setting.clustering, setting.clustering_params)
        pe = self._probevals.get(key)
        if pe is None:
            options = dict(setting.clustering_params) | dict(CLUSTERING_LIMITS.get(setting.clustering, ()))
            pe = ProbEval(
                setting.clustering, self.matcher("wordnet"), embedder=self.embedder, seed=self.seed, **options
            )
            self._probevals[key] = pe
        return pe

    def matcher(self, matching: str, threshold: Optional[float] = None) -> Matcher:
        """The matcher of a matching at a threshold (one instance per pair, built once).

        >>> Toolkit("char-ngrams").matcher("cosine", 0.7).params()
        {'threshold': 0.7}
        """
        key = (matching, None if threshold is None else float(threshold))
        matcher = self._matchers.get(key)
        if matcher is None:
            matcher = make_matcher(matching, self.embedder, threshold=key[1], seed=self.seed)
            self._matchers[key] = matcher
        return matcher

    def match(
        self, setting: Setting, samples: Sequence[str], clusters: Sequence[AnswerCluster]
    ) -> list[tuple[int, ...]]:
        """Cluster indices of every sample under a setting.

        >>> from cfc_probeval.results import AnswerCluster
        >>> clusters = [AnswerCluster("c0", ("dog",), 3, "dog"), AnswerCluster("c1", ("cat",), 1, "cat")]
        >>> Toolkit("char-ngrams").match(Setting("human", "wordnet"), ["dogs", "car"], clusters)
        [(0,), ()]
        """
        return self.matcher(setting.matching, setting.threshold).match(list(samples), [c.answers for c in clusters])


@dataclass
class QuestionStudy:
    """One question: its pool, its answer sets per sampling, their gold KLs, and cached clusters and matches."""

    truth: QuestionTargets
    pool: QuestionPool
    sets: dict[str, list[AnswerSet]]
    annotations_are_ground_truth: bool = False
    gold: dict[str, list[float]] = field(default_factory=dict, init=False)
    _normalized: dict[str, list[tuple[list[str], list[int]]]] = field(default_factory=dict, init=False, repr=False)
    _pool_strings: list[str] = field(default_factory=list, init=False, repr=False)
    _clusters: dict[tuple, tuple[AnswerCluster, ...]] = field(default_factory=dict, init=False, repr=False)
    _matches: dict[tuple, dict[str, tuple[int, ...]]] = field(default_factory=dict, init=False, repr=False)
    _kls: dict[tuple, list[float]] = field(default_factory=dict, init=False, repr=False)
    _similarity_rows: dict[str, list[float]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        counts = [c.count for c in self.truth.clusters]
        for sampling, sets in self.sets.items():
            self.gold[sampling] = [gold_kl(counts, s.gold) for s in sets]
            merged = [normalized_sample_counts(s.answers) for s in sets]
            self._normalized[sampling] = [(list(m), list(m.values())) for m in merged]
        self._pool_strings = sorted({normalize_prediction(a) for c in self.pool.categories for a in c.strings})

    @property
    def question_id(self) -> str:
        """The question's id."""
        return self.truth.question_id

    def strings_to_embed(self) -> set[str]:
        """Every string an automatic setting may embed: ground-truth answers and normalized pool answers."""
        return {a for a, n in self.truth.answer_counts.items() if n > 0} | set(self._pool_strings)

    def clusters(self, toolkit: Toolkit, setting: Setting) -> tuple[AnswerCluster, ...]:
        """The setting's ground-truth clusters (computed once per clustering and parameters)."""
        key = (setting.clustering, setting.clustering_params)
        if key not in self._clusters:
            self._clusters[key] = tuple(toolkit.probeval(setting).clusters_for(self.truth))
        return self._clusters[key]

    def matches(self, toolkit: Toolkit, setting: Setting) -> dict[str, tuple[int, ...]]:
        """Every pool answer's clusters under the setting (computed once per setting)."""
        key = (setting.clustering, setting.clustering_params, setting.matching, setting.threshold)
        if key not in self._matches:
            clusters = self.clusters(toolkit, setting)
            self._matches[key] = dict(
                zip(self._pool_strings, toolkit.match(setting, self._pool_strings, clusters), strict=True)
            )
        return self._matches[key]

    def kls(self, toolkit: Toolkit, setting: Setting, sampling: str) -> list[float]:
        """The setting's KL for every set of a sampling, as :meth:`ProbEval.score_question` computes it.

        The matches of the question's pool strings are computed once per setting; each
        set then takes ProbEval's steps (:func:`~cfc_probeval.distributions.model_counts`,
        Laplace smoothing, KL) on its normalized answers. The KLs are kept per setting
        and sampling, so held-out and in-sample scoring share them where the parameters agree.
        """
        key = (setting, sampling)
        if key in self._kls:
            return list(self._kls[key])
        out = self.kls_given(self.clusters(toolkit, setting), self.matches(toolkit, setting), sampling)
        self._kls[key] = out
        return list(out)

    @property
    def pool_strings(self) -> list[str]:
        """The normalized answers of the question's pool (every answer a set can hold), sorted."""
        return list(self._pool_strings)

    def kls_given(
        self, clusters: Sequence[AnswerCluster], matches: Mapping[str, Sequence[int]], sampling: str
    ) -> list[float]:
        """The KL of every set of a sampling under given clusters and matches of :attr:`pool_strings`."""
        p_g = laplace_smoothed(human_counts([c.count for c in clusters]))
        out = []
        for strings, counts in self._normalized[sampling]:
            h = model_counts([matches[s] for s in strings], counts, len(clusters))
            out.append(kl_divergence(p_g, laplace_smoothed(h)))
        return out

    def _similarity_row(self, answer: str) -> list[float]:
        row = self._similarity_rows.get(answer)
        if row is None:
            wordnet = get_similarity("wordnet")
            row = [wordnet.best(answer, c.answers) for c in self.truth.clusters]
            self._similarity_rows[answer] = row
        return row

    def baseline(self, sampling: str) -> list[float]:
        """1 - Max Answers@10 (WordNet) of every set of a sampling."""
        return [baseline_score(s.answers, self.truth.clusters, self._similarity_row) for s in self.sets[sampling]]


def load_dev_set(
    data_dir: Union[str, Path],
    dev_set: DevSet,
    *,
    num_questions: Optional[int] = None,
    num_sets: int = 50,
    set_size: Optional[int] = None,
    seed: int = 0,
    samplings: Sequence[str] = SAMPLINGS,
    procedure: str = "authors",
) -> list[QuestionStudy]:
    """The study's questions of one dev set (the first ``num_questions`` annotated ones), with their sets drawn.

    ``procedure``: ``authors`` (50 stratified ground-truth answers added to each pool, set
    sizes scaled to the pool, without replacement) or ``pool`` (sets of ``set_size``
    answers, default the pool's size, with replacement); see :mod:`~studies.validation.sampling`.

    >>> qs = load_dev_set("../shared/data", DEV_SETS[1], num_questions=2, num_sets=3)  # doctest: +SKIP
    >>> [len(q.sets["centered"]) for q in qs]  # doctest: +SKIP
    [3, 3]
    """
    data_dir = Path(data_dir)
    truths = read_targets(data_dir / dev_set.targets)
    annotations = read_annotations(data_dir / dev_set.annotations)
    pools = build_pools(truths, annotations, stratified=STRATIFIED_ANSWERS if procedure == "authors" else 0, seed=seed)
    ids = [qid for qid in annotations if qid in pools]
    if num_questions is not None:
        ids = ids[:num_questions]
    return [
        QuestionStudy(
            truths[qid],
            pools[qid],
            {
                s: draw_answer_sets(pools[qid], s, num_sets, size=set_size, seed=seed, procedure=procedure)
                for s in samplings
            },
            annotations_are_ground_truth(truths[qid], annotations[qid]),
        )
        for qid in ids
    ]


Dev = dict[str, list[QuestionStudy]]
"""Data set name -> its questions with their answer sets."""


def evaluate_settings(
    studies: Sequence[QuestionStudy], toolkit: Toolkit, settings: Sequence[Setting], sampling: str
) -> dict[Setting, dict[str, list[float]]]:
    """Every setting's KLs of every set of a sampling, question by question: setting -> question id -> KLs.

    >>> qs = load_dev_set("../shared/data", DEV_SETS[1], num_questions=2, num_sets=3)  # doctest: +SKIP
    >>> setting = Setting("human", "wordnet")
    >>> [len(v) for v in evaluate_settings(qs, Toolkit(), [setting], "centered")[setting].values()]  # doctest: +SKIP
    [3, 3]
    """
    # Question by question, so each question's clusterings and GP classifiers are
    # computed once and used by every setting while still in the caches.
    out: dict[Setting, dict[str, list[float]]] = {s: {} for s in settings}
    for study in studies:
        for setting in settings:
            out[setting][study.question_id] = study.kls(toolkit, setting, sampling)
    return out


def annotations_are_ground_truth(truth: QuestionTargets, annotations: Mapping[str, Any]) -> bool:
    """Whether a question's annotated answers ("wrong" aside) are its ground-truth answers with their counts.

    >>> from protoqa_core.io.records import Cluster
    >>> from studies.validation.sampling import Annotation
    >>> gt = QuestionTargets("q", (Cluster("q.0", ("dog",), 2),), {"dog": 2})
    >>> annotations_are_ground_truth(gt, {"dog": Annotation("q.0", 2), "wrong": Annotation("wrong", 1)})
    True
    """
    annotated: dict[str, float] = {}
    for answer, ann in annotations.items():
        if ann.cluster != "wrong":
            annotated[answer] = annotated.get(answer, 0.0) + ann.count
    truth_counts = {a: float(n) for a, n in truth.answer_counts.items() if n > 0}
    return bool(annotated) and annotated == truth_counts
