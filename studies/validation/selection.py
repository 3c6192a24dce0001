"""System-like answer pools built from the dev sets, on which the system level's levers are chosen (dev data
only) and one criterion of the cluster-level protocol is measured; the automatic default is the cluster-level study's.

CFC test has nine systems and no dev counterpart, so the dev criterion builds
system-like pools from the dev sets' own answer pools and asks of each candidate what
the test asks: does its KL rank the pools the way ProbEval with the human clusters does?

Per dev set (CFC dev: ``cfc/dev.targets.jsonl`` with the GPT-2 XL one-shot samples and the
30 extra human answers; ProtoQA dev: ``protoqa/dev.crowdsourced.jsonl`` with the GPT-2
samples and the extra human answers of ``probeval_validation/``), each of the
:data:`MIXES` draws, per question, a seeded share of the distinct model answers, of the
distinct extra human answers and of off-topic answers (other questions' model answers),
and keeps them as distinct answers of weight 1, as the CFC test system files do. The
criterion of a candidate is Spearman's rho between its pool means and the human-cluster
reference's, averaged over the two dev sets; ties go to the candidate whose clusters per
question are closest to the annotators' on dev. Nothing here opens a CFC test file
(``tests/studies/test_validation.py`` checks it with an audit hook).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.inputs import read_samples, read_targets
from cfc_probeval.probeval import normalized_sample_counts

from .stats import spearman
from .systems import REFERENCE, Candidate, SystemData, _Scorer

__all__ = ["DEV_POOLS", "MIXES", "load_dev_systems", "DevSelection", "select_on_dev", "rank_rows", "row_spearman"]

#: Dev set -> (targets, model answer pool, extra human answer pool), paths under the data folder.
DEV_POOLS = {
    "cfc_dev": ("cfc/dev.targets.jsonl", "cfc/dev.predictions.gpt2-xl.oneshot.json", "cfc/dev.predictions.human.json"),
    "protoqa_dev": (
        "protoqa/dev.crowdsourced.jsonl",
        "probeval_validation/protoqa_dev.gpt2.samples.annotated.json",
        "probeval_validation/protoqa_dev.human.json",
    ),
}

#: (share of model answers, share of extra human answers, off-topic answers per model answer kept):
#: twelve pools from weak (few answers, many off-topic) to strong (human answers mixed in).
MIXES = (
    (1.0, 0.0, 0.0),
    (0.5, 0.0, 0.0),
    (0.25, 0.0, 0.0),
    (1.0, 0.0, 0.3),
    (0.5, 0.0, 0.3),
    (0.25, 0.0, 0.3),
    (1.0, 0.25, 0.0),
    (0.5, 0.25, 0.0),
    (1.0, 0.25, 0.3),
    (0.5, 0.5, 0.0),
    (1.0, 0.5, 0.3),
    (0.75, 0.1, 0.1),
)


def _distinct(path: Path) -> dict[str, list[str]]:
    return {q: sorted(normalized_sample_counts(c)) for q, c in read_samples(path).items()}


def load_dev_systems(
    data_dir: Union[str, Path], name: str, seed: int = 0, num_questions: Optional[int] = None
) -> SystemData:
    """The dev set ``name``'s questions with one system-like pool per mix (distinct answers, weight 1).

    >>> data = load_dev_systems("../shared/data", "cfc_dev", num_questions=2)  # doctest: +SKIP
    >>> len(data.systems), len(data.question_ids)  # doctest: +SKIP
    (12, 2)
    """
    data_dir = Path(data_dir)
    targets, model_path, human_path = DEV_POOLS[name]
    truths = read_targets(data_dir / targets)
    model, human = _distinct(data_dir / model_path), _distinct(data_dir / human_path)
    ids = [q for q in truths if truths[q].clusters and model.get(q) and human.get(q)]
    if num_questions is not None:
        ids = ids[:num_questions]
    answers: dict[str, dict[str, dict[str, int]]] = {}
    for k, (m_share, h_share, off_share) in enumerate(MIXES):
        pools: dict[str, dict[str, int]] = {}
        for j, q in enumerate(ids):
            rng = np.random.default_rng([seed, k, j])
            own = model[q]
            kept = list(rng.choice(own, size=max(1, round(m_share * len(own))), replace=False))
            kept += list(rng.choice(human[q], size=round(h_share * len(human[q])), replace=False))
            others = [a for other in ids if other != q for a in model[other][:20]]
            if off_share and others:
                kept += list(rng.choice(others, size=min(len(others), round(off_share * len(own))), replace=False))
            pools[q] = dict.fromkeys(dict.fromkeys(kept), 1)
        answers[f"mix{k}(model={m_share},human={h_share},off={off_share})"] = pools
    return SystemData(truths, ids, answers)


def rank_rows(values: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis (ties share their mean rank).

    >>> rank_rows(np.array([[3.0, 1.0, 1.0]]))
    array([[3. , 1.5, 1.5]])
    """
    from scipy.stats import rankdata

    return rankdata(values, axis=-1)


