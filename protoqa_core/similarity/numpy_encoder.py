"""BERT-family encoders on numpy: the project's own forward pass over a model's ``model.safetensors``.

:class:`NumpyTransformer` computes the last layer of a BERT or RoBERTa encoder (all-MiniLM-L6-v2,
roberta-base) with numpy, from the weights file mapped into memory (:func:`read_safetensors`) and
the model's ``tokenizer.json`` (the ``tokenizers`` package): the same weights and the same float32
arithmetic as torch, without importing torch, transformers or sentence-transformers. ProbEval's
default embedder (:mod:`cfc_probeval.embedders`) and the ``roberta`` similarity's
:class:`~protoqa_core.similarity.embedding.ContextEncoder` run on it wherever
:func:`numpy_runtime_problem` finds nothing against it (:func:`choose_runtime`).
:func:`encode_token_batches` batches tokenized strings by length; :func:`blas_threads` keeps BLAS
on one thread while it runs.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

__all__ = [
    "ENCODER_RUNTIMES",
    "NumpyTransformer",
    "read_safetensors",
    "load_numpy_transformer",
    "encode_token_batches",
    "gelu",
    "blas_threads",
    "numpy_runtime_problem",
    "choose_runtime",
    "read_json",
]

ENCODER_RUNTIMES = ("numpy", "torch")
"""Where an encoder runs: ``numpy`` (:class:`NumpyTransformer`, BERT-family models) or ``torch``
(``transformers`` / ``sentence-transformers``, any model they load)."""
_NUMPY_MODEL_TYPES = ("bert", "roberta")
_WEIGHT_PREFIXES = ("bert.", "roberta.", "model.")


def read_json(path: Path) -> Any:
    """A JSON file's content, or None when it cannot be read or parsed.

    >>> read_json(Path("/nonexistent.json")) is None
    True
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


_SAFETENSORS_TYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "F64": np.float64, "I64": np.int64}
_MAX_SAFETENSORS_HEADER = 100_000_000


