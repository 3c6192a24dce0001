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

The study runs in the order of ``protocol.toml`` (this folder, version 3):

1. :func:`select_on_dev` measures every candidate of the protocol's grid and every control
   on CFC dev and ProtoQA dev by each dev criterion (:mod:`studies.validation.criteria`:
   cluster-level BLANC; the answer-set criterion of the CFC paper's Table 2; the
   system-like pools of :mod:`studies.validation.selection`; the system panel of
   :mod:`studies.validation.panel` and, from version 3, its wording systems) and applies the rule: a candidate, control or not,
   replaces the current default only when non-inferior on every criterion and better on
   one. It opens no CFC test file (``tests/studies/test_cluster_agreement.py`` checks it
   with an audit hook).
2. :func:`report_on_test` then reads CFC test once: cluster level and the eight model
   systems, the choice minus the old default and minus each control as paired differences.

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
    protocol_grid,
    question_scores,
    read_questions,
    reference_consistency,
)
from .criteria import Criterion, choose, control_shares, paired
from .design import DEV_SETS
from .panel import build_panel, detectable_difference, wrong_question_not_worse
from .questions import load_dev_set
from .selection import load_dev_systems
from .stability import seed_spread, stability_summary, stability_values
from .stats import spearman
from .systems import REFERENCE, SystemData, _Scorer, load_systems

__all__ = ["Scores", "DevChoice", "select_on_dev", "dev_report", "report_on_test", "run_cluster_study"]


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


@dataclass
class DevChoice:
    """What the dev sets chose under the protocol's rule, and everything the choice saw."""

    protocol: dict[str, Any]
    candidates: list[ClusterCandidate]  # grid then controls
    scores: Scores
    criteria: list[Criterion]
    boots: dict[str, np.ndarray]  # criterion key -> resamples x candidates
    rule: dict[str, Any]  # what :func:`studies.validation.criteria.choose` returned
    current: int
    old: int
    wrong_question: dict[str, np.ndarray]  # dev set -> per candidate, the wrong-question control's share
    seconds: float
    embedders: dict[str, str] = field(default_factory=dict)  # grid name -> the embedder's full name (runtime)

    @property
    def chosen(self) -> int:
        return int(self.rule["chosen"])


def _by_label(cands: Sequence[ClusterCandidate], label: str, what: str) -> int:
    for i, c in enumerate(cands):
        if c.label == label:
            return i
    raise ValueError(f"protocol: candidates.{what} {label!r} is not in the grid")


def select_on_dev(
    data_dir: Union[str, Path],
    *,
    protocol_path: Union[str, Path] = PROTOCOL,
    num_questions: Optional[int] = None,
    seeds: Optional[Sequence[int]] = None,
    resamples: Optional[int] = None,
    maker: Optional[ClusterMaker] = None,
    log: Callable[[str], None] = lambda _: None,
) -> DevChoice:
    """Every dev criterion for the protocol's grid and controls, and the rule's choice (no CFC test file is read).

    ``num_questions``, ``seeds`` and ``resamples`` cut the run down for tests.
    """
    start = time.perf_counter()
    protocol, _ = load_protocol(protocol_path)
    data_dir = Path(data_dir)
    grid = protocol_grid(protocol)
    current = _by_label(grid, protocol["candidates"]["current"], "current")
    old = _by_label(grid, protocol["candidates"]["old"], "old")
    if grid[current] != CURRENT_DEFAULT:
        raise ValueError(f"{protocol_path}: candidates.current is not ProbEval's default {CURRENT_DEFAULT.label!r}")
    controls = [c for name in protocol["controls"]["simplicity"] for c in CONTROLS if c.label == name]
    cands = grid + controls
    seeds = list(seeds) if seeds is not None else list(protocol["measures"]["seeds"])
    maker = maker or ClusterMaker()
    scores = _score_dev(data_dir, protocol["data"]["dev"], cands, seeds, maker, num_questions, log)
    crit_cfg = protocol["criteria"]
    criteria: list[Criterion] = []
    wrong_question: dict[str, np.ndarray] = {}
    for name in protocol["data"]["dev"]:
        questions = scores.questions[name]
        criteria.append(Criterion("blanc", name, crit_cfg["blanc"]["margin"], scores.values[name]["blanc"].mean(1)))
        sets = _answer_set_values(data_dir, name, questions, cands, seeds, maker, crit_cfg["answer_sets"])
        criteria.append(Criterion("answer_sets", name, crit_cfg["answer_sets"]["margin"], per_question=sets))
        log(f"  answer sets {name}: {sets.shape[1]} questions")
        pools = load_dev_systems(data_dir, name, seed=0, num_questions=num_questions)
        kls, ref = _system_kls(pools, maker, questions, cands, seeds)
        criteria.append(Criterion("pools", name, crit_cfg["pools"]["margin"], kls=kls.mean(axis=1), reference=ref))
        log(f"  pools {name}: {len(pools.question_ids)} questions, {len(pools.systems)} pools")
        panel_criteria, wrong_question[name] = _panel_criteria(
            data_dir, name, protocol, questions, cands, seeds, maker, log
        )
        criteria += panel_criteria
        if "stability" in crit_cfg:  # version 4
            stable = stability_values(questions, cands, seeds, maker)
            criteria.append(Criterion("stability", name, crit_cfg["stability"]["margin"], per_question=stable))
            log(f"  stability {name}: {len(questions)} questions")
    res = protocol["measures"]
    n_boot = resamples if resamples is not None else res["bootstrap_resamples"]
    boots = {c.key: c.resampled(n_boot, res["bootstrap_seed"]) for c in criteria}
    labels = [c.label for c in cands]
    rule = choose(criteria, boots, labels, current, list(range(len(grid), len(cands))))
    log(f"  chosen {labels[rule['chosen']]} (current {labels[current]})")
    embedders = {e: maker.embedder(e).name for e in sorted({c.embedder for c in cands if c.embedder})}
    return DevChoice(
        protocol,
        cands,
        scores,
        criteria,
        boots,
        rule,
        current,
        old,
        wrong_question,
        time.perf_counter() - start,
        embedders,
    )


