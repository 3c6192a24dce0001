"""Matching validity: every matcher against the annotators' assignments (the ProtoQA paper's Table 4 design).

The annotated answers of the ProtoQA dev GPT-2 samples
(``probeval_validation/protoqa_dev.gpt2.samples.annotated.json``) each carry the
cluster an annotator put them in, or "wrong". Every matcher assigns each distinct
answer (normalized as ProbEval normalizes samples) to clusters of the question's human
clusters, or to none ("wrong"):

* ``exact_match``: the clusters holding an identical string;
* ``wordnet``: ProbEval's WordNet rule (similarity exactly 1 with a string of the cluster);
* ``wordnet_wup``, ``lcs``, ``cosine`` (MiniLM), ``gp`` (a Gaussian-process classifier per
  cluster): the best-scoring cluster(s) when the score passes a threshold;
* ``roberta`` (not in the default set: it needs an encoder, ``encoder=``): the ProtoQA
  metric's ``roberta`` similarity (:mod:`protoqa_core.similarity.roberta`), the paper's
  RoBERTa method, trained per question on the crowd answers of ProtoQA dev with
  repetition. Its threshold is not tuned: it is the paper's 0.1 (``ROBERTA_THRESHOLD``),
  and the figures at the other thresholds are given in-sample, for orientation only. Its
  RBF length scale is the similarity's default, the paper's fixed 1 (``--length-scale fit``
  runs the fitted alternative; neither was chosen on these figures).

An assignment to ``m`` clusters counts ``1 / m`` for each (ProbEval splits the answer's
weight that way). With weight ``w`` per answer (its count, or 1 for the unweighted
figures): precision = correct weight / weight assigned to some cluster, recall =
correct weight / weight the annotators put in some cluster, F1 their harmonic mean.

Thresholds are chosen by count-weighted F1 with K-fold cross-validation over questions
(:data:`~studies.validation.stats.FOLDS` folds): each question's assignments use
the threshold chosen on the other folds, and the figures reported first are these
held-out ones; the threshold chosen on all questions is the recommended one.
Intervals: 95% bootstrap over questions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.embedders import Embedder, get_embedder
from cfc_probeval.inputs import QuestionTargets, read_targets
from cfc_probeval.matching import GPMatcher, WordNetMatcher, best_clusters
from protoqa_core.similarity import get_similarity
from protoqa_core.similarity.embedding import unit_rows
from protoqa_core.text import normalize_prediction

from .sampling import read_annotations
from .stats import FOLDS, bootstrap_interval, fold_of, interval

__all__ = [
    "MATCHERS",
    "ALL_MATCHERS",
    "THRESHOLDS",
    "PAPER_TABLE4",
    "ROBERTA_THRESHOLD",
    "MatchingQuestion",
    "prf",
    "run_matching_study",
    "run_length_scale_study",
    "LENGTH_SCALE_RULES",
]

MATCHERS = ("exact_match", "wordnet", "wordnet_wup", "lcs", "cosine", "gp")
ALL_MATCHERS = (*MATCHERS, "roberta")
"""The default matchers, and ``roberta``, which needs an encoder (``run_matching_study(encoder=...)``)."""
ROBERTA_THRESHOLD = 0.1
"""The ``roberta`` arm's threshold: the ProtoQA paper's, not chosen on these data."""

THRESHOLDS: dict[str, tuple[float, ...]] = {
    "wordnet_wup": (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0),
    "lcs": (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0),
    "cosine": (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9),
    "gp": (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7),
    "roberta": (0.1, 0.05, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7),
}
"""The thresholds tried per matcher (exact and WordNet matching have none)."""

PAPER_TABLE4: dict[str, dict[str, float]] = {
    "exact_match": {"precision": 1.0, "recall": 0.466, "f1": 0.636},
    "wordnet": {"precision": 0.996, "recall": 0.581, "f1": 0.734},
    "roberta": {"precision": 0.762, "recall": 0.661, "f1": 0.708},
}
"""The ProtoQA paper's Table 4, in a later version than the EMNLP 2020 one (its own annotations of other answers:
not the same data)."""

DATA = ("protoqa/dev.crowdsourced.jsonl", "probeval_validation/protoqa_dev.gpt2.samples.annotated.json")


@dataclass
class MatchingQuestion:
    """One question's annotated answers: normalized strings, gold cluster index (-1: wrong), counts."""

    question_id: str
    clusters: tuple[tuple[str, ...], ...]
    answers: tuple[str, ...]
    gold: tuple[int, ...]
    counts: tuple[int, ...]


