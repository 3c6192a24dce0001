"""System files read one at a time into a temporary on-disk index, for a leaderboard whose memory
the input size cap bounds.

A leaderboard of several large files must not hold them all at once: :class:`SystemIndex` keeps each file's
question ids (a repeated id is refused, those outside the targets named without being held) and its answers
to the target questions in a private SQLite database, and :func:`~protoqa_integrations.leaderboard.board.build_leaderboard`
reads back one system at a time. Disk use is about the size of the inputs.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Collection, Container, Iterator, Sequence
from pathlib import Path
from typing import Optional, TypeGuard

from protoqa_core.io.files import PathLike
from protoqa_core.io.predictions import duplicate_id_error
from protoqa_core.io.question_index import IndexedIds, private_database
from protoqa_integrations.harnesses.harness_logs import Keep
from protoqa_integrations.leaderboard.board import read_system
from protoqa_integrations.leaderboard.report import SystemAnswers

__all__ = ["SystemIndex", "IndexSpaceError", "index_folder"]


class IndexSpaceError(OSError):
    """The temporary index could not be written: its folder is full, or a file-size limit stopped it."""


def index_folder() -> str:
    """The folder SQLite puts a private temporary database in, as SQLite looks for it on Unix:
    ``$SQLITE_TMPDIR``, ``$TMPDIR``, ``/var/tmp``, ``/usr/tmp``, ``/tmp``, the current folder.

    >>> os.path.isdir(index_folder())
    True
    """
    for folder in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp"):
        if folder and os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return "."


def _space_error(exc: sqlite3.Error) -> IndexSpaceError:
    """A write of the index that failed for want of room, naming the folder, its free space and the remedy."""
    folder = index_folder()
    try:
        free = f"{shutil.disk_usage(folder).free / 2**20:,.0f} MB free"
    except OSError:
        free = "free space unknown"
    return IndexSpaceError(
        f"the leaderboard's temporary index could not be written in {folder} (TMPDIR; {free}): {exc}; it needs "
        "about the size of the inputs: set TMPDIR to a folder with more room, or raise the file-size limit "
        "(ulimit -f)"
    )


_SPACE_FAULTS = ("disk is full", "disk i/o error", "database or disk is full", "unable to open database file")


def _is_space_fault(exc: object) -> TypeGuard[sqlite3.OperationalError]:
    return isinstance(exc, sqlite3.OperationalError) and any(f in str(exc).lower() for f in _SPACE_FAULTS)


class SystemIndex:
    """System files read once each, their answers to ``targets`` (question ids) kept on disk.

    The :class:`~protoqa_integrations.leaderboard.board.AnswerIndex` of a large leaderboard; memory holds one
    system's answers to the target questions at a time.

    >>> import json, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "a.json"), "w") as fh: _ = fh.write('{"q1": ["dog", "cat"], "x9": ["cow"]}')
    >>> with SystemIndex(["q1", "q2"]) as index:
    ...     a = index.add("a", os.path.join(folder, "a.json"))
    ...     a.samples, list(index.answered("a")), list(index.unknown("a")), index.load(a).ranked
    ({}, ['q1'], ['x9'], {'q1': ['dog', 'cat']})
    """

    def __init__(self, targets: Container[str]):
        self._targets = targets
        self._names: dict[str, int] = {}
        try:
            self._db = private_database(
                "CREATE TABLE ids(system INTEGER, grp TEXT, qid TEXT, line INTEGER, known INTEGER, "
                "UNIQUE(system, grp, qid))",
                "CREATE TABLE answers(system INTEGER, qid TEXT, samples TEXT, ranked TEXT)",
            )
        except sqlite3.OperationalError as exc:
            if _is_space_fault(exc):
                raise _space_error(exc) from None
            raise

    def _keeper(self, system: int, path: Path) -> Keep:
        insert = "INSERT INTO ids(system, grp, qid, line, known) VALUES (?, ?, ?, ?, ?)"

        def keep(group: Optional[str], qid: str, line: Optional[int]) -> bool:
            known = qid in self._targets
            try:
                self._db.execute(insert, (system, group or "", qid, line, known))
            except sqlite3.IntegrityError:
                (first,) = self._db.execute(
                    "SELECT line FROM ids WHERE system = ? AND grp = ? AND qid = ?", (system, group or "", qid)
                ).fetchone()
                raise duplicate_id_error(path, line, qid, first) from None
            return known

        return keep

    def add(self, name: str, path: PathLike, *, max_answers: Optional[int] = None) -> SystemAnswers:
        """Read system ``name`` from ``path`` (opened once) into the index; returns it without its answers,
        for :meth:`load` to fill in."""
        system = len(self._names)
        read = read_system(name, path, keep=self._keeper(system, Path(path)), max_answers=max_answers)
        ranked = read.ranked
        rows = (
            (
                system,
                qid,
                json.dumps(counts, ensure_ascii=False),
                None if ranked is None or qid not in ranked else json.dumps(ranked[qid], ensure_ascii=False),
            )
            for qid, counts in read.samples.items()
        )
        self._db.executemany("INSERT INTO answers(system, qid, samples, ranked) VALUES (?, ?, ?, ?)", rows)
        self._names[name] = system
        # ``ranked`` empty, not None, says that :meth:`load` finds ranked lists.
        return SystemAnswers(
            read.name, read.source, read.format, {}, None if ranked is None else {}, read.ranking, read.settings
        )

    def answered(self, name: str) -> Collection[str]:
        """The target question ids system ``name`` answers."""
        rows = self._db.execute("SELECT qid FROM answers WHERE system = ?", (self._names[name],))
        return {qid for (qid,) in rows}

    def unknown(self, name: str) -> Sequence[str]:
        """The question ids system ``name`` answers outside the targets, in file order, read when asked for."""
        return IndexedIds(
            self._db,
            "SELECT qid FROM ids WHERE system = ? AND NOT known GROUP BY qid ORDER BY min(rowid)",
            (self._names[name],),
        )

    def unknown_ids(self) -> Iterator[str]:
        """Every question id outside the targets that some system answers, once, sorted (as Python sorts)."""
        # SQLite compares text as UTF-8 bytes, whose order is that of the code points.
        return (qid for (qid,) in self._db.execute("SELECT DISTINCT qid FROM ids WHERE NOT known ORDER BY qid"))

    def load(self, system: SystemAnswers) -> SystemAnswers:
        """``system`` (as :meth:`add` returned it) with its samples and ranked lists of the target questions."""
        rows = self._db.execute(
            "SELECT qid, samples, ranked FROM answers WHERE system = ? ORDER BY rowid", (self._names[system.name],)
        )
        samples, ranked = {}, {}
        for qid, counts, answers in rows:
            samples[qid] = json.loads(counts)
            if answers is not None:
                ranked[qid] = json.loads(answers)
        listed = None if system.ranked is None else ranked
        return SystemAnswers(
            system.name, system.source, system.format, samples, listed, system.ranking, system.settings
        )

    def close(self) -> None:
        """Remove the index (also done when its ``with`` block ends)."""
        self._db.close()

    def __enter__(self) -> SystemIndex:
        return self

    def __exit__(self, kind: object, exc: object, trace: object) -> None:
        self.close()
        if _is_space_fault(exc):
            raise _space_error(exc) from None
