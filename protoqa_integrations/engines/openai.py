"""``openai``: any OpenAI-compatible server (OpenAI, vLLM's ``vllm serve``, llama.cpp, TGI, ...).

* ``/v1/completions`` with the completion prompt, or ``/v1/chat/completions`` (``chat=True``);
* a question's ``n`` samples are asked in requests of at most ``max_n`` choices each;
  at most ``concurrency`` requests are in flight;
* each request carries its own seed, derived from the question's seed and the request's
  position, so a server that honours seeds gives distinct, reproducible samples
  (``request_seeds=False`` sends none, for servers that fail on seeds: vLLM 0.32's CPU
  build stops with "CPU Generator does not use offset" when a seeded request's prompt is
  computed in chunks);
* 429, 5xx, timeouts and dropped connections are retried ``max_retries`` times with
  exponential backoff and full jitter, waiting at least what ``Retry-After`` asks;
* every request has a ``timeout``; the token usage the server reports is summed;
* the key comes from ``$OPENAI_API_KEY`` only, and is never printed.

Faults that retrying cannot mend (unreachable server, wrong key, model not served,
malformed or short replies after the retries) raise :class:`EngineError` after every
question already complete has been yielded, so the caller's journal keeps them.

A prompt the server refuses as longer than the model's context (HTTP 400 naming the
context length) is skipped with the server's reason, as the ``hf`` engine skips it.

Reply rules: a reply with fewer choices than asked is asked again for the missing ones
(within the retries); an empty choice is a sample with no answer (``""``); a choice's
text is kept up to :data:`MAX_REPLY_CHARS` characters (a server that ignores
``max_tokens`` cannot blow up the answers file).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from email.utils import parsedate_to_datetime
from typing import Any, Optional

from ..generation import STOP_STRINGS, PromptSamples, SamplingConfig
from .base import Engine, EngineError, EngineOption, Prompt, answers_of, register_engine, request_seed

__all__ = ["OpenAIEngine", "KEY_ENV", "MAX_REPLY_CHARS", "retry_delay"]

KEY_ENV = "OPENAI_API_KEY"
MAX_REPLY_CHARS = 2000
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_BACKOFF_S = 60.0


def retry_delay(
    attempt: int, retry_after: Optional[str], base: float = 1.0, rng: Optional[random.Random] = None
) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): full jitter over ``base * 2**attempt``, capped at
    60 s, and never less than the server's ``Retry-After`` (seconds or an HTTP date).

    >>> retry_delay(0, "3") >= 3.0, retry_delay(10, None) <= 60.0
    (True, True)
    """
    uniform = rng.uniform if rng is not None else random.uniform
    delay = uniform(0, min(MAX_BACKOFF_S, base * (2**attempt)))
    if retry_after:
        try:
            wanted = float(retry_after)
        except ValueError:
            try:
                wanted = parsedate_to_datetime(retry_after).timestamp() - time.time()
            except (TypeError, ValueError):
                wanted = 0.0
        delay = max(delay, min(max(wanted, 0.0), 10 * MAX_BACKOFF_S))
    return delay


class _TooLong(Exception):
    """The server says the prompt does not fit the model's context: the question is skipped."""


_CONTEXT_WORDS = ("context length", "context window", "maximum context", "too long", "max_model_len")


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: Optional[str] = None, server_failed: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.server_failed = server_failed  # a 5xx or a dropped connection: the server itself went wrong


def _server_message(response: Any) -> str:
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
    text = str(message) if message else response.text
    return " ".join(str(text).split())[:300] or f"HTTP {response.status_code}"


