"""A system file of any format, told apart by content and read in one pass.

:func:`read_system_file` opens an answers file, a predictions file or a harness's output
(:mod:`protoqa_integrations.harnesses.harness_logs`) once, tells its format (:data:`FORMATS`) from
its first bytes and content, and reads its answers from the same stream for ``leaderboard``;
:func:`read_harness_output` is what ``convert`` writes; :func:`detect_format` tells the format only.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from protoqa_core.io.files import DataFormatError, PathLike, PrefixedReader, binary_stream, file_error, max_input_bytes
from protoqa_core.io.json_values import LARGE_LINE_BYTES, MalformedJSONError, decode_line, parse_json
from protoqa_core.io.predictions import PredictionDocument, stream_items, too_many_answers_error
from protoqa_integrations.harnesses.archives import ZIP_MAGIC
from protoqa_integrations.harnesses.harness_logs import (
    READERS,
    HarnessAnswers,
    Keep,
    KeepOnce,
    lighteval_details,
    lm_eval_samples,
    read_inspect_log,
)

__all__ = [
    "FORMATS",
    "BINARY_FORMATS",
    "TEXT_FORMATS",
    "SystemFile",
    "read_system_file",
    "detect_format",
    "read_harness_output",
]

FORMATS: Mapping[str, str] = {
    "answers": "answers file of protoqa-eval generate",
    "predictions": "predictions file (ranked lists or samples)",
    "lm-eval": "lm-evaluation-harness --log_samples output",
    "lighteval": "lighteval details (Parquet)",
    "inspect": "Inspect AI eval log (.eval or .json)",
}
"""The formats a system file may take, each with the name printed for it."""

_PARQUET_MAGIC = b"PAR1"
_UTF8_BOM = b"\xef\xbb\xbf"
_INSPECT_ENTRIES = (b"_journal/", b"header.json", b"samples/", b"summaries.json", b"reductions.json")


@dataclass(frozen=True)
class _Probe:
    """What format detection looks at: the whole file as one JSON document and its first line as JSON
    (each None when it is not JSON), and what a reader may take rather than parse the file again
    (``parsed`` of :func:`~protoqa_core.io.predictions.stream_items`; None when it must read afresh)."""

    document: Any = None
    first: Any = None
    parsed: Optional[tuple[Optional[int], Any]] = None


def _is_lm_eval_record(record: Any) -> bool:
    return isinstance(record, dict) and "doc" in record and ("filtered_resps" in record or "resps" in record)


def _is_answers_file(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("model_answers"), dict) and "generation" in document


def _is_inspect_archive(head: bytes) -> bool:
    """Whether a file's first bytes are a zip archive whose first entry is one of an Inspect log's.

    >>> _is_inspect_archive(b"PK\\x03\\x04" + bytes(22) + (19).to_bytes(2, "little") + bytes(2) + b"_journal/start.json")
    True
    """
    if not head.startswith(ZIP_MAGIC) or len(head) < 30:
        return False
    name = head[30 : 30 + int.from_bytes(head[26:28], "little")]
    return name.startswith(_INSPECT_ENTRIES)


def _is_inspect_json(document: Any) -> bool:
    """Whether a parsed JSON document is an Inspect eval log (``--log-format json``)."""
    run = document.get("eval") if isinstance(document, dict) else None
    return isinstance(run, dict) and "task" in run and "model" in run and "version" in document


BINARY_FORMATS: tuple[tuple[str, Callable[[bytes], bool]], ...] = (
    ("lighteval", lambda head: head.startswith(_PARQUET_MAGIC)),
    ("inspect", _is_inspect_archive),
)
"""Formats told by a file's first bytes, tried first, in order: (format, test of the first 4 KiB)."""

TEXT_FORMATS: tuple[tuple[str, Callable[[_Probe], bool]], ...] = (
    ("lm-eval", lambda probe: _is_lm_eval_record(probe.first) or _is_lm_eval_record(probe.document)),
    ("answers", lambda probe: _is_answers_file(probe.document)),
    ("inspect", lambda probe: _is_inspect_json(probe.document)),
    ("predictions", lambda probe: isinstance(probe.document, dict) or isinstance(probe.first, dict)),
)
"""Formats told by a text file's JSON, tried in order after :data:`BINARY_FORMATS`: (format, test)."""

