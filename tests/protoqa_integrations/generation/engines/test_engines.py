"""The engine interface, chat prompts and answers from chat replies, and the openai engine's faults.

The fault cases run ``protoqa-eval generate --engine openai`` in new processes against a
hand-written OpenAI-compatible stub on 127.0.0.1 (rate limits with Retry-After, 5xx,
malformed and short replies, timeouts, a wrong key, a model not served). The real engines
(vLLM offline, ``vllm serve``, lm-eval's API backends) are tested in test_engines_real.py.
"""

from __future__ import annotations

import doctest
import importlib
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from protoqa_integrations.generation.engines import (
    ENGINES,
    Engine,
    EngineError,
    collapsed_share,
    is_collapsed,
    make_engine,
)
from protoqa_integrations.generation.engines.base import answers_of, request_seed
from protoqa_integrations.generation.engines.request_bounds import retry_delay
from protoqa_integrations.generation.prompts import answer_from_reply, cfc_chat_messages, protoqa_chat_messages
from protoqa_integrations.generation.settings import PromptSamples, SamplingConfig
from tests.support.hostile_server import closed_port_url

REPO = Path(__file__).resolve().parents[4]
DATA = REPO.parent / "shared" / "data"
DEV = DATA / "protoqa" / "dev.crowdsourced.jsonl"
needs_data = pytest.mark.skipif(not DEV.is_file(), reason=f"shared ProtoQA data not found under {DATA}")
KEY = "sk-test-secret-0123456789"


@pytest.mark.parametrize(
    "name",
    [
        "protoqa_integrations.generation.engines.base",
        "protoqa_integrations.generation.engines.openai",
        "protoqa_integrations.generation.engines.request_bounds",
        "protoqa_integrations.generation.engines.hf",
        "protoqa_integrations.generation.engines.vllm",
        "protoqa_integrations.generation.engines",
    ],
)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


# ---------------------------------------------------------------- chat prompts and replies


@pytest.mark.parametrize(
    "reply, answer",
    [
        ("1. Brush teeth", "brush teeth"),
        ("**Coffee**", "coffee"),
        ("Sure! Here's one: a beach towel.", "a beach towel"),
        ("Sure! Here's one:\n\n**Sunscreen**\n\nIt protects you from the sun.", "sunscreen"),
        ("- Umbrella\n- Hat", "umbrella"),
        ('"Pizza"', "pizza"),
        ("\u201cA dog\u201d", "a dog"),
        ("A: into the lake.", "into the lake"),
        ("Answer: the kitchen", "the kitchen"),
        ("2) _Hot dogs_", "hot dogs"),
        ("Pizza! Definitely.", "pizza"),
        ("Certainly: the bathroom", "the bathroom"),
        ("", ""),
        ("\n\n  \n", ""),
        ("1.5 hours", "1.5 hours"),
        # markdown tables: never the header row
        ("| # | answer |\n|---|---|\n| 1 | Sunscreen |\n| 2 | Hat |", "sunscreen"),
        ("Here are a few:\n\n| Answer |\n| :---: |\n| **Pizza** |", "pizza"),
        ("| # | answer |\n|---|---|", ""),
        # several answers in one line: the first
        ("Sunscreen, a hat, a towel.", "sunscreen"),
        ("Salt; pepper", "salt"),
        ("Bread and butter", "bread and butter"),
        ("Milk, please", "milk, please"),
        # quotes, headings, a preamble with nothing after it
        ("> Sunscreen", "sunscreen"),
        ("### Sunscreen", "sunscreen"),
        ("Sure! Here's one:", ""),
        # nothing but punctuation, separators or invisible characters: no answer
        ("...", ""),
        ("\u2014", ""),
        ("---\n***", ""),
        ("\u200b\u200c\u200d\ufeff", ""),
        ("\u00a0\u3000\u2028", ""),
        ("\u2066\u202e", ""),
        # bidi controls and zero-width characters inside an answer are removed
        ("\u202eazzip\u202c", "azzip"),
        ("piz\u200bza", "pizza"),
        ("\u2067Coffee\u2069", "coffee"),
    ],
)
def test_answers_from_chat_replies_of_real_shapes(reply, answer):
    assert answer_from_reply(reply) == answer


