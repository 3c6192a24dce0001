"""A leaderboard of several systems on one set of questions: intervals, paired tests, rank groups.

Each system is scored per question with the ProtoQA metrics and ProbEval's KL where they apply, then all are
resampled on the same questions, compared pairwise (Holm-corrected) and given rank ranges; the method is in
docs/evaluate-a-model.md, section 4 (``protoqa-eval leaderboard``). The record and its presentations are
:mod:`~protoqa_integrations.leaderboard.report`.
"""

from __future__ import annotations

import heapq
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, Protocol

import numpy as np

from cfc_probeval.compare import clustering_draws
from cfc_probeval.inputs import read_samples, sample_counts, sample_fields
from cfc_probeval.probeval import ProbEval
from protoqa_core.io.files import DataFormatError, PathLike, ProtoQAWarning
from protoqa_core.io.records import Question, preview_ids
from protoqa_core.io.sample_claims import check_counted_samples
from protoqa_core.progress import track
from protoqa_core.ranking import rank_by_frequency
from protoqa_core.significance import DEFAULT_RESAMPLES, DEFAULT_SEED, resample_indices
from protoqa_integrations.generation.provenance import check_provenance, recorded_provenance
from protoqa_integrations.generation.shareable import shareable
from protoqa_integrations.harnesses.harness_logs import Keep
from protoqa_integrations.harnesses.outputs import SystemFile, read_system_file
from protoqa_integrations.leaderboard import sample_counts as counted_samples
from protoqa_integrations.leaderboard.bootstrap import merged_draws, metric_bootstrap, score_draws, with_draws
from protoqa_integrations.leaderboard.report import (
    PROBEVAL_KEY,
    Leaderboard,
    LeaderboardError,
    MetricColumn,
    SystemAnswers,
    check_system_name,
)
from protoqa_metric.metric import ProtoQA
from protoqa_metric.metric_set import PAPER_METRICS

__all__ = [
    "MAX_SYSTEMS",
    "parse_system_arguments",
    "MAX_RESAMPLES",
    "parse_system_argument",
    "read_system",
    "build_leaderboard",
    "leaderboard_from_dict",
    "add_systems",
    "AnswerIndex",
]

MAX_SYSTEMS = 100
"""The most systems one leaderboard ranks: the pairwise tests grow with its square."""
MAX_RESAMPLES = 10_000
"""The most bootstrap resamples: the index matrix holds resamples x questions integers."""


# ---------------------------------------------------------------- reading systems


def parse_system_argument(argument: str) -> tuple[str, Path]:
    """``NAME=FILE`` split at the first ``=``, the name checked.

    >>> parse_system_argument("xl=runs/xl.answers.json")
    ('xl', PosixPath('runs/xl.answers.json'))
    """
    name, sep, path = argument.partition("=")
    if not sep or not path:
        raise LeaderboardError(f"expected NAME=FILE, got {argument!r}")
    return check_system_name(name), Path(path)


def parse_system_arguments(arguments: Sequence[str]) -> list[tuple[str, Path]]:
    """Every ``NAME=FILE`` of a command line, checked before any file is read: at most :data:`MAX_SYSTEMS`,
    each name valid and none repeated.

    >>> parse_system_arguments(["a=a.json", "a=b.json"])
    Traceback (most recent call last):
    ...
    protoqa_integrations.leaderboard.report.LeaderboardError: two systems are named 'a'
    """
    _check_count(len(arguments))
    pairs = [parse_system_argument(a) for a in arguments]
    _check_names([name for name, _ in pairs])
    return pairs


def _check_count(count: int) -> None:
    if not count:
        raise LeaderboardError("no systems to rank")
    if count > MAX_SYSTEMS:
        raise LeaderboardError(f"{count} systems: a leaderboard ranks at most {MAX_SYSTEMS}")


def _check_names(names: Sequence[str]) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise LeaderboardError(f"two systems are named {repeated[0]!r}")


