"""The system-level study in its order: every lever's choice made on the dev pools, then CFC test read once.

:func:`select_levers` chooses on dev (:mod:`studies.validation.selection`) and opens no CFC
test file; :func:`run_system_study` then scores every choice on the CFC test systems
(:mod:`studies.validation.systems`), beside ProbEval's automatic default as it ships
(:func:`~studies.validation.systems.shipped_default`). The default is decided by one
selection path only, the cluster-level study under ``protocol.toml``
(``python -m studies.validation clusters``); no lever's pick here becomes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from .selection import select_on_dev
from .systems import (
    LEVERS,
    PREVIOUS_DEFAULT,
    REFERENCE,
    Candidate,
    _Scorer,
    agreement,
    lever_grids,
    load_systems,
    shipped_default,
)

__all__ = ["select_levers", "run_system_study", "CHOSEN_BY"]

CHOSEN_BY = "python -m studies.validation clusters (studies/validation/protocol.toml)"
"""The one selection path that decides ProbEval's automatic default."""


def select_levers(
    data_dir: Union[str, Path],
    levers: Mapping[str, Sequence[Candidate]],
    *,
    seed: int = 0,
    num_questions: Optional[int] = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Every lever's choice, made on the dev pools only (no CFC test file is read); none of them is the default.

    >>> select_levers("../shared/data", {"grid": [PREVIOUS_DEFAULT]}, num_questions=1)["choices"]  # doctest: +SKIP
    {'grid': Candidate(embedder='minilm', clustering='gmeans', ...)}
    """
    union = list(dict.fromkeys(c for grid in levers.values() for c in grid))
    where = {c: i for i, c in enumerate(union)}
    dev = select_on_dev(data_dir, union, seed=seed, num_questions=num_questions, log=log)
    choices = {}
    for name, grid in levers.items():
        i = dev.choose([where[c] for c in grid], by="count" if name == "cluster_count" else "criterion")
        choices[name] = union[i]
    return {"dev": dev, "union": union, "choices": choices}


class _TestSide:
    """CFC test, read once: the model systems' scorer, the reference's KLs, and each candidate's KLs (kept)."""

    def __init__(self, data_dir: Union[str, Path], num_questions: Optional[int], seed: int) -> None:
        self.data = load_systems(data_dir)
        if num_questions is not None:
            self.data.question_ids = self.data.question_ids[:num_questions]
        self.seed = seed
        self.scorer = _Scorer(self.data, seed)
        self.ref = self.scorer.kls(REFERENCE)
        self.oracle = self.data.systems.index("human")
        self.rows = np.array([i for i in range(len(self.data.systems)) if i != self.oracle], dtype=int)
        self._matrices: dict[Candidate, np.ndarray] = {}

    def kls(self, c: Candidate) -> np.ndarray:
        """Systems x questions KLs of a candidate (scored once)."""
        if c not in self._matrices:
            self._matrices[c] = self.scorer.kls(c)
        return self._matrices[c]

    def figures(self, c: Candidate) -> dict[str, Any]:
        """The candidate's agreement with the reference over the systems, and its clusters per question."""
        return {
            **agreement(self.kls(c), self.ref, self.seed, self.oracle),
            "clusters_per_question": self.scorer.cluster_count(c),
        }


def run_system_study(
    data_dir: Union[str, Path],
    settings: Union[Mapping[str, Candidate], Callable[[], Mapping[str, Candidate]]],
    *,
    cosine_threshold: float,
    embedders: Sequence[str] = ("minilm", "char-ngrams"),
    extra_embedders: Sequence[str] = (),
    seed: int = 0,
    num_questions: Optional[int] = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """ProbEval's shipped automatic default and every lever's choice on the dev pools, reported once on CFC test.

    ``settings``: key -> candidate for the study's settings (tuned on the dev sets), or a function
    returning them, called after the selection (so it can run while the settings are being tuned).
    """
    start = time.perf_counter()
    levers = lever_grids(cosine_threshold, embedders, extra_embedders)
    levers["previous_default"] = [PREVIOUS_DEFAULT]
    default = shipped_default()
    levers["shipped_default"] = [default]  # measured on the dev pools too; nothing is chosen by it
    picked = select_levers(data_dir, levers, seed=seed, num_questions=num_questions, log=log)
    dev, union = picked["dev"], picked["union"]
    index = {c: i for i, c in enumerate(union)}
    log(f"  shipped default {default.label}: dev criterion {dev.criterion()[index[default]]:.3f}")
    # Only now is CFC test read: every choice above is fixed.
    test = _TestSide(data_dir, num_questions, seed)
    data, scorer, ref, rows = test.data, test.scorer, test.ref, test.rows

    def report(c: Candidate) -> dict[str, Any]:
        return {
            "label": c.label,
            "config": c.as_dict(),
            "shippable": c.shippable,
            "dev": dev.summary(index[c]),
            "test": test.figures(c),
        }

    out: dict[str, Any] = {
        "systems": data.systems,
        "model_systems": [data.systems[i] for i in rows],
        "oracle": "human",
        "questions": len(data.question_ids),
        "reference": REFERENCE.label,
        "reference_system_means": [float(x) for x in ref.mean(axis=1)],
        "human_clusters_per_question": scorer.cluster_count(REFERENCE),
        "settings": {},
        "dev_pools": {
            name: {"questions": int(kl.shape[2]), "pools": dev.systems[name]} for name, kl in dev.kls.items()
        },
    }
    out["default"] = report(default) | {"chosen_by": CHOSEN_BY}
    out["levers"] = {}
    for name, choice in picked["choices"].items():
        if name == "shipped_default":
            continue
        out["levers"][name] = {
            "varies": LEVERS.get(name, f"the grid with the embedder {name.split(':', 1)[-1]}"),
            "candidates": len(levers[name]),
            **report(choice),
        }
        log(
            f"  lever {name}: {choice.label}: dev {out['levers'][name]['dev']['criterion']:.3f}, "
            f"test rho (8 models) {out['levers'][name]['test']['rho']}"
        )
    out["dev_candidates"] = {
        c.label: {"criterion": float(v), "count_gap": float(g)}
        for c, v, g in zip(union, dev.criterion(), dev.count_gap(), strict=True)
    }
    for key, c in (settings() if callable(settings) else settings).items():
        out["settings"][key] = {"label": c.label, **test.figures(c)}
        log(f"  system level {key}: rho {out['settings'][key]['rho']}")
    out["gp_single_cluster_fallbacks"] = scorer.gp_fallbacks
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out
