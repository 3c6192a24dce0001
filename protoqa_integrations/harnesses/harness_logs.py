"""What each evaluation harness wrote: every sample of every question, with the settings recorded.

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

Each reader gives a :class:`HarnessAnswers` (samples per question id and a ``generation`` block);
:mod:`protoqa_integrations.harnesses.outputs` tells the formats apart and reads a system file of any
of them in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from protoqa_core.install import install_command
from protoqa_core.io.files import DataFormatError, InputDeadline, PathLike, max_input_bytes, short_repr
from protoqa_core.io.json_values import iter_text_lines, parse_json, read_text
from protoqa_core.io.predictions import duplicate_id_error, too_many_answers_error
from protoqa_core.redaction import redact
from protoqa_integrations.generation.settings import answer_from_text, sampling_words
from protoqa_integrations.harnesses.archives import ZIP_MAGIC, check_archive, exception_reason

__all__ = [
    "MAX_COMPLETION_CHARS",
    "HarnessAnswers",
    "Keep",
    "KeepOnce",
    "READERS",
    "read_lm_eval_samples",
    "lm_eval_samples",
    "read_lighteval_details",
    "lighteval_details",
    "read_inspect_log",
]

MAX_COMPLETION_CHARS = 2000
"""A completion (or an answer) a harness recorded is cut to its first this many characters before it is
cleaned and matched: an answer is the first line of a completion, and the metric reads 50 characters of it,
so a completion of hundreds of megabytes costs no more than a short one."""
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
    """Every sample per question id (``""`` for none) and the settings recorded (``generation``).

    ``dataset`` and ``split`` are there when the run says so: what ``score-generated`` needs.
    """

    samples: dict[str, list[str]]
    generation: dict[str, Any] = field(default_factory=dict)


def _cut(text: Any) -> Any:
    """A completion cut to :data:`MAX_COMPLETION_CHARS` characters (anything else as it is, for the checks).

    >>> len(_cut("a" * 5000)), _cut(None)
    (2000, None)
    """
    return text[:MAX_COMPLETION_CHARS] if isinstance(text, str) else text


def _head(path: Path, size: int = 4096) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(size)


Keep = Callable[[Optional[str], str, Optional[int]], bool]
"""Called with ``(field, question id, line)`` for every answer list a system file holds (``field`` None
outside ``model_answers``-style files, ``line`` None where there is none); says whether to keep it.
It may raise, for a repeated id say; :class:`KeepOnce` keeps everything once, the readers' default."""


class KeepOnce:
    """The default :data:`Keep`: keeps every answer list, refusing a question id given twice in one field."""

    def __init__(self, path: Path):
        self.path = path
        self.lines: dict[tuple[Optional[str], str], Optional[int]] = {}

    def __call__(self, group: Optional[str], qid: str, line: Optional[int]) -> bool:
        if (group, qid) in self.lines:
            raise duplicate_id_error(self.path, line, qid, self.lines[group, qid])
        self.lines[group, qid] = line
        return True


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
    """The answer strings of a record, each cut to :data:`MAX_COMPLETION_CHARS` characters."""
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise DataFormatError("expected a list of answer strings", path, line, qid)
    return [_cut(a) for a in value]


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

    A file without the ``answers`` filter's ``filtered_resps`` is cleaned here from ``resps``;
    ``model``, ``dataset`` and ``split`` come from the run's results file.

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
    return lm_eval_samples(iter_text_lines(path), path, KeepOnce(path))


def lm_eval_samples(
    lines: Iterable[tuple[int, str]],
    path: Path,
    keep: Keep,
    max_answers: Optional[int] = None,
    *,
    parsed: Optional[tuple[int, Any]] = None,
) -> HarnessAnswers:
    """:func:`read_lm_eval_samples` of the file's lines, keeping the questions ``keep`` keeps.

    ``parsed`` is ``(line, record)``: a line already parsed to tell the format, not parsed again.
    """
    samples: dict[str, list[str]] = {}
    sampling: dict[str, Any] = {}
    records = most = 0
    for number, text in lines:
        if not text.strip():
            continue
        record = parsed[1] if parsed is not None and number == parsed[0] else parse_json(text, path, number)
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
        "sampling": sampling_words(sampling),
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

    >>> read_lighteval_details("details_cfc|0_2026-01-01T00-00-00.parquet").samples  # doctest: +SKIP
    {'r1q1': ['dancing', ...], ...}
    """
    path = Path(path)
    if path.stat().st_size > max_input_bytes():
        raise DataFormatError(f"the file is larger than {max_input_bytes() // 2**20} MB", path)
    return lighteval_details(path, path)


def lighteval_details(source: Any, path: Path) -> HarnessAnswers:
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
        "sampling": sampling_words(model_config.get("generation_parameters") or {}),
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


def _inspect_header(path: Path, log_format: Literal["eval", "json"]) -> Any:
    """The header of a finished Inspect run of this project's task (no samples read)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DataFormatError(f"reading an Inspect log needs inspect-ai: {install_command('inspect')}", path) from None
    try:
        header = read_eval_log(str(path), header_only=True, format=log_format)
    except Exception as exc:  # noqa: BLE001 (inspect-ai raises KeyError, ValueError, zstd errors, ... for a foreign log)
        raise DataFormatError(f"not a readable Inspect log: {exception_reason(exc)}", path) from None
    if header.eval.task.rsplit("/", 1)[-1] not in _INSPECT_TASKS:
        raise DataFormatError(
            f"an Inspect log of task {header.eval.task!r}, not of this project's protoqa or cfc task", path
        )
    if header.status != "success":
        raise DataFormatError(f"the Inspect run did not finish (status {header.status!r}); score a finished run", path)
    return header


