"""What the demo Space does, without any user interface: the libraries wired to the demo's limits.

The library work is done by the project's packages: data location
(:func:`protoqa_dataset.sources.source_path`), prompts and nucleus sampling
(:mod:`protoqa_integrations.generation`), ranking answers by frequency
(:func:`protoqa_core.ranking.rank_by_frequency`), ProtoQA's scores
(:func:`protoqa_metric.evaluate_predictions`) and ProbEval (:class:`cfc_probeval.ProbEval`).
This module keeps what only the demo needs, so that the page (``app.py``) only wires
these functions to widgets and everything here can be called and tested directly:

* :class:`DemoData`: the questions of ProtoQA crowdsourced dev and CFC dev, loaded once
  (from a local folder, or downloaded into the Space's temporary folder), and the stored
  GPT-2 answers when the local folder has them;
* :func:`prompt_for`: which prompt style a data set's question gets;
* :class:`SamplingSettings` and :class:`ModelHolder`: the page's sampling settings
  checked against the demo's caps, and the Space's one model;
* :func:`score_answers`: ProtoQA's ranked-list scores and ProbEval's KL for one question
  (a :class:`~protoqa_metric.Question` or a row of the dataset export), with what the
  page shows of them (claimed clusters, cluster labels);
* :func:`check_limits` and :func:`run_with_budget`: size caps checked before any scoring,
  and scoring in a forked process stopped after :data:`SCORE_TIME_BUDGET` seconds;
* :func:`scores_json`: the numbers of a result for the page's API.

>>> data = DemoData("../shared/data")  # doctest: +SKIP
>>> question = data.question("protoqa", "r1q1")  # doctest: +SKIP
>>> result = score_answers("protoqa", question, data.stored_answers("protoqa", "r1q1"))  # doctest: +SKIP
>>> result.protoqa.scores["wordnet"]["max_answers@10"], result.probeval.kl  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from protoqa_core import data as data_location
from protoqa_core.ranking import answer_frequencies, rank_by_frequency
from protoqa_core.readers import read_prediction_lists, read_predictions
from protoqa_dataset.sources import SourceError, source_path
from protoqa_integrations import generation, prompts, serving
from protoqa_integrations.generation import PAPER_TEMPERATURE, PAPER_TOP_P, PROTOQA_NUM_SAMPLES, SamplingConfig
from protoqa_integrations.prompts import clean_answer
from protoqa_metric import PAPER_METRICS, Question, evaluate_predictions, question_from_row, read_targets

__all__ = [
    "MODEL_ENV",
    "DATA_DIR_ENV",
    "FALLBACK_DATA_DIR_ENV",
    "PROMPT_STYLE_ENV",
    "CACHE_DIR_ENV",
    "TEMP_DIR_ENV",
    "DEFAULT_MODEL",
    "DEFAULT_NUM_SAMPLES",
    "MAX_NUM_SAMPLES",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TOP_P",
    "DEFAULT_SEED",
    "MAX_QUESTION_CHARS",
    "SIMILARITIES",
    "DemoError",
    "ModelUnavailableError",
    "DataSetInfo",
    "DATASETS",
    "Answers",
    "SamplingSettings",
    "LoadedModel",
    "ModelHolder",
    "ProtoQAScores",
    "DemoResult",
    "space_temp_dir",
    "configure_environment",
    "resolve_data_dir",
    "DemoData",
    "answers_from_samples",
    "answers_from_ranked_list",
    "prompt_for",
    "check_question",
    "load_model",
    "protoqa_scores",
    "probeval_score",
    "score_answers",
    "prompt_style",
    "resolve_question",
    "generate_result",
    "stored_result",
    "MAX_ANSWERS",
    "MAX_ANSWER_CHARS",
    "MAX_CLUSTERS",
    "MAX_CLUSTER_STRINGS",
    "MAX_CLUSTER_ANSWER_CHARS",
    "MAX_CLUSTER_ANSWER_TOKENS",
    "MAX_CLUSTER_COUNT",
    "MAX_SCORED_PAIRS",
    "SCORE_TIME_BUDGET",
    "SCORE_MEMORY_BUDGET",
    "FIRST_VIEW_PATH",
    "as_question",
    "check_limits",
    "run_with_budget",
    "scored_within_budget",
    "scores_json",
    "custom_result",
    "first_view_result",
]

MODEL_ENV = "PROTOQA_SPACE_MODEL"
"""Model name on the Hub or local folder; default :data:`DEFAULT_MODEL`."""
DATA_DIR_ENV = "PROTOQA_SPACE_DATA_DIR"
"""Local data folder (``protoqa/...``, ``cfc/...``); read before ``PROTOQA_DATA_DIR``."""
FALLBACK_DATA_DIR_ENV = data_location.DATA_DIR_ENV
PROMPT_STYLE_ENV = "PROTOQA_SPACE_PROMPT"
"""``statement`` (default, for a plain GPT-2) or ``finetuned`` (``prompt<TAB>``, for a ProtoQA fine-tuned model)."""
CACHE_DIR_ENV = "PROTOQA_SPACE_CACHE_DIR"
"""Where downloaded models go; default a folder under the temporary directory."""
TEMP_DIR_ENV = "PROTOQA_SPACE_TMP"
"""Root of every folder the Space writes to; default ``<system temp>/protoqa_space``."""

DEFAULT_MODEL = "gpt2"
DEFAULT_NUM_SAMPLES = PROTOQA_NUM_SAMPLES
DEFAULT_TEMPERATURE = PAPER_TEMPERATURE
DEFAULT_TOP_P = PAPER_TOP_P
DEFAULT_SEED = SamplingConfig.seed
MIN_TEMPERATURE, MAX_TEMPERATURE = 0.05, 2.0
MAX_QUESTION_CHARS = serving.MAX_QUESTION_CHARS
BATCH_SIZE = 50
"""Samples per forward pass: bounds the memory of one sampling step on a small CPU Space."""
SIMILARITIES = ("exact_match", "wordnet")
ROBERTA_ENCODER_ENV = "PROTOQA_SPACE_ROBERTA_ENCODER"
"""Set to an encoder (a Hub id such as ``roberta-base``, or a folder) to add the ``roberta`` similarity."""

# Caps checked before any scoring (check_limits), shared with the Hub-folder apps
# (protoqa_integrations.serving). The real data stays below them (ProtoQA and CFC: at
# most 35 clusters, 124 answer strings per question, 126 characters and 22 words per
# cluster answer; stored samples up to 530 characters), while they bound the memory and
# the number of comparisons of any input; the time budget stops whatever is still too
# slow within them.
MAX_ANSWERS = MAX_NUM_SAMPLES = serving.MAX_ANSWERS
"""Most answers (samples, or a ranked list) scored for one question."""
MAX_ANSWER_CHARS = serving.MAX_ANSWER_CHARS
"""Longest model answer accepted (the metric itself reads only its first 50 characters)."""
MAX_CLUSTERS = serving.MAX_CLUSTERS
MAX_CLUSTER_STRINGS = serving.MAX_CLUSTER_STRINGS
"""Most answer strings in all the clusters of one question."""
MAX_CLUSTER_ANSWER_CHARS = serving.MAX_CLUSTER_ANSWER_CHARS
MAX_CLUSTER_ANSWER_TOKENS = serving.MAX_CLUSTER_ANSWER_TOKENS
"""Most whitespace-separated words in one cluster answer."""
MAX_SCORED_PAIRS = serving.MAX_SCORED_PAIRS
"""Most (distinct answer, cluster answer string) pairs one scoring compares."""
MAX_CLUSTER_COUNT = serving.MAX_CLUSTER_COUNT
"""Most people in one cluster."""
SCORE_TIME_BUDGET = serving.SCORE_TIME_BUDGET
"""Seconds one scoring may take before it is stopped (it runs in a forked process)."""
SCORE_MEMORY_BUDGET = serving.SCORE_MEMORY_BUDGET
"""Bytes of address space a scoring process may add to what it inherits."""
FIRST_VIEW_PATH = Path(__file__).resolve().parent / "first_view.json"
"""The default question's export row and the stored GPT-2 answers to it, shown on load."""
CLAIM_METRIC = "max_answers@10"
"""The ranked-answers table shows the clusters claimed under this metric (the paper's headline)."""


