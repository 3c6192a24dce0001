"""What leaves the tool: a ``generation`` block cut to the fields this project defines (an allowlist).

What other tools record beside a run's settings (lm-eval's ``model_args``, a harness's configs,
a server's address) is free text that may hold a key in any of many shapes, and a list of shapes
to remove always misses one. So only the fields of :data:`FIELDS` are written, each of its kind
(names redacted as a second line, counts, checksums, settings kept for :data:`SETTING_KEYS`,
addresses as scheme, host and path); everything else is left out (docs/evaluate-a-model.md).

>>> shareable({"model": "gpt2", "model_args": "pretrained=gpt2,api_key='sk-x',dtype=float16", "notes": "pw=hunter2",
...            "engine_details": {"base_url": "https://u:pw@h.example/v1?key=k", "x-api-key": "k"}})
{'model': 'gpt2', 'model_args': 'pretrained=gpt2,dtype=float16', 'engine_details': {'base_url': 'https://h.example/v1'}}
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Optional
from urllib.parse import urlsplit, urlunsplit

from protoqa_core.redaction import redact_text

__all__ = ["FIELDS", "SETTING_KEYS", "USAGE_KEYS", "shareable", "shareable_location"]

_MAX_TEXT = 300
"""The longest text kept in a shared field; a system prompt may be longer."""
_MAX_PROMPT_TEXT = 4000
_MAX_ITEMS = 10_000
"""The most entries of one list or mapping kept (per-question notes of the largest data set fit)."""

SETTING_KEYS = frozenset(
    {
        # sampling, under the names each tool gives them
        "samples", "num_samples", "n", "repeats", "num_choices", "temperature", "top_p", "top_k", "min_p",
        "max_tokens", "max_new_tokens", "max_gen_toks", "max_length", "stop", "stop_seqs", "until", "do_sample",
        "seed", "rng", "batch", "batch_size", "repetition_penalty", "presence_penalty", "frequency_penalty",
        "length_penalty", "num_beams", "best_of", "logprobs", "greedy",
        # engines, servers and models as this project's engines and the harnesses' backends record them
        "engine", "model", "model_name", "pretrained", "revision", "chat", "device", "dtype", "model_path",
        "model_commit", "tokenizer", "torch", "transformers", "vllm", "max_n", "request_seeds", "base_url",
        "reply_model", "served_model_id", "served_model_root", "server_version", "tensor_parallel_size",
        "pipeline_parallel_size", "data_parallel_size", "gpu_memory_utilization", "max_model_len",
        "enforce_eager", "trust_remote_code", "num_concurrent", "max_retries", "tokenized_requests",
        "parallelize", "add_bos_token", "max_batch_size", "timeout", "concurrency", "provider",
    }
)  # fmt: skip
"""The keys kept in a settings field (``sampling``, ``engine``, ``engine_details``, ``model_args``)."""

USAGE_KEYS = frozenset(
    {"prompt_tokens", "completion_tokens", "total_tokens", "input_tokens", "output_tokens", "requests"}
)
"""The keys kept in ``usage`` (tokens spent), whole numbers only."""

FIELDS: Mapping[str, str] = {
    "model": "text",
    "dataset": "text",
    "split": "text",
    "prompt": "text",
    "system_prompt": "prompt",
    "harness": "text",
    "task": "text",
    "backend": "text",
    "version": "text",
    "dtype": "text",
    "revision": "text",
    "reply_model": "text",
    "limit": "count",
    "num_samples": "count",
    "num_questions": "count",
    "seed": "count",
    "questions_sha256": "checksum",
    "questions_from": "location",
    "converted_from": "location",
    "sampling": "settings",
    "engine": "settings",
    "engine_details": "settings",
    "model_args": "settings",
    "usage": "usage",
    "empty_samples": "counts by question",
    "skipped": "texts by question",
    "questions_without_answer": "question ids",
    "collapsed_questions": "question ids",
}
"""The fields of a ``generation`` block that are shared, each with its kind (module doc)."""

_COLLAPSED_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):/+(?P<rest>[^/].*)$")
_ASSIGNMENT = re.compile(r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(?P<value>'[^']*'|\"[^\"]*\"|[^,]*)\s*(?:,|$)")


def _looks_like_url(text: str) -> bool:
    return bool(_COLLAPSED_SCHEME.match(text)) and ":/" in text[:20]


def shareable_location(text: str) -> str:
    """An address as shared: scheme, host, port and path (no user, password, query or fragment), a path
    (a ``//`` collapsed by a path operation repaired first) as it is, redacted.

    >>> shareable_location("https://me:pw@h.example:8443/v1?api_key=k#f"), shareable_location("https:/me:pw@h/x")
    ('https://h.example:8443/v1', 'https://h/x')
    >>> shareable_location("../shared/data/cfc/dev.questions.jsonl")
    '../shared/data/cfc/dev.questions.jsonl'
    """
    collapsed = _COLLAPSED_SCHEME.match(text)
    if collapsed is None or len(collapsed.group("scheme")) < 2:  # ``C:/...`` is a Windows path
        return redact_text(text[:_MAX_PROMPT_TEXT])
    try:
        parts = urlsplit(f"{collapsed.group('scheme')}://{collapsed.group('rest')}")
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return f"{collapsed.group('scheme')}://"  # an address that cannot be taken apart keeps only its scheme
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    return redact_text(urlunsplit((parts.scheme, netloc, parts.path, "", "")))[:_MAX_PROMPT_TEXT]


def _text(value: Any, most: int = _MAX_TEXT) -> Optional[str]:
    if not isinstance(value, str):
        return None
    return shareable_location(value) if _looks_like_url(value) else redact_text(value[:most])


def _scalar(value: Any) -> Any:
    """A setting's value as shared: a switch, a finite number, a short text, or a short list of them; else None."""
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, (list, tuple)):
        items = (_scalar(item) for item in value[:100] if not isinstance(item, (list, tuple, Mapping)))
        return [item for item in items if item is not None]
    return None


