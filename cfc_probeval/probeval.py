"""ProbEval for one question and for a data set: clusters, matching, distributions, KL.

>>> from cfc_probeval.inputs import QuestionTargets
>>> from protoqa_core.io.records import Cluster
>>> gt = QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
>>> result = evaluate_probeval({"q1": gt}, {"q1": ["dog"] * 6 + ["cat"] * 4})
>>> round(result.kl, 6), result.signature.split("|")[0]
(0.0, 'clustering:auto->human')

:class:`ProbEval` keeps one configuration and its caches across calls; docs/probeval.md describes the defaults.
"""

from __future__ import annotations

import copy
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

from protoqa_core.io.ids import reconcile_ids
from protoqa_core.io.records import Question, preview_ids
from protoqa_core.progress import report_progress
from protoqa_core.text import normalize_prediction

from .auto_clusters import automatic_clusters, preload_clusters
from .checks import check_settings
from .clustering import Clusterer, make_clusterer
from .defaults import AUTO, DEFAULTS
from .distributions import WRONG, human_counts, kl_divergence, laplace_smoothed, model_counts
from .errors import ProbEvalWarning
from .inputs import QuestionTargets, answer_counts_label, has_human_clusters, sample_counts, targets_from_question
from .matching import Matcher, make_matcher
from .registry import MATCHINGS
from .results import AnswerCluster, ClusterResult, ProbEvalResult, QuestionResult
from .sample_size import scored_sample_count, shortfall, warn_short

if TYPE_CHECKING:
    from .embedders import Embedder

__all__ = [
    "ProbEval",
    "evaluate_probeval",
    "normalized_sample_counts",
    "resolve_clustering",
]


def normalized_sample_counts(samples: Mapping[str, int]) -> dict[str, int]:
    """Samples normalized as docs/spec.md section 1 normalizes predictions, counts of equal forms added.

    >>> normalized_sample_counts({"Night": 2, "night ": 1, "evening": 1})
    {'night': 3, 'evening': 1}
    """
    out: dict[str, int] = {}
    for answer, count in samples.items():
        key = normalize_prediction(answer)
        out[key] = out.get(key, 0) + count
    return out


def _human_answer_clusters(truth: QuestionTargets) -> tuple[AnswerCluster, ...]:
    clusters = []
    for c in truth.clusters:
        # The most frequent string; ties go to the one listed first.
        best = max(c.answers, key=lambda a: truth.answer_counts.get(a, 0.0), default="")
        clusters.append(AnswerCluster(c.id, tuple(c.answers), float(c.count), best))
    return tuple(clusters)


def resolve_clustering(clustering: str, truths: Iterable[QuestionTargets]) -> str:
    """The clustering ``auto`` stands for with these targets: ``human`` when all carry human clusters, the
    automatic default when none does, an error when they mix (one data set is scored one way).

    >>> from protoqa_core.io.records import Cluster
    >>> clustered = QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6),), {"dog": 6.0})
    >>> raw = QuestionTargets("q2", (), {"dog": 6.0})
    >>> resolve_clustering("auto", [clustered]), resolve_clustering("auto", [raw]), resolve_clustering("hac", [raw])
    ('human', 'gmeans', 'hac')
    >>> resolve_clustering("auto", [clustered, raw])
    Traceback (most recent call last):
    ...
    ValueError: clustering auto: 1 of 2 question(s) have raw answers without human clusters: q2; pass clustering="human" to leave them out, or an automatic clustering (e.g. "gmeans") to cluster every question
    """
    if clustering != AUTO:
        return clustering
    answered = [t for t in truths if t.total > 0]
    without = [t.question_id for t in answered if not has_human_clusters(t)]
    if not without:
        return "human"
    if len(without) == len(answered):
        return DEFAULTS.clustering
    raise ValueError(
        f"clustering auto: {len(without)} of {len(answered)} question(s) have raw answers without human "
        f'clusters: {preview_ids(without)}; pass clustering="human" to leave them out, or an automatic '
        'clustering (e.g. "gmeans") to cluster every question'
    )


def _describe(name: str, params: Mapping[str, Any]) -> str:
    inner = ",".join(f"{k}={v}" for k, v in params.items())
    return f"{name}({inner})" if inner else name


