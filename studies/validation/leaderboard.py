"""Leaderboard: every prediction file of the shared data scored with ProbEval and the ProtoQA metric.

The scores come from :func:`protoqa_integrations.leaderboard.board.build_leaderboard` (what
``protoqa-eval leaderboard`` runs), given the answers as each file's kind says to read
them: each figure is a mean over questions with a 95% percentile bootstrap interval over
questions, the same resampled questions for every file of a data set.

* **ProbEval** (lower is better), with the data's human clusters (WordNet matching:
  what ProbEval uses when the references carry clusters) and with the automatic
  setting for raw answers (:data:`AUTOMATIC_DEFAULT`: G-means from 8 centers of MiniLM
  embeddings, WordNet matching; written out here rather than read from ProbEval's
  defaults, so the table does not move when they do). ProbEval wants samples with repetition: a file of *distinct* answers
  (a ranked list, or samples with duplicates removed) gives every answer weight 1,
  so P_H measures which clusters the answers cover, not how often a model says them.
* **ProtoQA** (higher is better), WordNet similarity, the paper's seven metrics,
  for files whose answers are ranked: ranked lists as given, ``model_ranked_answers``
  when the file has them, and samples with repetition ranked by frequency (the
  ProtoQA GPT-2 baseline's procedure; ties in order of first appearance). Files of
  distinct samples in no particular order get no ProtoQA score.

:func:`compare_probeval` is the paired comparison of two systems under ProbEval
(the analogue of ``protoqa-eval compare``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

from cfc_probeval.compare import compare_probeval
from cfc_probeval.embedders import Embedder, get_embedder
from cfc_probeval.inputs import read_samples, sample_fields
from cfc_probeval.matching import WordNetMatcher
from cfc_probeval.probeval import ProbEval, normalized_sample_counts
from protoqa_core.io.ids import reconcile_ids
from protoqa_core.io.predictions import read_predictions
from protoqa_core.io.readers import read_targets
from protoqa_core.ranking import rank_by_frequency
from protoqa_integrations.leaderboard.board import build_leaderboard
from protoqa_integrations.leaderboard.report import PROBEVAL_KEY, Leaderboard, SystemAnswers
from protoqa_metric.metric_set import PAPER_METRICS

__all__ = [
    "Entry",
    "Board",
    "BOARDS",
    "PROTOQA_METRICS",
    "AUTOMATIC_DEFAULT",
    "THRESHOLDS",
    "rank_by_frequency",
    "target_overlap",
    "compare_probeval",
    "run_leaderboard",
]

PROTOQA_METRICS = tuple(m.name for m in PAPER_METRICS)

AUTOMATIC_DEFAULT: dict[str, Any] = {
    "clustering": "gmeans",
    "matching": "wordnet",
    "k_init": 8,
    "k_max": 20,
    "alpha": 0.0001,
    "seed": 0,
    "embedder": "minilm",
}
"""ProbEval's automatic setting for answers without human clusters, as :class:`~cfc_probeval.ProbEval` arguments."""

THRESHOLDS: dict[str, float] = {"cosine": 0.6, "gp": 0.4}
"""ProbEval's default matching thresholds (used when ``automatic`` asks for cosine or GP matching without one)."""


class Entry(NamedTuple):
    """One system's prediction file (path under the data dir) and how its answers are given.

    ``kind``: ``ranked list`` (distinct answers, best first), ``samples`` (with
    repetition), ``samples + ranked list`` (both fields) or ``distinct samples``
    (duplicates removed, no ranking).
    """

    system: str
    path: str
    kind: str
    note: str = ""


class Board(NamedTuple):
    """One data set's table: its targets and its systems."""

    name: str
    label: str
    targets: str
    entries: tuple[Entry, ...]


_CFC_TEST_MODELS = [
    ("GPT-2 large, zero-shot", "gpt2-large.zeroshot"),
    ("GPT-2 large, one-shot", "gpt2-large.oneshot"),
    ("GPT-2 XL, zero-shot", "gpt2-xl.zeroshot"),
    ("GPT-2 XL, one-shot", "gpt2-xl.oneshot"),
    ("ProtoQA fine-tuned GPT-2, zero-shot", "protoqa-ft.zeroshot"),
    ("ProtoQA fine-tuned GPT-2, one-shot", "protoqa-ft.oneshot"),
    ("GPT-2 large fine-tuned on CFC, zero-shot", "gpt2-large-ft.zeroshot"),
    ("GPT-2 large fine-tuned on CFC, one-shot", "gpt2-large-ft.oneshot"),
]

