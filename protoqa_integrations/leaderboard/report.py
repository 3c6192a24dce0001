"""A built leaderboard and how it is shown: the :class:`Leaderboard` record, its text table, Markdown, CSV, plot
and model-index (:mod:`protoqa_integrations.leaderboard.board` builds it)."""

from __future__ import annotations

import csv
import html
import io
import math
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from protoqa_core.cli import OutputFileError, check_output_file, finite_json, reason_of
from protoqa_core.install import install_command
from protoqa_core.io.files import PathLike
from protoqa_integrations.generation.provenance import mismatch_mark
from protoqa_integrations.generation.shareable import shareable

__all__ = [
    "PROBEVAL_KEY",
    "LeaderboardError",
    "check_system_name",
    "SystemAnswers",
    "Interval",
    "MetricColumn",
    "Leaderboard",
    "leaderboard_warnings",
    "format_table",
    "rank_text",
    "markdown_text",
    "csv_text",
    "to_markdown",
    "to_csv",
    "plot_leaderboard",
    "model_index",
    "check_hub_id",
    "model_index_files",
]

PROBEVAL_KEY = "probeval_kl"
"""The key of ProbEval's KL among a leaderboard's metrics (the ProtoQA metrics keep their names)."""


class LeaderboardError(ValueError):
    """Input that cannot make a leaderboard (names, formats, question sets, settings)."""


# Refused in a system name: controls, format characters (bidirectional overrides), line breaks.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def check_system_name(name: str) -> str:
    """A system name, checked: not empty, no path separator, at most 200 characters, no control or format
    characters, so that every output can show it as it is.

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
    if len(name) > 200:
        raise LeaderboardError(f"system name {name[:40]!r}... is longer than 200 characters")
    bad = next((ch for ch in name if unicodedata.category(ch) in _REFUSED_CATEGORIES), None)
    if bad is not None:
        raise LeaderboardError(
            f"system name {name[:60]!r} holds the control character U+{ord(bad):04X}; name it with printable "
            "characters only"
        )
    return name


@dataclass
class SystemAnswers:
    """One system: its samples ``{qid: {answer: count}}`` (for ProbEval), its ranked lists (for ProtoQA; None
    when its answers have no order), how they were ranked, and the generation block its file recorded."""

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

    ``scores[metric][system]`` is an :class:`Interval`, ``ranks[metric][system]`` ``(best, worst)``,
    ``p_values[metric][(a, b)]`` a pair's p-value; ``draws[metric][system]`` holds clusterings x questions
    scores of a metric scored under several clusterings (``per_question`` their means).
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
    accepted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    draws: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)

    @property
    def signature(self) -> str:
        """One line naming every metric's signature and the bootstrap settings (and any mismatch accepted)."""
        parts = [f"{c.key}:{c.signature}" for c in self._distinct_signatures()]
        return (
            " ; ".join(parts)
            + f" ; bootstrap:{self.resamples}|bootstrap_seed:{self.seed}|level:{self.level}|holm:{self.alpha}"
            + (f" ; {self.mark}" if self.accepted else "")
        )

    @property
    def mark(self) -> str:
        """``accepted-mismatch:FIELD,...`` when provenance mismatches were accepted, else ``""``."""
        return mismatch_mark(self.accepted)

    def metric_signature(self, column: MetricColumn) -> str:
        """A metric's signature as every output shows it: with :attr:`mark` when mismatches were accepted."""
        return f"{column.signature}|{self.mark}" if self.accepted else column.signature

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
        """A JSON-ready dict (no NaN): metrics with signatures, systems with scores and ranks, pairwise p-values;
        with ``per_question``, also what :func:`leaderboard_from_dict` needs to rank again."""
        systems = []
        for system in self.systems:
            scores = {
                c.key: {**asdict(self.scores[c.key][system.name]), "rank": list(self.ranks[c.key][system.name])}
                for c in self.columns
                if system.name in self.scores[c.key]
            }
            systems.append(
                {
                    "name": system.name,
                    "file": system.source,
                    "format": system.format,
                    "ranking": system.ranking if system.ranked is not None else None,
                    "settings": shareable(system.settings),
                    "scores": scores,
                }
            )
        extra: dict[str, Any] = {}
        if per_question:
            extra = {"questions": list(self.questions), "per_question": self.per_question}
            extra.update({"per_question_draws": self.draws} if self.draws else {})
        return finite_json(
            {
                **extra,
                "num_questions": len(self.questions),
                "questions_dropped": list(self.dropped),
                "accepted_mismatches": list(self.accepted),
                "notes": list(self.notes),
                "signature": self.signature,
                "level": self.level,
                "resamples": self.resamples,
                "seed": self.seed,
                "alpha": self.alpha,
                "metrics": [
                    {
                        "key": c.key,
                        "label": c.label,
                        "higher_is_better": c.higher_is_better,
                        "signature": self.metric_signature(c),
                    }
                    for c in self.columns
                ],
                "systems": systems,
                "pairwise": {
                    key: [{"a": a, "b": b, "p_holm": p} for (a, b), p in pairs.items()]
                    for key, pairs in self.p_values.items()
                },
            }
        )


