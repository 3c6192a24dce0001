"""Where the checkout is, and the read-only copies of the public data beside it, named once for the test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
"""The checkout's root."""

DATA = REPO.parent / "shared" / "data"
"""``../shared/data`` next to the checkout: the ProtoQA and CFC files as published."""

PROTOQA_DEV = DATA / "protoqa" / "dev.crowdsourced.jsonl"
CFC_DEV = DATA / "cfc" / "dev.targets.jsonl"
CFC_TEST = DATA / "cfc" / "test.targets.jsonl"

needs_data = pytest.mark.skipif(
    not all(p.is_file() for p in (PROTOQA_DEV, CFC_DEV, CFC_TEST)), reason=f"shared data not found under {DATA}"
)
"""Skips a test when the shared ProtoQA and CFC files are not there."""
