"""Readers of evaluation-harness outputs: every sample of every question, with the settings recorded.

Three harnesses run this project's tasks and keep what the model said:

* **lm-evaluation-harness**, with ``--log_samples``: a JSONL file ``samples_<task>_<time>.jsonl``,
  one record per question, whose ``filtered_resps`` hold the cleaned answers of the task's
  ``answers`` filter and whose ``arguments`` hold the generation settings of the request;
  the ``results_<time>.json`` beside it names the model and the task's data set and split.
* **lighteval**, with ``--save-details``: a Parquet file ``details_<task>|<shots>_<time>.parquet``,
  one row per question, whose ``model_response.text`` holds the raw continuations (cleaned
  here as the task cleans them, :func:`~protoqa_integrations.generation.settings.answer_from_text`);
  the ``results_<time>.json`` of the same run names the model and its generation parameters.
* **Inspect AI**: the eval log of ``inspect eval`` (``.eval``, or ``.json`` with ``--log-format
  json``), one sample per question, whose ``output.choices`` hold the raw completions (cleaned
  here as the task cleans them for its ``prompt`` argument); the log itself names the model,
  the task's arguments and the generation settings that ran.

:func:`read_harness_output` reads either into a :class:`HarnessAnswers` (samples per question
id and a ``generation`` block), which ``protoqa-eval convert`` writes as an answers file and
``protoqa-eval leaderboard`` scores. :func:`detect_format` tells the formats a system file may
take apart, by content, not by name.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from protoqa_core.io.files import (
    DataFormatError,
    MalformedJSONError,
    PathLike,
    PrefixedReader,
    binary_stream,
    decode_line,
    file_error,
    iter_text_lines,
    max_input_bytes,
    parse_json,
    read_text,
)
from protoqa_core.io.predictions import PredictionDocument, duplicate_id_error, stream_items, too_many_answers_error
from protoqa_core.redaction import redact
from protoqa_integrations.generation.settings import answer_from_text

__all__ = [
    "FORMATS",
    "BINARY_FORMATS",
    "TEXT_FORMATS",
    "READERS",
    "HarnessAnswers",
    "Keep",
    "SystemFile",
    "read_system_file",
    "detect_format",
    "read_harness_output",
    "read_lm_eval_samples",
    "read_lighteval_details",
    "read_inspect_log",
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
_ZIP_MAGIC = b"PK\x03\x04"
_INSPECT_ENTRIES = (b"_journal/", b"header.json", b"samples/", b"summaries.json", b"reductions.json")
_TASK_DATA = {"protoqa": ("protoqa", "validation"), "cfc": ("cfc", "validation")}
"""lighteval's tasks of this project and the data they answer (``protoqa_integrations.harnesses.lighteval_tasks``)."""
_TASK_PROMPTS = {
    "protoqa": "statement",
    "protoqa_test": "statement",
    "cfc": "cfc-one-shot",
    "cfc_test": "cfc-one-shot",
    "protoqa_chat": "protoqa-chat",
    "cfc_chat": "cfc-chat",
}
"""The prompt style (as ``protoqa-eval generate --prompt`` names it) of each harness task of this project."""


@dataclass
class HarnessAnswers:
    """Every sample per question id (``""`` for a sample without an answer) and the settings recorded.

    ``generation`` holds ``harness``, ``task``, ``model``, ``sampling`` (the generation
    parameters the harness recorded), ``num_samples`` and, when the run says so, ``dataset``
    and ``split``: what ``protoqa-eval score-generated`` needs to find the questions.
    """

    samples: dict[str, list[str]]
    generation: dict[str, Any] = field(default_factory=dict)


def _head(path: Path, size: int = 4096) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(size)


@dataclass(frozen=True)
class _Probe:
    """What format detection looks at: the whole file as one JSON document and its first line as JSON
    (each None when it is not JSON)."""

    document: Any = None
    first: Any = None


def _is_lm_eval_record(record: Any) -> bool:
    return isinstance(record, dict) and "doc" in record and ("filtered_resps" in record or "resps" in record)


def _is_answers_file(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("model_answers"), dict) and "generation" in document


def _is_inspect_archive(head: bytes) -> bool:
    """Whether a file's first bytes are a zip archive whose first entry is one of an Inspect log's.

    >>> _is_inspect_archive(b"PK\\x03\\x04" + bytes(22) + (19).to_bytes(2, "little") + bytes(2) + b"_journal/start.json")
    True
    """
    if not head.startswith(_ZIP_MAGIC) or len(head) < 30:
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


