"""The names of the ProtoQA metrics as the tests expect them, written out once rather than read from the code."""

from __future__ import annotations

STANDARD_NAMES = (
    "max_answers@1",
    "max_answers@3",
    "max_answers@5",
    "max_answers@10",
    "max_answers@all",
    "max_incorrect@1",
    "max_incorrect@3",
    "max_incorrect@5",
    "max_incorrect@all",
    "set_intersection",
)
"""The reference evaluator's metrics, in its order (the ``standard`` set)."""

PAPER_KEYS = (
    "max_answers@1",
    "max_answers@3",
    "max_answers@5",
    "max_answers@10",
    "max_incorrect@1",
    "max_incorrect@3",
    "max_incorrect@5",
)
"""The metrics of the paper's tables (the ``paper`` set)."""
