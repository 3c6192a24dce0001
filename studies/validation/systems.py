"""System-level validity: do automatic settings rank real systems the way the human clusters do?

The nine CFC test systems are the eight GPT-2 variants (``cfc/test.samples.*.jsonl``:
distinct sampled answers, sample counts not kept, so every answer weighs 1) and the
extra human answers (``cfc/test.predictions.human.json``, with counts). The reference is
ProbEval with the data's **human clusters** and WordNet matching. A setting's system
score is its KL averaged over the test questions; its agreement is Spearman's rho
between its nine system scores and the reference's. Intervals: 95% bootstrap over
questions (both sides recomputed on each resample).

**The automatic default** is searched on a grid (:func:`candidates`: embedder x
clustering x parameters x matching) by this agreement, with K-fold cross-validation
over the test questions: for each fold, the candidate with the highest rho on the
other folds' questions (ties: the one whose cluster count per question is closest to
the annotators') scores the fold's questions; the held-out rho is computed on those
held-out scores. The candidate chosen on all questions is the recommendation; its
in-sample rho is reported beside the held-out one, which is the headline.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from cfc_probeval.distributions import human_counts, kl_divergence, laplace_smoothed, model_counts
from cfc_probeval.embedders import Embedder, get_embedder, unit_rows
from cfc_probeval.inputs import GroundTruth, read_ground_truth, read_samples
from cfc_probeval.matching import GPMatcher, Matcher, WordNetMatcher, best_clusters, make_matcher
from cfc_probeval.probeval import AnswerCluster, ProbEval, normalized_sample_counts
from .stats import FOLDS, bootstrap_interval, fold_of, interval, spearman

__all__ = ["SYSTEMS", "Candidate", "candidates", "SystemData", "load_systems", "run_system_study", "study_candidates"]

SYSTEMS = (
    ("gpt2-large.zeroshot", "cfc/test.samples.gpt2-large.zeroshot.jsonl"),
    ("gpt2-large.oneshot", "cfc/test.samples.gpt2-large.oneshot.jsonl"),
    ("gpt2-xl.zeroshot", "cfc/test.samples.gpt2-xl.zeroshot.jsonl"),
    ("gpt2-xl.oneshot", "cfc/test.samples.gpt2-xl.oneshot.jsonl"),
    ("protoqa-ft.zeroshot", "cfc/test.samples.protoqa-ft.zeroshot.jsonl"),
    ("protoqa-ft.oneshot", "cfc/test.samples.protoqa-ft.oneshot.jsonl"),
    ("gpt2-large-ft.zeroshot", "cfc/test.samples.gpt2-large-ft.zeroshot.jsonl"),
    ("gpt2-large-ft.oneshot", "cfc/test.samples.gpt2-large-ft.oneshot.jsonl"),
    ("human", "cfc/test.predictions.human.json"),
)
TARGETS = "cfc/test.targets.jsonl"


@dataclass(frozen=True)
class Candidate:
    """A ProbEval configuration: embedder, clustering with parameters, matching with threshold.

    >>> Candidate("minilm", "hac", (("linkage", "average"), ("distance_threshold", 0.6)), "wordnet").label
    'hac(linkage=average,distance_threshold=0.6)+wordnet [minilm]'
    """

    embedder: Optional[str]
    clustering: str
    clustering_params: tuple[tuple[str, Any], ...] = ()
    matching: str = "wordnet"
    threshold: Optional[float] = None

    @property
    def label(self) -> str:
        inner = ",".join(f"{k}={v}" for k, v in self.clustering_params)
        clustering = f"{self.clustering}({inner})" if inner else self.clustering
        matching = self.matching if self.threshold is None else f"{self.matching}({self.threshold})"
        needs = self.clustering != "human" or self.matching != "wordnet"
        return f"{clustering}+{matching}" + (f" [{self.embedder}]" if needs and self.embedder else "")

    def as_dict(self) -> dict[str, Any]:
        """The ProbEval keyword arguments of this configuration (JSON-ready)."""
        out: dict[str, Any] = {"clustering": self.clustering, "matching": self.matching}
        out.update(dict(self.clustering_params))
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.clustering != "human" or self.matching != "wordnet":
            out["embedder"] = self.embedder
        return out


REFERENCE = Candidate(None, "human")


def study_candidates(result: Any, embedder: Optional[str] = None) -> dict[str, Candidate]:
    """The agreement study's settings (parameters chosen on the dev sets) as candidates, the reference left out.

    >>> from types import SimpleNamespace
    >>> from studies.validation.study import default_parameters
    >>> r = SimpleNamespace(chosen=default_parameters(), info={"clusterings": ["human", "hac"], "matchings": ["wordnet"]})
    >>> list(study_candidates(r))
    ['hac+wordnet']
    """
    return settings_as_candidates(result.chosen, result.info["clusterings"], result.info["matchings"], embedder)


def settings_as_candidates(chosen: Mapping[str, Any], clusterings: Sequence[str], matchings: Sequence[str],
                           embedder: Optional[str] = None) -> dict[str, Candidate]:
    """Every ``clustering x matching`` setting with the study's parameters, as candidates (reference left out).

    >>> from studies.validation.study import default_parameters
    >>> list(settings_as_candidates(default_parameters(), ["human"], ["wordnet", "cosine"]))
    ['human+cosine']
    """
    from .study import clustering_params, matching_threshold

    out = {}
    for c in clusterings:
        for m in matchings:
            if (c, m) == ("human", "wordnet"):
                continue
            out[f"{c}+{m}"] = Candidate(embedder or "minilm", c, clustering_params(c, chosen), m,
                                        matching_threshold(m, chosen))
    return out


def candidates(cosine_threshold: float, embedders: Sequence[str] = ("minilm", "char-ngrams")) -> list[Candidate]:
    """The grid the automatic default is searched on (``cosine_threshold`` from the matching study).

    >>> len(candidates(0.6, ["minilm"]))  # (10 HAC + 6 X-/G-means) x (WordNet, cosine)
    32
    """
    out = []
    for emb in embedders:
        clusterings: list[tuple[str, tuple]] = []
        for linkage in ("average", "complete"):
            for t in (0.4, 0.5, 0.6, 0.7, 0.8):
                clusterings.append(("hac", (("linkage", linkage), ("distance_threshold", t))))
        for name in ("xmeans", "gmeans"):
            for k in (4, 8, 16):
                clusterings.append((name, (("k_init", k),)))
        for clustering, params in clusterings:
            out.append(Candidate(emb, clustering, params, "wordnet"))
            out.append(Candidate(emb, clustering, params, "cosine", cosine_threshold))
    return out


@dataclass
class SystemData:
    """The CFC test questions every system answered, and each system's normalized answers."""

    truths: dict[str, GroundTruth]
    question_ids: list[str]
    answers: dict[str, dict[str, dict[str, int]]]  # system -> question -> normalized answer -> count

    @property
    def systems(self) -> list[str]:
        return list(self.answers)


