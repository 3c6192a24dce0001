"""The cluster-level study's candidates and questions: the protocol and its grid, each question's
distinct answer strings and annotated mentions, and every candidate's clusters of them.

:class:`ClusterMaker` clusters a question's strings under a :class:`ClusterCandidate` (or a
control) and seed; :func:`question_scores` compares the result with the annotators' clusters;
:func:`reference_consistency` measures how far the annotators' own clusters allow any clustering
to agree. :mod:`studies.validation.cluster_agreement` runs the study on them.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from cfc_probeval.embedders import Embedder, get_embedder
from cfc_probeval.inputs import QuestionTargets, read_targets
from cfc_probeval.matching import WordNetMatcher
from cfc_probeval.probeval import ProbEval
from cfc_probeval.results import AnswerCluster
from protoqa_core.text import normalize_unicode

from .partitions import adjusted_rand, blanc, contingency, v_measure

__all__ = [
    "PROTOCOL",
    "DATA",
    "METRICS",
    "ClusterCandidate",
    "CURRENT_DEFAULT",
    "CONTROLS",
    "load_protocol",
    "protocol_grid",
    "normalized_key",
    "Question",
    "read_questions",
    "ClusterMaker",
    "question_scores",
    "reference_consistency",
]

PROTOCOL = Path(__file__).with_name("protocol.toml")
#: Data set -> targets file under the data folder (dev sets first; CFC test is read last).
DATA = {
    "cfc_dev": "cfc/dev.targets.jsonl",
    "protoqa_dev": "protoqa/dev.crowdsourced.jsonl",
    "cfc_test": "cfc/test.targets.jsonl",
}
METRICS = ("blanc", "ari", "v_measure")
_MEASURE = {"blanc": blanc, "ari": adjusted_rand, "v_measure": v_measure}
_ARTICLES = ("a", "an", "the")


@dataclass(frozen=True)
class ClusterCandidate:
    """An automatic clustering of a question's distinct answer strings, or a control (``clustering`` names it).

    >>> ClusterCandidate("minilm", "gmeans", (("k_init", 4),)).label
    'gmeans(k_init=4) [minilm]'
    >>> ClusterCandidate("minilm", "hac", (("linkage", "average"), ("distance_threshold", 0.5)), True, True).label
    'normalized+hac(linkage=average,distance_threshold=0.5)+wordnet-merge [minilm]'
    >>> CONTROLS[0].label, CONTROLS[0].shippable
    ('one_cluster', False)
    """

    embedder: Optional[str]
    clustering: str
    params: tuple[tuple[str, Any], ...] = ()
    normalize_first: bool = False
    wordnet_merge: bool = False
    matching: str = "wordnet"  # read by the system-level scorer: every candidate matches with WordNet

    @property
    def is_control(self) -> bool:
        return self.clustering in _CONTROL_NAMES

    @property
    def label(self) -> str:
        if self.is_control:
            return self.clustering
        inner = ",".join(f"{k}={v}" for k, v in self.params)
        text = f"{self.clustering}({inner})" if inner else self.clustering
        text = ("normalized+" if self.normalize_first else "") + text + ("+wordnet-merge" if self.wordnet_merge else "")
        return f"{text} [{self.embedder}]"

    @property
    def shippable(self) -> bool:
        """ProbEval runs it today as its automatic clustering (no study-only step, an embedder it ships)."""
        return (
            not self.is_control
            and not self.normalize_first
            and not self.wordnet_merge
            and self.embedder in ("minilm", "char-ngrams")
        )

    @property
    def steps(self) -> int:
        """Study-only steps (normalization first, WordNet merge)."""
        return int(self.normalize_first) + int(self.wordnet_merge)

    @property
    def seeded(self) -> bool:
        return self.clustering in ("gmeans", "xmeans")


#: ProbEval's automatic default when protocol version 2 was fixed (what ships; the rule compares against it).
CURRENT_DEFAULT = ClusterCandidate("minilm", "gmeans", (("k_init", 8),))

_CONTROL_NAMES = ("one_cluster", "one_per_string", "normalized_strings", "wordnet_components")
#: The controls: no clustering, no grouping, exact normalized strings, WordNet-match components.
CONTROLS = tuple(ClusterCandidate(None, name) for name in _CONTROL_NAMES)


def load_protocol(path: Union[str, Path] = PROTOCOL) -> tuple[dict[str, Any], str]:
    """The protocol's settings and the SHA-256 of the file's bytes.

    >>> protocol, digest = load_protocol()
    >>> protocol["measures"]["seeds"], len(digest)
    ([0, 1, 2, 3, 4], 64)
    """
    data = Path(path).read_bytes()
    try:
        return tomllib.loads(data.decode("utf-8")), hashlib.sha256(data).hexdigest()
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: not a readable TOML protocol ({exc})") from None


def protocol_grid(protocol: dict[str, Any]) -> list[ClusterCandidate]:
    """Every candidate of the protocol's grid, in grid order (embedder, normalization, merge, clustering).

    >>> len(protocol_grid(load_protocol()[0]))
    11
    """
    grid = protocol["grid"]
    clusterings: list[tuple[str, tuple[tuple[str, Any], ...]]] = []
    for spec in grid["clusterings"]:
        name = spec["clustering"]
        if name in ("gmeans", "xmeans"):
            start = (("init", str(spec["init"])),) if "init" in spec else ()  # version 4: a start with no seed
            clusterings += [(name, (("k_init", int(k)), *start)) for k in spec["k_init"]]
        elif name == "hac":
            clusterings += [
                (name, (("linkage", spec["linkage"]), ("distance_threshold", float(t))))
                for t in spec["distance_threshold"]
            ]
        else:
            raise ValueError(f"protocol: unknown clustering {name!r} in grid.clusterings")
    return [
        ClusterCandidate(emb, name, params, bool(norm), bool(merge))
        for emb in grid["embedders"]
        for norm in grid["normalize_first"]
        for merge in grid["wordnet_merge"]
        for name, params in clusterings
    ]


def _lemma(word: str) -> str:
    from protoqa_core.wordnet.lookup import open_wordnet

    forms = open_wordnet().morphy(word, "n")
    return min(forms, key=lambda f: (len(f), f)) if forms else word


def normalized_key(text: str) -> str:
    """The light normalization: Unicode, case, punctuation, a leading article, each word's WordNet noun lemma.

    >>> normalized_key("A Person"), normalized_key("the cars!"), normalized_key("people")
    ('person', 'car', 'people')
    """
    words = "".join(ch if ch.isalnum() or ch in " '" else " " for ch in normalize_unicode(text).lower()).split()
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    key = " ".join(_lemma(w) for w in words)
    return key or text.strip().lower()


@dataclass
class Question:
    """One question: its distinct answer strings (most frequent first) and the annotators' mentions.

    ``mentions`` are (string index, annotators' cluster, weight): the occurrences of a string in one cluster.
    """

    qid: str
    strings: list[str]
    counts: list[float]
    mentions: list[tuple[int, str, float]]
    split_strings: int = 0  # strings that several annotator clusters list
    source: str = ""  # the targets file: ProtoQA and CFC reuse question ids
    unclustered: int = 0  # raw answers the annotators left out of every cluster: left out here too, as by ProbEval

    @property
    def key(self) -> tuple[str, str]:
        return (self.source, self.qid)

    @property
    def truth(self) -> QuestionTargets:
        return QuestionTargets(self.qid, (), dict(zip(self.strings, self.counts, strict=True)))


def read_questions(path: Union[str, Path], num_questions: Optional[int] = None) -> list[Question]:
    """The questions with human clusters of a targets file (JSONL), each with its mentions.

    >>> qs = read_questions("../shared/data/cfc/test.targets.jsonl", 1)  # doctest: +SKIP
    >>> qs[0].strings[0], sum(w for _, _, w in qs[0].mentions)  # doctest: +SKIP
    ('person', 99.0)
    """
    path = Path(path)
    truths = read_targets(path)  # validates the file; names file and line on bad input
    out = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            qid = str(row.get("metadata", {}).get("id"))
            truth = truths.get(qid)
            if truth is None or not truth.clusters:
                continue
            try:
                clusters = {str(k): list(v["answers"]) for k, v in row["answers"]["clusters"].items()}
            except (KeyError, TypeError, AttributeError):
                raise ValueError(f"{path}, line {line_no} (question {qid}): clusters without answer lists") from None
            raw = row["answers"].get("raw") or {}
            question = _question(path, line_no, qid, truth, clusters)
            question.unclustered = sum(
                1 for a, n in raw.items() if n and normalize_unicode(str(a)) not in _listed(clusters)
            )
            out.append(question)
            if num_questions is not None and len(out) >= num_questions:
                break
    return out


def _listed(clusters: dict[str, list[str]]) -> set[str]:
    return {normalize_unicode(str(a)) for answers in clusters.values() for a in answers}


def _question(path: Path, line_no: int, qid: str, truth: QuestionTargets, clusters: dict[str, list[str]]) -> Question:
    counts = {a: float(n) for a, n in truth.answer_counts.items() if n > 0}
    strings = sorted(counts, key=lambda a: (-counts[a], a))
    index = {a: i for i, a in enumerate(strings)}
    listed: dict[str, dict[str, float]] = {}
    for cid, answers in clusters.items():
        for a in answers:
            a = normalize_unicode(str(a))
            listed.setdefault(a, {}).setdefault(cid, 0.0)
            listed[a][cid] += 1.0
    missing = [a for a in strings if a not in listed]
    if missing:
        raise ValueError(f"{path}, line {line_no} (question {qid}): raw answer {missing[0]!r} is in no cluster")
    occurrences = all(sum(listed[a].values()) == counts[a] for a in strings) and set(listed) == set(strings)
    mentions = []
    for a in strings:
        owners = listed[a]
        for cid, n in owners.items():
            mentions.append((index[a], cid, n if occurrences else counts[a] / len(owners)))
    split = sum(1 for a in strings if len(listed[a]) > 1)
    return Question(qid, strings, [counts[a] for a in strings], mentions, split, str(path))


class ClusterMaker:
    """Labels of every question's strings under a candidate and seed, with embeddings and WordNet matches shared."""

    def __init__(self) -> None:
        self.wordnet = WordNetMatcher()
        self._embedders: dict[str, Embedder] = {}
        self._probevals: dict[tuple, ProbEval] = {}
        self._links: dict[tuple[str, str], list[tuple[int, ...]]] = {}
        self._keys: dict[tuple[str, str], list[str]] = {}
        self._labels: dict[tuple, np.ndarray] = {}

    def embedder(self, name: str) -> Embedder:
        if name not in self._embedders:
            self._embedders[name] = get_embedder(name)
        return self._embedders[name]

    def keys(self, q: Question) -> list[str]:
        if q.key not in self._keys:
            self._keys[q.key] = [normalized_key(a) for a in q.strings]
        return self._keys[q.key]

    def links(self, q: Question) -> list[tuple[int, ...]]:
        """Per string, the strings it WordNet-matches (ProbEval's matching rule)."""
        if q.key not in self._links:
            self._links[q.key] = [tuple(h) for h in self.wordnet.match(q.strings, [[b] for b in q.strings])]
        return self._links[q.key]

    def _probeval(self, c: ClusterCandidate, seed: int) -> ProbEval:
        from .design import CLUSTERING_LIMITS

        key = (c.embedder, c.clustering, c.params, seed if c.seeded else 0)
        if key not in self._probevals:
            options = dict(c.params) | dict(CLUSTERING_LIMITS.get(c.clustering, ()))
            assert c.embedder is not None
            self._probevals[key] = ProbEval(
                c.clustering, self.wordnet, embedder=self.embedder(c.embedder), seed=seed, **options
            )
        return self._probevals[key]

    def labels(self, c: ClusterCandidate, q: Question, seed: int) -> np.ndarray:
        """One cluster label per string of ``q`` (numbered by first appearance)."""
        key = (c, q.key, seed if c.seeded else 0)
        if key not in self._labels:
            self._labels[key] = _canonical(self._compute(c, q, seed))
        return self._labels[key]

    def _compute(self, c: ClusterCandidate, q: Question, seed: int) -> np.ndarray:
        n = len(q.strings)
        if c.clustering == "one_cluster":
            return np.zeros(n, dtype=int)
        if c.clustering == "one_per_string":
            return np.arange(n)
        if c.clustering == "normalized_strings":
            return _canonical(self.keys(q))
        if c.clustering == "wordnet_components":
            return _merged(np.arange(n), self.links(q))
        if c.wordnet_merge:  # the merge works on the unmerged candidate's clusters, computed once
            return _merged(self.labels(replace(c, wordnet_merge=False), q, seed), self.links(q))
        if c.normalize_first:
            keys = self.keys(q)
            first: dict[str, int] = {}
            group_count: dict[str, float] = {}
            for i, k in enumerate(keys):
                first.setdefault(k, i)
                group_count[k] = group_count.get(k, 0.0) + q.counts[i]
            # The group is clustered as its most frequent string, weighted by the group's count.
            rep = {k: q.strings[i] for k, i in first.items()}
            truth = QuestionTargets(q.qid, (), {rep[k]: group_count[k] for k in first})
            owner = _owners(self._probeval(c, seed).clusters_for(truth))
            labels = np.array([owner[rep[k]] for k in keys], dtype=int)
        else:
            owner = _owners(self._probeval(c, seed).clusters_for(q.truth))
            labels = np.array([owner[a] for a in q.strings], dtype=int)
        return labels

    def clusters(self, c: ClusterCandidate, q: Question, seed: int) -> tuple[AnswerCluster, ...]:
        """The labels as ProbEval clusters (for the system-level KLs)."""
        groups: dict[int, list[int]] = {}
        for i, label in enumerate(self.labels(c, q, seed)):
            groups.setdefault(int(label), []).append(i)
        return tuple(
            AnswerCluster(
                f"{q.qid}.c{j}",
                tuple(q.strings[i] for i in idx),
                float(sum(q.counts[i] for i in idx)),
                q.strings[idx[0]],
            )
            for j, idx in enumerate(groups.values())
        )


def _owners(clusters: Sequence[AnswerCluster]) -> dict[str, int]:
    return {a: j for j, cl in enumerate(clusters) for a in cl.answers}


def _canonical(labels: Union[Sequence[Any], np.ndarray]) -> np.ndarray:
    mapping: dict[Any, int] = {}
    return np.array([mapping.setdefault(x if isinstance(x, str) else int(x), len(mapping)) for x in labels], dtype=int)


def _merged(labels: np.ndarray, links: Sequence[Sequence[int]]) -> np.ndarray:
    """``labels`` with two clusters joined whenever a string of one WordNet-matches a string of the other."""
    parent = list(range(int(labels.max()) + 1 if len(labels) else 0))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, hits in enumerate(links):
        for b in hits:
            ra, rb = root(int(labels[a])), root(int(labels[b]))
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    return _canonical([root(int(x)) for x in labels])


def question_scores(q: Question, labels: np.ndarray) -> dict[str, float]:
    """BLANC, ARI and V-measure of one question's labels against its annotators' clusters.

    >>> q = Question("q", ["a", "b", "c", "d"], [2.0, 1.0, 1.0, 1.0], [(0, "K1", 2.0), (1, "K1", 1.0),
    ...              (2, "K2", 1.0), (3, "K2", 1.0)])
    >>> {k: round(v, 4) for k, v in question_scores(q, np.array([0, 1, 2, 2])).items()}
    {'blanc': 0.7619, 'ari': 0.5455, 'v_measure': 0.779}
    """
    table = contingency([m[1] for m in q.mentions], [int(labels[m[0]]) for m in q.mentions], [m[2] for m in q.mentions])
    return {name: _MEASURE[name](table) for name in METRICS}


def reference_consistency(questions: Sequence[Question], maker: ClusterMaker) -> dict[str, Any]:
    """How consistent the annotators' clusters are, and the ceiling that puts on automatic clusterings.

    ``groups_split``: groups of normalization-equal strings whose mentions the annotators put in
    more than one cluster; ``multi_string_groups_split``: the same among groups of more than one
    distinct string (with their mentions' weights). The ceilings are the annotators' own clusters with every string (or every
    normalization group) moved whole into the cluster that holds most of its mentions: attainable
    clusterings that keep strings (groups) together, scored against the annotators.
    """
    groups = split = strings_split = multi = multi_split = 0
    multi_mentions = multi_split_mentions = 0.0
    ceil_string, ceil_group = [], []
    for q in questions:
        keys = maker.keys(q)
        owners: dict[str, dict[str, float]] = {}
        by_string: dict[int, dict[str, float]] = {}
        for i, cid, w in q.mentions:
            owners.setdefault(keys[i], {}).setdefault(cid, 0.0)
            owners[keys[i]][cid] += w
            by_string.setdefault(i, {}).setdefault(cid, 0.0)
            by_string[i][cid] += w
        groups += len(owners)
        split += sum(1 for o in owners.values() if len(o) > 1)
        members: dict[str, set[int]] = {}
        for i, _, _ in q.mentions:
            members.setdefault(keys[i], set()).add(i)
        several = {k for k, m in members.items() if len(m) > 1}
        multi += len(several)
        multi_split += sum(1 for k in several if len(owners[k]) > 1)
        multi_mentions += sum(w for i, _, w in q.mentions if keys[i] in several)
        multi_split_mentions += sum(w for i, _, w in q.mentions if keys[i] in several and len(owners[keys[i]]) > 1)
        strings_split += sum(1 for o in by_string.values() if len(o) > 1)
        major = {i: max(o, key=lambda k: (o[k], k)) for i, o in by_string.items()}
        ceil_string.append(question_scores(q, _canonical([major[i] for i in range(len(q.strings))]))["blanc"])
        gmajor = {k: max(o, key=lambda c: (o[c], c)) for k, o in owners.items()}
        ceil_group.append(question_scores(q, _canonical([gmajor[keys[i]] for i in range(len(q.strings))]))["blanc"])
    return {
        "questions": len(questions),
        "normalized_groups": groups,
        "groups_split": split,
        "share_split": split / groups if groups else None,
        "strings_in_several_clusters": strings_split,
        "multi_string_groups": multi,
        "multi_string_groups_split": multi_split,
        "multi_string_mentions": multi_mentions,
        "multi_string_mentions_split": multi_split_mentions,
        "ceiling_blanc_strings": float(np.mean(ceil_string)) if questions else None,
        "ceiling_blanc_normalized": float(np.mean(ceil_group)) if questions else None,
    }