_EXPECTED = (
    "expected an answers file, a predictions file, lm-eval --log_samples output, lighteval details or an Inspect log"
)


def _probe(text: str, path: Path, bom: bool) -> _Probe:
    """The file parsed as one JSON document, or its first line parsed when it is JSONL, each byte once;
    malformed JSON in both is an error naming the line and column, and JSON nested too deeply or with
    duplicate keys is one at once. ``bom``: the file's bytes start with a UTF-8 byte order mark."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return _Probe()  # not JSON at all (a CSV file, say): an unknown format, not a parse position
    leading = text[: len(text) - len(stripped)]
    number = leading.count("\n") + 1
    first_line, _, rest = stripped.partition("\n")
    # A reader of lines sees this first line as the first non-blank one, and may take its parse,
    # unless the blank lines before it hold more than JSON's white space or follow a byte order mark.
    seen = not leading.strip(" \t\r\n") and not (bom and "\n" in leading)
    if rest.strip():
        # More lines follow: JSONL when the first is JSON on its own (the whole would then fail on the
        # second line, after parsing the first), else a document over several lines, parsed whole.
        try:
            first = parse_json(first_line, path, number)
        except DataFormatError:
            pass  # errors are worded as the whole file's, below
        else:
            return _Probe(first=first, parsed=(number, first) if seen else None)
    probe = _whole_probe(text, path, number, first_line)
    if not seen:
        return probe
    if probe.first is not None:
        return _Probe(first=probe.first, parsed=(number, probe.first))
    if not rest.strip():
        return _Probe(document=probe.document, parsed=(number, probe.document))
    # A document over several lines, whatever the length of its first line, as the readers of
    # predictions tell it: they take the document parsed here.
    return _Probe(document=probe.document, parsed=(None, probe.document))


def _whole_probe(text: str, path: Path, number: int, first_line: str) -> _Probe:
    try:
        return _Probe(document=parse_json(text, path))
    except MalformedJSONError as whole_error:
        try:
            return _Probe(first=parse_json(first_line, path, number))
        except MalformedJSONError:
            raise DataFormatError(
                f"{whole_error.message}: the file is cut short or is not JSON; {_EXPECTED}",
                path,
                whole_error.line,
            ) from None
    except DataFormatError as exc:
        raise DataFormatError(f"{exc}; {_EXPECTED}") from None


@dataclass
class SystemFile:
    """A system file read once: its format (one of :data:`FORMATS`) and what it holds, less what ``keep``
    left out: ``document`` for answers and predictions files, ``harness`` for the harness formats."""

    format: str
    document: Optional[PredictionDocument] = None
    harness: Optional[HarnessAnswers] = None


_INSPECT_HEAD = re.compile(rb'\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"\w+"\s*,\s*"eval"\s*:\s*\{')
"""How Inspect starts a JSON eval log: told from the first bytes of a document too large to parse whole."""
_WHOLE_BYTES = 16 << 20
"""A text file up to this size is parsed whole to tell its format (its errors then give a line and a
column); a larger one is told from its first line and then read as a stream."""


def _check_system_path(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"system file not found: {path}") from None
    except OSError as exc:
        raise file_error(exc, path) from None
    if stat.S_ISDIR(mode):
        raise DataFormatError("is a directory, not a system file", path)
    if not stat.S_ISREG(mode):
        raise DataFormatError("not a regular file (a pipe, a device or a socket)", path)


def read_system_file(path: PathLike, *, keep: Optional[Keep] = None, max_answers: Optional[int] = None) -> SystemFile:
    """A system file of any format of :data:`FORMATS`, opened once: its format told from its content
    (:data:`BINARY_FORMATS`, then :data:`TEXT_FORMATS`) and its answers read from the same stream.

    ``keep`` (:data:`Keep`) says which answer lists to keep, so that a large file never sits whole
    in memory; ``max_answers`` caps one question's answers.

    >>> import json, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.json")
    >>> _ = open(p, "w").write(json.dumps({"model_answers": {"q1": ["dog"], "q2": ["cat"]}, "generation": {}}))
    >>> read = read_system_file(p, keep=lambda field, qid, line: qid == "q1")
    >>> read.format, read.document.lists("model_answers")
    ('answers', {'q1': ['dog']})
    """
    path = Path(path)
    return _read_file(path, keep or KeepOnce(path), max_answers, detect=False)


def _read_file(path: Path, keep: Keep, max_answers: Optional[int], detect: bool) -> SystemFile:
    """:func:`read_system_file`; with ``detect``, only as far as its format is known (for :func:`detect_format`)."""
    _check_system_path(path)
    try:
        raw = open(path, "rb", buffering=0)
    except OSError as exc:
        raise file_error(exc, path) from None
    with raw:
        head = raw.read(4096)
        if not head.strip():
            raise DataFormatError("the file is empty", path)
        for fmt, test in BINARY_FORMATS:
            if test(head):
                return SystemFile(fmt) if detect else _binary_file(fmt, raw, path, keep, max_answers)
        raw.seek(0)
        with binary_stream(raw, path) as stream:
            return _text_file(stream, path, keep, max_answers, detect)


def _binary_file(fmt: str, raw: Any, path: Path, keep: Keep, max_answers: Optional[int]) -> SystemFile:
    if fmt == "lighteval":
        if os.fstat(raw.fileno()).st_size > max_input_bytes():
            raise DataFormatError(f"the file is larger than {max_input_bytes() // 2**20} MB", path)
        raw.seek(0)
        return SystemFile(fmt, harness=_kept(lighteval_details(raw.read(), path), keep, path, max_answers))
    return SystemFile(fmt, harness=_kept(read_inspect_log(path), keep, path, max_answers))


def _kept(read: HarnessAnswers, keep: Keep, path: Path, max_answers: Optional[int]) -> HarnessAnswers:
    """A harness's samples, capped at ``max_answers`` per question, less those ``keep`` leaves out."""
    for qid, samples in read.samples.items():
        if max_answers is not None and len(samples) > max_answers:
            raise too_many_answers_error(path, None, qid, max_answers)
    read.samples = {qid: samples for qid, samples in read.samples.items() if keep(None, qid, None)}
    return read


