"""A leaderboard of several systems on one set of questions: intervals, paired tests, rank groups.

Every system is scored per question with both metrics where they apply:

* the ProtoQA metrics (Max Answers@k, Max Incorrect@k; the paper's seven) under one
  similarity, on the system's ranked lists, when the targets carry answer clusters;
* ProbEval's KL on the system's samples, with ProbEval's own default: the references'
  human clusters when they carry them, else its automatic clustering.

Each figure is the mean over questions with a percentile bootstrap interval. All systems
are resampled with the same question sets (:func:`protoqa_core.significance.resample_indices`),
so every pair is compared by a paired bootstrap on those resamples; the p-values of all
pairs of one metric are Holm-corrected, and a system's *rank range* runs from one more than
the number of systems significantly better to the number of systems minus those
significantly worse. Systems whose rank ranges overlap are not told apart.

:func:`read_system` reads a system file of any supported format (:data:`FORMATS`);
:func:`build_leaderboard` scores systems already read; :func:`format_table`,
:func:`to_markdown`, :func:`to_csv`, :func:`plot_leaderboard` and :func:`model_index`
present a :class:`Leaderboard`.
"""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from cfc_probeval.inputs import read_samples, sample_counts, sample_fields
from cfc_probeval.probeval import ProbEval
from protoqa_core.io.cli import finite_json
from protoqa_core.io.readers import DataFormatError, PathLike, ProtoQAWarning, Question, preview_ids, read_predictions
from protoqa_core.ranking import rank_by_frequency
from protoqa_core.significance import DEFAULT_RESAMPLES, DEFAULT_SEED, holm_adjust, resample_indices
from protoqa_metric.metric import ProtoQA
from protoqa_metric.metric_set import PAPER_METRICS

from .harness_outputs import FORMATS, detect_format, read_harness_output

__all__ = [
    "FORMATS",
    "MAX_SYSTEMS",
    "MAX_RESAMPLES",
    "PROBEVAL_KEY",
    "LeaderboardError",
    "SystemAnswers",
    "Interval",
    "MetricColumn",
    "Leaderboard",
    "check_system_name",
    "parse_system_argument",
    "read_system",
    "build_leaderboard",
    "leaderboard_from_dict",
    "add_systems",
    "format_table",
    "to_markdown",
    "to_csv",
    "plot_leaderboard",
    "model_index",
]

MAX_SYSTEMS = 100
"""The most systems one leaderboard ranks: the pairwise tests grow with its square."""
MAX_RESAMPLES = 10_000
"""The most bootstrap resamples: the index matrix holds resamples x questions integers."""
PROBEVAL_KEY = "probeval_kl"
"""The key of ProbEval's KL among a leaderboard's metrics (the ProtoQA metrics keep their names)."""


class LeaderboardError(ValueError):
    """Input that cannot make a leaderboard (names, formats, question sets, settings)."""


@dataclass
class SystemAnswers:
    """One system: its samples (for ProbEval), its ranked lists (for ProtoQA) and where they came from.

    ``samples``: question id -> ``{answer: count}``; ``ranked``: question id -> ranked
    answers, or None when the system's answers have no order (no ProtoQA score);
    ``ranking`` says how the ranked lists were made; ``settings`` is the generation
    block the file recorded (empty when none).
    """

    name: str
    source: str
    format: str
    samples: dict[str, dict[str, int]]
    ranked: Optional[dict[str, list[str]]]
    ranking: str = "as given"
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Interval:
    """A mean over questions with its bootstrap interval."""

    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class MetricColumn:
    """One metric of the leaderboard: key, label, direction and the signature it was computed under."""

    key: str
    label: str
    higher_is_better: bool
    signature: str