def _probe(text: str, path: Path) -> _Probe:
    """The file parsed as one JSON document and its first line parsed; malformed JSON in both is an error
    naming the line and column, and JSON nested too deeply or with duplicate keys is one at once."""
    if not text.lstrip().startswith(("{", "[")):
        return _Probe()  # not JSON at all (a CSV file, say): an unknown format, not a parse position
    try:
        return _Probe(document=parse_json(text, path))
    except MalformedJSONError as whole_error:
        first_line = text.lstrip().split("\n", 1)[0]
        try:
            return _Probe(first=parse_json(first_line, path, text[: len(text) - len(text.lstrip())].count("\n") + 1))
        except MalformedJSONError:
            where = f"{path}, line {whole_error.line}: " if whole_error.line is not None else f"{path}: "
            raise DataFormatError(
                f"{str(whole_error).removeprefix(where)}: the file is cut short or is not JSON; {_EXPECTED}",
                path,
                whole_error.line,
            ) from None
    except DataFormatError as exc:
        raise DataFormatError(f"{exc}; {_EXPECTED}") from None


Keep = Callable[[Optional[str], str, Optional[int]], bool]
"""Called with ``(field, question id, line)`` for every answer list a system file holds (``field`` None
outside ``model_answers``-style files, ``line`` None where there is none); says whether to keep it.
It may raise, for a repeated id say; :func:`read_system_file` keeps everything by default."""


@dataclass
class SystemFile:
    """A system file read once: its format (one of :data:`FORMATS`) and what it holds, less what ``keep``
    left out: ``document`` for answers and predictions files, ``harness`` for the harness formats."""

    format: str
    document: Optional[PredictionDocument] = None
    harness: Optional[HarnessAnswers] = None


