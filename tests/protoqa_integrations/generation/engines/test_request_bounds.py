"""What bounds one request to an OpenAI-compatible server: the reply's byte cap, the waits between
retries, the whole-request deadline, and the message shown for a server's error reply."""

from __future__ import annotations

import json
import random
import socket
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from protoqa_integrations.generation.engines.base import EngineError
from protoqa_integrations.generation.engines.request_bounds import (
    MAX_BACKOFF_S,
    MAX_REPLY_CHARS,
    MAX_RETRY_AFTER_S,
    Deadline,
    Reply,
    ReplyTooLarge,
    Retryable,
    check_plain_reply,
    reply_byte_cap,
    retry_after_seconds,
    retry_delay,
    server_message,
)


def test_retry_delay_honours_retry_after_and_is_capped():
    assert retry_delay(0, "7") >= 7.0
    assert 0 <= retry_delay(3, None) <= 8.0
    assert retry_delay(30, None) <= 60.0
    assert retry_delay(0, "Wed, 21 Oct 2015 07:28:00 GMT") <= 1.0  # a date in the past: no extra wait
    assert retry_delay(0, "not a number") <= 1.0


def test_reply_byte_cap_leaves_room_for_every_choice_fully_escaped():
    assert reply_byte_cap(0) == reply_byte_cap(1) == 80 * 1024  # a request asks for one choice at least
    assert reply_byte_cap(10) - reply_byte_cap(9) == 16 * 1024
    escaped_choice = json.dumps({"text": "\u2603" * MAX_REPLY_CHARS})  # every character as \uXXXX
    assert len(escaped_choice.encode()) <= 16 * 1024
    assert issubclass(ReplyTooLarge, EngineError)


def test_retry_after_reads_seconds_and_http_dates_and_refuses_the_rest():
    assert retry_after_seconds(None) is None and retry_after_seconds("") is None
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds("-4") == 0.0  # never a negative wait
    assert retry_after_seconds("nan") is None and retry_after_seconds("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25.0 <= retry_after_seconds(later) <= 30.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # past dates ask for no wait


def test_retry_delay_is_full_jitter_over_a_doubling_window_and_seeded_by_the_rng():
    draws = [retry_delay(2, None, base=0.5, rng=random.Random(seed)) for seed in range(200)]
    assert all(0.0 <= d <= 2.0 for d in draws) and max(draws) > 1.5 and min(draws) < 0.5
    assert retry_delay(2, None, rng=random.Random(7)) == retry_delay(2, None, rng=random.Random(7))
    assert retry_delay(60, None, rng=random.Random(0)) <= MAX_BACKOFF_S  # 2**60 s capped
    # A server asking for longer than the cap gets the cap, never an unbounded wait.
    assert retry_delay(0, str(10**9), rng=random.Random(0)) == MAX_RETRY_AFTER_S


def test_retryable_counts_a_dropped_connection_as_a_server_failure():
    dropped = ConnectionResetError("reset by peer")
    assert Retryable("HTTP 429", retry_after="3").server_failed is False
    assert Retryable("HTTP 503", server_failed=True).server_failed is True
    error = Retryable("connection dropped", dropped=dropped)
    assert error.server_failed is True and error.dropped is dropped and str(error) == "connection dropped"


def test_reply_decodes_bad_utf8_with_replacements_and_parses_json():
    reply = Reply(200, {}, b'{"a": 1}')
    assert reply.json() == {"a": 1} and "content" not in repr(reply)
    assert Reply(500, {}, b"bad \xff byte").text == "bad \ufffd byte"


class _Response:
    def __init__(self, body: bytes, status_code: int = 500) -> None:
        self.status_code = status_code
        self.reply = Reply(status_code, {}, body)
        self.text = self.reply.text

    def json(self):
        return self.reply.json()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": {"message": "model  not\\nfound", "code": 404}}', "model not found"),
        (b'{"error": "rate limited"}', "rate limited"),
        (b'{"message": "bad request"}', "bad request"),
        (b'{"detail": "Not Found"}', "Not Found"),
        (b"<html>  Bad   Gateway </html>", "<html> Bad Gateway </html>"),
        (b"", "HTTP 500"),
        (b"[" * 100_000 + b"]" * 100_000, "[" * 300),  # nested past the parser's limit: the text, cut short
    ],
)
def test_server_message_takes_the_json_error_else_the_text_on_one_short_line(body, message):
    assert server_message(_Response(body)) == message


def test_server_message_is_at_most_300_characters():
    assert len(server_message(_Response(json.dumps({"error": {"message": "x " * 5000}}).encode()))) == 300


class _Stream:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def get_extra_info(self, name: str):
        return self.sock if name == "socket" else None


def test_deadline_shuts_the_adopted_socket_which_wakes_a_blocked_read():
    ours, server = socket.socketpair()
    with ours, server:
        deadline = Deadline(0.2)
        deadline.trace("connection.connect_tcp.complete", {"return_value": _Stream(ours)})
        assert not deadline.passed()
        start = time.monotonic()
        assert ours.recv(1) == b""  # the server sends nothing: only the deadline ends the read
        assert 0.1 <= time.monotonic() - start < 5.0 and deadline.expired and deadline.passed()


def test_deadline_shuts_a_socket_adopted_after_it_passed_and_ignores_other_events():
    ours, server = socket.socketpair()
    with ours, server:
        deadline = Deadline(0.0)
        deadline.trace("http11.send_request_headers.complete", {"return_value": _Stream(ours)})
        deadline.adopt(None)
        deadline.adopt(_Stream("not a socket"))
        for _ in range(100):
            if deadline.expired:
                break
            time.sleep(0.01)
        assert deadline.passed()
        server.sendall(b"x")
        assert ours.recv(1) == b"x"  # never adopted: still open
        deadline.adopt(_Stream(ours))
        assert ours.recv(1) == b""


def test_a_cancelled_deadline_never_shuts_the_socket():
    ours, server = socket.socketpair()
    with ours, server:
        deadline = Deadline(0.05)
        deadline.adopt(_Stream(ours))
        deadline.cancel()
        time.sleep(0.15)
        assert not deadline.expired
        server.sendall(b"y")
        assert ours.recv(1) == b"y"


def test_check_plain_reply_names_where_a_redirect_leads_and_cuts_a_long_encoding():
    url = "http://u:pw@127.0.0.1:8000/v1/completions?api-version=1"
    check_plain_reply(200, {"Content-Encoding": "identity"}, url, "it answered", "--base-url")
    check_plain_reply(200, {}, url, "it answered", "--base-url")
    with pytest.raises(EngineError) as redirect:
        check_plain_reply(302, {"Location": "/v2/completions"}, url, "it answered", "--base-url")
    assert str(redirect.value) == (
        "it answered with a redirect (HTTP 302) to http://***:***@127.0.0.1:8000/v2/completions; pass the address it "
        "redirects to as --base-url"
    )
    with pytest.raises(EngineError, match="to an address it does not give;"):
        check_plain_reply(307, {}, url, "it answered", "--base-url")

    class Refused(EngineError):
        pass

    with pytest.raises(Refused) as compressed:
        check_plain_reply(200, {"Content-Encoding": " GZIP" + "x" * 100}, url, "it answered", "x", Refused)
    assert str(compressed.value).startswith(f"it answered with a gzip{'x' * 36}-compressed reply although")
