"""Reading prediction files: ranked answer lists keyed by question id, in any form docs/protoqa-metric.md
lists (JSONL lines, one object, ``{"model_answers": ...}`` with its siblings); errors name file, line, question.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from .files import DataFormatError, PathLike, ProtoQAWarning, opened, reading
from .json_values import GROUP, Members, TooManyItems, json_values, member_line, read_text
from .records import check_answers, check_count

__all__ = [
    "read_predictions",
    "read_prediction_lists",
    "read_prediction_document",
    "PredictionDocument",
    "prediction_items",
    "stream_items",
    "duplicate_id_error",
    "prediction_line",
    "too_many_answers_error",
    "ranked_answers",
]

PREDICTION_FIELDS = ("model_ranked_answers", "model_answers", "model_answers_with_count")
EVERY_FIELD = "*"
"""The ``field`` of the internal readers that reads every field at once (:func:`read_prediction_document`)."""


def _rank_by_count(pairs: Any, path, line, qid) -> list[str]:
    if not isinstance(pairs, list):
        raise DataFormatError("model_answers_with_count must be a list of [answer, count]", path, line, qid)
    checked = []
    for item in pairs:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise DataFormatError(f"expected [answer, count], found {item!r}", path, line, qid)
        checked.append((item[0], check_count(item[1], f"count of {item[0]!r}", path, line, qid)))
    # Stable: answers with equal counts keep their order in the file.
    return [a for a, _ in sorted(checked, key=lambda ac: -ac[1])]


def read_prediction_lists(
    path: PathLike, field: Optional[str] = None, *, max_answers: Optional[int] = None
) -> dict[str, Any]:
    """Read a predictions file into ``{question id: value}``, each value a checked list, uninterpreted.

    ``field`` picks the ``model_answers``-style mapping (default: the first of :data:`PREDICTION_FIELDS` present).

    >>> read_prediction_lists("../shared/data/cfc/dev.predictions.human.json")["r1q4"][:2]  # doctest: +SKIP
    ['dancing time.', 'it is very good']
    """
    return {qid: value for _, qid, value, _ in _unique_items(path, field, max_answers)}


def _line_objects(
    fh: Any,
    path: Path,
    field: Optional[str],
    max_answers: Optional[int],
    parsed: Optional[tuple[Optional[int], Any]] = None,
) -> Iterator[tuple[Optional[str], Any, Any, Optional[int]]]:
    """``(field, question id, value, line)`` of each prediction of the open binary file ``fh``."""
    # An answer list of n strings is n items; [answer, count] pairs are 3 a pair.
    limit = None if max_answers is None else 3 * max_answers + 3
    for line, value in json_values(fh, path, limit, parsed):
        if isinstance(value, Members):
            yield from _members_items(value, path, line, field, max_answers)
        else:
            yield from _object_items(value, path, line, field)


def _members_items(
    members: Members, path: Path, line: Optional[int], field: Optional[str], max_answers: Optional[int]
) -> Iterator[tuple[Optional[str], Any, Any, Optional[int]]]:
    """:func:`_streamed_items`, naming no line when the object spans lines (:attr:`Members.spans_lines`)."""
    try:
        for group, qid, value, at in _streamed_items(members, path, line, field, max_answers):
            yield group, qid, value, None if members.spans_lines else at
    except DataFormatError as exc:
        if not members.spans_lines or exc.line is None:
            raise
        raise type(exc)(exc.message, path, None, exc.question_id) from None


def _object_items(
    obj: Any, path: Path, line: Optional[int], field: Optional[str]
) -> Iterator[tuple[Optional[str], Any, Any, Optional[int]]]:
    """The predictions of one parsed JSON object (a JSONL line, or a whole small document)."""
    if not isinstance(obj, dict):
        raise DataFormatError(f"expected a JSON object, got {type(obj).__name__}", path, line)
    if "question_id" in obj and "ranked_answers" in obj:
        yield None, obj["question_id"], obj["ranked_answers"], line
    elif any(f in obj for f in PREDICTION_FIELDS) and all(isinstance(v, dict) for v in obj.values()):
        if field == EVERY_FIELD:
            for name, members in obj.items():
                if name in PREDICTION_FIELDS:
                    yield from ((name, qid, value, line) for qid, value in members.items())
                else:
                    yield name, None, members, line
            return
        chosen = field or next(f for f in PREDICTION_FIELDS if f in obj)
        if chosen not in obj:
            raise DataFormatError(f"no field {chosen!r}; the file has {sorted(obj)}", path, line)
        for qid, value in obj[chosen].items():
            yield chosen, qid, value, line
    else:
        for qid, value in obj.items():
            yield None, qid, value, line


def too_many_answers_error(path: PathLike, line: Optional[int], qid: str, max_answers: int) -> DataFormatError:
    """The error for a question with more than ``max_answers`` answers."""
    return DataFormatError(
        f"more than {max_answers:,} answers for one question, the cap per question (--max-answers raises it)",
        path,
        line,
        qid,
    )


def _streamed_items(
    members: Members,
    path: Path,
    line: Optional[int],
    field: Optional[str],
    max_answers: Optional[int],
) -> Iterator[tuple[Optional[str], Any, Any, Optional[int]]]:
    """:func:`_object_items` of one object parsed as it is read, one question's value at a time.

    The ``model_answers`` form is known only at the object's end; until then the members of a field
    that a later one may outrank wait in a temporary on-disk table.
    """
    best = field or PREDICTION_FIELDS[0]
    groups: list[str] = []
    first_group: Optional[str] = None
    plain = False
    record: dict[str, Any] = {}
    mode = "skip"
    stage: Optional[_Stage] = None
    extras: dict[str, dict[str, Any]] = {}
    items = iter(members)
    while True:
        try:
            item = next(items, None)
        except TooManyItems as exc:
            raise too_many_answers_error(path, line, exc.args[0], max_answers or 0) from None
        if item is None:
            break
        group, qid, value = item
        if group is None and value is GROUP:
            if plain:
                raise DataFormatError("answers must be a list, got dict", path, line, qid)
            first_group = first_group or qid
            groups.append(qid)
            mode = _group_mode(qid, field, best, groups[:-1])
            if mode == "extra":
                extras[qid] = {}
            continue
        if group is None:
            if first_group is not None:
                raise DataFormatError("answers must be a list, got dict", path, line, first_group)
            plain = True
            if qid in ("question_id", "ranked_answers"):
                record[qid] = value
                continue
            yield None, qid, value, line
        elif mode == "yield":
            yield group, qid, value, line
        elif mode == "extra":
            extras[group][qid] = value
        elif mode == "stage":
            stage = stage or _Stage()
            stage.add(group, qid, value)
    if len(record) == 2:
        yield None, record["question_id"], record["ranked_answers"], line
    elif record:
        for qid, value in record.items():
            yield None, qid, value, line
    if plain or not groups:
        return
    if not any(g in PREDICTION_FIELDS for g in groups):
        raise DataFormatError("answers must be a list, got dict", path, line, first_group)
    if field == EVERY_FIELD:
        yield from ((name, None, members, line) for name, members in extras.items())
        return
    chosen = field or next(f for f in PREDICTION_FIELDS if f in groups)
    if chosen not in groups:
        raise DataFormatError(f"no field {chosen!r}; the file has {sorted(groups)}", path, line)
    if chosen != best and stage is not None:
        yield from ((chosen, qid, value, line) for qid, value in stage.items(chosen))
    if stage is not None:
        stage.close()


def _group_mode(group: str, field: Optional[str], best: str, earlier: list[str]) -> str:
    """``"yield"``, ``"extra"``, ``"stage"`` or ``"skip"``: what :func:`_streamed_items` does with ``group``."""
    if group == best or (field == EVERY_FIELD and group in PREDICTION_FIELDS):
        return "yield"
    if field == EVERY_FIELD:
        return "extra"
    if field is None and group in PREDICTION_FIELDS and _rank(group) < min(map(_rank, earlier), default=9):
        return "stage"
    return "skip"


def _rank(group: str) -> int:
    return PREDICTION_FIELDS.index(group) if group in PREDICTION_FIELDS else 9


class _Stage:
    """Members of a JSON object held on disk (a private SQLite database) until the object ends."""

    def __init__(self) -> None:
        import sqlite3  # here: only a large document that needs it pays its import

        # An empty name: a private temporary database, deleted when it is closed.
        self._db = sqlite3.connect("")
        self._db.execute("CREATE TABLE stage(grp TEXT, qid TEXT, value TEXT)")

    def add(self, group: str, qid: str, value: Any) -> None:
        self._db.execute("INSERT INTO stage VALUES (?, ?, ?)", (group, qid, json.dumps(value, ensure_ascii=False)))

    def items(self, group: str) -> Iterator[tuple[str, Any]]:
        for qid, value in self._db.execute("SELECT qid, value FROM stage WHERE grp = ? ORDER BY rowid", (group,)):
            yield qid, json.loads(value)

    def close(self) -> None:
        self._db.close()


def prediction_items(
    path: PathLike, field: Optional[str], max_answers: Optional[int] = None
) -> Iterator[tuple[Optional[str], Any, Any, Optional[int]]]:
    """``(field, question id, value, line)`` of each prediction, in file order, read as a stream.

    Ids are checked to be strings and values lists; repeated ids are the caller's to check. With
    :data:`EVERY_FIELD`, every field is read and other members come as ``(name, None, value, line)``.
    """
    path = Path(path)
    count = 0
    with opened(path, "predictions") as fh:
        for group, qid, value, line in _checked_items(fh, path, field, max_answers):
            count += qid is not None
            yield group, qid, value, line
    if not count:
        warnings.warn(
            f"{path}: the predictions file holds no predictions; every question will score as unanswered",
            ProtoQAWarning,
            stacklevel=4,
        )


def _checked_items(
    fh: Any,
    path: Path,
    field: Optional[str],
    max_answers: Optional[int],
    parsed: Optional[tuple[Optional[int], Any]] = None,
) -> Iterator[tuple[Optional[str], Any, Any, Optional[int]]]:
    for group, qid, value, line in _line_objects(fh, path, field, max_answers, parsed):
        if qid is None and field == EVERY_FIELD:
            yield group, qid, value, line
            continue
        if not isinstance(qid, str):
            raise DataFormatError(f"question id must be a string, got {qid!r}", path, line)
        if not isinstance(value, list):
            raise DataFormatError(f"answers must be a list, got {type(value).__name__}", path, line, qid)
        if max_answers is not None and len(value) > max_answers:
            raise too_many_answers_error(path, line, qid, max_answers)
        yield group, qid, value, line


def stream_items(
    stream: Any,
    path: PathLike,
    max_answers: Optional[int] = None,
    *,
    parsed: Optional[tuple[Optional[int], Any]] = None,
) -> Iterator[tuple[Optional[str], Optional[str], Any, Optional[int]]]:
    """:func:`prediction_items` with :data:`EVERY_FIELD` of a file already open as the binary ``stream``.

    For a reader that looked at the first bytes; one that already parsed the first value gives it as
    ``parsed``, ``(line, value)`` (:func:`~protoqa_core.io.json_values.json_values`).

    >>> import io
    >>> list(stream_items(io.BytesIO(b'{"q1": ["dog"]}'), "p.json"))
    [(None, 'q1', ['dog'], 1)]
    >>> list(stream_items(io.BytesIO(b'{"q2": []}'), "p.jsonl", parsed=(1, {"q1": ["dog"]})))
    [(None, 'q1', ['dog'], 1), (None, 'q2', [], 2)]
    """
    with reading(path):
        yield from _checked_items(stream, Path(path), EVERY_FIELD, max_answers, parsed)


def duplicate_id_error(path: PathLike, line: Optional[int], qid: str, first: Optional[int]) -> DataFormatError:
    """The error for a question id seen twice, naming the first line."""
    return DataFormatError("duplicate question id" + (f" (first on line {first})" if first else ""), path, line, qid)


def prediction_line(path: PathLike, qid: str, field: Optional[str] = None) -> Optional[int]:
    """The line of ``path`` where question ``qid`` is answered (in ``field`` when given), found in the text again
    for an error about it when the reader could not name one (an object over several lines); None when not found.

    >>> prediction_line("/nonexistent/p.json", "q1") is None
    True
    """
    # A pipe or FIFO was read to its end already; opening a FIFO again would wait for a writer.
    try:
        if not Path(path).is_file():
            return None
        text = read_text(path)
    except (DataFormatError, OSError):
        return None
    return member_line(text, qid, after=field)


def ranked_answers(value: list[Any], path: PathLike, line: Optional[int], qid: str) -> list[str]:
    """A prediction's ranked answers: a checked list of strings, or sampled answers ranked by count."""
    if value and all(isinstance(v, list) for v in value):
        return _rank_by_count(value, path, line, qid)
    return list(check_answers(value, "answers", path, line, qid))


