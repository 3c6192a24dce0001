"""The resume journal and the run lock of an answers file, and its error.

Each sampled question is appended to the journal (:func:`journal_path`) under a header of the
run's settings, each record sealed with the sha256 of its content (:func:`seal_record`), so a
resumed run refuses an edited record (:func:`check_journal`). One run at a time writes an answers
file, holding :func:`output_lock`.

>>> journal_path(Path("runs/a.json")).name, lock_path(Path("runs/a.json")).name
('a.json.partial.jsonl', 'a.json.partial.lock')
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

from protoqa_core.cli import reason_of, write_output_file
from protoqa_core.io.files import DataFormatError
from protoqa_integrations.generation.settings import GenerationError

__all__ = [
    "AnswersFileError",
    "journal_path",
    "lock_path",
    "SEAL",
    "seal_record",
    "output_lock",
    "check_journal",
    "journal_hint",
    "read_journal",
    "write_json_atomically",
]


class AnswersFileError(GenerationError):
    """An answers file, its journal or its questions cannot be read or written; one line saying what to change."""


SEAL = "sha256"
"""The member of a journal record holding the checksum of the rest of it (:func:`seal_record`)."""


def _content_digest(record: dict[str, Any]) -> str:
    content = {key: value for key, value in record.items() if key != SEAL}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def seal_record(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its seal: the sha256 of its content (keys sorted, compact JSON) under :data:`SEAL`, so that
    a record changed after it was written (an answer edited, a question added) is refused on resume.

    >>> seal_record({"id": "q1", "samples": ["dog"]})["sha256"][:12]
    'be8bfc9ae6d7'
    """
    return {**record, SEAL: _content_digest(record)}


def journal_path(output: Path) -> Path:
    """The resume journal of an answers file: ``<output>.partial.jsonl``.

    >>> journal_path(Path("runs/a.json")).name
    'a.json.partial.jsonl'
    """
    return output.with_name(output.name + ".partial.jsonl")


def lock_path(output: Path) -> Path:
    """The lock file of an answers file's run: ``<output>.partial.lock``.

    >>> lock_path(Path("runs/a.json")).name
    'a.json.partial.lock'
    """
    return output.with_name(output.name + ".partial.lock")


_held: dict[str, int] = {}  # lock files this process holds -> how many nested holders


_held_guard = threading.Lock()


