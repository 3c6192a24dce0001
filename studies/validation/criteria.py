"""The dev criteria of the cluster-level study and its rule: a default changes only when it loses nowhere.

A :class:`Criterion` holds one measure on one dev set for every candidate: per-question
values (cluster-level BLANC; the answer-set criterion of the CFC paper's Table 2), or
systems x questions KLs with the reference they should rank like (the system-like pools;
the system panel). Its figure is the mean over questions, or Spearman's rho of the system
means (a constant side counts 0). Every comparison of two candidates is a paired
bootstrap over the criterion's questions (:meth:`Criterion.resampled`).

:func:`verdict` applies the protocol's rule to one challenger against one incumbent:
non-inferior on every criterion (the paired interval's lower bound above minus the
criterion's margin) and better on at least one (lower bound above 0).
:func:`choose` runs it over every candidate, controls included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .selection import row_spearman

__all__ = ["Criterion", "paired", "verdict", "choose", "control_shares"]


@dataclass
class Criterion:
    """One dev criterion on one dev set, for every candidate (higher is better).

    >>> c = Criterion("blanc", "d", 0.01, per_question=np.array([[0.5, 0.7], [0.4, 0.4]]))
    >>> c.values().tolist(), c.num_questions
    ([0.6, 0.4], 2)
    >>> k = Criterion("panel", "d", 0.03, kls=np.array([[[1.0], [2.0]], [[2.0], [1.0]]]),
    ...               reference=np.array([[1.0], [2.0]]))
    >>> k.values().tolist()
    [1.0, -1.0]
    """

    name: str
    dev_set: str
    margin: float
    per_question: Optional[np.ndarray] = None  # candidates x questions
    kls: Optional[np.ndarray] = None  # candidates x systems x questions
    reference: Optional[np.ndarray] = None  # systems x questions

    @property
    def key(self) -> str:
        return f"{self.name}:{self.dev_set}"

    @property
    def num_questions(self) -> int:
        source = self.per_question if self.per_question is not None else self.reference
        assert source is not None
        return int(source.shape[-1])

    def values(self, idx: Optional[np.ndarray] = None) -> np.ndarray:
        """Every candidate's figure on the questions ``idx`` (all when None)."""
        pick = slice(None) if idx is None else idx
        if self.per_question is not None:
            return np.asarray(self.per_question[:, pick].mean(axis=1))
        assert self.kls is not None and self.reference is not None
        rho = row_spearman(self.kls[:, :, pick].mean(axis=2), self.reference[:, pick].mean(axis=1))
        return np.nan_to_num(rho, nan=0.0)

    def resampled(self, resamples: int, seed: int) -> np.ndarray:
        """resamples x candidates: the figures on bootstrap resamples of the questions (seeded)."""
        idx = np.random.default_rng(seed).integers(0, self.num_questions, size=(resamples, self.num_questions))
        return np.stack([self.values(i) for i in idx])


def paired(
    criterion: Criterion, boot: np.ndarray, a: int, b: int, level: float = 0.95, values: Optional[np.ndarray] = None
) -> dict[str, Any]:
    """Candidate ``a`` minus ``b`` on one criterion: the difference and its paired percentile interval.

    >>> c = Criterion("blanc", "d", 0.01, per_question=np.array([[0.5, 0.7], [0.4, 0.4]]))
    >>> d = paired(c, c.resampled(200, 0), 0, 1)
    >>> round(d["diff"], 3), d["ci"]["low"] > 0
    (0.2, True)
    """
    values = criterion.values() if values is None else values
    diff = boot[:, a] - boot[:, b]
    tail = (1 - level) / 2 * 100
    return {
        "diff": float(values[a] - values[b]),
        "ci": {"low": float(np.percentile(diff, tail)), "high": float(np.percentile(diff, 100 - tail))},
        "sd": float(diff.std(ddof=1)) if len(diff) > 1 else 0.0,
    }