def _unquoted(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else text


def _settings(value: Any) -> Any:
    """A settings field kept for the keys of :data:`SETTING_KEYS`, in the form it came in (mapping or text)."""
    if isinstance(value, Mapping):
        pairs = list(value.items())[:_MAX_ITEMS]
        # a setting recorded as null (no revision, say) stays null: "not set" is information too
        return {k: _scalar(v) for k, v in pairs if k in SETTING_KEYS and (v is None or _scalar(v) is not None)}
    if not isinstance(value, str):
        return None
    if not any(mark in value for mark in "=:|"):  # a bare name (an engine's, say)
        return _text(value)
    if "|" in value or ("=" not in value and ":" in value):  # a sampling signature, key:value|...
        parts = [part.partition(":") for part in value.split("|")]
        return "|".join(f"{key}:{_text(item)}" for key, sep, item in parts if sep and key in SETTING_KEYS)
    found = [(m.group("key"), _unquoted(m.group("value"))) for m in _ASSIGNMENT.finditer(value)]
    return ",".join(f"{key}={_text(item)}" for key, item in found if key in SETTING_KEYS)


def _by_question(value: Any, kind: str) -> Any:
    if kind == "question ids":
        if not isinstance(value, list):
            return None
        return [_text(item) for item in value[:_MAX_ITEMS] if isinstance(item, str)]
    if not isinstance(value, Mapping):
        return None
    out: dict[Optional[str], Any] = {}
    for qid, item in list(value.items())[:_MAX_ITEMS]:
        if kind == "counts by question" and isinstance(item, int) and not isinstance(item, bool):
            out[_text(str(qid))] = item
        elif kind == "texts by question" and isinstance(item, str):
            out[_text(str(qid))] = _text(item)
    return out


def _field(kind: str, value: Any) -> Any:
    """One field's value as shared (None: left out)."""
    if kind == "text":
        return _text(value)
    if kind == "prompt":
        return _text(value, _MAX_PROMPT_TEXT)
    if kind == "count":
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if kind == "checksum":
        return value if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) else None
    if kind == "location":
        return shareable_location(value) if isinstance(value, str) else None
    if kind == "settings":
        return _settings(value)
    if kind == "usage":
        if not isinstance(value, Mapping):
            return None
        return {k: v for k, v in value.items() if k in USAGE_KEYS and isinstance(v, int) and not isinstance(v, bool)}
    return _by_question(value, kind)


def shareable(generation: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """``generation`` with only the fields of :data:`FIELDS`, each kept as its kind allows (module doc); a field
    whose value is not of its kind is left out too. Its order is kept.

    >>> shareable({"dataset": "cfc", "num_samples": 30, "sampling": "samples:30|api_key:k|temperature:0.69",
    ...            "questions_from": "https:/user:pw@host/data/cfc.jsonl?token=t", "metadata": {"token": "t"}})
    {'dataset': 'cfc', 'num_samples': 30, 'sampling': 'samples:30|temperature:0.69', 'questions_from': 'https://host/data/cfc.jsonl'}
    """
    if not isinstance(generation, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key, value in generation.items():
        kind = FIELDS.get(key) if isinstance(key, str) else None
        if kind is None or value is None:
            if kind is not None:
                out[key] = None
            continue
        kept = _field(kind, value)
        if kept is not None:
            out[key] = kept
    return out