class ProbEval:
    """A ProbEval configuration: how to cluster the targets (``auto``, ``human``, a clustering's name or a
    :class:`~cfc_probeval.clustering.Clusterer`) and match samples (a matching's name or a
    :class:`~cfc_probeval.matching.Matcher`). ``embedder`` serves automatic clustering and cosine/GP
    matching; ``**options`` are the clustering's declared options, checked by
    :func:`~cfc_probeval.checks.check_settings`. :meth:`evaluate` takes ``chunk_questions`` questions at a
    time, so memory holds only the results and bounded caches.

    >>> pe = ProbEval("human")
    >>> pe.signature(3, num_samples=100)  # doctest: +ELLIPSIS
    'clustering:human|embedder:none|matching:wordnet(stop=match)|smoothing:1|missing:wrong|n:3|n_samples:100|wordnet:...'

    With ``auto`` the signature says what it was resolved to, from the targets:

    >>> from protoqa_core.io.records import Cluster
    >>> gt = QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6),), {"dog": 6.0})
    >>> ProbEval().resolved([gt]).signature(1).split("|")[0]
    'clustering:auto->human'
    """

    chunk_questions: int = 2000

    def __init__(
        self,
        clustering: Union[str, Clusterer] = AUTO,
        matching: Union[str, Matcher] = DEFAULTS.matching,
        *,
        embedder: Union[None, str, Embedder] = None,
        model_dir: Optional[Union[str, os.PathLike]] = None,
        threshold: Optional[float] = None,
        seed: int = DEFAULTS.seed,
        all_stopword_match: bool = True,
        **options: Any,
    ) -> None:
        check_settings(clustering, matching, {"threshold": threshold, "seed": seed, **options})
        self.resolved_from_auto = False
        self._embedder_spec, self._model_dir, self._seed = embedder, model_dir, seed
        self._resolutions: dict[str, ProbEval] = {}
        self._preloaded: dict[str, tuple[AnswerCluster, ...]] = {}
        if isinstance(clustering, str):
            self.clustering_name = clustering
            # ``auto`` has no clusterer of its own: :meth:`resolved` picks one per data set.
            self.clusterer = None if clustering == AUTO else make_clusterer(clustering, seed=seed, **options)
        else:
            self.clustering_name, self.clusterer = clustering.name, clustering
        matcher_class = MATCHINGS.get(matching) if isinstance(matching, str) else type(matching)
        needs_embedder = self.clusterer is not None or matcher_class.needs_embedder
        self.embedder: Optional[Embedder] = _embedder(embedder, model_dir) if needs_embedder else None
        self.matcher = (
            make_matcher(matching, self.embedder, threshold=threshold, seed=seed, all_stopword_match=all_stopword_match)
            if isinstance(matching, str)
            else matching
        )

    @property
    def is_auto(self) -> bool:
        """Whether the clustering is still ``auto``, to be decided by the targets."""
        return self.clustering_name == AUTO and not self.resolved_from_auto

    def resolved(self, targets: Any) -> ProbEval:
        """This configuration with ``auto`` decided for ``targets``, sharing this one's matcher, embedder and
        caches (itself for any other clustering)."""
        if not self.is_auto:
            return self
        name = resolve_clustering(AUTO, _targets_by_id(targets).values())
        if name not in self._resolutions:
            child = copy.copy(self)
            child.clustering_name, child.resolved_from_auto, child._resolutions = name, True, {}
            child._preloaded = {}
            child.clusterer = make_clusterer(name, seed=self._seed)
            if child.clusterer is not None and child.embedder is None:
                self.embedder = _embedder(self._embedder_spec, self._model_dir)
                child.embedder = self.embedder
            self._resolutions[name] = child
        return self._resolutions[name]

    def signature(
        self,
        num_questions: int,
        missing: str = "wrong",
        answer_counts: Optional[str] = None,
        approximated: int = 0,
        num_samples: Union[None, int, str] = None,
        short: int = 0,
    ) -> str:
        """The reproducibility signature of a result over ``num_questions`` questions.

        ``missing`` is ``wrong`` or ``skip``; ``num_samples`` the count every question was scored at, ``short``
        the questions made up to it; ``approximated`` the matches decided on a lower-bound similarity.

        >>> ProbEval("human").signature(54, num_samples=100, short=2).split("|")[4:8]
        ['missing:wrong', 'n:54', 'n_samples:100', 'short:2']
        """
        from protoqa_core import __version__

        clustering = _describe(
            self.clusterer.name if self.clusterer else self.clustering_name,
            self.clusterer.params() if self.clusterer else {},
        )
        parts = [
            "clustering:" + ("auto->" if self.resolved_from_auto else "") + clustering,
            *([answer_counts] if answer_counts and self.clusterer is not None else []),
            f"embedder:{self.embedder.name if self.embedder else 'none'}",
            "matching:" + _describe(self.matcher.name, self.matcher.params()),
            "smoothing:1",
            f"missing:{missing}",
            f"n:{num_questions}",
        ]
        if num_samples is not None:
            parts.append(f"n_samples:{num_samples}")
        if short:
            parts.append(f"short:{short}")
        if self.matcher.uses_wordnet:
            from protoqa_core.wordnet.lookup import wordnet_version

            parts.append(f"wordnet:{wordnet_version()}")
        if approximated:
            parts.append(f"approx:{approximated}")
        parts.append(f"version:{__version__}")
        return "|".join(parts)

    def clusters_for(self, truth: QuestionTargets) -> tuple[AnswerCluster, ...]:
        """The target clusters of a question: the human ones or automatic ones
        (:func:`~cfc_probeval.auto_clusters.automatic_clusters`); with ``auto``, the question alone decides."""
        if self.is_auto:
            return self.resolved([truth]).clusters_for(truth)
        if self.clusterer is None:
            return _human_answer_clusters(truth)
        assert self.embedder is not None
        return automatic_clusters(truth, self.clusterer, self.embedder, self._preloaded)

    def score_question(
        self,
        truth: QuestionTargets,
        samples: Mapping[str, int],
        clusters: Optional[Sequence[AnswerCluster]] = None,
        *,
        num_samples: Optional[int] = None,
    ) -> QuestionResult:
        """KL(P_G || P_H) of one question from ``{answer: count}``, with every cluster's probabilities and matches.

        At ``num_samples`` samples, those it lacks count as wrong answers (docs/spec.md section 2).

        >>> from protoqa_core.io.records import Cluster
        >>> gt = QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
        >>> r = ProbEval("human").score_question(gt, {"dog": 10})
        >>> [round(c.p_h, 3) for c in r.clusters]
        [0.846, 0.077, 0.077]
        >>> [round(c.p_h, 3) for c in ProbEval("human").score_question(gt, {"dog": 10}, num_samples=20).clusters]
        [0.478, 0.043, 0.478]
        """
        if self.is_auto:
            return self.resolved([truth]).score_question(truth, samples, clusters, num_samples=num_samples)
        normalized = normalized_sample_counts(samples)
        missing = shortfall(truth.question_id, sum(normalized.values()), num_samples)
        return self._score_normalized(truth, normalized, clusters, shortfall=missing)

    def _score_normalized(
        self,
        truth: QuestionTargets,
        normalized: Mapping[str, int],
        clusters: Optional[Sequence[AnswerCluster]] = None,
        approximated: Optional[list[tuple[str, str]]] = None,
        shortfall: int = 0,
    ) -> QuestionResult:
        """:meth:`score_question` of normalized samples; lower-bound matches go to ``approximated`` when given."""
        clusters = tuple(self.clusters_for(truth) if clusters is None else clusters)
        distinct = list(normalized)
        matches, bounded = (
            self.matcher.match_reporting(distinct, [c.answers for c in clusters]) if distinct else ([], [])
        )
        if bounded:
            found = [(distinct[i], clusters[j].id) for i, j in bounded]
            if approximated is not None:
                approximated.extend(found)
            else:
                _warn_approximated(truth.question_id, found)
        counts = [normalized[s] for s in distinct]
        g = human_counts([c.count for c in clusters])
        h = model_counts(matches, counts, len(clusters))
        n = len(clusters)
        if shortfall:
            h[n] += shortfall
        p_g, p_h = laplace_smoothed(g), laplace_smoothed(h)
        given: list[dict[str, float]] = [{} for _ in range(n + 1)]
        for sample, count, hits in zip(distinct, counts, matches, strict=True):
            for j in hits or (n,):
                given[j][sample] = count / max(len(hits), 1)
        named = [(c.id, c.representative, c.answers) for c in clusters] + [(WRONG, "", ())]
        rows = tuple(
            ClusterResult(*name, float(g[j]), float(h[j]), float(p_g[j]), float(p_h[j]), given[j])
            for j, name in enumerate(named)
        )
        return QuestionResult(truth.question_id, kl_divergence(p_g, p_h), int(sum(counts)), rows)

    def evaluate(
        self,
        targets: Union[Mapping[str, Union[QuestionTargets, Question]], Iterable[Union[QuestionTargets, Question]]],
        samples: Mapping[str, Any],
        *,
        ignore_unknown: bool = False,
        only_sampled: bool = False,
        num_samples: Optional[int] = None,
        progress: bool = False,
    ) -> ProbEvalResult:
        """Mean KL over questions; see :func:`evaluate_probeval` for the arguments."""
        truths = _targets_by_id(targets)
        if self.is_auto:
            return self.resolved(truths).evaluate(
                truths,
                samples,
                ignore_unknown=ignore_unknown,
                only_sampled=only_sampled,
                num_samples=num_samples,
                progress=progress,
            )
        ids = reconcile_ids(truths, samples, ignore_unknown=ignore_unknown)
        if ids.message:
            _warn(ids.message)
        parsed = {qid: sample_counts(v, question_id=qid) for qid, v in samples.items() if qid in truths}
        scored, skipped, empty = self._questions_to_score(truths, parsed, only_sampled)
        totals = {qid: sum(parsed[qid].values()) for qid in scored}
        # Targets with nothing to score give an empty result (callers decide whether to accept it).
        count = scored_sample_count(totals, num_samples) if len(skipped) < len(truths) else None
        short = [qid for qid in scored if count is not None and totals[qid] < count]
        if short and count is not None:
            warn_short(short, totals, count)
        embedded_before = self.embedder.num_embedded if self.embedder else 0
        pairs_before = self.matcher.num_pairs_scored
        questions, distinct_samples, approximated = self._score_questions(truths, parsed, scored, count or 0, progress)
        per_question = {qid: q.kl for qid, q in questions.items()}
        mean = math.fsum(per_question.values()) / len(per_question) if per_question else math.nan
        stats = {
            "strings_embedded": (self.embedder.num_embedded if self.embedder else 0) - embedded_before,
            "wordnet_pairs_scored": self.matcher.num_pairs_scored - pairs_before if self.matcher.uses_wordnet else 0,
            "samples": sum(q.num_samples for q in questions.values()),
            "distinct_samples": distinct_samples,
            "target_answers": sum(len(truths[qid].answer_counts) for qid in questions),
        }
        return ProbEvalResult(
            mean,
            per_question,
            questions,
            len(questions),
            self.signature(
                len(questions),
                "skip" if only_sampled else "wrong",
                answer_counts_label([truths[qid] for qid in questions]),
                approximated,
                count,
                len(short),
            ),
            empty,
            skipped,
            list(ids.ignored),
            stats,
            *_clusters_per_question(questions, truths),
            num_samples=count,
            short=short,
        )

    def _questions_to_score(
        self, truths: Mapping[str, QuestionTargets], parsed: Mapping[str, Any], only_sampled: bool
    ) -> tuple[list[str], list[str], list[str]]:
        """The questions :meth:`evaluate` scores, those it leaves out (no target answers), and those without samples."""
        skipped = [qid for qid, t in truths.items() if not (t.total > 0 and (t.clusters or self.clusterer))]
        if skipped:
            what = "target answers" if self.clusterer else "target answers or human clusters"
            _warn(f"left out {len(skipped)} question(s) without {what}: {preview_ids(skipped)}", stacklevel=4)
        scorable = [qid for qid in truths if qid not in skipped]
        absent = [qid for qid in scorable if qid not in parsed]
        if absent and not only_sampled:
            raise ValueError(
                f"the samples answer {len(scorable) - len(absent)} of the {len(scorable)} question(s) with target "
                f"answers; {len(absent)} have none: {preview_ids(absent)}. A data set is scored on all its "
                "questions: answer them all, or pass only_sampled=True (--only-predicted) to score the "
                "answered ones only (the signature then names how many)"
            )
        if absent:
            _warn(f"left out {len(absent)} question(s) without samples: {preview_ids(absent)}", stacklevel=4)
        scored = [qid for qid in scorable if qid in parsed]
        empty = [qid for qid in scored if not parsed[qid]]
        return scored, skipped, empty

    def _score_questions(
        self,
        truths: Mapping[str, QuestionTargets],
        parsed: Mapping[str, Any],
        scored: Sequence[str],
        num_samples: int,
        progress: bool,
    ) -> tuple[dict[str, QuestionResult], int, int]:
        """Each scored question's result, how many distinct samples they had, and how many matches were approximated."""
        bar = report_progress(len(scored), f"ProbEval ({self.clustering_name}, {self.matcher.name})", enabled=progress)
        questions: dict[str, QuestionResult] = {}
        distinct_samples = 0
        approximated = 0
        for start in range(0, len(scored), self.chunk_questions):
            chunk = scored[start : start + self.chunk_questions]
            normalized = [normalized_sample_counts(parsed.get(qid, {})) for qid in chunk]
            self._embed_in_advance([truths[qid] for qid in chunk], normalized)
            for qid, counts in zip(chunk, normalized, strict=True):
                bounded: list[tuple[str, str]] = []
                shortfall = num_samples - sum(counts.values())
                questions[qid] = self._score_normalized(truths[qid], counts, approximated=bounded, shortfall=shortfall)
                distinct_samples += len(counts)
                if bounded:
                    _warn_approximated(qid, bounded)
                    approximated += len(bounded)
            bar.update(len(chunk))
        bar.close()
        return questions, distinct_samples, approximated

    def _embed_in_advance(self, truths: Sequence[QuestionTargets], samples: Sequence[Mapping[str, int]]) -> None:
        """Embed every string a chunk of questions will need in one call: batches of similar lengths (a third
        faster than question by question) that depend only on the inputs, so runs embed bit-identically."""
        if self.embedder is None:
            return
        needed: set[str] = set()
        for truth in truths:
            if self.clusterer is not None:
                needed.update(preload_clusters(truth, self.clusterer, self.embedder, self._preloaded))
            elif self.matcher.needs_embedder:
                needed.update(a for c in truth.clusters for a in c.answers)
        if self.matcher.needs_embedder:
            for counts in samples:
                needed.update(counts)
        self.embedder.embed(sorted(needed))