def prf(sums: Sequence[float]) -> dict[str, float]:
    """Precision, recall and F1 from ``(correct, assigned, annotated)`` weights (0 where undefined).

    >>> prf([3.0, 4.0, 6.0])
    {'precision': 0.75, 'recall': 0.5, 'f1': 0.6}
    """
    correct, assigned, annotated = (float(x) for x in sums)
    p = correct / assigned if assigned > 0 else 0.0
    r = correct / annotated if annotated > 0 else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"precision": p, "recall": r, "f1": f}


def _sums(question: MatchingQuestion, assigned: Sequence[tuple[int, ...]]) -> np.ndarray:
    """``[[correct, assigned, annotated] weighted by count, [the same] unweighted]``."""
    out = np.zeros((2, 3))
    for gold, count, clusters in zip(question.gold, question.counts, assigned, strict=True):
        credit = (1.0 / len(clusters)) if gold in clusters else 0.0
        for row, w in ((0, float(count)), (1, 1.0)):
            out[row, 0] += w * credit
            out[row, 1] += w if clusters else 0.0
            out[row, 2] += w if gold >= 0 else 0.0
    return out


def load_questions(data_dir: Union[str, Path]) -> list[MatchingQuestion]:
    """ProtoQA dev's annotated answers, grouped per question (answers normalizing alike merged if same label)."""
    data_dir = Path(data_dir)
    truths: Mapping[str, QuestionTargets] = read_targets(data_dir / DATA[0])
    annotations = read_annotations(data_dir / DATA[1])
    out = []
    for qid, answers in annotations.items():
        if qid not in truths:
            continue
        truth = truths[qid]
        index = {c.id: j for j, c in enumerate(truth.clusters)}
        merged: dict[tuple[str, int], int] = {}
        for answer, ann in answers.items():
            key = (normalize_prediction(answer), index.get(ann.cluster, -1))
            merged[key] = merged.get(key, 0) + ann.count
        keys = sorted(merged)
        out.append(
            MatchingQuestion(
                qid,
                tuple(tuple(c.answers) for c in truth.clusters),
                tuple(k[0] for k in keys),
                tuple(k[1] for k in keys),
                tuple(merged[k] for k in keys),
            )
        )
    return out


def _scores(name: str, question: MatchingQuestion, embedder: Optional[Embedder], gp: Optional[GPMatcher]) -> np.ndarray:
    """answers x clusters scores of a thresholded matcher."""
    if name in ("wordnet_wup", "lcs"):
        sim = get_similarity(name)
        cache: dict[tuple[str, tuple[str, ...]], float] = {}
        return np.array(
            [[cache.setdefault((a, c), sim.best(a, c)) for c in question.clusters] for a in question.answers]
        ).reshape(len(question.answers), len(question.clusters))
    if name == "cosine":
        assert embedder is not None
        answers = unit_rows(embedder.embed(list(question.answers)))
        return np.array(
            [
                (answers @ unit_rows(embedder.embed(list(c))).T).max(axis=1) if c else np.zeros(len(question.answers))
                for c in question.clusters
            ]
        ).T
    if name == "gp":
        assert gp is not None
        return gp.cluster_probabilities(list(question.answers), question.clusters)
    raise ValueError(f"{name} has no scores")


def _figures(sums: np.ndarray, seed: int) -> dict[str, dict[str, Any]]:
    """Weighted and unweighted P / R / F1 of per-question sums (questions x 2 x 3), with 95% bootstrap intervals."""
    out: dict[str, dict[str, Any]] = {}
    for row, label in ((0, "weighted"), (1, "unweighted")):
        figures: dict[str, Any] = dict(prf(sums[:, row].sum(axis=0)))
        figures["ci"] = {
            key: interval(
                bootstrap_interval(
                    lambda idx, key=key, row=row: prf(sums[idx, row].sum(axis=0))[key],
                    len(sums),
                    seed=seed,
                )
            )
            for key in ("precision", "recall", "f1")
        }
        out[label] = figures
    return out


