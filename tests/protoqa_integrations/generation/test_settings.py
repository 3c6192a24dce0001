"""``score-generated`` prints how the answers were drawn as a signature, for its own runs and for harness runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env

REPO = Path(__file__).resolve().parents[3]
DEV = REPO.parent / "shared" / "data" / "protoqa" / "dev.crowdsourced.jsonl"

# What `convert` records for a lighteval run: the model's generation_parameters, most of them unset.
LIGHTEVAL_SAMPLING = {
    "temperature": 0.69,
    "top_p": 0.9,
    "top_k": 0,
    "max_new_tokens": None,
    "min_new_tokens": None,
    "seed": None,
    "stop_tokens": None,
    "repetition_penalty": None,
    "frequency_penalty": None,
}


@pytest.mark.skipif(not DEV.is_file(), reason="shared ProtoQA data not found")
@pytest.mark.parametrize(
    "generation, line",
    [
        (
            {"harness": "lighteval", "model": "tiny-gpt2-sampling", "sampling": LIGHTEVAL_SAMPLING},
            "sampling: temperature:0.69|top_p:0.9|top_k:0|model:tiny-gpt2-sampling",
        ),
        (
            {"model": "gpt2", "prompt": "statement", "sampling": "samples:3|top_p:0.9|temperature:0.69"},
            "sampling: samples:3|top_p:0.9|temperature:0.69|prompt:statement|model:gpt2",
        ),
    ],
    ids=["harness", "generate"],
)
def test_the_sampling_line_is_key_value_without_unset_settings(tmp_path, generation, line):
    answers = ["age", "name", "age"]
    document = {
        "model_answers": {"r1q1": answers},
        "model_answers_with_count": {"r1q1": [["age", 2], ["name", 1]]},
        "model_ranked_answers": {"r1q1": ["age", "name"]},
        "generation": generation,
    }
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(document))
    args = ["score-generated", str(path), "--targets", str(DEV), "--similarity", "exact_match", "--no-probeval"]
    done = subprocess.run(
        [sys.executable, "-m", "protoqa_integrations", *args],
        capture_output=True,
        text=True,
        env=offline_env(),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip().splitlines()[-1]
    assert printed == line
    assert "None" not in done.stdout and "{" not in printed
