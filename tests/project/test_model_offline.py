"""Without the Hub, a model missing from the cache fails at once (the Space and ``protoqa-eval generate``).

Each case is a new process outside the checkout, with an empty Hub cache: offline mode
(``HF_HUB_OFFLINE=1``), and a Hub endpoint that refuses connections (no network).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.apps import free_port
from tests.support.processes import python_json

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import demo_errors, demo_model
started = time.perf_counter()
try:
    demo_model.ModelHolder("gpt2").get()
    outcome = "loaded"
except demo_errors.ModelUnavailableError as exc:
    outcome = str(exc)
print(json.dumps({"seconds": time.perf_counter() - started, "outcome": outcome,
                  "torch_imported": "torch" in sys.modules}))
"""


@pytest.mark.parametrize(
    "setting, reason",
    [
        ({"HF_HUB_OFFLINE": "1"}, "offline mode is on (HF_HUB_OFFLINE=1)"),
        ({"HF_ENDPOINT": "http://127.0.0.1:{port}"}, "the Hub (127.0.0.1) cannot be reached"),
    ],
    ids=["offline-mode", "no-connection"],
)
def test_a_missing_model_fails_at_once_without_the_hub(tmp_path, setting, reason):
    pytest.importorskip("transformers")
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "HF_HUB_OFFLINE",
            "TRANSFORMERS_OFFLINE",
            "HF_ENDPOINT",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
            "PROTOQA_SPACE_MODEL",
        )
    }
    env.update({k: v.format(port=free_port()) for k, v in setting.items()})
    env.update(PYTHONPATH=str(REPO), HF_HOME=str(tmp_path / "hf"), PROTOQA_SPACE_TMP=str(tmp_path / "space"))
    result = python_json(["-c", SCRIPT, str(REPO / "space")], tmp_path, env, timeout=120)
    assert result["outcome"].startswith("cannot load the model 'gpt2': it is not in the local cache and "), result
    assert reason in result["outcome"]
    assert not result["torch_imported"]  # failed before the heavy imports
    assert result["seconds"] < 5.0, result
