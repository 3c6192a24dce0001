"""BERT-family encoders on numpy: the project's own forward pass over a model's ``model.safetensors``.

Float32 as torch, without importing torch, transformers or sentence-transformers. Every matrix
product is exact (:func:`exact_product`) and everything else works on one row or string at a time,
so neither the BLAS kernel nor the other strings of a batch change a bit of a vector. ProbEval's
default embedder and the ``roberta`` similarity run on it wherever :func:`choose_runtime` allows.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from protoqa_core.similarity.exact_products import exact_product, fixed_point

__all__ = [
    "ENCODER_RUNTIMES",
    "NumpyTransformer",
    "read_safetensors",
    "load_numpy_transformer",
    "encode_token_batches",
    "BATCH_TOKENS",
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

    Mapped, not read: a word-embedding table costs only the rows of the words seen.

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

    ``transformers``' BertModel / RobertaModel in evaluation mode, float32 but for the exact
    products; vectors agree with torch's to about 1e-6. Weight matrices are held as float32
    integers (about 45 MB for all-MiniLM-L6-v2); the word embeddings stay mapped from the file.

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
        self.tokens_encoded = 0
        """Tokens that went through the network so far (benchmarks count the work with it)."""
        self.tokens_finished = 0
        """Of those, the tokens whose last layer was finished (all but the ones ``keep`` left out)."""
        self.attention_pairs = 0
        """Token pairs attention scored, per layer: the sum of each string's length squared."""

    def multiply_adds(self) -> int:
        """Multiply-adds of the products of everything encoded so far: the least work any exact run does.

        >>> model = NumpyTransformer("/models/all-MiniLM-L6-v2")  # doctest: +SKIP
        >>> model.packed_hidden_state(np.array([101, 3944, 102]), [3]).shape  # doctest: +SKIP
        (3, 384)
        >>> model.multiply_adds() // model.tokens_encoded  # doctest: +SKIP
        10630656
        """
        d, inner = self.dimension, int(self._layers[0]["up"].shape[1]) if self._layers else 0
        rest = d * d + 2 * d * inner
        per_layer = self.tokens_encoded * 3 * d * d + self.attention_pairs * 2 * d
        return self.layers * per_layer + (self.layers - 1) * self.tokens_encoded * rest + self.tokens_finished * rest

    @staticmethod
    def _layer(weights: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
        """One layer's weights, each matrix ``(in, out)`` as :func:`fixed_point` integers and column scales."""
        attention = prefix + "attention."
        names = [f"{attention}self.{part}" for part in ("query", "key", "value")]
        matrices = {
            "qkv": np.concatenate([weights.pop(n + ".weight") for n in names]).T,
            "out": weights.pop(attention + "output.dense.weight").T,
            "up": weights.pop(prefix + "intermediate.dense.weight").T,
            "down": weights.pop(prefix + "output.dense.weight").T,
        }
        layer: dict[str, np.ndarray] = {}
        for name, matrix in matrices.items():
            integers, scale = fixed_point(matrix, axis=0)
            layer[name], layer[name + "_scale"] = integers.astype(np.float32), scale
        return {
            **layer,
            "qkv_bias": np.concatenate([weights.pop(n + ".bias") for n in names]),
            "out_bias": np.array(weights.pop(attention + "output.dense.bias")),
            "norm1": np.array(weights.pop(attention + "output.LayerNorm.weight")),
            "norm1_bias": np.array(weights.pop(attention + "output.LayerNorm.bias")),
            "up_bias": np.array(weights.pop(prefix + "intermediate.dense.bias")),
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
        """LayerNorm of the rows of ``x``, in place where it can be (``x`` is not kept)."""
        mean = x.mean(axis=-1, keepdims=True)
        centered = np.subtract(x, mean, out=x)
        variance = np.mean(np.square(centered), axis=-1, keepdims=True)
        variance += np.float32(self.eps)
        centered /= np.sqrt(variance, out=variance)
        centered *= weight
        centered += bias
        return centered

    def last_hidden_state(self, ids: np.ndarray, mask: np.ndarray, keep: Optional[np.ndarray] = None) -> np.ndarray:
        """The last layer, float32 ``(batch, tokens, dimension)``, for token ids and a 0/1 attention mask (right-padded).

        Padding positions, and with ``keep`` (boolean, like ``mask``) the tokens it leaves out, are 0.

        >>> NumpyTransformer("/models/all-MiniLM-L6-v2").last_hidden_state(ids, mask)  # doctest: +SKIP
        """
        ids, mask = np.asarray(ids, dtype=np.int64), np.asarray(mask, dtype=np.int64)
        real = mask > 0
        lengths = real.sum(axis=1)
        if not np.array_equal(real, np.arange(ids.shape[1]) < lengths[:, None]):
            raise ValueError("the attention mask must be right-padded: ones, then zeros")
        packed_keep = None if keep is None else np.asarray(keep, dtype=bool)[real]
        hidden = np.zeros((*ids.shape, self.dimension), dtype=np.float32)
        hidden[real] = self.packed_hidden_state(ids[real], lengths.tolist(), packed_keep)
        return hidden

    def packed_hidden_state(
        self, ids: np.ndarray, lengths: Sequence[int], keep: Optional[np.ndarray] = None
    ) -> np.ndarray:
        """The last layer, float32 ``(tokens, dimension)``, of strings given one after another without padding.

        Attention runs over each run of consecutive strings of one length, which needs no mask.
        With ``keep`` (boolean, one per token) the last layer is finished only for the tokens it
        marks, the others being 0 (most of a context encoder's tokens are its context).

        >>> model = NumpyTransformer("/models/all-MiniLM-L6-v2")  # doctest: +SKIP
        >>> model.packed_hidden_state(np.array([101, 3944, 102, 101, 102]), [3, 2]).shape  # doctest: +SKIP
        (5, 384)
        """
        ids = np.asarray(ids, dtype=np.int64)
        counts = np.asarray(lengths, dtype=np.int64)
        if counts.sum() != len(ids) or (counts < 0).any():
            raise ValueError(f"{len(ids)} token ids do not split into strings of {list(lengths)} tokens")
        words, positions, types = self._embeddings
        starts = np.cumsum(counts) - counts
        position_ids = np.arange(len(ids)) - np.repeat(starts, counts)
        if self.model_type == "roberta":  # positions count from padding_idx + 1
            position_ids += self.pad_id + 1
        if int(position_ids.max(initial=0)) >= len(positions):
            raise ValueError(f"the encoder takes at most {len(positions)} positions, got {int(counts.max())} tokens")
        x = words[ids] + positions[position_ids] + types[0]
        x = self._norm(x, *self._embedding_norm)
        runs = _equal_runs(counts.tolist())
        self.tokens_encoded += len(ids)
        self.tokens_finished += len(ids) if keep is None else int(np.count_nonzero(keep))
        self.attention_pairs += int(np.sum(counts * counts))
        rows: Optional[np.ndarray] = None
        for index, layer in enumerate(self._layers):
            context = self._attention(_product(x, layer, "qkv"), runs)
            if keep is not None and index == len(self._layers) - 1:
                rows = np.flatnonzero(np.asarray(keep, dtype=bool))
                context, x = context[rows], x[rows]
            x = self._norm(_product(context, layer, "out", x), layer["norm1"], layer["norm1_bias"])
            hidden = gelu(_product(x, layer, "up"))
            x = self._norm(_product(hidden, layer, "down", x), layer["norm2"], layer["norm2_bias"])
        if rows is not None:
            kept, x = x, np.zeros((len(ids), self.dimension), dtype=np.float32)
            x[rows] = kept
        return x

    def _attention(self, qkv: np.ndarray, runs: Sequence[tuple[int, int, int]]) -> np.ndarray:
        """Self-attention's output from joined queries, keys and values; ``runs`` as :func:`_equal_runs`."""
        heads, size = self.heads, self.dimension // self.heads
        scale = np.float32(1.0 / np.sqrt(size))
        context = np.empty((len(qkv), self.dimension), dtype=np.float32)
        for first, strings, tokens in runs:
            end = first + strings * tokens
            q, k, v = qkv[first:end].reshape(strings, tokens, 3, heads, size).transpose(2, 0, 3, 1, 4)
            scores = _fixed_product(q, k.transpose(0, 1, 3, 2))
            scores *= scale
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            weighted = _fixed_product(scores, v)
            context[first:end] = weighted.transpose(0, 2, 1, 3).reshape(end - first, self.dimension)
        return context


def _fixed_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in float32, exact on :func:`fixed_point` rows of ``a`` and columns of ``b``."""
    a_integers, a_scale = fixed_point(a, axis=-1)
    b_integers, b_scale = fixed_point(b, axis=-2)
    out = exact_product(a_integers, b_integers, _kernel)
    out *= a_scale
    out *= b_scale
    return out.astype(np.float32)


def _product(
    x: np.ndarray, layer: dict[str, np.ndarray], name: str, residual: Optional[np.ndarray] = None
) -> np.ndarray:
    """``x @ w + bias (+ residual)`` for the layer's matrix ``name``, each row's result depending on that row alone."""
    integers, scale = fixed_point(x, axis=-1)
    out = exact_product(integers, layer[name].astype(np.float64), _kernel)
    out *= scale
    out *= layer[name + "_scale"]
    result = out.astype(np.float32)
    result += layer[name + "_bias"]
    if residual is not None:
        result += residual
    return result


def _kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product that sums each block of an :func:`exact_product` (tests put a kernel of their own here)."""
    return np.matmul(a, b)


def _equal_runs(lengths: Sequence[int]) -> list[tuple[int, int, int]]:
    """``(first token, strings, tokens each)`` for each run of consecutive strings of one length.

    >>> _equal_runs([3, 3, 5, 3])
    [(0, 2, 3), (6, 1, 5), (11, 1, 3)]
    """
    runs: list[tuple[int, int, int]] = []
    first = 0
    for length in lengths:
        if runs and runs[-1][2] == length:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1, length)
        else:
            runs.append((first, 1, length))
        first += length
    return runs


_ERF_P = np.float32(0.3275911)
_ERF_POLYNOMIAL = tuple(np.float32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def gelu(x: np.ndarray) -> np.ndarray:
    """``x * 0.5 * (1 + erf(x / sqrt(2)))`` (BERT's exact GELU) in float32, written into ``x``.

    ``erf`` is Abramowitz and Stegun's 7.1.26 in float32: half the cost of ``scipy.special.erf``
    (float64, a fifth of the encoder's time); within 4.7e-7 of the exact GELU on ``[-8, 8]``
    (scipy: 4.5e-7, torch: 1.2e-6). Blocks of :data:`GELU_BLOCK` stay in cache and change no bit.

    >>> gelu(np.array([-3.0, -0.5, 0.0, 0.5, 3.0], dtype=np.float32)).astype(float).round(5).tolist()
    [-0.00405, -0.15427, 0.0, 0.34573, 2.99595]
    """
    if x.size <= GELU_BLOCK or not x.flags.c_contiguous:
        _gelu_block(x)
        return x
    flat = x.reshape(-1)  # a view: x is written through it
    for first in range(0, len(flat), GELU_BLOCK):
        _gelu_block(flat[first : first + GELU_BLOCK])
    return x


GELU_BLOCK = 1 << 15
"""Numbers :func:`gelu` computes together: 128 KB a pass, which the processor's second-level cache holds."""


def _gelu_block(x: np.ndarray) -> None:
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


def blas_threads(count: Optional[int]) -> contextlib.AbstractContextManager[Any]:
    """A context that runs BLAS on ``count`` threads (None: as it is), where ``threadpoolctl`` is installed.

    Answers' products are small: several BLAS threads spinning cost more CPU than they save.

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


BATCH_TOKENS = 1024
"""Tokens the numpy runtime encodes together (:func:`encode_token_batches`): a product of a few
hundred rows runs BLAS at about twice the rate of one of a few dozen."""


def encode_token_batches(
    network: NumpyTransformer,
    encodings: Sequence[Any],
    pool: Callable[[np.ndarray, list[int]], np.ndarray],
    read: Optional[Sequence[np.ndarray]] = None,
    batch_tokens: int = BATCH_TOKENS,
) -> np.ndarray:
    """``pool(hidden, rows)`` over tokenized strings, batched by a token budget, stacked in input order.

    ``pool`` gets each run of one length as ``(strings, tokens, dimension)`` and their positions in
    ``encodings``; ``read`` (one boolean array per encoding) marks the tokens ``pool`` reads.
    """
    order = sorted(range(len(encodings)), key=lambda i: (len(encodings[i].ids), i))
    pooled: list[np.ndarray] = [np.zeros(0)] * len(encodings)
    start = 0
    while start < len(order):
        end, tokens = start, 0
        while end < len(order) and (end == start or tokens + len(encodings[order[end]].ids) <= batch_tokens):
            tokens += len(encodings[order[end]].ids)
            end += 1
        rows = order[start:end]
        lengths = [len(encodings[i].ids) for i in rows]
        ids = np.fromiter((t for i in rows for t in encodings[i].ids), dtype=np.int64, count=tokens)
        keep = None if read is None else np.concatenate([np.asarray(read[i], dtype=bool) for i in rows])
        hidden = network.packed_hidden_state(ids, lengths, keep)
        taken = 0
        for first, strings, length in _equal_runs(lengths):
            run = rows[taken : taken + strings]
            block = hidden[first : first + strings * length].reshape(strings, length, -1)
            for i, vector in zip(run, pool(block, run), strict=True):
                pooled[i] = vector
            taken += strings
        start = end
    return np.stack(pooled) if pooled else np.zeros((0, network.dimension))


@lru_cache(maxsize=2)
def load_numpy_transformer(path: str) -> NumpyTransformer:
    """The :class:`NumpyTransformer` of a model folder, loaded once per process.

    >>> load_numpy_transformer("/models/all-MiniLM-L6-v2").dimension  # doctest: +SKIP
    384
    """
    return NumpyTransformer(path)