def _embedder(spec: Union[None, str, Embedder], model_dir: Optional[Union[str, os.PathLike]]) -> Embedder:
    """The embedder of ``spec``; the embedders are imported only by a setting that embeds."""
    from .embedders import get_embedder

    return get_embedder(spec, model_dir=model_dir)


def _clusters_per_question(
    questions: Mapping[str, QuestionResult], truths: Mapping[str, QuestionTargets]
) -> tuple[Optional[float], Optional[float]]:
    """Mean clusters the questions were scored with, and the annotators' mean when all have human clusters."""
    if not questions:
        return None, None
    used = math.fsum(len(q.clusters) - 1 for q in questions.values()) / len(questions)  # "wrong" is not a cluster
    if not all(has_human_clusters(truths[qid]) for qid in questions):
        return used, None
    return used, math.fsum(len(truths[qid].clusters) for qid in questions) / len(questions)


def _targets_by_id(targets: Any) -> dict[str, QuestionTargets]:
    items = targets.values() if isinstance(targets, Mapping) else targets
    out: dict[str, QuestionTargets] = {}
    for t in items:
        if isinstance(t, Question):
            t = targets_from_question(t)
        if not isinstance(t, QuestionTargets):
            raise TypeError(f"targets must be QuestionTargets or Question objects, got {type(t).__name__}")
        out[t.question_id] = t
    return out