def _inspect_samples(
    path: Path, log_format: Literal["eval", "json"], prompt: str, deadline: InputDeadline
) -> dict[str, list[str]]:
    """Every question's completions, cut and cleaned for the task's ``prompt``, one sample at a time."""
    from inspect_ai.log import read_eval_log_samples

    from protoqa_integrations.harnesses.inspect_tasks import clean_answers

    samples: dict[str, list[str]] = {}
    try:
        # The events (every model call, by far the bulk of a log) are not read; long completions may be
        # stored once as attachments, which are resolved.
        read = read_eval_log_samples(str(path), resolve_attachments=True, format=log_format, exclude_fields={"events"})
        for sample in read:
            deadline.check()
            qid = str(sample.id)
            if qid in samples:
                raise DataFormatError(
                    "the question appears twice (a run of several epochs); run one epoch", path, None, qid
                )
            if sample.error is not None:
                raise DataFormatError(
                    f"the sample failed: {' '.join(str(sample.error.message).split())[:200]}", path, None, qid
                )
            texts = [_cut(choice.message.text) for choice in sample.output.choices]
            samples[qid] = clean_answers(texts, prompt)
    except DataFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 (as for the header: one line for any damaged sample)
        if log_format == "json" and re.match(r"Sample id .+ not found in log", str(exc)):
            _refuse_repeated_sample(path)  # inspect-ai names the sample the repeated one displaced
        raise DataFormatError(f"cannot read the log's samples: {exception_reason(exc)}", path) from None
    if not samples:
        raise DataFormatError("the log holds no samples (run without --no-log-samples)", path)
    return samples


def _refuse_repeated_sample(path: Path) -> None:
    """Name the question a JSON log holds twice for one epoch (read whole: the log is under the input cap)."""
    log = parse_json(read_text(path), path)
    seen: set[tuple[str, Any]] = set()
    listed = log.get("samples") if isinstance(log, dict) else None
    for sample in listed if isinstance(listed, list) else []:
        if isinstance(sample, dict):
            key = (str(sample.get("id")), sample.get("epoch"))
            if key in seen:
                raise DataFormatError(
                    f"the log holds the sample of epoch {short_repr(key[1])} twice", path, None, key[0]
                )
            seen.add(key)


def read_inspect_log(path: PathLike) -> HarnessAnswers:
    """Samples per question from an Inspect AI eval log of this project's ``protoqa`` or ``cfc`` task.

    ``sampling`` holds the generation settings that ran (the task's, with the command line's over
    them). Reading needs ``inspect-ai``: a ``.eval`` log is a zstd-compressed archive.

    >>> read_inspect_log("logs/2026-01-01T00-00-00_protoqa_abc.eval").samples  # doctest: +SKIP
    {'r1q1': ['sunscreen', ...], ...}
    """
    path = Path(path)
    deadline = InputDeadline(path)
    if path.stat().st_size > max_input_bytes():
        raise DataFormatError(f"the file is larger than {max_input_bytes() // 2**20} MB", path)
    archive = _head(path, 4).startswith(ZIP_MAGIC)
    if archive:
        check_archive(path, deadline)
    log_format: Literal["eval", "json"] = "eval" if archive else "json"
    header = _inspect_header(path, log_format)
    run, args = header.eval, dict(header.eval.task_args or {})
    prompt = args.get("prompt", "base")
    if prompt not in ("base", "chat"):
        raise DataFormatError(f"the task ran with an unknown prompt {str(prompt)[:60]!r}", path)
    samples = _inspect_samples(path, log_format, prompt, deadline)
    config = header.plan.config.model_dump(exclude_none=True) if header.plan is not None else {}
    asked, counted = args.get("samples"), max((len(s) for s in samples.values()), default=0)
    if asked is not None and asked != counted:
        raise DataFormatError(
            f"the task's 'samples' argument says {short_repr(asked)} samples, but the log's questions carry at most "
            f"{counted}: the count is taken from the samples, and a log that disagrees with itself is refused",
            path,
        )
    task = run.task.rsplit("/", 1)[-1]
    generation: dict[str, Any] = {
        "harness": "inspect",
        "task": task,
        "model": run.model,
        "model_args": dict(run.model_args or {}),
        "sampling": sampling_words({key: config[key] for key in _INSPECT_SAMPLING if key in config}),
        # as `protoqa-eval generate --prompt` and the other harnesses' outputs name it, so that they compare
        "prompt": _INSPECT_PROMPTS[task, prompt],
        "num_samples": counted,
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