def _panel_criteria(
    data_dir: Path,
    name: str,
    protocol: dict[str, Any],
    questions: Sequence[Question],
    cands: Sequence[ClusterCandidate],
    seeds: Sequence[int],
    maker: ClusterMaker,
    log: Callable[[str], None],
) -> tuple[list[Criterion], np.ndarray]:
    """The dev panel's criteria on one dev set (the panel; from version 3, its wording systems) and, per
    candidate, the share of questions where the wrong-question control scores at least as well as the real."""
    crit_cfg = protocol["criteria"]
    panel = build_panel(data_dir, name, protocol["panel"], question_ids=[q.qid for q in questions])
    kls, _ = _system_kls(panel.data, maker, questions, cands, seeds)
    mean_kls = kls.mean(axis=1)
    out = [
        Criterion(
            "panel",
            name,
            crit_cfg["panel"]["margin"],
            kls=mean_kls[:, panel.ranked],
            reference=panel.gold[panel.ranked],
        )
    ]
    wrong_question = np.array([wrong_question_not_worse(k, panel) for k in mean_kls])
    log(f"  panel {name}: {len(panel.data.question_ids)} questions, {len(panel.ranked)} systems")
    if "wording" in crit_cfg and panel.wording:
        # KLs rounded to 10 decimals: equal counts summed in another order are one KL (a constant side counts 0).
        out.append(
            Criterion(
                "wording",
                name,
                crit_cfg["wording"]["margin"],
                kls=np.round(mean_kls[:, panel.wording], 10),
                reference=np.round(panel.gold[panel.wording], 10),
            )
        )
        log(f"  wording panel {name}: {len(panel.wording)} systems")
    return out, wrong_question


def _answer_set_values(
    data_dir: Path,
    name: str,
    questions: Sequence[Question],
    cands: Sequence[ClusterCandidate],
    seeds: Sequence[int],
    maker: ClusterMaker,
    settings: dict[str, Any],
) -> np.ndarray:
    """candidates x questions: per question, Spearman of the candidate's KLs with the gold KLs over the
    answer sets (a constant side counts 0), averaged over the seeds."""
    dev = {d.name: d for d in DEV_SETS}[name]
    sampling = settings["sampling"]
    by_id = {q.qid: q for q in questions}
    studies = [
        s
        for s in load_dev_set(data_dir, dev, num_sets=settings["sets"], seed=settings["seed"], samplings=(sampling,))
        if s.question_id in by_id
    ]
    out = np.zeros((len(cands), len(seeds), len(studies)))
    for j, study in enumerate(studies):
        q = by_id[study.question_id]
        pool = study.pool_strings
        full = np.zeros((len(pool), len(q.strings)), dtype=bool)
        for i, hits in enumerate(maker.wordnet.match(pool, [[b] for b in q.strings])):
            full[i, list(hits)] = True
        gold = study.gold[sampling]
        for ci, c in enumerate(cands):
            for si, seed in enumerate(seeds):
                if si and not c.seeded:
                    out[ci, si, j] = out[ci, 0, j]
                    continue
                labels = maker.labels(c, q, seed)
                clusters = maker.clusters(c, q, seed)
                member = np.stack([full[:, labels == k].any(axis=1) for k in range(len(clusters))], axis=1)
                matches = {s: tuple(int(k) for k in np.flatnonzero(row)) for s, row in zip(pool, member, strict=True)}
                rho = spearman(study.kls_given(clusters, matches, sampling), gold)
                out[ci, si, j] = 0.0 if math.isnan(rho) else rho
    return out.mean(axis=1)


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


