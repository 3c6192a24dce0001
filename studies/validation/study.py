"""The agreement study: does automatic ProbEval rank answer sets the way the gold procedure does?

For each dev question, answer sets are drawn (:mod:`studies.validation.sampling`)
and each set is scored

* by the **gold procedure**: the human clusters, every answer in the category the
  annotators put it in, Laplace smoothing and ``KL(P_G || P_H)``
  (:func:`gold_kl`, with :mod:`cfc_probeval.distributions`);
* by every **automatic setting** ``<clustering>+<matching>``: exactly
  :meth:`cfc_probeval.ProbEval.score_question` (normalized answers, the
  setting's clusters and matcher, the same smoothing and KL), with the clusters
  and the matching of every pool answer computed once per question and setting
  and reused for all the question's sets;
* by the **ProtoQA baseline** ``protoqa_score``: 1 - Max Answers@10 under WordNet
  similarity, the set's distinct (normalized) answers ranked by
  :func:`~protoqa_core.ranking.rank_by_frequency` over the set in alphabetical
  order (ties alphabetical: a set lists its answers gold cluster by gold cluster, so
  first appearance would leak the gold matching), through :func:`protoqa_metric.scoring.score_matrix`.

Agreement is Spearman's correlation (``scipy.stats.spearmanr``) between a setting's
scores and the gold KL over one question's sets, averaged over questions. A question
where either side is constant has no correlation; as in the authors' code it counts
as 0 in the mean (the mean over the other questions is reported beside it). The
pooled correlation over all sets of all questions is reported too. Every figure has a
95% bootstrap interval over questions (:mod:`studies.validation.stats`).

The study runs in five steps, each a function: :func:`load_study` (answer sets and
gold KLs), :func:`embed_study` (every string once, in one sorted batch),
:func:`tune_study` (the clustering grid, K-fold), :func:`score_study` (every setting
with its held-out and in-sample parameters) and :func:`summarize_study`;
:func:`run_study` chains them. Clusterings and matchers come from ProbEval's own
registries (:func:`~cfc_probeval.clustering.make_clusterer` through
:class:`~cfc_probeval.ProbEval`, :func:`~cfc_probeval.matching.make_matcher`, one
matcher per matching and threshold); samples are normalized by
:func:`~cfc_probeval.probeval.normalized_sample_counts`. The study's own settings
(seed, K-means limits, the parameters used when nothing is tuned) are written here,
not read from :data:`~cfc_probeval.defaults.DEFAULTS`, so that its figures do not move
when ProbEval's defaults do.

Parameters are chosen with K-fold cross-validation over questions: the clustering
parameters (:class:`Grid`, :func:`tune`) by the correlation averaged over the samplings
and the two dev sets, tried with WordNet matching; the cosine and GP thresholds by
matching F1 against the annotators' assignments on ProtoQA dev
(:mod:`studies.validation.matching_study`). Each question is scored with the
parameters chosen without it (held out); the parameters chosen on all questions are
the recommended ones, and their in-sample figures are reported as a secondary table.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.clustering import CLUSTERINGS
from cfc_probeval.distributions import human_counts, kl_divergence, laplace_smoothed, model_counts
from cfc_probeval.embedders import Embedder, get_embedder
from cfc_probeval.inputs import QuestionTargets, read_targets
from cfc_probeval.matching import MATCHINGS, GPMatcher, Matcher, make_matcher
from cfc_probeval.probeval import ProbEval, normalized_sample_counts
from cfc_probeval.results import AnswerCluster
from protoqa_core.io.readers import Cluster
from protoqa_core.ranking import rank_by_frequency
from protoqa_core.similarity import get_similarity
from protoqa_core.text import normalize_prediction
from protoqa_metric.scoring import score_matrix

from .sampling import (
    SAMPLINGS,
    STRATIFIED_ANSWERS,
    AnswerSet,
    QuestionPool,
    build_pools,
    draw_answer_sets,
    read_annotations,
)
from .stats import FOLDS, RESAMPLES, bootstrap_interval, fold_of, interval, spearman

__all__ = [
    "DevSet",
    "DEV_SETS",
    "CLUSTERINGS",
    "MATCHINGS",
    "BASELINE",
    "PAPER_FIGURES",
    "Grid",
    "DEFAULT_GRID",
    "Setting",
    "Correlation",
    "StudyResult",
    "gold_kl",
    "baseline_score",
    "mean_spearman",
    "default_parameters",
    "UNTUNED_PARAMETERS",
    "CLUSTERING_LIMITS",
    "STUDY_SEED",
    "TuningTable",
    "Tuning",
    "StudyParameters",
    "load_study",
    "embed_study",
    "tune_study",
    "study_parameters",
    "score_study",
    "summarize_study",
    "final_settings",
    "QuestionStudy",
    "Toolkit",
    "load_dev_set",
    "run_study",
]

STUDY_SEED = 0
"""Seed of K-means and the GP classifiers in every setting."""

UNTUNED_PARAMETERS: dict[str, Any] = {
    "hac_linkage": "complete",
    "hac_threshold": 0.3,
    "xmeans_k_init": 16,
    "gmeans_k_init": 4,
    "cosine_threshold": 0.6,
    "gp_threshold": 0.4,
}
"""The parameters a setting uses when they are not tuned (``--no-tune``, or a group left out of the grid),
written out here rather than read from ProbEval's defaults: G-means from 4 centers, cosine 0.6 and GP 0.4 as
ProbEval's automatic default and thresholds; HAC complete linkage at 0.3 and X-means from 16 centers."""