def read_system(
    name: str, path: PathLike, *, keep: Optional[Keep] = None, max_answers: Optional[int] = None
) -> SystemAnswers:
    """Read one system file of any format (detected from its content), opening it once.

    Samples and ranked lists are read as ``probeval`` and ``protoqa-eval`` read them; harness outputs and
    files without ranked lists are ranked by frequency. ``keep`` and ``max_answers`` are
    :func:`~protoqa_integrations.harnesses.outputs.read_system_file`'s.

    >>> s = read_system("xl", "../shared/data/cfc/test.samples.gpt2-xl.oneshot.jsonl")  # doctest: +SKIP
    >>> s.format, len(s.samples)  # doctest: +SKIP
    ('predictions', 46)
    """
    path = Path(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProtoQAWarning)  # an empty predictions file is an error here, not a warning
        try:
            return _read_system(name, path, read_system_file(path, keep=keep, max_answers=max_answers))
        except ProtoQAWarning as exc:
            raise DataFormatError(str(exc)) from None


def _read_system(name: str, path: Path, read: SystemFile) -> SystemAnswers:
    fmt = read.format
    if read.harness is not None:
        lists = read.harness.samples
        check_counted_samples(read.harness.generation, max(map(len, lists.values()), default=0), str(path))
        by_frequency = {qid: rank_by_frequency(answers) for qid, answers in lists.items()}
        counts = {qid: sample_counts(list(answers), path=path, question_id=qid) for qid, answers in lists.items()}
        return SystemAnswers(
            name, str(path), fmt, counts, by_frequency, "by frequency", shareable(read.harness.generation)
        )
    document = read.document
    assert document is not None  # a text format that is not a harness's
    if fmt == "answers":
        generation = document.members.get("generation")
        samples = read_samples(document, "model_answers")
        ranked = document.ranked("model_ranked_answers")
        settings = shareable(generation) if isinstance(generation, dict) else {}
        if isinstance(generation, dict):  # what the file records, checked before it is cut to what is shared
            recorded_provenance(generation, str(path))
            check_counted_samples(generation, max((sum(c.values()) for c in samples.values()), default=0), str(path))
        return SystemAnswers(name, str(path), fmt, samples, ranked, "model_ranked_answers", settings)
    fields = sample_fields(document)
    if fields:
        samples = read_samples(document, "model_answers" if "model_answers" in fields else fields[0])
        if "model_ranked_answers" in fields:
            return SystemAnswers(
                name, str(path), fmt, samples, document.ranked("model_ranked_answers"), "model_ranked_answers"
            )
        return SystemAnswers(
            name, str(path), fmt, samples, {q: rank_by_frequency(s) for q, s in samples.items()}, "by frequency"
        )
    return SystemAnswers(name, str(path), fmt, read_samples(document), document.ranked(), "as given")


# ---------------------------------------------------------------- scoring

_Draws = dict[str, dict[str, list[list[float]]]]


class AnswerIndex(Protocol):
    """Systems' answers held elsewhere (on disk), handed out one system at a time for scoring."""

    def answered(self, name: str) -> Collection[str]:
        """The target question ids system ``name`` answers."""

    def unknown(self, name: str) -> Sequence[str]:
        """The question ids system ``name`` answers that are not among the targets, in file order."""

    def unknown_ids(self) -> Iterable[str]:
        """Every question id outside the targets that some system answers, once each, sorted."""

    def load(self, system: SystemAnswers) -> SystemAnswers:
        """``system`` with its samples and ranked lists (those of the target questions)."""