BOARDS = (
    Board(
        "protoqa_dev",
        "ProtoQA dev (crowdsourced)",
        "protoqa/dev.crowdsourced.jsonl",
        (
            Entry("GPT-2 fine-tuned (ProtoQA paper)", "protoqa/dev.predictions.gpt2finetuned.json", "ranked list"),
            Entry("Human (30 extra answers)", "protoqa/dev.predictions.human.jsonl", "ranked list"),
            Entry(
                "Human (ProbEval validation answers)",
                "probeval_validation/protoqa_dev.human.json",
                "distinct samples",
                "the same distinct answers as protoqa/dev.predictions.human.jsonl, every count 1: its "
                "model_ranked_answers order is not a ranking, so it gets no ProtoQA score",
            ),
        ),
    ),
    Board(
        "cfc_dev",
        "CFC dev",
        "cfc/dev.targets.jsonl",
        (
            Entry(
                "GPT-2 XL, one-shot (100 samples)", "cfc/dev.predictions.gpt2-xl.oneshot.json", "samples + ranked list"
            ),
            Entry("Human (extra answers)", "cfc/dev.predictions.human.json", "samples"),
        ),
    ),
    Board(
        "cfc_test",
        "CFC test",
        "cfc/test.targets.jsonl",
        tuple(
            [Entry(label, f"cfc/test.samples.{stem}.jsonl", "distinct samples") for label, stem in _CFC_TEST_MODELS]
            + [Entry("Human (extra answers)", "cfc/test.predictions.human.json", "samples")]
        ),
    ),
)


def _ranked_lists(path: Path, entry: Entry, samples: Mapping[str, Mapping[str, int]]) -> tuple[Optional[dict], str]:
    """The ranked answers a ProtoQA score uses, and how they were ranked (None when unranked)."""
    if entry.kind == "ranked list":
        return read_predictions(path), "as given"
    if entry.kind == "samples + ranked list" and "model_ranked_answers" in sample_fields(path):
        return read_predictions(path, "model_ranked_answers"), "model_ranked_answers"
    if entry.kind == "samples":
        return {qid: rank_by_frequency(s) for qid, s in samples.items()}, "by frequency"
    return None, "unranked"


def target_overlap(samples: Mapping[str, Mapping[str, int]], targets: Mapping[str, Any]) -> float:
    """Share of the answers (with repetition) that are also among the targets' raw answers, as a multiset.

    Near 1 means the file holds the ground truth itself rather than a system's answers.

    >>> from protoqa_core.io.records import Question
    >>> overlap = target_overlap({"q": {"dog": 2, "cat": 2}}, {"q": Question("q", "", (), raw_answers={"dog": 1})})
    >>> overlap
    0.25
    """
    shared = total = 0
    for qid, answers in samples.items():
        raw = targets[qid].raw_answers if qid in targets else {}
        for answer, n in answers.items():
            shared += min(n, raw.get(answer, 0))
            total += n
    return shared / total if total else 0.0


def _read_entry_samples(path: Path, entry: Entry) -> dict[str, dict[str, int]]:
    if entry.kind == "ranked list":
        # A ranked list is read as one sample per distinct answer.
        return {qid: dict.fromkeys(dict.fromkeys(answers), 1) for qid, answers in read_predictions(path).items()}
    return read_samples(path)


def _entry_system(data_dir: Path, board_targets, entry: Entry) -> tuple[dict[str, Any], SystemAnswers]:
    """The file's descriptive row and its answers as the leaderboard library scores them."""
    path = data_dir / entry.path
    samples = _read_entry_samples(path, entry)
    ids = reconcile_ids(board_targets, samples, ignore_unknown=True)  # the board lists unknown ids instead of failing
    ignored, missing = sorted(ids.ignored), sorted(ids.missing)
    samples = {q: samples[q] for q in ids.kept}
    row: dict[str, Any] = {
        "system": entry.system,
        "file": entry.path,
        "kind": entry.kind,
        "note": entry.note,
        "questions": len(board_targets),
        "ignored_ids": ignored,
        "missing_ids": missing,
        "samples_per_question": sum(sum(s.values()) for s in samples.values()) / max(len(samples), 1),
        "distinct_per_question": sum(len(normalized_sample_counts(s)) for s in samples.values()) / max(len(samples), 1),
        "overlap_with_targets": target_overlap(samples, board_targets),
        "probeval": {},
        "protoqa": None,
        "ranking": None,
    }
    ranked, how = _ranked_lists(path, entry, samples)
    row["ranking"] = how
    if ranked is not None:
        ranked = {q: r for q, r in ranked.items() if q in board_targets}
    return row, SystemAnswers(entry.system, entry.path, entry.kind, samples, ranked, how)


