"""Readers of evaluation-harness outputs: every sample of every question, with the settings recorded.

Two harnesses run this project's tasks and keep what the model said:

* **lm-evaluation-harness**, with ``--log_samples``: a JSONL file ``samples_<task>_<time>.jsonl``,
  one record per question, whose ``filtered_resps`` hold the cleaned answers of the task's
  ``answers`` filter and whose ``arguments`` hold the generation settings of the request;
  the ``results_<time>.json`` beside it names the model and the task's data set and split.
* **lighteval**, with ``--save-details``: a Parquet file ``details_<task>|<shots>_<time>.parquet``,
  one row per question, whose ``model_response.text`` holds the raw continuations (cleaned
  here as the task cleans them, :func:`~protoqa_integrations.generation.settings.answer_from_text`);
  the ``results_<time>.json`` of the same run names the model and its generation parameters.

:func:`read_harness_output` reads either into a :class:`HarnessAnswers` (samples per question
id and a ``generation`` block), which ``protoqa-eval convert`` writes as an answers file and
``protoqa-eval leaderboard`` scores. :func:`detect_format` tells the formats a system file may
take apart, by content, not by name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from protoqa_core.io.files import DataFormatError, PathLike, max_input_bytes, parse_json, read_text
from protoqa_integrations.generation.settings import answer_from_text

__all__ = [
    "FORMATS",
    "HarnessAnswers",
    "detect_format",
    "read_harness_output",
    "read_lm_eval_samples",
    "read_lighteval_details",
]

FORMATS: Mapping[str, str] = {
    "answers": "answers file of protoqa-eval generate",
    "predictions": "predictions file (ranked lists or samples)",
    "lm-eval": "lm-evaluation-harness --log_samples output",
    "lighteval": "lighteval details (Parquet)",
}
"""The formats a system file may take, each with the name printed for it."""

_PARQUET_MAGIC = b"PAR1"
_TASK_DATA = {"protoqa": ("protoqa", "validation"), "cfc": ("cfc", "validation")}
"""lighteval's tasks of this project and the data they answer (``protoqa_integrations.harnesses.lighteval_tasks``)."""


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


def detect_format(path: PathLike) -> str:
    """The format of a system file, one of :data:`FORMATS`; raises ``DataFormatError`` when none fits.

    Raises ``FileNotFoundError`` for a missing file and ``DataFormatError`` for a directory or an
    empty file.

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
    path = Path(path)
    if path.is_dir():
        raise DataFormatError("is a directory, not a system file", path)
    if not path.exists():
        raise FileNotFoundError(f"system file not found: {path}")
    if not path.is_file():
        raise DataFormatError("not a regular file (a pipe, a device or a socket)", path)
    head = _head(path)
    if not head.strip():
        raise DataFormatError("the file is empty", path)
    if head.startswith(_PARQUET_MAGIC):
        return "lighteval"
    try:
        text = read_text(path)
    except DataFormatError:
        raise
    first = text.lstrip().split("\n", 1)[0]
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if isinstance(record, dict) and "doc" in record and ("filtered_resps" in record or "resps" in record):
        return "lm-eval"
    try:
        whole = parse_json(text, path)
    except DataFormatError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("model_answers"), dict) and "generation" in whole:
        return "answers"
    if isinstance(whole, dict) or (whole is None and isinstance(record, dict)):
        return "predictions"
    raise DataFormatError(
        "unknown format: not an answers file, a predictions file, lm-eval --log_samples output or lighteval details",
        path,
    )


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


def _without_secrets(model_args: Any) -> Any:
    """``model_args`` less any entry whose name says it holds a key, token or password (not copied into answers files)."""
    if isinstance(model_args, dict):
        secret = ("key", "token", "secret", "password")
        return {k: v for k, v in model_args.items() if not any(word in str(k).lower() for word in secret)}
    return model_args if not isinstance(model_args, str) or "key" not in model_args.lower() else None


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
    samples: dict[str, list[str]] = {}
    lines: dict[str, int] = {}
    sampling: dict[str, Any] = {}
    for number, text in enumerate(read_text(path).split("\n"), start=1):
        if not text.strip():
            continue
        record = parse_json(text, path, number)
        if not isinstance(record, dict) or "doc" not in record:
            raise DataFormatError("not an lm-eval sample record (no 'doc')", path, number)
        if record.get("filter", "answers") != "answers":
            continue  # another filter's view of the same samples
        qid = _question_id(record["doc"], path, number)
        if qid in samples:
            raise DataFormatError(f"duplicate question id (first on line {lines[qid]})", path, number, qid)
        if "filtered_resps" in record:
            filtered = record["filtered_resps"]
            if not isinstance(filtered, list) or len(filtered) != 1:
                raise DataFormatError("expected filtered_resps to hold one list of answers", path, number, qid)
            samples[qid] = _answers(filtered[0], path, number, qid)
        else:
            raw = record.get("resps")
            texts = raw[0] if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], list) else raw
            samples[qid] = [answer_from_text(t) for t in _answers(texts, path, number, qid)]
        lines[qid] = number
        sampling = sampling or _gen_kwargs(record.get("arguments"))
    if not samples:
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
        "model_args": _without_secrets(run.get("model_args")),
        "sampling": sampling,
        "num_samples": max((len(s) for s in samples.values()), default=0),
        "converted_from": str(path),
    }
    if isinstance(kwargs, dict) and kwargs.get("protoqa_config") and kwargs.get("protoqa_split"):
        generation["dataset"], generation["split"] = kwargs["protoqa_config"], kwargs["protoqa_split"]
    return HarnessAnswers(samples, generation)


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
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    if path.stat().st_size > max_input_bytes():
        raise DataFormatError(f"the file is larger than {max_input_bytes() // 2**20} MB", path)
    try:
        rows = pq.read_table(path, columns=["doc", "model_response"]).to_pylist()
    except (pa.ArrowException, KeyError, OSError) as exc:
        raise DataFormatError(f"not lighteval details: {' '.join(str(exc).split())[:200]}", path) from None
    samples: dict[str, list[str]] = {}
    for number, row in enumerate(rows, start=1):
        doc, response = row.get("doc") or {}, row.get("model_response") or {}
        specific = doc.get("specific") or {}
        qid = _question_id(specific.get("row") if isinstance(specific, dict) else None, path, number)
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
    return HarnessAnswers(samples, generation)


def read_harness_output(path: PathLike, fmt: Optional[str] = None) -> HarnessAnswers:
    """lm-eval samples or lighteval details, the format detected unless ``fmt`` names it.

    >>> read_harness_output("README.md")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DataFormatError: README.md: ...
    """
    fmt = fmt or detect_format(path)
    if fmt == "lm-eval":
        return read_lm_eval_samples(path)
    if fmt == "lighteval":
        return read_lighteval_details(path)
    raise DataFormatError(f"not lm-eval --log_samples output or lighteval details, but a {FORMATS[fmt]}", path)
