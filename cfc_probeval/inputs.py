"""Targets and model samples for ProbEval, from files or from memory.

A question's targets (:class:`QuestionTargets`) are its human clusters and its answer strings with how
many people gave each. From a targets file the strings are those of the clusters, counted with
``answers.raw``: ProtoQA's raw answers also hold strings the annotators threw away ("broken socks"),
which are not targets. Without raw counts a cluster's count is shared evenly by its strings. Samples are
kept as ``{answer: count}`` in order of first appearance; errors name the file, line and question id.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.ids import IdReconciliation, reconcile_ids
from protoqa_core.io.predictions import PredictionDocument, prediction_line, read_prediction_document
from protoqa_core.io.readers import clusters_from_records
from protoqa_core.io.readers import read_targets as _read_targets
from protoqa_core.io.records import Cluster, Question, check_count
from protoqa_core.io.rows import RAW_ANSWER_FORMS, raw_answer_counts

from .errors import ProbEvalWarning

__all__ = [
    "QuestionTargets",
    "SampleCounts",
    "targets_from_question",
    "targets_from_reference",
    "targets_from_raw_answers",
    "has_human_clusters",
    "answer_counts_label",
    "answer_counts_from_clusters",
    "read_targets",
    "sample_counts",
    "read_samples",
    "sample_fields",
    "drop_unknown_ids",
    "reconcile_sample_ids",
    "check_recorded_samples",
]

PathLike = Union[str, os.PathLike]
SampleCounts = dict[str, int]
SAMPLE_FIELDS = ("model_answers", "model_answers_with_count", "model_ranked_answers")


@dataclass(frozen=True)
class QuestionTargets:
    """One question's human answers: its clusters and every answer string with its count (``shared_counts``
    when each cluster's count was shared evenly by its strings, for want of raw counts)."""

    question_id: str
    clusters: tuple[Cluster, ...]
    answer_counts: Mapping[str, float] = field(default_factory=dict)
    shared_counts: bool = False

    @property
    def total(self) -> float:
        """How many human answers there are (cluster counts, else answer counts)."""
        if self.clusters:
            return float(sum(c.count for c in self.clusters))
        return float(sum(self.answer_counts.values()))


def has_human_clusters(truth: QuestionTargets) -> bool:
    """Whether a question's targets carry human clusters: at least one, taken as given.

    >>> has_human_clusters(QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6),), {"dog": 6.0}))
    True
    >>> has_human_clusters(QuestionTargets("q1", (), {"dog": 6.0, "puppy": 2.0}))
    False
    """
    return bool(truth.clusters)


def answer_counts_from_clusters(
    clusters: Sequence[Cluster], raw_answers: Optional[Mapping[str, float]] = None
) -> dict[str, float]:
    """Each distinct answer string of ``clusters`` with its count from ``raw_answers``, else an even share of
    what its cluster's count leaves.

    >>> answer_counts_from_clusters([Cluster("c0", ("age", "birthday"), 4)], {"age": 3, "birthday": 1})
    {'age': 3.0, 'birthday': 1.0}
    >>> answer_counts_from_clusters([Cluster("c0", ("age", "birthday"), 4)])
    {'age': 2.0, 'birthday': 2.0}
    """
    raw = raw_answers or {}
    out: dict[str, float] = {}
    for cluster in clusters:
        strings = list(dict.fromkeys(cluster.answers))
        known = [a for a in strings if a in raw]
        unknown = [a for a in strings if a not in raw]
        rest = max(cluster.count - sum(raw[a] for a in known), 0)
        for a in known:
            out.setdefault(a, float(raw[a]))
        for a in unknown:
            out[a] = out.get(a, 0.0) + rest / len(unknown)
    return out


def targets_from_question(question: Question) -> QuestionTargets:
    """The targets of a :class:`~protoqa_core.io.records.Question`; without clusters, all its raw answers.

    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),), raw_answers={"dog": 6, "xx": 1})
    >>> targets_from_question(q).answer_counts
    {'dog': 6.0}
    """
    if question.clusters:
        counts = answer_counts_from_clusters(question.clusters, question.raw_answers)
    else:
        counts = {a: float(c) for a, c in question.raw_answers.items()}
    return QuestionTargets(question.id, question.clusters, counts, shared_counts=not question.raw_answers)


