"""The Space's language model: prompts, sampling settings checked against the caps, one loaded model.

* :func:`prompt_for`: which prompt a data set's question gets;
* :class:`SamplingSettings`: the page's sampling settings, checked on creation;
* :class:`ModelHolder`: the Space's one model, loaded on first use
  (:func:`protoqa_integrations.generation.sampling.load_model`);
* :func:`sample_answers`: the library's nucleus sampler on one prompt.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from demo_data import DATASETS
from demo_errors import DemoError, ModelUnavailableError
from demo_settings import CACHE_DIR_ENV, MODEL_ENV, PROMPT_STYLE_ENV, prompt_style, space_temp_dir

from protoqa_core.environment import env_setting
from protoqa_integrations.generation import prompts, sampling
from protoqa_integrations.generation.settings import (
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROTOQA_NUM_SAMPLES,
    GenerationError,
    SamplingConfig,
)
from protoqa_integrations.hub import serving

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_NUM_SAMPLES",
    "MAX_NUM_SAMPLES",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TOP_P",
    "DEFAULT_SEED",
    "MIN_TEMPERATURE",
    "MAX_TEMPERATURE",
    "BATCH_SIZE",
    "prompt_for",
    "prompt_style_of",
    "SamplingSettings",
    "LoadedModel",
    "load_model",
    "ModelHolder",
    "sample_answers",
]

DEFAULT_MODEL = "gpt2"
DEFAULT_NUM_SAMPLES = PROTOQA_NUM_SAMPLES
DEFAULT_TEMPERATURE = PAPER_TEMPERATURE
DEFAULT_TOP_P = PAPER_TOP_P
DEFAULT_SEED = SamplingConfig.seed
MIN_TEMPERATURE, MAX_TEMPERATURE = 0.05, 2.0
MAX_NUM_SAMPLES = serving.MAX_ANSWERS
"""Most samples per question: no more answers than the scoring caps accept."""
BATCH_SIZE = 50
"""Samples per forward pass: bounds the memory of one sampling step on a small CPU Space."""


def prompt_for(dataset_key: str, question: str, style: Optional[str] = None) -> str:
    """The prompt of a question of a data set (a typed question gets its data set's kind of prompt).

    CFC questions get the one-shot prompt; ProtoQA questions the prompt style ``style``
    (default :func:`prompt_style`): ``statement`` for a plain GPT-2, ``finetuned`` (with
    the tab separator of the ProtoQA fine-tuning format). The prompt is the library's
    :func:`protoqa_integrations.generation.prompts.prompt_for`, from the lower-case question, as
    ``protoqa-eval generate``, the lm-eval tasks and the Trainer hooks build it.

    >>> prompt_for("protoqa", "Name a fruit"), prompt_for("protoqa", "name a fruit", "finetuned")
    ('one fruit is', 'one fruit is\\t')
    """
    return prompts.prompt_for(question, prompt_style_of(dataset_key, style))


def prompt_style_of(dataset_key: str, style: Optional[str] = None) -> str:
    """The prompt style of a data set's questions: CFC's one-shot prompt, or ProtoQA's ``style``.

    >>> prompt_style_of("cfc"), prompt_style_of("protoqa", "finetuned")
    ('cfc-one-shot', 'finetuned')
    """
    if dataset_key == "cfc":
        return "cfc-one-shot"
    if dataset_key != "protoqa":
        raise DemoError(f"unknown data set {dataset_key!r}; choose one of {', '.join(DATASETS)}")
    style = style or prompt_style()
    if style not in {"statement", "finetuned"}:
        raise DemoError(f"unknown prompt style {style!r}; use 'statement' or 'finetuned' (${PROMPT_STYLE_ENV})")
    return style


@dataclass(frozen=True)
class SamplingSettings:
    """Nucleus sampling settings, checked on creation.

    >>> SamplingSettings(num_samples=600)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DemoError: the number of samples must be between 1 and 500, got 600
    """

    num_samples: int = DEFAULT_NUM_SAMPLES
    temperature: float = DEFAULT_TEMPERATURE
    top_p: float = DEFAULT_TOP_P
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if not 1 <= self.num_samples <= MAX_NUM_SAMPLES:
            raise DemoError(f"the number of samples must be between 1 and {MAX_NUM_SAMPLES}, got {self.num_samples}")
        if not MIN_TEMPERATURE <= self.temperature <= MAX_TEMPERATURE:
            raise DemoError(
                f"temperature must be between {MIN_TEMPERATURE} and {MAX_TEMPERATURE}, got {self.temperature}"
            )
        if not 0 < self.top_p <= 1:
            raise DemoError(f"top_p must be in (0, 1], got {self.top_p}")
        if not 0 <= self.seed < 2**32:
            raise DemoError(f"the seed must be between 0 and {2**32 - 1}, got {self.seed}")

    @classmethod
    def from_inputs(cls, num_samples: Any, temperature: Any, top_p: Any, seed: Any) -> SamplingSettings:
        """Settings from widget values (numbers that may arrive as floats or None).

        >>> SamplingSettings.from_inputs(300.0, 0.69, 0.9, None).seed
        42
        """
        try:
            return cls(int(num_samples), float(temperature), float(top_p), DEFAULT_SEED if seed is None else int(seed))
        except (TypeError, ValueError) as exc:
            raise DemoError(f"invalid sampling settings: {exc}") from exc

    def config(self) -> SamplingConfig:
        """The library's sampling settings: these, the paper's other settings and :data:`BATCH_SIZE`.

        >>> SamplingSettings(num_samples=10).config().max_new_tokens
        10
        """
        return SamplingConfig(
            num_samples=self.num_samples,
            temperature=self.temperature,
            top_p=self.top_p,
            seed=self.seed,
            batch_size=BATCH_SIZE,
        )

    def signature(self, model_name: str, prompt_style: str) -> str:
        """How the answers were sampled: model, prompt style and the library's sampling signature.

        >>> SamplingSettings(num_samples=10).signature("gpt2", "statement")
        'model:gpt2|prompt:statement|samples:10|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|stop:newline,period|batch:50|seed:42|rng:splitmix64'
        """
        return f"model:{model_name}|prompt:{prompt_style}|{self.config().signature()}"


@dataclass
class LoadedModel:
    """A causal language model with its tokenizer."""

    name: str
    model: Any
    tokenizer: Any


def load_model(name: str, cache_dir: Union[None, str, os.PathLike] = None) -> LoadedModel:
    """Load a causal language model and its tokenizer (:func:`protoqa_integrations.generation.sampling.load_model`).

    No remote code, on the CPU, in float32; Hub downloads go to ``cache_dir`` (default a
    folder under the Space's temporary root). Raises :class:`ModelUnavailableError`
    saying why when it cannot be loaded.

    >>> load_model("/no/such/model")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ModelUnavailableError: there is no model folder /no/such/model
    """
    cache = str(cache_dir) if cache_dir is not None else str(space_temp_dir("models"))
    try:
        model, tokenizer = sampling.load_model(name, "cpu", "float32", cache_dir=cache)
    except GenerationError as exc:
        raise ModelUnavailableError(str(exc)) from exc
    return LoadedModel(name, model, tokenizer)


class ModelHolder:
    """The Space's one model, loaded on first use and kept; a failure is remembered.

    ``name`` defaults to ``$PROTOQA_SPACE_MODEL`` or ``gpt2``. After a failed load,
    :meth:`get` raises the same error again without retrying unless ``retry=True``
    (a page load should not wait for the Hub again; a click on Generate may).

    >>> holder = ModelHolder("/no/such/model")
    >>> holder.loaded is None and holder.error is None
    True
    """

    def __init__(self, name: Optional[str] = None, cache_dir: Union[None, str, os.PathLike] = None) -> None:
        self.name = name or env_setting(MODEL_ENV) or DEFAULT_MODEL
        self.cache_dir = cache_dir or env_setting(CACHE_DIR_ENV)
        self._loaded: Optional[LoadedModel] = None
        self._error: Optional[ModelUnavailableError] = None
        self._lock = threading.Lock()

    def get(self, retry: bool = False) -> LoadedModel:
        """The loaded model; :class:`ModelUnavailableError` when it cannot be loaded.

        >>> ModelHolder("gpt2").get().tokenizer.eos_token  # doctest: +SKIP
        '<|endoftext|>'
        """
        with self._lock:
            if self._loaded is not None:
                return self._loaded
            if self._error is not None and not retry:
                raise self._error
            try:
                self._loaded = load_model(self.name, self.cache_dir)
            except ModelUnavailableError as exc:
                self._error = exc
                raise
            self._error = None
            return self._loaded

    @property
    def display_name(self) -> str:
        """The name for buttons: a local folder's last part (as the loader tells folders from Hub names), else the
        Hub name.

        >>> ModelHolder("/models/my-gpt2").display_name, ModelHolder("gpt2-medium").display_name
        ('my-gpt2', 'gpt2-medium')
        """
        return Path(self.name).name if sampling.is_local_model(self.name) else self.name

    @property
    def loaded(self) -> Optional[LoadedModel]:
        """The model when it has been loaded, else None (never loads)."""
        return self._loaded

    @property
    def error(self) -> Optional[ModelUnavailableError]:
        """Why the last load failed, or None."""
        return self._error


def sample_answers(
    loaded: LoadedModel,
    prompt: str,
    settings: SamplingSettings,
    on_progress: Optional[Callable[[int, int], None]] = None,
) -> list[str]:
    """The cleaned answers of ``settings.num_samples`` samples (the library's sampler), in sample order."""
    (done,) = sampling.iter_prompt_samples(
        loaded.model, loaded.tokenizer, [prompt], settings.config(), on_progress=on_progress, model_name=loaded.name
    )
    if done.skipped:
        raise DemoError(f"cannot sample answers: {done.skipped}")
    return done.answers
