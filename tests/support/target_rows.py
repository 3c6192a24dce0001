"""Lines of a ProtoQA targets file written by hand, for the readers' and the metric's tests."""

from __future__ import annotations

import json
from typing import Optional


def target_line(qid: str, clusters: dict, raw: Optional[dict] = None) -> str:
    """One line of a targets file: question ``qid`` with ``clusters`` (id -> count and answers) and ``raw`` counts.

    >>> json.loads(target_line("q1", {"q1.0": {"count": 2, "answers": ["dog"]}}))["num"]
    {'answers': 0, 'clusters': 1}
    """
    return json.dumps(
        {
            "metadata": {"id": qid, "source": "test"},
            "question": {"original": f"Name {qid}?", "normalized": f"name {qid}?"},
            "answers": {"raw": raw or {}, "clusters": clusters},
            "num": {"answers": 0, "clusters": len(clusters)},
        }
    )