def verdict(diffs: Mapping[str, Mapping[str, Any]], margins: Mapping[str, float]) -> dict[str, Any]:
    """The rule for one challenger against one incumbent, from the paired differences per criterion key.

    >>> m = {"blanc:d": 0.01, "panel:d": 0.03}
    >>> verdict({"blanc:d": {"ci": {"low": 0.001}}, "panel:d": {"ci": {"low": -0.02}}}, m)["replaces"]
    True
    >>> v = verdict({"blanc:d": {"ci": {"low": 0.001}}, "panel:d": {"ci": {"low": -0.05}}}, m)
    >>> v["replaces"], v["inferior_on"]
    (False, ['panel:d'])
    """
    inferior = [k for k, d in diffs.items() if not d["ci"]["low"] > -margins[k]]
    better = [k for k, d in diffs.items() if d["ci"]["low"] > 0]
    return {
        "non_inferior": not inferior,
        "inferior_on": inferior,
        "better_on": better,
        "replaces": not inferior and bool(better),
    }


def choose(
    criteria: Sequence[Criterion],
    boots: Mapping[str, np.ndarray],
    labels: Sequence[str],
    current: int,
    controls: Sequence[int],
) -> dict[str, Any]:
    """The protocol's rule over every candidate: who replaces ``current``, and whether a control is as good.

    ``controls`` are the controls' indices in simplicity order (simplest first); the other
    indices keep grid order. Returns the chosen index, every candidate's verdict against
    ``current``, every control's verdict against the chosen candidate (as good: non-inferior
    everywhere), the chosen one's against each control (does it beat it?), every clustering's against
    each control, and the clusterings that beat every control.
    """
    margins = {c.key: c.margin for c in criteria}
    values = {c.key: c.values() for c in criteria}

    def diffs(a: int, b: int) -> dict[str, dict[str, Any]]:
        return {c.key: paired(c, boots[c.key], a, b, values=values[c.key]) for c in criteria}

    against_current = {labels[i]: verdict(diffs(i, current), margins) for i in range(len(labels)) if i != current}
    order = list(controls) + [i for i in range(len(labels)) if i not in controls]
    winners = [i for i in order if i != current and against_current[labels[i]]["replaces"]]
    chosen = (
        max(winners, key=lambda i: (len(against_current[labels[i]]["better_on"]), -order.index(i)))
        if winners
        else current
    )
    chosen_clustering = chosen
    as_good = {labels[i]: verdict(diffs(i, chosen), margins) for i in controls if i != chosen}
    simpler = [i for i in controls if i != chosen and as_good[labels[i]]["non_inferior"]]
    if simpler and chosen not in controls:
        chosen = simpler[0]
    beats = {labels[i]: verdict(diffs(chosen_clustering, i), margins) for i in controls if i != chosen_clustering}
    every = {
        labels[i]: {labels[j]: verdict(diffs(i, j), margins) for j in controls}
        for i in range(len(labels))
        if i not in controls
    }
    beating_all = [name for name, v in every.items() if all(x["replaces"] for x in v.values())]
    return {
        "chosen": chosen,
        "chosen_clustering": chosen_clustering,
        "against_current": against_current,
        "controls_against_chosen": as_good,
        "chosen_against_controls": beats,
        "clusterings_beating_every_control": beating_all,
        "clusterings_against_controls": every,
    }


def control_shares(criteria: Sequence[Criterion], real: int, controls: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """Each control's figure as a share of candidate ``real``'s, per criterion key (None where the real is 0).

    >>> c = Criterion("blanc", "d", 0.01, per_question=np.array([[0.8], [0.2]]))
    >>> control_shares([c], 0, {"one_cluster": 1})
    {'blanc:d': {'one_cluster': 0.25}}
    """
    out: dict[str, dict[str, Any]] = {}
    for c in criteria:
        v = c.values()
        out[c.key] = {name: (float(v[i] / v[real]) if v[real] != 0 else None) for name, i in controls.items()}
    return out
