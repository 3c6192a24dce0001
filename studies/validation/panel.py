"""A dev panel of systems whose order is known by construction, for ranking clusterings at the system level.

Per dev question, the panel starts from the question's annotated answer pool
(:func:`studies.validation.sampling.build_pools`, the ``authors`` procedure: annotated
answers plus 50 stratified human answers), in which every answer's gold cluster is known.
Every system answers each question with **expected counts** (``answers`` in all), so
its counts per gold cluster, and hence its KL against the annotators' clusters under
the gold matching, are known by construction (:func:`studies.validation.questions.gold_kl`):

* ``wrong(r)``: the annotators' cluster frequencies, a share ``r`` of the answers
  replaced by **wrong-question answers** (another question's pool answers, strings
  normalization-equal to one of this question's strings removed);
* ``power(b)``: all answers correct, cluster frequencies proportional to the annotators'
  raised to the power ``b`` (below 1 flattened, above 1 sharpened). These are what
  ProbEval exists to rank; a one-cluster clustering cannot rank them.

Within a cluster the answers keep the pool's proportions. The all-wrong-question system
(``r = 1``) is the wrong-question control: it is kept out of the panel's Spearman, and
:func:`wrong_question_not_worse` reports how often a clustering scores it at least as
well as the question's real answers.

Every system above can be ranked without grouping strings that mean the same thing: a KL
over exact normalized strings ranks them almost as well as any clustering. The **wording
systems** (protocol version 3, :func:`wording_answers`) are ranked only by a score that
groups them. They answer with the question's own reference strings (its raw answers, each
listed by exactly one annotators' cluster), all correct, cluster frequencies proportional
to the annotators' raised to a power ``b``:

* ``reworded(b)``: in each cluster that has strings of more than one normalized form
  (:func:`~studies.validation.cluster_candidates.normalized_key`), the answers are drawn
  only from the forms other than the cluster's most frequent one, in their reference
  proportions: the same cluster distribution in other words;
* ``same_words(b)``: the reference strings themselves in their reference proportions.

``reworded(b)`` and ``same_words(b)`` have the same cluster counts, hence the same KL by
construction, and that KL grows as ``b`` leaves 1. A KL over strings (each normalized
string its own cluster) splits into the KL over clusters plus the weighted KL within them
(the chain rule); ``same_words`` has no within-cluster part, while ``reworded`` moves a
cluster's mass off its most frequent form, which the reference holds most of. So the string
KL puts ``reworded(1)``, the cluster distribution itself, behind shifted ``same_words``
systems: it fails this panel by construction, and a clustering ranks it only as far as it
groups the forms of a cluster. Nothing here opens a CFC test file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.inputs import read_targets
from protoqa_core.text import normalize_prediction

from .cluster_candidates import normalized_key
from .design import DEV_SETS
from .questions import gold_kl
from .sampling import STRATIFIED_ANSWERS, QuestionPool, build_pools, read_annotations
from .systems import SystemData

__all__ = [
    "Panel",
    "system_answers",
    "wording_answers",
    "build_panel",
    "wrong_question_not_worse",
    "detectable_difference",
]

# z(0.975) + z(power) for the detectable difference of a two-sided 95% test.
_Z975 = 1.959963984540054


@dataclass
class Panel:
    """The panel's systems on one dev set: their answers, KLs by construction, and which is the control."""

    data: SystemData  # systems x questions answers (the control after the ranked ones, then the wording ones)
    gold: np.ndarray  # systems x questions: the KL every system has by construction
    ranked: list[int]  # rows of the systems the panel's Spearman ranks (the control left out)
    control: int  # row of the all-wrong-question system
    real: int  # row of the system with the annotators' frequencies and no wrong answer
    wording: list[int] = field(default_factory=list)  # rows of the wording systems (their own Spearman)


def system_answers(
    pool: QuestionPool, cluster_share: Sequence[float], wrong: Mapping[str, float], wrong_share: float, answers: float
) -> tuple[dict[str, float], list[float]]:
    """A system's expected answer counts for one question, and its counts per gold category ("wrong" last).

    ``cluster_share`` splits the correct answers over the clusters; a cluster with no pool
    answer passes its share to the others. ``wrong`` holds the wrong-question answers with weights.

    >>> from studies.validation.sampling import CategoryPool
    >>> pool = QuestionPool("q", ("q.0", "q.1"), (3.0, 1.0), (3.0, 1.0, 0.0),
    ...                     (CategoryPool(("dog", "puppy"), (1.0, 3.0), "annotated"),
    ...                      CategoryPool(("cat",), (1.0,), "annotated"), CategoryPool((), (), "annotated")))
    >>> system_answers(pool, [0.75, 0.25], {"car": 1.0}, 0.2, 100)
    ({'dog': 15.0, 'puppy': 45.0, 'cat': 20.0, 'car': 20.0}, [60.0, 20.0, 20.0])
    """
    share = np.array(
        [s if sum(c.weights) > 0 else 0.0 for s, c in zip(cluster_share, pool.categories, strict=False)], float
    )
    share = share / share.sum() if share.sum() > 0 else share
    correct = answers * (1.0 - wrong_share) if wrong else answers
    out: dict[str, float] = {}
    per_category = []
    for k, category in enumerate(pool.categories[: pool.num_clusters]):
        total = sum(category.weights)
        mass = correct * float(share[k])
        per_category.append(mass)
        for s, w in zip(category.strings, category.weights, strict=True):
            if mass > 0:
                out[s] = out.get(s, 0.0) + mass * w / total
    wrong_total = sum(wrong.values())
    mass = answers - correct
    for s, w in wrong.items():
        out[s] = out.get(s, 0.0) + mass * w / wrong_total
    per_category.append(mass)
    return out, per_category


