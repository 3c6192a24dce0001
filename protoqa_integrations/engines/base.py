"""The engine interface and the collapse guard; :func:`protoqa_integrations.engines.make_engine` builds an engine."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Optional, Union
from urllib.parse import parse_qsl, quote, unquote_plus, urlsplit, urlunsplit

from ..generation import GenerationError, PromptSamples, SamplingConfig, answer_from_text, sample_uniforms
from ..prompts import answer_from_reply, cfc_chat_messages, protoqa_chat_messages

__all__ = [
    "ENGINES",
    "CHAT_MAX_NEW_TOKENS",
    "COLLAPSE_SHARE",
    "Prompt",
    "Engine",
    "EngineError",
    "collapsed_share",
    "is_collapsed",
    "answers_of",
    "sampling_signature",
    "CHAT_STYLES",
    "chat_prompt_function",
    "request_seed",
    "redact_url",
    "url_secrets",
]

ENGINES = ("hf", "vllm", "openai")
CHAT_MAX_NEW_TOKENS = 32
"""Default token budget of a chat reply: room for a short preamble before the answer."""
COLLAPSE_SHARE = 0.9
"""A question's samples have collapsed when more than this share of them is one identical text.

A fixed seed repeated in every request gives 100%; a good model's favourite answer at
the protocol's temperature takes well under it on ProtoQA's questions, whose answers spread
over several clusters, so "most" is read as "nearly all"."""
MIN_SAMPLES_FOR_GUARD = 10

Prompt = Union[str, Sequence[dict]]
"""A completion prompt (text) or a chat prompt (a list of ``{"role", "content"}`` messages)."""


class EngineError(GenerationError):
    """An engine cannot start or cannot go on (server, key, model, memory); one line saying what to change."""


def collapsed_share(samples: Sequence[str]) -> float:
    """The share of ``samples`` equal to the most frequent one (0.0 for none).

    >>> collapsed_share(["a", "a", "b", "a"])
    0.75
    """
    if not samples:
        return 0.0
    return Counter(samples).most_common(1)[0][1] / len(samples)


def is_collapsed(samples: Sequence[str], temperature: float) -> bool:
    """Whether sampling at ``temperature`` > 0 gave nearly the same text every time (:data:`COLLAPSE_SHARE`).

    Only questions with at least 10 samples are judged.

    >>> is_collapsed(["the beach"] * 300, 0.69), is_collapsed(["the beach"] * 300, 0.0)
    (True, False)
    >>> is_collapsed(["a", "b"] * 150, 0.69)
    False
    """
    return temperature > 0 and len(samples) >= MIN_SAMPLES_FOR_GUARD and collapsed_share(samples) > COLLAPSE_SHARE


def answers_of(texts: Sequence[str], chat: bool) -> list[str]:
    """Each sampled text's answer: :func:`answer_from_reply` for chat replies, else the completion rule.

    >>> answers_of([" sun hat. And", "x"], chat=False), answers_of(["1. **Sun hat**"], chat=True)
    (['sun hat', 'x'], ['sun hat'])
    """
    return [answer_from_reply(t) if chat else answer_from_text(t) for t in texts]


class Engine:
    """What every engine offers. ``usage`` counts prompt and completion tokens where the engine reports them."""

    name = "engine"
    chat = False

    def __init__(self) -> None:
        self.usage: dict[str, int] = {}

    def describe(self) -> dict[str, Any]:
        """Engine, model, revision and engine settings, for the answers file."""
        raise NotImplementedError

    def sampling_signature(self, config: SamplingConfig) -> str:
        """How the samples are drawn, ``key:value|...`` (:func:`sampling_signature`)."""
        return sampling_signature(config, self.describe())

    def sample(
        self,
        prompts: Sequence[Prompt],
        config: SamplingConfig,
        *,
        seeds: Optional[Sequence[int]] = None,
        progress: Optional[bool] = False,
    ) -> Iterator[PromptSamples]:
        """Yield one :class:`PromptSamples` per prompt, each as soon as it is complete (any order).

        On a fault every prompt already complete is yielded before :class:`EngineError` is raised.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Free the engine's resources."""


