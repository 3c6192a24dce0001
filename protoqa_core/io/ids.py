"""The input gate of both metrics: which question ids are scored, missing or ignored.

Targets and predictions are matched by question id. A prediction for an id that is
not among the targets is an error (most often the wrong targets file), unless the
caller asks to ignore such ids; then they are dropped and named in one warning.
Both metrics, their ``evaluate`` modules and both command lines go through
:func:`reconcile_ids`, so the rule and its message are the same everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Optional, Union

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import preview_ids

__all__ = ["IdReconciliation", "reconcile_ids", "unknown_ids_message"]


@dataclass(frozen=True)
class IdReconciliation:
    """How the ids of a predictions mapping meet the targets' ids.

    Attributes:
        kept: prediction ids that are among the targets, in prediction order.
        missing: target ids without predictions, in target order.
        ignored: prediction ids not among the targets, dropped (only with
            ``ignore_unknown``), in prediction order.
        message: the warning to show when ids were ignored, else None.
    """

    kept: tuple[str, ...]
    missing: tuple[str, ...]
    ignored: tuple[str, ...]
    message: Optional[str] = None


def unknown_ids_message(unknown: Sequence[str], ignored: bool, none_known: bool = False) -> str:
    """The one text for prediction ids that are not among the targets.

    With ``none_known`` (no prediction id is among the targets) the predictions answer another
    data set: dropping their ids would leave nothing to score, so the text does not suggest it.

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


def reconcile_ids(
    targets: Iterable[str],
    predictions: Iterable[str],
    *,
    ignore_unknown: bool = False,
    path: Optional[Union[str, os.PathLike]] = None,
    locate: Optional[Callable[[str], Optional[int]]] = None,
) -> IdReconciliation:
    """Split the prediction ids into kept and ignored, and list the targets without predictions.

    ``targets`` and ``predictions`` are iterables of ids (a mapping gives its keys).
    A prediction id that is not among the targets raises :class:`DataFormatError`
    naming the first such id (and ``path`` and the line ``locate(id)`` returns, when
    given) unless ``ignore_unknown`` is set; then the ids are returned as ``ignored``
    with a ``message`` for the caller to warn with. Costs one pass over each side.

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
        raise DataFormatError(unknown_ids_message(unknown, ignored=False, none_known=not kept), path, line, unknown[0])
    predicted = set(kept)
    missing = tuple(qid for qid in target_ids if qid not in predicted)
    return IdReconciliation(
        tuple(kept), missing, tuple(unknown), unknown_ids_message(unknown, ignored=True) if unknown else None
    )