def _question_set(
    targets: Mapping[str, Question],
    systems: Sequence[SystemAnswers],
    only_common: bool,
    answered: Mapping[str, Collection[str]],
    unknown: Mapping[str, Sequence[str]],
) -> tuple[list[str], list[str]]:
    """The questions every system is scored on (targets order) and the target questions ``only_common``
    leaves out; ``answered`` holds each system's question ids among the targets, ``unknown`` its others."""
    names = [s.name for s in systems]
    common = [qid for qid in targets if all(qid in answered[n] for n in names)]
    problems = [
        f"{name} answers {len(unknown[name])} id(s) not in the targets: {preview_ids(unknown[name])}"
        for name in names
        if unknown[name]
    ]
    answered_by_any = [qid for qid in targets if any(qid in answered[n] for n in names)]
    for name in names:
        missing = [qid for qid in answered_by_any if qid not in answered[name]]
        if missing:
            problems.append(f"{name} lacks {len(missing)} question(s): {preview_ids(missing)}")
    if problems and not only_common:
        raise LeaderboardError(
            "the systems answer different question sets (" + "; ".join(problems) + "); pass --only-common "
            "to rank them on the questions all of them answer"
        )
    if not common:
        answers = "; ".join(
            f"{n} answers {len(answered[n]) + len(unknown[n])}: "
            f"{preview_ids([q for q in targets if q in answered[n]] or list(unknown[n][:10]))}"
            for n in names
        )
        raise LeaderboardError(f"no target question is answered by every system ({answers})")
    common_set = set(common)
    dropped = [qid for qid in answered_by_any if qid not in common_set]
    return common, dropped


def _only(values: Mapping[str, Any], questions: Iterable[str]) -> dict[str, Any]:
    return {qid: values[qid] for qid in questions}


def _check_systems(systems: Sequence[SystemAnswers]) -> None:
    _check_count(len(systems))
    _check_names([s.name for s in systems])


