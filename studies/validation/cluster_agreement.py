"""Cluster-level agreement: ProbEval's automatic clusters of raw answers against the annotators' clusters.

Per question, every raw answer occurrence is a mention, weighted by its count; an
automatic clustering groups the question's distinct answer strings (as ProbEval does
for references without clusters), so all occurrences of a string share its cluster. The
annotators' side keeps what the data says: in CFC test each cluster lists its
occurrences (a string may sit in several clusters), in CFC dev and ProtoQA dev each
cluster lists distinct strings and a string's raw count goes with it (split evenly in
the rare case it is listed by several clusters). Raw answers that the annotators left out
of every cluster (ProtoQA dev has some, e.g. "answer") are left out, as ProbEval leaves
them out of the references' answers; :attr:`Question.unclustered` counts them. BLANC, ARI and V-measure
(:mod:`studies.validation.partitions`) are computed per question and averaged, with
95% bootstrap intervals over questions.

The study runs in the order of ``protocol.toml`` (this folder):

1. :func:`select_on_dev` scores every candidate of the protocol's grid and every control
   on CFC dev and ProtoQA dev (BLANC averaged over the seeds; the system-like pools of
   :mod:`studies.validation.selection` as a gate) and chooses, with the nested
   selections redone in every bootstrap resample of dev questions. It opens no CFC test
   file (``tests/studies/test_validation.py`` checks it with an audit hook).
2. :func:`report_on_test` then reads CFC test once and measures every choice.

:func:`run_cluster_study` runs both and records the protocol file's SHA-256 and commit.
"""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union, cast

import numpy as np

from cfc_probeval.results import AnswerCluster
from protoqa_core.progress import track

from .cluster_candidates import (
    CONTROLS,
    CURRENT_DEFAULT,
    DATA,
    METRICS,
    PROTOCOL,
    ClusterCandidate,
    ClusterMaker,
    Question,
    load_protocol,
    normalized_key,
    protocol_grid,
    question_scores,
    read_questions,
    reference_consistency,
)
from .selection import DevSelection, load_dev_systems
from .systems import REFERENCE, SystemData, _Scorer, load_systems

__all__ = [
    "PROTOCOL",
    "DATA",
    "METRICS",
    "ClusterCandidate",
    "CONTROLS",
    "load_protocol",
    "protocol_grid",
    "normalized_key",
    "Question",
    "read_questions",
    "reference_consistency",
    "select_on_dev",
    "report_on_test",
    "run_cluster_study",
]


@dataclass
class Scores:
    """Per data set: metric -> candidates x seeds x questions, and clusters per question."""

    candidates: list[ClusterCandidate]
    seeds: list[int]
    questions: dict[str, list[Question]]
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    clusters: dict[str, np.ndarray] = field(default_factory=dict)
    human_clusters: dict[str, np.ndarray] = field(default_factory=dict)


