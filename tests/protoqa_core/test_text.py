"""Unicode spellings of one answer score alike: NFKC, zero-width characters removed, on both sides.

Run as a new process of ``protoqa-eval`` from outside the checkout, with files written in
the spellings a user may paste (combining accents, full-width letters, a zero-width joiner).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from protoqa_core.text import normalize_prediction, normalize_unicode

REPO = Path(__file__).resolve().parents[2]

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")
FULL_WIDTH = "ｃａｆé"
JOINED = "ca\u200dfé"


def write_targets(path: Path, clusters: dict[str, tuple[str, int]]) -> None:
    lines = []
    for i, (qid, (answer, count)) in enumerate(clusters.items()):
        lines.append(
            json.dumps(
                {
                    "metadata": {"id": qid},
                    "question": {"normalized": f"question {i}"},
                    "answers": {
                        "clusters": {
                            f"{qid}.0": {"count": count, "answers": [answer]},
                            f"{qid}.1": {"count": 1, "answers": ["tea"]},
                        }
                    },
                },
                ensure_ascii=False,
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("similarity", ["exact_match", "wordnet"])
def test_spellings_of_one_answer_match_in_a_new_process(tmp_path, similarity):
    # Cluster and prediction in different spellings, each way round.
    pairs = {
        "q1": (NFD, NFC),
        "q2": (NFC, NFD),
        "q3": (NFC, FULL_WIDTH),
        "q4": (FULL_WIDTH, NFC),
        "q5": (NFC, JOINED),
        "q6": (JOINED, NFD),
    }
    write_targets(tmp_path / "targets.jsonl", {qid: (cluster, 3) for qid, (cluster, _) in pairs.items()})
    (tmp_path / "predictions.json").write_text(
        json.dumps({qid: [prediction] for qid, (_, prediction) in pairs.items()}, ensure_ascii=False), encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "protoqa_metric",
            "targets.jsonl",
            "predictions.json",
            "--similarity",
            similarity,
            "--json",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    scores = result.get("scores", result)
    assert scores["max_answers@1"] == 1.0, result


def test_normalization_function():
    assert normalize_unicode(NFD) == normalize_unicode(NFC) == normalize_unicode(JOINED) == NFC
    assert normalize_prediction(" ＣＡＦÉ ") == NFC
    assert normalize_unicode("ﬁsh") == "fish"  # a ligature
    assert normalize_unicode("plain ascii") == "plain ascii"
