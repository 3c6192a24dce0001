"""Provenance: what an input says about how its answers were made, and whether two inputs are comparable.

Two systems sampled under different settings, or answers to one data set scored against
another's targets, give figures that look comparable and are not: :func:`check_provenance`
refuses them in one line naming the systems and the field (:data:`FIELDS`), unless the user
accepts that field, and then the result says so. The rules are in docs/evaluate-a-model.md.

>>> a = {"dataset": "protoqa", "split": "validation", "sampling": "samples:30|top_p:0.9|temperature:0.69"}
>>> b = {"dataset": "protoqa", "split": "validation", "sampling": "samples:300|top_p:0.9|temperature:0.69"}
>>> check_provenance({"a": a, "b": b})  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
ProvenanceError: a and b differ in samples (a: 30, b: 300): ...
>>> check_provenance({"a": a, "b": b}, accept=["samples"]).accepted
['samples (a: 30, b: 300)']
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from protoqa_core.io.sample_claims import SAMPLE_COUNT_KEYS, recorded_sampling

__all__ = [
    "FIELDS",
    "ProvenanceCheck",
    "ProvenanceError",
    "check_provenance",
    "parse_accepted",
    "mismatch_mark",
    "recorded_provenance",
    "targets_data",
    "data_of_checksum",
]

FIELDS = ("dataset", "split", "questions", "samples", "temperature", "top_p", "max_tokens", "prompt")
"""The provenance fields compared between inputs and against the targets."""

_SAMPLING_NAMES = {
    "samples": SAMPLE_COUNT_KEYS,
    "temperature": ("temperature",),
    "top_p": ("top_p",),
    "max_tokens": ("max_tokens", "max_new_tokens", "max_gen_toks"),
}


class ProvenanceError(ValueError):
    """Inputs that are not comparable: one line naming the systems, the field and how to accept it."""


@dataclass
class ProvenanceCheck:
    """What :func:`check_provenance` found: ``accepted`` mismatches (``field (a: x, b: y)``) and ``notes``."""

    accepted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_UNSET = ("", "none", "null")
"""What a signature writes for a setting left unset (``max_new_tokens:None``): not recorded, not wrong."""


def _wrong_type(name: str, key: str, value: Any, kind: str) -> ProvenanceError:
    from protoqa_core.io.files import short_repr

    return ProvenanceError(
        f"{name} records {key} as {short_repr(value)}, which is not {kind}: correct the value in its generation "
        "block, or remove it (a value left out is not checked)"
    )


def _number(value: Any, name: str = "the input", key: str = "a setting") -> Optional[str]:
    """A recorded number as a comparable string; None when it is not recorded (absent, null, ``none``); a value of
    another type (a switch, a list, text that is no number, NaN) is a :class:`ProvenanceError` naming it.

    >>> _number("0.690"), _number(30.0), _number(None), _number("None")
    ('0.69', '30', None, None)
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in _UNSET):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _wrong_type(name, key, value, "a number")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise _wrong_type(name, key, value, "a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise _wrong_type(name, key, value, "a finite number")
    return str(int(number)) if number.is_integer() else repr(number)


def recorded_provenance(settings: Optional[Mapping[str, Any]], name: str = "the input") -> dict[str, str]:
    """The :data:`FIELDS` an input's settings (its ``generation`` block) record, as comparable strings; a value
    of the wrong type is a :class:`ProvenanceError` naming ``name`` and the value.

    >>> recorded_provenance({"dataset": "cfc", "split": "validation", "num_samples": 100, "prompt": "cfc-one-shot",
    ...                      "sampling": {"temperature": 0.69, "top_p": 0.9, "max_gen_toks": 10}})
    {'dataset': 'cfc', 'split': 'validation', 'samples': '100', 'temperature': '0.69', 'top_p': '0.9', 'max_tokens': '10', 'prompt': 'cfc-one-shot'}
    >>> recorded_provenance({})
    {}
    """
    if not settings:
        return {}
    found: dict[str, str] = {}
    for key in ("dataset", "split", "prompt", "questions_from", "questions_sha256"):
        value = settings.get(key)
        if value is not None and not isinstance(value, str):
            raise _wrong_type(name, key, value, "a text")
    for key in ("dataset", "split"):
        if settings.get(key):
            found[key] = settings[key]
    digest, source = settings.get("questions_sha256"), settings.get("questions_from")
    if digest:
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise _wrong_type(name, "questions_sha256", digest, "a sha256 checksum (64 hex digits)")
        found["questions"] = f"sha256:{digest[:16]}"
    elif source:
        found["questions"] = os.path.basename(source.rstrip("/").split("?", 1)[0])
    sampling = recorded_sampling(settings)
    for field_name, keys in _SAMPLING_NAMES.items():
        values = [_number(settings.get(k), name, k) for k in keys if field_name == "samples"]
        values += [_number(sampling.get(k), name, f"sampling {k}") for k in keys]
        value = next((v for v in values if v is not None), None)
        if value is not None:
            found[field_name] = value
    if settings.get("prompt"):
        found["prompt"] = settings["prompt"]
    return {key: found[key] for key in FIELDS if key in found}


def targets_data(path: os.PathLike[str] | str) -> Optional[tuple[str, str]]:
    """The ``protoqa_dataset`` config and split whose file ``path`` is (by its sha256), None for any other file.

    >>> targets_data("../shared/data/cfc/dev.targets.jsonl")  # doctest: +SKIP
    ('cfc', 'validation')
    """
    from protoqa_core.io.data import sha256_of

    try:
        return data_of_checksum(sha256_of(path)) if Path(path).is_file() else None
    except OSError:
        return None


def data_of_checksum(digest: str) -> Optional[tuple[str, str]]:
    """The ``protoqa_dataset`` config and split whose file has the sha256 ``digest`` (hex), else None.

    >>> data_of_checksum("0" * 64) is None
    True
    """
    from protoqa_dataset.sources import SOURCES

    for config, splits in SOURCES.items():
        for split, source in splits.items():
            if source.sha256 == digest:
                return config, split
    return None


def mismatch_mark(accepted: Sequence[str]) -> str:
    """The mark a signature carries when provenance mismatches were ``accepted`` (``field (a: x, b: y)``, as
    :class:`ProvenanceCheck` lists them), so that a figure scored despite one never passes for a comparable
    one; ``""`` when none was.

    >>> mismatch_mark(["dataset (a.json: protoqa, the targets: cfc)", "split (...)"])
    'accepted-mismatch:dataset,split'
    >>> mismatch_mark([])
    ''
    """
    fields = [a.split(" (", 1)[0] for a in accepted]
    return f"accepted-mismatch:{','.join(fields)}" if fields else ""


def parse_accepted(text: str) -> list[str]:
    """The fields named by ``--accept-mismatch`` (comma-separated, or ``all``), checked (``argparse.ArgumentTypeError``).

    >>> parse_accepted("samples,temperature"), len(parse_accepted("all"))
    (['samples', 'temperature'], 8)
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return list(FIELDS)
    unknown = [n for n in names if n not in FIELDS]
    if unknown or not names:
        # argparse shows this message as it is, for the option it checks
        raise argparse.ArgumentTypeError(
            f"--accept-mismatch takes fields among {', '.join(FIELDS)} or all, got {text!r}"
        )
    return names


def _values(found: Mapping[str, str]) -> str:
    return ", ".join(f"{name}: {value}" for name, value in found.items())


def check_provenance(
    inputs: Mapping[str, Optional[Mapping[str, Any]]],
    targets: Optional[tuple[str, str]] = None,
    accept: Collection[str] = (),
    *,
    targets_name: str = "the targets",
) -> ProvenanceCheck:
    """Check the inputs' recorded provenance against each other and the targets' data set and split.

    ``inputs`` maps each system's name to its settings (None or empty for plain predictions);
    ``targets`` is the targets' ``(config, split)`` when known (:func:`targets_data`).

    >>> check_provenance({"a": {"dataset": "protoqa", "split": "validation"}}, ("cfc", "validation"))
    Traceback (most recent call last):
    ...
    protoqa_integrations.generation.provenance.ProvenanceError: a answers dataset protoqa, the targets are cfc; score it against its own data set's targets, or pass --accept-mismatch dataset to rank it anyway
    """
    recorded = {name: recorded_provenance(settings, name) for name, settings in inputs.items()}
    # A questions file recorded by checksum by some inputs and by name only by others cannot be compared.
    kinds = {found["questions"].startswith("sha256:") for found in recorded.values() if "questions" in found}
    if len(kinds) > 1:
        recorded = {name: {k: v for k, v in found.items() if k != "questions"} for name, found in recorded.items()}
    result = ProvenanceCheck()
    if targets is not None:
        for key, expected in zip(("dataset", "split"), targets, strict=True):
            wrong = {name: found[key] for name, found in recorded.items() if key in found and found[key] != expected}
            if not wrong:
                continue
            first = next(iter(wrong))
            if key not in accept:
                raise ProvenanceError(
                    f"{first} answers {key} {wrong[first]}, {targets_name} are {expected}; score it against its "
                    f"own data set's targets, or pass --accept-mismatch {key} to rank it anyway"
                )
            result.accepted.append(f"{key} ({targets_name}: {expected}, {_values(wrong)})")
    for key in FIELDS:
        values = {name: found[key] for name, found in recorded.items() if key in found}
        if len(set(values.values())) < 2:
            continue
        names = list(values)
        first = names[0]
        other = next(n for n in names if values[n] != values[first])
        if key not in accept:
            raise ProvenanceError(
                f"{first} and {other} differ in {key} ({first}: {values[first]}, {other}: {values[other]}): "
                f"their figures are not comparable; make them under the same settings, or pass "
                f"--accept-mismatch {key} to rank them anyway"
            )
        described = f"{key} ({_values(values)})"
        if not any(a.startswith(f"{key} (") for a in result.accepted):
            result.accepted.append(described)
    for name, settings in inputs.items():
        asked, answered = _reply_model(settings)
        if asked and answered and asked != answered:
            result.notes.append(
                f"{name}: the server answered as model {answered!r} when asked for {asked!r} (a dated snapshot of "
                "it, or another model): compare the systems knowing it"
            )
    if len(inputs) > 1 or targets is not None:
        plain = [name for name, found in recorded.items() if not found]
        if plain:
            result.notes.append(
                f"{_listed(plain)} record{'s' if len(plain) == 1 else ''} no provenance (plain predictions): data "
                "set, split, questions, samples per question, sampling settings and prompt could not be checked"
            )
        for name, found in recorded.items():
            missing = [f for f in FIELDS if found and f not in found and f != "questions"]
            if missing:
                result.notes.append(f"{name} does not record {', '.join(missing)}: not checked")
    return result


def _reply_model(settings: Optional[Mapping[str, Any]]) -> tuple[Optional[str], Optional[str]]:
    """The model asked for and the one the replies named (``engine_details``), each None when not recorded."""
    details = settings.get("engine_details") if settings else None
    if not isinstance(details, Mapping):
        return None, None
    asked, answered = details.get("model"), details.get("reply_model")
    return (asked if isinstance(asked, str) else None), (answered if isinstance(answered, str) else None)


def _listed(names: list[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
