"""``score-generated`` prints how the answers were drawn as a signature, for its own runs and for harness runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env
from tests.support.processes import run_python

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
    args.append("--only-predicted")  # one question of the data set
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


CFC_DEV = REPO.parent / "shared" / "data" / "cfc" / "dev.targets.jsonl"


@pytest.mark.skipif(not CFC_DEV.is_file(), reason="shared CFC data not found")
def test_an_accepted_mismatch_is_marked_in_every_output_and_every_signature(tmp_path):
    from protoqa_core.io.readers import read_targets

    # Answers to ProtoQA dev questions whose ids CFC dev also has, scored against CFC dev's targets.
    cfc = read_targets(CFC_DEV)
    ids = [qid for qid in read_targets(DEV) if qid in cfc][:5]
    assert ids
    document = {
        "model_answers": {qid: ["dog", "cat", "dog"] for qid in ids},
        "model_answers_with_count": {qid: [["dog", 2], ["cat", 1]] for qid in ids},
        "model_ranked_answers": {qid: ["dog", "cat"] for qid in ids},
        "generation": {"model": "tiny", "dataset": "protoqa", "split": "validation", "sampling": "samples:3"},
    }
    (tmp_path / "answers.json").write_text(json.dumps(document))
    base = ["score-generated", "answers.json", "--targets", str(CFC_DEV), "--similarity", "exact_match,wordnet"]
    base.append("--only-predicted")  # five questions of the data set

    def run(*extra: str) -> subprocess.CompletedProcess:
        return run_python(["-m", "protoqa_integrations", *base, *extra], tmp_path, offline_env(), timeout=300)

    refused = run()
    assert refused.returncode == 2 and "--accept-mismatch dataset" in refused.stderr
    text = run("--accept-mismatch", "dataset")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("NOT COMPARABLE AS RECORDED: scored despite differing dataset")
    signatures = [line for line in lines if line.startswith(("exact_match: ", "wordnet: ", "probeval: "))]
    assert len(signatures) == 3
    assert all(line.endswith("|accepted-mismatch:dataset") for line in signatures), signatures
    as_json = run("--accept-mismatch", "dataset", "--json")
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["accepted_mismatches"][0].startswith("dataset (")
    marked = [result["protoqa"][sim]["signature"] for sim in ("exact_match", "wordnet")]
    marked.append(result["probeval"]["signature"])
    assert all(sig.endswith("|accepted-mismatch:dataset") for sig in marked), marked


def test_the_chat_budget_is_the_lm_eval_chat_tasks_too():
    import importlib.util
    import re

    from protoqa_integrations.generation.settings import CHAT_MAX_NEW_TOKENS

    spec = importlib.util.find_spec("protoqa_integrations.harnesses.lm_eval_tasks")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations)))
    budgets = {p.name: re.findall(r"max_gen_toks: *(\d+)", p.read_text()) for p in folder.glob("*_chat.yaml")}
    assert budgets == {name: [str(CHAT_MAX_NEW_TOKENS)] for name in ("protoqa_chat.yaml", "cfc_chat.yaml")}
