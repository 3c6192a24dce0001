"""``openai``: any OpenAI-compatible server (OpenAI, vLLM's ``vllm serve``, llama.cpp, TGI, ...).

What it asks, how every request is bounded (time, size, retries, refused connections), which
faults end the run and how replies are read: docs/api/protoqa_integrations.md; what it records
of the server: docs/evaluate-a-model.md. Faults that retrying cannot mend raise
:class:`EngineError` only after every question already complete has been yielded, so the
caller's journal keeps them. The caps, the retry waits and the deadline live in
:mod:`.request_bounds`.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Optional
from urllib.parse import urlsplit

from protoqa_core.install import install_command
from protoqa_core.progress import report_progress
from protoqa_core.redaction import redact_url, url_secrets
from protoqa_integrations.generation.engines.base import (
    Engine,
    EngineError,
    EngineOption,
    Prompt,
    answers_of,
    request_seed,
)
from protoqa_integrations.generation.engines.request_bounds import (
    CONTEXT_WORDS,
    MAX_REPLY_CHARS,
    MAX_RETRY_AFTER_S,
    MAX_RETRY_WAIT_S,
    REPLY_BASE_BYTES,
    RETRY_STATUSES,
    Deadline,
    Reply,
    ReplyTooLarge,
    Retryable,
    TooLong,
    check_plain_reply,
    reply_byte_cap,
    retry_after_seconds,
    retry_delay,
    server_message,
)
from protoqa_integrations.generation.settings import STOP_STRINGS, PromptSamples, SamplingConfig

__all__ = ["OpenAIEngine", "KEY_ENV"]

KEY_ENV = "OPENAI_API_KEY"


class OpenAIEngine(Engine):
    """An OpenAI-compatible server at ``base_url`` serving ``model``.

    >>> engine = OpenAIEngine("gpt-3.5-turbo-instruct", base_url="https://api.openai.com/v1")  # doctest: +SKIP
    """

    name = "openai"
    summary = "an OpenAI-compatible server at --base-url; key from $OPENAI_API_KEY"
    common = ("revision", "chat")
    options = (
        EngineOption(
            "base_url", "--base-url", "the server's API root, e.g. http://127.0.0.1:8000/v1", str, metavar="URL"
        ),
        EngineOption("concurrency", "--concurrency", "most requests in flight", int),
        EngineOption("max_n", "--max-n", "most choices asked per request", int, recorded=True),
        EngineOption(
            "timeout",
            "--request-timeout",
            "seconds a whole request may take: connecting, sending, waiting and reading the reply",
            float,
            metavar="SECONDS",
        ),
        EngineOption(
            "max_retries",
            "--max-retries",
            "retries of a request on 429, 5xx, timeouts and dropped connections (a refused connection is not retried)",
            int,
        ),
        EngineOption(
            "request_seeds",
            "--no-request-seeds",
            "send no seed (for servers that fail on seeded requests); samples are then not repeatable",
            negate=True,
            recorded=True,
        ),
    )

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        chat: bool = False,
        revision: Optional[str] = None,
        concurrency: int = 4,
        max_n: int = 128,
        timeout: float = 60.0,
        max_retries: int = 6,
        backoff: float = 1.0,
        check_model: bool = True,
        request_seeds: bool = True,
    ) -> None:
        super().__init__()
        for option, value in (("--concurrency", concurrency), ("--max-n", max_n)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise EngineError(f"{option} must be >= 1, got {value!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise EngineError(f"--max-retries must be >= 0, got {max_retries!r}")
        if not timeout > 0:
            raise EngineError(f"--request-timeout must be > 0, got {timeout!r}")
        try:
            import httpx
        except ImportError as exc:
            raise EngineError(f"the openai engine needs httpx ({exc}); {install_command('openai')}") from exc
        self.httpx = httpx
        self.model_name, self.revision, self.chat = model, revision, chat
        # A query in the address (``?api-version=...``, ``?key=...``) goes after each request's path.
        address, _, self.query = base_url.partition("?")
        self.base_url = address.rstrip("/")
        self.shown_url = redact_url(base_url.rstrip("/"))
        self._secrets = sorted(url_secrets(base_url), key=len, reverse=True)
        if not self.base_url.startswith(("http://", "https://")):
            raise EngineError(f"--base-url must start with http:// or https://, got {self.shown_url!r}")
        self.concurrency, self.max_n, self.timeout = concurrency, max_n, float(timeout)
        self.max_retries, self.backoff = max_retries, float(backoff)
        self.request_seeds = bool(request_seeds)
        key = os.environ.get(KEY_ENV, "")
        if key and urlsplit(address).username is not None:
            # httpx would send the address's user:password as Basic auth in place of the key
            raise EngineError(
                f"--base-url {self.shown_url} carries a user name and password and ${KEY_ENV} is set: only one "
                f"can be sent; drop the user:password from --base-url to send the key, or unset ${KEY_ENV}"
            )
        # identity: the byte cap counts what the server sends, not what a decompressor makes of it
        headers = {"Accept-Encoding": "identity"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.client = httpx.Client(
            headers=headers, timeout=httpx.Timeout(self.timeout), limits=httpx.Limits(max_connections=concurrency)
        )
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0
        self.server: dict[str, str] = {}
        self.reply_models: list[str] = []  # the model names the replies give, in the order first seen
        if check_model:
            self._check_model()
            self._check_version()

    def describe(self) -> dict[str, Any]:
        # The key is a secret and the server's address may embed one: the address is recorded redacted.
        return {
            "engine": self.name,
            "model": self.model_name,
            "revision": self.revision,
            "chat": self.chat,
            "max_n": self.max_n,
            "request_seeds": self.request_seeds,
            "base_url": self.shown_url,
            **self.server,
            **({"reply_model": self.reply_models[0]} if self.reply_models else {}),
        }

    def _url(self, path: str, root: Optional[str] = None) -> str:
        """The address of ``path`` under ``root`` (default: the API root), with the address's query."""
        return (root or self.base_url) + path + (f"?{self.query}" if self.query else "")

    def _scrub(self, text: str) -> str:
        """``text`` with the address's credentials replaced by ``***`` (error texts may quote the address)."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _seed_hint(self) -> str:
        """Why a server that answered before may have gone wrong: some stop on a seeded request
        (vLLM's CPU build: "CPU Generator does not use offset", seen as HTTP 500 or a dropped connection)."""
        if not (self.request_seeds and self.requests):
            return ""
        return (
            "; it answered earlier requests, so it may have stopped on a seeded request "
            "(vLLM's CPU build does): run again with --no-request-seeds"
        )

    def _fail_unreachable(self, exc: Exception) -> EngineError:
        refused = " (a refused connection is not retried)" if isinstance(exc, self.httpx.ConnectError) else ""
        return EngineError(
            f"cannot reach the server at {self.shown_url} ({type(exc).__name__}: "
            f"{self._scrub(' '.join(str(exc).split()))[:200]}); check --base-url and that the server is running"
            f"{refused}{self._seed_hint()}"
        )

    def _check_status(self, response: Any) -> None:
        if response.status_code in (401, 403):
            raise EngineError(
                f"the server at {self.shown_url} refused the key (HTTP {response.status_code}: "
                f"{self._scrub(server_message(response))}); set ${KEY_ENV} to a valid key"
            )
        if response.status_code == 404 and "model" in server_message(response).lower():
            raise EngineError(
                f"the server at {self.shown_url} does not serve the model {self.model_name!r}: "
                f"{self._scrub(server_message(response))}"
            )

    def _check_plain_reply(self, response: Any, path: str) -> None:
        """Refuse a redirect and a compressed reply (asked for with ``Accept-Encoding: identity``) in one line."""
        answered = f"the server at {self.shown_url} answered {path}"
        check_plain_reply(response.status_code, response.headers, self._url(path), answered, "--base-url")

    def _note_reply_model(self, body: Any, path: str) -> None:
        """Record the model a reply names; replies naming two different models stop the run.

        A hosted API answers an alias with a dated snapshot, so a name other than ``--model`` alone is
        recorded (``reply_model``), not refused."""
        named = body.get("model") if isinstance(body, dict) else None
        if not isinstance(named, str) or not named:
            return
        named = named[:300]
        with self._lock:
            if named not in self.reply_models:
                self.reply_models.append(named)
            models = list(self.reply_models)
        if len(models) > 1:
            raise EngineError(
                f"the replies of the server at {self.shown_url} to {path} name more than one model "
                f"({', '.join(repr(m) for m in models[:3])}) for --model {self.model_name!r}: the samples would mix "
                "models; check what the server (or a proxy in front of it) routes the requests to"
            )

    def _check_model(self) -> None:
        """Ask ``/models`` once, so an unreachable server, a wrong key or model name stops the run before any
        sampling; records the served model's ``id`` and ``root`` where the server lists them."""
        try:
            response = self._send("GET", "/models", None)
        except EngineError as exc:
            if "HTTP 404" in str(exc) or "HTTP 405" in str(exc):
                return  # no model list here: the first sampling reply says whether the model is served
            raise
        # A server without a usable model list is judged by its first sampling reply.
        try:
            body = response.json()
        except (ValueError, RecursionError):
            return
        listed = body.get("data", []) if isinstance(body, dict) else []
        models = [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []
        served = [m.get("id") for m in models]
        if served and self.model_name not in served:
            raise EngineError(
                f"the server at {self.shown_url} does not serve the model {self.model_name!r}; "
                f"it serves: {', '.join(map(str, served[:10]))}"
            )
        for entry in models:
            if entry.get("id") == self.model_name:
                for name in ("id", "root"):
                    if isinstance(entry.get(name), str) and entry[name]:
                        self.server[f"served_model_{name}"] = entry[name][:300]

    def _check_version(self) -> None:
        """Record the server's version where it reports one at ``/version`` beside the API (vLLM does)."""
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        try:
            reply = self._request("GET", self._url("/version", root), None, REPLY_BASE_BYTES)
            version = reply.json().get("version") if reply.status_code == 200 else None
        except Exception:  # noqa: BLE001  (any failure: the version is then not known, and not recorded)
            return
        if isinstance(version, str) and version:
            self.server["server_version"] = version[:100]

    def _request(self, method: str, url: str, payload: Optional[dict], cap: int) -> Reply:
        """One request within :attr:`timeout` seconds in all, its reply read up to ``cap`` bytes."""
        deadline = Deadline(self.timeout)
        late = f"no complete reply within {self.timeout:g} s (--request-timeout)"
        try:
            with self.client.stream(method, url, json=payload, extensions={"trace": deadline.trace}) as response:
                deadline.adopt(response.extensions.get("network_stream"))
                if deadline.passed():
                    raise Retryable(late)
                body = bytearray()
                for chunk in response.iter_raw():
                    body += chunk
                    if len(body) > cap:
                        raise ReplyTooLarge(
                            f"the reply of the server at {self.shown_url} to {urlsplit(url).path} "
                            f"passed {cap:,} bytes and was cut off there; the server ignores max_tokens "
                            "(check its settings, or lower --max-n)"
                        )
                    if deadline.passed():
                        raise Retryable(late)
                return Reply(response.status_code, response.headers, bytes(body))
        except self.httpx.ConnectError as exc:
            raise self._fail_unreachable(exc) from exc
        except self.httpx.TimeoutException as exc:
            raise Retryable(f"{late} ({type(exc).__name__})") from exc
        except self.httpx.TransportError as exc:
            if deadline.passed():
                raise Retryable(late) from exc
            raise Retryable(f"{type(exc).__name__}: {self._scrub(str(exc))[:200]}", dropped=exc) from exc
        finally:
            deadline.cancel()

    def _send(self, method: str, path: str, payload: Optional[dict]) -> Reply:
        """One request, retried on 429, 5xx, timeouts and dropped connections; the reply of a success."""
        cap = reply_byte_cap(int(payload.get("n", 1)) if payload else 1)
        attempt, waited = 0, 0.0
        while True:
            try:
                response = self._request(method, self._url(path), payload, cap)
                with self._lock:
                    self.requests += 1
                if response.status_code in RETRY_STATUSES:
                    raise Retryable(
                        f"HTTP {response.status_code}: {self._scrub(server_message(response))}",
                        response.headers.get("retry-after"),
                        server_failed=response.status_code >= 500,
                    )
                self._check_status(response)
                self._check_plain_reply(response, path)
                if response.status_code == 400 and any(w in server_message(response).lower() for w in CONTEXT_WORDS):
                    raise TooLong(self._scrub(server_message(response)))
                if response.status_code >= 400:
                    raise EngineError(
                        f"the server at {self.shown_url} answered HTTP {response.status_code} to {path}: "
                        f"{self._scrub(server_message(response))}"
                    )
                return response
            except Retryable as exc:
                waited += self._wait_before_retry(path, attempt, exc, waited)
                attempt += 1

    def _wait_before_retry(self, path: str, attempt: int, exc: Retryable, waited: float) -> float:
        """Sleep before retry ``attempt`` of a request that has waited ``waited`` s so far; the seconds slept."""
        if attempt >= self.max_retries:
            if exc.dropped is not None:  # still no connection that holds: say where and what to check
                raise self._fail_unreachable(exc.dropped) from exc
            raise EngineError(
                f"{path}: still failing after {self.max_retries} retries ({exc}); "
                "lower --concurrency or try again later" + (self._seed_hint() if exc.server_failed else "")
            ) from exc
        wanted = retry_after_seconds(exc.retry_after)
        if wanted is not None and wanted > MAX_RETRY_AFTER_S:
            raise EngineError(
                f"{path}: the server asks to wait {wanted:,.0f} s before retrying ({exc}, Retry-After: "
                f"{exc.retry_after[:40] if exc.retry_after else ''}), more than the {MAX_RETRY_AFTER_S:g} s "
                "this client waits; try again later"
            ) from exc
        delay = retry_delay(attempt, exc.retry_after, self.backoff)
        if waited + delay > MAX_RETRY_WAIT_S:
            raise EngineError(
                f"{path}: still failing after {attempt} retries and {waited:.0f} s of waiting ({exc}); the next "
                f"wait would pass the {MAX_RETRY_WAIT_S:g} s a request may wait in all; try again later"
            ) from exc
        if wanted is not None and wanted >= 1:
            warnings.warn(f"{path}: waiting {delay:.0f} s before a retry, as the server asks ({exc})", stacklevel=2)
        with self._lock:
            self.retries += 1
        time.sleep(delay)
        return delay

    def _payload(self, prompt: Prompt, config: SamplingConfig, n: int, seed: int) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model_name,
            "n": n,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_new_tokens,
        }
        if self.request_seeds:
            payload["seed"] = seed
        # top_k is not part of the OpenAI API (its servers reject it); only a non-default value is sent.
        if config.top_k > 0:
            payload["top_k"] = config.top_k
        if self.chat:
            payload["messages"] = list(prompt)
        else:
            payload["prompt"] = prompt
            payload["stop"] = list(STOP_STRINGS)
        return payload

    def _choices(self, response: Any, path: str) -> list[str]:
        try:
            body = response.json()
            choices = sorted(body["choices"], key=lambda c: int(c.get("index", 0)))
            texts = []
            for choice in choices:
                text = choice["message"]["content"] if self.chat else choice["text"]
                texts.append("" if text is None else str(text)[:MAX_REPLY_CHARS])
            usage = body.get("usage") or {}
        except Exception as exc:  # any shape that is not a completion reply
            raise Retryable(f"malformed reply to {path} ({type(exc).__name__}: {str(exc)[:100]})") from exc
        self._note_reply_model(body, path)
        with self._lock:
            for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
                value = usage.get(name) if isinstance(usage, dict) else None
                if isinstance(value, int) and not isinstance(value, bool):
                    self.usage[name] = self.usage.get(name, 0) + value
        return texts

    def _draw(self, prompt: Prompt, config: SamplingConfig, question_seed: int) -> list[str]:
        """All ``config.num_samples`` texts of one prompt, in requests of at most ``max_n``."""
        path = "/chat/completions" if self.chat else "/completions"
        texts: list[str] = []
        request, shortfalls = 0, 0
        while len(texts) < config.num_samples:
            n = min(self.max_n, config.num_samples - len(texts))
            payload = self._payload(prompt, config, n, request_seed(question_seed, request))
            request += 1
            try:
                got = self._choices(self._send("POST", path, payload), path)
            except Retryable as exc:
                got, reason = [], str(exc)
            else:
                reason = f"{len(got)} of {n} choices"
            if not got or len(got) < n:
                shortfalls += 1
                if shortfalls > self.max_retries:
                    raise EngineError(
                        f"{path}: replies kept falling short ({reason}) after {self.max_retries} "
                        "retries; try a smaller --max-n"
                    )
            texts.extend(got[:n])
        return texts

    def _sample(
        self, prompts: list[Prompt], config: SamplingConfig, seeds: list[int], progress: Optional[bool]
    ) -> Iterator[PromptSamples]:
        bar = report_progress(len(prompts), "sampling", enabled=progress)
        failure: Optional[BaseException] = None
        # Questions run one per worker; each question's requests run in order inside it, so at most
        # `concurrency` requests are in flight.
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            pending: dict[Future, int] = {}
            queue = list(range(len(prompts)))
            while queue or pending:
                while queue and len(pending) < self.concurrency and failure is None:
                    i = queue.pop(0)
                    pending[pool.submit(self._draw, prompts[i], config, seeds[i])] = i
                if not pending:
                    break
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for future in finished:
                    i = pending.pop(future)
                    error = future.exception()
                    if isinstance(error, TooLong):
                        bar.update(1)
                        yield PromptSamples(i, skipped=f"the server refused the prompt as too long: {error}")
                        continue
                    if error is not None:
                        failure = failure or error
                        continue
                    texts = future.result()
                    bar.update(1)
                    yield PromptSamples(i, texts, answers_of(texts, self.chat))
                if failure is not None:
                    queue.clear()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            bar.close()
        if failure is not None:
            kept = "; the questions already sampled are kept, run the same command again to resume"
            if isinstance(failure, EngineError):
                raise EngineError(f"{failure}{kept}") from failure
            raise EngineError(
                f"sampling from {self.shown_url} failed: {type(failure).__name__}: "
                f"{self._scrub(str(failure))[:300]}{kept}"
            ) from failure

    def close(self) -> None:
        self.client.close()