@dataclass
class Leaderboard:
    """Scores, intervals, Holm-corrected pairwise p-values and rank ranges of every system.

    ``scores[metric][system]`` is an :class:`Interval`; ``ranks[metric][system]`` is
    ``(best, worst)`` rank; ``p_values[metric][(a, b)]`` the Holm-corrected p-value of the
    pair; systems without a score for a metric are absent from its tables.
    """

    questions: list[str]
    columns: list[MetricColumn]
    systems: list[SystemAnswers]
    scores: dict[str, dict[str, Interval]]
    ranks: dict[str, dict[str, tuple[int, int]]]
    p_values: dict[str, dict[tuple[str, str], float]]
    level: float
    resamples: int
    seed: int
    alpha: float
    dropped: list[str] = field(default_factory=list)
    per_question: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    @property
    def signature(self) -> str:
        """One line naming every metric's signature and the bootstrap settings."""
        parts = [f"{c.key}:{c.signature}" for c in self._distinct_signatures()]
        return (
            " ; ".join(parts) + f" ; bootstrap:{self.resamples}|seed:{self.seed}|level:{self.level}|holm:{self.alpha}"
        )

    def _distinct_signatures(self) -> list[MetricColumn]:
        seen: dict[str, MetricColumn] = {}
        for column in self.columns:
            family = "probeval" if column.key == PROBEVAL_KEY else "protoqa"
            seen.setdefault(family, MetricColumn(family, family, column.higher_is_better, column.signature))
        return list(seen.values())

    def order(self, metric: str) -> list[str]:
        """Systems with a score for ``metric``, best first (ties in input order)."""
        column = next(c for c in self.columns if c.key == metric)
        scored = self.scores[metric]
        sign = -1.0 if column.higher_is_better else 1.0
        return sorted(scored, key=lambda name: sign * scored[name].mean)

    def as_dict(self, per_question: bool = False) -> dict[str, Any]:
        """A JSON-ready dict (no NaN): metrics with signatures, systems with scores and ranks, pairwise p-values.

        With ``per_question``, also the question ids and every system's per-question scores
        (what :func:`leaderboard_from_dict` and :func:`add_systems` need).
        """
        systems = []
        for system in self.systems:
            scores = {
                c.key: {
                    "mean": self.scores[c.key][system.name].mean,
                    "low": self.scores[c.key][system.name].low,
                    "high": self.scores[c.key][system.name].high,
                    "rank": list(self.ranks[c.key][system.name]),
                }
                for c in self.columns
                if system.name in self.scores[c.key]
            }
            systems.append(
                {
                    "name": system.name,
                    "file": system.source,
                    "format": system.format,
                    "ranking": system.ranking if system.ranked is not None else None,
                    "settings": system.settings,
                    "scores": scores,
                }
            )
        extra: dict[str, Any] = {}
        if per_question:
            extra = {"questions": list(self.questions), "per_question": self.per_question}
        return finite_json(
            {
                **extra,
                "num_questions": len(self.questions),
                "questions_dropped": list(self.dropped),
                "signature": self.signature,
                "level": self.level,
                "resamples": self.resamples,
                "seed": self.seed,
                "alpha": self.alpha,
                "metrics": [
                    {"key": c.key, "label": c.label, "higher_is_better": c.higher_is_better, "signature": c.signature}
                    for c in self.columns
                ],
                "systems": systems,
                "pairwise": {
                    key: [{"a": a, "b": b, "p_holm": p} for (a, b), p in pairs.items()]
                    for key, pairs in self.p_values.items()
                },
            }
        )


# ---------------------------------------------------------------- reading systems


def check_system_name(name: str) -> str:
    """A system name, checked: not empty, no path separator, one line, at most 200 characters.

    >>> check_system_name("gpt2-xl one-shot")
    'gpt2-xl one-shot'
    >>> check_system_name("runs/gpt2")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    LeaderboardError: system name 'runs/gpt2' contains a path separator
    """
    if not name.strip():
        raise LeaderboardError("a system name is empty")
    if "/" in name or "\\" in name or (os.altsep and os.altsep in name) or name in (".", ".."):
        raise LeaderboardError(f"system name {name!r} contains a path separator")
    if any(ord(ch) < 32 for ch in name) or len(name) > 200:
        raise LeaderboardError(f"system name {name[:40]!r}... must be one line of at most 200 characters")
    return name


