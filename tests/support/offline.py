"""The environment of a command a test runs in a new process: offline, one thread, this checkout."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def offline_env(**extra: str) -> dict[str, str]:
    """This process's environment with the Hub switched off, one CPU thread, this checkout first
    on the path, no data folder from the caller's shell, then ``extra`` on top."""
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    env.pop("PROTOQA_DATA_DIR", None)
    env.update(extra)
    return env


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """:func:`offline_env` with the Hub and project caches in ``tmp_path`` and no Parquet folder."""
    env = offline_env(HF_HOME=str(tmp_path / "hf-home"), PROTOQA_CACHE_DIR=str(tmp_path / "protoqa-cache"))
    env.pop("PROTOQA_PARQUET", None)
    env.update(extra)
    return env
