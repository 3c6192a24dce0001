"""Readers for ProtoQA/CFC question files and prediction files.

Targets are the JSONL format of ProtoQA (``data/protoqa/DATAFORMAT.md``): one
question per line with ``metadata.id``, ``question.normalized`` and
``answers.clusters``. CFC uses the same format; the older evaluator format with
``answers-cleaned`` is read too.

Predictions are ranked answer lists keyed by question id, in any of:

* JSONL, one object per line: ``{"r1q1": ["age", "name"]}`` (one or more ids per
  line) or ``{"question_id": "r1q1", "ranked_answers": [...]}``;
* one JSON object ``{"r1q1": [...], ...}``;
* ``{"model_answers": {...}}`` as written by the CFC/ProbEval tools, optionally with
  ``model_ranked_answers`` and ``model_answers_with_count`` (``[[answer, count]]``).

Every error names the file, the line where there is one, and the question id.
Files are UTF-8 (a byte order mark is allowed) and may be gzip-compressed; a JSON
object with the same key twice, nesting deeper than Python can parse, a lone
surrogate escape (``"\\ud800"``, which no UTF-8 file can hold) and counts above
:data:`MAX_COUNT` are errors. At most :data:`DEFAULT_MAX_INPUT_MB` megabytes are read
from one file, after decompression (``$PROTOQA_MAX_INPUT_MB`` raises the cap). Pipes,
``/dev/stdin`` and process substitution are read like files.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import reprlib
import stat
import tempfile
import warnings
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

__all__ = [
    "DataFormatError",
    "MalformedJSONError",
    "ProtoQAWarning",
    "MAX_COUNT",
    "MAX_INPUT_ENV",
    "DEFAULT_MAX_INPUT_MB",
    "max_input_bytes",
    "read_text",
    "parse_json",
    "Cluster",
    "Question",
    "read_targets",
    "read_predictions",
    "read_prediction_lists",
    "read_packed_predictions",
    "PackedPredictions",
    "TargetStream",
    "clusters_from_records",
    "question_ids_for",
    "check_answer_list",
    "REFERENCE_FORMS",
    "check_count",
    "preview_ids",
]

PathLike = Union[str, os.PathLike]
PREDICTION_FIELDS = ("model_ranked_answers", "model_answers", "model_answers_with_count")

MAX_COUNT = 2**53
"""Largest count accepted: every count and every sum of a few of them stays exact as a float."""


class DataFormatError(ValueError):
    """A targets or predictions file (or in-memory record) is not in the expected format."""

    def __init__(
        self,
        message: str,
        path: Optional[PathLike] = None,
        line: Optional[int] = None,
        question_id: Optional[str] = None,
    ):
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if question_id is not None:
            where.append(f"question {question_id!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.path, self.line, self.question_id = path, line, question_id


class ProtoQAWarning(UserWarning):
    """Something in the input was handled in a way the user should know about."""


_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxlevel = 60, 60, 4, 4, 3


def _short(value: Any) -> str:
    """A bounded repr for messages: a hostile value must not make a megabyte-long error line."""
    return _SHORT.repr(value)


_COMPRESSED = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip", b"\x28\xb5\x2f\xfd": "zstd"}
_WIDE_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


def _os_error(exc: OSError, path: PathLike) -> Exception:
    """An input/output error as one message naming the file."""
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(f"file not found: {path}")
    reasons: dict[Optional[int], str] = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "is a directory, not a file",
        errno.ENAMETOOLONG: "file name too long",
        errno.ENOTDIR: "a part of the path is not a directory",
        errno.ELOOP: "too many symbolic links",
    }
    reason = reasons.get(exc.errno) or exc.strerror or type(exc).__name__
    return DataFormatError(f"cannot read the file: {reason}", path)


def _check_file(path: Path, what: str) -> None:
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as exc:  # e.g. a name too long to look up
        raise _os_error(exc, path) from None
    if is_dir:
        raise DataFormatError("cannot read the file: is a directory, not a file", path)
    if not exists:
        raise FileNotFoundError(f"{what} file not found: {path}")


MAX_INPUT_ENV = "PROTOQA_MAX_INPUT_MB"
"""Environment variable that raises (or lowers) :data:`DEFAULT_MAX_INPUT_MB`."""
DEFAULT_MAX_INPUT_MB = 512
"""The most megabytes (after gzip decompression) read from one input file.