@register_engine("openai")
class OpenAIEngine(Engine):
    """An OpenAI-compatible server at ``base_url`` serving ``model``.

    >>> engine = OpenAIEngine("gpt-3.5-turbo-instruct", base_url="https://api.openai.com/v1")  # doctest: +SKIP
    """

    summary = "an OpenAI-compatible server at --base-url; key from $OPENAI_API_KEY"
    common = ("revision", "chat")
    options = (
        EngineOption(
            "base_url", "--base-url", "the server's API root, e.g. http://127.0.0.1:8000/v1", str, metavar="URL"
        ),
        EngineOption("concurrency", "--concurrency", "most requests in flight", int),
        EngineOption("max_n", "--max-n", "most choices asked per request", int, recorded=True),
        EngineOption("timeout", "--request-timeout", "seconds per request", float, metavar="SECONDS"),
        EngineOption("max_retries", "--max-retries", "retries of a request on 429, 5xx and timeouts", int),
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
            raise EngineError(f"the openai engine needs httpx ({exc}); pip install 'protoqa-eval[openai]'") from exc
        self.httpx = httpx
        self.model_name, self.revision, self.chat = model, revision, chat
        self.base_url = base_url.rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise EngineError(f"--base-url must start with http:// or https://, got {base_url!r}")
        self.concurrency, self.max_n, self.timeout = concurrency, max_n, float(timeout)
        self.max_retries, self.backoff = max_retries, float(backoff)
        self.request_seeds = bool(request_seeds)
        key = os.environ.get(KEY_ENV, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(
            headers=headers, timeout=httpx.Timeout(self.timeout), limits=httpx.Limits(max_connections=concurrency)
        )
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0
        if check_model:
            self._check_model()

    def describe(self) -> dict[str, Any]:
        # The key is a secret and the server's address may embed one: neither is recorded.
        return {
            "engine": self.name,
            "model": self.model_name,
            "revision": self.revision,
            "chat": self.chat,
            "max_n": self.max_n,
            "request_seeds": self.request_seeds,
        }

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
        return EngineError(
            f"cannot reach the server at {self.base_url} ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:200]}); check --base-url and that the server is running"
            f"{self._seed_hint()}"
        )

    def _check_status(self, response: Any) -> None:
        if response.status_code in (401, 403):
            raise EngineError(
                f"the server at {self.base_url} refused the key (HTTP {response.status_code}: "
                f"{_server_message(response)}); set ${KEY_ENV} to a valid key"
            )
        if response.status_code == 404 and "model" in _server_message(response).lower():
            raise EngineError(
                f"the server at {self.base_url} does not serve the model {self.model_name!r}: "
                f"{_server_message(response)}"
            )

    def _check_model(self) -> None:
        """Ask ``/models`` once, so a wrong key or model name stops the run before any sampling."""
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
        served = [m.get("id") for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []
        if served and self.model_name not in served:
            raise EngineError(
                f"the server at {self.base_url} does not serve the model {self.model_name!r}; "
                f"it serves: {', '.join(map(str, served[:10]))}"
            )

    def _send(self, method: str, path: str, payload: Optional[dict]) -> Any:
        """One request, retried on 429, 5xx, timeouts and dropped connections; the response of a success."""
        attempt = 0
        while True:
            try:
                try:
                    response = self.client.request(method, self.base_url + path, json=payload)
                except self.httpx.TimeoutException as exc:
                    raise _Retryable(f"no reply within {self.timeout:g} s ({type(exc).__name__})") from exc
                except self.httpx.TransportError as exc:
                    if attempt >= self.max_retries:
                        raise self._fail_unreachable(exc) from exc
                    raise _Retryable(f"{type(exc).__name__}: {exc}", server_failed=True) from exc
                with self._lock:
                    self.requests += 1
                if response.status_code in RETRY_STATUSES:
                    raise _Retryable(
                        f"HTTP {response.status_code}: {_server_message(response)}",
                        response.headers.get("retry-after"),
                        server_failed=response.status_code >= 500,
                    )
                self._check_status(response)
                if response.status_code == 400 and any(w in _server_message(response).lower() for w in _CONTEXT_WORDS):
                    raise _TooLong(_server_message(response))
                if response.status_code >= 400:
                    raise EngineError(
                        f"the server at {self.base_url} answered HTTP {response.status_code} to {path}: "
                        f"{_server_message(response)}"
                    )
                return response
            except _Retryable as exc:
                if attempt >= self.max_retries:
                    raise EngineError(
                        f"{path}: still failing after {self.max_retries} retries ({exc}); "
                        "lower --concurrency or try again later" + (self._seed_hint() if exc.server_failed else "")
                    ) from exc
                with self._lock:
                    self.retries += 1
                time.sleep(retry_delay(attempt, exc.retry_after, self.backoff))
                attempt += 1

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
            raise _Retryable(f"malformed reply to {path} ({type(exc).__name__}: {str(exc)[:100]})") from exc
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
            except _Retryable as exc:
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

    def sample(
        self,
        prompts: Sequence[Prompt],
        config: SamplingConfig,
        *,
        seeds: Optional[Sequence[int]] = None,
        progress: Optional[bool] = False,
    ) -> Iterator[PromptSamples]:
        prompts = list(prompts)
        seeds = [config.seed + i for i in range(len(prompts))] if seeds is None else [int(s) for s in seeds]
        bar = None
        if progress is not False:
            from tqdm.auto import tqdm

            bar = tqdm(
                total=len(prompts), desc="sampling", unit="question", disable=None if progress is None else False
            )
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
                    if isinstance(error, _TooLong):
                        if bar is not None:
                            bar.update(1)
                        yield PromptSamples(i, skipped=f"the server refused the prompt as too long: {error}")
                        continue
                    if error is not None:
                        failure = failure or error
                        continue
                    texts = future.result()
                    if bar is not None:
                        bar.update(1)
                    yield PromptSamples(i, texts, answers_of(texts, self.chat))
                if failure is not None:
                    queue.clear()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            if bar is not None:
                bar.close()
        if failure is not None:
            kept = "; the questions already sampled are kept, run the same command again to resume"
            if isinstance(failure, EngineError):
                raise EngineError(f"{failure}{kept}") from failure
            raise EngineError(
                f"sampling from {self.base_url} failed: {type(failure).__name__}: {failure}{kept}"
            ) from failure

    def close(self) -> None:
        self.client.close()
