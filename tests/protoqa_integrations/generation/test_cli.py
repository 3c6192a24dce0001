"""``protoqa-eval generate`` as a job runs it: a model folder named as it lies on disk, stderr sent to a log."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.lazy import require
from tests.support.offline import offline_env
from tests.support.progress_logs import progress_lines

require("torch")
require("transformers")

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "data"


@pytest.mark.slow
def test_generate_takes_a_relative_model_folder_and_reports_progress_in_a_log(dev3_gpt2, tmp_path):
    shutil.copytree(dev3_gpt2, tmp_path / "models" / "tiny-a")  # no ./ in front: found because it exists
    log = tmp_path / "generate.log"
    args = ["generate", "models/tiny-a", "-o", "a.json", "--data-dir", str(DATA), "--device", "cpu"]
    with open(log, "w", encoding="utf-8") as err:
        done = subprocess.run(
            [sys.executable, "-m", "protoqa_integrations", *args, "--limit", "3", "--num-samples", "20"],
            cwd=tmp_path,
            env=offline_env(PROTOQA_PROGRESS_INTERVAL="0"),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            timeout=600,
        )
    text = log.read_text(encoding="utf-8")
    assert done.returncode == 0, text
    lines = progress_lines(text)
    assert lines and lines[-1]["desc"] == "sampling" and lines[-1]["done"] == lines[-1]["total"] == "3", text
    assert "samples/s" in lines[-1].group(0)
    document = json.loads((tmp_path / "a.json").read_text())
    assert len(document["model_answers"]) == 3
    assert document["generation"]["engine_details"]["model_path"] == "models/tiny-a"