class _Seen:
    """The default :data:`Keep`: keeps every answer list, refusing a question id given twice in one field."""

    def __init__(self, path: Path):
        self.path = path
        self.lines: dict[tuple[Optional[str], str], Optional[int]] = {}

    def __call__(self, group: Optional[str], qid: str, line: Optional[int]) -> bool:
        if (group, qid) in self.lines:
            raise duplicate_id_error(self.path, line, qid, self.lines[group, qid])
        self.lines[group, qid] = line
        return True


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

    ``keep`` (:data:`Keep`) says which answer lists to keep: a caller scoring some questions
    keeps only theirs, so that a large file never sits whole in memory. ``max_answers`` caps
    the answers of one question. A text file over 16 MB is read as a stream, one question at
    a time. Inspect logs are read by ``inspect-ai``, which opens the file itself.

    >>> import json, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.json")
    >>> _ = open(p, "w").write(json.dumps({"model_answers": {"q1": ["dog"], "q2": ["cat"]}, "generation": {}}))
    >>> read = read_system_file(p, keep=lambda field, qid, line: qid == "q1")
    >>> read.format, read.document.lists("model_answers")
    ('answers', {'q1': ['dog']})
    """
    path = Path(path)
    return _read_file(path, keep or _Seen(path), max_answers, detect=False)


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
        return SystemFile(fmt, harness=_kept(_lighteval_details(raw.read(), path), keep, path, max_answers))
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
        probe = _probe(text, path)
        fmt = next((fmt for fmt, check in TEXT_FORMATS if check(probe)), None)
        if fmt is None:
            raise DataFormatError(f"unknown format: {_EXPECTED}", path)
        if detect:
            return SystemFile(fmt)
        if fmt == "lm-eval":
            return SystemFile(
                fmt, harness=_lm_eval_samples(enumerate(text.split("\n"), start=1), path, keep, max_answers)
            )
        if fmt == "inspect":
            return SystemFile(fmt, harness=_kept(read_inspect_log(path), keep, path, max_answers))
        del probe, text  # the document is read again as items: one of the two held at a time
        return SystemFile(fmt, document=_collect(stream_items(io.BytesIO(data), path, max_answers), path, keep))
    rest = io.BufferedReader(PrefixedReader(data, stream))
    first_line = data.lstrip()[: 1 << 20].split(b"\n", 1)[0]
    try:
        first = parse_json(decode_line(first_line, path, None, first=True), path)
    except DataFormatError:
        first = None
    if _is_lm_eval_record(first):
        if detect:
            return SystemFile("lm-eval")
        lines = ((n, decode_line(raw, path, n, first=n == 1)) for n, raw in enumerate(rest, start=1))
        return SystemFile("lm-eval", harness=_lm_eval_samples(lines, path, keep, max_answers))
    if _is_inspect_json(first) or _INSPECT_HEAD.match(data):
        return (
            SystemFile("inspect")
            if detect
            else SystemFile("inspect", harness=_kept(read_inspect_log(path), keep, path, max_answers))
        )
    document = _collect(stream_items(rest, path, max_answers), path, keep)
    return SystemFile(_document_format(document), document=document)


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

    The tests of :data:`BINARY_FORMATS` and then :data:`TEXT_FORMATS` are tried in order (a new
    format is one entry there, its reader one in :data:`READERS`). Raises ``FileNotFoundError``
    for a missing file and ``DataFormatError`` for a directory, an empty file, malformed JSON
    (naming line and column) or JSON nested too deeply. The file is read once, as
    :func:`read_system_file` reads it, keeping no answers.

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


def _sibling_results(directory: Path, stamp: str) -> dict[str, Any]:
    """The ``results_<stamp>.json`` of the same run in ``directory`` (empty when absent or unreadable)."""
    candidate = directory / f"results_{stamp}.json"
    if not stamp or not candidate.is_file():
        return {}
    try:
        found = parse_json(read_text(candidate), candidate)
    except (DataFormatError, OSError):
        return {}
    return found if isinstance(found, dict) else {}


def _gen_kwargs(arguments: Any) -> dict[str, Any]:
    """The generation settings of an lm-eval request: ``{"gen_args_0": {"arg_1": {...}}}`` or ``[[context, {...}]]``."""
    if isinstance(arguments, dict):
        arguments = [list(a.values()) if isinstance(a, dict) else a for a in arguments.values()]
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and len(arguments[0]) > 1:
        settings = arguments[0][1]
        return dict(settings) if isinstance(settings, dict) else {}
    return {}


def _question_id(doc: Any, path: Path, line: int) -> str:
    qid = doc.get("id") if isinstance(doc, dict) else None
    if not isinstance(qid, str) or not qid:
        raise DataFormatError("the record's doc has no question id ('id')", path, line)
    return qid


def _answers(value: Any, path: Path, line: int, qid: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise DataFormatError("expected a list of answer strings", path, line, qid)
    return list(value)


def _lm_eval_model(model_args: Any) -> Optional[str]:
    """The model an lm-eval run names: ``pretrained`` (or ``model``) of its ``model_args``, a dict or ``k=v,...``.

    >>> _lm_eval_model("pretrained=gpt2,seed=7"), _lm_eval_model({"model": "tiny", "base_url": "http://..."})
    ('gpt2', 'tiny')
    """
    if isinstance(model_args, str):
        model_args = dict(part.split("=", 1) for part in model_args.split(",") if "=" in part)
    if isinstance(model_args, dict):
        found = model_args.get("pretrained") or model_args.get("model")
        return str(found) if found is not None else None
    return None


def read_lm_eval_samples(path: PathLike) -> HarnessAnswers:
    """Samples per question from an lm-evaluation-harness ``--log_samples`` JSONL file.

    The answers are those of the ``answers`` filter (``filtered_resps``: the task's cleaned
    samples); a file without it is cleaned here from ``resps``. ``sampling`` is the request's
    ``generation_kwargs``; ``model``, ``dataset`` and ``split`` come from the run's results file.

    >>> import json, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "samples_protoqa_2026-01-01T00-00-00.jsonl")
    >>> record = {"doc_id": 0, "doc": {"id": "q1"}, "filter": "answers", "filtered_resps": [["dog", "", "cat"]],
    ...           "arguments": {"gen_args_0": {"arg_0": "Q: ...", "arg_1": {"temperature": 0.69}}}}
    >>> _ = open(p, "w").write(json.dumps(record) + "\\n")
    >>> read = read_lm_eval_samples(p)
    >>> read.samples, read.generation["sampling"], read.generation["task"]
    ({'q1': ['dog', '', 'cat']}, {'temperature': 0.69}, 'protoqa')
    """
    path = Path(path)
    return _lm_eval_samples(iter_text_lines(path), path, _Seen(path))


def _lm_eval_samples(
    lines: Iterable[tuple[int, str]], path: Path, keep: Keep, max_answers: Optional[int] = None
) -> HarnessAnswers:
    """:func:`read_lm_eval_samples` of the file's lines, keeping the questions ``keep`` keeps."""
    samples: dict[str, list[str]] = {}
    sampling: dict[str, Any] = {}
    records = most = 0
    for number, text in lines:
        if not text.strip():
            continue
        record = parse_json(text, path, number)
        if not isinstance(record, dict) or "doc" not in record:
            raise DataFormatError("not an lm-eval sample record (no 'doc')", path, number)
        if record.get("filter", "answers") != "answers":
            continue  # another filter's view of the same samples
        qid = _question_id(record["doc"], path, number)
        if "filtered_resps" in record:
            filtered = record["filtered_resps"]
            if not isinstance(filtered, list) or len(filtered) != 1:
                raise DataFormatError("expected filtered_resps to hold one list of answers", path, number, qid)
            answers = _answers(filtered[0], path, number, qid)
        else:
            raw = record.get("resps")
            texts = raw[0] if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], list) else raw
            answers = [answer_from_text(t) for t in _answers(texts, path, number, qid)]
        if max_answers is not None and len(answers) > max_answers:
            raise too_many_answers_error(path, number, qid, max_answers)
        records, most = records + 1, max(most, len(answers))
        if keep(None, qid, number):
            samples[qid] = answers
        sampling = sampling or _gen_kwargs(record.get("arguments"))
    if not records:
        raise DataFormatError("no lm-eval sample records with the 'answers' filter", path)
    found = re.fullmatch(r"samples_(.+)_(\d{4}-\d\d-\d\dT[\d\-.:]+)\.jsonl", path.name)
    task, stamp = (found.group(1), found.group(2)) if found else ("", "")
    results = _sibling_results(path.parent, stamp)
    config = results.get("configs", {}).get(task, {}) if isinstance(results.get("configs"), dict) else {}
    kwargs = config.get("dataset_kwargs", {}) if isinstance(config, dict) else {}
    run: dict[str, Any] = results["config"] if isinstance(results.get("config"), dict) else {}
    generation: dict[str, Any] = {
        "harness": "lm-eval",
        "task": task,
        "model": _lm_eval_model(run.get("model_args")),
        "backend": run.get("model"),
        "model_args": run.get("model_args"),
        "sampling": sampling,
        "num_samples": most,
        "converted_from": str(path),
    }
    if isinstance(kwargs, dict) and kwargs.get("protoqa_config") and kwargs.get("protoqa_split"):
        generation["dataset"], generation["split"] = kwargs["protoqa_config"], kwargs["protoqa_split"]
    if task in _TASK_PROMPTS:
        generation["prompt"] = _TASK_PROMPTS[task]
    return HarnessAnswers(samples, redact(generation))