def answer_counts_label(truths: Sequence[QuestionTargets]) -> Optional[str]:
    """The signature part saying that answer counts were shared evenly, or None when raw counts were used.

    >>> shared = QuestionTargets("q", (Cluster("q.0", ("dog",), 2),), {"dog": 2.0}, shared_counts=True)
    >>> answer_counts_label([shared]), answer_counts_label([shared, QuestionTargets("r", ())]), answer_counts_label([])
    ('answers:shared', 'answers:shared(1/2)', None)
    """
    shared = sum(1 for t in truths if t.shared_counts)
    if not shared:
        return None
    return "answers:shared" if shared == len(truths) else f"answers:shared({shared}/{len(truths)})"


def targets_from_reference(reference: Any, question_id: str, raw_answers: Any = None) -> QuestionTargets:
    """The targets from a dataset row's ``clusters`` field or a list of ``{"answers", "count"}`` records, with
    each string's count from ``raw_answers`` (the row's field) as from a targets file.

    >>> gt = targets_from_reference({"answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}, "q1")
    >>> [c.id for c in gt.clusters], gt.answer_counts, gt.shared_counts
    (['q1.0', 'q1.1'], {'dog': 3.0, 'puppy': 3.0, 'cat': 4.0}, True)
    >>> raw = {"answer": ["dog", "puppy", "cat"], "count": [5, 1, 4]}
    >>> targets_from_reference({"answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}, "q1", raw).answer_counts
    {'dog': 5.0, 'puppy': 1.0, 'cat': 4.0}
    """
    raw = raw_answer_counts(raw_answers, question_id)
    if isinstance(reference, Mapping):
        ids = reference.get("id") or []
    elif isinstance(reference, Sequence) and not isinstance(reference, str):
        ids = [r.get("id") if isinstance(r, Mapping) else None for r in reference]
    else:
        ids = []
    has_ids = bool(ids) and all(i is not None for i in ids)
    clusters = clusters_from_records(reference, question_id)
    if not has_ids:
        clusters = tuple(Cluster(f"{question_id}.{i}", c.answers, c.count) for i, c in enumerate(clusters))
    return QuestionTargets(question_id, clusters, answer_counts_from_clusters(clusters, raw), shared_counts=not raw)


def targets_from_raw_answers(raw_answers: Any, question_id: str) -> QuestionTargets:
    """The targets of raw answers without clusters (any form of :func:`raw_answer_counts`).

    >>> gt = targets_from_raw_answers({"answer": ["dog", "puppy"], "count": [5, 1]}, "q1")
    >>> gt.clusters, gt.answer_counts, has_human_clusters(gt)
    ((), {'dog': 5, 'puppy': 1}, False)
    """
    counts = raw_answer_counts(raw_answers, question_id)
    if counts is None:
        raise DataFormatError(f"raw answers are missing; accepted forms: {RAW_ANSWER_FORMS}", question_id=question_id)
    return QuestionTargets(question_id, (), counts)


def read_targets(path: PathLike) -> dict[str, QuestionTargets]:
    """The targets of each question id from a ProtoQA/CFC targets JSONL file, in file order.

    >>> gts = read_targets("../shared/data/cfc/dev.targets.jsonl")  # doctest: +SKIP
    >>> gts["r1q1"].clusters[0].id  # doctest: +SKIP
    'r1q1.1'
    """
    return {qid: targets_from_question(q) for qid, q in _read_targets(path).items()}


def sample_counts(
    value: Any, *, path: Optional[PathLike] = None, line: Optional[int] = None, question_id: Optional[str] = None
) -> SampleCounts:
    """``{answer: count}`` from a list of samples, ``[[answer, count], ...]`` or a mapping.

    >>> sample_counts(["night", "evening", "night"])
    {'night': 2, 'evening': 1}
    >>> sample_counts([["night", 2], ["evening", 1]])
    {'night': 2, 'evening': 1}
    """
    where = (path, line, question_id)
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (str, bytes)) or not isinstance(value, Sequence) and not hasattr(value, "tolist"):
        raise DataFormatError(f"samples must be a list of strings, got {type(value).__name__}", *where)
    else:
        seq = value.tolist() if hasattr(value, "tolist") else list(value)
        if seq and all(isinstance(x, (list, tuple)) for x in seq):
            items = []
            for x in seq:
                if len(x) != 2:
                    raise DataFormatError(f"expected [answer, count], found {x!r}", *where)
                items.append((x[0], x[1]))
        else:
            items = [(x, 1) for x in seq]
    out: SampleCounts = {}
    for answer, count in items:
        if not isinstance(answer, str):
            raise DataFormatError(f"samples must be strings, found {answer!r}", *where)
        out[answer] = out.get(answer, 0) + check_count(count, f"count of sample {answer!r}", *where)
    return out


