"""A targets file and prediction files read once each into a temporary on-disk index, joined by id.

Scoring a million questions must not hold a million questions: the files are checked whole as the readers
check them, kept in a private SQLite database, and handed out one question at a time in target order
(docs/protoqa-metric.md, "Memory"). Memory does not grow with the number of questions.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Optional, Union, overload

from .files import DataFormatError, PathLike
from .ids import IdReconciliation, unknown_ids_error, unknown_ids_message
from .json_values import iter_text_lines, parse_json
from .predictions import duplicate_id_error, prediction_items, prediction_line, ranked_answers
from .records import Question, question_from_json

__all__ = ["QuestionIndex", "IndexedIds", "CACHE_KIB", "MAX_TARGET_LINE_MB", "private_database"]

CACHE_KIB = 4096
"""SQLite's page cache for one index, in KiB: the memory the index itself takes."""

MAX_TARGET_LINE_MB = 16
"""The longest line (one question) of a targets file, in MB. Parsed, a line takes several times
its size in Python objects; the largest real question is a few KB."""


def private_database(*tables: str) -> sqlite3.Connection:
    """A private temporary SQLite database (removed when closed), without a journal and with a page cache of
    :data:`CACHE_KIB` KiB, holding ``tables`` (their ``CREATE TABLE`` statements).

    >>> private_database("CREATE TABLE t(x)").execute("SELECT count(*) FROM t").fetchone()
    (0,)
    """
    db = sqlite3.connect("")  # an empty name: a private temporary database, its pages in a temporary file
    try:
        for statement in (f"PRAGMA cache_size = -{CACHE_KIB}", "PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF"):
            db.execute(statement)
        for statement in tables:
            db.execute(statement)
    except BaseException:
        db.close()
        raise
    return db


