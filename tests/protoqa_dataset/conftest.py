"""The dataset tests' fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def shared(shared_data: Path) -> Path:
    """``../shared/data``, the layouts the builder and the export read; the tests skip without it."""
    return shared_data
