"""The allowlist of what leaves the tool: every probe shape, in every field, is left out; what the project records is kept."""

from __future__ import annotations

import json

from protoqa_integrations.generation.provenance import recorded_provenance
from protoqa_integrations.generation.shareable import FIELDS, SETTING_KEYS, shareable, shareable_location
from tests.support.secret_probes import probes


def _every_place(text: str) -> dict:
    """A generation block with ``text`` in every field and under keys no field defines."""
    return {
        "model": "gpt2",
        "notes": text,
        "metadata": {"run": text},
        "model_args": f"pretrained=gpt2,{text},dtype=float16",
        "engine_details": {"base_url": text, "extra": text, "model": "gpt2"},
        "engine": {"engine": "openai", "comment": text},
        "sampling": {"temperature": 0.69, "top_p": 0.9, "seed": text, "until": ["\n", text]},
        "questions_from": text,
        "converted_from": text,
        "skipped": {"r1q1": text},
        "questions_without_answer": [text],
        "usage": {"prompt_tokens": 3, text: 4},
        "task": text,
    }


def test_no_probe_shape_reaches_a_shared_generation_block():
    leaked = []
    for text, secret in probes():
        for block in (_every_place(text), {"sampling": f"samples:30|temperature:0.69|{text}", "model_args": text}):
            if secret in json.dumps(shareable(block)):
                leaked.append(text)
    assert not leaked


def test_what_the_project_records_is_kept_and_typed():
    generation = {
        "model": "gpt2",
        "dataset": "protoqa",
        "split": "validation",
        "prompt": "statement",
        "num_samples": 30,
        "num_questions": "30",  # not a whole number: left out
        "sampling": "samples:30|top_p:0.9|temperature:0.69|max_new_tokens:10",
        "model_args": "pretrained=gpt2,api_key='k',base_url=http://u:pw@10.0.0.1:8000/v1?key=k",
        "questions_from": "https://huggingface.co/datasets/x/resolve/main/dev.jsonl?download=true",
        "questions_sha256": "ab" * 32,
        "usage": {"prompt_tokens": 5, "completion_tokens": True},
        "empty_samples": {"r1q1": 2, "r1q2": "2"},
    }
    kept = shareable(generation)
    assert kept == {
        "model": "gpt2",
        "dataset": "protoqa",
        "split": "validation",
        "prompt": "statement",
        "num_samples": 30,
        "sampling": "samples:30|top_p:0.9|temperature:0.69|max_new_tokens:10",
        "model_args": "pretrained=gpt2,base_url=http://10.0.0.1:8000/v1",
        "questions_from": "https://huggingface.co/datasets/x/resolve/main/dev.jsonl",
        "questions_sha256": "ab" * 32,
        "usage": {"prompt_tokens": 5},
        "empty_samples": {"r1q1": 2},
    }
    # The provenance compared between systems reads the same from the shared block.
    assert recorded_provenance(kept) == recorded_provenance(generation)
    assert recorded_provenance(kept)["questions"] == "sha256:" + "ab" * 8
    assert shareable(None) == {} and shareable({"model": None}) == {"model": None}
    assert shareable_location("C:/runs/a.json") == "C:/runs/a.json"


def test_every_engine_records_only_allowlisted_settings():
    from protoqa_integrations.generation.engines import ENGINES

    for engine in ENGINES.values():
        recorded = engine.recorded_settings("m", {})
        assert set(recorded) <= SETTING_KEYS, (engine.name, set(recorded) - SETTING_KEYS)
    assert {"sampling", "engine", "engine_details", "model_args", "questions_sha256"} <= set(FIELDS)
