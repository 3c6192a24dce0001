"""System-level validity: do automatic settings rank real systems the way the human clusters do?

The nine CFC test systems are the eight GPT-2 variants (``cfc/test.samples.*.jsonl``:
distinct sampled answers, sample counts not kept, so every answer weighs 1) and the
extra human answers (``cfc/test.predictions.human.json``, with counts). The reference is
ProbEval with the data's **human clusters** and WordNet matching. A setting's system
score is its KL averaged over the test questions; its agreement is Spearman's rho (and
Kendall's tau) between its system scores and the reference's over the **eight model
systems**; the human file, the references' own raw answers, is an oracle that ranks first
under every setting, so the nine-system rho is shown beside, labelled oracle. Intervals:
95% bootstrap over test questions (both sides recomputed on each resample).

**The automatic default** is what ProbEval ships (:func:`shipped_default`), chosen by one
selection path only: the cluster-level study under ``protocol.toml``
(``python -m studies.validation clusters``). Here it is only measured. Every lever
(:data:`LEVERS`) is an exploration, its choice made on dev data only
(:mod:`studies.validation.selection`: system-like pools of CFC dev and ProtoQA dev
answers) before any CFC test file is opened; CFC test then reports each choice once
(:mod:`studies.validation.system_study` runs the two in that order). A lever's pick is
never the default. Automatic clusters are made from each question's raw answers and
counts only, never from clusters a targets file carries (:meth:`_Scorer.clusters`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.distributions import human_counts, kl_divergence, laplace_smoothed, model_counts
from cfc_probeval.embedders import Embedder, get_embedder
from cfc_probeval.inputs import QuestionTargets, read_samples, read_targets
from cfc_probeval.matching import GPMatcher, Matcher, WordNetMatcher, best_clusters, make_matcher
from cfc_probeval.probeval import ProbEval, normalized_sample_counts
from cfc_probeval.results import AnswerCluster
from protoqa_core.similarity.embedding import unit_rows

from .stats import RESAMPLES, bootstrap_interval, interval, spearman

__all__ = [
    "SYSTEMS",
    "Candidate",
    "candidates",
    "SystemData",
    "load_systems",
    "study_candidates",
    "lever_grids",
    "agreement",
    "PREVIOUS_DEFAULT",
    "shipped_default",
    "LEVERS",
    "RESAMPLES",
]

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
    merge: bool = False  # clusters whose answers WordNet-match each other are merged (study only)

    @property
    def label(self) -> str:
        inner = ",".join(f"{k}={v}" for k, v in self.clustering_params)
        clustering = f"{self.clustering}({inner})" if inner else self.clustering
        clustering += "+wordnet-merge" if self.merge else ""
        matching = self.matching if self.threshold is None else f"{self.matching}({self.threshold})"
        needs = self.clustering != "human" or self.matching != "wordnet"
        return f"{clustering}+{matching}" + (f" [{self.embedder}]" if needs and self.embedder else "")

    @property
    def shippable(self) -> bool:
        """ProbEval can make it its automatic default: no study-only step, an embedder that ships with the
        package, and WordNet matching (the default matching serves human-cluster references too, whose
        reference setting is WordNet, so another rule would change them as well)."""
        return (
            not self.merge
            and self.matching == "wordnet"
            and self.clustering != "human"
            and self.embedder in ("minilm", "char-ngrams")
        )

    def as_dict(self) -> dict[str, Any]:
        """The ProbEval keyword arguments of this configuration (JSON-ready; ``merge`` is study-only)."""
        out: dict[str, Any] = {"clustering": self.clustering, "matching": self.matching}
        if self.merge:
            out["merge"] = "wordnet"
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
    >>> from studies.validation.design import default_parameters
    >>> r = SimpleNamespace(chosen=default_parameters(), info={"clusterings": ["human", "hac"], "matchings": ["wordnet"]})
    >>> list(study_candidates(r))
    ['hac+wordnet']
    """
    return settings_as_candidates(result.chosen, result.info["clusterings"], result.info["matchings"], embedder)