def test_an_over_long_reply_gives_a_capped_answer():
    assert len(answer_from_reply("word " * 500)) <= 80


def test_chat_prompts_are_turns_with_an_optional_system_prompt():
    turns = protoqa_chat_messages("Name something people bring to a picnic.", system_prompt="Be brief.")
    assert [t["role"] for t in turns] == ["system", "user"]
    assert turns[1]["content"].endswith("Q: Name something people bring to a picnic?")
    cfc = cfc_chat_messages("a farmer with crops. where are the farmers?")
    assert [t["role"] for t in cfc] == ["user", "assistant", "user"]
    assert cfc[0]["content"].endswith(
        "[Q]: a man throws a stick into the lake for his dog. where does the man throw the stick?"
    )
    assert cfc[2]["content"] == "[Q]: a farmer with crops. where are the farmers?"
    with pytest.raises(ValueError):
        protoqa_chat_messages("  ")


def test_the_guard_flags_collapsed_samples_only_above_temperature_zero():
    assert is_collapsed(["x"] * 300, 0.69)
    assert not is_collapsed(["x"] * 300, 0.0)
    assert not is_collapsed(["x"] * 5, 0.69)  # too few to judge
    assert not is_collapsed(["x"] * 270 + [str(i) for i in range(30)], 0.69)  # 90%: not more than 90%
    assert is_collapsed(["x"] * 271 + [str(i) for i in range(29)], 0.69)
    assert collapsed_share([]) == 0.0
    assert answers_of(["1. **Sun hat**"], chat=True) == ["sun hat"]


def test_request_seeds_are_distinct_and_repeatable():
    seeds = {request_seed(q, r) for q in range(50) for r in range(5)}
    assert len(seeds) == 250 and all(0 <= s < 2**31 for s in seeds)


class _Echo(Engine):
    """An engine that draws its own way: each prompt's text and seed."""

    def _sample(self, prompts, config, seeds, progress):
        for i in reversed(range(len(prompts))):  # any order, as the contract allows
            yield PromptSamples(i, [f"{prompts[i]}{seeds[i]}"], [prompts[i]])


def test_engine_sample_lists_the_prompts_and_gives_each_its_seed():
    config = SamplingConfig(num_samples=1, seed=7)
    assert [s.texts for s in _Echo().sample(iter(["a", "b"]), config)] == [["b8"], ["a7"]]
    assert [s.texts for s in _Echo().sample(["a"], config, seeds=[3.0])] == [["a3"]]
    samples = _Echo().sample(["a", "b"], config, seeds=[1])  # checked when drawn, as the engines' own were
    with pytest.raises(EngineError, match="^1 seeds for 2 prompts$"):
        next(samples)


def test_the_engine_registry_checks_and_names_what_joins_it():
    assert ENGINES.names() == ("hf", "openai", "vllm") and ENGINES["openai"].name == "openai"
    with pytest.raises(EngineError, match="unknown engine 'gpu'; choose one of: hf, openai, vllm"):
        make_engine("gpu", "gpt2")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from protoqa_integrations.generation.engines import ENGINES, Engine\n"
            "class Echo(Engine):\n"
            "    common = ('device',)\n"
            "    def __init__(self, model, *, device='cpu'):\n"
            "        super().__init__()\n"
            "ENGINES.register('echo')(Echo)\n"
            "print(ENGINES.names(), Echo.name)\n"
            "class Bad(Engine):\n"
            "    common = ('gpu',)\n"
            "for name, cls in (('bad', Bad), ('echo', Echo)):\n"
            "    try:\n"
            "        ENGINES.register(name)(cls)\n"
            "    except ValueError as exc:\n"
            "        print(exc)\n",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    registered, bad, twice = out.stdout.splitlines()
    assert registered == "('hf', 'openai', 'vllm', 'echo') echo"
    assert bad == "engine 'bad': Bad.build takes no keyword 'gpu'"
    assert twice.endswith("name 'echo' is registered already")