def _lighteval_results(path: Path, stamp: str) -> dict[str, Any]:
    """lighteval writes ``OUT/details/MODEL/STAMP/details_*.parquet`` and ``OUT/results/MODEL/results_STAMP.json``.

    MODEL is the model's name, slashes and all (``org/name``, or a folder's absolute path),
    so the ``details`` folder is looked for among the ancestors.
    """
    model_dir = path.resolve().parent.parent
    for ancestor in model_dir.parents:
        if ancestor.name == "details":
            found = _sibling_results(ancestor.parent / "results" / model_dir.relative_to(ancestor), stamp)
            if found:
                return found
    return {}


def read_lighteval_details(path: PathLike) -> HarnessAnswers:
    """Samples per question from a lighteval details Parquet file, cleaned as this project's tasks clean them.

    The question id is the row's ``doc.specific.row.id``; ``sampling`` is the model's
    ``generation_parameters`` from the run's results file, when it is found.

    >>> read_lighteval_details("details_cfc|0_2026-01-01T00-00-00.parquet").samples  # doctest: +SKIP
    {'r1q1': ['dancing', ...], ...}
    """
    path = Path(path)
    if path.stat().st_size > max_input_bytes():
        raise DataFormatError(f"the file is larger than {max_input_bytes() // 2**20} MB", path)
    return _lighteval_details(path, path)


