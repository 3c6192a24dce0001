"""The engine interface, the engine registry and the collapse guard.

An engine is a subclass of :class:`Engine` registered in :data:`ENGINES` with
``@ENGINES.register(name)``: its ``name``, the shared ``generate`` settings it takes
(``common``), its own command-line options (``options``, :class:`EngineOption`), a
constructor with those keywords, and :meth:`Engine._sample`.
:func:`protoqa_integrations.generation.engines.make_engine` builds one by name.
"""

from __future__ import annotations

import argparse
import inspect
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Optional, Union

from protoqa_core.registry import Registry
from protoqa_integrations.generation.nucleus import sample_uniforms
from protoqa_integrations.generation.prompts import answer_from_reply, cfc_chat_messages, protoqa_chat_messages
from protoqa_integrations.generation.settings import GenerationError, PromptSamples, SamplingConfig, answer_from_text

__all__ = [
    "ENGINES",
    "COMMON_SETTINGS",
    "EngineOption",
    "check_engine",
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
    "library_versions",
]

COMMON_SETTINGS = ("revision", "chat", "device", "dtype", "seed")
"""The ``generate`` settings an engine may take besides its own options (:attr:`Engine.common`)."""
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


@dataclass(frozen=True)
class EngineOption:
    """One command-line option of an engine: ``FLAG VALUE`` (or the switch ``FLAG``) -> keyword ``keyword``.

    ``type`` parses the value (None: a switch, setting True, or False when ``negate``); ``recorded``
    options change the samples and go into the answers file and its signature. The default is the
    constructor's.

    >>> EngineOption("max_n", "--max-n", "most choices per request", int, recorded=True).flag
    '--max-n'
    """

    keyword: str
    flag: str
    help: str
    type: Optional[Callable[[str], Any]] = None
    negate: bool = False
    recorded: bool = False
    metavar: Optional[str] = None


class Engine:
    """What every engine offers. ``usage`` counts prompt and completion tokens where the engine reports them.

    A subclass gets ``name`` from :data:`ENGINES` (a built-in one declares it too, for a direct import),
    sets ``summary``, ``common`` and ``options``, builds itself in :meth:`build` and samples in :meth:`_sample`.
    """

    name: ClassVar[str] = "engine"
    summary: ClassVar[str] = ""
    common: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[tuple[EngineOption, ...]] = ()
    chat = False

    def __init__(self) -> None:
        self.usage: dict[str, int] = {}

    @classmethod
    def build(cls, model: str, **options: Any) -> Engine:
        """The engine for ``model`` with the keywords of ``common`` and ``options``."""
        return cls(model, **options)  # type: ignore[call-arg]

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The keywords :meth:`build` (by default the constructor) takes, with their defaults
        (``inspect.Parameter.empty`` for none)."""
        own_build = cls.build.__func__ is not Engine.build.__func__  # type: ignore[attr-defined]
        parameters = inspect.signature(cls.build if own_build else cls.__init__).parameters.values()
        return {p.name: p.default for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}

    @classmethod
    def recorded_settings(cls, model: str, options: dict[str, Any]) -> dict[str, Any]:
        """What the answers file records of this engine built with ``options``: the settings that change
        the samples (engine, model, revision, chat and the ``recorded`` options), not those that change
        only speed or robustness, so a run resumes under another ``--concurrency``."""
        given = {**cls.defaults(), **options}
        settings = {
            "engine": cls.name,
            "model": model,
            "revision": given.get("revision"),
            "chat": bool(given.get("chat")),
        }
        settings.update({o.keyword: given[o.keyword] for o in cls.options if o.recorded})
        return settings

    @classmethod
    def signature(cls, config: SamplingConfig, settings: dict[str, Any]) -> str:
        """How the samples of an engine with these ``settings`` are drawn (:func:`sampling_signature`)."""
        return sampling_signature(config, settings)

    def describe(self) -> dict[str, Any]:
        """Engine, model, revision and engine settings, for the answers file."""
        raise NotImplementedError

    def sampling_signature(self, config: SamplingConfig) -> str:
        """How the samples are drawn, ``key:value|...`` (:meth:`signature` of :meth:`describe`)."""
        return self.signature(config, self.describe())

    def sample(
        self,
        prompts: Sequence[Prompt],
        config: SamplingConfig,
        *,
        seeds: Optional[Sequence[int]] = None,
        progress: Optional[bool] = False,
    ) -> Iterator[PromptSamples]:
        """Yield one :class:`PromptSamples` per prompt, each as soon as it is complete (any order).

        Prompt ``i`` is sampled under ``seeds[i]`` (default ``config.seed + i``). On a fault every
        prompt already complete is yielded before :class:`EngineError` is raised.
        """
        prompts = list(prompts)
        seeds = [config.seed + i for i in range(len(prompts))] if seeds is None else [int(s) for s in seeds]
        if len(seeds) != len(prompts):
            raise EngineError(f"{len(seeds)} seeds for {len(prompts)} prompts")
        yield from self._sample(prompts, config, seeds, progress)

    def _sample(
        self, prompts: list[Prompt], config: SamplingConfig, seeds: list[int], progress: Optional[bool]
    ) -> Iterator[PromptSamples]:
        """:meth:`sample` with the prompts listed and one seed per prompt: what each engine draws its own way."""
        raise NotImplementedError

    def close(self) -> None:
        """Free the engine's resources."""


