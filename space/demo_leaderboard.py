"""The Space's Leaderboard tab: the shipped leaderboards, and uploaded answers files ranked against them.

The shipped leaderboards (ProtoQA crowdsourced dev, CFC dev, CFC test) are the JSON and PNG
files in ``leaderboard/`` beside this module, written by ``protoqa-eval leaderboard ... --json
--question-scores --plot`` (the commands are in README.md). An upload of up to
:data:`MAX_UPLOADS` answers files is scored on the same questions under the same settings
(:func:`protoqa_integrations.leaderboard.board.add_systems`) and ranked with the shipped systems,
inside the Space's caps and budget (:mod:`protoqa_integrations.hub.serving`). Uploads whose recorded
provenance differs (data set, split, samples per question, ...) are refused unless the user ticks
the differing fields under :data:`ACCEPT_LABEL` (the API's ``accept_mismatch``); the board is
then marked as the command line's ``--accept-mismatch`` marks it.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Optional

from demo_errors import DemoError
from demo_settings import resolve_data_dir, space_temp_dir

from protoqa_core.redaction import redact_text
from protoqa_integrations.generation.provenance import FIELDS
from protoqa_integrations.hub import serving
from protoqa_integrations.leaderboard.board import add_systems, leaderboard_from_dict, read_system
from protoqa_integrations.leaderboard.report import (
    PROBEVAL_KEY,
    Leaderboard,
    check_system_name,
    markdown_text,
    plot_leaderboard,
    rank_text,
    to_markdown,
)

__all__ = [
    "ACCEPT_LABEL",
    "BOARDS",
    "MAX_UPLOADS",
    "BoardInfo",
    "BoardView",
    "accepted_fields",
    "space_wording",
    "shipped_board",
    "board_table",
    "board_intervals",
    "board_phone_list",
    "board_plot",
    "upload_plot",
    "rank_uploads",
    "board_view",
    "plots_dir",
]

LEADERBOARD_DIR = Path(__file__).resolve().parent / "leaderboard"
MAX_UPLOADS = 10
"""The most answers files one upload ranks."""
ACCEPT_LABEL = "Rank despite differing"
"""The label of the tab's control that accepts provenance mismatches (the command line's ``--accept-mismatch``)."""
_CONTROL = f"“{ACCEPT_LABEL}” (the API's accept_mismatch)"


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


def column_label(label: str) -> str:
    """A metric's header: its name as ``protoqa-eval leaderboard`` prints it and its plot draws it (the
    command-line id, ``max_answers@10``), the KL marked lower-is-better.

    >>> column_label("max_answers@10"), column_label("ProbEval KL")
    ('max_answers@10', 'ProbEval KL ↓')
    """
    return f"{label} ↓" if label == "ProbEval KL" else label


def _main_key(board: Leaderboard) -> str:
    keys = [c.key for c in board.columns]
    return PROBEVAL_KEY if PROBEVAL_KEY in keys else keys[0]


def _ordered_columns(board: Leaderboard) -> list[Any]:
    """The main metric (ProbEval KL where the board has it) first, then the others in the board's order."""
    main = _main_key(board)
    return sorted(board.columns, key=lambda c: c.key != main)


def _names(board: Leaderboard) -> list[str]:
    main = _main_key(board)
    return board.order(main) + [s.name for s in board.systems if s.name not in board.scores[main]]


def _shown_name(name: str, uploaded: Sequence[str]) -> str:
    return f"{name} (uploaded)" if name in uploaded else name