def _best_threshold(rows: np.ndarray, num_thresholds: int) -> int:
    """Index of the threshold with the highest weighted F1 over ``rows`` (questions x thresholds x 2 x 3).

    Ties go to the first (lowest) threshold.

    >>> rows = np.zeros((1, 2, 2, 3))
    >>> rows[0, 1, 0] = [1.0, 1.0, 1.0]
    >>> _best_threshold(rows, 2)
    1
    """
    f1s = [prf(rows[:, t, 0].sum(axis=0))["f1"] for t in range(num_thresholds)]
    return int(np.argmax(f1s))


def _roberta_assignments(
    data_dir: Union[str, Path],
    questions: Sequence[MatchingQuestion],
    encoder: str,
    grid: Sequence[float],
    options: Mapping[str, Any],
) -> tuple[list[list[list[tuple[int, ...]]]], str]:
    """Per question, per threshold of ``grid``, the ``roberta`` similarity's cluster of each answer; its label.

    The answers go through :meth:`~protoqa_core.similarity.roberta.RobertaSimilarity.matrix`
    (an identical cluster string first, else the best cluster when its score passes the
    threshold), with the question's text and crowd counts from the targets file.
    """
    from protoqa_core.io.readers import read_targets
    from protoqa_core.similarity.roberta import RobertaSimilarity

    targets = read_targets(Path(data_dir) / DATA[0])
    sims = {t: RobertaSimilarity(encoder, threshold=t, **options) for t in grid}
    first = sims[grid[0]]
    out = []
    for q in questions:
        target = targets[q.question_id]
        if tuple(tuple(c.answers) for c in target.clusters) != q.clusters:
            raise ValueError(f"question {q.question_id}: the targets' clusters differ from the ground truth's")
        per_threshold = []
        for t in grid:
            sim = sims[t]
            # Every threshold shares the first one's encoder and fitted models: only the cut-off differs.
            sim.encoder, sim._fitted = first.encoder, first._fitted
            matrix, _ = sim.matrix(target, list(q.answers))
            per_threshold.append([tuple(int(j) for j in np.flatnonzero(row)) for row in matrix])
        out.append(per_threshold)
    return out, first.label


def _first_questions(data_dir: Union[str, Path], num_questions: Optional[int]) -> list[MatchingQuestion]:
    """ProtoQA dev's annotated questions (the first ``num_questions``); a ValueError when there are none."""
    questions = load_questions(data_dir)
    if num_questions is not None:
        questions = questions[:num_questions]
    if not questions:
        raise ValueError("no annotated ProtoQA dev question found")
    return questions