class DemoError(Exception):
    """A problem to show in the page: bad input, missing data, no model."""


class ModelUnavailableError(DemoError):
    """No language model could be loaded."""


# -- data sets --------------------------------------------------------------------------


@dataclass(frozen=True)
class DataSetInfo:
    """One data set of the demo and where its stored GPT-2 answers live.

    Attributes:
        key: ``protoqa`` or ``cfc`` (also the config name in ``protoqa_dataset.sources``).
        label: what the page calls it.
        stored_names: paths of the stored answers file relative to a data folder.
        stored_label: which model wrote the stored answers, for the page.
        stored_samples: the file has every sample (with repetition) rather than a ranked list.
    """

    key: str
    label: str
    stored_names: tuple[str, ...]
    stored_label: str
    stored_samples: bool


DATASETS: Mapping[str, DataSetInfo] = {
    "protoqa": DataSetInfo(
        "protoqa",
        "ProtoQA crowdsourced dev",
        ("protoqa/dev.predictions.gpt2finetuned.json", "dev.predictions.gpt2finetuned.json"),
        "fine-tuned GPT-2 of the ProtoQA paper (ranked lists, no sample counts)",
        False,
    ),
    "cfc": DataSetInfo(
        "cfc",
        "CFC dev",
        ("cfc/dev.predictions.gpt2-xl.oneshot.json", "dev.predictions.gpt2-xl.oneshot.json"),
        "GPT-2 XL, one-shot prompt (100 samples per question)",
        True,
    ),
}


def _dataset(key: str) -> DataSetInfo:
    if key not in DATASETS:
        raise DemoError(f"unknown data set {key!r}; choose one of {', '.join(DATASETS)}")
    return DATASETS[key]