CLUSTERING_LIMITS: dict[str, tuple[tuple[str, Any], ...]] = {
    "xmeans": (("k_max", 20),),
    "gmeans": (("k_max", 20), ("alpha", 0.0001)),
}
"""Fixed (not tuned) options of X-means and G-means, passed to ProbEval explicitly."""

POOLED_RESAMPLES = 200
"""Bootstrap resamples of the pooled correlation's interval (each re-ranks every set of every question)."""

BASELINE = "protoqa_score"
"""Key of the ProtoQA baseline (1 - Max Answers@10, WordNet) in the result tables."""

PAPER_FIGURES: dict[str, dict[str, float]] = {
    "protoqa_dev": {
        "human+wordnet": 0.752,
        "hac+wordnet": 0.698,
        "gmeans+wordnet": 0.681,
        "xmeans+wordnet": 0.669,
        BASELINE: 0.193,
    },
    "cfc_dev": {
        "human+wordnet": 0.788,
        "hac+wordnet": 0.728,
        "gmeans+wordnet": 0.721,
        "xmeans+wordnet": 0.728,
        BASELINE: 0.257,
    },
}
"""docs/spec.md section 2: the paper's dev-set correlations under centered sampling."""


@dataclass(frozen=True)
class DevSet:
    """A dev set of the study: targets and the gold matching of an annotated answer pool (paths under the data dir)."""

    name: str
    label: str
    targets: str
    annotations: str


DEV_SETS = (
    DevSet(
        "protoqa_dev",
        "ProtoQA dev",
        "protoqa/dev.crowdsourced.jsonl",
        "probeval_validation/protoqa_dev.gpt2.samples.annotated.json",
    ),
    DevSet("cfc_dev", "CFC dev", "cfc/dev.targets.jsonl", "cfc/dev.predictions.human.annotated.json"),
)


@dataclass(frozen=True)
class Grid:
    """The candidate parameters tried on the dev sets (each list in the order tried; ties keep the first)."""

    hac_linkage: tuple[str, ...] = ("average", "complete", "single")
    hac_threshold: tuple[float, ...] = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
    xmeans_k_init: tuple[int, ...] = (1, 2, 4, 8, 16)
    gmeans_k_init: tuple[int, ...] = (1, 2, 4, 8, 16)
    cosine_threshold: tuple[float, ...] = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    gp_threshold: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7)

    def as_dict(self) -> dict[str, list]:
        """Every candidate list, JSON-ready."""
        return {f.name: list(getattr(self, f.name)) for f in fields(self)}


DEFAULT_GRID = Grid()


def default_parameters() -> dict[str, Any]:
    """The tunable parameters when nothing is tuned (a copy of :data:`UNTUNED_PARAMETERS`).

    >>> sorted(default_parameters())
    ['cosine_threshold', 'gmeans_k_init', 'gp_threshold', 'hac_linkage', 'hac_threshold', 'xmeans_k_init']
    """
    return {name: UNTUNED_PARAMETERS[name] for name in Grid.__dataclass_fields__}


@dataclass(frozen=True)
class Setting:
    """An automatic ProbEval setting: clustering and its parameters, matching and its threshold.

    >>> Setting("hac", "wordnet", (("linkage", "average"), ("distance_threshold", 0.5))).key
    'hac+wordnet'
    """

    clustering: str
    matching: str
    clustering_params: tuple[tuple[str, Any], ...] = ()
    threshold: Optional[float] = None

    @property
    def key(self) -> str:
        """``<clustering>+<matching>``, the key in the result tables."""
        return f"{self.clustering}+{self.matching}"

    @property
    def label(self) -> str:
        """The key with every parameter, e.g. ``hac(linkage=average,distance_threshold=0.5)+cosine(0.7)``."""
        inner = ",".join(f"{k}={v}" for k, v in self.clustering_params)
        clustering = f"{self.clustering}({inner})" if inner else self.clustering
        matching = self.matching if self.threshold is None else f"{self.matching}({self.threshold})"
        return f"{clustering}+{matching}"