def rank_text(rank: tuple[int, int]) -> str:
    """A system's rank range (best, worst) as every leaderboard output shows it.

    >>> rank_text((2, 2)), rank_text((1, 3))
    ('2', '1-3')
    """
    return str(rank[0]) if rank[0] == rank[1] else f"{rank[0]}-{rank[1]}"


def _cell(board: Leaderboard, key: str, name: str) -> str:
    if name not in board.scores[key]:
        return "-"
    s = board.scores[key][name]
    return f"{s.mean:.3f} [{s.low:.3f}, {s.high:.3f}] ({rank_text(board.ranks[key][name])})"


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
    accepted = (
        f" NOT COMPARABLE AS RECORDED: mismatches accepted with --accept-mismatch: {'; '.join(board.accepted)}."
        if board.accepted
        else ""
    )
    return (
        f"mean [{board.level:.0%} bootstrap interval] (rank range); {len(board.questions)} questions, the same "
        f"{board.resamples} resamples for every system; ranks from paired bootstrap tests, Holm-corrected, "
        f"alpha {board.alpha}: systems whose ranges overlap are not significantly different. "
        f"ProbEval KL: lower is better; ProtoQA metrics: higher is better.{_draws_text(board)}{accepted}"
    )


def _draws_text(board: Leaderboard) -> str:
    draws = {len(rows) for by in board.draws.values() for rows in by.values()}
    if not draws:
        return ""
    return (
        f" ProbEval KL is the mean over {max(draws)} automatic clusterings (the clustering seed and the next ones) and "
        "each resample redraws one, so its intervals and ranks hold the seed's share."
    )


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~!$])")