def load_systems(data_dir: Union[str, Path]) -> SystemData:
    """Read the CFC test targets and the nine systems (questions every system answered)."""
    data_dir = Path(data_dir)
    truths = read_ground_truth(data_dir / TARGETS)
    raw = {name: read_samples(data_dir / path) for name, path in SYSTEMS}
    ids = [q for q in truths if all(q in r for r in raw.values()) and truths[q].clusters]
    answers = {name: {q: normalized_sample_counts(r[q]) for q in ids} for name, r in raw.items()}
    return SystemData(truths, ids, answers)


class _Scorer:
    """KL of every system on every question for a candidate, sharing clusterings and matchers.

    Per question, the WordNet and cosine scores of every (sample, ground-truth string)
    pair are computed once; a candidate's matching only selects its clusters' columns.
    GP matchers come from :func:`~cfc_probeval.matching.make_matcher`, one per
    embedder and threshold.
    """

    def __init__(self, data: SystemData, seed: int = 0) -> None:
        self.data, self.seed = data, seed
        self._embedders: dict[str, Embedder] = {}
        self._probevals: dict[tuple, ProbEval] = {}
        self._clusters: dict[tuple, tuple[AnswerCluster, ...]] = {}
        self.wordnet = WordNetMatcher()
        self._matchers: dict[tuple[str, Optional[str], Optional[float]], Matcher] = {}
        self._questions: dict[str, dict[str, Any]] = {}
        self._wordnet_full: dict[str, np.ndarray] = {}
        self._cosine_full: dict[tuple[str, str], np.ndarray] = {}

    def embedder(self, name: str) -> Embedder:
        if name not in self._embedders:
            emb = get_embedder(name)
            strings = {a for q in self.data.question_ids for a, n in self.data.truths[q].answer_counts.items() if n > 0}
            strings |= {a for s in self.data.answers.values() for q in self.data.question_ids for a in s[q]}
            emb.embed(sorted(strings))
            self._embedders[name] = emb
        return self._embedders[name]

    def clusters(self, c: Candidate, qid: str) -> tuple[AnswerCluster, ...]:
        key = (c.embedder if c.clustering != "human" else None, c.clustering, c.clustering_params, qid)
        if key not in self._clusters:
            pkey = key[:3]
            if pkey not in self._probevals:
                from .study import CLUSTERING_LIMITS

                emb = self.embedder(c.embedder) if c.clustering != "human" else None
                options = dict(c.clustering_params) | dict(CLUSTERING_LIMITS.get(c.clustering, ()))
                self._probevals[pkey] = ProbEval(c.clustering, self.wordnet, embedder=emb, seed=self.seed, **options)
            self._clusters[key] = tuple(self._probevals[pkey].clusters_for(self.data.truths[qid]))
        return self._clusters[key]

    def matcher(self, c: Candidate) -> Matcher:
        """The candidate's matcher (one per matching, embedder and threshold, built once)."""
        if c.matching == "wordnet":
            return self.wordnet
        key = (c.matching, c.embedder, None if c.threshold is None else float(c.threshold))
        if key not in self._matchers:
            self._matchers[key] = make_matcher(c.matching, self.embedder(c.embedder), threshold=key[2], seed=self.seed)
        return self._matchers[key]

    @property
    def gp_fallbacks(self) -> int:
        """Questions a GP matcher matched by cosine similarity because they had a single cluster."""
        return sum(m.fallbacks for m in self._matchers.values() if isinstance(m, GPMatcher))

    def _question(self, qid: str) -> dict[str, Any]:
        """Every system's distinct answers of a question in one list, and the strings clusters are made of."""
        cached = self._questions.get(qid)
        if cached is None:
            truth = self.data.truths[qid]
            strings = sorted({a for a, n in truth.answer_counts.items() if n > 0}
                             | {a for cl in truth.clusters for a in cl.answers})
            samples = sorted({a for system in self.data.systems for a in self.data.answers[system][qid]})
            index = {a: i for i, a in enumerate(samples)}
            rows = {system: (np.array([index[a] for a in self.data.answers[system][qid]], dtype=int),
                             np.array(list(self.data.answers[system][qid].values()), dtype=np.float64))
                    for system in self.data.systems}
            cached = {"strings": strings, "position": {a: i for i, a in enumerate(strings)},
                      "samples": samples, "rows": rows}
            self._questions[qid] = cached
        return cached

    def _wordnet(self, qid: str) -> np.ndarray:
        """samples x strings: the sample fully WordNet-matches the string (ProbEval's rule).

        Each string is its own one-string cluster, so the matcher's token and synset
        index scores only the pairs that can match.
        """
        if qid not in self._wordnet_full:
            q = self._question(qid)
            full = np.zeros((len(q["samples"]), len(q["strings"])), dtype=bool)
            for i, hits in enumerate(self.wordnet.match(q["samples"], [[b] for b in q["strings"]])):
                full[i, list(hits)] = True
            self._wordnet_full[qid] = full
        return self._wordnet_full[qid]

    def _cosine(self, embedder: str, qid: str) -> np.ndarray:
        key = (embedder, qid)
        if key not in self._cosine_full:
            q, emb = self._question(qid), self.embedder(embedder)
            self._cosine_full[key] = unit_rows(emb.embed(q["samples"])) @ unit_rows(emb.embed(q["strings"])).T
        return self._cosine_full[key]

    def matches(self, c: Candidate, qid: str, clusters: Sequence[AnswerCluster]) -> list[tuple[int, ...]]:
        """The clusters the candidate's matcher puts each of the question's samples in (empty: "wrong")."""
        q = self._question(qid)
        owners = [np.array([q["position"][a] for a in cl.answers], dtype=int) for cl in clusters]
        n = len(q["samples"])
        if c.matching == "wordnet":
            full = self._wordnet(qid)
            member = np.stack([full[:, idx].any(axis=1) for idx in owners], axis=1) if owners \
                else np.zeros((n, 0), dtype=bool)
            return [tuple(int(j) for j in np.flatnonzero(row)) for row in member]
        if c.matching == "cosine":
            full = self._cosine(c.embedder, qid)
            best = np.stack([full[:, idx].max(axis=1) for idx in owners], axis=1) if owners else np.zeros((n, 0))
            return best_clusters(best, float(c.threshold))
        return self.matcher(c).match(q["samples"], [cl.answers for cl in clusters])

    def kls(self, c: Candidate) -> np.ndarray:
        """systems x questions KL matrix: ProbEval's steps (model counts, Laplace smoothing, KL) per system."""
        out = np.zeros((len(self.data.systems), len(self.data.question_ids)))
        for j, qid in enumerate(self.data.question_ids):
            clusters = self.clusters(c, qid)
            matches = self.matches(c, qid, clusters)
            p_g = laplace_smoothed(human_counts([cl.count for cl in clusters]))
            for i, system in enumerate(self.data.systems):
                rows, counts = self._question(qid)["rows"][system]
                h = model_counts([matches[r] for r in rows], counts, len(clusters))
                out[i, j] = kl_divergence(p_g, laplace_smoothed(h))
        return out

    def cluster_count(self, c: Candidate) -> float:
        return float(np.mean([len(self.clusters(c, q)) for q in self.data.question_ids]))