def sample_fields(source: Union[PathLike, PredictionDocument]) -> list[str]:
    """Which ``model_answers``-style fields a predictions file (path or document) has.

    >>> sample_fields("../shared/data/cfc/dev.predictions.gpt2-xl.oneshot.json")  # doctest: +SKIP
    ['model_answers', 'model_answers_with_count', 'model_ranked_answers']
    """
    if not isinstance(source, PredictionDocument):
        try:
            source = read_prediction_document(source)
        except (DataFormatError, OSError):
            return []
    return [f for f in SAMPLE_FIELDS if f in source.fields]


def read_samples(source: Union[PathLike, PredictionDocument], field: Optional[str] = None) -> dict[str, SampleCounts]:
    """Samples per question id, ``{id: {answer: count}}``, from a predictions file (path or document).

    Without ``field``: ``model_answers``, else ``model_answers_with_count``, else (with a warning: repetition
    is lost) ``model_ranked_answers``.

    >>> s = read_samples("../shared/data/cfc/dev.predictions.gpt2-xl.oneshot.json")  # doctest: +SKIP
    >>> sum(s["r1q1"].values())  # doctest: +SKIP
    100
    """
    if field is not None and field not in SAMPLE_FIELDS:
        raise ValueError(f"unknown predictions field {field!r}; choose one of {', '.join(SAMPLE_FIELDS)}")
    document = source if isinstance(source, PredictionDocument) else read_prediction_document(source)
    path = document.path
    if field is None:
        available = sample_fields(document)
        field = available[0] if available else None
        if field == "model_ranked_answers":
            warnings.warn(
                f"{path}: no model_answers field; using model_ranked_answers, one sample per answer",
                ProbEvalWarning,
                stacklevel=2,
            )
    raw = document.lists(field)
    out: dict[str, SampleCounts] = {}
    for qid, value in raw.items():
        try:
            out[qid] = sample_counts(value, path=path, question_id=qid)
        except DataFormatError:
            # Finding the line means reading the file again: only worth it for the error.
            sample_counts(value, path=path, line=prediction_line(path, qid, field), question_id=qid)
            raise
    return out


def reconcile_sample_ids(
    samples: Mapping[str, Any],
    known: Any,
    *,
    path: Optional[PathLike] = None,
    field: Optional[str] = None,
    ignore_unknown: bool = False,
) -> IdReconciliation:
    """:func:`protoqa_core.io.ids.reconcile_ids` for a samples file (and its ``field`` read): errors name the line.

    >>> reconcile_sample_ids({"q1": ["dog"], "q9": ["cat"]}, ["q1", "q2"], ignore_unknown=True).ignored
    ('q9',)
    """
    return reconcile_ids(
        known,
        samples,
        ignore_unknown=ignore_unknown,
        path=path,
        locate=None if path is None else lambda qid: prediction_line(path, qid, field),
    )


def drop_unknown_ids(
    samples: Mapping[str, Any],
    known: Any,
    *,
    path: Optional[PathLike] = None,
    field: Optional[str] = None,
    ignore_unknown: bool = False,
) -> dict[str, Any]:
    """``samples`` without ids that are not in ``known``; unknown ids are an error (:func:`reconcile_sample_ids`)
    unless ``ignore_unknown`` drops them with a warning.

    >>> drop_unknown_ids({"q1": ["dog"]}, {"q1", "q2"})
    {'q1': ['dog']}
    """
    ids = reconcile_sample_ids(samples, known, path=path, field=field, ignore_unknown=ignore_unknown)
    if ids.message:
        warnings.warn(ids.message, ProbEvalWarning, stacklevel=2)
    return {qid: samples[qid] for qid in ids.kept}


def check_recorded_samples(
    document: PredictionDocument, samples: Mapping[str, SampleCounts], field: Optional[str]
) -> None:
    """Refuse a file whose ``generation`` block records another number of samples per question than the most
    any question carries; ``model_ranked_answers`` (each answer once) is not checked.

    >>> import json, os, tempfile
    >>> name = os.path.join(tempfile.mkdtemp(), "a.json")
    >>> with open(name, "w") as fh:
    ...     _ = fh.write(json.dumps({"model_answers": {"q1": ["dog", "dog"]}, "generation": {"num_samples": 3}}))
    >>> document = read_prediction_document(name)
    >>> check_recorded_samples(document, read_samples(document), "model_answers")
    Traceback (most recent call last):
    ...
    protoqa_core.io.sample_claims.SampleClaimError: ...a.json records 3 samples per question (num_samples), but ...
    """
    from protoqa_core.io.sample_claims import check_counted_samples

    if field == "model_ranked_answers":
        return
    counted = max((sum(counts.values()) for counts in samples.values()), default=0)
    check_counted_samples(document.members.get("generation"), counted, str(document.path))
