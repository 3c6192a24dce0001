"""``protoqa-eval generate`` as the test modules of generation and of the harnesses run it: a new process, on the CPU."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.paths import DATA


def generate_cmd(model_dir: Path, output: Path, *extra: str) -> list[str]:
    """``protoqa-eval generate`` of the model in ``model_dir`` into ``output`` over the shared data, on the
    CPU without a progress bar; ``extra`` options last."""
    return [
        sys.executable,
        "-m",
        "protoqa_integrations",
        "generate",
        str(model_dir),
        "-o",
        str(output),
        "--data-dir",
        str(DATA),
        "--device",
        "cpu",
        "--no-progress",
        *extra,
    ]