def run_matching_study(
    data_dir: Union[str, Path],
    *,
    embedder: Union[str, Embedder, None] = None,
    matchers: Sequence[str] = MATCHERS,
    num_questions: Optional[int] = None,
    folds: int = FOLDS,
    seed: int = 0,
    budgets: Optional[Mapping[str, float]] = None,
    encoder: Optional[str] = None,
    roberta_options: Optional[Mapping[str, Any]] = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Precision, recall and F1 of every matcher on ProtoQA dev, held out and with intervals.

    ``budgets`` (matcher -> seconds) bounds slow matchers (Wu-Palmer): questions are
    scored in order until the budget is spent, and the figures say how many were covered.
    ``encoder`` (a Hub id or a folder) is the ``roberta`` arm's encoder, and
    ``roberta_options`` further options of
    :class:`~protoqa_core.similarity.roberta.RobertaSimilarity`; its figures are at the
    paper's threshold 0.1, untuned.

    >>> r = run_matching_study("../shared/data", matchers=["exact_match"], num_questions=3)  # doctest: +SKIP
    >>> sorted(r["matchers"]["exact_match"]["weighted"])  # doctest: +SKIP
    ['ci', 'f1', 'precision', 'recall']
    """
    questions = _first_questions(data_dir, num_questions)
    fold = fold_of([q.question_id for q in questions], folds, seed)
    emb = get_embedder(embedder) if any(m in ("cosine", "gp") for m in matchers) else None
    if emb is not None:
        emb.embed(
            sorted({a for q in questions for a in q.answers} | {s for q in questions for c in q.clusters for s in c})
        )
    out: dict[str, Any] = {
        "questions": len(questions),
        "answers": sum(len(q.answers) for q in questions),
        "answer_instances": sum(sum(q.counts) for q in questions),
        "folds": folds,
        "question_folds": fold,
        "matchers": {},
        "paper_table4": PAPER_TABLE4,
    }
    for name in matchers:
        start = time.perf_counter()
        covered = questions
        if name == "roberta":
            result, sums = _roberta_arm(data_dir, questions, encoder, roberta_options or {})
        elif name in ("exact_match", "wordnet"):
            result, sums = _fixed_arm(name, questions)
        else:
            budget = budgets.get(name) if budgets else None
            result, sums, covered = _threshold_arm(name, questions, emb, fold, folds, seed, budget, start)
        result.update(_figures(sums, seed))
        result["questions_covered"] = len(covered)
        result["seconds"] = round(time.perf_counter() - start, 1)
        out["matchers"][name] = result
        w = result["weighted"]
        log(
            f"  matching {name}: P {w['precision']:.3f} R {w['recall']:.3f} F1 {w['f1']:.3f}"
            + (f" (threshold {result['threshold']})" if result["threshold"] is not None else "")
            + f", {len(covered)} questions, {result['seconds']} s"
        )
    return out


def _roberta_arm(
    data_dir: Union[str, Path],
    questions: Sequence[MatchingQuestion],
    encoder: Optional[str],
    options: Mapping[str, Any],
) -> tuple[dict[str, Any], np.ndarray]:
    """The ``roberta`` arm at the paper's threshold, untuned (in-sample figures per threshold beside)."""
    if encoder is None:
        raise ValueError("the roberta arm needs an encoder (a Hub id or a local folder)")
    grid = THRESHOLDS["roberta"]
    by_threshold, label = _roberta_assignments(data_dir, questions, encoder, grid, options)
    table = np.array([[_sums(q, a) for a in per] for q, per in zip(questions, by_threshold, strict=True)])
    result = {
        "threshold": ROBERTA_THRESHOLD,
        "similarity": label,
        "tuned": False,
        "by_threshold_in_sample": {str(t): prf(table[:, j, 0].sum(axis=0)) for j, t in enumerate(grid)},
    }
    return result, table[:, 0]


def _fixed_arm(name: str, questions: Sequence[MatchingQuestion]) -> tuple[dict[str, Any], np.ndarray]:
    """Exact match or WordNet: no threshold to choose."""
    if name == "wordnet":
        matcher = WordNetMatcher()
        assigned = [matcher.match(list(q.answers), q.clusters) for q in questions]
    else:
        sim = get_similarity("exact_match")
        assigned = [
            [tuple(j for j, c in enumerate(q.clusters) if sim.best(a, c) >= 1.0) for a in q.answers] for q in questions
        ]
    sums = np.array([_sums(q, a) for q, a in zip(questions, assigned, strict=True)])  # questions x 2 x 3
    return {"threshold": None}, sums


def _threshold_arm(
    name: str,
    questions: Sequence[MatchingQuestion],
    emb: Optional[Embedder],
    fold: Mapping[str, int],
    folds: int,
    seed: int,
    budget: Optional[float],
    start: float,
) -> tuple[dict[str, Any], np.ndarray, list[MatchingQuestion]]:
    """Cosine or GP: the threshold chosen by F1 on all questions and per fold; questions in order until
    ``budget`` seconds since ``start`` are spent."""
    gp = GPMatcher(emb, 0.5, seed) if name == "gp" else None
    grid = THRESHOLDS[name]
    per_threshold = []
    covered = []
    for q in questions:
        if budget is not None and time.perf_counter() - start > budget:
            break
        scores = _scores(name, q, emb, gp)
        per_threshold.append([_sums(q, best_clusters(scores, t, strict=(name == "gp"))) for t in grid])
        covered.append(q)
    table = np.array(per_threshold)  # questions x thresholds x 2 x 3
    ids = [q.question_id for q in covered]
    chosen, by_fold = _held_out_choice(table, ids, fold, folds, len(grid))
    sums = np.array([table[i, by_fold[fold[qid]]] for i, qid in enumerate(ids)])
    result = {
        "threshold": grid[chosen],
        "fold_thresholds": {str(f): grid[t] for f, t in by_fold.items()},
        "in_sample": {
            "weighted": prf(table[:, chosen, 0].sum(axis=0)),
            "unweighted": prf(table[:, chosen, 1].sum(axis=0)),
        },
        "by_threshold": {str(t): prf(table[:, j, 0].sum(axis=0))["f1"] for j, t in enumerate(grid)},
    }
    return result, sums, covered


def _held_out_choice(
    table: np.ndarray, ids: Sequence[str], fold: Mapping[str, int], folds: int, options: int
) -> tuple[int, dict[int, int]]:
    """The option (of ``options`` columns of ``table``, questions x options x 2 x 3) with the best F1 on all
    questions, and per fold the best on the other folds' questions (all questions' choice where none is left)."""
    chosen = _best_threshold(table, options)
    by_fold = {}
    for f in range(folds):
        train = np.array([fold[qid] != f for qid in ids])
        by_fold[f] = _best_threshold(table[train], options) if train.any() else chosen
    return chosen, by_fold


LENGTH_SCALE_RULES: tuple[Union[float, str], ...] = (
    1.0,
    "median*0.125",
    "median*0.1875",
    "median*0.25",
    "median*0.375",
    "median*0.5",
    "median",
    "median*2",
    "fit",
)
"""The ``roberta`` length-scale rules compared: the papers' fixed 1 first (ties go to the earlier rule)."""


def _within_cluster_distances(sim: Any, target: Any) -> list[float]:
    """L2 distances between the encoder's vectors of different strings of the same cluster."""
    out: list[float] = []
    context = sim._context(target)
    for cluster in target.clusters:
        strings = sorted(set(cluster.answers))
        if len(strings) < 2:
            continue
        vectors = sim.encoder.embed(context, strings)
        squared = (vectors * vectors).sum(axis=1)[:, None] + (vectors * vectors).sum(axis=1)[None, :]
        squared -= 2.0 * vectors @ vectors.T
        upper = squared[np.triu_indices(len(strings), k=1)]
        out.extend(float(np.sqrt(max(v, 0.0))) for v in upper)
    return out


def _rule_similarities(encoder: str, rules: Sequence[Union[float, str]]) -> tuple[list[str], list[Any]]:
    """Each rule's name and its ``roberta`` similarity at the paper's threshold, all sharing one encoder."""
    from protoqa_core.similarity.gaussian_process import length_scale_rule
    from protoqa_core.similarity.roberta import RobertaSimilarity

    checked = [length_scale_rule(r) for r in rules]
    if len(set(checked)) != len(checked):
        raise ValueError(f"the length-scale rules repeat one: {checked}")
    names = [r if isinstance(r, str) else f"{r:g}" for r in checked]
    sims = [RobertaSimilarity(encoder, threshold=ROBERTA_THRESHOLD, length_scale=r) for r in checked]
    for sim in sims[1:]:
        sim.encoder = sims[0].encoder  # one encoder pass serves every rule
    return names, sims


def _distance_summary(distances: Sequence[float]) -> dict[str, Any]:
    """How many within-cluster distances, their median, and the RBF kernel's value there at length scale 1.

    >>> _distance_summary([1.0, 2.0, 3.0])["median"], _distance_summary([])["median"]
    (2.0, None)
    """
    median = float(np.median(distances)) if distances else None
    return {
        "pairs": len(distances),
        "median": median,
        "rbf_at_median_length_scale_1": None if median is None else float(np.exp(-0.5 * median * median)),
    }


def _rule_table(
    questions: Sequence[MatchingQuestion], targets: Mapping[str, Any], sims: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float]]:
    """Per question and rule, the matching sums (questions x rules x 2 x 3); per rule, how many answers that are
    not a cluster string it saw and sent to a cluster; and the within-cluster distances of the encoder."""
    table = np.zeros((len(questions), len(sims), 2, 3))
    non_identical = np.zeros(len(sims))
    accepted = np.zeros(len(sims))
    distances: list[float] = []
    for i, q in enumerate(questions):
        target = targets[q.question_id]
        if tuple(tuple(c.answers) for c in target.clusters) != q.clusters:
            raise ValueError(f"question {q.question_id}: the targets' clusters differ from the ground truth's")
        strings = {a for c in q.clusters for a in c}
        for k, sim in enumerate(sims):
            matrix, _ = sim.matrix(target, list(q.answers))
            assigned = [tuple(int(j) for j in np.flatnonzero(row)) for row in matrix]
            table[i, k] = _sums(q, assigned)
            for answer, clusters in zip(q.answers, assigned, strict=True):
                if answer not in strings:
                    non_identical[k] += 1
                    accepted[k] += bool(clusters)
        distances.extend(_within_cluster_distances(sims[0], target))
    return table, non_identical, accepted, distances


