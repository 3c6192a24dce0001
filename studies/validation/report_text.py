"""Helpers shared by the study's report writers: figures as text, JSON without NaN.

>>> ci_text(0.51234, {"low": 0.4, "high": 0.6})
'0.512 [0.400, 0.600]'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

__all__ = ["DATASET_LABELS", "SAMPLING_LABELS", "fmt", "clean", "write_json", "ci_text"]

DATASET_LABELS = {"protoqa_dev": "ProtoQA dev", "cfc_dev": "CFC dev", "cfc_test": "CFC test"}
SAMPLING_LABELS = {
    "centered": "centered",
    "missing_answers": "missing answers",
    "wrong_ranking": "wrong ranking",
    "wrong_score": "wrong score",
}


def fmt(value: Optional[float], digits: int = 3) -> str:
    """A figure with ``digits`` decimals, ``n/a`` for None or NaN.

    >>> fmt(0.12345), fmt(float("nan")), fmt(12.0, 0)
    ('0.123', 'n/a', '12')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def clean(value: Any) -> Any:
    """JSON-ready: NaN becomes null, floats are rounded to 6 places.

    >>> clean({"a": [float("nan"), 0.1234567]})
    {'a': [None, 0.123457]}
    """
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else round(value, 6)
    if isinstance(value, Mapping):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` (:func:`clean`) as indented UTF-8 JSON with a final newline."""
    path.write_text(json.dumps(clean(data), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def ci_text(point: Optional[float], ci: Optional[Mapping[str, float]]) -> str:
    """A figure with its interval, ``point [low, high]``, or the figure alone without one.

    >>> ci_text(0.5, None), ci_text(None, None)
    ('0.500', 'n/a')
    """
    if point is None or (isinstance(point, float) and math.isnan(point)):
        return "n/a"
    if not ci:
        return fmt(point)
    return f"{fmt(point)} [{fmt(ci['low'])}, {fmt(ci['high'])}]"