def _open_lock(path: Path) -> int:
    """The lock file ``path``, opened (created if absent) and locked exclusively; refused while another holds it."""
    for _ in range(10):  # the file may be removed by the run ending just as it is opened: open it again
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise AnswersFileError(f"{path}: the lock file is a symbolic link; move it away") from None
            raise AnswersFileError(f"{path}: cannot create the lock file: {reason_of(exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            owner = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                by = f"process {owner}" if owner.isdigit() else "another process"
                raise AnswersFileError(
                    f"{path}: another run ({by}) is writing these answers; wait for it to end or choose another -o"
                ) from None
            raise AnswersFileError(f"{path}: cannot lock: {reason_of(exc)}") from None
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            continue
        if not os.path.isfile(path) or os.fstat(fd).st_size > 32:
            os.close(fd)
            raise AnswersFileError(f"{path}: not a lock file of protoqa-eval; move it away")
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as exc:  # a full disk, say: no lock file is left behind, empty or not
            _remove_lock(path, fd)
            raise AnswersFileError(
                f"{path}: cannot write the lock file: {reason_of(exc)}; make room (or choose another -o) and run "
                "the same command again"
            ) from None
        return fd
    raise AnswersFileError(f"{path}: the lock file keeps being replaced; is another run starting and stopping?")


def _remove_lock(path: Path, fd: int) -> None:
    """Remove the lock file ``path`` while still holding it (``fd``), then let go of it."""
    try:
        path.unlink()  # while still locked: a run opening it now locks a file no longer there, and retries
    except OSError:
        pass
    os.close(fd)


@contextmanager
def output_lock(output: Path) -> Iterator[Path]:
    """Hold the exclusive lock of the run writing ``output`` (:func:`lock_path`); yields the lock file.

    A second holder elsewhere is refused, naming the holder's process id; nested holds in this
    process share the lock, and the kernel frees the lock of a process that dies.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "a.json"
    >>> with output_lock(out) as held, output_lock(out):
    ...     held.read_text().strip() == str(os.getpid())
    True
    >>> lock_path(out).exists()
    False
    """
    path = lock_path(output)
    key = os.path.abspath(path)
    with _held_guard:
        nested = key in _held
        if nested:
            _held[key] += 1
        else:
            fd = _open_lock(path)
            _held[key] = 1
    try:
        yield path
    finally:
        with _held_guard:
            _held[key] -= 1
            if not _held[key]:
                del _held[key]
                _remove_lock(path, fd)


def _journal_error(path: Path, number: int, what: str) -> AnswersFileError:
    return AnswersFileError(f"{path}, line {number}: {what}; delete the file to start over")


def _check_seal(record: dict[str, Any], path: Path, number: int) -> None:
    """Refuse a record whose seal is missing or does not match its content (:func:`seal_record`)."""
    if not isinstance(record.get(SEAL), str):
        raise _journal_error(path, number, f"the record has no checksum ('{SEAL}'): it was not written by this run")
    if record[SEAL] != _content_digest(record):
        raise _journal_error(path, number, "the record was changed after it was written (its checksum does not match)")


def read_journal(
    path: Path, header: dict[str, Any], num_samples: Optional[int] = None, question_ids: Optional[Sequence[str]] = None
) -> tuple[dict[str, list[str]], dict[str, str], dict[str, int]]:
    """Samples already drawn by an interrupted run with the same settings, every line checked, and the
    token usage its last complete question recorded."""
    from protoqa_core.io.json_values import MalformedJSONError, parse_json, read_text

    if os.path.islink(path) or not path.is_file():
        raise AnswersFileError(f"{path}: the resume journal is not a regular file; move it away")
    try:
        text = read_text(path)
    except (OSError, DataFormatError) as exc:
        raise AnswersFileError(f"{exc}; delete the journal {path} to start over") from None
    lines = text.split("\n")
    known = None if question_ids is None else set(question_ids)
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    usage: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, path, number)
        except MalformedJSONError:
            if number >= len(lines) - 1 and number > 1:
                break  # the last line was cut short by the interruption; it is sampled again
            raise _journal_error(path, number, "not JSON") from None
        except DataFormatError as exc:  # JSON, but nested too deeply or with a value JSON does not allow
            raise AnswersFileError(f"{exc}; delete the file to start over") from None
        if number == 1:
            stored = record.get("header") if isinstance(record, dict) else None
            found = stored if isinstance(stored, dict) else {}
            if found != header:
                differ = sorted(k for k in set(found) | set(header) if found.get(k) != header.get(k))
                raise AnswersFileError(
                    f"{path} was written by a run with other settings (differing: "
                    f"{', '.join(differ)}); use the same settings to resume it, or delete it to "
                    "start over"
                )
            _check_seal(record, path, number)
            continue
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise _journal_error(path, number, "not a question record")
        qid = record["id"]
        if known is not None and qid not in known:
            raise _journal_error(path, number, f"question {qid!r} is not one of the questions of this run")
        if qid in first_line:
            raise _journal_error(path, number, f"question {qid!r} again (first on line {first_line[qid]})")
        drawn, reason = record.get("samples"), record.get("skipped")
        if reason is not None and not isinstance(reason, str):
            raise _journal_error(path, number, f"question {qid!r}: 'skipped' must be a string or null")
        if not isinstance(drawn, list) or not all(isinstance(a, str) for a in drawn):
            raise _journal_error(path, number, f"question {qid!r}: 'samples' must be a list of strings")
        expected = 0 if reason else num_samples
        if expected is not None and len(drawn) != expected:
            raise _journal_error(path, number, f"question {qid!r}: {len(drawn)} samples, expected {expected}")
        _check_seal(record, path, number)
        first_line[qid] = number
        samples[qid] = list(drawn)
        if reason:
            skipped[qid] = reason
        recorded = record.get("usage")
        if isinstance(recorded, dict):
            usage = {k: v for k, v in recorded.items() if isinstance(k, str) and type(v) is int}
    return samples, skipped, usage


def check_journal(
    output: Path, header: dict[str, Any], num_samples: Optional[int], question_ids: Sequence[str]
) -> None:
    """Refuse, before any sampling, a resume journal beside ``output`` that this run cannot resume.

    >>> check_journal(Path("/no/such/answers.json"), {}, 3, ["q1"])
    """
    journal = journal_path(output)
    if os.path.lexists(journal):
        read_journal(journal, header, num_samples, question_ids)


def journal_hint(journal: Path, count: int) -> str:
    """What an error says about the questions sampled so far and how to resume.

    >>> journal_hint(Path("a.json.journal"), 3).startswith("the 3 question(s)")
    True
    """
    return (
        f"the {count} question(s) sampled so far are kept in {journal}; make room and run the same command "
        "again to resume"
    )


def write_json_atomically(path: Path, document: Any, jsonl: bool = False) -> None:
    """Write ``document`` to ``path`` as JSON (or, with ``jsonl``, one record a line), replacing it atomically."""

    def write(fh: Any) -> None:
        if jsonl:
            for record in document:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            json.dump(document, fh, ensure_ascii=False, indent=1)
            fh.write("\n")

    write_output_file(path, write)