def clustering_params(clustering: str, params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The :class:`~cfc_probeval.ProbEval` keyword arguments of a clustering from the tunable parameters.

    >>> clustering_params("gmeans", {"gmeans_k_init": 8})
    (('k_init', 8),)
    """
    if clustering == "hac":
        return (("linkage", params["hac_linkage"]), ("distance_threshold", params["hac_threshold"]))
    if clustering in ("xmeans", "gmeans"):
        return (("k_init", params[f"{clustering}_k_init"]),)
    if clustering == "human":
        return ()
    raise ValueError(f"unknown clustering {clustering!r}; choose one of {', '.join(CLUSTERINGS.names())}")


def matching_threshold(matching: str, params: Mapping[str, Any]) -> Optional[float]:
    """The threshold of a matching from the tunable parameters (None for WordNet).

    >>> matching_threshold("wordnet", default_parameters()) is None
    True
    """
    if matching == "wordnet":
        return None
    if matching in ("cosine", "gp"):
        return float(params[f"{matching}_threshold"])
    raise ValueError(f"unknown matching {matching!r}; choose one of {', '.join(MATCHINGS.names())}")


def final_settings(
    params: Mapping[str, Any],
    clusterings: Sequence[str] = CLUSTERINGS.names(),
    matchings: Sequence[str] = MATCHINGS.names(),
) -> list[Setting]:
    """Every ``clustering x matching`` setting with the given parameters.

    >>> [s.key for s in final_settings(default_parameters(), ["human"], ["wordnet", "gp"])]
    ['human+wordnet', 'human+gp']
    """
    return [
        Setting(c, m, clustering_params(c, params), matching_threshold(m, params))
        for c in clusterings
        for m in matchings
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
        clusters = self.clusters(toolkit, setting)
        matches = self.matches(toolkit, setting)
        p_g = laplace_smoothed(human_counts([c.count for c in clusters]))
        out = []
        for strings, counts in self._normalized[sampling]:
            h = model_counts([matches[s] for s in strings], counts, len(clusters))
            out.append(kl_divergence(p_g, laplace_smoothed(h)))
        self._kls[key] = out
        return list(out)

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


@dataclass
class StudyResult:
    """Everything the study measured, ready for :mod:`studies.validation.report`.

    Attributes:
        correlations: data set -> sampling -> setting key (or ``protoqa_score``) -> :class:`Correlation`,
            every question scored with the parameters chosen without it (held out).
        settings: setting key -> full label with parameters.
        chosen: the parameters used for the final settings.
        tuned: whether ``chosen`` came from the grid (else from :data:`UNTUNED_PARAMETERS`).
        tuning: every grid candidate's correlations (see :func:`tune`); None when not tuned.
        scores: data set -> sampling -> setting key, baseline or ``"gold"`` -> question id -> per-set scores.
        info: run parameters, pool statistics, timings.
        in_sample: as ``correlations``, with the parameters chosen on all questions.
    """

    correlations: dict[str, dict[str, dict[str, Correlation]]]
    settings: dict[str, str]
    chosen: dict[str, Any]
    tuned: bool
    tuning: Optional[TuningTable]
    scores: dict[str, dict[str, dict[str, dict[str, list[float]]]]]
    info: dict[str, Any]
    in_sample: dict[str, dict[str, dict[str, Correlation]]] = field(default_factory=dict)

    def table(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{data set: {sampling: {key: mean correlation}}}`` (the layout of ``validation.json``)."""
        return {
            ds: {sampling: {key: c.mean for key, c in by_key.items()} for sampling, by_key in by_sampling.items()}
            for ds, by_sampling in self.correlations.items()
        }


def _evaluate(
    studies: Sequence[QuestionStudy], toolkit: Toolkit, settings: Sequence[Setting], sampling: str
) -> dict[Setting, dict[str, list[float]]]:
    # Question by question, so each question's clusterings and GP classifiers are
    # computed once and used by every setting while still in the caches.
    out: dict[Setting, dict[str, list[float]]] = {s: {} for s in settings}
    for study in studies:
        for setting in settings:
            out[setting][study.question_id] = study.kls(toolkit, setting, sampling)
    return out


def _candidates(grid: Grid) -> list[tuple[str, dict[str, Any], Setting]]:
    """(parameter group, parameter values, setting to try) for every clustering grid point."""
    base = default_parameters()
    out: list[tuple[str, dict[str, Any], Setting]] = []
    for linkage in grid.hac_linkage:
        for threshold in grid.hac_threshold:
            values = {"hac_linkage": linkage, "hac_threshold": threshold}
            out.append(("hac", values, Setting("hac", "wordnet", clustering_params("hac", {**base, **values}))))
    for name in ("xmeans", "gmeans"):
        for k in getattr(grid, f"{name}_k_init"):
            values = {f"{name}_k_init": k}
            out.append((name, values, Setting(name, "wordnet", clustering_params(name, {**base, **values}))))
    return out


def _rhos(scores: Mapping[str, Sequence[float]], gold: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Per-question Spearman with the gold KL, a constant side counting 0."""
    out = {}
    for qid, values in scores.items():
        rho = spearman(values, gold[qid])
        out[qid] = 0.0 if math.isnan(rho) else rho
    return out


@dataclass
class TuningTable:
    """Every clustering grid candidate's agreement, by candidate label.

    Attributes:
        correlations: data set -> sampling -> label -> mean per-question correlation (constant = 0).
        per_data_set: data set -> label -> mean over the samplings.
        mean: label -> the criterion (mean over the data sets).
        clusters: data set -> label -> mean clusters per question.
        group: label -> parameter group (``hac``, ``xmeans``, ``gmeans``).
        fold_choices: group -> fold -> label chosen without that fold.
    """

    correlations: dict[str, dict[str, dict[str, float]]]
    per_data_set: dict[str, dict[str, float]]
    mean: dict[str, float] = field(default_factory=dict)
    clusters: dict[str, dict[str, float]] = field(default_factory=dict)
    group: dict[str, str] = field(default_factory=dict)
    fold_choices: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def empty(cls, data_sets: Iterable[str], samplings: Sequence[str]) -> TuningTable:
        """A table with a slot per data set and sampling and no candidate yet.

        >>> TuningTable.empty(["cfc_dev"], ["centered"]).correlations
        {'cfc_dev': {'centered': {}}}
        """
        names = list(data_sets)
        return cls(
            {n: {s: {} for s in samplings} for n in names}, {n: {} for n in names}, clusters={n: {} for n in names}
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, in the field order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def tune(
    dev: Mapping[str, Sequence[QuestionStudy]],
    toolkit: Toolkit,
    grid: Grid = DEFAULT_GRID,
    groups: Iterable[str] = ("hac", "xmeans", "gmeans"),
    samplings: Sequence[str] = SAMPLINGS,
    folds: int = FOLDS,
    seed: int = 0,
    log: Callable[[str], None] = lambda _: None,
) -> tuple[dict[str, Any], dict[int, dict[str, Any]], TuningTable]:
    """Pick each clustering group's parameters by the mean correlation, on all questions and per fold.

    The criterion of a candidate on a set of questions: per dev set, the per-question
    correlation (constant = 0) averaged over those questions and the samplings; then
    averaged over the dev sets. Fold ``f``'s choice uses every question not in fold ``f``
    of either dev set. Every sampling counts: centered sampling alone mostly measures how
    many answers are wrong, which a single all-embracing cluster captures as well as a
    good clustering; the error types need the clusters to be right. Each candidate's
    clusters and per-question correlations are computed once; the folds only select
    questions.

    Returns the parameters chosen on all questions (:data:`UNTUNED_PARAMETERS` for groups
    not tuned), those chosen per fold, and the :class:`TuningTable`.

    >>> dev = {"cfc_dev": load_dev_set("../shared/data", DEV_SETS[1], num_questions=4, num_sets=5)}  # doctest: +SKIP
    >>> chosen, per_fold, table = tune(dev, Toolkit("char-ngrams"), Grid(hac_threshold=(0.3, 0.5)), ["hac"])  # doctest: +SKIP
    >>> chosen["hac_threshold"] in (0.3, 0.5)  # doctest: +SKIP
    True
    """
    groups = set(groups)
    chosen = default_parameters()
    per_fold = {f: default_parameters() for f in range(folds)}
    table = TuningTable.empty(dev, samplings)
    candidates = [c for c in _candidates(grid) if c[0] in groups]
    if not candidates:
        return chosen, per_fold, table
    settings = [c[2] for c in candidates]
    fold = {name: fold_of([s.question_id for s in studies], folds, seed) for name, studies in dev.items()}
    rhos: dict[str, dict[str, dict[Setting, dict[str, float]]]] = {}
    for name, studies in dev.items():
        rhos[name] = {}
        for sampling in samplings:
            gold = {s.question_id: s.gold[sampling] for s in studies}
            scored = _evaluate(studies, toolkit, settings, sampling)
            rhos[name][sampling] = {setting: _rhos(scored[setting], gold) for setting in settings}

    def criterion(setting: Setting, left_out: Optional[int]) -> float:
        per_set = []
        for name in dev:
            per_sampling = []
            for sampling in samplings:
                kept = [r for qid, r in rhos[name][sampling][setting].items() if fold[name][qid] != left_out]
                if kept:
                    per_sampling.append(math.fsum(kept) / len(kept))
            if per_sampling:
                per_set.append(math.fsum(per_sampling) / len(per_sampling))
        return math.fsum(per_set) / len(per_set) if per_set else math.nan

    for group, _values, setting in candidates:
        per_set = []
        for name, studies in dev.items():
            here = []
            for sampling in samplings:
                values_q = rhos[name][sampling][setting]
                rho = math.fsum(values_q.values()) / len(values_q)
                table.correlations[name][sampling][setting.label] = rho
                here.append(rho)
            table.per_data_set[name][setting.label] = math.fsum(here) / len(here)
            table.clusters[name][setting.label] = float(np.mean([len(s.clusters(toolkit, setting)) for s in studies]))
            per_set.append(table.per_data_set[name][setting.label])
        table.mean[setting.label] = math.fsum(per_set) / len(per_set)
        table.group[setting.label] = group
        log(
            f"  {setting.label}: "
            + ", ".join(f"{n} {v:.3f}" for n, v in zip(dev, per_set, strict=True))
            + f", mean {table.mean[setting.label]:.3f}"
        )

    def best(
        options: Sequence[tuple[dict[str, Any], Setting]], left_out: Optional[int]
    ) -> tuple[dict[str, Any], Setting]:
        scored = [(criterion(setting, left_out), i) for i, (_, setting) in enumerate(options)]
        scored = [(v, i) for v, i in scored if not math.isnan(v)]
        top = max(scored, key=lambda vi: (vi[0], -vi[1]))[1]  # ties: the first tried
        return options[top]

    for group in sorted(groups, key=("hac", "xmeans", "gmeans").index):
        mine = [(values, setting) for g, values, setting in candidates if g == group]
        if not mine:
            continue
        values, setting = best(mine, None)
        chosen.update(values)
        table.fold_choices[group] = {}
        for f in range(folds):
            values_f, setting_f = best(mine, f)
            per_fold[f].update(values_f)
            table.fold_choices[group][str(f)] = setting_f.label
    return chosen, per_fold, table


def _thresholds(
    matching: Optional[Mapping[str, Any]],
) -> tuple[dict[str, float], dict[str, dict[int, float]], dict[str, int]]:
    """Thresholds chosen on all ProtoQA dev questions, per fold, and ProtoQA dev's question folds."""
    overall: dict[str, float] = {}
    by_fold: dict[str, dict[int, float]] = {}
    folds: dict[str, int] = {}
    if matching:
        folds = {q: int(f) for q, f in matching.get("question_folds", {}).items()}
        for name in ("cosine", "gp"):
            result = matching.get("matchers", {}).get(name)
            if result and result.get("threshold") is not None:
                overall[f"{name}_threshold"] = float(result["threshold"])
                by_fold[f"{name}_threshold"] = {int(f): float(t) for f, t in result["fold_thresholds"].items()}
    return overall, by_fold, folds


Dev = dict[str, list[QuestionStudy]]
"""Data set name -> its questions with their answer sets."""


def load_study(
    data_dir: Union[str, Path],
    dev_sets: Sequence[DevSet] = DEV_SETS,
    *,
    num_questions: Optional[int] = None,
    num_sets: int = 50,
    seed: int = 0,
    samplings: Sequence[str] = SAMPLINGS,
) -> Dev:
    """Step 1: every dev set's questions with their answer sets (authors' procedure) and gold KLs.

    >>> dev = load_study("../shared/data", DEV_SETS[1:], num_questions=2, num_sets=3)  # doctest: +SKIP
    >>> [len(q.sets["centered"]) for q in dev["cfc_dev"]]  # doctest: +SKIP
    [3, 3]
    """
    dev = {
        d.name: load_dev_set(
            data_dir, d, num_questions=num_questions, num_sets=num_sets, seed=seed, samplings=samplings
        )
        for d in dev_sets
    }
    for name, studies in dev.items():
        if not studies:
            raise ValueError(f"{name}: no question has both ground truth and annotations")
    return dev


def embed_study(dev: Dev, toolkit: Toolkit) -> int:
    """Step 2: embed every string an automatic setting may need, in one sorted batch; returns how many.

    One batch per run: the vectors do not depend on the order the questions are scored in.
    """
    strings = sorted(set().union(*(s.strings_to_embed() for ss in dev.values() for s in ss)))
    toolkit.embedder.embed(strings)
    return len(strings)


@dataclass
class Tuning:
    """Step 3's result: the clustering parameters on all questions and per fold, and the grid's table."""

    chosen: dict[str, Any]
    per_fold: dict[int, dict[str, Any]]
    table: Optional[TuningTable]

    @property
    def tuned(self) -> bool:
        """Whether the parameters came from the grid."""
        return self.table is not None


def tune_study(
    dev: Dev,
    toolkit: Toolkit,
    *,
    clusterings: Sequence[str] = CLUSTERINGS.names(),
    tune_parameters: bool = True,
    grid: Grid = DEFAULT_GRID,
    samplings: Sequence[str] = SAMPLINGS,
    folds: int = FOLDS,
    seed: int = 0,
    log: Callable[[str], None] = lambda _: None,
) -> Tuning:
    """Step 3: choose the clustering parameters on the grid (:func:`tune`), or take :data:`UNTUNED_PARAMETERS`."""
    groups = [g for g in ("hac", "xmeans", "gmeans") if g in clusterings]
    if not (tune_parameters and groups):
        return Tuning(default_parameters(), {f: default_parameters() for f in range(folds)}, None)
    log(f"tuning {', '.join(groups)} on {', '.join(samplings)} ({folds}-fold)")
    chosen, per_fold, table = tune(dev, toolkit, grid, groups, samplings, folds, seed, log)
    return Tuning(chosen, per_fold, table)


@dataclass
class StudyParameters:
    """The parameters every question is scored with: tuned clustering parameters and matching thresholds.

    Attributes:
        chosen: chosen on all questions (the recommendation; the in-sample figures use them).
        per_fold: fold -> parameters chosen without that fold's questions.
        tuned: whether the clustering parameters came from the grid.
        matching_folds: ProtoQA dev question -> its fold in the matching study.
        fold_thresholds: ``cosine_threshold``/``gp_threshold`` -> matching fold -> threshold chosen without it.
    """

    chosen: dict[str, Any]
    per_fold: dict[int, dict[str, Any]]
    tuned: bool
    matching_folds: dict[str, int] = field(default_factory=dict)
    fold_thresholds: dict[str, dict[int, float]] = field(default_factory=dict)

    def held_out(self, dev_name: str, question_id: str, fold: int) -> dict[str, Any]:
        """The parameters of one question, chosen without it (clustering: its fold; thresholds: its matching fold)."""
        params = dict(self.per_fold[fold] if self.tuned else self.chosen)
        if dev_name == "protoqa_dev" and question_id in self.matching_folds:
            for key, by in self.fold_thresholds.items():
                params[key] = by.get(self.matching_folds[question_id], params[key])
        return params


def study_parameters(tuning: Tuning, matching: Optional[Mapping[str, Any]]) -> StudyParameters:
    """The tuned clustering parameters with the thresholds of the matching study (overall and per fold).

    CFC dev questions take the thresholds chosen on all ProtoQA dev questions, which never saw them.
    """
    chosen = dict(tuning.chosen)
    per_fold = {f: dict(p) for f, p in tuning.per_fold.items()}
    overall, fold_t, matching_folds = _thresholds(matching)
    chosen.update(overall)
    for f in per_fold:
        per_fold[f].update({k: v for k, v in chosen.items() if k.endswith("_threshold") and k != "hac_threshold"})
        per_fold[f]["hac_threshold"] = per_fold[f]["hac_threshold"] if tuning.tuned else chosen["hac_threshold"]
    return StudyParameters(chosen, per_fold, tuning.tuned, matching_folds, fold_t)


@dataclass
class Scores:
    """Step 4's result: held-out and in-sample correlations, per-set scores, the held-out labels."""

    correlations: dict[str, dict[str, dict[str, Correlation]]]
    in_sample: dict[str, dict[str, dict[str, Correlation]]]
    scores: dict[str, dict[str, Any]]
    held_out_labels: dict[str, dict[str, list[str]]]


def score_study(
    dev: Dev,
    toolkit: Toolkit,
    parameters: StudyParameters,
    *,
    clusterings: Sequence[str] = CLUSTERINGS.names(),
    matchings: Sequence[str] = MATCHINGS.names(),
    samplings: Sequence[str] = SAMPLINGS,
    folds: int = FOLDS,
    seed: int = 0,
    lap: Callable[[str], None] = lambda _: None,
) -> Scores:
    """Step 4: every setting on every dev set, held out (headline, with intervals) and in sample (secondary)."""
    settings = final_settings(parameters.chosen, clusterings, matchings)
    out = Scores({}, {}, {}, {})
    for name, studies in dev.items():
        fold = fold_of([s.question_id for s in studies], folds, seed)
        per_question = {
            s.question_id: final_settings(
                parameters.held_out(name, s.question_id, fold[s.question_id]), clusterings, matchings
            )
            for s in studies
        }
        out.correlations[name], out.scores[name] = _score_dev_set(studies, toolkit, settings, samplings, per_question)
        # In-sample figures are secondary: no intervals.
        out.in_sample[name], _ = _score_dev_set(
            studies, toolkit, settings, samplings, None, baseline=False, resamples=0
        )
        out.held_out_labels[name] = {
            s.key: sorted({per_question[q][i].label for q in per_question}) for i, s in enumerate(settings)
        }
        lap(f"scoring {name}")
    return out


def set_size_sensitivity(
    data_dir: Union[str, Path],
    dev_sets: Sequence[DevSet],
    toolkit: Toolkit,
    *,
    num_questions: Optional[int],
    num_sets: int,
    seed: int,
    sizes: Sequence[int],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Human+WordNet and the baseline (centered) under the earlier ``pool`` procedure, at the pool's and given sizes."""
    rows_by_set: dict[str, dict[str, dict[str, Any]]] = {}
    for d in dev_sets:
        rows = {}
        for size in [None, *sizes]:
            studies = load_dev_set(
                data_dir,
                d,
                num_questions=num_questions,
                num_sets=num_sets,
                set_size=size,
                seed=seed,
                samplings=["centered"],
                procedure="pool",
            )
            rows["pool" if size is None else str(size)] = _centered_reference(studies, toolkit)
        rows_by_set[d.name] = rows
    return rows_by_set


def run_study(
    data_dir: Union[str, Path],
    *,
    num_questions: Optional[int] = None,
    num_sets: int = 50,
    seed: int = 0,
    embedder: Union[str, Embedder, None] = None,
    clusterings: Sequence[str] = CLUSTERINGS.names(),
    matchings: Sequence[str] = MATCHINGS.names(),
    samplings: Sequence[str] = SAMPLINGS,
    dev_sets: Sequence[DevSet] = DEV_SETS,
    tune_parameters: bool = True,
    grid: Grid = DEFAULT_GRID,
    folds: int = FOLDS,
    matching: Union[None, Mapping[str, Any], Callable[[], Optional[Mapping[str, Any]]]] = None,
    sensitivity: bool = True,
    sensitivity_sizes: Sequence[int] = (100,),
    on_parameters: Callable[[StudyParameters], None] = lambda _: None,
    log: Callable[[str], None] = lambda _: None,
) -> StudyResult:
    """Run the agreement study on the dev sets: load, embed, tune, score, summarize (see the module docstring).

    Args:
        data_dir: the folder holding ``protoqa/``, ``cfc/`` and ``probeval_validation/``.
        num_questions: study only the first N annotated questions of each dev set.
        num_sets, seed: answer sets per question and sampling (drawn by the authors'
            procedure), seed.
        embedder: embedder spec for automatic clustering, cosine and GP (default MiniLM).
        clusterings, matchings, samplings: which settings and generators to run.
        tune_parameters: choose the clustering parameters on the grid (else :data:`UNTUNED_PARAMETERS`).
        grid: the candidate clustering parameters.
        folds: folds of the cross-validation over questions.
        matching: the result of :func:`~studies.validation.matching_study.run_matching_study`
            (or a function returning it, called once the tuning is done), whose thresholds
            (overall and per fold) cosine and GP use (else :data:`UNTUNED_PARAMETERS`).
        sensitivity: also measure human+WordNet and the baseline (centered sampling) under
            the earlier ``pool`` procedure, at the pool's size and at ``sensitivity_sizes``.
        on_parameters: called with the final parameters before the scoring starts.
        log: called with progress messages.

    >>> r = run_study("../shared/data", num_questions=2, num_sets=6, embedder="char-ngrams",
    ...               clusterings=["human"], matchings=["wordnet"], tune_parameters=False)  # doctest: +SKIP
    >>> r.table()["cfc_dev"]["centered"]["human+wordnet"]  # doctest: +SKIP
    """
    for names, allowed, what in (
        (clusterings, CLUSTERINGS.names(), "clustering"),
        (matchings, MATCHINGS.names(), "matching"),
        (samplings, SAMPLINGS, "sampling"),
    ):
        for name in names:
            if name not in allowed:
                raise ValueError(f"unknown {what} {name!r}; choose from {', '.join(allowed)}")
    timings: dict[str, float] = {}
    start = last = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal last
        now = time.perf_counter()
        timings[name] = round(now - last, 2)
        log(f"{name}: {now - last:.1f} s")
        last = now

    dev = load_study(data_dir, dev_sets, num_questions=num_questions, num_sets=num_sets, seed=seed, samplings=samplings)
    lap("sampling and gold KL")
    toolkit = Toolkit(embedder, seed=STUDY_SEED)
    if any(c != "human" for c in clusterings) or any(m != "wordnet" for m in matchings):
        embed_study(dev, toolkit)
    lap("embedding")
    tuning = tune_study(
        dev,
        toolkit,
        clusterings=clusterings,
        tune_parameters=tune_parameters,
        grid=grid,
        samplings=samplings,
        folds=folds,
        seed=seed,
        log=log,
    )
    if tuning.tuned:
        lap("tuning")
    parameters = study_parameters(tuning, matching() if callable(matching) else matching)
    on_parameters(parameters)
    scored = score_study(
        dev,
        toolkit,
        parameters,
        clusterings=clusterings,
        matchings=matchings,
        samplings=samplings,
        folds=folds,
        seed=seed,
        lap=lap,
    )
    sensitivity_rows: dict[str, dict[str, dict[str, Any]]] = {}
    if sensitivity and "centered" in samplings:
        sensitivity_rows = set_size_sensitivity(
            data_dir,
            dev_sets,
            toolkit,
            num_questions=num_questions,
            num_sets=num_sets,
            seed=seed,
            sizes=sensitivity_sizes,
        )
        lap("set-size sensitivity")
    timings["total"] = round(time.perf_counter() - start, 2)
    return summarize_study(
        dev,
        toolkit,
        tuning,
        parameters,
        scored,
        clusterings=clusterings,
        matchings=matchings,
        samplings=samplings,
        num_sets=num_sets,
        seed=seed,
        num_questions=num_questions,
        folds=folds,
        grid=grid,
        sensitivity=sensitivity_rows,
        timings=timings,
    )


def summarize_study(
    dev: Dev,
    toolkit: Toolkit,
    tuning: Tuning,
    parameters: StudyParameters,
    scored: Scores,
    *,
    clusterings: Sequence[str],
    matchings: Sequence[str],
    samplings: Sequence[str],
    num_sets: int,
    seed: int,
    num_questions: Optional[int],
    folds: int,
    grid: Grid,
    sensitivity: Mapping[str, Any],
    timings: Mapping[str, float],
) -> StudyResult:
    """Step 5: the :class:`StudyResult` with the run's parameters, pool statistics and timings."""
    settings = final_settings(parameters.chosen, clusterings, matchings)
    info = {
        "num_sets": num_sets,
        "procedure": "authors",
        "stratified_answers": STRATIFIED_ANSWERS,
        "seed": seed,
        "num_questions": num_questions,
        "folds": folds,
        "resamples": RESAMPLES,
        "embedder": toolkit.embedder.name,
        "samplings": list(samplings),
        "clusterings": list(clusterings),
        "matchings": list(matchings),
        "grid": grid.as_dict() if tuning.tuned else None,
        "pools": {name: _pool_summary(studies) for name, studies in dev.items()},
        "gp_single_cluster_fallbacks": toolkit.gp_fallbacks,
        "set_size_sensitivity": dict(sensitivity),
        "held_out_settings": scored.held_out_labels,
        "fold_parameters": {str(f): p for f, p in parameters.per_fold.items()},
        "timings_s": dict(timings),
    }
    return StudyResult(
        scored.correlations,
        {s.key: s.label for s in settings},
        parameters.chosen,
        tuning.tuned,
        tuning.table,
        scored.scores,
        info,
        scored.in_sample,
    )


def _score_dev_set(
    studies: Sequence[QuestionStudy],
    toolkit: Toolkit,
    settings: Sequence[Setting],
    samplings: Sequence[str],
    per_question: Optional[Mapping[str, Sequence[Setting]]],
    baseline: bool = True,
    resamples: int = RESAMPLES,
) -> tuple[dict[str, dict[str, Correlation]], dict[str, Any]]:
    """Every setting's (and the baseline's) correlation per sampling, and the per-set scores behind them.

    ``per_question`` gives each question its own settings (in the order of ``settings``:
    the held-out parameters); None scores every question with ``settings``.
    """
    correlations: dict[str, dict[str, Correlation]] = {}
    scores: dict[str, Any] = {}
    for sampling in samplings:
        gold = {s.question_id: s.gold[sampling] for s in studies}
        by_key: dict[str, dict[str, list[float]]] = {setting.key: {} for setting in settings}
        for study in studies:
            mine = per_question[study.question_id] if per_question is not None else settings
            for setting in mine:
                by_key[setting.key][study.question_id] = study.kls(toolkit, setting, sampling)
        correlations[sampling] = {
            key: mean_spearman(values, gold, resamples=resamples) for key, values in by_key.items()
        }
        scores[sampling] = {"gold": gold, **by_key}
        if baseline:
            base = {s.question_id: s.baseline(sampling) for s in studies}
            correlations[sampling][BASELINE] = mean_spearman(base, gold, resamples=resamples)
            scores[sampling][BASELINE] = base
    return correlations, scores


def _centered_reference(studies: Sequence[QuestionStudy], toolkit: Toolkit) -> dict[str, Any]:
    """Centered-sampling correlation (with its interval) of human clusters + WordNet and of the baseline."""
    reference = Setting("human", "wordnet")
    gold = {s.question_id: s.gold["centered"] for s in studies}
    auto = _evaluate(studies, toolkit, [reference], "centered")[reference]
    baseline = {s.question_id: s.baseline("centered") for s in studies}
    sizes = [sum(x.gold) for s in studies for x in s.sets["centered"]]
    out = {}
    for key, values in ((reference.key, auto), (BASELINE, baseline)):
        c = mean_spearman(values, gold)
        out[key] = {"mean": c.mean, "ci": c.ci.get("mean"), "mean_dropped": c.mean_dropped, "pooled": c.pooled}
    out["median_set_size"] = float(np.median(sizes)) if sizes else 0.0
    return out


def _pool_summary(studies: Sequence[QuestionStudy]) -> dict[str, Any]:
    """How the answer pools of a data set were built (for the report)."""
    sources: dict[str, int] = {}
    for s in studies:
        for category in s.pool.categories[:-1]:
            sources[category.source] = sources.get(category.source, 0) + 1
    wrong_sources: dict[str, int] = {}
    for s in studies:
        wrong_sources[s.pool.categories[-1].source] = wrong_sources.get(s.pool.categories[-1].source, 0) + 1
    sizes = {sampling: [sum(x.gold) for s in studies for x in s.sets.get(sampling, [])] for sampling in SAMPLINGS}
    return {
        "questions": len(studies),
        "clusters": sum(s.pool.num_clusters for s in studies),
        "set_sizes": {
            sampling: {"median": float(np.median(v)), "min": int(min(v)), "max": int(max(v))}
            for sampling, v in sizes.items()
            if v
        },
        "stratified_answers": max((s.pool.stratified for s in studies), default=0),
        "cluster_pools": sources,
        "wrong_pools": wrong_sources,
        "mean_p_model_wrong": float(np.mean([s.pool.p_model[-1] for s in studies])),
        "annotations_are_ground_truth": sum(1 for s in studies if s.annotations_are_ground_truth),
    }


def annotations_are_ground_truth(truth: QuestionTargets, annotations: Mapping[str, Any]) -> bool:
    """Whether a question's annotated answers ("wrong" aside) are its ground-truth answers with their counts.

    >>> from protoqa_core.io.readers import Cluster
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
