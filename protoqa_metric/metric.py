"""The ProtoQA metric as one configured object, :class:`ProtoQA`, which like sacrebleu's ``Metric`` holds all that
can change the numbers and names it in its signature.
"""

from __future__ import annotations

import warnings
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

from protoqa_core.io.files import DataFormatError, ProtoQAWarning
from protoqa_core.io.ids import reconcile_ids
from protoqa_core.io.records import Cluster, Question, preview_ids
from protoqa_core.progress import track
from protoqa_core.signature import make_signature
from protoqa_core.similarity import Similarity, check_similarity_options, get_similarity
from protoqa_core.text import normalize_prediction

from .metric_set import METRIC_SETS, EvaluationResult, MetricSpec, metric_specs
from .scoring import QuestionScore, ScoringTable, check_predictions, matrix_of_normalized

if TYPE_CHECKING:  # the index (sqlite3) is imported by those who read files with it
    from protoqa_core.io.question_index import QuestionIndex

__all__ = ["ProtoQA", "evaluate_predictions", "score_question"]

MetricsArg = Union[str, Iterable[Union[str, MetricSpec]]]
_MEASURE_ENCODER = "python -m studies.validation similarity-controls --encoder"
"""The command (from a checkout) that measures a per-question similarity's rule with another encoder."""


def _warn(message: str, stacklevel: int = 3) -> None:
    warnings.warn(message, ProtoQAWarning, stacklevel=stacklevel)


def _questions_of(
    targets: Union[Mapping[str, Question], Sequence[Question]],
) -> tuple[Sequence[str], list[str], Iterable[Question]]:
    """The target ids, those whose clusters total 0 (left out), and the questions to go through."""
    by_id = dict(targets) if isinstance(targets, Mapping) else {q.id: q for q in targets}
    return list(by_id), [qid for qid, q in by_id.items() if q.total_count <= 0], by_id.values()


def _check_answer_lists(predictions: Mapping[str, Any]) -> None:
    """DataFormatError naming the question whose answers are not a list of strings."""
    for qid, answers in predictions.items():
        if isinstance(answers, str) or not isinstance(answers, Sequence):
            raise DataFormatError(f"answers must be a list of strings, got {type(answers).__name__}", question_id=qid)
        for a in answers:
            if not isinstance(a, str):
                raise DataFormatError(f"answers must be strings, found {type(a).__name__}", question_id=qid)


def _warn_left_out(skipped: Sequence[str], missing: Sequence[str], only_predicted: bool) -> None:
    """Name in warnings the questions left out because their clusters total 0, and those without
    predictions (``missing``, the others), pointing at the caller of :meth:`ProtoQA.evaluate`."""
    if skipped:
        _warn(f"left out {len(skipped)} question(s) whose clusters total 0: {preview_ids(skipped)}", stacklevel=4)
    if missing and only_predicted:
        _warn(
            f"{len(missing)} question(s) have no predictions and are left out of the means: {preview_ids(missing)}",
            stacklevel=4,
        )
    elif missing:
        _warn(f"{len(missing)} question(s) have no predictions and score 0: {preview_ids(missing)}", stacklevel=4)


class _ExactSum:
    """The sum of floats, exact (:func:`math.fsum`'s) in constant memory: each float is a whole multiple of
    2**-1074, so the total is an integer count of those units, and the final division is correctly rounded."""

    __slots__ = ("_units",)
    _SHIFT = 1074

    def __init__(self) -> None:
        self._units = 0

    def add(self, x: float) -> None:
        numerator, denominator = x.as_integer_ratio()
        self._units += numerator << (self._SHIFT - denominator.bit_length() + 1)

    def value(self) -> float:
        return self._units / (1 << self._SHIFT)