def markdown_text(text: str) -> str:
    r"""``text`` shown literally in Markdown and its HTML: no link, image, emphasis or tag can come from it.

    >>> markdown_text("[x](javascript:alert(1)) <b>")
    '\\[x\\](javascript:alert(1)) &lt;b&gt;'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=True))


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text: str) -> str:
    """A text cell safe in a spreadsheet: one starting with ``= + - @``, tab or carriage return is prefixed
    with ``'`` (as OWASP recommends against formula injection).

    >>> csv_text("@SUM(1+1)"), csv_text("gpt2")
    ("'@SUM(1+1)", 'gpt2')
    """
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


def leaderboard_warnings(
    board: Leaderboard,
    targets: str,
    num_targets: int,
    targets_data: Optional[tuple[str, str]],
    systems: Sequence[SystemAnswers],
) -> list[str]:
    """The board's notes, then what ranking ``systems`` on the ``num_targets`` questions of ``targets`` did not
    check, accepted or left out (``targets_data``: its config and split, None for an unpublished file).

    >>> board = Leaderboard(["q0"], [], [], {}, {}, {}, level=0.95, resamples=10, seed=0, alpha=0.05)
    >>> leaderboard_warnings(board, "t.jsonl", 3, None, [])
    ['ranking on the 1 of 3 target questions that the systems answer']
    """
    notes = list(board.notes)
    if targets_data is None and any(s.settings.get("dataset") for s in systems):
        notes.insert(
            0,
            f"{targets} is not a file of a published data set (its checksum is unknown): the data set and split "
            "the systems record were compared between them, not with it",
        )
    notes += [f"ranked despite differing {accepted} (--accept-mismatch)" for accepted in board.accepted]
    if len(board.questions) < num_targets and not board.dropped:
        notes.append(f"ranking on the {len(board.questions)} of {num_targets} target questions that the systems answer")
    if board.dropped:
        notes.append(
            f"ranking on the {len(board.questions)} questions every system answers; "
            f"{len(board.dropped)} question id(s) left out (--only-common)"
        )
    return notes


def format_table(board: Leaderboard) -> str:
    """The leaderboard as an aligned text table, best first by the main metric, with its legend and signature."""
    header, rows = _rows(board)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + ["", _legend(board), f"signature: {board.signature}"])


def to_markdown(board: Leaderboard) -> str:
    """The leaderboard as a Markdown table with its legend and signature, names shown literally."""
    header, rows = _rows(board)
    lines = ["| " + " | ".join(markdown_text(h) for h in header) + " |", "|" + "---|" * 2 + "---:|" * (len(header) - 2)]
    lines += ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines + ["", markdown_text(_legend(board)), "", f"Signature: `{board.signature}`"]) + "\n"


def to_csv(board: Leaderboard) -> str:
    """One CSV row per (system, metric): mean, interval, rank range, signature.

    >>> from protoqa_core.io.records import Cluster, Question
    >>> from protoqa_integrations.leaderboard.board import build_leaderboard
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
                row: list[Any] = [csv_text(system.name), csv_text(system.source), system.format, column.key]
                row += [repr(s.mean), repr(s.low), repr(s.high), *board.ranks[column.key][system.name]]
                writer.writerow([*row, board.metric_signature(column)])
    return out.getvalue()


def plot_leaderboard(board: Leaderboard, path: PathLike, title: str = "") -> None:
    """A PNG with one panel per metric: every system's mean and interval, best at the top.

    ProbEval's KL first, two panels to a row (readable when shown narrower, on a phone); needs matplotlib.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(f"--plot needs matplotlib: {install_command('plots')}") from exc
    from protoqa_core.cli import replace_file

    columns = sorted(board.columns, key=lambda c: c.key != PROBEVAL_KEY)
    cols = min(len(columns), 2)
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
        # Names are plain text: a "$" in a name is a dollar sign, never matplotlib's math.
        ax.set_yticks(
            y, [f"{n} ({rank_text(board.ranks[column.key][n])})" for n in order], fontsize=8, parse_math=False
        )
        ax.set_title(
            # two lines: one would run past a right-hand panel's edge
            f"{column.label}\n({'higher' if column.higher_is_better else 'lower'} is better)",
            fontsize=9,
            parse_math=False,
        )
        ax.set_xlim(*_axis_range([v for s in scores for v in (s.low, s.mean, s.high)]))
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(columns) :]:
        ax.axis("off")
    heading = title or f"{len(board.questions)} questions, {board.level:.0%} bootstrap intervals"
    if board.accepted:
        heading += f"\nNOT COMPARABLE AS RECORDED: {board.mark}"
    fig.suptitle(heading, fontsize=10, parse_math=False, wrap=True)  # a one-panel plot is narrow
    fig.tight_layout()
    try:
        replace_file(Path(path), lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    finally:
        plt.close(fig)


def _axis_range(values: list[float]) -> tuple[float, float]:
    """The x range of a panel: the values with a margin; values that do not differ (every metric is at least 0)
    from 0 to 1, or to twice their value, not on a range too narrow to read.

    >>> _axis_range([0.0, 0.0, 0.0])
    (0.0, 1.0)
    >>> _axis_range([2.5, 2.5])
    (0.0, 5.0)
    >>> _axis_range([0.2, 0.6])
    (0.18, 0.62)
    """
    finite = [v for v in values if math.isfinite(v)] or [0.0]
    low, high = min(finite), max(finite)
    if high - low > 1e-12:
        margin = (high - low) * 0.05
        return round(low - margin, 12), round(high + margin, 12)
    return (min(0.0, low), max(1.0, 2 * high))


_YAML_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")


def _yaml_string(text: str) -> str:
    r"""A YAML double-quoted scalar that reads back as ``text``, each character YAML does not print as itself escaped.

    >>> import yaml
    >>> all(yaml.safe_load(_yaml_string(t)) == t for t in ("a\x7fb", "a\x85b", "x\u2028y", 'q"\\', "\t#: -"))
    True
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _YAML_ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped) + '"'


