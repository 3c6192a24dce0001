"""Reproducibility signatures, in the spirit of sacrebleu's.

A signature is a short ``key:value|key:value`` string printed with every result, so
that two reported numbers can be checked to come from the same settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

__all__ = ["make_signature", "settings_signature"]


def make_signature(
    similarity: str,
    metrics: str,
    missing: str,
    num_questions: int,
    all_stopword_match: Optional[bool] = None,
    approximated: int = 0,
    uncounted: int = 0,
) -> str:
    """Build the signature of a ProtoQA evaluation.

    The WordNet version only for WordNet similarities; ``approx:N`` when ``N > 0`` values were lower
    bounds, ``uncounted:N`` when ``N > 0`` questions had no crowd counts for ``roberta``.

    >>> make_signature("exact_match", "standard", "zero", 52)  # doctest: +ELLIPSIS
    'sim:exact_match|metrics:standard|missing:zero|n:52|version:...'
    """
    from . import __version__

    parts = [f"sim:{similarity}"]
    if all_stopword_match is not None:
        parts.append(f"stop:{'match' if all_stopword_match else 'zero'}")
    parts += [f"metrics:{metrics}", f"missing:{missing}", f"n:{num_questions}"]
    if all_stopword_match is not None:
        from .wordnet.lookup import wordnet_version

        parts.append(f"wordnet:{wordnet_version()}")
    if approximated:
        parts.append(f"approx:{approximated}")
    if uncounted:
        parts.append(f"uncounted:{uncounted}")
    parts.append(f"version:{__version__}")
    return "|".join(parts)


def settings_signature(settings: Mapping[str, Any]) -> str:
    """Settings as a signature: ``key:value`` joined by ``|``, in order, leaving out unset (None) ones.

    Nested settings get dotted keys; lists are comma-separated (for settings another tool recorded).

    >>> settings_signature({"temperature": 0.69, "top_k": None, "stop": ["\\n", "."], "extra": {"seed": 1}})
    'temperature:0.69|stop:\\n,.|extra.seed:1'
    >>> settings_signature({"top_k": None})
    ''
    """
    parts: list[str] = []
    for key, value in settings.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            inner = settings_signature({f"{key}.{k}": v for k, v in value.items()})
            if inner:
                parts.append(inner)
        elif isinstance(value, (list, tuple)):
            parts.append(f"{key}:{','.join(str(v) for v in value)}")
        else:
            parts.append(f"{key}:{value}")
    return "|".join(parts)