def settings_as_candidates(
    chosen: Mapping[str, Any], clusterings: Sequence[str], matchings: Sequence[str], embedder: Optional[str] = None
) -> dict[str, Candidate]:
    """Every ``clustering x matching`` setting with the study's parameters, as candidates (reference left out).

    >>> from studies.validation.design import default_parameters
    >>> list(settings_as_candidates(default_parameters(), ["human"], ["wordnet", "cosine"]))
    ['human+cosine']
    """
    from .design import clustering_params, matching_threshold

    out = {}
    for c in clusterings:
        for m in matchings:
            if (c, m) == ("human", "wordnet"):
                continue
            out[f"{c}+{m}"] = Candidate(
                embedder or "minilm", c, clustering_params(c, chosen), m, matching_threshold(m, chosen)
            )
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

    truths: dict[str, QuestionTargets]
    question_ids: list[str]
    answers: dict[str, dict[str, dict[str, float]]]  # system -> question -> normalized answer -> count

    @property
    def systems(self) -> list[str]:
        return list(self.answers)


def load_systems(data_dir: Union[str, Path]) -> SystemData:
    """Read the CFC test targets and the nine systems (questions every system answered)."""
    data_dir = Path(data_dir)
    truths = read_targets(data_dir / TARGETS)
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
            # The clusterings need only the reference strings; the systems' answers (tens of thousands on
            # CFC test) are embedded per question by the matchers that need them, not for WordNet matching.
            emb.embed(
                sorted(
                    {a for q in self.data.question_ids for a, n in self.data.truths[q].answer_counts.items() if n > 0}
                )
            )
            self._embedders[name] = emb
        return self._embedders[name]

    def clusters(self, c: Candidate, qid: str) -> tuple[AnswerCluster, ...]:
        key = (c.embedder if c.clustering != "human" else None, c.clustering, c.clustering_params, qid)
        if key not in self._clusters:
            pkey = key[:3]
            if pkey not in self._probevals:
                from .design import CLUSTERING_LIMITS

                emb = self.embedder(c.embedder) if c.clustering != "human" else None
                options = dict(c.clustering_params) | dict(CLUSTERING_LIMITS.get(c.clustering, ()))
                self._probevals[pkey] = ProbEval(c.clustering, self.wordnet, embedder=emb, seed=self.seed, **options)
            truth = self.data.truths[qid]
            if c.clustering != "human":  # automatic clusters: the raw answers and their counts, nothing else
                truth = QuestionTargets(truth.question_id, (), dict(truth.answer_counts))
            self._clusters[key] = tuple(self._probevals[pkey].clusters_for(truth))
        if c.merge:
            merged_key = key + ("merge",)
            if merged_key not in self._clusters:
                self._clusters[merged_key] = self.wordnet_merged(self._clusters[key])
            return self._clusters[merged_key]
        return self._clusters[key]

    def wordnet_merged(self, clusters: Sequence[AnswerCluster]) -> tuple[AnswerCluster, ...]:
        """``clusters`` with every two clusters joined when an answer of one WordNet-matches the other.

        The automatic clusterings split answers that WordNet (the matching rule) treats as one,
        e.g. "car" and "automobile" in different embedding clusters; merging them is the lever.
        """
        answers, owner = [], []
        for i, cl in enumerate(clusters):
            answers.extend(cl.answers)
            owner.extend([i] * len(cl.answers))
        parent = list(range(len(clusters)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for a, hits in enumerate(self.wordnet.match(answers, [cl.answers for cl in clusters])):
            for j in hits:
                parent[root(owner[a])] = root(j)
        groups: dict[int, list[AnswerCluster]] = {}
        for i, cl in enumerate(clusters):
            groups.setdefault(root(i), []).append(cl)
        out = []
        for members in groups.values():
            top = max(members, key=lambda cl: cl.count)
            out.append(
                AnswerCluster(
                    top.id,
                    tuple(a for cl in members for a in cl.answers),
                    float(sum(cl.count for cl in members)),
                    top.representative,
                )
            )
        return tuple(out)

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
            strings = sorted(
                {a for a, n in truth.answer_counts.items() if n > 0} | {a for cl in truth.clusters for a in cl.answers}
            )
            samples = sorted({a for system in self.data.systems for a in self.data.answers[system][qid]})
            index = {a: i for i, a in enumerate(samples)}
            rows = {
                system: (
                    np.array([index[a] for a in self.data.answers[system][qid]], dtype=int),
                    np.array(list(self.data.answers[system][qid].values()), dtype=np.float64),
                )
                for system in self.data.systems
            }
            cached = {
                "strings": strings,
                "position": {a: i for i, a in enumerate(strings)},
                "samples": samples,
                "rows": rows,
            }
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
            member = (
                np.stack([full[:, idx].any(axis=1) for idx in owners], axis=1)
                if owners
                else np.zeros((n, 0), dtype=bool)
            )
            return [tuple(int(j) for j in np.flatnonzero(row)) for row in member]
        if c.matching == "cosine":
            full = self._cosine(c.embedder, qid)
            best = np.stack([full[:, idx].max(axis=1) for idx in owners], axis=1) if owners else np.zeros((n, 0))
            return best_clusters(best, float(c.threshold))
        return self.matcher(c).match(q["samples"], [cl.answers for cl in clusters])

    def kls(self, c: Candidate) -> np.ndarray:
        """systems x questions KL matrix: ProbEval's steps (model counts, Laplace smoothing, KL) per system, each
        system at its most samples on these questions, a question's missing samples counted as wrong (as
        :meth:`cfc_probeval.probeval.ProbEval.evaluate` scores them)."""
        out = np.zeros((len(self.data.systems), len(self.data.question_ids)))
        scored_at = [
            max(sum(self._question(qid)["rows"][system][1]) for qid in self.data.question_ids)
            for system in self.data.systems
        ]
        for j, qid in enumerate(self.data.question_ids):
            clusters = self.clusters(c, qid)
            matches = self.matches(c, qid, clusters)
            p_g = laplace_smoothed(human_counts([cl.count for cl in clusters]))
            for i, system in enumerate(self.data.systems):
                rows, counts = self._question(qid)["rows"][system]
                h = model_counts([matches[r] for r in rows], counts, len(clusters))
                h[len(clusters)] += scored_at[i] - sum(counts)
                out[i, j] = kl_divergence(p_g, laplace_smoothed(h))
        return out

    def cluster_count(self, c: Candidate) -> float:
        return float(np.mean([len(self.clusters(c, q)) for q in self.data.question_ids]))


def _rho(kl: np.ndarray, ref: np.ndarray, idx: Optional[np.ndarray] = None) -> float:
    if idx is None:
        return spearman(kl.mean(axis=1), ref.mean(axis=1))
    return spearman(kl[:, idx].mean(axis=1), ref[:, idx].mean(axis=1))


def _tau(kl: np.ndarray, ref: np.ndarray, idx: Optional[np.ndarray] = None) -> float:
    from scipy.stats import kendalltau

    pick = slice(None) if idx is None else idx
    x, y = kl[:, pick].mean(axis=1), ref[:, pick].mean(axis=1)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(kendalltau(x, y).statistic)


def _figure(
    stat: Callable[[np.ndarray, np.ndarray, Optional[np.ndarray]], float], kl: np.ndarray, ref: np.ndarray, seed: int
) -> dict[str, Any]:
    value = stat(kl, ref, None)
    ci = interval(bootstrap_interval(lambda idx: stat(kl, ref, idx), kl.shape[1], seed=seed))
    return {"value": None if math.isnan(value) else value, "ci": ci}


def agreement(kl: np.ndarray, ref: np.ndarray, seed: int = 0, oracle: Optional[int] = None) -> dict[str, Any]:
    """Spearman and Kendall of the system means with the reference's over the model systems (the
    ``oracle`` row, the references' own extra human answers, left out), and Spearman with it; each with a
    bootstrap interval over questions.

    >>> ref = np.array([[0.1, 0.2], [0.5, 0.4], [0.9, 1.0]])
    >>> a = agreement(ref * 2, ref, oracle=2)
    >>> round(a["rho"], 6), round(a["kendall"], 6), round(a["rho_with_oracle"], 6)
    (1.0, 1.0, 1.0)
    """
    rows = np.array([i for i in range(kl.shape[0]) if i != oracle], dtype=int)
    spear, kend = _figure(_rho, kl[rows], ref[rows], seed), _figure(_tau, kl[rows], ref[rows], seed)
    out = {
        "rho": spear["value"],
        "ci": spear["ci"],
        "kendall": kend["value"],
        "kendall_ci": kend["ci"],
        "system_means": [float(x) for x in kl.mean(axis=1)],
    }
    if oracle is not None:
        full = _figure(_rho, kl, ref, seed)
        out.update(rho_with_oracle=full["value"], ci_with_oracle=full["ci"])
    return out


#: The default before the dev-only protocol (chosen then on the CFC test systems), for the before/after figures.
PREVIOUS_DEFAULT = Candidate("minilm", "gmeans", (("k_init", 4),), "wordnet")


def shipped_default() -> Candidate:
    """ProbEval's automatic default for raw answers without clusters, as it ships (:data:`cfc_probeval.defaults.DEFAULTS`
    and the clustering's declared option defaults).

    >>> shipped_default().label
    'gmeans(k_init=8)+wordnet [minilm]'
    """
    from cfc_probeval.defaults import DEFAULTS
    from cfc_probeval.registry import CLUSTERINGS

    clusterer = CLUSTERINGS.get(DEFAULTS.clustering)
    params = (("k_init", clusterer.option("k_init").default),) if DEFAULTS.clustering in ("gmeans", "xmeans") else ()
    return Candidate(DEFAULTS.embedder, DEFAULTS.clustering, params, DEFAULTS.matching)


#: What each lever varies; its choice is made on the dev pools (``count``: by the cluster count alone).
LEVERS = {
    "grid": "the earlier grid: MiniLM and character n-grams; HAC, X-means, G-means; WordNet and cosine matching",
    "cluster_count": "HAC cut (average and complete linkage, 0.30 to 0.90) whose clusters per question match the "
    "annotators' on dev",
    "wordnet_merge": "clusters whose answers WordNet-match each other merged (MiniLM; every grid clustering)",
    "matching": "matching rule: WordNet or cosine at 0.5 to 0.8, for every MiniLM grid clustering",
    "previous_default": "the earlier automatic default (chosen then on the CFC test systems), for comparison",
}


def lever_grids(
    cosine_threshold: float, embedders: Sequence[str] = ("minilm", "char-ngrams"), extra_embedders: Sequence[str] = ()
) -> dict[str, list[Candidate]]:
    """Lever -> the candidates its choice is made among (``embedder:NAME`` for each extra embedder).

    >>> {k: len(v) for k, v in lever_grids(0.6, ["minilm"]).items()}
    {'grid': 32, 'cluster_count': 26, 'wordnet_merge': 16, 'matching': 80}
    """
    from dataclasses import replace

    base = candidates(cosine_threshold, embedders)
    first = embedders[0]
    clusterings = [(c.clustering, c.clustering_params) for c in base if c.embedder == first and c.matching == "wordnet"]
    cuts = [round(0.30 + 0.05 * i, 2) for i in range(13)]
    out = {
        "grid": base,
        "cluster_count": [
            Candidate(first, "hac", (("linkage", lk), ("distance_threshold", t)), "wordnet")
            for lk in ("average", "complete")
            for t in cuts
        ],
        "wordnet_merge": [replace(Candidate(first, c, p, "wordnet"), merge=True) for c, p in clusterings],
        "matching": [
            Candidate(first, c, p, m, t)
            for c, p in clusterings
            for m, t in [("wordnet", None)] + [("cosine", x) for x in (0.5, 0.6, 0.7, 0.8)]
        ],
    }
    for extra in extra_embedders:
        out[f"embedder:{extra}"] = candidates(cosine_threshold, [extra])
    return out
