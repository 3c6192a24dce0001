"""An OpenAI-compatible server on 127.0.0.1 that misbehaves on purpose, one way per mode.

``GET /v1/models`` answers normally (the model ``tiny``); every ``POST`` misbehaves:

* ``endless``: a chunked ``200`` reply that never ends (a JSON prefix, then ``x`` forever);
* ``trickle``: a valid completion reply sent one byte a second;
* ``huge``: a valid completion reply of ``--huge-mb`` MB (one choice's text), sent at full speed;
* ``retry-after``: ``429`` with ``Retry-After: 1000000000``;
* ``stall``: headers, then nothing until the client goes away;
* ``ok``: a valid reply (``n`` choices, a different answer per seed), after ``delay`` seconds:
  the well-behaved server that runs racing each other or reading provenance need; with
  ``reply_models``, each reply names the next of them as its ``model``;
* ``redirect``: ``307`` to another address;
* ``gzip``: a valid reply, gzip-compressed although the client asks for none.

``GET /version`` answers ``{"version": VERSION}`` when the server is given a ``version``
(vLLM's server does), else 404.

Used by tests/protoqa_integrations/generation/engines/test_hostile_servers.py and benchmarks/bench_hostile_servers.py,
which run the same clients against it (:func:`generate_command`, :func:`lm_eval_chat_command`, in
:func:`client_env`):

    python tests/support/hostile_server.py endless    # prints the base URL, serves until killed
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

MODES = ("endless", "trickle", "huge", "retry-after", "stall", "ok", "redirect", "gzip")


def _completion(text: str, n: int, chat: bool) -> bytes:
    key = "message" if chat else "text"
    choice = (lambda i: {"index": i, "message": {"role": "assistant", "content": text}}) if chat else None
    choices = [choice(i) if choice else {"index": i, key: text} for i in range(n)]
    return json.dumps({"choices": choices}).encode()


class HostileServer:
    """A server misbehaving as ``mode`` (:data:`MODES`); ``url`` is its ``/v1`` base URL."""

    def __init__(
        self, mode: str, huge_mb: int = 300, delay: float = 0.0, version: str = "", reply_models: tuple[str, ...] = ()
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        self.mode, self.huge_bytes = mode, huge_mb * 1_000_000
        self.posts = 0
        self.delay, self.version, self.reply_models = delay, version, reply_models
        self.paths: list[str] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()
        # Cleared, an ``ok`` reply waits (at most 30 s) until it is set: a test can hold a run
        # mid-way for as long as it needs, instead of racing a delay on a busy machine.
        self.release = threading.Event()
        self.release.set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                with server.lock:
                    server.paths.append(self.path)
                status, body = 200, json.dumps({"data": [{"id": "tiny", "object": "model", "root": "/models/tiny"}]})
                if self.path.split("?")[0] == "/version":
                    status, body = (200, json.dumps({"version": server.version})) if server.version else (404, "{}")
                self._send(status, body.encode())

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.posts += 1
                    server.paths.append(self.path)
                chat = "messages" in payload
                try:
                    getattr(self, "_" + server.mode.replace("-", "_"))(int(payload.get("n") or 1), chat)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _endless(self, n: int, chat: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                prefix = b'{"choices": [{"index": 0, "text": "'
                block = b"x" * 65536
                self.wfile.write(b"%x\r\n%s\r\n" % (len(prefix), prefix))
                while not server.closing.is_set():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))

            def _trickle(self, n: int, chat: bool) -> None:
                body = _completion("a slow answer", n, chat)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for i in range(len(body)):
                    if server.closing.is_set():
                        return
                    self.wfile.write(body[i : i + 1])
                    self.wfile.flush()
                    time.sleep(1.0)

            def _huge(self, n: int, chat: bool) -> None:
                head = _completion("\0", n, chat).split(b"\\u0000", 1)
                filler = server.huge_bytes - len(head[0]) - len(head[1])
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(head[0]) + filler + len(head[1])))
                self.end_headers()
                self.wfile.write(head[0])
                block = b"x" * 1_000_000
                while filler > 0:
                    self.wfile.write(block[: min(filler, len(block))])
                    filler -= len(block)
                self.wfile.write(head[1])

            def _retry_after(self, n: int, chat: bool) -> None:
                body = json.dumps({"error": {"message": "rate limited"}}).encode()
                self.send_response(429)
                self.send_header("Retry-After", "1000000000")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _ok(self, n: int, chat: bool) -> None:
                time.sleep(server.delay)
                server.release.wait(30)
                with server.lock:
                    count = server.posts
                choices = [
                    {"index": i, "message": {"role": "assistant", "content": f"answer {(count + i) % 7}"}}
                    if chat
                    else {"index": i, "text": f" answer {(count + i) % 7}. more"}
                    for i in range(n)
                ]
                reply: dict = {"choices": choices}
                if server.reply_models:
                    reply["model"] = server.reply_models[(count - 1) % len(server.reply_models)]
                self._send(200, json.dumps(reply).encode())

            def _redirect(self, n: int, chat: bool) -> None:
                self.send_response(307)
                self.send_header("Location", "http://127.0.0.1:9/v1/completions")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _gzip(self, n: int, chat: bool) -> None:
                body = gzip.compress(_completion("a packed answer", n, chat))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stall(self, n: int, chat: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.flush()
                server.closing.wait()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


def closed_port_url() -> str:
    """The base URL of a port on 127.0.0.1 where nothing listens (a refused connection)."""
    probe = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = probe.server_address[1]
    probe.server_close()
    return f"http://127.0.0.1:{port}/v1"


def client_env(source: Path, **extra: str) -> dict[str, str]:
    """The environment a client of the server runs in: the code of ``source``, the Hub switched off,
    and no API key or data folder taken from the caller's shell; ``extra`` is added last."""
    env = dict(os.environ, PYTHONPATH=str(source), HF_HUB_OFFLINE="1")
    env.pop("OPENAI_API_KEY", None)
    env.pop("PROTOQA_DATA_DIR", None)
    return {**env, **extra}


