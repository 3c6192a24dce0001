"""Redaction: every form a credential takes in recorded settings is masked, and nothing else is changed."""

from __future__ import annotations

import json

import pytest

from protoqa_core.redaction import MASK, is_secret_name, redact, redact_text, redact_url

SECRETS = ("hunter2", "sk-live-0123456789abcdef", "tok-9f8e7d", "pw-in-args", "bearer-in-args", "qs-token")

# Each form in which an evaluation harness's settings have carried a credential into a shared file.
SETTINGS = {
    "model_args": (
        f"pretrained=tiny,base_url=http://user:{SECRETS[3]}@10.0.0.1:8000/v1,auth=Bearer {SECRETS[4]},"
        f"api_key={SECRETS[1]}"
    ),
    "base_url": f"http://user:{SECRETS[0]}@127.0.0.1:8000/v1?token={SECRETS[5]}&api-version=2024",
    "headers": {"Authorization": f"Bearer {SECRETS[1]}", "X-Api-Key": SECRETS[2], "Accept": "application/json"},
    "sampling": {
        "temperature": 0.69,
        "max_gen_toks": 10,
        "until": ["\n", "."],
        "request": {"api_key": SECRETS[2], "extra_headers": [{"authorization": f"Basic {SECRETS[0]}"}]},
    },
    "printed": f"{{'api_key': '{SECRETS[2]}', 'model': 'tiny'}}",
    "hf_token": "hf_abcdefghijklmnopqrstuvwx",
}


def test_every_form_of_credential_is_masked_wherever_it_is_nested():
    cleaned = redact(SETTINGS)
    text = json.dumps(cleaned)
    assert not any(secret in text for secret in SECRETS) and "hf_abcdef" not in text
    # What is not a credential is kept, so the settings still say how the run was made.
    assert cleaned["sampling"]["temperature"] == 0.69 and cleaned["sampling"]["max_gen_toks"] == 10
    assert cleaned["sampling"]["until"] == ["\n", "."]
    assert cleaned["headers"]["Accept"] == "application/json"
    assert cleaned["base_url"] == f"http://{MASK}:{MASK}@127.0.0.1:8000/v1?token={MASK}&api-version=2024"
    assert cleaned["model_args"].startswith(f"pretrained=tiny,base_url=http://{MASK}:{MASK}@10.0.0.1:8000/v1,")
    assert "'model': 'tiny'" in cleaned["printed"]
    # The input is not changed in place.
    assert SETTINGS["headers"]["X-Api-Key"] == SECRETS[2]


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("OPENAI_API_KEY", True),
        ("x-api-key", True),
        ("accessToken", True),
        ("Authorization", True),
        ("password", True),
        ("client_secret", True),
        ("max_tokens", False),
        ("max_new_tokens", False),
        ("tokenizer", False),
        ("model", False),
        ("temperature", False),
    ],
)
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret


def test_messages_and_addresses():
    assert redact_url("https://u:p@host/v1?key=abc&model=x") == f"https://{MASK}:{MASK}@host/v1?key={MASK}&model=x"
    line = redact_text(f"cannot reach http://me:{SECRETS[0]}@h:1/v1 (Authorization: Bearer {SECRETS[1]})")
    assert not any(s in line for s in SECRETS) and "http://***:***@h:1/v1" in line
    assert redact_text("samples:300|top_p:0.9|temperature:0.69") == "samples:300|top_p:0.9|temperature:0.69"


def test_deep_settings_do_not_overflow_the_stack():
    deep: object = {"api_key": "x"}
    for _ in range(5000):
        deep = {"a": deep}
    cleaned = redact(deep)
    depth = 0
    while isinstance(cleaned, dict):
        cleaned, depth = cleaned["a"], depth + 1
    assert cleaned == MASK and depth < 300  # masked past a bounded depth, not followed


def test_no_probe_shape_survives_in_a_message_and_plain_messages_stay_as_they_are():
    from tests.support.secret_probes import probes

    found = [text for text, secret in probes() if secret in redact_text(f"error: cannot read {text}: no such file")]
    assert not found
    for plain in (
        "a.json, line 3: duplicate key 'token' in a JSON object",
        "samples:30|top_p:0.9|max_tokens:10",
        "pass --accept-mismatch samples to rank them",
        "x = 3, password == other, key_column=2",
    ):
        assert redact_text(plain) == plain