The largest ProtoQA file is a few tens of MB; the cap keeps ``/dev/zero`` or a
gzip bomb from taking every byte of memory."""


def max_input_bytes() -> int:
    """The input size cap in bytes: ``$PROTOQA_MAX_INPUT_MB`` megabytes, else :data:`DEFAULT_MAX_INPUT_MB`.

    >>> max_input_bytes() == DEFAULT_MAX_INPUT_MB * 2**20 or MAX_INPUT_ENV in os.environ
    True
    """
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT_MB * 2**20
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise DataFormatError(f"{MAX_INPUT_ENV} must be a positive number of megabytes, got {text!r}")
    return int(value * 2**20)


class _Prefixed(io.RawIOBase):
    """The bytes already taken from a stream by the format probe, then the rest of the stream.

    A pipe cannot seek back, so what the probe read is handed out again from here.
    """

    def __init__(self, head: bytes, rest: Any):
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._rest.readinto(buffer)

    def close(self) -> None:
        self._rest.close()
        super().close()


def _too_large(limit: int, path: PathLike) -> DataFormatError:
    return DataFormatError(
        f"the input is larger than {limit / 2**20:.4g} MB (after decompression); this is refused "
        f"to keep memory bounded: set {MAX_INPUT_ENV} to a larger number of megabytes to read it",
        path,
    )


class _Bounded(io.RawIOBase):
    """A stream that fails, naming the file and the cap, once more than ``limit`` bytes come out of it."""

    def __init__(self, inner: Any, limit: int, path: PathLike):
        self._inner, self._left, self._limit, self._path = inner, limit, limit, path

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        # One byte more than allowed is asked for, so that a file of exactly the cap passes.
        want = min(len(view), self._left + 1)
        data = self._inner.read(want)
        if len(data) > self._left:
            raise _too_large(self._limit, self._path)
        self._left -= len(data)
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


def _read_head(fh: Any, size: int) -> bytes:
    # A pipe may hand out fewer bytes per read than were asked for.
    head = b""
    while len(head) < size:
        chunk = fh.read(size - len(head))
        if not chunk:
            break
        head += chunk
    return head


def _open_binary(path: Path):
    """``path`` opened once for binary reading, decompressed when it is gzip, capped in size.

    Pipes, ``/dev/stdin`` and process substitution work: the bytes of the format probe
    are kept and read again.
    """
    limit = max_input_bytes()
    raw = open(path, "rb", buffering=0)
    try:
        head = _read_head(raw, 6)
        # A plain regular file is refused from its size, before its content is read; gzip and
        # pipes are counted while they are read (_Bounded).
        if head[:2] != b"\x1f\x8b" and stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
            if os.fstat(raw.fileno()).st_size > limit:
                raise _too_large(limit, path)
        if raw.seekable():
            raw.seek(0)
            stream: Any = raw
        else:
            stream = _Prefixed(head, raw)
        for magic, name in _COMPRESSED.items():
            if head.startswith(magic):
                raise DataFormatError(f"the file is {name}-compressed; decompress it first (gzip is read as is)", path)
        if head[:2] == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=io.BufferedReader(stream), mode="rb")
        return io.BufferedReader(_Bounded(stream, limit, path))
    except BaseException:
        raw.close()
        raise


def _decode(data: bytes, path: PathLike, line: Optional[int], first: bool) -> str:
    if first:
        for bom, name in _WIDE_BOMS.items():
            if data.startswith(bom):
                raise DataFormatError(f"the file is {name}-encoded; save it as UTF-8", path)
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        if b"\x00" in data[:4]:
            raise DataFormatError(
                "the file holds NUL bytes (UTF-16 or UTF-32 without a byte order mark?); save it as UTF-8", path
            )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(f"not valid UTF-8 (byte {data[exc.start]:#04x})", path, at) from None


def read_text(path: PathLike) -> str:
    """The whole text of a UTF-8 file (gzip read transparently); errors name the file and line.

    >>> import gzip, tempfile, os
    >>> name = os.path.join(tempfile.mkdtemp(), "p.json.gz")
    >>> with gzip.open(name, "wt", encoding="utf-8") as fh: _ = fh.write('{"q1": ["dog"]}')
    >>> read_text(name)
    '{"q1": ["dog"]}'
    """
    path = Path(path)
    _check_file(path, "input")
    try:
        with _open_binary(path) as fh:
            data = fh.read()
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)):
            raise DataFormatError(f"damaged gzip data ({exc})", path) from None
        raise _os_error(exc, path) from None
    return _decode(data, path, None, first=True)


def _iter_text_lines(path: Path, spool: Optional[Any] = None) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of a UTF-8 (or gzip) file, read as a stream.

    With ``spool`` (a binary file), every line's bytes, decompressed, are copied there too.
    """
    try:
        with _open_binary(path) as fh:
            for number, raw in enumerate(fh, start=1):
                if spool is not None:
                    spool.write(raw)
                yield number, _decode(raw, path, number, first=number == 1)
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)):
            raise DataFormatError(f"damaged gzip data ({exc})", path) from None
        raise _os_error(exc, path) from None