class ProtoQA:
    """A ProtoQA configuration: the similarity (a name or a :class:`~protoqa_core.similarity.Similarity`), its
    stopword option (WordNet only: two all-stopword strings score 1, or 0 with False) and the metrics
    (``"standard"``, ``"paper"``, names or :class:`MetricSpec` objects). ``options`` are the similarity's own
    (``roberta``'s ``encoder``, ``device``, ``length_scale``: docs/protoqa-metric.md). An unknown name or
    option raises ValueError here, before any scoring.

    >>> pq = ProtoQA("exact_match", metrics="paper")
    >>> pq.signature(3)  # doctest: +ELLIPSIS
    'sim:exact_match|metrics:paper|missing:zero|n:3|version:...'
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> pq.score_question(q, ["Cat", "dog"])["max_answers@1"].score
    0.6666666666666666
    """

    def __init__(
        self,
        similarity: Union[str, Similarity] = "wordnet",
        metrics: MetricsArg = "standard",
        *,
        all_stopword_match: bool = True,
        **options: Any,
    ) -> None:
        self.similarity = get_similarity(similarity) if isinstance(similarity, str) else similarity
        checked = check_similarity_options(self.similarity, options)
        build = self.similarity.per_question
        self._per_question: Any = None if build is None else build(**checked)
        self.metrics: tuple[MetricSpec, ...] = metric_specs(metrics)
        self.metric_set_name = metrics if isinstance(metrics, str) and metrics in METRIC_SETS else "custom"
        self.all_stopword_match = all_stopword_match
        # The option exists only for WordNet similarities; the others take no options.
        self._options: dict[str, bool] = (
            {} if not self.similarity.uses_wordnet or all_stopword_match else {"all_stopword_match": False}
        )

    def __repr__(self) -> str:
        return (
            f"ProtoQA(similarity={self.similarity_label!r}, metrics={self.metric_set_name!r}, "
            f"all_stopword_match={self.all_stopword_match!r})"
        )

    @property
    def needs_question_text(self) -> bool:
        """Whether the similarity reads each question's text (a per-question one that declares so).

        >>> ProtoQA("wordnet").needs_question_text
        False
        """
        return self._per_question is not None and self.similarity.needs_question_text

    @property
    def similarity_label(self) -> str:
        """The similarity's name in the signature (for ``roberta``, with the encoder, its revision and threshold)."""
        return self._per_question.label if self._per_question is not None else self.similarity.name

    def signature(self, num_questions: int, missing: str = "zero", approximated: int = 0, uncounted: int = 0) -> str:
        """The reproducibility signature of a result over ``num_questions`` questions (``missing``: ``zero`` or
        ``skip``; ``approximated``: similarity values that are lower bounds).

        >>> ProtoQA("wordnet", all_stopword_match=False).signature(52)  # doctest: +ELLIPSIS
        'sim:wordnet|stop:zero|metrics:standard|missing:zero|n:52|wordnet:...'
        """
        return make_signature(
            similarity=self.similarity_label,
            all_stopword_match=self.all_stopword_match if self.similarity.uses_wordnet else None,
            metrics=self.metric_set_name,
            missing=missing,
            num_questions=num_questions,
            approximated=approximated,
            uncounted=uncounted,
        )

    def _score_normalized(
        self,
        preds: Sequence[str],
        question: Union[Question, Sequence[Cluster]],
        approximated: Optional[list[tuple[int, int]]],
    ) -> dict[str, QuestionScore]:
        if self._per_question is not None:
            if not isinstance(question, Question):
                raise ValueError(
                    f"the {self.similarity.name} similarity needs the Question (its text and crowd "
                    "answers), not only its clusters"
                )
            clusters: Sequence[Cluster] = question.clusters
            matrix, cut = self._per_question.matrix(question, preds)
            if approximated is not None:
                approximated.extend(cut)
            elif cut:
                from protoqa_core.similarity import ApproximationWarning

                warnings.warn(
                    f"question {question.id}: a string was cut to the encoder's token limit",
                    ApproximationWarning,
                    stacklevel=3,
                )
        else:
            clusters = question.clusters if isinstance(question, Question) else question
            # The metrics see the rounded matrix only, so a rounded similarity decides each
            # entry without computing its exact value.
            matrix = matrix_of_normalized(
                preds, clusters, self.similarity, approximated, self._options, rounded=self.similarity.rounded
            )
        table = ScoringTable(matrix, clusters, rounded=self.similarity.rounded, predictions=preds)
        return {
            m.name: table.score(max_answers=m.max_answers, max_incorrect=m.max_incorrect, weighted=m.weighted)
            for m in self.metrics
        }

    def score_question(
        self, question: Union[Question, Sequence[Cluster]], predictions: Sequence[str]
    ) -> dict[str, QuestionScore]:
        """Every configured metric of one ranked answer list against one question's clusters.

        ``question`` is a :class:`Question` or its clusters; a lower-bound similarity gives an ``ApproximationWarning``.

        >>> clusters = [Cluster("c0", ("age",), 35), Cluster("c1", ("name",), 10)]
        >>> ProtoQA("exact_match", ["max_answers@1"]).score_question(clusters, ["name", "age"])
        {'max_answers@1': QuestionScore(score=0.2857142857142857, raw_score=10.0, oracle_score=35.0, assignment=('c1',), predictions=('name',))}
        """
        check_predictions(predictions)
        return self._score_normalized([normalize_prediction(p) for p in predictions], question, None)

    def evaluate(
        self,
        targets: Union[Mapping[str, Question], Sequence[Question]],
        predictions: Mapping[str, Sequence[str]],
        *,
        only_predicted: bool = False,
        ignore_unknown: bool = False,
        progress: bool = False,
        on_question: Optional[Callable[[str, dict[str, QuestionScore]], None]] = None,
    ) -> EvaluationResult:
        """Score ranked answer lists (question id -> answers) against a set of questions and average over questions.

        A question without predictions scores 0, with a warning, unless ``only_predicted`` leaves it out (the
        reference evaluator's behaviour); ids not in the targets are a :class:`DataFormatError` unless
        ``ignore_unknown``. ``on_question`` is handed each question's scores, which the result then does not keep.

        >>> qs = [Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))]
        >>> r = ProtoQA("exact_match").evaluate(qs, {"q1": ["cat", "dog"]})
        >>> r.scores["max_answers@1"], r.scores["max_answers@all"]
        (0.6666666666666666, 1.0)
        >>> seen = []
        >>> ProtoQA("exact_match").evaluate(qs, {"q1": ["cat"]}, on_question=lambda q, s: seen.append(q)).per_question
        {}
        >>> seen
        ['q1']
        """
        target_ids, skipped, questions = _questions_of(targets)
        ids = reconcile_ids(target_ids, predictions, ignore_unknown=ignore_unknown)
        _check_answer_lists(predictions)
        left_out = set(skipped)
        missing = [qid for qid in ids.missing if qid not in left_out]
        _warn_left_out(skipped, missing, only_predicted)
        left_out.update(missing if only_predicted else ())
        scored = ((q, predictions.get(q.id, ())) for q in questions if q.id not in left_out)
        total = sum(1 for qid in target_ids if qid not in left_out)
        if ids.message:
            _warn(ids.message)
        lists = (missing, list(skipped), list(ids.ignored))
        return self._summarize(scored, total, lists, only_predicted, progress, on_question, True)

    def evaluate_index(
        self,
        index: QuestionIndex,
        run: int = 0,
        *,
        only_predicted: bool = False,
        ignore_unknown: bool = False,
        progress: bool = False,
        on_question: Optional[Callable[[str, dict[str, QuestionScore]], None]] = None,
        keep_question_scores: bool = True,
    ) -> EvaluationResult:
        """:meth:`evaluate` on the targets and predictions file ``run`` of a
        :class:`~protoqa_core.io.question_index.QuestionIndex`, one question at a time.

        The same scores, warnings and errors as :meth:`evaluate` on the files read whole. With ``on_question`` and
        ``keep_question_scores=False`` memory does not grow with the number of questions (the means are summed
        exactly as they come).

        >>> import json, os, tempfile
        >>> from protoqa_core.io.question_index import QuestionIndex
        >>> folder = tempfile.mkdtemp()
        >>> row = {"metadata": {"id": "q1"}, "question": {"normalized": "name a pet"},
        ...        "answers": {"clusters": {"q1.0": {"count": 6, "answers": ["dog"]},
        ...                                 "q1.1": {"count": 4, "answers": ["cat"]}}}}
        >>> with open(os.path.join(folder, "t.jsonl"), "w") as fh: _ = fh.write(json.dumps(row) + "\\n")
        >>> with open(os.path.join(folder, "p.json"), "w") as fh: _ = fh.write('{"q1": ["cat", "dog"]}')
        >>> with QuestionIndex(os.path.join(folder, "t.jsonl"), [os.path.join(folder, "p.json")]) as index:
        ...     ProtoQA("exact_match").evaluate_index(index).scores["max_answers@1"]
        0.6666666666666666
        """
        ids = index.reconcile(run, ignore_unknown=ignore_unknown)
        if ids.message:
            _warn(ids.message)
        skipped = index.zero_total()
        _warn_left_out(skipped, ids.missing, only_predicted)
        total = index.count(run, only_predicted=only_predicted)
        scored = index.questions(run, only_predicted=only_predicted)
        lists = (ids.missing, skipped, ids.ignored)
        return self._summarize(scored, total, lists, only_predicted, progress, on_question, keep_question_scores)

    def _summarize(
        self,
        scored: Iterable[tuple[Question, Sequence[str]]],
        total: int,
        lists: tuple[Sequence[str], Sequence[str], Sequence[str]],
        only_predicted: bool,
        progress: bool,
        on_question: Optional[Callable[[str, dict[str, QuestionScore]], None]],
        keep_question_scores: bool,
    ) -> EvaluationResult:
        """Score ``scored`` (``total`` questions) and build the result of :meth:`evaluate` (``lists``:
        its ``missing``, ``skipped`` and ``ignored`` ids)."""
        if progress:
            scored = track(scored, total, f"scoring ({self.similarity.name})")
        if self._per_question is not None:
            self._per_question.uncounted.clear()
        per_question, scored_ids, question_scores, sums, n, approximated = self._score_each(
            scored, on_question, keep_question_scores
        )
        scores = {name: (total_sum.value() / n if n else 0.0) for name, total_sum in sums.items()}
        uncounted, exact_match_only = self._per_question_report()
        signature = self.signature(n, "skip" if only_predicted else "zero", approximated, uncounted)
        return EvaluationResult(
            scores,
            per_question,
            n,
            *lists,  # type: ignore[arg-type]  # lists, or ids read from an index
            signature,
            question_ids=scored_ids,
            question_scores=question_scores,
            exact_match_only=exact_match_only,
        )

    def _score_each(
        self,
        scored: Iterable[tuple[Question, Sequence[str]]],
        on_question: Optional[Callable[[str, dict[str, QuestionScore]], None]],
        keep_question_scores: bool,
    ) -> tuple[dict[str, dict[str, QuestionScore]], list[str], dict[str, array], dict[str, _ExactSum], int, int]:
        """Every question's scores (kept, or handed to ``on_question``), the ids scored and each metric's
        scores in that order (when kept), each metric's exact sum, how many questions were scored, and
        how many entries were decided on a lower-bound similarity (each such question named in a warning)."""
        per_question: dict[str, dict[str, QuestionScore]] = {}
        scored_ids: list[str] = []
        question_scores = {m.name: array("d") for m in self.metrics} if keep_question_scores else {}
        sums = {m.name: _ExactSum() for m in self.metrics}
        approximated = n = 0
        for q, answers in scored:
            qid = q.id
            cut: list[tuple[int, int]] = []
            preds = [normalize_prediction(a) for a in answers]
            by_metric = self._score_normalized(preds, q, cut)
            n += 1
            for name, qs in by_metric.items():
                sums[name].add(qs.score)
            if keep_question_scores:
                scored_ids.append(qid)
                for name, qs in by_metric.items():
                    question_scores[name].append(qs.score)
            if on_question is None:
                per_question[qid] = by_metric
            else:
                on_question(qid, by_metric)
            if cut:
                approximated += len(cut)
                _warn(
                    f"question {qid}: {self.similarity.name} similarity is a lower bound for cluster(s) "
                    f"{preview_ids(sorted({q.clusters[j].id for _, j in cut}))} (a string over "
                    "the token limit, or the search budget ran out; see protoqa_core.similarity)",
                    stacklevel=5,
                )
        return per_question, scored_ids, question_scores, sums, n, approximated

    def _per_question_report(self) -> tuple[int, Optional[bool]]:
        """For a per-question similarity, how many scored questions had no crowd counts and whether it
        scored as exact match does (both warned of, then reset); ``(0, None)`` for the others. A rule
        that no study measured with its encoder (``unvalidated`` in the signature) is warned of too."""
        if self._per_question is None:
            return 0, None
        unvalidated = getattr(self._per_question, "unvalidated_message", None)
        if unvalidated:
            _warn(f"{unvalidated}; measure it with {_MEASURE_ENCODER} NAME", stacklevel=5)
        uncounted = len(self._per_question.uncounted)
        self._per_question.uncounted.clear()
        if uncounted:
            _warn(
                f"{uncounted} question(s) have no crowd counts for their cluster strings; the "
                f"{self.similarity.name} similarity trained on each string once there",
                stacklevel=5,
            )
        return uncounted, self._exact_match_only()

    def _exact_match_only(self) -> bool:
        """Whether the per-question similarity matched no prediction but identical ones (warned), then reset."""
        sim = self._per_question
        seen, matched = sim.non_identical, sim.non_identical_matched
        sim.non_identical = sim.non_identical_matched = 0
        if seen and not matched:
            _warn(
                f"the {self.similarity.name} similarity ({self.similarity_label}) sent none of the {seen} "
                "predictions that are not a cluster string to a cluster: on these targets it scored as "
                "exact match does (result field exact_match_only)"
            )
            return True
        return False


