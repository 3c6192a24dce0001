"""lm-eval's API backends of the project: the request payload they send."""

from __future__ import annotations

import importlib

import pytest


def test_lm_eval_api_backends_drop_the_fixed_seed_and_top_k():
    pytest.importorskip("lm_eval")
    try:
        importlib.import_module("lm_eval.models.api_models")
    except ImportError as exc:
        pytest.skip(f"lm-eval[api] is not installed: {exc}")
    from protoqa_integrations.harnesses.lm_eval_tasks import api_backends

    backend = object.__new__(api_backends.REGISTERED["protoqa-local-completions"])  # no server to contact
    backend.model, backend._max_gen_toks = "m", 10
    payload = backend._create_payload(
        "p",
        generate=True,
        gen_kwargs={
            "until": ["\n", "."],
            "do_sample": True,
            "temperature": 0.69,
            "top_p": 0.9,
            "top_k": 0,
            "max_gen_toks": 10,
        },
        seed=1234,
    )
    assert "seed" not in payload and "top_k" not in payload
    assert payload["temperature"] == 0.69 and payload["top_p"] == 0.9 and payload["max_tokens"] == 10
