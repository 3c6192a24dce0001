"""A server run for a test in its own process: started, polled until it answers, always stopped.

The Space's and the Hub-folder apps' tests start a page (``python app.py``) the way a user or
a Space does (:func:`started_app`), talk to it over HTTP, and read its memory from ``/proc``;
the engine tests start ``vllm serve`` the same way (:func:`started_server`).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional, Union
from urllib.parse import urlsplit

from tests.support.paths import REPO

STOP_TIMEOUT = 15
"""Seconds a stopped server gets to exit before it is killed."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now.

    >>> 0 < free_port() < 2**16
    True
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def process_memory(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak resident memory) of a process, in bytes, from ``/proc/<pid>/status``.

    >>> import os
    >>> sorted(process_memory(os.getpid()))
    ['VmHWM', 'VmRSS']
    """
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        return {line.split(":")[0]: int(line.split()[1]) * 1024 for line in fh if line.startswith(("VmRSS:", "VmHWM:"))}


def open_local(url: str, timeout: float, data: Optional[bytes] = None, headers: Optional[dict] = None) -> Any:
    """``urllib.request.urlopen`` for an app under test, which listens on 127.0.0.1 over plain HTTP.

    >>> open_local("file:///etc/passwd", timeout=1)
    Traceback (most recent call last):
    ...
    ValueError: not an app under test on 127.0.0.1: file:///etc/passwd
    """
    if not url.startswith("http://127.0.0.1:"):
        raise ValueError(f"not an app under test on 127.0.0.1: {url}")
    request = urllib.request.Request(url, data=data, headers=headers or {})  # noqa: S310 (checked above)
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 (http://127.0.0.1 only, checked above)


def _log_tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


def _wait_until_answering(url: str, process: subprocess.Popen, log: Path, timeout: float, every: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}:\n{_log_tail(log)}")
        try:
            with open_local(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise AssertionError(f"the server did not answer at {url} within {timeout} s:\n{_log_tail(log)}")
        time.sleep(every)


def _stop(process: subprocess.Popen, timeout: float) -> None:
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


@contextmanager
def started_server(
    command: Sequence[str],
    *,
    ready_url: str,
    env: Mapping[str, str],
    log: Path,
    timeout: float,
    cwd: Union[str, Path, None] = None,
    every: float = 0.5,
    stop_timeout: float = STOP_TIMEOUT,
) -> Iterator[subprocess.Popen]:
    """Run ``command`` (a server on 127.0.0.1) until the block ends; the block gets its process.

    ``env`` is the server's whole environment, and its output goes to ``log``. ``ready_url``
    is polled every ``every`` seconds; the block starts once it answers 200. A server that exits
    first, or does not answer within ``timeout`` seconds, fails the test with the end of its
    log. The server is stopped (killed after ``stop_timeout`` seconds if it must be) however
    the block ends.

    >>> import os, sys, tempfile
    >>> port = free_port()
    >>> command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    >>> with tempfile.TemporaryDirectory() as folder, started_server(
    ...     command, ready_url=f"http://127.0.0.1:{port}/", env=os.environ, log=Path(folder) / "log", timeout=30, cwd=folder
    ... ) as process:
    ...     process.poll() is None
    True
    """
    with open(log, "w") as out:
        process = subprocess.Popen(list(command), cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_until_answering(ready_url, process, log, timeout, every)
        yield process
    finally:
        _stop(process, stop_timeout)


@contextmanager
def started_app(
    command: Sequence[str],
    *,
    cwd: Union[str, Path],
    env: Mapping[str, str],
    log: Path,
    timeout: float,
    ready_path: str = "/gradio_api/info",
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run a Gradio app on a free port of 127.0.0.1 until the block ends: ``(base URL, process)``.

    ``env`` is the app's whole environment; the server's host and port are added to it.
    The app's output goes to ``log``. The block starts once ``ready_path`` answers 200;
    an app that exits first, or does not answer within ``timeout`` seconds, fails the test
    with the end of its log. The app is stopped (killed if it must be) however the block ends.

    >>> with started_app([sys.executable, "app.py"], cwd=folder, env=env, log=log, timeout=120) as (base, process):  # doctest: +SKIP
    ...     open_local(base + "/gradio_api/info", timeout=10)
    """
    port = free_port()
    env = {**env, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "PYTHONUNBUFFERED": "1"}
    base = f"http://127.0.0.1:{port}"
    with started_server(command, ready_url=base + ready_path, env=env, log=log, timeout=timeout, cwd=cwd) as process:
        yield base, process


def post_raw(base: str, path: str, body: bytes, chunked: bool = False, timeout: float = 30.0) -> tuple[object, float]:
    """(HTTP status, or the connection error when the server closed first; seconds) of one raw POST.

    With ``chunked`` the body is sent in 1 MiB chunks without a ``Content-Length``.

    >>> post_raw("http://127.0.0.1:1", "/", b"{}")[0]  # nothing listens on port 1
    'ConnectionRefusedError'
    """
    parts = urlsplit(base)
    started = time.perf_counter()
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        if chunked:
            connection.putrequest("POST", path)
            connection.putheader("Content-Type", "application/json")
            connection.putheader("Transfer-Encoding", "chunked")
            connection.endheaders()
            for start in range(0, len(body), 2**20):
                chunk = body[start : start + 2**20]
                connection.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            connection.send(b"0\r\n\r\n")
        else:
            connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        status: object = connection.getresponse().status
    except (ConnectionError, http.client.HTTPException) as exc:
        status = type(exc).__name__
    finally:
        connection.close()
    return status, time.perf_counter() - started


def gradio_call(base: str, endpoint: str, data: list, timeout: float) -> tuple[Optional[str], Any, float]:
    """(SSE event name, its data, seconds) of one call to the named endpoint of the Gradio app at ``base``, the way
    its HTTP API works: a POST that returns an event id, then a GET of the event stream."""
    started = time.perf_counter()
    with open_local(
        f"{base}/gradio_api/call/{endpoint}",
        timeout=timeout,
        data=json.dumps({"data": data}).encode(),
        headers={"Content-Type": "application/json"},
    ) as response:
        event_id = json.load(response)["event_id"]
    with open_local(f"{base}/gradio_api/call/{endpoint}/{event_id}", timeout=timeout) as response:
        stream = response.read().decode()
    seconds = time.perf_counter() - started
    event, payload = None, None
    for line in stream.splitlines():
        if line.startswith("event: "):
            event = line[len("event: ") :]
        elif line.startswith("data: "):
            payload = json.loads(line[len("data: ") :])
    return event, payload, seconds


def hub_folder_env(folder: Path) -> dict[str, str]:
    """The environment a Hub folder's page (``python app.py``) runs in for a test: this checkout's code, the Hub
    switched off, ``evaluate``'s module cache in ``folder``, no analytics."""
    return {
        **os.environ,
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_MODULES_CACHE": str(folder / "modules"),
        "PYTHONPATH": str(REPO),
    }