def parse_system_argument(argument: str) -> tuple[str, Path]:
    """``NAME=FILE`` split at the first ``=``, the name checked.

    >>> parse_system_argument("xl=runs/xl.answers.json")
    ('xl', PosixPath('runs/xl.answers.json'))
    """
    name, sep, path = argument.partition("=")
    if not sep or not path:
        raise LeaderboardError(f"expected NAME=FILE, got {argument!r}")
    return check_system_name(name), Path(path)


def _counts(lists: Mapping[str, Sequence[str]], path: Path) -> dict[str, dict[str, int]]:
    return {qid: sample_counts(list(answers), path=path, question_id=qid) for qid, answers in lists.items()}


def read_system(name: str, path: PathLike) -> SystemAnswers:
    """Read one system file of any format in :data:`FORMATS` (detected from its content).

    * an answers file of ``protoqa-eval generate``: samples ``model_answers``, ranked lists
      ``model_ranked_answers``, settings ``generation``;
    * a predictions file: ``{"model_answers": ...}`` files as ``probeval`` reads them (ranked
      by ``model_ranked_answers`` when present, else by frequency), plain ``{id: [answers]}``
      files as ranked lists (as ``protoqa-eval`` reads them) and as one sample per answer
      (as ``probeval`` reads them);
    * lm-eval ``--log_samples`` output and lighteval details: every sample, ranked by frequency.

    >>> s = read_system("xl", "../shared/data/cfc/test.samples.gpt2-xl.oneshot.jsonl")  # doctest: +SKIP
    >>> s.format, len(s.samples)  # doctest: +SKIP
    ('predictions', 46)
    """
    path = Path(path)
    fmt = detect_format(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProtoQAWarning)  # an empty predictions file is an error here, not a warning
        try:
            return _read_system(name, path, fmt)
        except ProtoQAWarning as exc:
            raise DataFormatError(str(exc)) from None


def _read_system(name: str, path: Path, fmt: str) -> SystemAnswers:
    if fmt in ("lm-eval", "lighteval"):
        read = read_harness_output(path, fmt)
        ranked = {qid: rank_by_frequency(answers) for qid, answers in read.samples.items()}
        return SystemAnswers(name, str(path), fmt, _counts(read.samples, path), ranked, "by frequency", read.generation)
    if fmt == "answers":
        from protoqa_core.io.readers import parse_json, read_text

        generation = parse_json(read_text(path), path).get("generation")
        samples = read_samples(path, "model_answers")
        ranked = read_predictions(path, "model_ranked_answers")
        settings = generation if isinstance(generation, dict) else {}
        return SystemAnswers(name, str(path), fmt, samples, ranked, "model_ranked_answers", settings)
    fields = sample_fields(path)
    if fields:
        samples = read_samples(path, "model_answers" if "model_answers" in fields else fields[0])
        if "model_ranked_answers" in fields:
            return SystemAnswers(
                name, str(path), fmt, samples, read_predictions(path, "model_ranked_answers"), "model_ranked_answers"
            )
        return SystemAnswers(
            name, str(path), fmt, samples, {q: rank_by_frequency(s) for q, s in samples.items()}, "by frequency"
        )
    return SystemAnswers(name, str(path), fmt, read_samples(path), read_predictions(path), "as given")


# ---------------------------------------------------------------- scoring


def _question_set(
    targets: Mapping[str, Question], systems: Sequence[SystemAnswers], only_common: bool
) -> tuple[list[str], list[str]]:
    """The questions every system is scored on (targets order) and those left out by ``only_common``."""
    common = [qid for qid in targets if all(qid in s.samples for s in systems)]
    problems = []
    for system in systems:
        unknown = [qid for qid in system.samples if qid not in targets]
        if unknown:
            problems.append(f"{system.name} answers {len(unknown)} id(s) not in the targets: {preview_ids(unknown)}")
    answered = [qid for qid in targets if any(qid in s.samples for s in systems)]
    for system in systems:
        missing = [qid for qid in answered if qid not in system.samples]
        if missing:
            problems.append(f"{system.name} lacks {len(missing)} question(s): {preview_ids(missing)}")
    if problems and not only_common:
        raise LeaderboardError(
            "the systems answer different question sets (" + "; ".join(problems) + "); pass --only-common "
            "to rank them on the questions all of them answer"
        )
    if not common:
        raise LeaderboardError("no target question is answered by every system")
    dropped = sorted({qid for s in systems for qid in s.samples if qid not in common} | set(answered) - set(common))
    return common, dropped


