"""The Space's Leaderboard tab: the shipped leaderboards, and uploaded answers files ranked against them.

The shipped leaderboards (ProtoQA crowdsourced dev, CFC dev, CFC test) are the JSON and PNG
files in ``leaderboard/`` beside this module, written by ``protoqa-eval leaderboard ... --json
--question-scores --plot`` (the commands are in README.md). An upload of up to
:data:`MAX_UPLOADS` answers files is scored on the same questions under the same settings
(:func:`protoqa_integrations.leaderboard.board.add_systems`) and ranked with the shipped systems,
inside the Space's caps and budget (:mod:`protoqa_integrations.hub.serving`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Optional

from demo_errors import DemoError
from demo_settings import resolve_data_dir

from protoqa_integrations.hub import serving
from protoqa_integrations.leaderboard.board import add_systems, check_system_name, leaderboard_from_dict, read_system
from protoqa_integrations.leaderboard.report import Leaderboard, LeaderboardError, to_markdown

__all__ = ["BOARDS", "MAX_UPLOADS", "BoardInfo", "shipped_board", "board_table", "board_plot", "rank_uploads"]

LEADERBOARD_DIR = Path(__file__).resolve().parent / "leaderboard"
MAX_UPLOADS = 10
"""The most answers files one upload ranks."""


@dataclass(frozen=True)
class BoardInfo:
    """A shipped leaderboard: its label and the ``protoqa_dataset`` config and split of its questions."""

    key: str
    label: str
    config: str
    split: str


BOARDS = {
    "protoqa_dev": BoardInfo("protoqa_dev", "ProtoQA crowdsourced dev", "protoqa", "validation"),
    "cfc_dev": BoardInfo("cfc_dev", "CFC dev", "cfc", "validation"),
    "cfc_test": BoardInfo("cfc_test", "CFC test", "cfc", "test"),
}


def _info(key: str) -> BoardInfo:
    if key not in BOARDS:
        raise DemoError(f"unknown leaderboard {key!r}; choose one of {', '.join(BOARDS)}")
    return BOARDS[key]


@cache
def shipped_board(key: str, folder: Path = LEADERBOARD_DIR) -> Leaderboard:
    """The shipped leaderboard ``key`` (:data:`BOARDS`), read once.

    >>> shipped_board("cfc_test").columns[0].key  # doctest: +SKIP
    'probeval_kl'
    """
    _info(key)
    path = folder / f"{key}.json"
    try:
        return leaderboard_from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise DemoError(f"the shipped leaderboard {path.name} cannot be read: {exc}") from None


def board_plot(key: str, folder: Path = LEADERBOARD_DIR) -> Optional[str]:
    """The path of the shipped leaderboard's plot, None when it is missing."""
    path = folder / f"{_info(key).key}.png"
    return str(path) if path.is_file() else None


def board_table(board: Leaderboard, uploaded: Sequence[str] = ()) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows for a sortable table: per metric its mean (a number), then its interval and rank range.

    Rows are in the order of the first metric (best first); uploaded systems are marked.

    >>> from protoqa_core.io.records import Cluster, Question
    >>> from protoqa_integrations.leaderboard.board import build_leaderboard
    >>> from protoqa_integrations.leaderboard.report import SystemAnswers
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> headers, rows = board_table(build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match"))
    >>> headers[:3], rows[0][:3]
    (['system', 'max_answers@1', 'max_answers@1: 95% interval (rank)'], ['one', 1.0, '[1.000, 1.000] (1)'])
    """
    first = board.columns[0].key
    names = board.order(first) + [s.name for s in board.systems if s.name not in board.scores[first]]
    headers = ["system"]
    for column in board.columns:
        headers += [column.label, f"{column.label}: {board.level:.0%} interval (rank)"]
    rows = []
    for name in names:
        row: list[Any] = [f"{name} (uploaded)" if name in uploaded else name]
        for column in board.columns:
            score = board.scores[column.key].get(name)
            if score is None:
                row += [None, ""]
                continue
            best, worst = board.ranks[column.key][name]
            ranks = f"{best}" if best == worst else f"{best}-{worst}"
            row += [round(score.mean, 4), f"[{score.low:.3f}, {score.high:.3f}] ({ranks})"]
        rows.append(row)
    return headers, rows


def _upload_name(path: Path, taken: set[str]) -> str:
    """The system name of an uploaded file: its name without the extension(s)."""
    name = re.sub(r"(\.(json|jsonl|parquet|gz))+$", "", path.name) or path.name
    check_system_name(name)
    if name in taken:
        raise DemoError(f"two systems would be named {name!r}: rename one of the files")
    taken.add(name)
    return name


def _targets(info: BoardInfo) -> dict[str, Any]:
    from protoqa_dataset.parsing import load_questions

    questions, _ = load_questions(info.config, info.split, None if (d := resolve_data_dir()) is None else str(d))
    return {q.id: q for q in questions}


def rank_uploads(key: str, files: Sequence[Any], folder: Path = LEADERBOARD_DIR) -> Leaderboard:
    """The shipped leaderboard ``key`` with the uploaded answers files scored and ranked in it.

    At most :data:`MAX_UPLOADS` files of at most ``serving.MAX_REQUEST_BYTES`` each, at most
    ``serving.MAX_ANSWERS`` answers per question; scoring runs under the Space's memory budget
    and ``serving.SCORE_TIME_BUDGET`` seconds per file. Every problem is a :class:`DemoError`.
    """
    info = _info(key)
    paths = [Path(getattr(f, "name", f)) for f in files or []]
    if not paths:
        raise DemoError("upload one or more answers files to rank them")
    if len(paths) > MAX_UPLOADS:
        raise DemoError(f"{len(paths)} files: at most {MAX_UPLOADS} are ranked at once")
    board = shipped_board(key, folder)
    taken = {s.name for s in board.systems}
    systems = []
    for path in paths:
        size = path.stat().st_size
        if size > serving.MAX_REQUEST_BYTES:
            raise DemoError(f"{path.name} has {size:,} bytes; at most {serving.MAX_REQUEST_BYTES:,} are read")
        name = _upload_name(path, taken)
        try:
            system = read_system(name, path)
        except (ValueError, OSError) as exc:
            raise DemoError(f"{path.name}: {' '.join(str(exc).replace(str(path), path.name).split())}") from None
        most = max((sum(c.values()) for c in system.samples.values()), default=0)
        if most > serving.MAX_ANSWERS:
            raise DemoError(f"{path.name} has {most} answers for a question; at most {serving.MAX_ANSWERS} are scored")
        systems.append(system)
    targets = _targets(info)
    try:
        return serving.run_with_budget(
            add_systems,
            board,
            targets,
            systems,
            seconds=serving.SCORE_TIME_BUDGET * len(systems),
            memory=serving.SCORE_MEMORY_BUDGET,
        )
    except (LeaderboardError, serving.LimitError) as exc:
        raise DemoError(str(exc)) from None


def board_markdown(board: Leaderboard) -> str:
    """The legend and signature under the table (the Markdown table's last lines)."""
    return to_markdown(board).split("\n\n", 1)[1]