def read_predictions(
    path: PathLike, field: Optional[str] = None, *, max_answers: Optional[int] = None
) -> dict[str, list[str]]:
    """Read ranked answer lists ``{question id: [answer, ...]}`` from any supported file.

    Answers with counts are ranked by count, ties in file order; empty and repeated answers are kept.

    >>> preds = read_predictions("../shared/data/protoqa/dev.predictions.gpt2finetuned.json")  # doctest: +SKIP
    >>> preds["r1q1"][:2]  # doctest: +SKIP
    ['age', 'name']
    """
    return {
        qid: ranked_answers(value, path, line, qid) for _, qid, value, line in _unique_items(path, field, max_answers)
    }


class PredictionDocument:
    """A predictions file read once: every ``model_answers``-style field (or its plain lists) and its
    other top-level members, for readers that need several of them.

    >>> import json, os, tempfile
    >>> name = os.path.join(tempfile.mkdtemp(), "a.json")
    >>> doc = {"model_answers": {"q1": ["b", "a", "a"]}, "model_ranked_answers": {"q1": ["a", "b"]}, "generation": {}}
    >>> with open(name, "w") as fh: _ = fh.write(json.dumps(doc))
    >>> d = read_prediction_document(name)
    >>> d.fields, d.lists("model_answers"), d.ranked(), d.members
    (('model_answers', 'model_ranked_answers'), {'q1': ['b', 'a', 'a']}, {'q1': ['a', 'b']}, {'generation': {}})
    """

    def __init__(self, path: Path, groups: dict[Optional[str], dict[str, tuple[Any, Optional[int]]]], members: dict):
        self.path = path
        self._groups = groups
        self.fields: tuple[str, ...] = tuple(g for g in groups if g is not None)  # in file order
        self.members: dict[str, Any] = members  # other top-level members, such as ``generation``

    def _group(self, field: Optional[str]) -> dict[str, tuple[Any, Optional[int]]]:
        if not self.fields:
            return self._groups.get(None, {})
        chosen = field or next(f for f in PREDICTION_FIELDS if f in self._groups)
        if chosen not in self._groups:
            names = sorted([*self.fields, *self.members])
            raise DataFormatError(f"no field {chosen!r}; the file has {names}", self.path)
        return self._groups[chosen]

    def lists(self, field: Optional[str] = None) -> dict[str, Any]:
        """:func:`read_prediction_lists` of the file."""
        return {qid: value for qid, (value, _) in self._group(field).items()}

    def ranked(self, field: Optional[str] = None) -> dict[str, list[str]]:
        """:func:`read_predictions` of the file."""
        return {qid: ranked_answers(value, self.path, line, qid) for qid, (value, line) in self._group(field).items()}


def read_prediction_document(path: PathLike, *, max_answers: Optional[int] = None) -> PredictionDocument:
    """Read a predictions file once into a :class:`PredictionDocument`, checked as :func:`read_prediction_lists`."""
    path = Path(path)
    groups: dict[Optional[str], dict[str, tuple[Any, Optional[int]]]] = {}
    members: dict[str, Any] = {}
    for group, qid, value, line in _unique_items(path, EVERY_FIELD, max_answers):
        if qid is None:
            members[str(group)] = value
        else:
            groups.setdefault(group, {})[qid] = (value, line)
    return PredictionDocument(path, groups, members)


def _unique_items(
    path: PathLike, field: Optional[str], max_answers: Optional[int]
) -> Iterator[tuple[Optional[str], Any, Any, Optional[int]]]:
    """:func:`prediction_items`, each id checked to be seen once in its field."""
    seen: dict[tuple[Optional[str], str], Optional[int]] = {}
    for group, qid, value, line in prediction_items(path, field, max_answers):
        if qid is not None:
            if (group, qid) in seen:
                raise duplicate_id_error(path, line, qid, seen[group, qid])
            seen[group, qid] = line
        yield group, qid, value, line