def _bootstrap(
    values: np.ndarray, higher: bool, idx: np.ndarray, level: float, alpha: float, names: Sequence[str]
) -> tuple[dict[str, Interval], dict[str, tuple[int, int]], dict[tuple[str, str], float]]:
    """Intervals, rank ranges and Holm-corrected pairwise p-values of one metric; ``values`` is systems x questions."""
    tail = (1 - level) / 2 * 100
    # Exactly rounded means, as protoqa-eval and probeval report them.
    means = np.asarray([math.fsum(row) / len(row) for row in values.tolist()])
    resampled = np.stack([row[idx].mean(axis=1) for row in values])  # systems x resamples, same resampled questions
    scores = {}
    for i, name in enumerate(names):
        low, high = np.percentile(resampled[i], [tail, 100 - tail])
        scores[name] = Interval(float(means[i]), float(low), float(high))
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    raw = []
    for i, j in pairs:
        # The mean of resampled differences is the difference of resampled means: a paired bootstrap.
        observed = float(means[i] - means[j])
        shifted = resampled[i] - resampled[j] - observed
        extreme = np.count_nonzero(np.abs(shifted) >= abs(observed) - 1e-15)
        raw.append((extreme + 1) / (idx.shape[0] + 1))
    adjusted = holm_adjust(raw)
    p_values = {(names[i], names[j]): p for (i, j), p in zip(pairs, adjusted, strict=True)}
    better = [0] * len(names)
    worse = [0] * len(names)
    for (i, j), p in zip(pairs, adjusted, strict=True):
        if p < alpha and means[i] != means[j]:
            i_better = (means[i] > means[j]) == higher
            winner, loser = (i, j) if i_better else (j, i)
            better[loser] += 1
            worse[winner] += 1
    ranks = {name: (better[i] + 1, len(names) - worse[i]) for i, name in enumerate(names)}
    return scores, ranks, p_values


def _only(values: Mapping[str, Any], questions: Iterable[str]) -> dict[str, Any]:
    return {qid: values[qid] for qid in questions}


def _check_systems(systems: Sequence[SystemAnswers]) -> None:
    if not systems:
        raise LeaderboardError("no systems to rank")
    if len(systems) > MAX_SYSTEMS:
        raise LeaderboardError(f"{len(systems)} systems: a leaderboard ranks at most {MAX_SYSTEMS}")
    names = [s.name for s in systems]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise LeaderboardError(f"two systems are named {repeated[0]!r}")


