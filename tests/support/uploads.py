"""Answers files users upload to the Space's leaderboard, built from the shared CFC test samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def cfc_test_answers(data: Path, counts: dict[str, int]) -> dict[str, dict[str, Any]]:
    """One answers file of CFC test per name, as ``protoqa-eval generate`` writes it: the shared GPT-2 XL samples
    cut to ``counts[name]`` a question, recording that many samples per question.

    ``data`` is the shared data folder.
    """
    from protoqa_core.io.readers import read_targets
    from protoqa_integrations.generation.answers_file import answers_document

    questions = list(read_targets(data / "cfc" / "test.targets.jsonl").values())
    with open(data / "cfc" / "test.samples.gpt2-xl.oneshot.jsonl", encoding="utf-8") as fh:
        samples = {qid: answers for line in fh for qid, answers in json.loads(line).items()}
    documents = {}
    for name, count in counts.items():
        generation = {"model": "gpt2-xl", "dataset": "cfc", "split": "test", "sampling": f"samples:{count}"}
        drawn = {q.id: samples[q.id][:count] for q in questions}
        documents[name] = answers_document(questions, drawn, {}, generation)
    return documents