def _score(
    targets: Mapping[str, Question],
    systems: Sequence[SystemAnswers],
    questions: list[str],
    metrics: Sequence[str],
    similarity: str,
    probeval: Optional[ProbEval],
    progress: bool = False,
    load: Optional[Callable[[SystemAnswers], SystemAnswers]] = None,
) -> tuple[list[MetricColumn], dict[str, dict[str, list[float]]], dict[str, tuple[int, int]], _Draws]:
    """Per-question scores of every system on ``questions``: the columns, ``{metric: {system: values}}``,
    each system's ``(samples per question, questions with fewer)`` under ProbEval, and the draws of a seeded
    automatic clustering. ``load`` reads a listed system's answers; the ProbEval signature leaves out the
    sample count, which :func:`counted_samples.check_sample_counts` puts back.
    """
    unknown = set(metrics) - {"protoqa", "probeval"}
    if unknown or not metrics:
        raise LeaderboardError(f"unknown metrics {sorted(unknown)}; choose protoqa and/or probeval")
    scored_targets = {qid: targets[qid] for qid in questions}
    columns: list[MetricColumn] = []
    per_question: dict[str, dict[str, list[float]]] = {}
    counted: dict[str, tuple[int, int]] = {}
    draws: _Draws = {}

    def record(key: str, system: str, signature: str, values: list[float], label: str, higher: bool) -> None:
        column = next((c for c in columns if c.key == key), None)
        if column is None:
            columns.append(MetricColumn(key, label, higher, signature))
        elif column.signature != signature:
            raise LeaderboardError(
                f"{key}: the systems were scored under different settings ({column.signature} vs {signature})"
            )
        per_question.setdefault(key, {})[system] = values

    metric = None
    if "protoqa" in metrics and all(q.clusters for q in scored_targets.values()):
        metric = ProtoQA(similarity, "paper")
    pe = (probeval or ProbEval("auto")).resolved(scored_targets) if "probeval" in metrics else None
    runs = clustering_draws(pe) if pe is not None else []
    what = " and ".join(
        name for name, on in ((f"ProtoQA ({similarity})", metric is not None), ("ProbEval", pe is not None)) if on
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # every question of every system is scored: nothing for them to say
        # One system at a time: a system read from disk by ``load`` is dropped once it is scored.
        for listed in track(systems, len(systems), f"leaderboard: {what}", "system", enabled=progress):
            system = load(listed) if load is not None else listed
            if metric is not None and system.ranked is not None:
                result = metric.evaluate(scored_targets, _only(system.ranked, questions))
                for spec in PAPER_METRICS:
                    values = [result.per_question[qid][spec.name].score for qid in questions]
                    record(spec.name, system.name, result.signature, values, spec.name, True)
            if pe is not None:
                values, drawn, kl = score_draws(runs, scored_targets, _only(system.samples, questions), questions)
                counted[system.name] = (kl.num_samples or 0, len(kl.short))
                signature = with_draws(counted_samples.without_samples(kl.signature), len(runs))
                record(PROBEVAL_KEY, system.name, signature, values, "ProbEval KL", False)
                if len(runs) > 1:
                    draws.setdefault(PROBEVAL_KEY, {})[system.name] = drawn
            del system
    # The paper's metrics first, then ProbEval's, whichever system first had a score.
    order = [spec.name for spec in PAPER_METRICS] + [PROBEVAL_KEY]
    columns.sort(key=lambda c: order.index(c.key))
    if not columns:
        raise LeaderboardError("no metric applies: the targets have no answer clusters and ProbEval was not asked for")
    return columns, per_question, counted, draws


def _ranked(
    questions: list[str],
    columns: list[MetricColumn],
    per_question: dict[str, dict[str, list[float]]],
    systems: Sequence[SystemAnswers],
    *,
    level: float,
    resamples: int,
    seed: int,
    alpha: float,
    dropped: list[str],
    draws: Optional[_Draws] = None,
) -> Leaderboard:
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise LeaderboardError(f"resamples must be between 1 and {MAX_RESAMPLES}, got {resamples}")
    idx = resample_indices(len(questions), resamples, seed)
    names = [s.name for s in systems]
    scores, ranks, p_values = {}, {}, {}
    for column in columns:
        scored_names = [n for n in names if n in per_question[column.key]]
        matrix = np.asarray([per_question[column.key][n] for n in scored_names], dtype=float)
        drawn = (draws or {}).get(column.key)
        cube = np.asarray([drawn[n] for n in scored_names], dtype=float) if drawn else None
        scores[column.key], ranks[column.key], p_values[column.key] = metric_bootstrap(
            matrix, column.higher_is_better, idx, level, alpha, scored_names, cube, seed
        )
    board = Leaderboard(
        questions, columns, list(systems), scores, ranks, p_values, level, resamples, seed, alpha, dropped, per_question
    )
    board.draws = dict(draws or {})
    return board


def build_leaderboard(
    targets: Mapping[str, Question],
    systems: Sequence[SystemAnswers],
    *,
    metrics: Sequence[str] = ("protoqa", "probeval"),
    similarity: str = "wordnet",
    probeval: Optional[ProbEval] = None,
    only_common: bool = False,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    alpha: float = 0.05,
    targets_data: Optional[tuple[str, str]] = None,
    targets_label: Optional[str] = None,
    accept: Sequence[str] = (),
    progress: bool = False,
    index: Optional[AnswerIndex] = None,
) -> Leaderboard:
    """Score ``systems`` on ``targets`` and rank them (module doc).

    With ``index`` (an :class:`AnswerIndex`), ``systems`` hold only names and provenance. Before any scoring,
    their recorded provenance and counted samples are compared (with ``targets_data`` too): a difference not
    in ``accept`` is an error, an accepted one is listed in every output. ``targets_label`` ends every signature.

    >>> from protoqa_core.io.records import Cluster
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(20)}
    >>> good = SystemAnswers("good", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> bad = SystemAnswers("bad", "-", "predictions", {k: {"cat": 1} for k in q}, {k: ["cat"] for k in q})
    >>> board = build_leaderboard(q, [good, bad], metrics=["protoqa"], similarity="exact_match")
    >>> board.scores["max_answers@1"]["good"].mean, board.ranks["max_answers@1"]
    (1.0, {'good': (1, 1), 'bad': (2, 2)})
    """
    _check_systems(systems)
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise LeaderboardError(f"resamples must be between 1 and {MAX_RESAMPLES}, got {resamples}")
    checked = check_provenance({s.name: s.settings for s in systems}, targets_data, accept)
    if index is None:
        answered: Mapping[str, Collection[str]] = {s.name: s.samples.keys() for s in systems}
        unknown: Mapping[str, Sequence[str]] = {
            s.name: [qid for qid in s.samples if qid not in targets] for s in systems
        }
        questions, dropped = _question_set(targets, systems, only_common, answered, unknown)
        dropped = sorted({*dropped, *(qid for ids in unknown.values() for qid in ids)})
    else:
        answered = {s.name: index.answered(s.name) for s in systems}
        unknown = {s.name: index.unknown(s.name) for s in systems}
        questions, dropped = _question_set(targets, systems, only_common, answered, unknown)
        dropped = list(heapq.merge(sorted(dropped), index.unknown_ids()))
    if index is None and "probeval" in metrics:  # refused before any scoring: the answers give the counts
        counted_samples.check_systems(systems, questions, accept)
    load = index.load if index is not None else None
    columns, per_question, counted, draws = _score(
        targets, systems, questions, metrics, similarity, probeval, progress, load
    )
    columns = [replace(c, signature=f"{c.signature}|{targets_label}") for c in columns] if targets_label else columns
    columns, samples_accepted, samples_notes = counted_samples.check_sample_counts(columns, counted, accept)
    board = _ranked(
        questions,
        columns,
        per_question,
        systems,
        level=level,
        resamples=resamples,
        seed=seed,
        alpha=alpha,
        dropped=dropped,
        draws=draws,
    )
    board.accepted, board.notes = checked.accepted, checked.notes
    counted_samples.merge_accepted(board.accepted, samples_accepted)
    board.notes.extend(samples_notes)
    return board


def leaderboard_from_dict(document: Mapping[str, Any]) -> Leaderboard:
    """A leaderboard again from ``Leaderboard.as_dict(per_question=True)`` (ranked again from its per-question scores).

    >>> from protoqa_core.io.records import Cluster
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> board = build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match")
    >>> leaderboard_from_dict(board.as_dict(per_question=True)).scores == board.scores
    True
    """
    try:
        per_question = document["per_question"]
        columns = [
            MetricColumn(m["key"], m["label"], m["higher_is_better"], m["signature"]) for m in document["metrics"]
        ]
        systems = [
            SystemAnswers(s["name"], s["file"], s["format"], {}, None, s["ranking"] or "", s["settings"])
            for s in document["systems"]
        ]
        board = _ranked(
            list(document["questions"]),
            columns,
            {k: {n: [float(v) for v in values] for n, values in by.items()} for k, by in per_question.items()},
            systems,
            level=float(document["level"]),
            resamples=int(document["resamples"]),
            seed=int(document["seed"]),
            alpha=float(document["alpha"]),
            dropped=list(document["questions_dropped"]),
            draws={
                k: {n: [[float(v) for v in row] for row in rows] for n, rows in by.items()}
                for k, by in document.get("per_question_draws", {}).items()
            },
        )
        board.accepted = [str(a) for a in document.get("accepted_mismatches", [])]
        if board.accepted:
            # The stored metric signatures carry the mark, which the board adds again on output.
            board.columns = [replace(c, signature=c.signature.removesuffix(f"|{board.mark}")) for c in board.columns]
        return board
    except (KeyError, TypeError, ValueError) as exc:
        raise LeaderboardError(f"not a leaderboard with per-question scores: {exc}") from None


def add_systems(
    board: Leaderboard,
    targets: Mapping[str, Question],
    systems: Sequence[SystemAnswers],
    *,
    similarity: str = "wordnet",
    probeval: Optional[ProbEval] = None,
    only_common: bool = False,
    targets_data: Optional[tuple[str, str]] = None,
    accept: Sequence[str] = (),
) -> Leaderboard:
    """``board`` with ``systems`` scored on its questions, under its settings, and everything ranked again.

    The new systems must answer the board's questions (or, with ``only_common``, all are ranked on those every
    new one answers) under the same signatures; provenance is checked as :func:`build_leaderboard` does.

    >>> from protoqa_core.io.records import Cluster
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> two = SystemAnswers("two", "-", "predictions", {k: {"cat": 1} for k in q}, {k: ["cat"] for k in q})
    >>> board = build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match")
    >>> add_systems(board, q, [two], similarity="exact_match").order("max_answers@1")
    ['one', 'two']
    >>> three = SystemAnswers("three", "-", "predictions", {"q1": {"dog": 1}}, {"q1": ["dog"]})
    >>> add_systems(board, q, [three], similarity="exact_match", only_common=True).questions
    ['q1']
    """
    _check_systems([*board.systems, *systems])
    kept = [f for f in (a.split(" (", 1)[0] for a in board.accepted) if f not in counted_samples.RECOUNTED_MISMATCHES]
    checked = check_provenance({s.name: s.settings for s in [*board.systems, *systems]}, targets_data, [*accept, *kept])
    missing_targets = [qid for qid in board.questions if qid not in targets]
    if missing_targets:
        raise LeaderboardError(f"the targets lack the board's questions: {preview_ids(missing_targets)}")
    questions = list(board.questions)
    if only_common:
        questions = [qid for qid in board.questions if all(qid in s.samples for s in systems)]
        if not questions:
            answers = "; ".join(f"{s.name} answers {len(s.samples)}: {preview_ids(list(s.samples))}" for s in systems)
            raise LeaderboardError(f"no question of the board is answered by every uploaded system ({answers})")
    for system in systems:
        missing = [qid for qid in questions if qid not in system.samples]
        if missing:
            raise LeaderboardError(
                f"{system.name} lacks {len(missing)} of the board's {len(questions)} questions: "
                f"{preview_ids(missing)}; rank on the common questions to leave them out"
            )
    metrics = sorted({"probeval" if c.key == PROBEVAL_KEY else "protoqa" for c in board.columns})
    columns, per_question, counted, draws = _score(targets, systems, questions, metrics, similarity, probeval)
    columns, board_columns, samples_accepted, samples_notes = counted_samples.check_added_counts(
        board, columns, counted, accept
    )
    keep = [board.questions.index(qid) for qid in questions]
    merged = {key: {n: [v[i] for i in keep] for n, v in values.items()} for key, values in board.per_question.items()}
    for column in columns:
        known = next((c for c in board_columns if c.key == column.key), None)
        if known is None or counted_samples.without_question_count(
            known.signature
        ) != counted_samples.without_question_count(column.signature):
            raise LeaderboardError(
                f"{column.key}: scored under {column.signature}, the board under "
                f"{known.signature if known else 'no such metric'}"
            )
        merged[column.key].update(per_question[column.key])
    dropped = sorted(set(board.dropped) | (set(board.questions) - set(questions)))
    ranked = _ranked(
        questions,
        [replace(c, signature=counted_samples.with_question_count(c.signature, len(questions))) for c in board_columns],
        merged,
        [*board.systems, *systems],
        level=board.level,
        resamples=board.resamples,
        seed=board.seed,
        alpha=board.alpha,
        dropped=dropped,
        draws=merged_draws(board.draws, keep, draws),
    )
    ranked.accepted, ranked.notes = checked.accepted, [*checked.notes, *samples_notes]
    counted_samples.merge_accepted(ranked.accepted, samples_accepted)
    return ranked