def test_retry_delay_honours_retry_after_and_is_capped():
    assert retry_delay(0, "7") >= 7.0
    assert 0 <= retry_delay(3, None) <= 8.0
    assert retry_delay(30, None) <= 60.0
    assert retry_delay(0, "Wed, 21 Oct 2015 07:28:00 GMT") <= 1.0  # a date in the past: no extra wait
    assert retry_delay(0, "not a number") <= 1.0


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
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), HF_HUB_OFFLINE="1"
    )
    env.pop("PROTOQA_DATA_DIR", None)
    env.pop("OPENAI_API_KEY", None)
    if key is not None:
        env["OPENAI_API_KEY"] = key
    args = [
        sys.executable,
        "-m",
        "protoqa_integrations",
        "generate",
        "tiny",
        "-o",
        str(output),
        "--engine",
        "openai",
        "--base-url",
        stub_url,
        "--data-dir",
        str(DATA),
        "--no-progress",
        "--limit",
        "3",
        "--num-samples",
        "20",
        "--max-n",
        "8",
        *extra,
    ]
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
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
    one_line_error(
        generate(stub.url, tmp_path / "a.json", tmp_path, key="sk-wrong"), "refused the key", "OPENAI_API_KEY"
    )
    one_line_error(generate(stub.url, tmp_path / "b.json", tmp_path, key=None), "refused the key")
    stub.models = ["other-model"]
    one_line_error(generate(stub.url, tmp_path / "c.json", tmp_path), "does not serve the model 'tiny'", "other-model")
    stub.models = ["tiny"]
    one_line_error(
        generate(closed_port_url(), tmp_path / "d.json", tmp_path, "--max-retries", "1"),
        "cannot reach the server",
    )
    stub.plan = [lambda p: (200, {}, b"<html>not json</html>")] * 10
    one_line_error(
        generate(stub.url, tmp_path / "e.json", tmp_path, "--max-retries", "1", "--concurrency", "1"), "malformed reply"
    )
    stub.plan = [lambda p: (200, {}, {"choices": []})] * 10
    one_line_error(
        generate(stub.url, tmp_path / "f.json", tmp_path, "--max-retries", "1", "--concurrency", "1"), "falling short"
    )
    one_line_error(generate(stub.url, tmp_path / "g.json", tmp_path, "--base-url", "ftp://x"), "--base-url")
    one_line_error(generate(stub.url, tmp_path / "h.json", tmp_path, "--concurrency", "0"), "--concurrency")
    for name in "abcdefgh":
        assert not (tmp_path / f"{name}.json").exists()


@pytest.mark.slow
@needs_data
def test_a_server_that_drops_seeded_requests_is_reported_naming_no_request_seeds(stub, tmp_path):
    # vLLM's CPU build stops on a seeded request ("CPU Generator does not use offset"): the client
    # sees the connection dropped after the server had answered, and says what to try.
    stub.plan = [lambda p: "drop" if "seed" in p else None] * 20
    one_line_error(
        generate(stub.url, tmp_path / "a.json", tmp_path, "--max-retries", "1", "--concurrency", "1"),
        "cannot reach the server",
        "--no-request-seeds",
    )
    assert not (tmp_path / "a.json").exists()
    # the same crash seen as HTTP 500 (vLLM: "EngineCore encountered an issue")
    stub.plan = [lambda p: (500, {}, {"error": {"message": "EngineCore encountered an issue"}})] * 20
    one_line_error(
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
    one_line_error(result, "no complete reply within 1 s")


@pytest.mark.slow
@needs_data
def test_a_rate_limit_outlasting_the_retries_keeps_what_was_done_and_resume_asks_nothing_again(stub, tmp_path):
    # Question 1 needs 3 requests (20 samples, 8 per request); then every reply is 429.
    stub.plan = [None, None, None] + [lambda p: (429, {"Retry-After": "0"}, {"error": "slow down"})] * 50
    out = tmp_path / "r.json"
    result = generate(stub.url, out, tmp_path, "--concurrency", "1", "--max-retries", "2")
    one_line_error(result, "still failing after 2 retries", "429")
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


@pytest.mark.slow
def test_hf_engine_refuses_chat(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [
            sys.executable,
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
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "--chat needs --engine openai or vllm" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


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