class _DuplicateKey(Exception):
    pass


class MalformedJSONError(DataFormatError):
    """Text that is not JSON at all (as opposed to JSON with a value we refuse)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _first_bad_string(value: Any) -> Optional[str]:
    """The first string in ``value`` that is not valid Unicode (holds a lone surrogate)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _line_of(text: str, key: str, occurrence: int = 2) -> Optional[int]:
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    found = None
    for found_count, match in enumerate(pattern.finditer(text), start=1):
        found = match
        if found_count == occurrence:
            break
    return text.count("\n", 0, found.start()) + 1 if found else None


def parse_json(text: str, path: Optional[PathLike] = None, line: Optional[int] = None) -> Any:
    """Parse one JSON document strictly; every problem is a :class:`DataFormatError` naming file and line.

    Duplicate keys, nesting deeper than Python's recursion limit, ``NaN``/``Infinity``,
    integers with more than 4,300 digits and lone surrogates are refused.

    >>> parse_json('{"q1": ["dog"]}')
    {'q1': ['dog']}
    >>> parse_json('{"q1": [], "q1": ["cat"]}', "p.json", 3)
    Traceback (most recent call last):
    ...
    protoqa_core.readers.DataFormatError: p.json, line 3: duplicate key 'q1' in a JSON object
    """

    def where(found: Optional[int] = None) -> Optional[int]:
        # ``line`` is given for one line of a JSONL file: the error is on that line.
        return found if line is None else line

    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise MalformedJSONError(f"malformed JSON ({exc.msg} at column {exc.colno})", path, where(exc.lineno)) from None
    except _DuplicateKey as exc:
        key = exc.args[0]
        raise DataFormatError(
            f"duplicate key {_short(key)} in a JSON object", path, where(_line_of(text, key))
        ) from None
    except (RecursionError, MemoryError):
        raise DataFormatError("JSON nested too deeply", path, line) from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        raise DataFormatError(f"unsupported JSON value ({exc})", path, line) from None
    if _SURROGATE_ESCAPE.search(text):
        bad = _first_bad_string(value)
        if bad is not None:
            raise DataFormatError(
                f"string {_short(bad)} holds a lone surrogate escape, which is not valid Unicode", path, line
            )
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


@dataclass(frozen=True)
class Cluster:
    """One answer cluster: its id, the answer strings in it and how many people gave them."""

    id: str
    answers: tuple[str, ...]
    count: int

    def __post_init__(self) -> None:
        # A bare string would be scored as a list of its characters.
        if isinstance(self.answers, (str, bytes)):
            raise DataFormatError(f"cluster {self.id!r}: answers must be a list of strings, got a string")
        # The same Unicode spelling as the predictions (protoqa_core.text.normalize_prediction).
        if not all(isinstance(a, str) and a.isascii() for a in self.answers):
            from .text import normalize_unicode  # here: the text module loads NLTK's tokenizer (over 1 s)

            object.__setattr__(
                self, "answers", tuple(normalize_unicode(a) if isinstance(a, str) else a for a in self.answers)
            )