def _lighteval_details(source: Any, path: Path) -> HarnessAnswers:
    """:func:`read_lighteval_details` of ``source``: the file's path, or its bytes already read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pa.BufferReader(source) if isinstance(source, bytes) else source
        rows = pq.read_table(table, columns=["doc", "model_response"]).to_pylist()
    except (pa.ArrowException, KeyError, OSError) as exc:
        raise DataFormatError(f"not lighteval details: {' '.join(str(exc).split())[:200]}", path) from None
    samples: dict[str, list[str]] = {}
    for number, row in enumerate(rows, start=1):
        doc, response = row.get("doc") or {}, row.get("model_response") or {}
        specific = doc.get("specific") if isinstance(doc, dict) else None
        if not isinstance(specific, dict) or not isinstance(response, dict):
            raise DataFormatError(
                f"row {number}: 'doc' and 'model_response' are not the structs lighteval writes "
                f"(doc is {type(doc).__name__}, model_response {type(response).__name__}); "
                "pass the details file lighteval --save-details wrote for this project's tasks",
                path,
            )
        qid = _question_id(specific.get("row"), path, number)
        if qid in samples:
            raise DataFormatError("duplicate question id", path, number, qid)
        samples[qid] = [answer_from_text(t) for t in _answers(response.get("text"), path, number, qid)]
    if not samples:
        raise DataFormatError("the details file holds no rows", path)
    found = re.fullmatch(r"details_(.+?)\|(\d+)_(.+)\.parquet", path.name)
    task, stamp = (found.group(1), found.group(3)) if found else ("", "")
    results = _lighteval_results(path, stamp)
    general = results.get("config_general", {}) if isinstance(results.get("config_general"), dict) else {}
    model_config = general.get("model_config", {}) if isinstance(general.get("model_config"), dict) else {}
    generation: dict[str, Any] = {
        "harness": "lighteval",
        "task": task,
        "model": general.get("model_name") or model_config.get("model_name"),
        "sampling": model_config.get("generation_parameters") or {},
        "num_samples": max((len(s) for s in samples.values()), default=0),
        "converted_from": str(path),
    }
    if task in _TASK_DATA:
        generation["dataset"], generation["split"] = _TASK_DATA[task]
    if task in _TASK_PROMPTS:
        generation["prompt"] = _TASK_PROMPTS[task]
    return HarnessAnswers(samples, redact(generation))


# ---------------------------------------------------------------- Inspect AI

_INSPECT_TASKS = {"protoqa": "protoqa", "cfc": "cfc"}
"""The Inspect tasks of this project (``protoqa_integrations.harnesses.inspect_tasks``) and the data set each answers."""
_INSPECT_PROMPTS = {
    ("protoqa", "base"): "statement",
    ("cfc", "base"): "cfc-one-shot",
    ("protoqa", "chat"): "protoqa-chat",
    ("cfc", "chat"): "cfc-chat",
}
"""The prompt style (as ``protoqa-eval generate --prompt`` names it) of each Inspect task and ``prompt`` argument."""
_INSPECT_SAMPLING = ("temperature", "top_p", "top_k", "max_tokens", "stop_seqs", "seed", "num_choices")


def _check_inspect_zip(path: Path) -> None:
    """Refuse a ``.eval`` archive whose entries claim more than the input cap once unpacked (read before unpacking)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            largest = max((info.file_size for info in archive.infolist()), default=0)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataFormatError(f"not an Inspect log: a damaged zip archive ({exc})", path) from None
    if largest > max_input_bytes():
        raise DataFormatError(f"an entry of the archive unpacks to more than {max_input_bytes() // 2**20} MB", path)


