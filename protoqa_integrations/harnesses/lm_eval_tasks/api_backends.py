"""lm-evaluation-harness API backends that give each repeat of a request an independent sample.

The harness's ``local-*`` backends send the same ``"seed": 1234`` with every request (a server
that honours it answers 300 repeats with one text) and ``openai-completions`` sends ``top_k``,
which OpenAI's API rejects. These subclasses send no seed, leave ``top_k`` out when it is 0, and
bound every request as the ``openai`` engine does (a deadline, a reply read up to
:func:`~protoqa_integrations.generation.engines.request_bounds.reply_byte_cap`, no redirect or
compressed reply), where the harness reads a whole reply, however long. A fault stops the run
with one line (:class:`APIRequestError`), not a traceback. Everything else is the harness's own
code; the backends and their use are in docs/evaluate-a-model.md. Importing this module
registers them (it needs ``lm-eval[api]``).

>>> payload_without_fixed_seed({"prompt": "p", "seed": 1234, "top_k": 0, "top_p": 0.9})
{'prompt': 'p', 'top_p': 0.9}
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from typing import Any, Optional

from protoqa_core.redaction import redact_url, url_secrets
from protoqa_integrations.generation.engines.base import EngineError
from protoqa_integrations.generation.engines.request_bounds import check_plain_reply, reply_byte_cap

__all__ = ["APIRequestError", "payload_without_fixed_seed", "read_capped", "register"]


class APIRequestError(EngineError):
    """A request of an API backend failed in a way the harness's retries do not mend; one line."""


def payload_without_fixed_seed(payload: dict[str, Any]) -> dict[str, Any]:
    """A generation request's payload without the seed, and without ``top_k`` when it is off (0 or -1).

    >>> payload_without_fixed_seed({"seed": 1, "top_k": 5})
    {'top_k': 5}
    """
    payload = dict(payload)
    payload.pop("seed", None)
    if payload.get("top_k") in (0, -1, None):
        payload.pop("top_k", None)
    return payload


def read_capped(chunks: Any, cap: int, deadline: float, where: str) -> bytes:
    """The bytes of ``chunks`` (an iterable of bytes), refusing more than ``cap`` bytes or reading past ``deadline``
    (a :func:`time.monotonic` time); ``where`` names the server in the message.

    >>> read_capped([b"ab", b"cd"], 10, time.monotonic() + 5, "here")
    b'abcd'
    >>> read_capped([b"ab", b"cd"], 3, time.monotonic() + 5, "here")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    APIRequestError: the reply of here passed 3 bytes and was cut off there; ...
    """
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > cap:
            raise APIRequestError(
                f"the reply of {where} passed {cap:,} bytes and was cut off there; the server ignores max_tokens "
                "(check its settings)"
            )
        if time.monotonic() > deadline:
            raise APIRequestError(f"no complete reply from {where} within the timeout (the model argument timeout)")
    return bytes(body)


def _one_line(exc: BaseException, where: str, secrets: list[str]) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    for secret in secrets:
        text = text.replace(secret, "***")
    return f"request to {where} failed ({text[:300]})"


# The mixin's methods read the harness backend's attributes (base_url, timeout, ...); to a type
# checker its base is Any, at run time object, and the backend class comes after it.
_BackendAttributes: Any = object