@dataclass(frozen=True)
class Question:
    """A question with its answer clusters (empty for test questions without answers)."""

    id: str
    question: str
    clusters: tuple[Cluster, ...]
    question_original: str = ""
    source: str = ""
    # whole numbers from a targets file; the evaluate module also takes fractional counts
    raw_answers: Mapping[str, float] = field(default_factory=dict)

    @property
    def total_count(self) -> int:
        """Sum of the cluster counts."""
        return sum(c.count for c in self.clusters)


def check_count(value: Any, what: str, path=None, line=None, qid=None) -> int:
    """``value`` if it is a non-negative integer (numpy integers from ``datasets`` included), else an error.

    >>> check_count(3, "count")
    3
    >>> check_count(2.5, "cluster 'c' count", "t.jsonl", 4, "q1")
    Traceback (most recent call last):
    ...
    protoqa_core.readers.DataFormatError: t.jsonl, line 4, question 'q1': cluster 'c' count must be a non-negative integer, got 2.5
    """
    if hasattr(value, "item") and not isinstance(value, (bool, int)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DataFormatError(f"{what} must be a non-negative integer, got {_short(value)}", path, line, qid)
    if value > MAX_COUNT:
        raise DataFormatError(f"{what} is too large ({_short(value)}; at most {MAX_COUNT})", path, line, qid)
    return value


def preview_ids(ids: Sequence[str], limit: int = 10) -> str:
    """The first ``limit`` ids, comma-separated, with the total when there are more (for messages).

    >>> preview_ids([f"q{i}" for i in range(12)], limit=2)
    'q0, q1, ... (12 in all)'
    """
    shown = ", ".join(ids[:limit])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def _check_answers(value: Any, what: str, path, line, qid) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise DataFormatError(f"{what} must be a list of strings, got {type(value).__name__}", path, line, qid)
    for item in value:
        if not isinstance(item, str):
            raise DataFormatError(f"{what} must contain only strings, found {_short(item)}", path, line, qid)
    return tuple(value)


def _question_from_json(obj: Any, path=None, line=None) -> Question:
    if not isinstance(obj, dict):
        raise DataFormatError(f"expected a JSON object, got {type(obj).__name__}", path, line)
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "id" in meta:
        qid = meta["id"]
        source = meta.get("source", "")
    elif "questionid" in obj:
        qid, source = obj["questionid"], obj.get("source", "")
    else:
        raise DataFormatError("missing question id (metadata.id)", path, line)
    if not isinstance(qid, str) or not qid:
        raise DataFormatError(f"question id must be a non-empty string, got {qid!r}", path, line)
    q = obj.get("question")
    if isinstance(q, dict):
        normalized = q.get("normalized", q.get("normalized-question"))
        original = q.get("original", normalized)
    else:
        normalized = obj.get("normalized-question", q)
        original = q if isinstance(q, str) else normalized
    if not isinstance(normalized, str):
        raise DataFormatError("missing question text (question.normalized)", path, line, qid)

    clusters: list[Cluster] = []
    raw: dict[str, int] = {}
    answers = obj.get("answers")
    if isinstance(answers, dict):
        for answer, count in (answers.get("raw") or {}).items():
            raw[answer] = check_count(count, f"raw answer {answer!r} count", path, line, qid)
        cl = answers.get("clusters", {})
        if not isinstance(cl, dict):
            raise DataFormatError("answers.clusters must be an object {cluster id: {...}}", path, line, qid)
        for cid, c in cl.items():
            if not isinstance(c, dict) or "count" not in c or "answers" not in c:
                raise DataFormatError(f"cluster {cid!r} needs 'count' and 'answers'", path, line, qid)
            clusters.append(
                Cluster(
                    str(cid),
                    _check_answers(c["answers"], f"cluster {cid!r} answers", path, line, qid),
                    check_count(c["count"], f"cluster {cid!r} count", path, line, qid),
                )
            )
    elif "answers-cleaned" in obj and isinstance(obj["answers-cleaned"], dict):
        # The oldest format: {answer: count}, every answer a cluster of its own.
        for i, (answer, count) in enumerate(obj["answers-cleaned"].items()):
            clusters.append(
                Cluster(f"{qid}.{i}", (answer,), check_count(count, f"answer {_short(answer)} count", path, line, qid))
            )
    elif "answers-cleaned" in obj:
        cleaned = obj["answers-cleaned"]
        if not isinstance(cleaned, list):
            raise DataFormatError(
                "answers-cleaned must be a list of {count, answers} or an object {answer: count}", path, line, qid
            )
        for i, c in enumerate(cleaned):
            if not isinstance(c, dict) or "count" not in c or "answers" not in c:
                raise DataFormatError(f"answers-cleaned[{i}] needs 'count' and 'answers'", path, line, qid)
            clusters.append(
                Cluster(
                    f"{qid}.{i}",
                    _check_answers(c["answers"], f"cluster {i} answers", path, line, qid),
                    check_count(c["count"], f"cluster {i} count", path, line, qid),
                )
            )
    elif answers is not None:
        raise DataFormatError("answers must be an object with 'raw' and 'clusters'", path, line, qid)
    return Question(qid, normalized, tuple(clusters), original or normalized, source or "", raw)


def _json_lines(path: PathLike, spool: Optional[Any] = None) -> Iterator[tuple[int, Any]]:
    for number, text in _iter_text_lines(Path(path), spool):
        if text.strip():
            yield number, parse_json(text, path, number)


def read_targets(path: PathLike) -> dict[str, Question]:
    """Read a ProtoQA/CFC targets JSONL file into ``{question id: Question}`` (file order).

    >>> qs = read_targets("../shared/data/protoqa/dev.crowdsourced.jsonl")  # doctest: +SKIP
    >>> qs["r1q1"].clusters[0].count  # doctest: +SKIP
    35
    """
    path = Path(path)
    _check_file(path, "targets")
    questions: dict[str, Question] = {}
    first_line: dict[str, int] = {}
    for number, obj in _json_lines(path):
        q = _question_from_json(obj, path, number)
        if q.id in questions:
            raise DataFormatError(f"duplicate question id (first on line {first_line[q.id]})", path, number, q.id)
        questions[q.id] = q
        first_line[q.id] = number
    return questions


class TargetStream:
    """A targets file checked whole in a first pass, then read again one question at a time.

    The first pass raises every error :func:`read_targets` raises, with the same message,
    and keeps only each question's id, first line and whether its clusters total 0. Each
    iteration reads the file again (a pipe's bytes are copied to an unnamed temporary
    file in the first pass), so memory does not grow with the number of questions.
    Iterating after the file changed is an error naming it.

    >>> import tempfile, os
    >>> name = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> row = {"metadata": {"id": "q1"}, "question": {"normalized": "name a pet"},
    ...        "answers": {"clusters": {"q1.0": {"count": 3, "answers": ["dog"]}}}}
    >>> with open(name, "w") as fh: _ = fh.write(json.dumps(row) + "\\n")
    >>> targets = TargetStream(name)
    >>> targets.ids, [q.clusters[0].answers for q in targets]
    (('q1',), [('dog',)])
    """

    def __init__(self, path: PathLike):
        self._spool: Optional[Any] = None
        self.path = Path(path)
        _check_file(self.path, "targets")
        self._stat = self._file_stat()
        if self._stat is None:
            self._spool = tempfile.TemporaryFile(prefix="protoqa-targets-")
        first_line: dict[str, int] = {}
        zero_total: list[str] = []
        try:
            for number, obj in _json_lines(self.path, self._spool):
                q = _question_from_json(obj, self.path, number)
                if q.id in first_line:
                    raise DataFormatError(
                        f"duplicate question id (first on line {first_line[q.id]})", self.path, number, q.id
                    )
                first_line[q.id] = number
                if q.total_count <= 0:
                    zero_total.append(q.id)
        except BaseException:
            self.close()
            raise
        self.ids: tuple[str, ...] = tuple(first_line)
        """Every question id, in file order."""
        self.zero_total: tuple[str, ...] = tuple(zero_total)
        """The ids of the questions whose clusters total 0 (or that have none), in file order."""

    def _file_stat(self) -> Optional[tuple[int, int, int, int]]:
        """Identity and version of a regular file (which can be read again), None for anything else."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise _os_error(exc, self.path) from None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[Question]:
        if self._spool is not None:
            self._spool.seek(0)
            lines: Iterator[tuple[int, str]] = (
                (number, _decode(raw, self.path, number, first=number == 1))
                for number, raw in enumerate(self._spool, start=1)
            )
        else:
            if self._file_stat() != self._stat:
                raise self._changed()
            lines = _iter_text_lines(self.path)
        count = 0
        for number, text in lines:
            if not text.strip():
                continue
            q = _question_from_json(parse_json(text, self.path, number), self.path, number)
            if count >= len(self.ids) or q.id != self.ids[count]:
                raise self._changed()
            count += 1
            yield q
        if count != len(self.ids):
            raise self._changed()

    def _changed(self) -> DataFormatError:
        return DataFormatError("the file changed while it was read; score it again", self.path)

    def close(self) -> None:
        """Remove the copy of a piped file (also done when the object is collected)."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None

    def __del__(self) -> None:
        if hasattr(self, "_spool"):
            self.close()


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


def read_prediction_lists(path: PathLike, field: Optional[str] = None) -> dict[str, Any]:
    """Read a predictions file into ``{question id: value}`` without interpreting the values.

    For ``{"model_answers": ...}`` files, ``field`` picks which mapping to return
    (default: ``model_ranked_answers`` when present, else ``model_answers``, else
    ``model_answers_with_count``). Values are checked to be lists.

    >>> read_prediction_lists("../shared/data/cfc/dev.predictions.human.json")["r1q4"][:2]  # doctest: +SKIP
    ['dancing time.', 'it is very good']
    """
    return {qid: value for qid, value, _ in _prediction_items(path, field)}


def _prediction_objects(path: Path) -> Iterator[tuple[Optional[int], Any]]:
    """``(line, JSON value)`` of each record: each line of a JSONL file, or one JSON document.

    A file whose first non-blank line is a JSON value on its own is JSONL and is read
    one line at a time; otherwise it is one document over several lines, read whole.
    """
    lines = _iter_text_lines(path)
    head: list[str] = []
    number, text = 0, ""
    while not text.strip():
        number, text = next(lines, (0, ""))
        if not number:
            return
        head.append(text)
    try:
        yield number, parse_json(text, path, number)
    except MalformedJSONError:
        whole = "".join(head) + "".join(rest for _, rest in lines)
        # A one-line file is also a JSONL file: keep its line number for errors.
        one_line = 1 if "\n" not in whole.strip() else None
        try:
            value = parse_json(whole, path, one_line)
        except MalformedJSONError:
            # Not one document either: report the first line that is not JSON.
            for at, line_text in enumerate(whole.split("\n"), start=1):
                if line_text.strip():
                    parse_json(line_text, path, at)
            raise
        yield one_line, value
        return
    for number, text in lines:
        if text.strip():
            yield number, parse_json(text, path, number)


def _prediction_items(path: PathLike, field: Optional[str]) -> Iterator[tuple[str, Any, Optional[int]]]:
    """``(question id, value, line)`` of each prediction, in file order, read as a stream.

    Every id is checked to be a string seen once, every value to be a list; only the
    ids and their lines are kept.
    """
    path = Path(path)
    _check_file(path, "predictions")
    seen: dict[str, Optional[int]] = {}

    def checked(qid: Any, value: Any, line: Optional[int]) -> tuple[str, Any, Optional[int]]:
        if not isinstance(qid, str):
            raise DataFormatError(f"question id must be a string, got {qid!r}", path, line)
        if qid in seen:
            first = seen[qid]
            raise DataFormatError(
                "duplicate question id" + (f" (first on line {first})" if first else ""), path, line, qid
            )
        if not isinstance(value, list):
            raise DataFormatError(f"answers must be a list, got {type(value).__name__}", path, line, qid)
        seen[qid] = line
        return qid, value, line

    for line, obj in _prediction_objects(path):
        if not isinstance(obj, dict):
            raise DataFormatError(f"expected a JSON object, got {type(obj).__name__}", path, line)
        if "question_id" in obj and "ranked_answers" in obj:
            yield checked(obj["question_id"], obj["ranked_answers"], line)
        elif any(f in obj for f in PREDICTION_FIELDS) and all(isinstance(v, dict) for v in obj.values()):
            chosen = field or next(f for f in PREDICTION_FIELDS if f in obj)
            if chosen not in obj:
                raise DataFormatError(f"no field {chosen!r}; the file has {sorted(obj)}", path, line)
            for qid, value in obj[chosen].items():
                yield checked(qid, value, line)
        else:
            for qid, value in obj.items():
                yield checked(qid, value, line)
    if not seen:
        warnings.warn(
            f"{path}: the predictions file holds no predictions; every question will score as unanswered",
            ProtoQAWarning,
            stacklevel=4,
        )


def _ranked(value: list[Any], path: PathLike, line: Optional[int], qid: str) -> list[str]:
    if value and all(isinstance(v, list) for v in value):
        return _rank_by_count(value, path, line, qid)
    return list(_check_answers(value, "answers", path, line, qid))


def read_predictions(path: PathLike, field: Optional[str] = None) -> dict[str, list[str]]:
    """Read ranked answer lists ``{question id: [answer, ...]}`` from any supported file.

    Answers given with counts (``model_answers_with_count``) are ranked by count,
    ties kept in file order. Empty strings and repeated answers are kept.

    >>> preds = read_predictions("../shared/data/protoqa/dev.predictions.gpt2finetuned.json")  # doctest: +SKIP
    >>> preds["r1q1"][:2]  # doctest: +SKIP
    ['age', 'name']
    """
    return {qid: _ranked(value, path, line, qid) for qid, value, line in _prediction_items(path, field)}


class PackedPredictions(Mapping[str, list[str]]):
    """Ranked answer lists held packed: one compact UTF-8 JSON ``bytes`` per question.

    What :func:`read_packed_predictions` returns: a read-only mapping like the one of
    :func:`read_predictions` whose values are decoded when asked for, so that holding
    every prediction costs about the bytes of its answers plus some 150 bytes per question.

    >>> packed = PackedPredictions({"q1": ["dog", "cat"]})
    >>> packed["q1"], list(packed), len(packed)
    (['dog', 'cat'], ['q1'], 1)
    """

    def __init__(self, lists: Optional[Mapping[str, Sequence[str]]] = None):
        self._packed: dict[str, bytes] = {}
        for qid, answers in (lists or {}).items():
            self.add(qid, answers)

    def add(self, qid: str, answers: Sequence[str]) -> None:
        """Hold ``answers`` under ``qid`` (an id already held is an error: nothing is overwritten)."""
        if qid in self._packed:
            raise DataFormatError("duplicate question id", question_id=qid)
        self._packed[qid] = json.dumps(list(answers), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def __getitem__(self, qid: str) -> list[str]:
        return json.loads(self._packed[qid])

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, qid: object) -> bool:
        return qid in self._packed


def read_packed_predictions(path: PathLike, field: Optional[str] = None) -> PackedPredictions:
    """:func:`read_predictions` read as a stream into a :class:`PackedPredictions`.

    The same lists, the same order and the same errors; a JSONL file is never held
    whole, and each list is kept packed.

    >>> preds = read_packed_predictions("../shared/data/protoqa/dev.predictions.gpt2finetuned.json")  # doctest: +SKIP
    >>> preds["r1q1"][:2]  # doctest: +SKIP
    ['age', 'name']
    """
    out = PackedPredictions()
    for qid, value, line in _prediction_items(path, field):
        out.add(qid, _ranked(value, path, line, qid))
    return out


REFERENCE_FORMS = (
    'the `clusters` field of a dataset row, {"id": [str], "answers": [[str]], "count": [int]} '
    '("id" optional), or a list of {"answers": [str], "count": int} records'
)


def _is_list_like(value: Any) -> bool:
    return not isinstance(value, (str, bytes)) and (isinstance(value, Sequence) or hasattr(value, "tolist"))


def clusters_from_records(reference: Any, question_id: Optional[str] = None) -> tuple[Cluster, ...]:
    """Clusters from the ``clusters`` field of a dataset row, or from a list of records.

    Accepts ``{"id": [...], "answers": [[...]], "count": [...]}`` (how ``datasets``
    stores a sequence of records; ``id`` optional) and
    ``[{"answers": [...], "count": n, "id": ...}, ...]``. Anything else is an error
    that names these forms.

    >>> clusters_from_records({"answers": [["age", "birthday"]], "count": [35]})[0].count
    35
    >>> clusters_from_records([{"answers": ["age"], "count": 3}])[0].id
    '0'
    >>> clusters_from_records({"id": "r1q1", "clusters": {}}, "r1q1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    protoqa_core.readers.DataFormatError: question 'r1q1': a reference must be ... (this looks like a whole row: pass its 'clusters' field)
    """
    qid = question_id
    if isinstance(reference, Mapping):
        if "answers" not in reference or "count" not in reference:
            hint = " (this looks like a whole row: pass its 'clusters' field)" if "clusters" in reference else ""
            raise DataFormatError(
                f"a reference must be {REFERENCE_FORMS}; got an object with keys {sorted(map(str, reference))}{hint}",
                question_id=qid,
            )
        answers, counts = reference["answers"], reference["count"]
        ids = reference.get("id")
        ids = [str(i) for i in range(len(answers) if _is_list_like(answers) else 0)] if ids is None else ids
        if not (_is_list_like(answers) and _is_list_like(counts) and _is_list_like(ids)) or not (
            len(answers) == len(counts) == len(ids)
        ):
            raise DataFormatError("'id', 'answers' and 'count' must be lists of the same length", question_id=qid)
        records = [{"id": i, "answers": a, "count": c} for i, a, c in zip(ids, answers, counts, strict=True)]
    elif _is_list_like(reference):
        records = list(reference)
    else:
        raise DataFormatError(f"a reference must be {REFERENCE_FORMS}; got {type(reference).__name__}", question_id=qid)
    clusters = []
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping) or "answers" not in rec or "count" not in rec:
            raise DataFormatError(
                f"cluster {i} needs 'answers' and 'count', got {rec!r}; a reference must be {REFERENCE_FORMS}",
                question_id=qid,
            )
        answers = rec["answers"]
        answers = answers.tolist() if hasattr(answers, "tolist") else answers
        clusters.append(
            Cluster(
                str(rec.get("id", i)),
                _check_answers(
                    list(answers) if isinstance(answers, tuple) else answers, f"cluster {i} answers", None, None, qid
                ),
                check_count(rec["count"], f"cluster {i} count", None, None, qid),
            )
        )
    return tuple(clusters)