def generate_command(
    url: str, output: Path, data: Path, *extra: str, limit: int = 2, samples: int = 8, concurrency: Optional[int] = 1
) -> list[str]:
    """``protoqa-eval generate`` with the ``openai`` engine at ``url``: ``limit`` questions, ``samples`` samples,
    ``concurrency`` requests at a time (the engine's default for ``None``), then ``extra``."""
    return [
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
        url,
        "--data-dir",
        str(data),
        "--no-progress",
        "--limit",
        str(limit),
        "--num-samples",
        str(samples),
        *([] if concurrency is None else ["--concurrency", str(concurrency)]),
        *extra,
    ]


def one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """The one line a refused command wrote to stderr (status 2, no traceback), after checking it holds ``fragments``."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def lm_eval_chat_command(url: str, concurrent: int) -> list[str]:
    """lm-eval's chat task through the project's chat backend at ``url``: one question, one retry, 10 s;
    ``concurrent`` 1 takes the harness's ``requests`` path, more its ``aiohttp`` path. The data folder
    goes in ``$PROTOQA_DATA_DIR``."""
    return [
        sys.executable,
        "-m",
        "protoqa_integrations.harnesses.lm_eval_tasks",
        "run",
        "--model",
        "protoqa-local-chat-completions",
        "--model_args",
        f"model=tiny,base_url={url}/chat/completions,num_concurrent={concurrent},max_retries=1,timeout=10",
        "--tasks",
        "protoqa_chat",
        "--apply_chat_template",
        "--limit",
        "1",
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--huge-mb", type=int, default=300)
    args = parser.parse_args(argv)
    server = HostileServer(args.mode, args.huge_mb)
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