def _score_set(
    name: str, questions: list[Question], cands: Sequence[ClusterCandidate], seeds: Sequence[int], maker: ClusterMaker
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    shape = (len(cands), len(seeds), len(questions))
    values = {m: np.zeros(shape) for m in METRICS}
    counts = np.zeros(shape)
    for ci, c in enumerate(track(cands, len(cands), f"clusterings on {name}", "candidate")):
        for si, seed in enumerate(seeds):
            if si and not c.seeded:
                for m in METRICS:
                    values[m][ci, si] = values[m][ci, 0]
                counts[ci, si] = counts[ci, 0]
                continue
            for qi, q in enumerate(questions):
                labels = maker.labels(c, q, seed)
                for m, v in question_scores(q, labels).items():
                    values[m][ci, si, qi] = v
                counts[ci, si, qi] = labels.max() + 1
    human = np.array([len({m[1] for m in q.mentions}) for q in questions], dtype=float)
    return values, counts, human


class _GivenClusters(_Scorer):
    """The system-level scorer with a candidate's clusters from the :class:`ClusterMaker` (seed ``seed``)."""

    def __init__(self, data: SystemData, maker: ClusterMaker, questions: Sequence[Question], seed: int) -> None:
        super().__init__(data, seed)
        self.maker, self.seed_used = maker, seed
        self.by_id = {q.qid: q for q in questions}

    def clusters(self, c: Any, qid: str) -> tuple[AnswerCluster, ...]:
        if isinstance(c, ClusterCandidate):
            return self.maker.clusters(c, self.by_id[qid], self.seed_used)
        return super().clusters(c, qid)


def _system_kls(
    data: SystemData,
    maker: ClusterMaker,
    questions: Sequence[Question],
    cands: Sequence[ClusterCandidate],
    seeds: Sequence[int],
) -> tuple[np.ndarray, np.ndarray]:
    """candidates x seeds x systems x questions KLs, and the human-cluster reference's systems x questions."""
    scorers = {}
    out = np.zeros((len(cands), len(seeds), len(data.systems), len(data.question_ids)))
    for si, seed in enumerate(seeds):
        scorers[seed] = _GivenClusters(data, maker, questions, seed)
        if si:  # every seed shares the first scorer's WordNet matches of the system answers
            scorers[seed]._questions, scorers[seed]._wordnet_full = (
                scorers[seeds[0]]._questions,
                scorers[seeds[0]]._wordnet_full,
            )
        for ci, c in enumerate(cands):
            out[ci, si] = out[ci, 0] if si and not c.seeded else scorers[seed].kls(cast(Any, c))
    return out, scorers[seeds[0]].kls(REFERENCE)


def _resample_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _summary(per_question: np.ndarray, idx: np.ndarray, level: float = 0.95) -> dict[str, Any]:
    """Mean over questions with its percentile bootstrap interval (``idx``: resamples x questions)."""
    boot = per_question[idx].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return {
        "mean": float(per_question.mean()),
        "ci": {"low": float(np.percentile(boot, tail)), "high": float(np.percentile(boot, 100 - tail))},
    }


def _choose(
    crit: np.ndarray,
    pools: np.ndarray,
    gap: np.ndarray,
    cands: Sequence[ClusterCandidate],
    among: Sequence[int],
    pools_min: float,
    margin: float,
) -> int:
    """The protocol's rule: best primary criterion among admissible candidates, ties by shippable, steps, gap, order."""
    admissible = [i for i in among if pools[i] >= pools_min] or list(among)
    best = max(crit[i] for i in admissible)
    tied = [i for i in admissible if crit[i] >= best - margin]
    return min(tied, key=lambda i: (not cands[i].shippable, cands[i].steps, round(float(gap[i]), 12), i))


@dataclass
class DevChoice:
    """What the dev sets chose, and everything the choice saw."""

    protocol: dict[str, Any]
    candidates: list[ClusterCandidate]  # grid then controls
    scores: Scores
    pools: np.ndarray  # candidates x seeds: the pools criterion
    pool_selections: list[DevSelection]  # one per seed
    selected: int
    default: int
    current_default: int
    nested: dict[str, list[int]]  # rule -> chosen candidate per resample
    dev_resamples: dict[str, np.ndarray]
    seconds: float


def _criteria(scores: Scores, idx: Optional[dict[str, np.ndarray]] = None) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate: dev BLANC (seed-averaged, mean over each dev set's questions, averaged over the
    dev sets) and the relative gap of clusters per question to the annotators'."""
    crit = np.zeros(len(scores.candidates))
    gap = np.zeros(len(scores.candidates))
    for name, vals in scores.values.items():
        pick = slice(None) if idx is None else idx[name]
        crit += vals["blanc"].mean(axis=1)[:, pick].mean(axis=1)
        human = scores.human_clusters[name][pick].mean()
        gap += np.abs(scores.clusters[name].mean(axis=1)[:, pick].mean(axis=1) - human) / human
    return crit / len(scores.values), gap / len(scores.values)


def select_on_dev(
    data_dir: Union[str, Path],
    *,
    protocol_path: Union[str, Path] = PROTOCOL,
    num_questions: Optional[int] = None,
    grid: Optional[Sequence[ClusterCandidate]] = None,
    seeds: Optional[Sequence[int]] = None,
    nested_resamples: Optional[int] = None,
    maker: Optional[ClusterMaker] = None,
    log: Callable[[str], None] = lambda _: None,
) -> DevChoice:
    """Score the protocol's grid and the controls on the dev sets and choose (no CFC test file is read).

    ``num_questions``, ``grid``, ``seeds`` and ``nested_resamples`` cut the run down for tests.
    """
    start = time.perf_counter()
    protocol, _ = load_protocol(protocol_path)
    data_dir = Path(data_dir)
    grid = list(grid) if grid is not None else protocol_grid(protocol)
    current_label = protocol["default"]["current"]
    if current_label != CURRENT_DEFAULT.label:
        raise ValueError(
            f"{protocol_path}: default.current is {current_label!r}, ProbEval's is {CURRENT_DEFAULT.label!r}"
        )
    if CURRENT_DEFAULT not in grid:  # a cut-down grid (tests) still compares with the current default
        grid.append(CURRENT_DEFAULT)
    cands = grid + list(CONTROLS)
    seeds = list(seeds) if seeds is not None else list(protocol["measures"]["seeds"])
    maker = maker or ClusterMaker()
    scores = _score_dev(data_dir, protocol["data"]["dev"], cands, seeds, maker, num_questions, log)
    selections, pool_ids = _dev_pools(data_dir, protocol["data"]["dev"], scores, maker, num_questions, log)
    pools = np.stack([s.criterion() for s in selections], axis=1)
    rule = protocol["criterion"]["pools_min"], protocol["tie"]["margin"]
    grid_idx = list(range(len(grid)))
    shippable = [i for i in grid_idx if cands[i].shippable]
    crit, gap = _criteria(scores)
    selected = _choose(crit, pools.mean(axis=1), gap, cands, grid_idx, *rule)
    best_shippable = _choose(crit, pools.mean(axis=1), gap, cands, shippable, *rule)
    current = cands.index(CURRENT_DEFAULT)
    default = best_shippable if crit[best_shippable] > crit[current] + rule[1] else current
    # Nested: the same choices in every resample of dev questions.
    resamples = nested_resamples if nested_resamples is not None else protocol["nested"]["resamples"]
    rng = np.random.default_rng(protocol["nested"]["seed"])
    dev_idx = {n: rng.integers(0, len(qs), size=(resamples, len(qs))) for n, qs in scores.questions.items()}
    nested: dict[str, list[int]] = {"selected": [], "default": []}
    for r in range(resamples):
        idx = {n: dev_idx[n][r] for n in dev_idx}
        pidx = _pool_indices(scores, pool_ids, idx)
        c_r, g_r = _criteria(scores, idx)
        p_r = np.mean([s.criterion(pidx) for s in selections], axis=0)
        nested["selected"].append(_choose(c_r, p_r, g_r, cands, grid_idx, *rule))
        best = _choose(c_r, p_r, g_r, cands, shippable, *rule)
        nested["default"].append(best if c_r[best] > c_r[current] + rule[1] else current)
    log(f"  selected {cands[selected].label}; default {cands[default].label}")
    seconds = time.perf_counter() - start
    return DevChoice(protocol, cands, scores, pools, selections, selected, default, current, nested, dev_idx, seconds)


def _score_dev(
    data_dir: Path,
    names: Sequence[str],
    cands: list[ClusterCandidate],
    seeds: list[int],
    maker: ClusterMaker,
    num_questions: Optional[int],
    log: Callable[[str], None],
) -> Scores:
    """Every candidate's metrics and cluster counts on each dev set's questions, per seed."""
    scores = Scores(cands, seeds, {})
    for name in names:
        scores.questions[name] = read_questions(data_dir / DATA[name], num_questions)
        values, counts, human = _score_set(name, scores.questions[name], cands, seeds, maker)
        scores.values[name], scores.clusters[name], scores.human_clusters[name] = values, counts, human
        log(
            f"  clusters {name}: {len(scores.questions[name])} questions, {len(cands)} clusterings x {len(seeds)} seeds"
        )
    return scores


def _dev_pools(
    data_dir: Path,
    names: Sequence[str],
    scores: Scores,
    maker: ClusterMaker,
    num_questions: Optional[int],
    log: Callable[[str], None],
) -> tuple[list[DevSelection], dict[str, list[str]]]:
    """The system-like pools' criterion, one :class:`DevSelection` per seed (the gate), and each set's pool ids."""
    cands, seeds = scores.candidates, scores.seeds
    kls: dict[str, np.ndarray] = {}
    refs, pool_ids = {}, {}
    for name in names:
        data = load_dev_systems(data_dir, name, seed=0, num_questions=num_questions)
        kls[name], refs[name] = _system_kls(data, maker, scores.questions[name], cands, seeds)
        pool_ids[name] = data.question_ids
        log(f"  pools {name}: {len(data.question_ids)} questions, {len(data.systems)} pools")
    selections = [
        DevSelection(
            cast(Any, cands),
            {n: kls[n][:, si] for n in kls},
            refs,
            {n: scores.clusters[n][:, si] for n in kls},
            {n: scores.human_clusters[n] for n in kls},
        )
        for si in range(len(seeds))
    ]
    return selections, pool_ids


def _pool_indices(scores: Scores, pool_ids: dict[str, list[str]], idx: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A resample of dev questions (``idx``) as positions among the pools' questions (those the pools have)."""
    position = {n: {q: j for j, q in enumerate(pool_ids[n])} for n in pool_ids}
    return {
        n: np.array(
            [position[n][scores.questions[n][i].qid] for i in idx[n] if scores.questions[n][i].qid in position[n]],
            dtype=int,
        )
        for n in idx
    }


def _git_state() -> tuple[Optional[str], Optional[bool]]:
    """The checkout's commit, and whether the study's code and protocol (this folder) match it."""

    def git(*args: str) -> Optional[str]:
        try:
            done = subprocess.run(
                ["git", *args], cwd=PROTOCOL.parent, capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain", "--", ".")
    return git("rev-parse", "HEAD") or None, None if status is None else status == ""


def _set_figures(scores_set: dict[str, np.ndarray], counts: np.ndarray, ci: int, idx: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in METRICS:
        per_seed = scores_set[m][ci].mean(axis=1)
        out[m] = {
            **_summary(scores_set[m][ci].mean(axis=0), idx),
            "seeds": {"min": float(per_seed.min()), "max": float(per_seed.max()), "sd": float(per_seed.std())},
        }
    out["clusters_per_question"] = float(counts[ci].mean())
    return out


def _paired(scores_set: dict[str, np.ndarray], a: int, b: int, idx: np.ndarray) -> dict[str, Any]:
    out = {}
    for m in METRICS:
        diff = scores_set[m][a].mean(axis=0) - scores_set[m][b].mean(axis=0)
        s = _summary(diff, idx)
        out[m] = {**s, "separated": bool(s["ci"]["low"] > 0 or s["ci"]["high"] < 0)}
    return out


def _spearman_rows(kl: np.ndarray, ref: np.ndarray, idx: Optional[np.ndarray] = None) -> float:
    from .stats import spearman

    pick = slice(None) if idx is None else idx
    value = spearman(kl[:, pick].mean(axis=1), ref[:, pick].mean(axis=1))
    return value


def report_on_test(
    choice: DevChoice,
    data_dir: Union[str, Path],
    *,
    num_questions: Optional[int] = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Read CFC test once and measure every candidate, control and choice of ``choice``."""
    protocol, cands, seeds = choice.protocol, choice.candidates, choice.scores.seeds
    maker = ClusterMaker()
    questions = read_questions(Path(data_dir) / DATA["cfc_test"], num_questions)
    values, counts, human = _score_set("cfc_test", questions, cands, seeds, maker)
    res = protocol["measures"]
    idx = _resample_indices(len(questions), res["bootstrap_resamples"], res["bootstrap_seed"])
    controls = {c.label: cands.index(c) for c in CONTROLS}
    d, s = choice.default, choice.selected
    out: dict[str, Any] = {
        "questions": len(questions),
        "human_clusters_per_question": float(human.mean()),
        "candidates": {c.label: _set_figures(values, counts, i, idx) for i, c in enumerate(cands)},
        "default_vs_controls": {k: _paired(values, d, i, idx) for k, i in controls.items()},
        "selected_vs_controls": {k: _paired(values, s, i, idx) for k, i in controls.items()},
        "consistency": reference_consistency(questions, maker),
    }
    # Nested: the dev choice of each resample, scored on a paired resample of test questions.
    rng = np.random.default_rng(protocol["nested"]["seed"] + 1)
    test_idx = rng.integers(0, len(questions), size=(len(choice.nested["default"]), len(questions)))
    blanc_avg = values["blanc"].mean(axis=1)
    out["nested"] = {}
    for rule, chosen in choice.nested.items():
        figures = [float(blanc_avg[c, test_idx[r]].mean()) for r, c in enumerate(chosen)]
        wins: dict[str, int] = {}
        for c in chosen:
            wins[cands[c].label] = wins.get(cands[c].label, 0) + 1
        out["nested"][rule] = {
            "blanc_ci": {"low": float(np.percentile(figures, 2.5)), "high": float(np.percentile(figures, 97.5))},
            "blanc_mean": float(np.mean(figures)),
            "chosen": dict(sorted(wins.items(), key=lambda kv: -kv[1])),
        }
    # System level on the eight model systems, the same controls as paired differences.
    out["system_level"] = _test_system_level(choice, data_dir, questions, maker, controls, num_questions, log)
    return out


def _test_system_level(
    choice: DevChoice,
    data_dir: Union[str, Path],
    questions: Sequence[Question],
    maker: ClusterMaker,
    controls: dict[str, int],
    num_questions: Optional[int],
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Spearman over the eight CFC test model systems of the choices and two controls, with paired differences."""
    protocol, cands, seeds = choice.protocol, choice.candidates, choice.scores.seeds
    res = protocol["measures"]
    d, s = choice.default, choice.selected
    log("  system level on CFC test")
    data = load_systems(data_dir)
    if num_questions is not None:
        data.question_ids = data.question_ids[:num_questions]
    by_id = {q.qid: q for q in questions}
    data.question_ids = [q for q in data.question_ids if q in by_id]
    rows = np.array([i for i, name in enumerate(data.systems) if name != "human"], dtype=int)
    needed = sorted(
        {d, s}
        | {controls["one_cluster"], controls["one_per_string"]}
        | set(choice.nested["default"])
        | set(choice.nested["selected"])
    )
    kls, ref = _system_kls(data, maker, questions, [cands[i] for i in needed], seeds)
    kl_of = {c: kls[j][:, rows] for j, c in enumerate(needed)}  # seeds x systems x questions
    ref = ref[rows]
    n_test = len(data.question_ids)
    sidx = _resample_indices(n_test, res["bootstrap_resamples"], res["bootstrap_seed"])

    def rho_fig(c: int) -> dict[str, Any]:
        mean_kl = kl_of[c].mean(axis=0)
        boot = np.array([_spearman_rows(mean_kl, ref, i) for i in sidx])
        per_seed = [_spearman_rows(kl_of[c][k], ref) for k in range(len(seeds))]
        return {
            "rho": _nan_none(_spearman_rows(mean_kl, ref)),
            "ci": _pct(boot),
            "seeds": {"min": _nan_none(float(np.nanmin(per_seed))), "max": _nan_none(float(np.nanmax(per_seed)))},
            "boot": boot,
        }

    system = {cands[c].label: rho_fig(c) for c in sorted({d, s, controls["one_cluster"], controls["one_per_string"]})}
    for key in ("one_cluster", "one_per_string"):
        diff = system[cands[d].label]["boot"] - system[key]["boot"]
        system[f"default - {key}"] = {
            "diff": _nan_none(_none_sub(system[cands[d].label]["rho"], system[key]["rho"])),
            "ci": _pct(diff),
            "p_not_above": float(np.mean(diff[~np.isnan(diff)] <= 0)) if np.any(~np.isnan(diff)) else None,
        }
    for v in system.values():
        v.pop("boot", None)
    nested_rho = {}
    for rule, chosen in choice.nested.items():
        rng = np.random.default_rng(protocol["nested"]["seed"] + 2)
        vals = [_spearman_rows(kl_of[c].mean(axis=0), ref, rng.integers(0, n_test, size=n_test)) for c in chosen]
        nested_rho[rule] = _pct(np.array(vals))
    return {"questions": n_test, "figures": system, "nested": nested_rho}


def _pct(values: np.ndarray) -> Optional[dict[str, float]]:
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    return {"low": float(np.percentile(values, 2.5)), "high": float(np.percentile(values, 97.5))}


def _nan_none(x: Optional[float]) -> Optional[float]:
    return None if x is None or math.isnan(x) else float(x)


def _none_sub(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else a - b


def dev_report(choice: DevChoice) -> dict[str, Any]:
    """The dev figures: every candidate's criterion, pools criterion, per-set metrics; the choices."""
    protocol = choice.protocol
    res = protocol["measures"]
    crit, gap = _criteria(choice.scores)
    out: dict[str, Any] = {"sets": {}, "candidates": {}}
    for name, qs in choice.scores.questions.items():
        idx = _resample_indices(len(qs), res["bootstrap_resamples"], res["bootstrap_seed"])
        vals, counts = choice.scores.values[name], choice.scores.clusters[name]
        out["sets"][name] = {
            "questions": len(qs),
            "human_clusters_per_question": float(choice.scores.human_clusters[name].mean()),
            "candidates": {c.label: _set_figures(vals, counts, i, idx) for i, c in enumerate(choice.candidates)},
            "default_vs_controls": {
                c.label: _paired(vals, choice.default, choice.candidates.index(c), idx) for c in CONTROLS
            },
            "consistency": reference_consistency(qs, ClusterMaker()),
        }
    for i, c in enumerate(choice.candidates):
        out["candidates"][c.label] = {
            "criterion": float(crit[i]),
            "pools": float(choice.pools[i].mean()),
            "pools_seeds": {"min": float(choice.pools[i].min()), "max": float(choice.pools[i].max())},
            "count_gap": float(gap[i]),
            "shippable": c.shippable,
            "control": c.is_control,
        }
    out["selected"] = choice.candidates[choice.selected].label
    out["default"] = choice.candidates[choice.default].label
    out["current_default"] = choice.candidates[choice.current_default].label
    for rule, chosen in choice.nested.items():
        wins: dict[str, int] = {}
        for i in chosen:
            wins[choice.candidates[i].label] = wins.get(choice.candidates[i].label, 0) + 1
        out[f"nested_{rule}"] = dict(sorted(wins.items(), key=lambda kv: -kv[1]))
    out["seconds"] = round(choice.seconds, 1)
    return out


def run_cluster_study(
    data_dir: Union[str, Path],
    *,
    protocol_path: Union[str, Path] = PROTOCOL,
    num_questions: Optional[int] = None,
    log: Callable[[str], None] = lambda _: None,
    **cut: Any,
) -> dict[str, Any]:
    """The whole study in the protocol's order: choose on dev, then report CFC test once."""
    start = time.perf_counter()
    _, digest = load_protocol(protocol_path)
    commit, clean = _git_state()  # before anything is computed: the code that runs
    log("cluster-level study: dev selection")
    choice = select_on_dev(data_dir, protocol_path=protocol_path, num_questions=num_questions, log=log, **cut)
    dev = dev_report(choice)
    log("cluster-level study: CFC test, read once")
    test = report_on_test(choice, data_dir, num_questions=num_questions, log=log)
    return {
        "protocol": {
            "file": "studies/validation/protocol.toml",
            "sha256": digest,
            "commit": commit,
            "code_committed": clean,
            "changes": choice.protocol.get("changes", []),
            "goal": choice.protocol["goal"],
        },
        "dev": dev,
        "cfc_test": test,
        "questions_limit": num_questions,
        "seeds": choice.scores.seeds,
        "seconds": round(time.perf_counter() - start, 1),
    }
