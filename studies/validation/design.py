"""The agreement study's design: seeds, untuned parameters, the grid, the dev sets and the settings.

Written here rather than read from :data:`~cfc_probeval.defaults.DEFAULTS`, so that the study's
figures do not move when ProbEval's defaults do. :mod:`studies.validation.study` runs the study.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Optional

from cfc_probeval.registry import CLUSTERINGS, MATCHINGS

__all__ = [
    "STUDY_SEED",
    "UNTUNED_PARAMETERS",
    "CLUSTERING_LIMITS",
    "POOLED_RESAMPLES",
    "BASELINE",
    "PAPER_FIGURES",
    "DevSet",
    "DEV_SETS",
    "Grid",
    "DEFAULT_GRID",
    "default_parameters",
    "Setting",
    "clustering_params",
    "matching_threshold",
    "final_settings",
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