def space_temp_dir(name: str = "") -> Path:
    """A folder under the Space's temporary root (``$PROTOQA_SPACE_TMP`` or the system temp), created.

    >>> space_temp_dir("models").name
    'models'
    """
    root = Path(os.environ.get(TEMP_DIR_ENV) or Path(tempfile.gettempdir()) / "protoqa_space")
    folder = root / name if name else root
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def configure_environment() -> None:
    """Point every cache the app touches into the temporary root, unless already set.

    Gradio, matplotlib and the WordNet copy of ``protoqa_metric`` would otherwise write
    under the home folder; Gradio's analytics stay off unless asked for. Call it before
    importing gradio or matplotlib.

    >>> configure_environment()  # doctest: +SKIP
    >>> os.environ["GRADIO_TEMP_DIR"]  # doctest: +SKIP
    '/tmp/protoqa_space/gradio'
    """
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    defaults = {
        "GRADIO_TEMP_DIR": "gradio",
        "MPLCONFIGDIR": "matplotlib",
        "PROTOQA_CACHE_DIR": "protoqa_metric",
    }
    for variable, folder in defaults.items():
        if not os.environ.get(variable):
            os.environ[variable] = str(space_temp_dir(folder))


def resolve_data_dir(data_dir: Union[None, str, os.PathLike] = None) -> Optional[Path]:
    """The local data folder: the argument, ``$PROTOQA_SPACE_DATA_DIR``, then the project's
    own order (:func:`protoqa_core.data.resolve_data_dir`); None means "download".

    >>> resolve_data_dir("/some/where")
    PosixPath('/some/where')
    """
    given = data_dir if data_dir is not None and str(data_dir).strip() else os.environ.get(DATA_DIR_ENV)
    return data_location.resolve_data_dir(given)


@dataclass(frozen=True)
class Answers:
    """A model's answers to one question.

    Attributes:
        samples: answer -> how often it was sampled (``""``: a sample with no answer); sampled
            answers are normalized and counted by :func:`protoqa_core.ranking.answer_frequencies`.
        ranked: the ranked answer list that ProtoQA scores.
        origin: where the answers come from, for the page.
        counted: whether ``samples`` are real sample frequencies (False for stored ranked
            lists, where each answer counts once).
    """

    samples: Mapping[str, int]
    ranked: tuple[str, ...]
    origin: str
    counted: bool = True

    @property
    def num_samples(self) -> int:
        """How many samples there are in all.

        >>> answers_from_samples(["a", "a", "b"], "test").num_samples
        3
        """
        return sum(self.samples.values())


def answers_from_samples(samples: Iterable[str], origin: str, eos_token: Optional[str] = None) -> Answers:
    """Answers from sampled texts: each cut at its first end of sentence, counted and ranked by frequency.

    Counting and ranking are :func:`protoqa_core.ranking.answer_frequencies` and
    :func:`~protoqa_core.ranking.rank_by_frequency`, as everywhere in the project.

    >>> a = answers_from_samples(["Dog. Big", "cat", "dog<|endoftext|>", ""], "test", "<|endoftext|>")
    >>> a.ranked, dict(a.samples)
    (('dog', 'cat'), {'dog': 2, 'cat': 1, '': 1})
    """
    counts = answer_frequencies([clean_answer(s, eos_token=eos_token) for s in samples])
    return Answers(counts, tuple(rank_by_frequency(counts)), origin, True)


def answers_from_ranked_list(ranked: Sequence[str], origin: str) -> Answers:
    """Answers from a stored ranked list: scored as given, each distinct answer one sample for ProbEval.

    >>> answers_from_ranked_list(["age", "name", "age"], "stored").samples
    {'age': 1, 'name': 1}
    """
    return Answers(dict.fromkeys(ranked, 1), tuple(ranked), origin, False)


