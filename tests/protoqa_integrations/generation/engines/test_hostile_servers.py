"""``protoqa-eval generate --engine openai`` and lm-eval's API backends against servers that misbehave.

Each case runs the command (or lm-eval with our API backends) in a new process against
:mod:`tests.support.hostile_server` on 127.0.0.1 (a chunked reply that never ends, one byte a second, a reply far past its cap, a
``Retry-After`` of 30 years, headers and then silence, nothing listening) and checks that
it ends with exit status 2 and one line saying what happened, well before the server
would have let it go. Then: two runs on one ``-o`` (the second refused, no request asked
twice), credentials in ``--base-url`` (never printed or recorded), and what the answers
file records of the server (its model id and path, its version only when it gives one,
``seed:none`` when no seed was sent).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.hostile_server import (
    HostileServer,
    client_env,
    closed_port_url,
    generate_command,
    lm_eval_chat_command,
    one_line_error,
)
from tests.support.paths import DATA, REPO, needs_data

pytestmark = [pytest.mark.slow, needs_data]
SECRETS = ("hunter2", "s3cr3t-query-key", "tok-9f8e7d")


def run(args: list[str], cwd: Path, timeout: float = 120) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = subprocess.run(args, cwd=cwd, env=client_env(REPO), capture_output=True, text=True, timeout=timeout)
    return result, time.monotonic() - start


@pytest.fixture
def hostile(request):
    servers = []

    def start(mode: str, **options) -> HostileServer:
        server = HostileServer(mode, **options)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def test_a_reply_that_never_ends_stops_at_its_cap(hostile, tmp_path):
    server = hostile("endless")
    result, _ = run(generate_command(server.url, tmp_path / "a.json", DATA, "--request-timeout", "30"), tmp_path)
    one_line_error(result, "passed 196,608 bytes", "max_tokens")
    assert server.posts == 1  # an over-long reply is not asked again
    assert not (tmp_path / "a.json").exists()


def test_a_huge_reply_is_not_read_whole(hostile, tmp_path):
    server = hostile("huge", huge_mb=50)
    result, _ = run(generate_command(server.url, tmp_path / "a.json", DATA), tmp_path)
    one_line_error(result, "passed 196,608 bytes")


def test_the_timeout_limits_the_whole_request_not_each_read(hostile, tmp_path):
    # One byte a second: each read is quick, the reply (about 80 bytes) would take over a minute.
    server = hostile("trickle")
    result, wall = run(
        generate_command(server.url, tmp_path / "a.json", DATA, "--request-timeout", "3", "--max-retries", "0"),
        tmp_path,
    )
    one_line_error(result, "no complete reply within 3 s")
    assert wall < 40
    server = hostile("stall")
    result, wall = run(
        generate_command(server.url, tmp_path / "b.json", DATA, "--request-timeout", "3", "--max-retries", "1"),
        tmp_path,
    )
    one_line_error(result, "still failing after 1 retries", "no complete reply within 3 s")
    assert wall < 40


def test_a_retry_after_past_the_cap_stops_at_once(hostile, tmp_path):
    server = hostile("retry-after")
    result, wall = run(generate_command(server.url, tmp_path / "a.json", DATA), tmp_path)
    one_line_error(result, "asks to wait 1,000,000,000 s", "more than the 60 s")
    assert server.posts == 1 and wall < 60


def test_a_refused_connection_is_not_retried(tmp_path):
    url = closed_port_url()
    result, wall = run(generate_command(url, tmp_path / "a.json", DATA), tmp_path)  # the default 6 retries
    one_line_error(result, "cannot reach the server", "Connection refused", "not retried")
    assert wall < 30  # before: 39 s of retries


def test_credentials_in_the_base_url_are_never_shown_or_recorded(hostile, tmp_path):
    closed = closed_port_url().replace("http://", f"http://me:{SECRETS[0]}@")
    result, _ = run(generate_command(f"{closed}?api_key={SECRETS[1]}", tmp_path / "a.json", DATA), tmp_path)
    line = one_line_error(result, "cannot reach the server", "***")
    assert not any(s in line for s in SECRETS)
    server = hostile("ok")
    url = server.url.replace("http://", f"http://me:{SECRETS[0]}@") + f"?key={SECRETS[1]}&token={SECRETS[2]}"
    out = tmp_path / "b.json"
    result, _ = run(generate_command(url, out, DATA), tmp_path)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert not any(s in text or s in result.stderr + result.stdout for s in SECRETS)
    details = json.loads(text)["generation"]["engine_details"]
    # An answers file is shared: the address keeps its scheme, host and path only.
    assert details["base_url"] == server.url
    # the query of the address reaches the server after each path
    assert all(p.endswith(f"?key={SECRETS[1]}&token={SECRETS[2]}") for p in server.paths)


def test_the_answers_file_records_what_the_server_reports_and_only_that(hostile, tmp_path):
    server = hostile("ok", version="0.99.1-test")
    out = tmp_path / "a.json"
    result, _ = run(generate_command(server.url, out, DATA, "--no-request-seeds"), tmp_path)
    assert result.returncode == 0, result.stderr
    generation = json.loads(out.read_text())["generation"]
    details = generation["engine_details"]
    assert details["served_model_id"] == "tiny" and details["served_model_root"] == "/models/tiny"
    assert details["server_version"] == "0.99.1-test"
    assert "|seed:none|" in generation["sampling"] and "seed:42" not in generation["sampling"]
    assert "|seed:none|" in result.stdout
    silent = hostile("ok")  # no /version
    result, _ = run(generate_command(silent.url, tmp_path / "b.json", DATA), tmp_path)
    assert result.returncode == 0, result.stderr
    generation = json.loads((tmp_path / "b.json").read_text())["generation"]
    assert "server_version" not in generation["engine_details"]
    assert "|seed:42|" in generation["sampling"]


def test_a_second_run_on_the_same_output_is_refused_and_nothing_is_asked_twice(hostile, tmp_path):
    server = hostile("ok")
    server.release.clear()  # the first run is held at its first request until the second has been refused
    out = tmp_path / "a.json"
    lock = tmp_path / "a.json.partial.lock"
    first = subprocess.Popen(
        generate_command(server.url, out, DATA, "--max-n", "2"),
        cwd=tmp_path,
        env=client_env(REPO),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while server.posts == 0 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.1)
        assert server.posts > 0, "the first run never started sampling"
        second, _ = run(generate_command(server.url, out, DATA, "--max-n", "2"), tmp_path)
        line = one_line_error(second, str(lock), f"process {first.pid}", "another run")
        assert "-o" in line
    finally:
        server.release.set()
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert server.posts == 2 * 4  # two questions, four requests of two choices each: none asked twice
    assert not lock.exists() and not (tmp_path / "a.json.partial.jsonl").exists()
    third, _ = run(generate_command(server.url, out, DATA, "--max-n", "2"), tmp_path)
    one_line_error(third, "--overwrite")  # a run starting after the first ended finds its answers
    assert server.posts == 8


def test_a_planted_lock_file_symlink_is_refused(hostile, tmp_path):
    server = hostile("ok")
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (tmp_path / "a.json.partial.lock").symlink_to(target)
    result, _ = run(generate_command(server.url, tmp_path / "a.json", DATA), tmp_path)
    one_line_error(result, "a.json.partial.lock", "symbolic link")
    assert target.read_text() == "keep me" and server.posts == 0


@pytest.mark.parametrize("concurrent", [1, 2])  # the harness's two code paths: requests, aiohttp
def test_lm_eval_chat_backend_against_an_endless_reply_ends_in_one_line(hostile, tmp_path, concurrent):
    pytest.importorskip("lm_eval")
    pytest.importorskip("aiohttp")
    server = hostile("endless")
    args = lm_eval_chat_command(server.url, concurrent)
    env = client_env(REPO, PROTOQA_DATA_DIR=str(DATA / "protoqa"))
    result = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: the reply of http://127.0.0.1:"), result.stderr[-3000:]
    assert "passed 81,920 bytes" in errors[0]


def test_a_redirect_and_a_compressed_reply_are_explained_in_one_line(hostile, tmp_path):
    server = hostile("redirect")
    result, _ = run(generate_command(server.url, tmp_path / "a.json", DATA, "--max-retries", "1"), tmp_path)
    one_line_error(result, "with a redirect (HTTP 307)", "pass the address it redirects to as --base-url")
    assert "falling short" not in result.stderr and server.posts == 1
    server = hostile("gzip")
    result, _ = run(generate_command(server.url, tmp_path / "b.json", DATA, "--max-retries", "1"), tmp_path)
    one_line_error(result, "a gzip-compressed reply", "turn compression off")
    assert "falling short" not in result.stderr and server.posts == 1


def test_a_key_and_a_password_in_the_address_are_refused_before_any_request(hostile, tmp_path):
    server = hostile("ok")
    url = server.url.replace("http://", f"http://me:{SECRETS[0]}@")
    args = generate_command(url, tmp_path / "a.json", DATA)
    result = subprocess.run(
        args, cwd=tmp_path, env=client_env(REPO, OPENAI_API_KEY=SECRETS[2]), capture_output=True, text=True, timeout=120
    )
    line = one_line_error(result, "carries a user name and password and $OPENAI_API_KEY is set")
    assert not any(s in line for s in SECRETS) and not server.paths


def test_the_answers_file_records_the_model_the_replies_name(hostile, tmp_path):
    # A hosted API answers an alias with a dated snapshot: recorded, not refused.
    server = hostile("ok", reply_models=("tiny-2026-01-01",))
    out = tmp_path / "a.json"
    result, _ = run(generate_command(server.url, out, DATA), tmp_path)
    assert result.returncode == 0, result.stderr
    details = json.loads(out.read_text())["generation"]["engine_details"]
    assert details["model"] == "tiny" and details["reply_model"] == "tiny-2026-01-01"
    warned = [line for line in result.stderr.splitlines() if "answered as model 'tiny-2026-01-01'" in line]
    assert len(warned) == 1 and "when asked for 'tiny'" in warned[0], result.stderr
    # Replies naming two models would mix them in one answers file: the run ends in one line.
    mixed = hostile("ok", reply_models=("tiny", "evil-model"))
    result, _ = run(generate_command(mixed.url, tmp_path / "b.json", DATA, "--max-n", "2"), tmp_path)
    one_line_error(result, "name more than one model", "'evil-model'")
    assert not (tmp_path / "b.json").exists()


@pytest.mark.parametrize("concurrent", [1, 2])  # the harness's two code paths: requests, aiohttp
@pytest.mark.parametrize(
    "mode, fragments",
    [
        ("redirect", ("answered with a redirect (HTTP 307) to http://127.0.0.1:9/v1/completions", "as base_url in")),
        ("gzip", ("answered with a gzip-compressed reply", "turn compression off on the server")),
    ],
)
def test_lm_eval_backend_explains_a_redirect_and_a_compressed_reply_in_one_line(
    hostile, tmp_path, mode, fragments, concurrent
):
    pytest.importorskip("lm_eval")
    pytest.importorskip("aiohttp")
    server = hostile(mode)
    model_args = (
        f"model=tiny,base_url={server.url}/completions,num_concurrent={concurrent},max_retries=1,timeout=10,"
        "tokenized_requests=False,tokenizer_backend=None"
    )
    args = [
        sys.executable,
        "-m",
        "protoqa_integrations.harnesses.lm_eval_tasks",
        "run",
        "--model",
        "protoqa-local-completions",
        "--model_args",
        model_args,
        "--tasks",
        "protoqa",
        "--limit",
        "1",
    ]
    env = client_env(REPO, PROTOQA_DATA_DIR=str(DATA / "protoqa"))
    result = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {server.url}/completions answered"), result.stderr[-3000:]
    assert all(fragment in errors[0] for fragment in fragments), errors[0]
    assert "falling short" not in result.stderr and "Cannot connect" not in result.stderr
    # Neither followed nor read: the run stops soon after the first reply, unscored. Requests already in flight,
    # and those a freed slot starts while the failure cancels the rest, may still arrive (4 seen with 2 slots on a
    # busy machine); a run that went on would send all 300.
    assert server.posts <= 4 * concurrent and not result.stdout.strip()