def row_spearman(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Spearman of every row of ``values`` (candidates x systems) with ``reference`` (NaN for a constant row).

    >>> row_spearman(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [1.0, 1.0, 1.0]]), np.array([1.0, 2.0, 3.0]))
    array([ 1., -1., nan])
    """
    a = rank_rows(values)
    b = rank_rows(reference[None, :])[0]
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean()
    norm = np.sqrt((a * a).sum(axis=-1) * (b * b).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (a * b).sum(axis=-1) / np.where(norm > 0, norm, 1.0), np.nan)


@dataclass
class DevSelection:
    """Per dev set, every candidate's pools x questions KL matrix and cluster count, and the reference's."""

    candidates: list[Candidate]
    kls: dict[str, np.ndarray]  # dev set -> candidates x systems x questions
    reference: dict[str, np.ndarray]  # dev set -> systems x questions
    clusters: dict[str, np.ndarray]  # dev set -> candidates x questions
    human_clusters: dict[str, np.ndarray]  # dev set -> questions
    systems: dict[str, list[str]] = field(default_factory=dict)

    def criterion(self, idx: Optional[dict[str, np.ndarray]] = None) -> np.ndarray:
        """Per candidate: Spearman with the reference over the dev pools, averaged over the dev sets
        (``idx``: question indices per dev set, e.g. a bootstrap resample); NaN counts as -1."""
        out = np.zeros(len(self.candidates))
        for name, kl in self.kls.items():
            pick = slice(None) if idx is None else idx[name]
            rho = row_spearman(kl[:, :, pick].mean(axis=2), self.reference[name][:, pick].mean(axis=1))
            out += np.nan_to_num(rho, nan=-1.0)
        return out / len(self.kls)

    def count_gap(self, idx: Optional[dict[str, np.ndarray]] = None) -> np.ndarray:
        """Per candidate: |clusters per question - annotators'| relative to the annotators', averaged over dev sets."""
        out = np.zeros(len(self.candidates))
        for name, counts in self.clusters.items():
            pick = slice(None) if idx is None else idx[name]
            human = self.human_clusters[name][pick].mean()
            out += np.abs(counts[:, pick].mean(axis=1) - human) / human
        return out / len(self.clusters)

    def choose(self, among: Sequence[int], idx: Optional[dict[str, np.ndarray]] = None, by: str = "criterion") -> int:
        """Index of the best of ``among``: by the dev criterion (ties: smaller count gap, then grid order),
        or ``by="count"``: by the count gap alone (ties: grid order)."""
        crit, gap = self.criterion(idx), self.count_gap(idx)
        if by == "count":
            return min(among, key=lambda i: (round(float(gap[i]), 12), among.index(i)))
        return min(among, key=lambda i: (-round(float(crit[i]), 12), round(float(gap[i]), 12), among.index(i)))

    def summary(self, i: int) -> dict[str, Any]:
        """The dev figures of candidate ``i``: criterion, per-set Spearman and Kendall, clusters per question."""
        from scipy.stats import kendalltau

        per_set = {}
        for name, kl in self.kls.items():
            x, y = kl[i].mean(axis=1), self.reference[name].mean(axis=1)
            rho = spearman(x, y)
            tau = float(kendalltau(x, y).statistic)
            per_set[name] = {
                "spearman": None if math.isnan(rho) else rho,
                "kendall": None if math.isnan(tau) else tau,
                "clusters_per_question": float(self.clusters[name][i].mean()),
                "human_clusters_per_question": float(self.human_clusters[name].mean()),
            }
        return {"criterion": float(self.criterion()[i]), "count_gap": float(self.count_gap()[i]), "dev_sets": per_set}


def select_on_dev(
    data_dir: Union[str, Path],
    grid: Sequence[Candidate],
    *,
    seed: int = 0,
    num_questions: Optional[int] = None,
    log: Callable[[str], None] = lambda _: None,
) -> DevSelection:
    """Every candidate of ``grid`` scored on the dev pools of both dev sets (reads dev files only).

    >>> sel = select_on_dev("../shared/data", [Candidate("char-ngrams", "hac")], num_questions=2)  # doctest: +SKIP
    >>> sel.criterion().shape  # doctest: +SKIP
    (1,)
    """
    grid = list(grid)
    kls, ref, counts, human, systems = {}, {}, {}, {}, {}
    for name in DEV_POOLS:
        data = load_dev_systems(data_dir, name, seed=seed, num_questions=num_questions)
        scorer = _Scorer(data, seed)
        ref[name] = scorer.kls(REFERENCE)
        human[name] = np.array([len(scorer.clusters(REFERENCE, q)) for q in data.question_ids], dtype=float)
        kls[name] = np.stack([scorer.kls(c) for c in grid])
        counts[name] = np.array([[len(scorer.clusters(c, q)) for q in data.question_ids] for c in grid], dtype=float)
        systems[name] = data.systems
        log(
            f"  dev pools {name}: {len(data.question_ids)} questions, {len(data.systems)} pools, {len(grid)} candidates"
        )
    return DevSelection(grid, kls, ref, counts, human, systems)