class DemoData:
    """The questions and stored answers of both data sets.

    With a local folder (see :func:`resolve_data_dir`) the targets are read from it under
    any name ``protoqa_dataset.sources`` accepts (``protoqa/dev.crowdsourced.jsonl``,
    ``cfc/dev.targets.jsonl``, the upstream layout, ...), and stored answers are offered
    when the folder has them. Without one, the two targets files are downloaded from
    their public homes into a temporary folder and checked against their checksums.
    Files are read on first use, once.

    >>> data = DemoData("../shared/data")  # doctest: +SKIP
    >>> data.question_choices("cfc")[0]  # doctest: +SKIP
    ('r1q1 · model went for glamour in a royal gown for the premiere. when will ...', 'r1q1')
    """

    def __init__(self, data_dir: Union[None, str, os.PathLike] = None) -> None:
        self.data_dir = resolve_data_dir(data_dir)
        self._questions: dict[str, dict[str, Question]] = {}
        self._stored: dict[str, dict[str, Answers]] = {}
        self._lock = threading.Lock()

    def describe(self) -> str:
        """Where the data comes from, for the page.

        >>> DemoData("/data").describe()
        'data read from the local folder /data'
        """
        if self.data_dir is None:
            return "data downloaded from the public ProtoQA and CFC repositories"
        return f"data read from the local folder {self.data_dir}"

    def _targets_path(self, key: str) -> Path:
        # A local folder is read as it is (the demo scores what is put there); a download
        # is checked against its pinned checksum.
        try:
            return source_path(
                _dataset(key).key, "validation", self.data_dir, verify_local=False, cache_dir=space_temp_dir("data")
            )[0]
        except SourceError as exc:
            raise DemoError(f"cannot load {DATASETS[key].label}: {exc}") from exc

    def questions(self, key: str) -> dict[str, Question]:
        """Question id -> question with its human clusters, in file order.

        >>> len(DemoData("../shared/data").questions("protoqa"))  # doctest: +SKIP
        52
        """
        _dataset(key)
        with self._lock:
            if key not in self._questions:
                self._questions[key] = read_targets(self._targets_path(key))
            return self._questions[key]

    def question(self, key: str, question_id: str) -> Question:
        """One question; :class:`DemoError` when the id is unknown.

        >>> DemoData("../shared/data").question("protoqa", "r1q1").clusters[0].count  # doctest: +SKIP
        54
        """
        questions = self.questions(key)
        if question_id not in questions:
            raise DemoError(f"{DATASETS[key].label} has no question {question_id!r}")
        return questions[question_id]

    def question_choices(self, key: str, width: int = 90) -> list[tuple[str, str]]:
        """``(label, id)`` pairs for a searchable dropdown: the id and the start of the question.

        >>> DemoData("../shared/data").question_choices("protoqa")[0]  # doctest: +SKIP
        ('r1q1 · Name something that is hard to guess about a person you are just meeting.', 'r1q1')
        """
        choices = []
        for qid, q in self.questions(key).items():
            text = q.question_original or q.question
            label = f"{qid} · {text if len(text) <= width else text[: width - 3].rstrip() + '...'}"
            choices.append((label, qid))
        return choices

    def stored_path(self, key: str) -> Optional[Path]:
        """The stored answers file of a data set in the local folder, or None.

        >>> DemoData("/nowhere").stored_path("cfc") is None
        True
        """
        if self.data_dir is None:
            return None
        for name in _dataset(key).stored_names:
            if (self.data_dir / name).is_file():
                return self.data_dir / name
        return None

    def stored_answers(self, key: str, question_id: str) -> Answers:
        """The stored GPT-2 answers to one question (see :data:`DATASETS`).

        >>> DemoData("../shared/data").stored_answers("protoqa", "r1q1").ranked[:2]  # doctest: +SKIP
        ('age', 'name')
        """
        info = _dataset(key)
        path = self.stored_path(key)
        if path is None:
            where = f"in {self.data_dir}" if self.data_dir else "(no local data folder is set)"
            raise DemoError(
                f"no stored answers for {info.label} {where}: set {DATA_DIR_ENV} to a folder with "
                f"{info.stored_names[0]}"
            )
        with self._lock:
            if key not in self._stored:
                self._stored[key] = self._read_stored(info, path)
        if question_id not in self._stored[key]:
            raise DemoError(f"{path.name} has no answers for question {question_id!r}")
        return self._stored[key][question_id]

    @staticmethod
    def _read_stored(info: DataSetInfo, path: Path) -> dict[str, Answers]:
        origin = f"stored answers of the {info.stored_label}, from {path.name}"
        if info.stored_samples:
            # Raw samples still carry GPT-2's end-of-text padding and trailing sentences:
            # they get the same clean-up as the demo's own samples.
            raw = read_prediction_lists(path, "model_answers")
            return {qid: answers_from_samples(s, origin, "<|endoftext|>") for qid, s in raw.items()}
        return {qid: answers_from_ranked_list(r, origin) for qid, r in read_predictions(path).items()}


# -- prompts ----------------------------------------------------------------------------


def prompt_for(dataset_key: str, question: str, style: Optional[str] = None) -> str:
    """The prompt of a question of a data set (a typed question gets its data set's kind of prompt).

    CFC questions get the one-shot prompt; ProtoQA questions the prompt style ``style``
    (default :func:`prompt_style`): ``statement`` for a plain GPT-2, ``finetuned`` (with
    the tab separator of the ProtoQA fine-tuning format). The prompt is the library's
    :func:`protoqa_integrations.prompts.prompt_for`, from the lower-case question, as
    ``protoqa-eval generate``, the lm-eval tasks and the Trainer hooks build it.

    >>> prompt_for("protoqa", "Name a fruit"), prompt_for("protoqa", "name a fruit", "finetuned")
    ('one fruit is', 'one fruit is\\t')
    """
    return prompts.prompt_for(question, _prompt_style_of(dataset_key, style))


def _prompt_style_of(dataset_key: str, style: Optional[str] = None) -> str:
    if dataset_key == "cfc":
        return "cfc-one-shot"
    if dataset_key != "protoqa":
        raise DemoError(f"unknown data set {dataset_key!r}; choose one of {', '.join(DATASETS)}")
    style = style or prompt_style()
    if style not in {"statement", "finetuned"}:
        raise DemoError(f"unknown prompt style {style!r}; use 'statement' or 'finetuned' (${PROMPT_STYLE_ENV})")
    return style


