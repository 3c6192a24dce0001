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
:func:`run_study` chains them. The study's design (seeds, grid, dev sets, settings) is
:mod:`studies.validation.design`, one question's sets and scores :mod:`studies.validation.questions`,
the tuning :mod:`studies.validation.tuning`. Clusterings and matchers come from ProbEval's own
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

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.embedders import Embedder
from cfc_probeval.registry import CLUSTERINGS, MATCHINGS
from protoqa_core.progress import track

from .design import (
    BASELINE,
    CLUSTERING_LIMITS,
    DEFAULT_GRID,
    DEV_SETS,
    PAPER_FIGURES,
    STUDY_SEED,
    UNTUNED_PARAMETERS,
    DevSet,
    Grid,
    Setting,
    default_parameters,
    final_settings,
)
from .questions import (
    Correlation,
    Dev,
    QuestionStudy,
    Toolkit,
    baseline_score,
    evaluate_settings,
    gold_kl,
    load_dev_set,
    mean_spearman,
)
from .sampling import SAMPLINGS, STRATIFIED_ANSWERS
from .stats import FOLDS, RESAMPLES, fold_of
from .tuning import StudyParameters, Tuning, TuningTable, study_parameters, tune_study

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
    _check_names(clusterings, matchings, samplings)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    lap = _lap_timer(timings, log)
    # The options every step shares, given once.
    drawn: dict[str, Any] = {"num_questions": num_questions, "num_sets": num_sets}
    shape: dict[str, Any] = {"clusterings": clusterings, "samplings": samplings, "folds": folds, "seed": seed}
    dev = load_study(data_dir, dev_sets, seed=seed, samplings=samplings, **drawn)
    lap("sampling and gold KL")
    toolkit = _embedded_toolkit(dev, embedder, clusterings, matchings)
    lap("embedding")
    tuning = tune_study(dev, toolkit, tune_parameters=tune_parameters, grid=grid, log=log, **shape)
    if tuning.tuned:
        lap("tuning")
    parameters = study_parameters(tuning, matching() if callable(matching) else matching)
    on_parameters(parameters)
    scored = score_study(dev, toolkit, parameters, matchings=matchings, lap=lap, **shape)
    rows: dict[str, dict[str, dict[str, Any]]] = {}  # the set-size sensitivity
    if sensitivity and "centered" in samplings:
        rows = set_size_sensitivity(data_dir, dev_sets, toolkit, seed=seed, sizes=sensitivity_sizes, **drawn)
        lap("set-size sensitivity")
    timings["total"] = round(time.perf_counter() - start, 2)
    return summarize_study(
        dev,
        toolkit,
        tuning,
        parameters,
        scored,
        matchings=matchings,
        grid=grid,
        sensitivity=rows,
        timings=timings,
        **drawn,
        **shape,
    )


def _embedded_toolkit(
    dev: Dev, embedder: Union[str, Embedder, None], clusterings: Sequence[str], matchings: Sequence[str]
) -> Toolkit:
    """The study's :class:`Toolkit`, every string embedded up front when an automatic setting will need them."""
    toolkit = Toolkit(embedder, seed=STUDY_SEED)
    if any(c != "human" for c in clusterings) or any(m != "wordnet" for m in matchings):
        embed_study(dev, toolkit)
    return toolkit


def _check_names(clusterings: Sequence[str], matchings: Sequence[str], samplings: Sequence[str]) -> None:
    """Raise a ValueError naming the first clustering, matching or sampling the study does not know.

    >>> _check_names(["human"], ["wordnet"], ["sideways"])
    Traceback (most recent call last):
    ...
    ValueError: unknown sampling 'sideways'; choose from centered, missing_answers, wrong_ranking, wrong_score
    """
    for names, allowed, what in (
        (clusterings, CLUSTERINGS.names(), "clustering"),
        (matchings, MATCHINGS.names(), "matching"),
        (samplings, SAMPLINGS, "sampling"),
    ):
        for name in names:
            if name not in allowed:
                raise ValueError(f"unknown {what} {name!r}; choose from {', '.join(allowed)}")


def _lap_timer(timings: dict[str, float], log: Callable[[str], None]) -> Callable[[str], None]:
    """A function that records (in ``timings``) and logs the seconds since its previous call, or since now."""
    last = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal last
        now = time.perf_counter()
        timings[name] = round(now - last, 2)
        log(f"{name}: {now - last:.1f} s")
        last = now

    return lap


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
        for study in track(studies, len(studies), f"scoring {sampling}"):
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
    auto = evaluate_settings(studies, toolkit, [reference], "centered")[reference]
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
