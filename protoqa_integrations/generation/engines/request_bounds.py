"""What bounds one request to an OpenAI-compatible server: the reply's byte cap, the waits between retries, the whole-request deadline.

The ``openai`` engine (:mod:`.openai`) and lm-eval's ``protoqa-*-completions`` backends
(:mod:`protoqa_integrations.harnesses.lm_eval_tasks.api_backends`) read replies within
:func:`reply_byte_cap` and refuse a redirect or a compressed reply by :func:`check_plain_reply`; the engine waits :func:`retry_delay` between retries and ends a
request at its deadline. :mod:`.openai` names the public ones too.

>>> reply_byte_cap(1)
81920
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Optional
from urllib.parse import urljoin

from protoqa_core.redaction import redact_url
from protoqa_integrations.generation.engines.base import EngineError

__all__ = [
    "MAX_REPLY_CHARS",
    "MAX_BACKOFF_S",
    "MAX_RETRY_AFTER_S",
    "MAX_RETRY_WAIT_S",
    "ReplyTooLarge",
    "reply_byte_cap",
    "retry_after_seconds",
    "retry_delay",
    "CONTEXT_WORDS",
    "Deadline",
    "Reply",
    "Retryable",
    "check_plain_reply",
    "TooLong",
    "server_message",
]

MAX_REPLY_CHARS = 2000


RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


MAX_BACKOFF_S = 60.0
"""The longest wait of the exponential backoff."""


MAX_RETRY_AFTER_S = 60.0
"""The longest ``Retry-After`` obeyed; a server asking for more stops the run."""


MAX_RETRY_WAIT_S = 120.0
"""The longest time one request spends waiting between its retries, all waits together."""


REPLY_BASE_BYTES = 64 * 1024


REPLY_CHOICE_BYTES = 16 * 1024


def reply_byte_cap(n: int) -> int:
    """The most bytes read of a reply asking for ``n`` choices: 64 KiB plus 16 KiB per choice.

    A choice of :data:`MAX_REPLY_CHARS` characters takes at most 12,000 bytes, even JSON-escaped.

    >>> reply_byte_cap(1), reply_byte_cap(128)
    (81920, 2162688)
    """
    return REPLY_BASE_BYTES + max(1, n) * REPLY_CHOICE_BYTES


def retry_after_seconds(value: Optional[str]) -> Optional[float]:
    """The seconds a ``Retry-After`` header asks for (seconds or an HTTP date), None when absent or unreadable.

    >>> retry_after_seconds("3"), retry_after_seconds("soon"), retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT")
    (3.0, None, 0.0)
    """
    if not value:
        return None
    try:
        wanted = float(value)
    except ValueError:
        try:
            wanted = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    if wanted != wanted:  # NaN
        return None
    return max(wanted, 0.0)


def retry_delay(
    attempt: int, retry_after: Optional[str], base: float = 1.0, rng: Optional[random.Random] = None
) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): full jitter over ``base * 2**attempt``, capped at
    :data:`MAX_BACKOFF_S`, and never less than the server's ``Retry-After`` (seconds or an HTTP date) up to
    :data:`MAX_RETRY_AFTER_S`.

    >>> retry_delay(0, "3") >= 3.0, retry_delay(10, None) <= 60.0, retry_delay(0, "1000000000") <= 60.0
    (True, True, True)
    """
    uniform = rng.uniform if rng is not None else random.uniform
    delay = uniform(0, min(MAX_BACKOFF_S, base * (2**attempt)))
    wanted = retry_after_seconds(retry_after)
    if wanted is not None:
        delay = max(delay, min(wanted, MAX_RETRY_AFTER_S))
    return delay


class ReplyTooLarge(EngineError):
    """A reply passed its byte cap (:func:`reply_byte_cap`): the server ignores ``max_tokens``."""


class TooLong(Exception):
    """The server says the prompt does not fit the model's context: the question is skipped."""


CONTEXT_WORDS = ("context length", "context window", "maximum context", "too long", "max_model_len")


class Retryable(Exception):
    """A failed request worth asking again: the server's ``Retry-After``, the error it replaces, and whether the server failed."""

    def __init__(
        self,
        message: str,
        retry_after: Optional[str] = None,
        dropped: Optional[Exception] = None,
        server_failed: bool = False,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.dropped = dropped  # the connection failed under the request (the server may have gone)
        self.server_failed = server_failed or dropped is not None  # a 5xx or a dropped connection


@dataclass
class Reply:
    """A reply read within its bounds: status, headers and the whole body."""

    status_code: int
    headers: Any
    content: bytes = field(repr=False)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class Deadline:
    """Ends a request at a fixed time: when it passes, the request's socket is shut down, which wakes a read
    blocked on it (a per-read timeout alone lets a server sending a byte at a time go on for ever)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sock: Optional[socket.socket] = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict) -> None:
        """httpcore's ``trace`` hook: adopt the socket of a new connection (and of its TLS layer)."""
        if event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            self.adopt(info.get("return_value"))

    def adopt(self, stream: Any) -> None:
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sock = sock
            if self.expired:
                self._shut()

    def passed(self) -> bool:
        return self.expired or time.monotonic() >= self.end

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._shut()

    def _shut(self) -> None:
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed
                pass

    def cancel(self) -> None:
        self._timer.cancel()


def server_message(response: Any) -> str:
    """The error message of a server's reply: its JSON ``error`` when it has one, else its text, cut short."""
    try:
        body = response.json()
    except (ValueError, RecursionError):  # not JSON (or nested past the parser's limit): the raw text
        body = None
    message = None
    if isinstance(body, dict):
        error = body.get("error")
        message = (
            error.get("message") if isinstance(error, dict) else (error or body.get("message") or body.get("detail"))
        )
    text = str(message) if message else response.text[:1000]
    return " ".join(str(text).split())[:300] or f"HTTP {response.status_code}"


def check_plain_reply(
    status: int,
    headers: Mapping[str, str],
    url: str,
    answered: str,
    setting: str,
    error: type[EngineError] = EngineError,
) -> None:
    """Refuse, with ``error`` in one line that begins with ``answered`` and names the fix, a redirect (not followed:
    the address it leads to, read against ``url`` and with credentials hidden, belongs in ``setting``) and a
    compressed reply (the clients ask for none: its size would escape :func:`reply_byte_cap`).

    >>> check_plain_reply(200, {}, "http://127.0.0.1:8000/v1/completions", "the server answered", "--base-url")
    >>> check_plain_reply(307, {"Location": "/v2/completions"}, "http://u:pw@127.0.0.1:8000/v1/completions",
    ...                   "the server answered", "--base-url")
    Traceback (most recent call last):
    ...
    protoqa_integrations.generation.engines.base.EngineError: the server answered with a redirect (HTTP 307) to http://***:***@127.0.0.1:8000/v2/completions; pass the address it redirects to as --base-url
    """
    if 300 <= status < 400:
        location = str(headers.get("Location") or "")
        target = redact_url(urljoin(url, location))[:200] if location else "an address it does not give"
        raise error(
            f"{answered} with a redirect (HTTP {status}) to {target}; pass the address it redirects to as {setting}"
        )
    encoding = str(headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise error(
            f"{answered} with a {encoding[:40]}-compressed reply although this client asks for none "
            "(Accept-Encoding: identity); turn compression off on the server or on the proxy in front of it"
        )