def check_question(text: Optional[str]) -> str:
    """A typed question, whitespace collapsed; :class:`DemoError` when empty or too long.

    >>> check_question("  Name   a fruit ")
    'Name a fruit'
    """
    text = " ".join((text or "").split())
    if not text:
        raise DemoError("type a question, or clear the box to use a question from the data set")
    if len(text) > MAX_QUESTION_CHARS:
        raise DemoError(f"the question has {len(text)} characters; at most {MAX_QUESTION_CHARS} are allowed")
    return text


# -- model and sampling -----------------------------------------------------------------


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
    """Load a causal language model and its tokenizer (:func:`protoqa_integrations.generation.load_model`).

    No remote code, on the CPU, in float32; Hub downloads go to ``cache_dir`` (default a
    folder under the Space's temporary root). Raises :class:`ModelUnavailableError`
    saying why when it cannot be loaded.

    >>> load_model("/no/such/model")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ModelUnavailableError: there is no model folder /no/such/model
    """
    cache = str(cache_dir) if cache_dir is not None else str(space_temp_dir("models"))
    try:
        model, tokenizer = generation.load_model(name, "cpu", "float32", cache_dir=cache)
    except generation.GenerationError as exc:
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
        self.name = name or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
        self.cache_dir = cache_dir or os.environ.get(CACHE_DIR_ENV) or None
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
        """The name for buttons: a local folder's last part, else the Hub name.

        >>> ModelHolder("/models/my-gpt2").display_name, ModelHolder("gpt2-medium").display_name
        ('my-gpt2', 'gpt2-medium')
        """
        return Path(self.name).name if os.path.isabs(self.name) or self.name.startswith(".") else self.name

    @property
    def loaded(self) -> Optional[LoadedModel]:
        """The model when it has been loaded, else None (never loads)."""
        return self._loaded

    @property
    def error(self) -> Optional[ModelUnavailableError]:
        """Why the last load failed, or None."""
        return self._error


def _sample(
    loaded: LoadedModel,
    prompt: str,
    settings: SamplingSettings,
    on_progress: Optional[Callable[[int, int], None]] = None,
) -> list[str]:
    """The cleaned answers of ``settings.num_samples`` samples (the library's sampler), in sample order."""
    (done,) = generation.iter_prompt_samples(
        loaded.model, loaded.tokenizer, [prompt], settings.config(), on_progress=on_progress, model_name=loaded.name
    )
    if done.skipped:
        raise DemoError(f"cannot sample answers: {done.skipped}")
    return done.answers


# -- scores -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ProtoQAScores:
    """ProtoQA's paper metrics for one question under each similarity.

    Attributes:
        scores: similarity -> metric name (``max_answers@1`` ...) -> score in [0, 1].
        claims: similarity -> cluster id claimed by each of the first ten ranked answers
            under Max Answers@10 (None: claims nothing).
        signatures: similarity -> reproducibility signature.
    """

    scores: Mapping[str, Mapping[str, float]]
    claims: Mapping[str, tuple[Optional[str], ...]]
    signatures: Mapping[str, str]


def protoqa_scores(question: Question, ranked: Sequence[str]) -> ProtoQAScores:
    """Max Answers@1/3/5/10 and Max Incorrect@1/3/5 of a ranked list, exact match and WordNet.

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> s = protoqa_scores(q, ["cat", "fish"])
    >>> s.scores["exact_match"]["max_answers@1"], s.claims["exact_match"]
    (0.6666666666666666, ('q1.1', None))
    """
    scores, claims, signatures = {}, {}, {}
    for similarity in space_similarities():
        if similarity == "roberta":
            result = _roberta_metric().evaluate({question.id: question}, {question.id: list(ranked)})
        else:
            result = evaluate_predictions({question.id: question}, {question.id: list(ranked)}, similarity, "paper")
        per_metric = result.per_question[question.id]
        scores[similarity] = {m.name: per_metric[m.name].score for m in PAPER_METRICS}
        claims[similarity] = per_metric[CLAIM_METRIC].assignment
        signatures[similarity] = result.signature
    return ProtoQAScores(scores, claims, signatures)


def space_similarities() -> tuple[str, ...]:
    """Exact match and WordNet, and ``roberta`` when ``$PROTOQA_SPACE_ROBERTA_ENCODER`` names an encoder.

    >>> space_similarities()[:2]
    ('exact_match', 'wordnet')
    """
    return SIMILARITIES + (("roberta",) if os.environ.get(ROBERTA_ENCODER_ENV, "").strip() else ())


_roberta_lock = threading.Lock()
_roberta: dict[str, Any] = {}


def _roberta_metric() -> Any:
    """The ``roberta`` ProtoQA metric (paper metrics) for the configured encoder, built once."""
    from protoqa_metric import ProtoQA

    encoder = os.environ[ROBERTA_ENCODER_ENV].strip()
    with _roberta_lock:
        if encoder not in _roberta:
            _roberta[encoder] = ProtoQA("roberta", "paper", encoder=encoder)
        return _roberta[encoder]