def score_question(
    predictions: Sequence[str],
    clusters: Sequence[Cluster],
    similarity: Union[str, Similarity] = "wordnet",
    *,
    max_answers: Optional[int] = None,
    max_incorrect: Optional[int] = None,
    weighted: bool = True,
    all_stopword_match: bool = True,
) -> QuestionScore:
    """Score one ranked answer list against one question's clusters.

    >>> from protoqa_core.io.records import Cluster
    >>> clusters = [Cluster("c0", ("age",), 35), Cluster("c1", ("name",), 10)]
    >>> score_question(["name", "age"], clusters, "exact_match", max_answers=1).score
    0.2857142857142857
    """
    spec = MetricSpec("score", max_answers=max_answers, max_incorrect=max_incorrect, weighted=weighted)
    return ProtoQA(similarity, [spec], all_stopword_match=all_stopword_match).score_question(clusters, predictions)[
        "score"
    ]


def evaluate_predictions(
    targets: Union[Mapping[str, Question], Sequence[Question]],
    predictions: Mapping[str, Sequence[str]],
    similarity: Union[str, Similarity] = "wordnet",
    metrics: Union[str, Iterable[str], Sequence[MetricSpec]] = "standard",
    *,
    only_predicted: bool = False,
    ignore_unknown: bool = False,
    all_stopword_match: bool = True,
    progress: bool = False,
) -> EvaluationResult:
    """Score ranked answer lists against a set of questions and average over questions: the same as
    ``ProtoQA(similarity, metrics, all_stopword_match=...).evaluate(...)``, which is worth keeping when scoring
    several prediction sets under one configuration.

    >>> from protoqa_core.io.records import Question, Cluster
    >>> qs = [Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))]
    >>> r = evaluate_predictions(qs, {"q1": ["cat", "dog"]}, "exact_match")
    >>> r.scores["max_answers@1"], r.scores["max_answers@all"]
    (0.6666666666666666, 1.0)
    """
    return ProtoQA(similarity, metrics, all_stopword_match=all_stopword_match).evaluate(
        targets, predictions, only_predicted=only_predicted, ignore_unknown=ignore_unknown, progress=progress
    )