class _BoundedRequests(_BackendAttributes):
    """What :func:`_independent` adds to an lm-eval API backend: no fixed seed, every request bounded."""

    def _create_payload(
        self,
        messages: Any,
        generate: bool = False,
        gen_kwargs: Any = None,
        seed: int = 1234,
        eos: Any = None,
        **kwargs: Any,
    ) -> dict:
        payload = super()._create_payload(
            messages, generate=generate, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs
        )
        return payload_without_fixed_seed(payload) if generate else payload

    @property
    def _where(self) -> str:
        return redact_url(str(self.base_url))

    def _check_plain_reply(self, status: int, headers: Any) -> None:
        check_plain_reply(
            status, headers, str(self.base_url), f"{self._where} answered", "base_url in --model_args", APIRequestError
        )

    def _cap(self, messages: Any) -> int:
        # a batch of completion prompts (texts or token lists) asks one choice each; a chat, one choice
        batched = isinstance(messages, list) and all(isinstance(m, (str, list)) for m in messages)
        return reply_byte_cap(len(messages) if batched else 1)

    def _failure(self, exc: BaseException) -> APIRequestError:
        if isinstance(exc, APIRequestError):
            return exc
        return APIRequestError(_one_line(exc, self._where, url_secrets(str(self.base_url))))

    def _check(self, status: int, body: bytes) -> Any:
        if status >= 400:
            text = " ".join(body[:2000].decode("utf-8", "replace").split())[:200]
            raise APIRequestError(f"{self._where} answered HTTP {status}: {text}")
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise APIRequestError(f"{self._where} sent a reply that is not JSON ({exc})") from None

    def model_call(self, messages: Any, *, generate: bool = True, gen_kwargs: Any = None, **kwargs: Any) -> Any:
        import requests

        payload = self._create_payload(
            self.create_message(messages),
            generate=generate,
            gen_kwargs=copy.deepcopy(gen_kwargs),
            seed=self._seed,
            eos=self.eos_string,
            **kwargs,
        )
        deadline = time.monotonic() + self.timeout
        try:
            with requests.post(
                self.base_url,
                json=payload,
                headers={**self.header, "Accept-Encoding": "identity"},
                verify=self.verify_certificate,
                timeout=self.timeout,
                stream=True,
                allow_redirects=False,
            ) as response:
                self._check_plain_reply(response.status_code, response.headers)
                body = read_capped(response.iter_content(65536), self._cap(messages), deadline, self._where)
                return self._check(response.status_code, body)
        except Exception as exc:  # noqa: BLE001  (one line for any failure; the harness retries it)
            raise self._failure(exc) from None

    async def get_batched_requests(
        self, requests: list, cache_keys: list, *, generate: bool = True, ctxlens: Any = None, **kwargs: Any
    ) -> list:
        # The harness's own, except that the first request to fail for good cancels the others and is
        # the one error raised (gather would leave the others' errors to be printed as tracebacks).
        from aiohttp import ClientSession, ClientTimeout, TCPConnector
        from lm_eval.models.utils import chunks
        from tenacity import retry, stop_after_attempt, wait_exponential
        from tqdm import tqdm

        ctxlens = ctxlens or [None] * len(requests)
        sem = asyncio.Semaphore(self._concurrent)
        connector = TCPConnector(limit=self._concurrent, ssl=self.verify_certificate)
        async with ClientSession(connector=connector, timeout=ClientTimeout(total=self.timeout)) as session:
            call = retry(
                stop=stop_after_attempt(self.max_retries),
                wait=wait_exponential(multiplier=0.5, min=1, max=10),
                reraise=True,
            )(self.amodel_call)
            tasks = [
                asyncio.create_task(
                    call(
                        session=session,
                        sem=sem,
                        messages=message,
                        cache_keys=keys,
                        generate=generate,
                        ctxlens=lens,
                        **kwargs,
                    )
                )
                for message, keys, lens in zip(
                    chunks(requests, n=self._batch_size),
                    chunks(cache_keys, n=self._batch_size),
                    chunks(ctxlens, n=self._batch_size),
                    strict=False,
                )
            ]
            with tqdm(total=len(tasks), desc="Requesting API") as bar:
                failure = await _first_failure(tasks, bar)
            if failure is not None:
                raise failure
            return [task.result() for task in tasks]

    async def amodel_call(
        self,
        session: Any,
        sem: asyncio.Semaphore,
        messages: Any,
        *,
        generate: bool = True,
        cache_keys: Any = None,
        ctxlens: Any = None,
        gen_kwargs: Any = None,
        **kwargs: Any,
    ) -> Any:
        from lm_eval.models.api_models import LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER

        payload = self._create_payload(
            self.create_message(messages),
            generate=generate,
            gen_kwargs=copy.deepcopy(gen_kwargs),
            seed=self._seed,
            **kwargs,
        )
        cap = self._cap(messages)
        async with sem:
            try:
                # The session's timeout is a total one (ClientTimeout(total=timeout)): no deadline here.
                async with session.post(
                    self.base_url,
                    json=payload,
                    headers={**self.header, "Accept-Encoding": "identity"},
                    allow_redirects=False,
                ) as response:
                    self._check_plain_reply(response.status, response.headers)
                    body = bytearray()
                    async for piece in response.content.iter_chunked(65536):
                        body += piece
                        if len(body) > cap:
                            read_capped([bytes(body)], cap, float("inf"), self._where)
                    outputs = self._check(response.status, bytes(body))
            except Exception as exc:  # noqa: BLE001  (one line for any failure; the harness retries it)
                raise self._failure(exc) from None
        if generate:
            answers = self.parse_generations(outputs=outputs)
        else:
            answers = self.parse_logprobs(outputs=outputs, tokens=messages, ctxlens=ctxlens)
        answers = [LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER if a is None else a for a in answers]
        if cache_keys:
            method = "generate_until" if generate else "loglikelihood"
            for answer, key in zip(answers, cache_keys, strict=False):
                self.cache_hook.add_partial(method, key, answer)
        return answers


async def _first_failure(tasks: list[asyncio.Task], bar: Any) -> Optional[BaseException]:
    """Wait for ``tasks`` until all succeed or one fails (the others are then cancelled); the failure, if any."""
    failure: Optional[BaseException] = None
    pending = set(tasks)
    try:
        while pending and failure is None:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            bar.update(len(done))
            # every finished task's error is looked at, so none is reported again at exit
            errors = [task.exception() for task in done]
            failure = next((error for error in errors if error is not None), None)
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return failure


def _independent(base: Any) -> Any:
    """``base`` (an lm-eval API backend class) sending no fixed seed and no top_k of 0, every request bounded."""
    name = f"Independent{base.__name__}"
    doc = (
        f"{base.__name__} sending no fixed seed and no top_k of 0 with generation requests, every request "
        "bounded in time and size."
    )
    return type(name, (_BoundedRequests, base), {"__doc__": doc, "__qualname__": name, "__module__": __name__})


def register() -> dict[str, Any]:
    """Register the four backends with the harness; returns name -> class."""
    from lm_eval.api.registry import register_model
    from lm_eval.models.openai_completions import (
        LocalChatCompletion,
        LocalCompletionsAPI,
        OpenAIChatCompletion,
        OpenAICompletionsAPI,
    )

    classes = {
        "protoqa-local-completions": LocalCompletionsAPI,
        "protoqa-local-chat-completions": LocalChatCompletion,
        "protoqa-openai-completions": OpenAICompletionsAPI,
        "protoqa-openai-chat-completions": OpenAIChatCompletion,
    }
    registered = {}
    for name, base in classes.items():
        registered[name] = register_model(name)(_independent(base))
    return registered


REGISTERED = register()