_probeval_lock = threading.Lock()
_probeval: Any = None


def _probeval_instance() -> Any:
    global _probeval
    with _probeval_lock:
        if _probeval is None:
            from cfc_probeval import ProbEval

            # The human clusters are what the page shows, and WordNet matching (the
            # default) needs no embedding model, so nothing is downloaded.
            _probeval = ProbEval("human")
        return _probeval


def probeval_score(question: Question, samples: Mapping[str, int]) -> tuple[Any, str]:
    """ProbEval of one question: (``cfc_probeval.QuestionResult``, signature), human clusters.

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> result, signature = probeval_score(q, {"dog": 6, "cat": 4})
    >>> round(result.kl, 6), [c.id for c in result.clusters]
    (0.0, ['q1.0', 'q1.1', 'wrong'])
    """
    from cfc_probeval import ground_truth_from_question

    probeval = _probeval_instance()
    with _probeval_lock:  # its WordNet caches are shared
        result = probeval.score_question(ground_truth_from_question(question), dict(samples))
        return result, probeval.signature(1)


@dataclass
class DemoResult:
    """Everything the page shows for one question.

    Attributes:
        dataset_key: ``protoqa`` or ``cfc``.
        question_text: the question as asked.
        question: the data set's question with its clusters, or None for a typed question.
        prompt: the prompt the model completed, or None for stored answers.
        answers: the model's answers.
        protoqa: ProtoQA scores (None without clusters).
        probeval: ``cfc_probeval.QuestionResult`` (None without clusters).
        signatures: name -> signature (sampling, ProtoQA per similarity, ProbEval).
        cluster_labels: cluster id -> short label (``C1 age``), most popular first.
        probeval_clusters: normalized answer -> ids of the clusters it went to under ProbEval.
        seconds: time spent sampling (0 for stored answers).
    """

    dataset_key: str
    question_text: str
    question: Optional[Question]
    prompt: Optional[str]
    answers: Answers
    protoqa: Optional[ProtoQAScores] = None
    probeval: Any = None
    signatures: dict[str, str] = field(default_factory=dict)
    cluster_labels: dict[str, str] = field(default_factory=dict)
    probeval_clusters: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def scored(self) -> bool:
        """Whether there are human clusters and hence scores."""
        return self.protoqa is not None


def _cluster_labels(question: Question, probeval_result: Any) -> dict[str, str]:
    representatives = {c.id: c.representative for c in probeval_result.clusters}
    ordered = sorted(question.clusters, key=lambda c: -c.count)  # stable: data order breaks ties
    return {c.id: f"C{i} {representatives.get(c.id) or c.answers[0]}" for i, c in enumerate(ordered, start=1)}


def score_answers(
    dataset_key: str,
    question: Union[None, Question, Mapping[str, Any]],
    answers: Answers,
    *,
    question_text: Optional[str] = None,
    prompt: Optional[str] = None,
    sampling_signature: Optional[str] = None,
    sampling_seconds: float = 0.0,
) -> DemoResult:
    """Both metrics for a question's answers (none for a typed question without clusters).

    ``question`` is a :class:`~protoqa_metric.Question` or a row of the dataset export
    (``load_dataset(export, "protoqa")["validation"][0]``), as it is. Call
    :func:`check_limits` first for input from outside. ``sampling_seconds`` is shown with
    the answers (it is not the scoring budget of :func:`run_with_budget`).

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
    >>> r = score_answers("protoqa", q, answers_from_samples(["dog", "dog", "fish"], "test"))
    >>> r.cluster_labels, r.probeval_clusters
    ({'q1.0': 'C1 dog', 'q1.1': 'C2 cat'}, {'dog': ['q1.0'], 'fish': ['wrong']})
    """
    question = as_question(question)
    text = question_text or (question.question_original or question.question if question else "")
    result = DemoResult(dataset_key, text, question, prompt, answers, seconds=sampling_seconds)
    if sampling_signature:
        result.signatures["sampling"] = sampling_signature
    if question is None or not question.clusters:
        return result
    result.protoqa = protoqa_scores(question, answers.ranked)
    for similarity, signature in result.protoqa.signatures.items():
        result.signatures[f"protoqa ({similarity})"] = signature
    result.probeval, result.signatures["probeval"] = probeval_score(question, answers.samples)
    result.cluster_labels = _cluster_labels(question, result.probeval)
    for cluster in result.probeval.clusters:
        for answer in cluster.predictions:
            result.probeval_clusters.setdefault(answer, []).append(cluster.id)
    return result


# -- one request, end to end --------------------------------------------------------------


def prompt_style() -> str:
    """The ProtoQA prompt style from ``$PROTOQA_SPACE_PROMPT`` (``statement`` by default).

    >>> prompt_style() in {"statement", "finetuned"}
    True
    """
    style = (os.environ.get(PROMPT_STYLE_ENV) or "statement").strip().lower()
    if style not in {"statement", "finetuned"}:
        raise DemoError(f"${PROMPT_STYLE_ENV} must be 'statement' or 'finetuned', got {style!r}")
    return style