def read_safetensors(path: Union[str, Path]) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file as read-only float32 arrays mapped from the file (integers as they are).

    The file maps into memory instead of being read: only the pages a computation
    touches are loaded, so a model's word-embedding table (half of all-MiniLM-L6-v2)
    costs only the rows of the words seen. The format (an 8-byte header length, a JSON
    header of names, types, shapes and byte ranges, then the data) is checked; a file
    that does not follow it is an error naming the file.

    >>> read_safetensors("/nonexistent.safetensors")
    Traceback (most recent call last):
    ...
    ValueError: /nonexistent.safetensors: not a readable safetensors file (FileNotFoundError)
    """
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            if not 2 <= size <= _MAX_SAFETENSORS_HEADER:
                raise ValueError(f"a header of {size} bytes")
            header = json.loads(handle.read(size).decode("utf-8"))
        data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not a readable safetensors file ({type(exc).__name__})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a readable safetensors file (its header is not a table)")
    tensors: dict[str, np.ndarray] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            kind, shape, (begin, end) = entry["dtype"], [int(n) for n in entry["shape"]], entry["data_offsets"]
            begin, end = int(begin), int(end)
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{path}: the entry of {name!r} is not a tensor description") from None
        if kind not in _SAFETENSORS_TYPES:
            raise ValueError(f"{path}: tensor {name!r} has the type {kind}, which is not read here")
        item: np.dtype[Any] = np.dtype(np.uint16 if kind == "BF16" else _SAFETENSORS_TYPES[kind])
        if not 0 <= begin <= end <= len(data) or end - begin != int(np.prod(shape)) * item.itemsize:
            raise ValueError(f"{path}: tensor {name!r} does not fit its byte range")
        array: np.ndarray = data[begin:end].view(item)
        if kind == "BF16":  # bfloat16: the upper half of a float32
            array = (array.astype(np.uint32) << 16).view(np.float32)
        array = array.reshape(shape)
        tensors[name] = array if array.dtype in (np.float32, np.int64) else array.astype(np.float32)
    return tensors


def numpy_runtime_problem(folder: Union[str, Path]) -> Optional[str]:
    """Why :class:`NumpyTransformer` cannot run the model in ``folder`` (None when it can).

    It runs BERT-family encoders (``model_type`` bert or roberta, GELU, absolute
    positions) from ``model.safetensors`` and ``tokenizer.json``.

    >>> numpy_runtime_problem("/nonexistent")
    'no config.json'
    """
    folder = Path(folder)
    config = read_json(folder / "config.json")
    if not isinstance(config, dict):
        return "no config.json"
    if config.get("model_type") not in _NUMPY_MODEL_TYPES:
        return f"model type {config.get('model_type')!r} (numpy runs {' and '.join(_NUMPY_MODEL_TYPES)})"
    if config.get("hidden_act", "gelu") != "gelu":
        return f"activation {config.get('hidden_act')!r} (numpy runs gelu)"
    if config.get("position_embedding_type", "absolute") != "absolute":
        return f"position embeddings {config.get('position_embedding_type')!r} (numpy runs absolute)"
    for needed in ("model.safetensors", "tokenizer.json"):
        if not (folder / needed).is_file():
            return f"no {needed}"
    import importlib.util

    if importlib.util.find_spec("tokenizers") is None:
        return "tokenizers not installed"
    return None


def choose_runtime(runtime: str, folder: Union[str, Path], option: str) -> str:
    """The runtime to use: ``numpy`` or ``torch`` as asked, or for ``auto`` numpy wherever it can run the model.

    ``option`` names the setting in errors.

    >>> choose_runtime("torch", "/any", "--runtime")
    'torch'
    >>> choose_runtime("numpy", "/nonexistent", "--runtime")
    Traceback (most recent call last):
    ...
    ValueError: --runtime numpy cannot run the model in /nonexistent: no config.json; use --runtime torch
    """
    if runtime not in ("auto", *ENCODER_RUNTIMES):
        raise ValueError(f"{option} must be auto, {' or '.join(ENCODER_RUNTIMES)}, got {runtime!r}")
    if runtime == "torch":
        return "torch"
    problem = numpy_runtime_problem(folder)
    if problem is None:
        return "numpy"
    if runtime == "numpy":
        raise ValueError(f"{option} numpy cannot run the model in {folder}: {problem}; use {option} torch")
    return "torch"


class NumpyTransformer:
    """A BERT-family encoder's last layer, computed with numpy from ``model.safetensors``.

    The same computation as ``transformers``' BertModel / RobertaModel in evaluation
    mode, in float32 as torch on CPU: embeddings (word, absolute position, token type 0)
    and LayerNorm, then per layer self-attention with the padding masked, a dense
    layer, residual and LayerNorm, the exact (erf) GELU (:func:`gelu`) feed-forward, residual and
    LayerNorm. Vectors agree with torch's to about 1e-6. The weights take their own size
    in memory (about 90 MB for all-MiniLM-L6-v2); nothing else is held.

    :meth:`tokenizer` gives the model's ``tokenizers`` tokenizer (from ``tokenizer.json``,
    the one ``transformers``' fast tokenizer wraps) without padding or truncation.

    >>> model = NumpyTransformer("/models/all-MiniLM-L6-v2")  # doctest: +SKIP
    >>> tok = model.tokenizer(); enc = tok.encode("evening")  # doctest: +SKIP
    >>> model.last_hidden_state(np.array([enc.ids]), np.array([enc.attention_mask])).shape  # doctest: +SKIP
    (1, 3, 384)
    """

    def __init__(self, folder: str) -> None:
        problem = numpy_runtime_problem(folder)
        if problem is not None:
            raise ValueError(f"the encoder in {folder} cannot run on numpy: {problem}")
        self.folder = folder
        config = read_json(Path(folder) / "config.json")
        self.model_type = str(config["model_type"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.pad_id = int(config.get("pad_token_id") or 0)
        weights: dict[str, np.ndarray] = {}
        for name, value in read_safetensors(Path(folder) / "model.safetensors").items():
            for prefix in _WEIGHT_PREFIXES:
                if name.startswith(prefix):
                    name = name[len(prefix) :]
                    break
            if name.startswith(("embeddings.", "encoder.")) and not name.endswith("position_ids"):
                weights[name] = value
        try:
            self._embeddings = tuple(
                weights.pop(f"embeddings.{n}")
                for n in ("word_embeddings.weight", "position_embeddings.weight", "token_type_embeddings.weight")
            )
            self._embedding_norm = (
                np.array(weights.pop("embeddings.LayerNorm.weight")),
                np.array(weights.pop("embeddings.LayerNorm.bias")),
            )
            self._layers = [self._layer(weights, f"encoder.layer.{i}.") for i in range(self.layers)]
        except KeyError as exc:
            raise ValueError(f"the encoder in {folder} lacks the weight {exc.args[0]}") from None
        self.dimension = int(self._embeddings[0].shape[1])
        if self.dimension % self.heads:
            raise ValueError(f"the encoder in {folder}: {self.dimension} dimensions in {self.heads} heads")

    @staticmethod
    def _layer(weights: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
        """One layer's weights, as ``(in, out)`` views for ``x @ w`` (torch stores ``(out, in)``).

        The matrices stay views of the mapped file (a copy would hold each in memory twice,
        once in the page cache the process maps and once in its own pages); only query,
        key and value are joined into one matrix, for one product.
        """
        attention = prefix + "attention."
        names = [f"{attention}self.{part}" for part in ("query", "key", "value")]
        return {
            "qkv": np.concatenate([weights.pop(n + ".weight") for n in names]).T,
            "qkv_bias": np.concatenate([weights.pop(n + ".bias") for n in names]),
            "out": weights.pop(attention + "output.dense.weight").T,
            "out_bias": np.array(weights.pop(attention + "output.dense.bias")),
            "norm1": np.array(weights.pop(attention + "output.LayerNorm.weight")),
            "norm1_bias": np.array(weights.pop(attention + "output.LayerNorm.bias")),
            "up": weights.pop(prefix + "intermediate.dense.weight").T,
            "up_bias": np.array(weights.pop(prefix + "intermediate.dense.bias")),
            "down": weights.pop(prefix + "output.dense.weight").T,
            "down_bias": np.array(weights.pop(prefix + "output.dense.bias")),
            "norm2": np.array(weights.pop(prefix + "output.LayerNorm.weight")),
            "norm2_bias": np.array(weights.pop(prefix + "output.LayerNorm.bias")),
        }

    def tokenizer(self) -> Any:
        """The model's tokenizer (``tokenizers.Tokenizer``), with no padding and no truncation."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(Path(self.folder) / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return tokenizer

    def _norm(self, x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        centered = x - mean
        variance = np.mean(centered * centered, axis=-1, keepdims=True)
        centered /= np.sqrt(variance + np.float32(self.eps))
        centered *= weight
        centered += bias
        return centered

    def last_hidden_state(self, ids: np.ndarray, mask: np.ndarray, keep: Optional[np.ndarray] = None) -> np.ndarray:
        """The last layer, float32 ``(batch, tokens, dimension)``, for token ids and a 0/1 attention mask (right-padded).

        With ``keep`` (boolean, like ``mask``) the last layer is finished only for the
        tokens it marks, the others being 0: every token's keys and values are still
        needed there, but the attention output, the feed-forward layer and the norms of a
        token nobody reads are not (most of a context encoder's tokens are its context).

        >>> NumpyTransformer("/models/all-MiniLM-L6-v2").last_hidden_state(ids, mask)  # doctest: +SKIP
        """
        ids, mask = np.asarray(ids, dtype=np.int64), np.asarray(mask, dtype=np.int64)
        batch, tokens = ids.shape
        words, positions, types = self._embeddings
        if self.model_type == "roberta":  # positions count from padding_idx + 1, padding at padding_idx
            position_ids = np.cumsum(mask, axis=1) * mask + self.pad_id
        else:
            position_ids = np.broadcast_to(np.arange(tokens), (batch, tokens))
        if int(position_ids.max(initial=0)) >= len(positions):
            raise ValueError(f"the encoder takes at most {len(positions)} positions, got {tokens} tokens")
        x = words[ids] + positions[position_ids] + types[0]
        x = self._norm(x.reshape(batch * tokens, -1), *self._embedding_norm)
        heads, size = self.heads, self.dimension // self.heads
        blocked = np.where(mask[:, None, None, :] > 0, np.float32(0.0), np.float32(-1e9)).astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(size))
        rows: Optional[np.ndarray] = None
        for index, layer in enumerate(self._layers):
            qkv = (x @ layer["qkv"] + layer["qkv_bias"]).reshape(batch, tokens, 3, heads, size)
            q, k, v = qkv.transpose(2, 0, 3, 1, 4)
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += blocked
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * tokens, heads * size)
            if keep is not None and index == len(self._layers) - 1:
                rows = np.flatnonzero(np.asarray(keep, dtype=bool).reshape(-1))
                context, x = context[rows], x[rows]
            x = self._norm(context @ layer["out"] + layer["out_bias"] + x, layer["norm1"], layer["norm1_bias"])
            hidden = x @ layer["up"] + layer["up_bias"]
            x = self._norm(gelu(hidden) @ layer["down"] + layer["down_bias"] + x, layer["norm2"], layer["norm2_bias"])
        if rows is not None:
            kept, x = x, np.zeros((batch * tokens, x.shape[1]), dtype=np.float32)
            x[rows] = kept
        return x.reshape(batch, tokens, -1)


