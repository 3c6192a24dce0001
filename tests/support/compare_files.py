"""The small inputs the ``compare`` sub-commands of both command lines read: targets and two prediction files."""

from __future__ import annotations

import json
from pathlib import Path


def compare_files(folder: Path) -> tuple[Path, Path, Path]:
    """Targets of 12 "name a pet" questions (``t.jsonl``), predictions that find both clusters of each
    (``good.json``), and predictions that find none and answer a question the targets do not have
    (``bad.json``)."""
    targets = folder / "t.jsonl"
    targets.write_text(
        "".join(
            json.dumps(
                {
                    "metadata": {"id": f"q{i}"},
                    "question": {"normalized": "name a pet"},
                    "answers": {
                        "clusters": {
                            f"q{i}.0": {"count": 6, "answers": ["dog"]},
                            f"q{i}.1": {"count": 4, "answers": ["cat"]},
                        },
                        "raw": {"dog": 6, "cat": 4},
                    },
                }
            )
            + "\n"
            for i in range(12)
        )
    )
    good = folder / "good.json"
    good.write_text(json.dumps({f"q{i}": ["dog", "cat"] * 5 for i in range(12)}))
    bad = folder / "bad.json"
    bad.write_text(json.dumps({**{f"q{i}": ["car"] * 10 for i in range(12)}, "zz": ["dog"]}))
    return targets, good, bad