def _rho(kl: np.ndarray, ref: np.ndarray, idx: Optional[np.ndarray] = None) -> float:
    if idx is None:
        return spearman(kl.mean(axis=1), ref.mean(axis=1))
    return spearman(kl[:, idx].mean(axis=1), ref[:, idx].mean(axis=1))


def agreement(kl: np.ndarray, ref: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """Spearman of the system means with the reference's, with a bootstrap interval over questions.

    >>> ref = np.array([[0.1, 0.2], [0.5, 0.4], [0.9, 1.0]])
    >>> agreement(ref * 2, ref)["rho"]
    1.0
    """
    rho = _rho(kl, ref)
    ci = interval(bootstrap_interval(lambda idx: _rho(kl, ref, idx), kl.shape[1], seed=seed))
    return {"rho": None if math.isnan(rho) else rho, "ci": ci,
            "system_means": [float(x) for x in kl.mean(axis=1)]}


def run_system_study(data_dir: Union[str, Path],
                     settings: Union[Mapping[str, Candidate], Callable[[], Mapping[str, Candidate]]], *,
                     cosine_threshold: float, embedders: Sequence[str] = ("minilm", "char-ngrams"),
                     folds: int = FOLDS, seed: int = 0, num_questions: Optional[int] = None,
                     log: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Agreement of each given setting with the human-cluster reference, and the automatic-default search.

    ``settings``: key -> candidate for the study's settings (tuned on the dev sets, so
    the test questions are held out from their tuning), or a function returning them,
    called after the search (so the search can run while the settings are being tuned).
    """
    start = time.perf_counter()
    data = load_systems(data_dir)
    if num_questions is not None:
        data.question_ids = data.question_ids[:num_questions]
    scorer = _Scorer(data, seed)
    ref = scorer.kls(REFERENCE)
    human_clusters = scorer.cluster_count(REFERENCE)
    out: dict[str, Any] = {"systems": data.systems, "questions": len(data.question_ids),
                           "reference": REFERENCE.label, "reference_system_means": [float(x) for x in ref.mean(axis=1)],
                           "human_clusters_per_question": human_clusters, "settings": {}, "search": {}}
    grid = candidates(cosine_threshold, embedders)
    matrices = {}
    for c in grid:
        matrices[c] = scorer.kls(c)
    counts = {c: scorer.cluster_count(c) for c in grid}
    n = len(data.question_ids)
    fold = fold_of(data.question_ids, folds, seed)
    fold_index = np.array([fold[q] for q in data.question_ids])

    def choose(idx: np.ndarray) -> Candidate:
        def key(c: Candidate) -> tuple[float, float]:
            rho = _rho(matrices[c], ref, idx)
            return (-1.0 if math.isnan(rho) else rho, -abs(counts[c] - human_clusters))
        return max(grid, key=key)  # max keeps the first of equal keys

    chosen = choose(np.arange(n))
    held_out = np.zeros_like(ref)
    by_fold = {}
    for f in range(folds):
        pick = choose(np.flatnonzero(fold_index != f))
        by_fold[str(f)] = pick.label
        held_out[:, fold_index == f] = matrices[pick][:, fold_index == f]
    out["search"] = {
        "grid_size": len(grid),
        "candidates": {c.label: {"rho": _rho(matrices[c], ref), "clusters_per_question": counts[c]} for c in grid},
        "chosen": chosen.label, "chosen_config": chosen.as_dict(),
        "chosen_clusters_per_question": counts[chosen],
        "in_sample": agreement(matrices[chosen], ref, seed),
        "held_out": agreement(held_out, ref, seed),
        "fold_choices": by_fold, "folds": folds,
    }
    log(f"  automatic default {chosen.label}: held-out rho {out['search']['held_out']['rho']}, "
        f"in-sample {out['search']['in_sample']['rho']}, {counts[chosen]:.1f} clusters/question")
    for key, c in (settings() if callable(settings) else settings).items():
        out["settings"][key] = {"label": c.label, **agreement(scorer.kls(c), ref, seed),
                                "clusters_per_question": scorer.cluster_count(c)}
        log(f"  system level {key}: rho {out['settings'][key]['rho']}")
    out["gp_single_cluster_fallbacks"] = scorer.gp_fallbacks
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out