def _score(
    targets: Mapping[str, Question],
    systems: Sequence[SystemAnswers],
    questions: list[str],
    metrics: Sequence[str],
    similarity: str,
    probeval: Optional[ProbEval],
) -> tuple[list[MetricColumn], dict[str, dict[str, list[float]]]]:
    """Per-question scores of every system on ``questions``: the columns and ``{metric: {system: values}}``."""
    unknown = set(metrics) - {"protoqa", "probeval"}
    if unknown or not metrics:
        raise LeaderboardError(f"unknown metrics {sorted(unknown)}; choose protoqa and/or probeval")
    scored_targets = {qid: targets[qid] for qid in questions}
    columns: list[MetricColumn] = []
    per_question: dict[str, dict[str, list[float]]] = {}

    def record(key: str, system: str, signature: str, values: list[float], label: str, higher: bool) -> None:
        column = next((c for c in columns if c.key == key), None)
        if column is None:
            columns.append(MetricColumn(key, label, higher, signature))
        elif column.signature != signature:
            raise LeaderboardError(
                f"{key}: the systems were scored under different settings ({column.signature} vs {signature})"
            )
        per_question.setdefault(key, {})[system] = values

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # every question of every system is scored: nothing for them to say
        if "protoqa" in metrics and all(q.clusters for q in scored_targets.values()):
            metric = ProtoQA(similarity, "paper")
            for system in systems:
                if system.ranked is None:
                    continue
                result = metric.evaluate(scored_targets, _only(system.ranked, questions))
                for spec in PAPER_METRICS:
                    values = [result.per_question[qid][spec.name].score for qid in questions]
                    record(spec.name, system.name, result.signature, values, spec.name, True)
        if "probeval" in metrics:
            pe = (probeval or ProbEval("auto")).resolved(scored_targets)
            for system in systems:
                kl = pe.evaluate(scored_targets, _only(system.samples, questions))
                values = [kl.per_question[qid] for qid in questions]
                record(PROBEVAL_KEY, system.name, kl.signature, values, "ProbEval KL", False)
    if not columns:
        raise LeaderboardError("no metric applies: the targets have no answer clusters and ProbEval was not asked for")
    return columns, per_question


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
) -> Leaderboard:
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise LeaderboardError(f"resamples must be between 1 and {MAX_RESAMPLES}, got {resamples}")
    idx = resample_indices(len(questions), resamples, seed)
    names = [s.name for s in systems]
    scores, ranks, p_values = {}, {}, {}
    for column in columns:
        scored_names = [n for n in names if n in per_question[column.key]]
        matrix = np.asarray([per_question[column.key][n] for n in scored_names], dtype=float)
        scores[column.key], ranks[column.key], p_values[column.key] = _bootstrap(
            matrix, column.higher_is_better, idx, level, alpha, scored_names
        )
    return Leaderboard(
        questions, columns, list(systems), scores, ranks, p_values, level, resamples, seed, alpha, dropped, per_question
    )


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
) -> Leaderboard:
    """Score ``systems`` on ``targets`` and rank them (module doc).

    ``metrics``: ``protoqa`` (the paper's seven metrics under ``similarity``, for systems with
    ranked lists, when every target has answer clusters) and/or ``probeval`` (``probeval``, by
    default ``ProbEval("auto")``: human clusters when the targets carry them, else automatic
    clustering). Systems must answer the same questions (else :class:`LeaderboardError`
    names the differences), unless ``only_common``.

    >>> from protoqa_core.io.readers import Cluster
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
    questions, dropped = _question_set(targets, systems, only_common)
    columns, per_question = _score(targets, systems, questions, metrics, similarity, probeval)
    return _ranked(
        questions,
        columns,
        per_question,
        systems,
        level=level,
        resamples=resamples,
        seed=seed,
        alpha=alpha,
        dropped=dropped,
    )


def leaderboard_from_dict(document: Mapping[str, Any]) -> Leaderboard:
    """A leaderboard again from ``Leaderboard.as_dict(per_question=True)`` (ranked again from its per-question scores).

    >>> from protoqa_core.io.readers import Cluster
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
        return _ranked(
            list(document["questions"]),
            columns,
            {k: {n: [float(v) for v in values] for n, values in by.items()} for k, by in per_question.items()},
            systems,
            level=float(document["level"]),
            resamples=int(document["resamples"]),
            seed=int(document["seed"]),
            alpha=float(document["alpha"]),
            dropped=list(document["questions_dropped"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise LeaderboardError(f"not a leaderboard with per-question scores: {exc}") from None


def add_systems(
    board: Leaderboard,
    targets: Mapping[str, Question],
    systems: Sequence[SystemAnswers],
    *,
    similarity: str = "wordnet",
    probeval: Optional[ProbEval] = None,
) -> Leaderboard:
    """``board`` with ``systems`` scored on its questions, under its settings, and everything ranked again.

    The new systems must answer the board's questions (others are ignored) and be scored under
    the same signatures; :class:`LeaderboardError` says what differs.

    >>> from protoqa_core.io.readers import Cluster
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> two = SystemAnswers("two", "-", "predictions", {k: {"cat": 1} for k in q}, {k: ["cat"] for k in q})
    >>> board = build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match")
    >>> add_systems(board, q, [two], similarity="exact_match").order("max_answers@1")
    ['one', 'two']
    """
    _check_systems([*board.systems, *systems])
    missing_targets = [qid for qid in board.questions if qid not in targets]
    if missing_targets:
        raise LeaderboardError(f"the targets lack the board's questions: {preview_ids(missing_targets)}")
    for system in systems:
        missing = [qid for qid in board.questions if qid not in system.samples]
        if missing:
            raise LeaderboardError(
                f"{system.name} lacks {len(missing)} of the board's questions: {preview_ids(missing)}"
            )
    metrics = sorted({"probeval" if c.key == PROBEVAL_KEY else "protoqa" for c in board.columns})
    columns, per_question = _score(targets, systems, board.questions, metrics, similarity, probeval)
    merged = {key: dict(values) for key, values in board.per_question.items()}
    for column in columns:
        known = next((c for c in board.columns if c.key == column.key), None)
        if known is None or known.signature != column.signature:
            raise LeaderboardError(
                f"{column.key}: scored under {column.signature}, the board under "
                f"{known.signature if known else 'no such metric'}"
            )
        merged[column.key].update(per_question[column.key])
    return _ranked(
        board.questions,
        board.columns,
        merged,
        [*board.systems, *systems],
        level=board.level,
        resamples=board.resamples,
        seed=board.seed,
        alpha=board.alpha,
        dropped=board.dropped,
    )


# ---------------------------------------------------------------- presenting


def _rank_text(rank: tuple[int, int]) -> str:
    return str(rank[0]) if rank[0] == rank[1] else f"{rank[0]}-{rank[1]}"


def _cell(board: Leaderboard, key: str, name: str) -> str:
    if name not in board.scores[key]:
        return "-"
    s = board.scores[key][name]
    return f"{s.mean:.3f} [{s.low:.3f}, {s.high:.3f}] ({_rank_text(board.ranks[key][name])})"


def _main_metric(board: Leaderboard) -> str:
    keys = [c.key for c in board.columns]
    return PROBEVAL_KEY if PROBEVAL_KEY in keys else ("max_answers@10" if "max_answers@10" in keys else keys[0])


def _rows(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    main = _main_metric(board)
    ordered = board.order(main) + [s.name for s in board.systems if s.name not in board.scores[main]]
    formats = {s.name: s.format for s in board.systems}
    header = ["system", "format"] + [c.label for c in board.columns]
    rows = [[name, formats[name]] + [_cell(board, c.key, name) for c in board.columns] for name in ordered]
    return header, rows


def _legend(board: Leaderboard) -> str:
    return (
        f"mean [{board.level:.0%} bootstrap interval] (rank range); {len(board.questions)} questions, the same "
        f"{board.resamples} resamples for every system; ranks from paired bootstrap tests, Holm-corrected, "
        f"alpha {board.alpha}: systems whose ranges overlap are not significantly different. "
        "ProbEval KL: lower is better; ProtoQA metrics: higher is better."
    )


def format_table(board: Leaderboard) -> str:
    """The leaderboard as an aligned text table, best first by the main metric, with its legend and signature."""
    header, rows = _rows(board)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + ["", _legend(board), f"signature: {board.signature}"])


def to_markdown(board: Leaderboard) -> str:
    """The leaderboard as a Markdown table with its legend and signature."""
    header, rows = _rows(board)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 2 + "---:|" * (len(header) - 2)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines + ["", _legend(board), "", f"Signature: `{board.signature}`"]) + "\n"


def to_csv(board: Leaderboard) -> str:
    """One CSV row per (system, metric): mean, interval, rank range, signature.

    >>> from protoqa_core.io.readers import Cluster
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "one.json", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> print(to_csv(build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match")).splitlines()[1])
    one,one.json,predictions,max_answers@1,1.0,1.0,1.0,1,1,sim:exact_match|metrics:paper|missing:zero|n:5|version:0.1.0
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["system", "file", "format", "metric", "mean", "low", "high", "rank_best", "rank_worst", "signature"]
    )
    for system in board.systems:
        for column in board.columns:
            if system.name in board.scores[column.key]:
                s = board.scores[column.key][system.name]
                best, worst = board.ranks[column.key][system.name]
                writer.writerow(
                    [
                        system.name,
                        system.source,
                        system.format,
                        column.key,
                        repr(s.mean),
                        repr(s.low),
                        repr(s.high),
                        best,
                        worst,
                        column.signature,
                    ]
                )
    return out.getvalue()


def plot_leaderboard(board: Leaderboard, path: PathLike, title: str = "") -> None:
    """A PNG with one panel per metric: every system's mean and interval, best at the top.

    Needs matplotlib (``pip install 'protoqa-eval[plots]'``); the file is written atomically.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("--plot needs matplotlib: pip install 'protoqa-eval[plots]'") from exc
    from protoqa_core.io.cli import replace_file

    columns = board.columns
    cols = min(len(columns), 4)
    rows = math.ceil(len(columns) / cols)
    height = max(2.0, 0.35 * max(len(board.scores[c.key]) for c in columns) + 1.2)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, height * rows), squeeze=False)
    for ax, column in zip(axes.flat, columns, strict=False):
        order = board.order(column.key)[::-1]  # best at the top
        scores = [board.scores[column.key][n] for n in order]
        y = np.arange(len(order))
        ax.errorbar(
            [s.mean for s in scores],
            y,
            xerr=[[s.mean - s.low for s in scores], [s.high - s.mean for s in scores]],
            fmt="o",
            capsize=3,
        )
        ax.set_yticks(y, [f"{n} ({_rank_text(board.ranks[column.key][n])})" for n in order], fontsize=8)
        ax.set_title(f"{column.label} ({'higher' if column.higher_is_better else 'lower'} is better)", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(columns) :]:
        ax.axis("off")
    fig.suptitle(title or f"{len(board.questions)} questions, {board.level:.0%} bootstrap intervals", fontsize=10)
    fig.tight_layout()
    try:
        replace_file(Path(path), lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    finally:
        plt.close(fig)


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def model_index(board: Leaderboard, dataset: str, dataset_name: str, split: str) -> dict[str, str]:
    """One ``model-index`` YAML block per system, as a model card's metadata holds it.

    Each result names the task (text generation), the data set (and its split, when given), and every metric
    with its value and, in ``config``, the signature it was computed under.

    >>> from protoqa_core.io.readers import Cluster
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "one.json", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> board = build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match")
    >>> print(model_index(board, "protoqa", "ProtoQA dev", "validation")["one"].splitlines()[11:15])
    ['    - type: "max_answers@1"', '      name: "max_answers@1"', '      value: 1.0', '      config: "sim:exact_match|metrics:paper|missing:zero|n:5|version:0.1.0"']
    """
    blocks = {}
    for system in board.systems:
        lines = [
            "model-index:",
            f"- name: {_yaml_string(system.name)}",
            "  results:",
            "  - task:",
            "      type: text-generation",
            "      name: Text Generation",
            "    dataset:",
            f"      type: {_yaml_string(dataset)}",
            f"      name: {_yaml_string(dataset_name)}",
            *([f"      split: {_yaml_string(split)}"] if split else []),
            "    metrics:",
        ]
        for column in board.columns:
            if system.name not in board.scores[column.key]:
                continue
            s = board.scores[column.key][system.name]
            lines += [
                f"    - type: {_yaml_string(column.key)}",
                f"      name: {_yaml_string(column.label)}",
                f"      value: {s.mean!r}",
                f"      config: {_yaml_string(column.signature)}",
                f"      args: {{ci_low: {s.low!r}, ci_high: {s.high!r}, level: {board.level}}}",
                "      verified: false",
            ]
        blocks[system.name] = "\n".join(lines) + "\n"
    return blocks