def _inspect_header(path: Path, log_format: Literal["eval", "json"]) -> Any:
    """The header of a finished Inspect run of this project's task (no samples read)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DataFormatError(
            "reading an Inspect log needs inspect-ai: pip install 'protoqa-eval[inspect]'", path
        ) from None
    try:
        header = read_eval_log(str(path), header_only=True, format=log_format)
    except Exception as exc:  # noqa: BLE001 (inspect-ai raises KeyError, ValueError, zstd errors, ... for a foreign log)
        raise DataFormatError(f"not a readable Inspect log: {' '.join(str(exc).split())[:200]}", path) from None
    if header.eval.task.rsplit("/", 1)[-1] not in _INSPECT_TASKS:
        raise DataFormatError(
            f"an Inspect log of task {header.eval.task!r}, not of this project's protoqa or cfc task", path
        )
    if header.status != "success":
        raise DataFormatError(f"the Inspect run did not finish (status {header.status!r}); score a finished run", path)
    return header


def _inspect_samples(path: Path, log_format: Literal["eval", "json"], prompt: str) -> dict[str, list[str]]:
    """Every question's completions, cleaned for the task's ``prompt``, one sample of the log at a time."""
    from inspect_ai.log import read_eval_log_samples

    from protoqa_integrations.harnesses.inspect_tasks import clean_answers

    samples: dict[str, list[str]] = {}
    try:
        # The events (every model call, by far the bulk of a log) are not read; long completions may be
        # stored once as attachments, which are resolved.
        read = read_eval_log_samples(str(path), resolve_attachments=True, format=log_format, exclude_fields={"events"})
        for sample in read:
            qid = str(sample.id)
            if qid in samples:
                raise DataFormatError(
                    "the question appears twice (a run of several epochs); run one epoch", path, None, qid
                )
            if sample.error is not None:
                raise DataFormatError(
                    f"the sample failed: {' '.join(str(sample.error.message).split())[:200]}", path, None, qid
                )
            samples[qid] = clean_answers([choice.message.text for choice in sample.output.choices], prompt)
    except DataFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 (as for the header: one line for any damaged sample)
        raise DataFormatError(f"cannot read the log's samples: {' '.join(str(exc).split())[:200]}", path) from None
    if not samples:
        raise DataFormatError("the log holds no samples (run without --no-log-samples)", path)
    return samples


def read_inspect_log(path: PathLike) -> HarnessAnswers:
    """Samples per question from an Inspect AI eval log of this project's ``protoqa`` or ``cfc`` task.

    Each sample of the log is a question (its ``id``); its completions are the ``choices`` of
    its ``output``, cleaned as the task's ``prompt`` argument has them cleaned
    (:func:`~protoqa_integrations.generation.settings.answer_from_text` for ``base``,
    :func:`~protoqa_integrations.generation.prompts.answer_from_reply` for ``chat``). ``sampling`` holds
    the generation settings that ran (the task's, with the command line's over them);
    ``dataset``, ``split`` and ``num_samples`` are the task's arguments. Reading needs
    ``inspect-ai`` (``pip install 'protoqa-eval[inspect]'``): a ``.eval`` log is a
    zstd-compressed archive.

    >>> read_inspect_log("logs/2026-01-01T00-00-00_protoqa_abc.eval").samples  # doctest: +SKIP
    {'r1q1': ['sunscreen', ...], ...}
    """
    path = Path(path)
    if path.stat().st_size > max_input_bytes():
        raise DataFormatError(f"the file is larger than {max_input_bytes() // 2**20} MB", path)
    archive = _head(path, 4).startswith(_ZIP_MAGIC)
    if archive:
        _check_inspect_zip(path)
    log_format: Literal["eval", "json"] = "eval" if archive else "json"
    header = _inspect_header(path, log_format)
    run, args = header.eval, dict(header.eval.task_args or {})
    prompt = args.get("prompt", "base")
    if prompt not in ("base", "chat"):
        raise DataFormatError(f"the task ran with an unknown prompt {str(prompt)[:60]!r}", path)
    samples = _inspect_samples(path, log_format, prompt)
    config = header.plan.config.model_dump(exclude_none=True) if header.plan is not None else {}
    asked = args.get("samples")
    task = run.task.rsplit("/", 1)[-1]
    generation: dict[str, Any] = {
        "harness": "inspect",
        "task": task,
        "model": run.model,
        "model_args": dict(run.model_args or {}),
        "sampling": {key: config[key] for key in _INSPECT_SAMPLING if key in config},
        # as `protoqa-eval generate --prompt` and the other harnesses' outputs name it, so that they compare
        "prompt": _INSPECT_PROMPTS[task, prompt],
        "num_samples": asked if isinstance(asked, int) else max((len(s) for s in samples.values()), default=0),
        "dataset": _INSPECT_TASKS[task],
        "split": str(args.get("split", "validation")),
        "converted_from": str(path),
    }
    return HarnessAnswers(samples, redact(generation))


READERS: dict[str, Callable[[PathLike], HarnessAnswers]] = {
    "lm-eval": read_lm_eval_samples,
    "lighteval": read_lighteval_details,
    "inspect": read_inspect_log,
}
"""The reader of each harness format of :data:`FORMATS`."""


def read_harness_output(path: PathLike, fmt: Optional[str] = None) -> HarnessAnswers:
    """A harness's output (a format of :data:`READERS`), the format detected unless ``fmt`` names it
    (then the file is read in the same pass, :func:`read_system_file`).

    >>> read_harness_output("README.md")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DataFormatError: README.md: ...
    """
    if fmt is None:
        read = read_system_file(path)
        if read.harness is not None:
            return read.harness
        fmt = read.format
    elif fmt in READERS:
        return READERS[fmt](path)
    raise DataFormatError(
        f"not lm-eval --log_samples output, lighteval details or an Inspect log, but a {FORMATS[fmt]}", path
    )