def wording_answers(
    strings: Sequence[Sequence[tuple[str, float]]], cluster_share: Sequence[float], answers: float, reworded: bool
) -> tuple[dict[str, float], list[float]]:
    """A wording system's expected answer counts for one question, and its counts per gold cluster ("wrong" last, 0).

    ``strings``: per gold cluster, its reference strings with their raw counts. ``cluster_share``
    splits the answers over the clusters (a cluster without strings passes its share to the
    others). With ``reworded``, a cluster whose strings have several normalized forms gives its
    answers to the forms other than its most frequent one (ties: the first), in their proportions.

    >>> strings = [[("dog", 8.0), ("dogs", 1.0), ("puppy", 1.0)], [("cat", 2.0)]]
    >>> wording_answers(strings, [0.5, 0.5], 100, reworded=False)
    ({'dog': 40.0, 'dogs': 5.0, 'puppy': 5.0, 'cat': 50.0}, [50.0, 50.0, 0.0])
    >>> wording_answers(strings, [0.5, 0.5], 100, reworded=True)
    ({'puppy': 50.0, 'cat': 50.0}, [50.0, 50.0, 0.0])
    """
    share = np.array([s if strings[k] else 0.0 for k, s in enumerate(cluster_share)], dtype=np.float64)
    share = share / share.sum() if share.sum() > 0 else share
    out: dict[str, float] = {}
    per_category = []
    for k, given in enumerate(strings):
        mass = answers * float(share[k])
        per_category.append(mass)
        chosen = list(given)
        if reworded:
            forms: dict[str, float] = {}
            for text, count in given:
                key = normalized_key(text)
                forms[key] = forms.get(key, 0.0) + count
            if len(forms) > 1:
                top = max(forms, key=lambda f: forms[f])  # the first of equals: dicts keep their order
                chosen = [(text, count) for text, count in given if normalized_key(text) != top]
        total = sum(count for _, count in chosen)
        for text, count in chosen:
            if mass > 0 and total > 0:
                out[text] = out.get(text, 0.0) + mass * count / total
    per_category.append(0.0)
    return out, per_category


def _reference_strings(truth: Any, cluster_ids: Sequence[str]) -> list[list[tuple[str, float]]]:
    """Per annotators' cluster (in ``cluster_ids``' order), its raw answers listed by no other cluster, with counts."""
    owners: dict[str, int] = {}
    for cluster in truth.clusters:
        for a in cluster.answers:
            owners[a] = owners.get(a, 0) + 1
    by_id = {c.id: c for c in truth.clusters}
    out = []
    for cid in cluster_ids:
        cluster = by_id.get(cid)
        answers = cluster.answers if cluster is not None else ()
        out.append(
            [
                (a, float(truth.answer_counts.get(a, 0.0)))
                for a in answers
                if owners[a] == 1 and truth.answer_counts.get(a)
            ]
        )
    return out


