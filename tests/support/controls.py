"""The trivial controls of a ProbEval score, built from a real system's samples on CFC dev and ProtoQA dev.

Each data set has a real system (GPT-2 XL one-shot samples on CFC dev, the annotated GPT-2 samples on
ProtoQA dev), the extra human answers, and four controls that must never beat them: an empty file, the
system's samples for three questions only, ten common words cycled to the system's count per question,
and the next question's samples at the same count.
"""

from __future__ import annotations

import json
from pathlib import Path

CONTROLS = ("empty", "three", "words", "other")
"""The controls: refused (``empty``, ``three``) or scored worse than the system and the human answers."""

REFUSED = ("empty", "three")
"""The controls that answer part of the questions, or none, and are refused."""

WORDS = ("food", "water", "money", "car", "phone", "keys", "coffee", "shower", "dog", "house")


def data_sets(data: Path) -> dict[str, dict[str, Path]]:
    """Per data set: its targets, the real system's samples and the extra human answers."""
    return {
        "cfc": {
            "targets": data / "cfc" / "dev.targets.jsonl",
            "system": data / "cfc" / "dev.predictions.gpt2-xl.oneshot.json",
            "human": data / "cfc" / "dev.predictions.human.json",
        },
        "protoqa": {
            "targets": data / "protoqa" / "dev.crowdsourced.jsonl",
            "system": data / "probeval_validation" / "protoqa_dev.gpt2.samples.annotated.json",
            "human": data / "probeval_validation" / "protoqa_dev.human.json",
        },
    }


def _answers(path: Path, ids: list[str]) -> dict[str, list[str]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    answers = document.get("model_answers", document)
    return {qid: list(answers[qid]) for qid in ids if qid in answers}


def target_ids(targets: Path) -> list[str]:
    """The question ids of a targets file, in file order."""
    return [json.loads(line)["metadata"]["id"] for line in targets.read_text(encoding="utf-8").splitlines() if line]


def control_samples(files: dict[str, Path]) -> dict[str, dict[str, list[str]]]:
    """The samples of the system, the human answers and every control, question id -> samples, on the targets' ids."""
    ids = target_ids(files["targets"])
    system = _answers(files["system"], ids)
    keys = list(system)
    return {
        "system": system,
        "human": _answers(files["human"], ids),
        "empty": {},
        "three": {qid: system[qid] for qid in keys[:3]},
        "words": {qid: [WORDS[i % len(WORDS)] for i in range(len(v))] for qid, v in system.items()},
        "other": {
            qid: [system[keys[(k + 1) % len(keys)]][i % len(system[keys[(k + 1) % len(keys)]])] for i in range(len(v))]
            for k, (qid, v) in enumerate(system.items())
        },
    }


def write_controls(files: dict[str, Path], folder: Path) -> dict[str, Path]:
    """Each of :func:`control_samples` as a ``{"model_answers": ...}`` file in ``folder``, by name."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, samples in control_samples(files).items():
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps({"model_answers": samples}), encoding="utf-8")
    return out