def run_length_scale_study(
    data_dir: Union[str, Path],
    encoder: str,
    *,
    rules: Sequence[Union[float, str]] = LENGTH_SCALE_RULES,
    num_questions: Optional[int] = None,
    folds: int = FOLDS,
    seed: int = 0,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The ``roberta`` RBF length-scale rule chosen on ProtoQA dev folds, reported on the held-out fold.

    For every rule of ``rules`` (at the paper's threshold 0.1) each annotated answer goes
    to a cluster or to none (the Table 4 design of :func:`run_matching_study`). Each of
    the ``folds`` folds of questions gets the rule with the best count-weighted F1 on the
    other folds (ties: the earlier rule), and the figures reported first are those
    held-out ones, beside exact match and WordNet on the same questions. The rule
    chosen on all questions is the recommended default. Also given per rule, in-sample:
    P / R / F1 and how many annotated answers that are not a cluster string it sends to
    a cluster (none means the similarity is exact match there); and the distances
    between different strings of the same cluster, which set the scale of the encoder.

    >>> r = run_length_scale_study("../shared/data", "/models/minilm", num_questions=5)  # doctest: +SKIP
    >>> r["chosen"]  # doctest: +SKIP
    'median'
    """
    from protoqa_core.io.readers import read_targets

    start = time.perf_counter()
    questions = _first_questions(data_dir, num_questions)
    names, sims = _rule_similarities(encoder, rules)
    targets = read_targets(Path(data_dir) / DATA[0])
    table, non_identical, accepted, distances = _rule_table(questions, targets, sims)
    ids = [q.question_id for q in questions]
    fold = fold_of(ids, folds, seed)
    chosen, by_fold = _held_out_choice(table, ids, fold, folds, len(sims))
    held_out = np.array([table[i, by_fold[fold[qid]]] for i, qid in enumerate(ids)])
    roberta: dict[str, Any] = {
        "threshold": ROBERTA_THRESHOLD,
        "encoder": sims[0].encoder_name,
        "similarity": sims[chosen].label,
        "fold_rules": {str(f): names[k] for f, k in by_fold.items()},
        **_figures(held_out, seed),
    }
    per_rule = {
        name: {
            "similarity": sims[k].label,
            "in_sample": _figures(table[:, k], seed),
            "non_identical_answers": int(non_identical[k]),
            "non_identical_accepted": int(accepted[k]),
        }
        for k, name in enumerate(names)
    }
    baselines = run_matching_study(
        data_dir, matchers=("exact_match", "wordnet"), num_questions=num_questions, folds=folds, seed=seed
    )["matchers"]
    out = {
        "questions": len(questions),
        "answers": sum(len(q.answers) for q in questions),
        "answer_instances": sum(sum(q.counts) for q in questions),
        "folds": folds,
        "seed": seed,
        "rules": names,
        "chosen": names[chosen],
        "roberta_held_out": roberta,
        "rules_in_sample": per_rule,
        "exact_match": {k: baselines["exact_match"][k] for k in ("weighted", "unweighted")},
        "wordnet": {k: baselines["wordnet"][k] for k in ("weighted", "unweighted")},
        "within_cluster_distance": _distance_summary(distances),
        "paper_table4": PAPER_TABLE4,
        "seconds": round(time.perf_counter() - start, 1),
    }
    w = roberta["weighted"]
    log(
        f"  length scale: chosen {names[chosen]} (folds: {', '.join(roberta['fold_rules'].values())}); held out "
        f"P {w['precision']:.3f} R {w['recall']:.3f} F1 {w['f1']:.3f}, {out['seconds']} s"
    )
    return out


def fold_thresholds(matching: Mapping[str, Any], name: str) -> dict[int, float]:
    """Fold -> threshold a matcher uses for that fold's questions (from :func:`run_matching_study`)."""
    return {int(f): float(t) for f, t in matching["matchers"][name]["fold_thresholds"].items()}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m studies.validation.matching_study --matchers roberta --encoder FOLDER [--out FILE]``.

    Runs the named matchers alone and prints (or writes) their figures as JSON.
    """
    import argparse
    import sys

    from protoqa_core.io import data as data_location
    from protoqa_core.similarity.gaussian_process import length_scale_rule

    p = argparse.ArgumentParser(prog="python -m studies.validation.matching_study")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--matchers", default="exact_match,wordnet,roberta")
    p.add_argument("--encoder", default=None, help="the roberta arm's encoder: a Hub id or a local folder")
    p.add_argument("--questions", type=int, default=None)
    p.add_argument(
        "--length-scale",
        default=None,
        help="the roberta arm's RBF length scale: a number (1 is the papers'), 'fit', 'median' or 'median*<factor>'",
    )
    p.add_argument(
        "--choose-length-scale",
        action="store_true",
        help="choose the roberta arm's length-scale rule on dev folds (held-out figures beside exact match and "
        "WordNet) instead of running --matchers",
    )
    p.add_argument(
        "--rules",
        default=None,
        help="with --choose-length-scale: the comma-separated rules compared (default: LENGTH_SCALE_RULES)",
    )
    p.add_argument("--out", default=None, help="write the JSON here (never over an existing file)")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.matchers.split(",") if n.strip()]
    unknown = [n for n in names if n not in ALL_MATCHERS]
    if unknown:
        p.error(f"unknown matcher(s) {', '.join(unknown)}; choose from {', '.join(ALL_MATCHERS)}")
    data_dir = data_location.resolve_data_dir(args.data_dir)
    if data_dir is None or not Path(data_dir).is_dir():
        p.error("data folder not found (give --data-dir or set $PROTOQA_DATA_DIR)")
    options: dict[str, Any] = {}
    if args.length_scale is not None:
        try:
            options["length_scale"] = length_scale_rule(_number_or_text(args.length_scale))
        except ValueError as exc:
            p.error(str(exc))
    if args.choose_length_scale:
        if args.encoder is None:
            p.error("--choose-length-scale needs --encoder")
        rules = LENGTH_SCALE_RULES
        if args.rules:
            try:
                rules = tuple(length_scale_rule(_number_or_text(r)) for r in args.rules.split(",") if r.strip())
            except ValueError as exc:
                p.error(f"--rules: {exc}")
        result = run_length_scale_study(
            data_dir,
            args.encoder,
            rules=rules,
            num_questions=args.questions,
            log=lambda m: print(m, file=sys.stderr, flush=True),
        )
        return _write_json(p, result, args.out)
    result = run_matching_study(
        data_dir,
        matchers=names,
        num_questions=args.questions,
        encoder=args.encoder,
        roberta_options=options,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    result.pop("question_folds", None)
    return _write_json(p, result, args.out)


def _number_or_text(value: str) -> Union[float, str]:
    try:
        return float(value)
    except ValueError:
        return value


def _write_json(parser: Any, result: Mapping[str, Any], out_path: Optional[str]) -> int:
    import json

    text = json.dumps(result, indent=1, allow_nan=False)
    if out_path:
        out = Path(out_path)
        if out.exists() or out.is_symlink():
            parser.error(f"{out} exists; not replacing it")
        out.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