def resolve_question(
    data: DemoData, dataset_key: str, question_id: Optional[str], custom_question: Optional[str] = None
) -> tuple[Optional[Question], str]:
    """(question with clusters or None, text to ask): a typed question wins over the picked one.

    >>> resolve_question(DemoData("/nowhere"), "protoqa", None, "Name a fruit")
    (None, 'Name a fruit')
    """
    if custom_question and custom_question.strip():
        return None, check_question(custom_question)
    if not question_id:
        raise DemoError("pick a question of the data set, or type your own")
    question = data.question(dataset_key, question_id)
    return question, question.question_original or question.question


def generate_result(
    data: DemoData,
    models: ModelHolder,
    dataset_key: str,
    question_id: Optional[str],
    custom_question: Optional[str],
    settings: SamplingSettings,
    on_progress: Optional[Callable[[int, int], None]] = None,
    on_stage: Optional[Callable[[str], None]] = None,
) -> DemoResult:
    """Sample answers from the model for a picked or typed question and score them.

    ``on_stage(message)`` is told when loading, sampling and scoring start;
    ``on_progress(done, total)`` follows the sampling.

    >>> generate_result(DemoData(), ModelHolder(), "protoqa", "r1q1", None, SamplingSettings())  # doctest: +SKIP
    """
    question, text = resolve_question(data, dataset_key, question_id, custom_question)
    style = _prompt_style_of(dataset_key)
    prompt = prompt_for(dataset_key, question.question if question is not None else text, style)
    if on_stage:
        on_stage(f"Loading the model {models.name}")
    loaded = models.get(retry=True)
    if on_stage:
        on_stage(f"Sampling {settings.num_samples} answers")
    cleaned, seconds = _timed(lambda: _sample(loaded, prompt, settings, on_progress))
    answers = answers_from_samples(cleaned, f"nucleus samples from {loaded.name}")
    if on_stage and question is not None:
        on_stage("Scoring (exact match, WordNet, ProbEval)")
    return scored_within_budget(
        dataset_key,
        question,
        answers,
        question_text=text,
        prompt=prompt,
        sampling_signature=settings.signature(loaded.name, style),
        sampling_seconds=seconds,
    )


def stored_result(
    data: DemoData, dataset_key: str, question_id: Optional[str], custom_question: Optional[str] = None
) -> DemoResult:
    """Score the stored GPT-2 answers of a data set's question.

    >>> stored_result(DemoData("../shared/data"), "cfc", "r1q1").probeval.kl  # doctest: +SKIP
    3.459...
    """
    if custom_question and custom_question.strip():
        raise DemoError("stored answers exist only for the data set's questions: clear the typed question")
    question, text = resolve_question(data, dataset_key, question_id)
    return scored_within_budget(
        dataset_key, question, data.stored_answers(dataset_key, question.id), question_text=text
    )


def _timed(function: Callable[[], Any]) -> tuple[Any, float]:
    """``(function(), seconds it took)``.

    >>> _timed(lambda: 3)[0]
    3
    """
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


# -- limits, time budget, API -------------------------------------------------------------


def as_question(question: Union[None, Question, Mapping[str, Any]]) -> Optional[Question]:
    """A :class:`~protoqa_metric.Question` from a question or a dataset export row (None stays None).

    >>> as_question({"id": "q1", "question": "name a pet",
    ...              "clusters": {"id": ["q1.0"], "answers": [["dog"]], "count": [6]}}).clusters[0].count
    6
    """
    if question is None or isinstance(question, Question):
        return question
    if isinstance(question, Mapping):
        try:
            return question_from_row(question)
        except ValueError as exc:
            raise DemoError(str(exc)) from exc
    raise DemoError(
        f"a question must be a protoqa_metric.Question or a dataset row (dict), got {type(question).__name__}"
    )


def check_limits(question: Optional[Question], answers: Answers) -> None:
    """Refuse, with a message, an input bigger than the Space scores (see the ``MAX_*`` caps).

    Runs before any scoring, so an oversized request costs only this check.

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog " * 40,), 6),))
    >>> check_limits(q, answers_from_ranked_list(["dog"], "test"))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DemoError: cluster 'q1.0' has an answer of 40 words; at most 25 are allowed
    """
    if answers.num_samples > MAX_ANSWERS or len(answers.samples) > MAX_ANSWERS or len(answers.ranked) > MAX_ANSWERS:
        raise DemoError(f"{max(answers.num_samples, len(answers.ranked))} answers; at most {MAX_ANSWERS} are scored")
    extra = [a for a in answers.ranked if a not in answers.samples]
    clusters = question.clusters if question is not None else ()
    text = max(question.question, question.question_original, key=len) if question is not None else ""
    try:
        serving.check_question_limits(
            [c.answers for c in clusters],
            [c.count for c in clusters],
            list(answers.samples) + extra,
            text,
            [c.id for c in clusters],
        )
    except serving.LimitError as exc:
        raise DemoError(str(exc)) from None