def sampling_signature(config: SamplingConfig, settings: dict[str, Any]) -> str:
    """The sampling signature of an engine's samples: the protocol's settings, then the engine's.

    >>> sampling_signature(SamplingConfig(num_samples=3), {"engine": "openai", "model": "m", "chat": True})
    'engine:openai|samples:3|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|stop:none|seed:42|chat:True'
    >>> sampling_signature(SamplingConfig(num_samples=3), {"engine": "openai", "request_seeds": False})
    'engine:openai|samples:3|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|stop:newline,period|seed:none|request_seeds:False'
    """
    extra = "".join(f"|{k}:{v}" for k, v in settings.items() if k not in ("engine", "model") and v is not None)
    # With request seeds off the engine sends none: the samples depend on no seed of ours.
    seed = "none" if settings.get("request_seeds") is False else config.seed
    return (
        f"engine:{settings['engine']}|samples:{config.num_samples}|top_p:{config.top_p}"
        f"|temperature:{config.temperature}|top_k:{config.top_k}|max_new_tokens:{config.max_new_tokens}"
        f"|stop:{'none' if settings.get('chat') else 'newline,period'}|seed:{seed}{extra}"
    )


CHAT_STYLES: dict[str, Callable[..., list[dict[str, str]]]] = {
    "protoqa-chat": protoqa_chat_messages,
    "cfc-chat": cfc_chat_messages,
}
"""Chat prompt styles: question (and optional system prompt) -> chat messages."""


def chat_prompt_function(style: str) -> Optional[Callable[..., list[dict[str, str]]]]:
    """The chat-messages function of a chat prompt style, None for a completion style.

    >>> chat_prompt_function("statement") is None, chat_prompt_function("cfc-chat")("a. b?")[-1]["role"]
    (True, 'user')
    """
    return CHAT_STYLES.get(style)


def request_seed(question_seed: int, request: int) -> int:
    """The seed of a question's ``request``-th request: distinct per request, the same on every run.

    >>> request_seed(42, 0) == request_seed(42, 0) != request_seed(42, 1)
    True
    """
    return int(sample_uniforms([question_seed], [request], 0)[0] * (1 << 31))


_SECRET_QUERY_NAMES = frozenset(
    {"key", "api_key", "apikey", "api-key", "token", "access_token", "auth", "password", "secret", "sig", "signature"}
)
"""Query parameters of a server address whose values are credentials (compared lower-cased)."""


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url``: user name, password, and the values of credential-like query
    parameters (:data:`_SECRET_QUERY_NAMES`), each as written and URL-decoded.

    >>> url_secrets("https://me:pw@host/v1?api_key=s3cr3t&x=1")
    ['me', 'pw', 's3cr3t']
    """
    try:
        parts = urlsplit(url)
        found = [parts.username or "", parts.password or ""]
        found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() in _SECRET_QUERY_NAMES]
    except ValueError:  # not parseable (a bad port, say): nothing can be told apart, so nothing is kept back
        return []
    secrets: list[str] = []
    for value in found:
        for form in (value, quote(value, safe="")):
            if form and form not in secrets:
                secrets.append(form)
    return secrets


def redact_url(url: str) -> str:
    """``url`` with its user name, password and credential-like query values replaced by ``***``.

    >>> redact_url("https://user:pass@example.com:8443/v1?key=abc&model=x")
    'https://***:***@example.com:8443/v1?key=***&model=x'
    >>> redact_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "***"  # an address that cannot be taken apart cannot be shown safely either
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    if parts.username or parts.password:
        netloc = ("***:***@" if parts.password else "***@") + netloc
    query = "&".join(
        f"{k}=***" if unquote_plus(k).lower() in _SECRET_QUERY_NAMES else (f"{k}={v}" if v or "=" in pair else k)
        for pair in parts.query.split("&")
        if pair
        for k, _, v in [pair.partition("=")]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