def _warn(message: str, stacklevel: int = 3) -> None:
    warnings.warn(message, ProbEvalWarning, stacklevel=stacklevel)


def _warn_approximated(question_id: str, found: Sequence[tuple[str, str]]) -> None:
    clusters = sorted({cluster for _, cluster in found})
    _warn(
        f"question {question_id}: the WordNet similarity is a lower bound for {len(found)} match(es) with "
        f"cluster(s) {preview_ids(clusters)} (a string over the token limit, or a search budget ran out; "
        "see protoqa_core.similarity)"
    )


def evaluate_probeval(
    targets: Any,
    samples: Mapping[str, Any],
    *,
    clustering: Union[str, Clusterer] = AUTO,
    matching: Union[str, Matcher] = DEFAULTS.matching,
    ignore_unknown: bool = False,
    only_sampled: bool = False,
    num_samples: Optional[int] = None,
    progress: bool = False,
    **settings: Any,
) -> ProbEvalResult:
    """ProbEval of model samples against the targets: mean KL(P_G || P_H) over questions.

    ``targets``: question id -> :class:`~cfc_probeval.inputs.QuestionTargets` or ``Question``, or a sequence of
    them; ``samples``: question id -> answers with repetition, ``{answer: count}`` or ``[[answer, count], ...]``.
    A question absent from ``samples`` is an error unless ``only_sampled``; every question is scored at
    ``num_samples`` (default: the most any has). ``**settings`` are :class:`ProbEval`'s.

    >>> from cfc_probeval.inputs import read_targets, read_samples  # doctest: +SKIP
    >>> r = evaluate_probeval(read_targets("dev.targets.jsonl"), read_samples("samples.json"))  # doctest: +SKIP
    >>> r.kl, r.signature  # doctest: +SKIP
    """
    return ProbEval(clustering, matching, **settings).evaluate(
        targets,
        samples,
        ignore_unknown=ignore_unknown,
        only_sampled=only_sampled,
        num_samples=num_samples,
        progress=progress,
    )