def _pct(values: np.ndarray, level: float = 0.95) -> Optional[dict[str, float]]:
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    tail = (1 - level) / 2 * 100
    return {"low": float(np.percentile(values, tail)), "high": float(np.percentile(values, 100 - tail))}


def _nan_none(x: Optional[float]) -> Optional[float]:
    return None if x is None or math.isnan(x) else float(x)


def dev_report(choice: DevChoice) -> dict[str, Any]:
    """The dev figures: every criterion for every candidate, paired differences, the rule's verdicts, the panel's power."""
    cands, labels = choice.candidates, [c.label for c in choice.candidates]
    chosen, current, old = choice.chosen, choice.current, choice.old
    controls = {c.label: cands.index(c) for c in cands if c.is_control}
    power = choice.protocol["panel"]["power"]
    criteria: dict[str, Any] = {}
    for c in choice.criteria:
        values, boot = c.values(), choice.boots[c.key]
        ci = {labels[i]: _pct(boot[:, i]) for i in range(len(cands))}
        entry: dict[str, Any] = {
            "name": c.name,
            "dev_set": c.dev_set,
            "margin": c.margin,
            "questions": c.num_questions,
            "figures": {labels[i]: {"value": float(values[i]), "ci": ci[labels[i]]} for i in range(len(cands))},
            "minus_current": {labels[i]: paired(c, boot, i, current) for i in range(len(cands)) if i != current},
            "chosen_minus_old": paired(c, boot, chosen, old) if chosen != old else None,
            "chosen_minus_controls": {k: paired(c, boot, chosen, i) for k, i in controls.items() if i != chosen},
            "candidates_minus_controls": {
                labels[j]: {k: paired(c, boot, j, i) for k, i in controls.items()}
                for j in range(len(cands))
                if not cands[j].is_control
            },
        }
        if c.name in ("panel", "wording"):
            detectable = [
                detectable_difference(boot[:, i] - boot[:, current], power)
                for i in range(len(cands))
                if i != current and not cands[i].is_control
            ]
            found = [d for d in detectable if d is not None]
            entry["systems"] = int(c.reference.shape[0]) if c.reference is not None else 0
            entry["detectable_difference"] = {
                "median": float(np.median(found)) if found else None,
                "min": float(np.min(found)) if found else None,
                "max": float(np.max(found)) if found else None,
                "power": power,
            }
        criteria[c.key] = entry
    clusters = {}
    for name, qs in choice.scores.questions.items():
        res = choice.protocol["measures"]
        idx = _resample_indices(len(qs), res["bootstrap_resamples"], res["bootstrap_seed"])
        vals, counts = choice.scores.values[name], choice.scores.clusters[name]
        clusters[name] = {
            "questions": len(qs),
            "human_clusters_per_question": float(choice.scores.human_clusters[name].mean()),
            "candidates": {c.label: _set_figures(vals, counts, i, idx) for i, c in enumerate(cands)},
            "consistency": reference_consistency(qs, ClusterMaker()),
        }
    return {
        "chosen": labels[chosen],
        "chosen_clustering": labels[choice.rule["chosen_clustering"]],
        "current": labels[current],
        "old": labels[old],
        "criteria": criteria,
        "verdicts_against_current": choice.rule["against_current"],
        "controls_against_chosen_clustering": choice.rule["controls_against_chosen"],
        "chosen_clustering_against_controls": choice.rule["chosen_against_controls"],
        "clusterings_beating_every_control": choice.rule["clusterings_beating_every_control"],
        "clusterings_against_controls": choice.rule["clusterings_against_controls"],
        "control_shares_of_each_clustering": {
            labels[j]: control_shares(choice.criteria, j, controls)
            for j in range(len(cands))
            if not cands[j].is_control
        },
        "control_shares": control_shares(choice.criteria, choice.rule["chosen_clustering"], controls),
        "wrong_question_not_worse": {
            name: {labels[i]: float(v) for i, v in enumerate(vals)} for name, vals in choice.wrong_question.items()
        },
        "clusters": clusters,
        "embedders": choice.embedders,
        "seconds": round(choice.seconds, 1),
    }