_ERF_P = np.float32(0.3275911)
_ERF_POLYNOMIAL = tuple(np.float32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def gelu(x: np.ndarray) -> np.ndarray:
    """``x * 0.5 * (1 + erf(x / sqrt(2)))`` (BERT's exact GELU) in float32, written into ``x``.

    ``erf`` is Abramowitz and Stegun's formula 7.1.26, ``1 - t (a1 + t (a2 + ...)) exp(-z^2)``
    with ``t = 1 / (1 + p |z|)`` (error below 1.5e-7), with numpy's float32 ``exp``: this
    GELU costs about half as much as one on ``scipy.special.erf``, which evaluates in
    float64 and was a fifth of the encoder's time. On ``[-8, 8]`` the result lies
    within 4.7e-7 of the exact GELU (scipy's erf: 4.5e-7; torch's own GELU: 1.2e-6).

    >>> gelu(np.array([-3.0, -0.5, 0.0, 0.5, 3.0], dtype=np.float32)).astype(float).round(5).tolist()
    [-0.00405, -0.15427, 0.0, 0.34573, 2.99595]
    """
    z = x * np.float32(0.7071067811865476)
    t = np.abs(z)
    t *= _ERF_P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * _ERF_POLYNOMIAL[0]
    for coefficient in _ERF_POLYNOMIAL[1:]:
        poly += coefficient
        poly *= t
    np.square(z, out=t)  # t is no longer needed beyond poly
    np.negative(t, out=t)
    np.exp(t, out=t)
    poly *= t
    np.subtract(np.float32(1.0), poly, out=poly)
    np.copysign(poly, z, out=poly)  # erf(z)
    poly += np.float32(1.0)
    x *= np.float32(0.5)
    x *= poly
    return x


def blas_threads(count: Optional[int]) -> contextlib.AbstractContextManager[Any]:
    """A context that runs BLAS on ``count`` threads (None: as it is), where ``threadpoolctl`` is installed.

    Answers are a few tokens long: their products are small, and several BLAS threads
    spinning on a busy machine cost far more CPU than they save.

    >>> with blas_threads(1):
    ...     pass
    """
    if not count:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=count, user_api="blas")