class QuestionIndex:
    """Targets and the ranked answers of one or more prediction files (``run`` numbers them from 0 below),
    each file read once; ``field`` and ``max_answers`` as :func:`~protoqa_core.io.predictions.read_predictions`.

    >>> import json, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> row = {"metadata": {"id": "q1"}, "question": {"normalized": "name a pet"},
    ...        "answers": {"clusters": {"q1.0": {"count": 3, "answers": ["dog"]}}}}
    >>> with open(os.path.join(folder, "t.jsonl"), "w") as fh: _ = fh.write(json.dumps(row) + "\\n")
    >>> with open(os.path.join(folder, "p.json"), "w") as fh: _ = fh.write('{"q1": ["Dog", "cat"]}')
    >>> with QuestionIndex(os.path.join(folder, "t.jsonl"), [os.path.join(folder, "p.json")]) as index:
    ...     [(q.id, answers) for q, answers in index.questions(0)]
    [('q1', ['Dog', 'cat'])]
    """

    def __init__(
        self,
        targets: PathLike,
        predictions: Sequence[PathLike] = (),
        field: Optional[str] = None,
        *,
        max_answers: Optional[int] = None,
    ):
        self.targets = Path(targets)
        self.predictions = [Path(p) for p in predictions]
        self._fields: dict[int, Optional[str]] = {}  # the field each predictions file was read from
        self._db = private_database(
            "CREATE TABLE targets(qid TEXT UNIQUE NOT NULL, line INTEGER, zero INTEGER, body TEXT)",
            "CREATE TABLE predictions(run INTEGER, qid TEXT, line INTEGER, answers TEXT, UNIQUE(run, qid))",
        )
        try:
            self._read_targets()
            for run, path in enumerate(self.predictions):
                self._read_predictions(run, path, field, max_answers)
        except BaseException:
            self.close()
            raise

    def _read_targets(self) -> None:
        path = self.targets
        insert = "INSERT INTO targets(qid, line, zero, body) VALUES (?, ?, ?, ?)"
        for number, text in iter_text_lines(path, what="targets"):
            if not text.strip():
                continue
            if len(text) > MAX_TARGET_LINE_MB * 2**20:
                raise DataFormatError(
                    f"the line is longer than {MAX_TARGET_LINE_MB} MB; one question's line is refused past "
                    "that, to keep memory bounded",
                    path,
                    number,
                )
            obj = parse_json(text, path, number)
            q = question_from_json(obj, path, number)
            try:
                self._db.execute(insert, (q.id, number, q.total_count <= 0, text))
            except sqlite3.IntegrityError:
                (first,) = self._db.execute("SELECT line FROM targets WHERE qid = ?", (q.id,)).fetchone()
                raise DataFormatError(f"duplicate question id (first on line {first})", path, number, q.id) from None

    def _read_predictions(self, run: int, path: Path, field: Optional[str], max_answers: Optional[int]) -> None:
        insert = "INSERT INTO predictions(run, qid, line, answers) VALUES (?, ?, ?, ?)"
        for group, qid, value, line in prediction_items(path, field, max_answers):
            self._fields[run] = group
            packed = json.dumps(ranked_answers(value, path, line, qid), ensure_ascii=False, separators=(",", ":"))
            try:
                self._db.execute(insert, (run, qid, line, packed))
            except sqlite3.IntegrityError:
                (first,) = self._db.execute(
                    "SELECT line FROM predictions WHERE run = ? AND qid = ?", (run, qid)
                ).fetchone()
                raise duplicate_id_error(path, line, qid, first) from None

    def __len__(self) -> int:
        """The number of target questions."""
        return int(self._db.execute("SELECT count(*) FROM targets").fetchone()[0])

    def zero_total(self) -> IndexedIds:
        """The ids of the questions whose clusters total 0 (or that have none), in file order."""
        return IndexedIds(self._db, "SELECT qid FROM targets WHERE zero ORDER BY rowid", ())

    def reconcile(self, run: int, *, ignore_unknown: bool = False) -> IdReconciliation:
        """:func:`~protoqa_core.io.ids.reconcile_ids` of predictions file ``run`` against the targets.

        ``kept`` is left empty (the index holds those ids); ``missing`` (without :meth:`zero_total`) and
        ``ignored`` are :class:`IndexedIds`.
        """
        unknown = IndexedIds(
            self._db,
            "SELECT p.qid FROM predictions p WHERE p.run = ? AND NOT EXISTS "
            "(SELECT 1 FROM targets t WHERE t.qid = p.qid) ORDER BY p.rowid",
            (run,),
        )
        if unknown and not ignore_unknown:
            first = unknown[0]
            (line,) = self._db.execute(
                "SELECT line FROM predictions WHERE run = ? AND qid = ?", (run, first)
            ).fetchone()
            if line is None:  # an object over several lines: found in the text, as probeval finds it
                line = prediction_line(self.predictions[run], first, self._fields.get(run))
            known = self._db.execute(
                "SELECT 1 FROM predictions p WHERE p.run = ? AND EXISTS "
                "(SELECT 1 FROM targets t WHERE t.qid = p.qid) LIMIT 1",
                (run,),
            ).fetchone()
            raise unknown_ids_error(unknown, none_known=known is None, path=self.predictions[run], line=line)
        missing = IndexedIds(
            self._db,
            "SELECT t.qid FROM targets t WHERE NOT t.zero AND NOT EXISTS "
            "(SELECT 1 FROM predictions p WHERE p.run = ? AND p.qid = t.qid) ORDER BY t.rowid",
            (run,),
        )
        message = unknown_ids_message(unknown, ignored=True) if unknown else None
        return IdReconciliation((), missing, unknown, message)  # type: ignore[arg-type]

    def count(self, run: int, *, only_predicted: bool) -> int:
        """How many questions :meth:`questions` hands out with the same arguments."""
        query = "SELECT count(*) FROM targets t WHERE NOT t.zero"
        if only_predicted:
            query += " AND EXISTS (SELECT 1 FROM predictions p WHERE p.run = ? AND p.qid = t.qid)"
            return int(self._db.execute(query, (run,)).fetchone()[0])
        return int(self._db.execute(query).fetchone()[0])

    def questions(self, run: int, *, only_predicted: bool = False) -> Iterator[tuple[Question, list[str]]]:
        """Each question whose clusters total more than 0, in target order, with its ranked answers
        from predictions file ``run`` (an empty list where it has none; left out with ``only_predicted``)."""
        join = "JOIN" if only_predicted else "LEFT JOIN"
        rows = self._db.execute(
            f"SELECT t.line, t.body, p.answers FROM targets t {join} predictions p ON p.run = ? AND p.qid = t.qid "
            "WHERE NOT t.zero ORDER BY t.rowid",
            (run,),
        )
        for line, body, answers in rows:
            question = question_from_json(parse_json(body, self.targets, line), self.targets, line)
            yield question, ([] if answers is None else json.loads(answers))

    def close(self) -> None:
        """Remove the index (also done when the object is collected or its ``with`` block ends)."""
        self._db.close()

    def __enter__(self) -> QuestionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class IndexedIds(Sequence[str]):
    """Question ids read from an open :class:`QuestionIndex` when asked for, never all held (a million ids
    would take some 100 MB)."""

    def __init__(self, db: sqlite3.Connection, query: str, params: tuple):
        self._db, self._query, self._params = db, query, params
        self._length: Optional[int] = None

    def __len__(self) -> int:
        if self._length is None:
            self._length = int(self._db.execute(f"SELECT count(*) FROM ({self._query})", self._params).fetchone()[0])
        return self._length

    def __bool__(self) -> bool:
        return self._db.execute(f"SELECT 1 FROM ({self._query}) LIMIT 1", self._params).fetchone() is not None

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[str, list[str]]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step < 0:  # the same rows read forwards, then handed out backwards
                start, stop = stop + 1, start + 1
            rows = self._db.execute(
                f"SELECT * FROM ({self._query}) LIMIT ? OFFSET ?", (*self._params, max(0, stop - start), start)
            )
            ids = [qid for (qid,) in rows]
            return ids[::step] if step > 0 else ids[::-1][::-step]
        if index < 0:
            index += len(self)
        row = self._db.execute(f"SELECT * FROM ({self._query}) LIMIT 1 OFFSET ?", (*self._params, index)).fetchone()
        if index < 0 or row is None:
            raise IndexError(index)
        return row[0]

    def __iter__(self) -> Iterator[str]:
        return (qid for (qid,) in self._db.execute(self._query, self._params))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"IndexedIds({len(self)} ids)"