def report_on_test(
    choice: DevChoice,
    data_dir: Union[str, Path],
    *,
    num_questions: Optional[int] = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Read CFC test once: the chosen default, the old one, the current one and the controls, at the cluster
    level and on the eight model systems, with chosen-minus-each as paired differences."""
    protocol, cands, seeds = choice.protocol, choice.candidates, choice.scores.seeds
    chosen = choice.rule["chosen_clustering"] if cands[choice.chosen].is_control else choice.chosen
    shown = list(
        dict.fromkeys(
            [choice.chosen, chosen, choice.current, choice.old] + [i for i, c in enumerate(cands) if c.is_control]
        )
    )
    subset = [cands[i] for i in shown]
    labels = [c.label for c in subset]
    new = labels.index(cands[choice.chosen].label)
    maker = ClusterMaker()
    questions = read_questions(Path(data_dir) / DATA["cfc_test"], num_questions)
    values, counts, human = _score_set("cfc_test", questions, subset, seeds, maker)
    res = protocol["measures"]
    idx = _resample_indices(len(questions), res["bootstrap_resamples"], res["bootstrap_seed"])
    out: dict[str, Any] = {
        "questions": len(questions),
        "human_clusters_per_question": float(human.mean()),
        "new": labels[new],
        "candidates": {label: _set_figures(values, counts, i, idx) for i, label in enumerate(labels)},
        "new_minus": {label: _paired(values, new, i, idx) for i, label in enumerate(labels) if i != new},
        "consistency": reference_consistency(questions, maker),
        "stability": {
            label: stability_summary(v)
            for label, v in zip(labels, stability_values(questions, subset, seeds, maker), strict=True)
        },
    }
    log("  system level on CFC test")
    data = load_systems(data_dir)
    if num_questions is not None:
        data.question_ids = data.question_ids[:num_questions]
    by_id = {q.qid for q in questions}
    data.question_ids = [q for q in data.question_ids if q in by_id]
    rows = np.array([i for i, name in enumerate(data.systems) if name != "human"], dtype=int)
    kls, ref = _system_kls(data, maker, questions, subset, seeds)
    per_seed = kls[:, :, rows]  # candidates x seeds x systems x questions
    mean_kl = per_seed.mean(axis=1)
    ref = ref[rows]
    system = Criterion("systems", "cfc_test", 0.0, kls=mean_kl, reference=ref)
    boot = system.resampled(res["bootstrap_resamples"], res["bootstrap_seed"])
    value = system.values()
    figures = {}
    for i, label in enumerate(labels):
        seed_rhos = [
            Criterion("s", "t", 0.0, kls=per_seed[i : i + 1, k], reference=ref).values()[0] for k in range(len(seeds))
        ]
        figures[label] = {
            "rho": float(value[i]),
            "ci": _pct(boot[:, i]),
            "seeds": {"min": float(np.min(seed_rhos)), "max": float(np.max(seed_rhos))},
            "seed_spread": seed_spread(per_seed[i], [data.systems[r] for r in rows]),
        }
    power = protocol["panel"]["power"]
    out["system_level"] = {
        "questions": len(data.question_ids),
        "systems": [data.systems[r] for r in rows],
        "figures": figures,
        "new_minus": {
            label: {
                **paired(system, boot, new, i),
                "detectable": detectable_difference(boot[:, new] - boot[:, i], power),
            }
            for i, label in enumerate(labels)
            if i != new
        },
    }
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
    start, cpu = time.perf_counter(), time.process_time()
    protocol, digest = load_protocol(protocol_path)
    commit, clean = _git_state()  # before anything is computed: the code that runs
    log("cluster-level study: dev criteria and the rule")
    choice = select_on_dev(data_dir, protocol_path=protocol_path, num_questions=num_questions, log=log, **cut)
    dev = dev_report(choice)
    log("cluster-level study: CFC test, read once")
    test = report_on_test(choice, data_dir, num_questions=num_questions, log=log)
    return {
        "protocol": {
            "file": "studies/validation/protocol.toml",
            "version": protocol["version"],
            "fixed": protocol["fixed"],
            "sha256": digest,
            "commit": commit,
            "code_committed": clean,
            "changes": protocol.get("changes", []),
            "criteria": protocol["criteria"],
            "panel": protocol["panel"],
        },
        "dev": dev,
        "cfc_test": test,
        "questions_limit": num_questions,
        "seeds": choice.scores.seeds,
        "seconds": round(time.perf_counter() - start, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
    }