def board_table(board: Leaderboard, uploaded: Sequence[str] = ()) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows for a sortable table: the system, its rank range on the main metric, then every metric's
    mean (a number; the main metric, ProbEval KL where the board has it, first).

    Rows are best first by the main metric; uploaded systems are marked. Intervals are in
    :func:`board_intervals`.

    >>> from protoqa_core.io.records import Cluster, Question
    >>> from protoqa_integrations.leaderboard.board import build_leaderboard
    >>> from protoqa_integrations.leaderboard.report import SystemAnswers
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> headers, rows = board_table(build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match"))
    >>> headers[:4], rows[0][:4]
    (['system', 'rank', 'max_answers@1', 'max_answers@3'], ['one', '1', 1.0, 1.0])
    """
    main = _main_key(board)
    columns = _ordered_columns(board)
    headers = ["system", "rank"] + [column_label(c.label) for c in columns]
    rows = []
    for name in _names(board):
        rank = board.ranks[main].get(name)
        row: list[Any] = [_shown_name(name, uploaded), "" if rank is None else rank_text(rank)]
        for column in columns:
            score = board.scores[column.key].get(name)
            row.append(None if score is None else round(score.mean, 3))
        rows.append(row)
    return headers, rows


def board_intervals(board: Leaderboard, uploaded: Sequence[str] = ()) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of every metric's bootstrap interval and rank range, ``[low, high] (rank)``, per system.

    >>> from protoqa_core.io.readers import Cluster, Question
    >>> from protoqa_integrations.leaderboard.board import build_leaderboard
    >>> from protoqa_integrations.leaderboard.report import SystemAnswers
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("one", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> board_intervals(build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match"))[1][0][:2]
    ['one', '[1.000, 1.000] (1)']
    """
    columns = _ordered_columns(board)
    headers = ["system"] + [column_label(c.label) for c in columns]
    rows = []
    for name in _names(board):
        row: list[Any] = [_shown_name(name, uploaded)]
        for column in columns:
            score = board.scores[column.key].get(name)
            rank = board.ranks[column.key].get(name)
            row.append(
                "" if score is None or rank is None else f"[{score.low:.3f}, {score.high:.3f}] ({rank_text(rank)})"
            )
        rows.append(row)
    return headers, rows


def board_phone_list(board: Leaderboard, uploaded: Sequence[str] = ()) -> str:
    """The ranking as an HTML list for a narrow screen: each system with its main figure, interval and rank.

    Names are HTML-escaped.

    >>> from protoqa_core.io.readers import Cluster, Question
    >>> from protoqa_integrations.leaderboard.board import build_leaderboard
    >>> from protoqa_integrations.leaderboard.report import SystemAnswers
    >>> q = {f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6),)) for i in range(5)}
    >>> one = SystemAnswers("<b>", "-", "predictions", {k: {"dog": 1} for k in q}, {k: ["dog"] for k in q})
    >>> "&lt;b&gt;" in board_phone_list(build_leaderboard(q, [one], metrics=["protoqa"], similarity="exact_match"))
    True
    """
    main = _main_key(board)
    column = next(c for c in board.columns if c.key == main)
    items = []
    for name in _names(board):
        score = board.scores[main].get(name)
        if score is None:
            continue
        rank = rank_text(board.ranks[main][name])
        items.append(
            f"<li><span class='lb-rank'>{rank}</span> <span class='lb-name'>"
            f"{html.escape(_shown_name(name, uploaded))}</span> <b>{score.mean:.3f}</b> "
            f"<span class='lb-ci'>[{score.low:.3f}, {score.high:.3f}]</span></li>"
        )
    return (
        f"<div class='lb-phone-head'>{html.escape(column_label(column.label))} "
        f"({'higher' if column.higher_is_better else 'lower'} is better), rank range first</div>"
        f"<ol class='lb-phone'>{''.join(items)}</ol>"
    )


def _upload_name(path: Path, taken: set[str]) -> str:
    """The system name of an uploaded file: its name without the extension(s)."""
    name = re.sub(r"(\.(json|jsonl|parquet|gz))+$", "", path.name) or path.name
    try:
        check_system_name(name)
    except ValueError as exc:
        raise DemoError(f"{exc}; rename the file") from None
    if name in taken:
        raise DemoError(f"two systems would be named {name!r}: rename one of the files")
    taken.add(name)
    return name


def _targets(info: BoardInfo) -> dict[str, Any]:
    from protoqa_dataset.parsing import load_questions

    questions, _ = load_questions(info.config, info.split, None if (d := resolve_data_dir()) is None else str(d))
    return {q.id: q for q in questions}


def space_wording(message: str) -> str:
    """A command-line message as the Space says it: the ``--accept-mismatch`` flag, which a Space user cannot
    pass, becomes the tab's control (:data:`ACCEPT_LABEL`) and the API's ``accept_mismatch``.

    >>> print(space_wording("a and b differ in samples (a: 30, b: 300): ...; or pass --accept-mismatch samples to rank them"))
    a and b differ in samples (a: 30, b: 300): ...; or tick samples under “Rank despite differing” (the API's accept_mismatch) to rank them
    >>> print(space_wording("NOT COMPARABLE AS RECORDED: mismatches accepted with --accept-mismatch: samples (a: 30, b: 300)."))
    NOT COMPARABLE AS RECORDED: mismatches accepted under “Rank despite differing” (the API's accept_mismatch): samples (a: 30, b: 300).
    """
    message = re.sub(r"\bpass --accept-mismatch ([a-z_]+)", rf"tick \1 under {_CONTROL}", message)
    message = message.replace("with --accept-mismatch", f"under {_CONTROL}")
    return message.replace("--accept-mismatch", _CONTROL)


def accepted_fields(accept: Any) -> list[str]:
    """The provenance fields a user accepts (from the tab's control or the API), checked: a list of names among
    :data:`~protoqa_integrations.generation.provenance.FIELDS` (None or empty: none).

    >>> accepted_fields(["samples"]), accepted_fields(None)
    (['samples'], [])
    >>> accepted_fields(["sample"])
    Traceback (most recent call last):
    ...
    demo_errors.DemoError: accept_mismatch takes fields among dataset, split, questions, samples, temperature, top_p, max_tokens, prompt; got 'sample'
    """
    if accept is None:
        return []
    if isinstance(accept, str) or not isinstance(accept, (list, tuple)):
        raise DemoError(f"accept_mismatch must be a list of fields among {', '.join(FIELDS)}")
    unknown = [a for a in accept if a not in FIELDS]
    if unknown:
        raise DemoError(f"accept_mismatch takes fields among {', '.join(FIELDS)}; got {unknown[0]!r}")
    return [str(a) for a in accept]


def _read_uploads(paths: Sequence[Path], names: Sequence[str]) -> list[Any]:
    """Each upload read as a system, each problem one :class:`DemoError` naming the file."""
    systems = []
    for path, name in zip(paths, names, strict=True):
        try:
            system = read_system(name, path)
        except (ValueError, OSError) as exc:
            message = " ".join(str(exc).replace(str(path), path.name).split())
            raise DemoError(message if message.startswith(path.name) else f"{path.name}: {message}") from None
        most = max((sum(c.values()) for c in system.samples.values()), default=0)
        if most > serving.MAX_ANSWERS:
            raise DemoError(f"{path.name} has {most} answers for a question; at most {serving.MAX_ANSWERS} are scored")
        systems.append(system)
    return systems


def rank_uploads(
    key: str,
    files: Sequence[Any],
    folder: Path = LEADERBOARD_DIR,
    only_common: bool = False,
    accept: Sequence[str] = (),
) -> Leaderboard:
    """The shipped leaderboard ``key`` with the uploaded answers files scored and ranked in it.

    At most :data:`MAX_UPLOADS` files of at most ``serving.MAX_REQUEST_BYTES`` each, at most
    ``serving.MAX_ANSWERS`` answers per question; scoring runs under the Space's memory budget
    and ``serving.SCORE_TIME_BUDGET`` seconds per file. With ``only_common``, every system is
    ranked on the board's questions that every upload answers. An upload whose recorded data
    set, split or sampling settings differ from the board's or another upload's is refused,
    unless ``accept`` names the field; the board's ``accepted`` then says so. Every problem is
    a :class:`DemoError` of one line, as the command line words it (:func:`space_wording`).
    """
    info = _info(key)
    accept = accepted_fields(list(accept))
    paths = [Path(getattr(f, "name", f)) for f in files or []]
    if not paths:
        raise DemoError("upload one or more answers files to rank them")
    if len(paths) > MAX_UPLOADS:
        raise DemoError(f"{len(paths)} files: at most {MAX_UPLOADS} are ranked at once")
    board = shipped_board(key, folder)
    taken = {s.name for s in board.systems}
    for path in paths:
        size = path.stat().st_size
        if size > serving.MAX_REQUEST_BYTES:
            raise DemoError(f"{path.name} has {size:,} bytes; at most {serving.MAX_REQUEST_BYTES:,} are read")
    names = [_upload_name(path, taken) for path in paths]
    # Reading is inside the budget too: a small archive may unpack to far more than it weighs.
    seconds = serving.SCORE_TIME_BUDGET * len(paths)
    try:
        systems = serving.run_with_budget(
            _read_uploads, paths, names, seconds=seconds, memory=serving.SCORE_MEMORY_BUDGET
        )
    except serving.LimitError:
        raise DemoError(
            f"the uploaded files could not be read inside the Space's budget ({seconds:g} s, "
            f"{serving.SCORE_MEMORY_BUDGET // 2**20} MB of memory)"
        ) from None
    targets = _targets(info)
    try:
        return serving.run_with_budget(
            add_systems,
            board,
            targets,
            systems,
            only_common=only_common,
            targets_data=(info.config, info.split),
            accept=accept,
            seconds=serving.SCORE_TIME_BUDGET * len(systems),
            memory=serving.SCORE_MEMORY_BUDGET,
        )
    except (ValueError, serving.LimitError) as exc:  # LeaderboardError, ProvenanceError
        raise DemoError(space_wording(" ".join(str(exc).split()))) from None


def board_markdown(board: Leaderboard) -> str:
    """The legend and signature under the table (the Markdown table's last lines), with the board's notes."""
    notes = "".join(f"Note: {markdown_text(n)}\n\n" for n in board.notes)
    return space_wording(notes + to_markdown(board).split("\n\n", 1)[1])


def plots_dir() -> Path:
    """Where the plots of uploaded systems are drawn (the Space serves files from it)."""
    return space_temp_dir("leaderboard-plots")


_PLOT_LIFETIME_S = 3600


def upload_plot(board: Leaderboard) -> str:
    """Draw ``board`` (with its uploads) into a new PNG under :func:`plots_dir`; plots older than an hour go.

    Returns the PNG's path.
    """
    folder = plots_dir()
    now = time.time()
    for old in folder.glob("board-*.png"):
        try:
            if now - old.stat().st_mtime > _PLOT_LIFETIME_S:
                old.unlink()
        except OSError:
            pass
    fd, name = tempfile.mkstemp(prefix="board-", suffix=".png", dir=folder)
    os.close(fd)
    try:
        plot_leaderboard(board, name)
    except Exception as exc:  # noqa: BLE001  (the table stands without its plot; say why)
        Path(name).unlink(missing_ok=True)
        raise DemoError(f"the plot could not be drawn: {' '.join(str(exc).split())[:200]}") from None
    return name


@dataclass
class BoardView:
    """What the Leaderboard tab shows: a status line, the table, the intervals, the phone list, the plot and the
    legend with the signature.

    ``error`` is the one line of a failed upload (the shipped board is then shown, and ``status`` says so).
    """

    headers: list[str]
    rows: list[list[Any]]
    interval_headers: list[str]
    interval_rows: list[list[Any]]
    phone: str
    plot: Optional[str]
    note: str
    error: Optional[str] = None
    board: Optional[Leaderboard] = field(default=None, repr=False)
    status: str = ""


def _view(board: Leaderboard, uploaded: Sequence[str], plot: Optional[str], note: str) -> BoardView:
    headers, rows = board_table(board, uploaded)
    interval_headers, interval_rows = board_intervals(board, uploaded)
    return BoardView(
        headers, rows, interval_headers, interval_rows, board_phone_list(board, uploaded), plot, note, None, board
    )


def board_view(key: str, files: Sequence[Any] = (), only_common: bool = False, accept: Sequence[str] = ()) -> BoardView:
    """The tab's content for board ``key``, with ``files`` ranked in it; a failed upload keeps the shipped board,
    its plot and its signature, and says why in ``error`` (and in ``status``, shown above the table).

    Provenance mismatches in ``accept`` are ranked anyway and marked: in the status line, the
    legend and the signature, as the command line marks them."""
    uploaded = list(files or [])
    shipped = shipped_board(key)
    if not uploaded:
        return _view(shipped, (), board_plot(key), board_markdown(shipped))
    try:
        board = rank_uploads(key, uploaded, only_common=only_common, accept=list(accept or []))
        names = [s.name for s in board.systems[-len(uploaded) :]]
        plot = upload_plot(board)
    except DemoError as exc:
        view = _view(shipped, (), board_plot(key), board_markdown(shipped))
        view.error = redact_text(str(exc))
        view.status = f"**Error:** {markdown_text(view.error)} (the shipped board is shown)"
        return view
    common = f" on the {len(board.questions)} questions every upload answers" if only_common else ""
    view = _view(board, names, plot, board_markdown(board))
    view.status = f"{len(uploaded)} uploaded file(s) ranked with the shipped systems{common}."
    if board.accepted:
        view.status = (
            f"**NOT COMPARABLE AS RECORDED:** ranked despite differing {markdown_text('; '.join(board.accepted))}. "
            + view.status
        )
    return view


_MAX_NAME_BYTES = 200
"""The longest upload name taken: file systems take 255 bytes, and the name gains a suffix in places."""


def _upload_files(uploads: Any, folder: Path) -> list[str]:
    """Write the API's uploads (``{"name": ..., "content": text}`` or ``{"name": ..., "base64": ...}``) into
    ``folder``; the paths written."""
    if not isinstance(uploads, list) or not uploads:
        raise DemoError('uploads must be a list of {"name": FILE NAME, "content": TEXT} (or "base64": DATA) objects')
    if len(uploads) > MAX_UPLOADS:
        raise DemoError(f"{len(uploads)} files: at most {MAX_UPLOADS} are ranked at once")
    paths = []
    for number, upload in enumerate(uploads, start=1):
        name = upload.get("name") if isinstance(upload, dict) else None
        if not isinstance(name, str) or not name or Path(name).name != name or "\x00" in name or name in (".", ".."):
            raise DemoError(f"upload {number}: 'name' must be a plain file name such as mine.jsonl")
        if isinstance(upload.get("content"), str):
            data = upload["content"].encode("utf-8", "surrogatepass")
        elif isinstance(upload.get("base64"), str):
            try:
                data = base64.b64decode(upload["base64"], validate=True)
            except ValueError:
                raise DemoError(f"{name}: 'base64' is not base64 data") from None
        else:
            raise DemoError(f"{name}: give the file as 'content' (text) or 'base64'")
        if len(name.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES:
            raise DemoError(f"upload {number}: the file name is longer than {_MAX_NAME_BYTES} bytes; shorten it")
        path = folder / name
        if path.exists():
            raise DemoError(f"two uploads are named {name[:80]!r}: rename one")
        try:
            path.write_bytes(data)
        except (OSError, UnicodeError) as exc:
            raise DemoError(f"upload {number}: cannot be stored under its name ({exc.__class__.__name__})") from None
        paths.append(str(path))
    return paths


def api_rank(key: str, uploads: Any, only_common: bool = False, accept_mismatch: Any = None) -> dict[str, Any]:
    """The API's leaderboard: ``uploads`` ranked against board ``key``, as ``protoqa-eval leaderboard --json``
    writes a board, with ``error`` the one line the page shows when they cannot be ranked (the shipped board
    is then returned). ``accept_mismatch`` lists the provenance fields (:func:`accepted_fields`) in which the
    uploads may differ; the board's ``accepted_mismatches`` and signature then say so.

    >>> api_rank("cfc_test", [])["error"]
    'uploads must be a list of {"name": FILE NAME, "content": TEXT} (or "base64": DATA) objects'
    """
    try:
        _info(key)
        with tempfile.TemporaryDirectory(dir=space_temp_dir("uploads")) as folder:
            accept = accepted_fields(accept_mismatch)
            view = board_view(key, _upload_files(uploads, Path(folder)), bool(only_common), accept)
    except DemoError as exc:
        view = board_view(key) if key in BOARDS else None
        error: Optional[str] = redact_text(str(exc))
    else:
        error = view.error
    board = view.board.as_dict() if view is not None and view.board is not None else None
    if board is not None:
        for system in board["systems"]:
            system["file"] = Path(system["file"]).name
    return {"board": key, "error": error, "leaderboard": board}