def _interval_of(board: Leaderboard, key: str, system: str) -> dict[str, float]:
    score = board.scores[key][system]
    return {"mean": score.mean, "low": score.low, "high": score.high}


def _score_board(
    data_dir: Path, targets: Mapping[str, Any], board: Board, probevals: Mapping[str, ProbEval]
) -> list[dict[str, Any]]:
    """Every file of a board scored by :func:`protoqa_integrations.leaderboard.board.build_leaderboard`, one call per ProbEval setting."""
    pairs = [_entry_system(data_dir, targets, entry) for entry in board.entries]
    rows, systems = [row for row, _ in pairs], [system for _, system in pairs]
    for setting, pe in probevals.items():
        metrics = ["protoqa", "probeval"] if setting == "human" else ["probeval"]
        # The files differ in samples per question (ranked lists, distinct answers, 30 to 300 samples): each is
        # scored at its own count, and the signature gives the range and the accepted mismatch.
        scored = build_leaderboard(
            targets, systems, metrics=metrics, similarity="wordnet", probeval=pe, progress=True, accept=["samples"]
        )
        kl = next(c for c in scored.columns if c.key == PROBEVAL_KEY)
        for row in rows:
            row["probeval"][setting] = {**_interval_of(scored, PROBEVAL_KEY, row["system"]), "signature": kl.signature}
            if setting == "human" and row["system"] in scored.scores[PROTOQA_METRICS[0]]:
                row["protoqa"] = {m: _interval_of(scored, m, row["system"]) for m in PROTOQA_METRICS}
                row["protoqa_signature"] = next(c for c in scored.columns if c.key == PROTOQA_METRICS[0]).signature
    return rows


def run_leaderboard(
    data_dir: Union[str, Path],
    *,
    boards: Sequence[Board] = BOARDS,
    embedder: Union[str, Embedder, None] = None,
    num_questions: Optional[int] = None,
    automatic: Optional[Mapping[str, Any]] = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Score every board's files; returns ``{board: {"label", "targets", "systems": [row, ...]}, "info": ...}``.

    ``automatic``: ProbEval keyword arguments of the automatic setting (``clustering``,
    ``matching``, ``embedder``, parameters); default :data:`AUTOMATIC_DEFAULT`.
    Each row has ``probeval`` (``human`` and ``automatic``: mean, low, high, signature)
    and ``protoqa`` (metric -> mean, low, high; None for unranked files).
    ``num_questions`` keeps only the first N questions of each board's targets.

    >>> board = run_leaderboard("../shared/data", boards=BOARDS[:1])  # doctest: +SKIP
    >>> board["protoqa_dev"]["systems"][0]["protoqa"]["max_answers@10"]["mean"]  # doctest: +SKIP
    0.5334...
    """
    data_dir = Path(data_dir)
    start = time.perf_counter()
    out: dict[str, Any] = {}
    for board in boards:
        t = time.perf_counter()
        targets = read_targets(data_dir / board.targets)
        if num_questions is not None:
            targets = dict(list(targets.items())[:num_questions])
        # One embedder and one WordNet cache per data set: both ProbEval settings and
        # every file share the ground-truth embeddings and the (answer, answer) pairs.
        config = dict(automatic or AUTOMATIC_DEFAULT)
        shared_embedder = get_embedder(config.pop("embedder", None) or embedder)
        wordnet = WordNetMatcher()
        matching = config.pop("matching", "wordnet")
        if matching in THRESHOLDS:
            config.setdefault("threshold", THRESHOLDS[matching])
        probevals = {
            "human": ProbEval("human", wordnet),
            "automatic": ProbEval(
                config.pop("clustering"),
                wordnet if matching == "wordnet" else matching,
                embedder=shared_embedder,
                **config,
            ),
        }
        rows = _score_board(data_dir, targets, board, probevals)
        out[board.name] = {"label": board.label, "targets": board.targets, "questions": len(targets), "systems": rows}
        log(f"{board.name}: {len(rows)} files, {time.perf_counter() - t:.1f} s")
    out["info"] = {
        "seconds": round(time.perf_counter() - start, 2),
        "level": 0.95,
        "resamples": 1000,
        "defaults": {
            "human": {"clustering": "human", "matching": "wordnet"},
            "automatic": dict(AUTOMATIC_DEFAULT),
            "thresholds": dict(THRESHOLDS),
        },
        "automatic": dict(automatic or AUTOMATIC_DEFAULT),
        "embedder": shared_embedder.name if boards else None,
        "num_questions": num_questions,
    }
    return out