def encode_token_batches(
    network: NumpyTransformer,
    encodings: Sequence[Any],
    batch_size: int,
    pool: Callable[[np.ndarray, np.ndarray, list[int]], np.ndarray],
    read: Optional[Sequence[np.ndarray]] = None,
) -> np.ndarray:
    """``pool(hidden, mask, rows)`` over batches of tokenized strings of similar length, in input order.

    Strings are grouped by token count (ties by position), so that batches carry little
    padding and depend only on the inputs; ``rows`` are the batch's positions in
    ``encodings``. ``read`` (one boolean array per encoding) marks the tokens whose last
    layer ``pool`` reads, where it reads only some: the others' last layer is not finished
    (:meth:`NumpyTransformer.last_hidden_state`). Returns the pooled rows stacked in the
    order of ``encodings``.
    """
    order = sorted(range(len(encodings)), key=lambda i: (len(encodings[i].ids), i))
    pooled: list[np.ndarray] = [np.zeros(0)] * len(encodings)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        tokens = max(len(encodings[i].ids) for i in rows)
        ids = np.full((len(rows), tokens), network.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), tokens), dtype=np.int64)
        keep = None if read is None else np.zeros((len(rows), tokens), dtype=bool)
        for r, i in enumerate(rows):
            n = len(encodings[i].ids)
            ids[r, :n], mask[r, :n] = encodings[i].ids, 1
            if keep is not None and read is not None:
                keep[r, :n] = read[i]
        for i, vector in zip(rows, pool(network.last_hidden_state(ids, mask, keep), mask, rows), strict=True):
            pooled[i] = vector
    return np.stack(pooled) if pooled else np.zeros((0, network.dimension))


@lru_cache(maxsize=2)
def load_numpy_transformer(path: str) -> NumpyTransformer:
    """The :class:`NumpyTransformer` of a model folder, loaded once per process.

    >>> load_numpy_transformer("/models/all-MiniLM-L6-v2").dimension  # doctest: +SKIP
    384
    """
    return NumpyTransformer(path)