def check_engine(name: str, cls: type[Engine]) -> None:
    """The check of every engine joining :data:`ENGINES` (which then carries ``name``): the command line
    built from the registry must always be able to build it.

    >>> class Echo(Engine):
    ...     options = (EngineOption("loud", "--loud", "echo: shout"),)
    ...     def __init__(self, model: str, *, loud: bool = False) -> None:
    ...         super().__init__()
    >>> check_engine("echo", Echo); Echo.name, Echo.defaults()
    ('echo', {'loud': False})
    >>> Echo.common = ("chat",)
    >>> check_engine("echo", Echo)
    Traceback (most recent call last):
    ...
    ValueError: engine 'echo': Echo.build takes no keyword 'chat'
    """
    keywords = cls.defaults()
    for keyword in (*cls.common, *(o.keyword for o in cls.options)):
        if keyword not in keywords:
            raise ValueError(f"engine {name!r}: {cls.__qualname__}.build takes no keyword {keyword!r}")
    unknown = set(cls.common) - set(COMMON_SETTINGS)
    if unknown:
        raise ValueError(f"engine {name!r}: {sorted(unknown)} are not settings of {COMMON_SETTINGS}")
    if cls.name not in (Engine.name, name):
        raise ValueError(f"engine {name!r}: {cls.__qualname__} is named {cls.name!r}")
    cls.name = name


ENGINES: Registry[type[Engine]] = Registry(
    "engine",
    plugins={
        "hf": "protoqa_integrations.generation.engines.hf:HFEngine",
        "openai": "protoqa_integrations.generation.engines.openai:OpenAIEngine",
        "vllm": "protoqa_integrations.generation.engines.vllm:VLLMEngine",
    },
    check=check_engine,
    error=EngineError,
)
"""The engines by name: the built-in ones (each module imported when first asked for), then any added
with ``@ENGINES.register(name)``."""


def _dest(flag: str) -> str:
    return "engine_option" + flag  # the flag's own name: engines that share a flag share its value


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The options of every registered engine, one argument group per engine; an option is absent
    (None) when not given, so that :func:`engine_options` knows what was asked for.

    >>> parser = argparse.ArgumentParser()
    >>> add_engine_options(parser)
    >>> engine_options(parser.parse_args(["--max-n", "8"]), "openai")["max_n"]
    8
    """
    added: dict[str, EngineOption] = {}
    for name, cls in ENGINES.items():
        group = parser.add_argument_group(f"{name} engine options") if cls.options else None
        defaults = cls.defaults()
        for option in cls.options:
            if option.flag in added:
                if added[option.flag].type is not option.type or added[option.flag].negate != option.negate:
                    raise ValueError(f"engine {name!r}: {option.flag} differs from the other engines' {option.flag}")
                continue
            added[option.flag] = option
            default = defaults[option.keyword]
            shown = "" if default in (inspect.Parameter.empty, None) or option.type is None else f" (default {default})"
            kwargs: dict[str, Any] = {"dest": _dest(option.flag), "default": None, "help": option.help + shown}
            if option.type is None:
                kwargs.update(action="store_const", const=not option.negate)
            else:
                metavar = option.metavar or {int: "N", float: "X"}.get(option.type, "VALUE")  # type: ignore[call-overload]
                kwargs.update(type=option.type, metavar=metavar)
            assert group is not None
            group.add_argument(option.flag, **kwargs)


def engine_options(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The keywords of engine ``name`` from a command line built with :func:`add_engine_options`:
    the ``common`` settings it takes and the options given. An option of another engine is an error.

    >>> parser = argparse.ArgumentParser()
    >>> add_engine_options(parser)
    >>> engine_options(parser.parse_args(["--max-n", "8"]), "vllm")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    EngineError: --max-n is an option of --engine openai, not of --engine vllm
    """
    cls = engine_class(name)
    values = vars(args)
    own = {o.flag for o in cls.options}
    for other, other_cls in ENGINES.items():
        for option in other_cls.options:
            if option.flag not in own and values.get(_dest(option.flag)) is not None:
                raise EngineError(f"{option.flag} is an option of --engine {other}, not of --engine {name}")
    options = {key: values[key] for key in cls.common if key in values}
    for option in cls.options:
        value = values.get(_dest(option.flag))
        if value is not None:
            options[option.keyword] = value
    return options


def engine_class(name: str) -> type[Engine]:
    """The registered engine ``name``.

    >>> engine_class("gpu")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    EngineError: unknown engine 'gpu'; choose one of: hf, openai, vllm
    """
    return ENGINES.get(name)


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


def library_versions(*packages: str) -> dict[str, str]:
    """The installed version of each of ``packages`` (distribution names); one not installed is left out.

    >>> library_versions("numpy")["numpy"] != "", library_versions("no-such-package-xyz")
    (True, {})
    """
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in packages:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found
