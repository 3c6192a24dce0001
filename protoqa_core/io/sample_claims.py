"""A predictions file's recorded samples per question (its ``generation`` block's :data:`SAMPLE_COUNT_KEYS`),
checked against the samples it holds: KL depends on that number, so every reader refuses a claim that disagrees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from protoqa_core.io.files import short_repr

__all__ = ["SAMPLE_COUNT_KEYS", "SampleClaimError", "check_counted_samples", "recorded_sampling"]

SAMPLE_COUNT_KEYS = ("samples", "num_samples", "n", "repeats")
"""The names a generation block gives the samples per question, at its top or in its ``sampling``."""

_UNSET = ("", "none", "null")


class SampleClaimError(ValueError):
    """A recorded samples count that is no number, or that disagrees with the samples a file holds."""


def recorded_sampling(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A generation block's sampling settings as a mapping: a dict as the harnesses record it, or the
    ``key:value|...`` signature ``protoqa-eval generate`` writes.

    >>> recorded_sampling({"sampling": "temperature:0.69|top_p:0.9"}), recorded_sampling({"sampling": {"n": 3}})
    ({'temperature': '0.69', 'top_p': '0.9'}, {'n': 3})
    """
    sampling = settings.get("sampling")
    if isinstance(sampling, Mapping):
        return dict(sampling)
    if isinstance(sampling, str):
        pairs = (part.partition(":") for part in sampling.split("|"))
        return {key: value for key, sep, value in pairs if sep}
    return {}


def _count(value: Any, name: str, key: str) -> Optional[str]:
    if value is None or (isinstance(value, str) and value.strip().lower() in _UNSET):
        return None
    number: Optional[float] = None
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except (ValueError, OverflowError):
            number = None
    if number is None or number != number or number in (float("inf"), float("-inf")):
        raise SampleClaimError(
            f"{name} records {key} as {short_repr(value)}, which is not a finite number: correct the value in its "
            "generation block, or remove it (a value left out is not checked)"
        )
    return str(int(number)) if number.is_integer() else repr(number)


def check_counted_samples(settings: Optional[Mapping[str, Any]], counted: int, name: str) -> None:
    """Refuse settings whose recorded samples per question disagree with ``counted``, the most samples any
    question of the file carries (nothing is checked for a file without samples).

    >>> check_counted_samples({"num_samples": 300, "sampling": "temperature:0.69|samples:300"}, 300, "a.json")
    >>> check_counted_samples({"num_samples": 30, "sampling": {"n": 300}}, 300, "a.json")
    Traceback (most recent call last):
    ...
    protoqa_core.io.sample_claims.SampleClaimError: a.json records 30 samples per question (num_samples), but its questions carry at most 300: correct the recorded count, or remove it
    """
    if not isinstance(settings, Mapping) or not settings or counted <= 0:
        return
    sampling = recorded_sampling(settings)
    claims = [(k, settings.get(k)) for k in SAMPLE_COUNT_KEYS]
    claims += [(f"sampling {k}", sampling.get(k)) for k in SAMPLE_COUNT_KEYS]
    for key, value in claims:
        recorded = _count(value, name, key)
        if recorded is not None and recorded != str(counted):
            raise SampleClaimError(
                f"{name} records {recorded} samples per question ({key}), but its questions carry at most "
                f"{counted}: correct the recorded count, or remove it"
            )
