"""The openai engine's faults: ``protoqa-eval generate --engine openai`` in new processes against a
hand-written OpenAI-compatible stub on 127.0.0.1 (rate limits with Retry-After, 5xx, malformed and
short replies, timeouts, a wrong key, a model not served). Servers that misbehave on purpose are in
test_hostile_servers.py; the real engines in test_engines_real.py.
"""

from __future__ import annotations

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.hostile_server import client_env, closed_port_url, generate_command, one_line_error
from tests.support.paths import DATA, REPO, needs_data

KEY = "sk-test-secret-0123456789"


# ---------------------------------------------------------------- the openai engine against a stub server


class Stub:
    """An OpenAI-compatible server whose replies a test scripts; it records every request."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        # per POST: a callable (payload) -> (status, headers, body), "drop" (no reply) or None (a normal reply)
        self.plan: list = []
        self.lock = threading.Lock()
        self.models = ["tiny"]
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status, headers, body):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self._reply(401, {}, {"error": {"message": "Incorrect API key provided"}})
                self._reply(200, {}, {"data": [{"id": m} for m in stub.models]})

            def do_POST(self):
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub.lock:
                    stub.requests.append(
                        {"path": self.path, "payload": payload, "auth": self.headers.get("Authorization")}
                    )
                    action = stub.plan.pop(0) if stub.plan else None
                if action is not None:
                    result = action(payload)
                    if result == "drop":  # the server goes away mid-request, as a crashed one does
                        self.close_connection = True
                        return None
                    if result is not None:
                        return self._reply(*result)
                self._reply(200, {}, stub.completion(payload))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def completion(payload, n=None):
        n = payload["n"] if n is None else n
        seed = payload.get("seed", 0)
        if "messages" in payload:
            choices = [
                {"index": i, "message": {"role": "assistant", "content": f"{i % 7 + 1}. **Answer {seed % 5}**"}}
                for i in range(n)
            ]
        else:
            choices = [{"index": i, "text": f" answer {(seed + i) % 11}. more"} for i in range(n)]
        return {
            "choices": choices,
            "usage": {"prompt_tokens": 10, "completion_tokens": 3 * n, "total_tokens": 10 + 3 * n},
        }

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.close()


def generate(stub_url, output, cwd, *extra, key=KEY, timeout=120):
    env = client_env(REPO, **({} if key is None else {"OPENAI_API_KEY": key}))
    args = generate_command(stub_url, output, DATA, "--max-n", "8", *extra, limit=3, samples=20, concurrency=None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def refused(result, *fragments):
    """The one-line refusal, which never shows the key."""
    one_line_error(result, *fragments)
    assert KEY not in result.stderr + result.stdout


@pytest.mark.slow
@needs_data
def test_openai_engine_splits_n_retries_429_and_records_usage(stub, tmp_path):
    # First reply: rate limited with Retry-After; later one 503 and one reply short of choices.
    stub.plan = [
        lambda p: (429, {"Retry-After": "1"}, {"error": {"message": "rate limited"}}),
        None,
        lambda p: (503, {}, {"error": "overloaded"}),
        lambda p: (200, {}, Stub.completion(p, n=p["n"] - 3)),
    ]
    out = tmp_path / "answers.json"
    result = generate(stub.url, out, tmp_path, "--concurrency", "2", "--max-retries", "3")
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert [len(v) for v in doc["model_answers"].values()] == [20, 20, 20]
    posts = [r for r in stub.requests if r["path"] == "/v1/completions"]
    assert all(r["payload"]["n"] <= 8 for r in posts)
    assert all("top_k" not in r["payload"] for r in posts)  # OpenAI's API rejects it
    assert all(r["auth"] == f"Bearer {KEY}" for r in posts)
    assert len({r["payload"]["seed"] for r in posts}) > 3  # every request its own seed
    sent_tokens = sum(3 * min(r["payload"]["n"], 8) for r in posts)
    assert doc["generation"]["usage"]["prompt_tokens"] >= 10 * 9
    assert doc["generation"]["usage"]["completion_tokens"] <= sent_tokens
    assert doc["generation"]["sampling"].startswith("engine:openai|samples:20|top_p:0.9|temperature:0.69")
    assert doc["generation"]["engine"]["model"] == "tiny"
    assert KEY not in out.read_text() and KEY not in result.stderr + result.stdout
    assert "collapsed_questions" not in doc["generation"]


@pytest.mark.slow
@needs_data
def test_openai_engine_chat_takes_the_answer_out_of_the_reply(stub, tmp_path):
    out = tmp_path / "chat.json"
    result = generate(stub.url, out, tmp_path, "--chat", "--system-prompt", "Be brief.", "--dataset", "cfc")
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    first = stub.requests[0]["payload"]
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant", "user"]
    assert "stop" not in first and first["max_tokens"] == 32
    assert all(a.startswith("answer ") for v in doc["model_answers"].values() for a in v)
    assert doc["generation"]["prompt"] == "cfc-chat" and doc["generation"]["system_prompt"] == "Be brief."


@pytest.mark.slow
@needs_data
def test_a_server_repeating_itself_is_warned_about_and_recorded(stub, tmp_path):
    stub.plan = [lambda p: (200, {}, {"choices": [{"index": i, "text": " same"} for i in range(p["n"])]})] * 100
    out = tmp_path / "same.json"
    result = generate(stub.url, out, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "nearly the same answer in every sample" in result.stderr
    assert len(json.loads(out.read_text())["generation"]["collapsed_questions"]) == 3


@pytest.mark.slow
@needs_data
def test_faults_end_with_one_line_and_exit_2(stub, tmp_path):
    refused(generate(stub.url, tmp_path / "a.json", tmp_path, key="sk-wrong"), "refused the key", "OPENAI_API_KEY")
    refused(generate(stub.url, tmp_path / "b.json", tmp_path, key=None), "refused the key")
    stub.models = ["other-model"]
    refused(generate(stub.url, tmp_path / "c.json", tmp_path), "does not serve the model 'tiny'", "other-model")
    stub.models = ["tiny"]
    refused(
        generate(closed_port_url(), tmp_path / "d.json", tmp_path, "--max-retries", "1"),
        "cannot reach the server",
    )
    stub.plan = [lambda p: (200, {}, b"<html>not json</html>")] * 10
    refused(
        generate(stub.url, tmp_path / "e.json", tmp_path, "--max-retries", "1", "--concurrency", "1"), "malformed reply"
    )
    stub.plan = [lambda p: (200, {}, {"choices": []})] * 10
    refused(
        generate(stub.url, tmp_path / "f.json", tmp_path, "--max-retries", "1", "--concurrency", "1"), "falling short"
    )
    refused(generate(stub.url, tmp_path / "g.json", tmp_path, "--base-url", "ftp://x"), "--base-url")
    refused(generate(stub.url, tmp_path / "h.json", tmp_path, "--concurrency", "0"), "--concurrency")
    for name in "abcdefgh":
        assert not (tmp_path / f"{name}.json").exists()


@pytest.mark.slow
@needs_data
def test_a_relative_redirect_is_named_by_its_whole_address_and_a_long_encoding_is_cut(stub, tmp_path):
    # As lm-eval's backends name them (one rule, request_bounds.check_plain_reply).
    stub.plan = [lambda p: (307, {"Location": "/v2/completions"}, b"")] * 10
    result = generate(stub.url, tmp_path / "a.json", tmp_path, "--concurrency", "1")
    refused(result, f"with a redirect (HTTP 307) to {stub.url[: -len('/v1')]}/v2/completions;", "as --base-url")
    stub.plan = [lambda p: (200, {"Content-Encoding": "x" * 300}, b"")] * 10
    result = generate(stub.url, tmp_path / "b.json", tmp_path, "--concurrency", "1")
    refused(result, f"with a {'x' * 40}-compressed reply")
    assert "x" * 41 not in result.stderr


@pytest.mark.slow
@needs_data
def test_a_server_that_drops_seeded_requests_is_reported_naming_no_request_seeds(stub, tmp_path):
    # vLLM's CPU build stops on a seeded request ("CPU Generator does not use offset"): the client
    # sees the connection dropped after the server had answered, and says what to try.
    stub.plan = [lambda p: "drop" if "seed" in p else None] * 20
    refused(
        generate(stub.url, tmp_path / "a.json", tmp_path, "--max-retries", "1", "--concurrency", "1"),
        "cannot reach the server",
        "--no-request-seeds",
    )
    assert not (tmp_path / "a.json").exists()
    # the same crash seen as HTTP 500 (vLLM: "EngineCore encountered an issue")
    stub.plan = [lambda p: (500, {}, {"error": {"message": "EngineCore encountered an issue"}})] * 20
    refused(
        generate(stub.url, tmp_path / "a2.json", tmp_path, "--max-retries", "1", "--concurrency", "1"),
        "still failing after 1 retries",
        "--no-request-seeds",
    )
    stub.plan = [lambda p: "drop" if "seed" in p else None] * 20
    result = generate(stub.url, tmp_path / "b.json", tmp_path, "--no-request-seeds", "--concurrency", "1")
    assert result.returncode == 0, result.stderr
    assert all("seed" not in r["payload"] for r in stub.requests[-3:])
    # a server that never answered is not said to have stopped on a seed
    result = generate(closed_port_url(), tmp_path / "c.json", tmp_path, "--max-retries", "0")
    assert result.returncode == 2 and "--no-request-seeds" not in result.stderr, result.stderr


@pytest.mark.slow
@needs_data
def test_a_timeout_is_retried_then_reported(stub, tmp_path):
    import time

    def slow(payload):
        time.sleep(2.5)
        return None

    stub.plan = [slow, slow]
    result = generate(
        stub.url, tmp_path / "t.json", tmp_path, "--request-timeout", "1", "--max-retries", "1", "--concurrency", "1"
    )
    refused(result, "no complete reply within 1 s")


@pytest.mark.slow
@needs_data
def test_a_rate_limit_outlasting_the_retries_keeps_what_was_done_and_resume_asks_nothing_again(stub, tmp_path):
    # Question 1 needs 3 requests (20 samples, 8 per request); then every reply is 429.
    stub.plan = [None, None, None] + [lambda p: (429, {"Retry-After": "0"}, {"error": "slow down"})] * 50
    out = tmp_path / "r.json"
    result = generate(stub.url, out, tmp_path, "--concurrency", "1", "--max-retries", "2")
    refused(result, "still failing after 2 retries", "429")
    journal = tmp_path / "r.json.partial.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len(records) == 2 and len(records[1]["samples"]) == 20
    assert records[1]["usage"]["completion_tokens"] == 60
    done_id = records[1]["id"]
    stub.plan = []
    before = len(stub.requests)
    result = generate(stub.url, out, tmp_path, "--concurrency", "1", "--max-retries", "2")
    assert result.returncode == 0, result.stderr
    resumed = stub.requests[before:]
    assert len(resumed) == 6  # two questions left, three requests each: nothing asked again
    doc = json.loads(out.read_text())
    assert doc["model_answers"][done_id] == records[1]["samples"]
    assert doc["generation"]["usage"]["completion_tokens"] == 60 * 3
    assert not journal.exists()


@pytest.mark.slow
@needs_data
def test_over_long_and_empty_replies_are_capped_and_kept_empty(stub, tmp_path):
    def odd(payload):
        choices = [
            {"index": i, "text": ("x" * 100000) if i == 0 else ("" if i == 1 else None)} for i in range(payload["n"])
        ]
        return 200, {}, {"choices": choices}

    stub.plan = [odd] * 20
    out = tmp_path / "o.json"
    result = generate(stub.url, out, tmp_path, "--concurrency", "1")
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    first = next(iter(doc["model_answers"].values()))
    assert len(first) == 20 and max(len(a) for a in first) <= 2000 and "" in first
    assert out.stat().st_size < 200000
