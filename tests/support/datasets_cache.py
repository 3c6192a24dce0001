"""The ``datasets`` library kept off the Hub and out of the user's cache, for the tests of the dataset builder and export."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoqa_core.io.data import DATA_DIR_ENV


def offline_datasets(patch: pytest.MonkeyPatch, cache: Path) -> Path:
    """``datasets``' caches moved to ``cache``, the Hub switched off and no data folder taken from the environment,
    through ``patch`` (undone with it); returns ``cache``."""
    import datasets

    patch.setenv("HF_DATASETS_CACHE", str(cache))
    patch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    patch.setattr(datasets.config, "DOWNLOADED_DATASETS_PATH", cache / "downloads")
    patch.setenv("HF_HUB_OFFLINE", "1")
    patch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    patch.delenv(DATA_DIR_ENV, raising=False)
    return cache
