"""Shared fixtures: where the read-only copies of the public data live; one torch thread; the Hub switched off;
the project's wheel; the tiny fitted GPT-2s and the tiny RoBERTa that several modules run, and the questions and
the dataset export that several modules read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# A test sees what its inputs give, never an entry an earlier run left in the user's cache of
# automatic clusters and encodings; the tests of those caches turn them on in a folder of their
# own (``user_cache``). Commands the tests start inherit this.
os.environ.setdefault("PROTOQA_NO_CACHE", "1")


@pytest.fixture
def user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The caches of automatic clusters and encodings turned on, in a folder of this test's own."""
    folder = tmp_path / "protoqa-cache"
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(folder))
    monkeypatch.setenv("PROTOQA_NO_CACHE", "0")
    return folder


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` next to the checkout; tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not available")
    return SHARED_DATA


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run much faster on one thread than on two contended CPU cores.

    Modules that run a model use it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def hub_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The Hub switched off and ``evaluate``'s module cache in ``tmp_path``, for one test.

    Modules that load an ``evaluate`` module use it with
    ``pytestmark = pytest.mark.usefixtures("hub_offline")``.
    """
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))


@pytest.fixture(scope="session")
def project_wheel(tmp_path_factory) -> Path:
    """The project's wheel, built once per run from the checkout's files (tracked or not ignored).

    Built from a copy so that the checkout gets no build/ or egg-info folders; the tests that
    install the project as users do (the Hub folders' Space, the extras under pip 23.2) share it.
    """
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    files = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, files.split("\0")):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((REPO / name).read_bytes())
    dist = root / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    return next(dist.glob("protoqa_eval-*.whl"))


@pytest.fixture(scope="session")
def fitted_gpt2(tmp_path_factory) -> Path:
    """The tiny GPT-2 fitted to ProtoQA dev answers that the harness tests run (``build_fitted_gpt2``), built once
    per run; tests copy it where they need it, as it costs seconds to fit."""
    from tests.support.tiny_lm import build_fitted_gpt2

    return build_fitted_gpt2(tmp_path_factory.mktemp("fitted") / "tiny-gpt2", SHARED_DATA)


@pytest.fixture(scope="session")
def tiny_roberta(tmp_path_factory) -> str:
    """The folder of a tiny random RoBERTa (``build_tiny_roberta``), built once per run for every
    module that runs the ``roberta`` similarity or the numpy encoder."""
    from tests.support.lazy import require
    from tests.support.tiny_roberta import build_tiny_roberta

    require("torch")
    require("transformers")
    require("tokenizers")
    return str(build_tiny_roberta(tmp_path_factory.mktemp("models") / "tiny-roberta"))


@pytest.fixture(scope="session")
def dev3_gpt2(tmp_path_factory) -> Path:
    """A tiny GPT-2 fitted for a moment on the statement prompts of 3 ProtoQA dev questions and their answers, knowing
    every dev prompt's tokens; built once per run for the modules that generate with it."""
    from protoqa_integrations.generation.prompts import question_to_prompt
    from protoqa_metric import read_targets
    from tests.support.tiny_lm import build_tiny_gpt2

    dev = SHARED_DATA / "protoqa" / "dev.crowdsourced.jsonl"
    if not dev.is_file():
        pytest.skip(f"shared ProtoQA data not found under {SHARED_DATA}")
    questions = list(read_targets(dev).values())
    lines = [f"{question_to_prompt(q.question)} {c.answers[0]}." for q in questions[:3] for c in q.clusters[:4]]
    texts = lines + [question_to_prompt(q.question) for q in questions]
    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), texts, fit_lines=lines, fit_steps=80)


@pytest.fixture(scope="session")
def dev3() -> list:
    """The first 3 questions of ProtoQA crowdsourced dev, those ``dev3_gpt2`` is fitted on."""
    from protoqa_metric import read_targets

    dev = SHARED_DATA / "protoqa" / "dev.crowdsourced.jsonl"
    if not dev.is_file():
        pytest.skip(f"shared ProtoQA data not found under {SHARED_DATA}")
    return list(read_targets(dev).values())[:3]


@pytest.fixture(scope="module")
def dev3_model(dev3_gpt2: Path) -> tuple:
    """``dev3_gpt2`` loaded, ``(model, tokenizer)``: once per module, as a module's tests may change them."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(dev3_gpt2), AutoTokenizer.from_pretrained(dev3_gpt2)


@pytest.fixture(scope="session")
def dataset_export(tmp_path_factory) -> Path:
    """The ``protoqa``, ``protoqa_scraped_dev`` and ``cfc`` configs of the shared data, exported once per run by
    ``python -m protoqa_dataset export`` (what is unavailable skipped) for the modules that read the rows back with
    stock ``load_dataset``; read-only for them."""
    import os

    if not (SHARED_DATA / "protoqa" / "dev.crowdsourced.jsonl").is_file():
        pytest.skip(f"shared ProtoQA data not found under {SHARED_DATA}")
    out = tmp_path_factory.mktemp("export") / "protoqa-export"
    configs = [word for config in ("protoqa", "protoqa_scraped_dev", "cfc") for word in ("--config", config)]
    done = run_python(
        ["-m", "protoqa_dataset", "export", str(out), "--data-dir", str(SHARED_DATA), *configs]
        + ["--skip-unavailable"],
        REPO,
        {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(REPO)},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out