def _text_file(stream: Any, path: Path, keep: Keep, max_answers: Optional[int], detect: bool) -> SystemFile:
    data = stream.read(_WHOLE_BYTES + 1)
    if len(data) <= _WHOLE_BYTES:
        text = decode_line(data, path, None, first=True)
        probe = _probe(text, path, data.startswith(_UTF8_BOM))
        fmt = next((fmt for fmt, check in TEXT_FORMATS if check(probe)), None)
        if fmt is None:
            raise DataFormatError(f"unknown format: {_EXPECTED}", path)
        if detect:
            return SystemFile(fmt)
        parsed = probe.parsed
        if fmt == "lm-eval":
            line, record = parsed if parsed is not None else (None, None)
            first = None if line is None else (line, record)  # a record over several lines is refused there
            numbered = enumerate(text.split("\n"), start=1)
            return SystemFile(fmt, harness=lm_eval_samples(numbered, path, keep, max_answers, parsed=first))
        if fmt == "inspect":
            return SystemFile(fmt, harness=_kept(read_inspect_log(path), keep, path, max_answers))
        del probe, text
        if parsed is None:  # a file whose first lines a reader sees otherwise: read afresh
            items = stream_items(io.BytesIO(data), path, max_answers)
        else:  # the readers take the value parsed to tell the format: each byte is parsed once
            items = stream_items(io.BytesIO(_after_line(data, parsed[0])), path, max_answers, parsed=parsed)
        return SystemFile(fmt, document=_collect(items, path, keep))
    start = len(data) - len(data.lstrip())
    end = data.find(b"\n", start, start + LARGE_LINE_BYTES + 1)
    first = None
    # A first line longer than a long line is parsed as it is read, by the readers below; a piece
    # of it would not parse, so it is not tried.
    if end >= 0:
        try:
            first = parse_json(decode_line(data[start:end], path, None, first=True), path)
        except DataFormatError:
            first = None
    leading = data[:start]
    # The readers may take this parse when they would see this line as the first non-blank one.
    number = leading.count(b"\n") + 1
    seen = first is not None and not leading.strip(b" \t\r\n") and not (data.startswith(_UTF8_BOM) and number > 1)
    if _is_lm_eval_record(first):
        if detect:
            return SystemFile("lm-eval")
        rest = io.BufferedReader(PrefixedReader(data, stream))
        lines = ((n, decode_line(raw, path, n, first=n == 1)) for n, raw in enumerate(rest, start=1))
        parsed_record = (number, first) if seen else None
        return SystemFile("lm-eval", harness=lm_eval_samples(lines, path, keep, max_answers, parsed=parsed_record))
    if _is_inspect_json(first) or _INSPECT_HEAD.match(data):
        return (
            SystemFile("inspect")
            if detect
            else SystemFile("inspect", harness=_kept(read_inspect_log(path), keep, path, max_answers))
        )
    if seen:
        after = io.BufferedReader(PrefixedReader(data[end + 1 :], stream))
        items = stream_items(after, path, max_answers, parsed=(number, first))
    else:
        items = stream_items(io.BufferedReader(PrefixedReader(data, stream)), path, max_answers)
    document = _collect(items, path, keep)
    return SystemFile(_document_format(document), document=document)