def check_answer_list(value: Any, question_id: Optional[str] = None) -> list[str]:
    """One question's answers given in memory (an ``evaluate`` module's prediction): a list of strings.

    Each item is checked in turn, without recursion, so a value nested any depth is one
    :class:`DataFormatError`, never a ``RecursionError``.

    >>> check_answer_list(("dog", "cat"), "q1")
    ['dog', 'cat']
    >>> check_answer_list([["dog"]], "q1")
    Traceback (most recent call last):
    ...
    protoqa_core.readers.DataFormatError: question 'q1': answers must contain only strings, found ['dog']
    """
    if not _is_list_like(value):
        raise DataFormatError(f"answers must be a list of strings, got {type(value).__name__}", None, None, question_id)
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    for item in items:
        if not isinstance(item, str):
            raise DataFormatError(f"answers must contain only strings, found {_short(item)}", None, None, question_id)
    return items


def question_ids_for(question_ids: Optional[Sequence[Any]], count: int) -> list[str]:
    """One id per question: ``question_ids`` checked (one each, all distinct), else ``"0"``, ``"1"``, ...

    Duplicates are an error: two questions under one id would be merged or overwritten.

    >>> question_ids_for(None, 2)
    ['0', '1']
    >>> question_ids_for(["q1", "q1"], 2)
    Traceback (most recent call last):
    ...
    protoqa_core.readers.DataFormatError: duplicate question_ids: q1 (each question needs its own id)
    """
    if question_ids is None:
        return [str(i) for i in range(count)]
    if not _is_list_like(question_ids):
        raise DataFormatError(f"question_ids must be a list of strings, got {type(question_ids).__name__}")
    ids = [str(q) for q in (question_ids.tolist() if hasattr(question_ids, "tolist") else question_ids)]
    if len(ids) != count:
        raise DataFormatError(f"{len(ids)} question_ids for {count} questions; give one id per question")
    seen: set[str] = set()
    repeated: dict[str, None] = {}  # in the order of their second appearance
    for q in ids:
        if q in seen:
            repeated[q] = None
        seen.add(q)
    duplicates = list(repeated)
    if duplicates:
        raise DataFormatError(f"duplicate question_ids: {preview_ids(duplicates)} (each question needs its own id)")
    return ids
