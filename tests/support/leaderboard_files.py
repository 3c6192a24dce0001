"""The small leaderboard inputs several test modules rank, and ``protoqa-eval`` run on them in a new process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.offline import offline_env
from tests.support.processes import run_python

FAST = ("--metrics", "protoqa", "--similarity", "exact_match")
"""The cheapest ranking: ProtoQA metrics under exact match."""


def write_small_files(folder: Path) -> Path:
    """Targets with 3 questions (``targets.jsonl``) and two prediction files answering them (``a.json``, ``b.json``)."""
    rows = [
        {
            "metadata": {"id": f"q{i}"},
            "question": {"normalized": "name a pet"},
            "answers": {
                "clusters": {f"q{i}.0": {"count": 6, "answers": ["dog"]}, f"q{i}.1": {"count": 4, "answers": ["cat"]}}
            },
        }
        for i in range(3)
    ]
    (folder / "targets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "a.json").write_text(json.dumps({f"q{i}": ["dog", "cat"] for i in range(3)}))
    (folder / "b.json").write_text(json.dumps({f"q{i}": ["cat", "cat"] for i in range(3)}))
    return folder


def protoqa_eval(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m protoqa_integrations ARGS`` (each as a string) offline in ``cwd``, its output captured."""
    return run_python(["-m", "protoqa_integrations", *map(str, args)], cwd, offline_env(), timeout=600)
