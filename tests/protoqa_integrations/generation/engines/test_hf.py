"""The ``hf`` engine as ``protoqa-eval generate`` runs it: what it refuses, in one line. Its sampling
is tested in tests/protoqa_integrations/generation/test_generation.py."""

from __future__ import annotations

import os

import pytest

from tests.support.paths import DATA, REPO
from tests.support.processes import run_python


@pytest.mark.slow
def test_hf_engine_refuses_chat(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    result = run_python(
        [
            "-m",
            "protoqa_integrations",
            "generate",
            "gpt2",
            "-o",
            str(tmp_path / "x.json"),
            "--chat",
            "--data-dir",
            str(DATA),
        ],
        tmp_path,
        env,
        timeout=120,
    )
    assert result.returncode == 2 and "--chat needs --engine openai or vllm" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