def _wrong_answers(pools: Sequence[QuestionPool], j: int, own: set[str]) -> dict[str, float]:
    """The correct pool answers of the question half the list away, less those equal to one of ``own``."""
    donor = pools[(j + max(1, len(pools) // 2)) % len(pools)]
    out: dict[str, float] = {}
    for category in donor.categories[: donor.num_clusters]:
        total = sum(category.weights)
        for s, w in zip(category.strings, category.weights, strict=True):
            if normalized_key(s) not in own:
                out[s] = out.get(s, 0.0) + w / total
    return out


def build_panel(
    data_dir: Union[str, Path],
    name: str,
    settings: Mapping[str, Any],
    *,
    question_ids: Optional[Sequence[str]] = None,
) -> Panel:
    """The panel of dev set ``name`` (``cfc_dev`` or ``protoqa_dev``) under the protocol's ``settings``.

    ``question_ids`` restricts it to those questions (in their order).

    >>> from studies.validation.cluster_candidates import load_protocol
    >>> panel = build_panel("../shared/data", "cfc_dev", load_protocol()[0]["panel"], question_ids=["r1q1", "r1q2"])
    >>> len(panel.data.systems), panel.gold.shape[1]  # doctest: +SKIP
    (22, 2)
    """
    dev = {d.name: d for d in DEV_SETS}[name]
    data_dir = Path(data_dir)
    truths = read_targets(data_dir / dev.targets)
    pools_by_id = build_pools(truths, read_annotations(data_dir / dev.annotations), stratified=STRATIFIED_ANSWERS)
    ids = [q for q in (question_ids if question_ids is not None else pools_by_id) if q in pools_by_id]
    pools = [pools_by_id[q] for q in ids]
    answers_total = float(settings["answers"])
    specs: list[tuple[str, float, float]] = [(f"wrong({r})", 1.0, float(r)) for r in settings["wrong_rates"]]
    specs += [(f"power({b})", float(b), 0.0) for b in settings["powers"]]
    specs.append((f"wrong({settings['wrong_control_rate']})", 1.0, float(settings["wrong_control_rate"])))
    answers: dict[str, dict[str, dict[str, float]]] = {label: {} for label, _, _ in specs}
    gold = np.zeros((len(specs), len(ids)))
    for j, (qid, pool) in enumerate(zip(ids, pools, strict=True)):
        own = {normalized_key(a) for a in truths[qid].answer_counts} | {
            normalized_key(s) for c in pool.categories[: pool.num_clusters] for s in c.strings
        }
        wrong = _wrong_answers(pools, j, own)
        counts = np.asarray(pool.gold_counts, dtype=np.float64)
        for i, (label, power, rate) in enumerate(specs):
            share = counts**power if power else np.ones_like(counts)
            given, per_category = system_answers(pool, share / share.sum(), wrong, rate, answers_total)
            merged: dict[str, float] = {}
            for answer, count in given.items():  # ProbEval's normalization of samples, counts of equal forms added
                key = normalize_prediction(answer)
                merged[key] = merged.get(key, 0.0) + count
            answers[label][qid] = merged
            gold[i, j] = gold_kl(pool.gold_counts, per_category)
    control = len(specs) - 1
    wording = [float(b) for b in settings.get("wording_powers", ())]
    labels = [f"{kind}({b})" for b in wording for kind in ("reworded", "same_words")]
    rows = []
    for label in labels:
        answers[label] = {}
    for qid, pool in zip(ids, pools, strict=True):
        strings = _reference_strings(truths[qid], pool.cluster_ids)
        counts = np.asarray(pool.gold_counts, dtype=np.float64)
        column = []
        for b in wording:
            share = counts**b if b else np.ones_like(counts)
            for kind in ("reworded", "same_words"):
                given, per_category = wording_answers(strings, share / share.sum(), answers_total, kind == "reworded")
                worded: dict[str, float] = {}
                for answer, count in given.items():
                    key = normalize_prediction(answer)
                    worded[key] = worded.get(key, 0.0) + count
                answers[f"{kind}({b})"][qid] = worded
                column.append(gold_kl(pool.gold_counts, per_category))
        rows.append(column)
    if labels:
        gold = np.vstack([gold, np.array(rows, dtype=np.float64).T.reshape(len(labels), len(ids))])
    data = SystemData(truths, ids, answers)
    return Panel(data, gold, list(range(control)), control, 0, list(range(len(specs), len(specs) + len(labels))))


def wrong_question_not_worse(kls: np.ndarray, panel: Panel) -> float:
    """Share of questions where the all-wrong-question system's KL is at most the real answers' (0 is right).

    ``kls``: systems x questions, the panel's rows.

    >>> p = Panel(SystemData({}, ["a", "b"], {}), np.zeros((2, 2)), [0], 1, 0)
    >>> wrong_question_not_worse(np.array([[0.1, 0.5], [0.9, 0.5]]), p)
    0.5
    """
    return float(np.mean(kls[panel.control] <= kls[panel.real]))


def detectable_difference(paired: np.ndarray, power: float = 0.8) -> Optional[float]:
    """The smallest difference a two-sided 95% test detects with ``power``, from bootstrap paired differences.

    (z(0.975) + z(power)) times the standard deviation of the resampled differences; None without spread.
    Here the standard deviation is 0.01155 and 1.960 + 0.842 = 2.802.

    >>> round(detectable_difference(np.array([-0.01, 0.01, -0.01, 0.01])), 4)
    0.0323
    """
    from scipy.stats import norm

    values = paired[~np.isnan(paired)]
    if len(values) < 2:
        return None
    sd = float(values.std(ddof=1))
    return (_Z975 + float(norm.ppf(power))) * sd if sd > 0 else None