def run_with_budget(
    function: Callable[..., Any],
    *args: Any,
    seconds: float = SCORE_TIME_BUDGET,
    memory: int = SCORE_MEMORY_BUDGET,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)`` in a forked process, stopped after ``seconds`` (:class:`DemoError`).

    :func:`protoqa_integrations.serving.run_with_budget`, the budget the Hub-folder apps use
    too; its :class:`~protoqa_integrations.serving.LimitError` becomes a :class:`DemoError`.

    >>> run_with_budget(sum, [1, 2, 3])
    6
    >>> run_with_budget(time.sleep, 5, seconds=0.5)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    DemoError: scoring took longer than the 0.5 s budget and was stopped
    """
    try:
        return serving.run_with_budget(function, *args, seconds=seconds, memory=memory, **kwargs)
    except serving.LimitError as exc:
        raise DemoError(str(exc)) from None


def scored_within_budget(
    dataset_key: str, question: Union[None, Question, Mapping[str, Any]], answers: Answers, **kwargs: Any
) -> DemoResult:
    """:func:`check_limits`, then :func:`score_answers` under :func:`run_with_budget`.

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> scored_within_budget("protoqa", q, answers_from_ranked_list(["dog"], "test")).protoqa.scores["wordnet"]["max_answers@1"]
    1.0
    """
    question = as_question(question)
    check_limits(question, answers)
    if question is None or not question.clusters:
        return score_answers(dataset_key, question, answers, **kwargs)  # nothing to score
    return run_with_budget(score_answers, dataset_key, question, answers, **kwargs)


def _parse_json(value: Any, what: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DemoError(f"{what} is not valid JSON: {exc}") from None


def custom_result(question: str, clusters: Any, answers: Any) -> DemoResult:
    """Score answers given by the caller against clusters given by the caller.

    ``clusters`` is the export's ``{"id": [...], "answers": [[...]], "count": [...]}`` or a
    list of ``{"answers": [...], "count": n}`` records (or that as JSON text); ``answers``
    a ranked list of strings (or JSON text, or one answer per line). Caps are checked
    before anything is scored.

    >>> r = custom_result("Name a pet", {"answers": [["dog"], ["cat"]], "count": [6, 4]}, "cat\\nfish")
    >>> r.protoqa.scores["exact_match"]["max_answers@1"]
    0.6666666666666666
    """
    if not isinstance(question, str):
        raise DemoError(f"question must be text, got {type(question).__name__}")
    text = check_question(question)
    clusters = _parse_json(clusters, "clusters")
    if isinstance(answers, str):
        stripped = answers.strip()
        answers = _parse_json(stripped, "answers") if stripped.startswith("[") else stripped.splitlines()
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise DemoError("answers must be a list of strings (ranked, best first), or one answer per line")
    if len(answers) > MAX_ANSWERS:
        raise DemoError(f"{len(answers)} answers; at most {MAX_ANSWERS} are scored")
    row = {"id": "custom", "question": text, "clusters": clusters}
    answers_ = answers_from_ranked_list([a.strip() for a in answers], "answers given by the caller")
    return scored_within_budget("protoqa", row, answers_, question_text=text)


def scores_json(result: DemoResult) -> dict[str, Any]:
    """A result's numbers for the API: ProtoQA scores per similarity, ProbEval's KL, signatures.

    >>> from protoqa_metric import Cluster
    >>> q = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> out = scores_json(score_answers("protoqa", q, answers_from_ranked_list(["dog"], "test")))
    >>> out["protoqa"]["wordnet"]["max_answers@1"], type(out["probeval_kl"]).__name__
    (1.0, 'float')
    """
    out: dict[str, Any] = {
        "question_id": result.question.id if result.question else None,
        "question": result.question_text,
        "answers": [{"answer": a, "samples": result.answers.samples.get(a, 0)} for a in result.answers.ranked],
        "protoqa": None,
        "probeval_kl": None,
        "signatures": dict(result.signatures),
    }
    if result.scored:
        out["protoqa"] = {
            s: {m: float(v) for m, v in by_metric.items()} for s, by_metric in result.protoqa.scores.items()
        }
        kl = float(result.probeval.kl)
        out["probeval_kl"] = kl if kl == kl and abs(kl) != float("inf") else None
    return out


def first_view_result(path: Union[str, os.PathLike] = FIRST_VIEW_PATH) -> DemoResult:
    """The page's first view: the default question's export row and its stored GPT-2 answers, scored.

    >>> first_view_result().question.id  # doctest: +SKIP
    'r1q1'
    """
    try:
        with open(path, encoding="utf-8") as fh:
            stored = json.load(fh)
        row, ranked, origin = stored["row"], stored["ranked"], stored["origin"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DemoError(f"cannot read the first view from {path}: {exc}") from exc
    answers = answers_from_ranked_list(ranked, origin)
    question = as_question(row)
    check_limits(question, answers)
    return score_answers(stored.get("dataset", "protoqa"), question, answers)
