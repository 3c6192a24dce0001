"""The input gate of both metrics: which question ids are scored, missing or ignored.

A prediction for an id not among the targets is an error (most often the wrong targets file) unless
ignored on request; every caller goes through :func:`reconcile_ids`, so the rule and message are one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Optional, Union

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import preview_ids

__all__ = ["IdReconciliation", "reconcile_ids", "unknown_ids_message", "unknown_ids_error"]


@dataclass(frozen=True)
class IdReconciliation:
    """How prediction ids meet the targets' ids: ``kept`` and ``ignored`` (not among the targets) in
    prediction order, ``missing`` targets in target order, and the warning for the ignored (else None)."""

    kept: tuple[str, ...]
    missing: tuple[str, ...]
    ignored: tuple[str, ...]
    message: Optional[str] = None


def unknown_ids_message(unknown: Sequence[str], ignored: bool, none_known: bool = False) -> str:
    """The one text for prediction ids not among the targets; with ``none_known`` (no id is) it does not
    suggest dropping them, which would leave nothing to score.

    >>> unknown_ids_message(["q9"], ignored=False)
    'predictions for 1 question id(s) that are not in the targets: q9 (pass ignore_unknown=True / --ignore-unknown to drop them)'
    >>> unknown_ids_message(["q9", "q8"], ignored=True)
    'ignored predictions for 2 question id(s) that are not in the targets: q9, q8'
    >>> unknown_ids_message(["q9", "q8"], ignored=False, none_known=True)
    'none of the 2 question id(s) of the predictions is in the targets (q9, q8): they answer other questions; score them against their own targets'
    """
    if none_known and not ignored:
        return (
            f"none of the {len(unknown)} question id(s) of the predictions is in the targets "
            f"({preview_ids(unknown)}): they answer other questions; score them against their own targets"
        )
    text = f"predictions for {len(unknown)} question id(s) that are not in the targets: {preview_ids(unknown)}"
    if ignored:
        return "ignored " + text
    return text + " (pass ignore_unknown=True / --ignore-unknown to drop them)"


def unknown_ids_error(
    unknown: Sequence[str],
    *,
    none_known: bool,
    path: Optional[Union[str, os.PathLike]] = None,
    line: Optional[int] = None,
) -> DataFormatError:
    """The error for prediction ids not among the targets, naming the first; ``none_known``: no prediction id is.

    >>> print(unknown_ids_error(["q9"], none_known=True, path="p.json", line=2))
    p.json, line 2, question 'q9': none of the 1 question id(s) of the predictions is in the targets (q9): they answer other questions; score them against their own targets
    """
    return DataFormatError(unknown_ids_message(unknown, ignored=False, none_known=none_known), path, line, unknown[0])


def reconcile_ids(
    targets: Iterable[str],
    predictions: Iterable[str],
    *,
    ignore_unknown: bool = False,
    path: Optional[Union[str, os.PathLike]] = None,
    locate: Optional[Callable[[str], Optional[int]]] = None,
) -> IdReconciliation:
    """Split the prediction ids into kept and ignored, and list the targets without predictions.

    An unknown id is a :class:`DataFormatError` naming the first (with ``path`` and ``locate(id)``'s line)
    unless ``ignore_unknown``. One pass over each side.

    >>> r = reconcile_ids({"q1": 1, "q2": 2}, {"q2": ["dog"], "q9": ["cat"]}, ignore_unknown=True)
    >>> r.kept, r.missing, r.ignored
    (('q2',), ('q1',), ('q9',))
    >>> r.message
    'ignored predictions for 1 question id(s) that are not in the targets: q9'
    >>> reconcile_ids(["q1", "q2"], ["q1", "q9"], path="p.json")
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: p.json, question 'q9': predictions for 1 question id(s) that are not in the targets: q9 (pass ignore_unknown=True / --ignore-unknown to drop them)
    >>> reconcile_ids(["q1"], ["q9"], path="p.json")
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: p.json, question 'q9': none of the 1 question id(s) of the predictions is in the targets (q9): they answer other questions; score them against their own targets
    """
    target_ids = list(targets)
    known = set(target_ids)
    kept: list[str] = []
    unknown: list[str] = []
    for qid in predictions:
        (kept if qid in known else unknown).append(qid)
    if unknown and not ignore_unknown:
        line = locate(unknown[0]) if locate is not None else None
        raise unknown_ids_error(unknown, none_known=not kept, path=path, line=line)
    predicted = set(kept)
    missing = tuple(qid for qid in target_ids if qid not in predicted)
    return IdReconciliation(
        tuple(kept), missing, tuple(unknown), unknown_ids_message(unknown, ignored=True) if unknown else None
    )
