"""Choosing the study's parameters: the clustering grid by K-fold cross-validation over questions,
the cosine and GP thresholds from the matching study (overall and per fold)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Optional

import numpy as np

from cfc_probeval.registry import CLUSTERINGS

from .design import DEFAULT_GRID, Grid, Setting, clustering_params, default_parameters
from .questions import Dev, QuestionStudy, Toolkit, evaluate_settings
from .sampling import SAMPLINGS
from .stats import FOLDS, fold_of, spearman

__all__ = ["TuningTable", "tune", "Tuning", "tune_study", "StudyParameters", "study_parameters"]


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
    rhos = _candidate_rhos(dev, toolkit, [c[2] for c in candidates], samplings)
    for group, _values, setting in candidates:
        _add_to_table(table, group, setting, dev, toolkit, rhos, samplings, log)
    fold = {name: fold_of([s.question_id for s in studies], folds, seed) for name, studies in dev.items()}

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


_Rhos = dict[str, dict[str, dict[Setting, dict[str, float]]]]
"""Data set -> sampling -> setting -> question id -> Spearman with the gold KL (constant = 0)."""


def _candidate_rhos(
    dev: Mapping[str, Sequence[QuestionStudy]], toolkit: Toolkit, settings: Sequence[Setting], samplings: Sequence[str]
) -> _Rhos:
    """Every candidate's per-question correlations, computed once; the folds only select questions."""
    rhos: _Rhos = {}
    for name, studies in dev.items():
        rhos[name] = {}
        for sampling in samplings:
            gold = {s.question_id: s.gold[sampling] for s in studies}
            scored = evaluate_settings(studies, toolkit, settings, sampling)
            rhos[name][sampling] = {setting: _rhos(scored[setting], gold) for setting in settings}
    return rhos


def _add_to_table(
    table: TuningTable,
    group: str,
    setting: Setting,
    dev: Mapping[str, Sequence[QuestionStudy]],
    toolkit: Toolkit,
    rhos: _Rhos,
    samplings: Sequence[str],
    log: Callable[[str], None],
) -> None:
    """One candidate's row of the :class:`TuningTable`: its correlations, criterion, clusters and group."""
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