def _after_line(data: bytes, line: Optional[int]) -> bytes:
    """The bytes of ``data`` after its line number ``line`` (none when ``line`` is None: the whole file).

    >>> _after_line(b"a\\nb\\nc", 2), _after_line(b"a", 1), _after_line(b"a\\nb", None)
    (b'c', b'', b'')
    """
    end = -1
    for _ in range(line or 0):
        end = data.find(b"\n", end + 1)
        if end < 0:
            return b""
    return data[end + 1 :] if line else b""


def _collect(
    items: Iterable[tuple[Optional[str], Optional[str], Any, Optional[int]]], path: Path, keep: Keep
) -> PredictionDocument:
    """The answer lists ``keep`` keeps and every other member of a document, as a :class:`PredictionDocument`."""
    groups: dict[Optional[str], dict[str, tuple[Any, Optional[int]]]] = {}
    members: dict[str, Any] = {}
    count = 0
    for group, qid, value, line in items:
        if qid is None:
            members[str(group)] = value
            continue
        count += 1
        kept = groups.setdefault(group, {})
        if keep(group, qid, line):
            kept[qid] = (value, line)
    if not count:
        raise DataFormatError("the file holds no predictions (no question id with answers)", path)
    return PredictionDocument(path, groups, members)


def _document_format(document: PredictionDocument) -> str:
    return "answers" if "model_answers" in document.fields and "generation" in document.members else "predictions"


def detect_format(path: PathLike) -> str:
    """The format of a system file, one of :data:`FORMATS`; raises ``DataFormatError`` when none fits.

    A new format is one entry in :data:`BINARY_FORMATS` or :data:`TEXT_FORMATS`, its reader one in
    :data:`READERS`. The file is read as :func:`read_system_file` reads it, keeping no answers.

    >>> import json, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> p = os.path.join(folder, "a.json")
    >>> _ = open(p, "w").write(json.dumps({"model_answers": {"q1": ["dog"]}, "generation": {}}))
    >>> detect_format(p)
    'answers'
    >>> _ = open(p, "w").write(json.dumps({"doc_id": 0, "doc": {"id": "q1"}, "filtered_resps": [["dog"]]}))
    >>> detect_format(p)
    'lm-eval'
    """
    return _read_file(Path(path), lambda group, qid, line: False, None, detect=True).format


def read_harness_output(
    path: PathLike, fmt: Optional[str] = None, *, max_answers: Optional[int] = None
) -> HarnessAnswers:
    """A harness's output (a format of :data:`READERS`), the format detected unless ``fmt`` names it;
    ``max_answers`` caps one question's samples.

    >>> read_harness_output("README.md")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DataFormatError: README.md: ...
    """
    if fmt is None:
        read = read_system_file(path, max_answers=max_answers)
        if read.harness is not None:
            return read.harness
        fmt = read.format
    elif fmt in READERS:
        return _kept(READERS[fmt](path), KeepOnce(Path(path)), Path(path), max_answers)
    raise DataFormatError(
        f"not lm-eval --log_samples output, lighteval details or an Inspect log, but a {FORMATS[fmt]}", path
    )
