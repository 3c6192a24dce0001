"""The documented Trainer ``compute_metrics`` example runs as written, in its documented offline form.

The block is read from docs/training.md and run in a new process outside the checkout, offline,
with the two names the page's offline form gives it: the export folder ``protoqa-export``, made
by the page's export command, and the model folder ``models/gpt2`` (here a tiny random GPT-2
with GPT-2's kind of tokenizer: byte-level BPE, no padding token, in place of the page's
download of GPT-2). The Trainer's default evaluation batch size (8) applies.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.lazy import require
from tests.support.processes import run_python

require("transformers")
require("torch")
require("accelerate")

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "docs" / "training.md"
HEADING = "## `compute_metrics` for a Trainer that generates"


def documented_block() -> str:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(HEADING) :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "no python block under the heading"
    return match.group(1)


def offline_commands() -> list[str]:
    """The page's offline form: its export command and the names it gives the block."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("**Offline**") :]
    match = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert match, "no offline commands under the block"
    return match.group(1).splitlines()


def test_the_block_is_the_documented_one():
    block = documented_block()
    assert 'AutoTokenizer.from_pretrained("gpt2")' in block and '"path/to/export"' in block
    assert "per_device_eval_batch_size" not in block and "data_collator" not in block


@pytest.mark.slow
def test_readme_trainer_example_runs_as_written(tmp_path, shared_data):
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "CUDA_VISIBLE_DEVICES": "",
        "OMP_NUM_THREADS": "1",
    }
    export_line, _, run_line = offline_commands()
    assert run_line.startswith("HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 python trainer_example.py")
    export = tmp_path / "protoqa-export"
    command = export_line.split("#")[0].split()
    assert command[:4] == ["python", "-m", "protoqa_dataset", "export"] and command[4] == export.name
    done = run_python([*command[1:]], tmp_path, {**env, "PROTOQA_DATA_DIR": str(shared_data)}, timeout=300)
    assert (export / "protoqa").is_dir(), done.stderr[-2000:]

    build = (
        "import sys, json\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from tests.support.tiny_lm import build_tiny_gpt2\n"
        "from protoqa_core.io.readers import read_targets\n"
        f"qs = read_targets({str(shared_data / 'protoqa' / 'dev.crowdsourced.jsonl')!r}).values()\n"
        "texts = [q.question for q in qs] + [a for q in qs for c in q.clusters for a in c.answers]\n"
        f"build_tiny_gpt2(__import__('pathlib').Path({str(tmp_path / 'models' / 'gpt2')!r}), texts, n_positions=128)\n"
    )
    done = run_python(["-c", build], tmp_path, env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    block = documented_block().replace('"path/to/export"', '"protoqa-export"').replace('"gpt2"', '"models/gpt2"')
    lines = block.rstrip().splitlines()
    # The last line shows two values; print them so that the test can read them.
    script = "\n".join(lines[:-1]) + f"\nprint('RESULT', repr(({lines[-1]})))\n"
    (tmp_path / "trainer_example.py").write_text(script, encoding="utf-8")
    done = run_python(["trainer_example.py"], tmp_path, env, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    result = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    at_10, kl = eval(result[len("RESULT ") :])
    assert 0.0 <= at_10 <= 1.0 and kl >= 0.0