def model_index(board: Leaderboard, dataset: str, dataset_name: str, split: str, config: str = "") -> dict[str, str]:
    """One ``model-index`` YAML block per system, as a model card's metadata holds it: the task, the data set
    (Hub id ``dataset``, config, split) and every metric with its value and signature.

    >>> from protoqa_core.io.records import Cluster, Question
    >>> from protoqa_integrations.leaderboard.board import build_leaderboard
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
            *([f"      config: {_yaml_string(config)}"] if config else []),
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
                f"      config: {_yaml_string(board.metric_signature(column))}",
                f"      args: {{ci_low: {s.low!r}, ci_high: {s.high!r}, level: {board.level}}}",
                "      verified: false",
            ]
        blocks[system.name] = "\n".join(lines) + "\n"
    return blocks


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")


def check_hub_id(dataset_type: str) -> str:
    """The data set's Hugging Face Hub id that a model-index records, checked: given, not a file name.

    >>> check_hub_id("someone/protoqa")
    'someone/protoqa'
    >>> check_hub_id("dev.crowdsourced.jsonl")
    Traceback (most recent call last):
    ...
    protoqa_integrations.leaderboard.report.LeaderboardError: --dataset-type 'dev.crowdsourced.jsonl' is a file name; give the data set's Hugging Face Hub id (OWNER/NAME)
    """
    if not dataset_type:
        raise LeaderboardError(
            "--model-index needs --dataset-type HUB_ID, the data set's id on the Hugging Face Hub "
            "(e.g. OWNER/protoqa after python -m protoqa_dataset upload)"
        )
    if dataset_type.lower().endswith((".jsonl", ".json", ".parquet", ".csv")) or Path(dataset_type).is_file():
        raise LeaderboardError(
            f"--dataset-type {dataset_type!r} is a file name; give the data set's Hugging Face Hub id (OWNER/NAME)"
        )
    if not _HUB_ID.fullmatch(dataset_type):
        raise LeaderboardError(f"--dataset-type {dataset_type!r} is not a Hugging Face Hub id (OWNER/NAME)")
    return dataset_type


def model_index_files(directory: PathLike, names: list[str], inputs: list[str], overwrite: bool) -> dict[str, Path]:
    """The ``NAME.yaml`` of every system in the folder ``directory`` (made when missing), each checked by
    :func:`~protoqa_core.cli.check_output_file`; every failure is one :class:`LeaderboardError`.

    >>> import os, tempfile
    >>> sorted(model_index_files(os.path.join(tempfile.mkdtemp(), "cards"), ["a", "b"], [], False))
    ['a', 'b']
    """
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise LeaderboardError(f"{folder}: --model-index needs a folder, and this is a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return {n: check_output_file(str(folder / f"{n}.yaml"), inputs, overwrite) for n in names}
    except OutputFileError as exc:
        raise LeaderboardError(f"{exc}; choose a writable --model-index folder") from None
    except OSError as exc:
        raise LeaderboardError(
            f"{folder}: cannot make the --model-index folder: {reason_of(exc)}; choose a writable folder"
        ) from None
