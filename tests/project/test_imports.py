"""Importing the packages and asking for help load no heavy library; each path loads only what it needs.

Each check runs in a new process, from a folder outside the checkout, and reads
``sys.modules`` at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
HEAVY = (
    "nltk",
    "scipy.stats",
    "sklearn",
    "pandas",
    "pyarrow",
    "torch",
    "transformers",
    "sentence_transformers",
    "datasets",
    "evaluate",
    "gradio",
)


def _loaded(tmp_path: Path, code: str) -> list[str]:
    """The heavy modules loaded by the end of ``code``, run in a new process in ``tmp_path``."""
    return sorted(_modules_after(tmp_path, code) & set(HEAVY))


def _help(module: str) -> str:
    return (
        f"import sys\nsys.argv = ['x', '--help']\nfrom {module} import main\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert stop.code in (0, None), stop.code\n"
    )


@pytest.mark.parametrize(
    "code",
    [
        "import protoqa_metric",
        "import cfc_probeval",
        "import protoqa_core.similarity, protoqa_core.text",
        _help("protoqa_integrations.cli"),
        _help("cfc_probeval.cli"),
    ],
    ids=["import protoqa_metric", "import cfc_probeval", "import the core", "protoqa-eval --help", "probeval --help"],
)
def test_nothing_heavy_is_imported(tmp_path, code):
    assert _loaded(tmp_path, code) == []


def test_a_wordnet_evaluation_loads_no_nltk(tmp_path, shared_data):
    pytest.importorskip("scipy")
    code = (
        "from protoqa_metric import ProtoQA, read_targets, read_predictions\n"
        f"q = read_targets({str(shared_data / 'protoqa' / 'dev.crowdsourced.jsonl')!r})\n"
        f"p = read_predictions({str(shared_data / 'protoqa' / 'dev.predictions.gpt2finetuned.json')!r})\n"
        "r = ProtoQA('wordnet').evaluate(q, p)\n"
        "assert 0.3 < r.scores['max_answers@10'] < 1, r.scores\n"
    )
    assert _loaded(tmp_path, code) == []


def test_probeval_on_human_clusters_loads_no_embedder(tmp_path, shared_data):
    cfc = shared_data / "cfc"
    code = (
        "import sys\nfrom cfc_probeval.cli import main\n"
        f"status = main([{str(cfc / 'dev.targets.jsonl')!r}, {str(cfc / 'dev.predictions.human.json')!r}, "
        "'--ignore-unknown', '--json'])\n"
        "assert status == 0, status\n"
    )
    loaded = _loaded(tmp_path, code)
    assert "torch" not in loaded and "sentence_transformers" not in loaded, loaded


def _modules_after(tmp_path: Path, code: str) -> set[str]:
    """Every module loaded by the end of ``code``, run in a new process in ``tmp_path``."""
    report = tmp_path / "modules.json"
    script = f"{code}\nimport json, sys\nopen({str(report)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), "HF_HUB_OFFLINE": "1"}
    done = run_python(["-c", script], tmp_path, env, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(json.loads(report.read_text()))


def _forbidden(modules: set[str], *roots: str) -> list[str]:
    return sorted(m for m in modules if any(m == r or m.startswith(r + ".") for r in roots))


ENGINES = "protoqa_integrations.generation.engines"


def test_protoqa_eval_help_imports_no_numpy_torch_httpx_nor_any_engine_or_similarity(tmp_path):
    loaded = _modules_after(tmp_path, _help("protoqa_integrations.cli"))
    assert _forbidden(loaded, "numpy", "torch", "httpx", "openai", ENGINES) == []
    # the similarities are listed by name and their flags read from roberta's light declaration alone
    light = (".registry", ".roberta_plugin")
    assert [m for m in loaded if m.startswith("protoqa_core.similarity.") and not m.endswith(light)] == []


def test_an_exact_match_run_imports_no_torch_httpx_engine_wordnet_nor_other_similarity(tmp_path, shared_data):
    protoqa = shared_data / "protoqa"
    code = (
        "import sys\nfrom protoqa_integrations.cli import main\n"
        f"status = main([{str(protoqa / 'dev.crowdsourced.jsonl')!r}, "
        f"{str(protoqa / 'dev.predictions.gpt2finetuned.json')!r}, '--similarity', 'exact_match', '--json'])\n"
        "assert status == 0, status\n"
    )
    loaded = _modules_after(tmp_path, code)
    assert _forbidden(loaded, "torch", "httpx", "openai", "tqdm", ENGINES, "protoqa_core.wordnet.lookup") == []
    similarity_modules = {m for m in loaded if m.startswith("protoqa_core.similarity.")}
    # The flags are read from the similarities' declared options; roberta's declaration loads no scorer.
    assert similarity_modules == {
        "protoqa_core.similarity.registry",
        "protoqa_core.similarity.roberta_plugin",
        "protoqa_core.similarity.exact",
        "protoqa_core.similarity.bounds",
    }


def test_a_wordnet_run_imports_the_wordnet_similarity_alone(tmp_path, shared_data):
    protoqa = shared_data / "protoqa"
    code = (
        "import sys\nfrom protoqa_integrations.cli import main\n"
        f"status = main([{str(protoqa / 'dev.crowdsourced.jsonl')!r}, "
        f"{str(protoqa / 'dev.predictions.gpt2finetuned.json')!r}, '--json'])\n"
        "assert status == 0, status\n"
    )
    loaded = _modules_after(tmp_path, code)
    assert _forbidden(loaded, "torch", "httpx", "openai", ENGINES, "nltk") == []
    # nor NLTK's reader, Wu-Palmer's tables, or logging (a run that finds its cache files logs nothing)
    wordnet = "protoqa_core.wordnet."
    assert _forbidden(loaded, "logging", wordnet + "nltk_reader", wordnet + "wu_palmer", wordnet + "walk_table") == []
    for other in ("roberta", "embedding", "gaussian_process", "wordnet_wup", "strings", "exact"):
        assert f"protoqa_core.similarity.{other}" not in loaded


def test_probeval_help_imports_no_sklearn_torch_nor_a_plugin_it_only_lists(tmp_path):
    loaded = _modules_after(tmp_path, _help("cfc_probeval.cli"))
    assert _forbidden(loaded, "sklearn", "scipy", "torch", "httpx", "nltk") == []
    # matchings and embedders are listed by name, and the clusterings' options read from their classes
    assert _forbidden(loaded, "cfc_probeval.matching", "cfc_probeval.embedders", "cfc_probeval.kmeans") == []
    assert _forbidden(loaded, "protoqa_core.similarity", "protoqa_core.wordnet") == []


def test_a_human_cluster_probeval_run_imports_no_sklearn_torch_nor_embedder(tmp_path, shared_data):
    cfc = shared_data / "cfc"
    code = (
        "import sys\nfrom cfc_probeval.cli import main\n"
        f"status = main([{str(cfc / 'dev.targets.jsonl')!r}, {str(cfc / 'dev.predictions.human.json')!r}, "
        "'--ignore-unknown', '--json', '--quiet'])\n"
        "assert status == 0, status\n"
    )
    loaded = _modules_after(tmp_path, code)
    assert _forbidden(loaded, "sklearn", "torch", "transformers", "sentence_transformers", "httpx") == []
    assert (
        _forbidden(loaded, "cfc_probeval.embedders", "cfc_probeval.kmeans", "protoqa_core.similarity.numpy_encoder")
        == []
    )


def test_every_module_whose_docstring_examples_are_slow_to_import_exists():
    import conftest

    for path in conftest._SLOW_TO_IMPORT:
        assert (REPO / path).is_file(), path


def test_exact_match_run_imports_no_scipy_optimize(shared_data, tmp_path):
    """A whole exact-match evaluation of dev, in a new process, never imports scipy.optimize."""
    code = (
        "import sys, json\n"
        "from protoqa_integrations.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('scipy'))))\n"
        "sys.exit(status)\n"
    )
    data = shared_data / "protoqa"
    done = subprocess.run(
        [sys.executable, "-c", code, str(data / "dev.crowdsourced.jsonl")]
        + [str(data / "dev.predictions.gpt2finetuned.json"), "--similarity", "exact_match", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not [m for m in json.loads(done.stdout.splitlines()[-1]) if m.startswith("scipy.optimize")]


@pytest.mark.slow
def test_collecting_the_fast_subset_imports_no_heavy_library_nor_an_optional_harness(tmp_path):
    """``pytest --collect-only -m "not slow and not browser"`` (what ``check.sh --fast`` collects) stays light.

    A test module that needs a heavy library imports it inside its tests (``tests/support/lazy.py``),
    and a module whose docstring examples need one is left out of that run (``conftest._SLOW_TO_IMPORT``).
    """
    report = tmp_path / "modules.json"
    code = (
        "import json, sys, pytest\n"
        "status = pytest.main(['-q', '--collect-only', '-p', 'no:cacheprovider', '-m', 'not slow and not browser'])\n"
        f"open({str(report)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
        "sys.exit(int(status))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    loaded = set(json.loads(report.read_text()))
    optional = ("inspect_ai", "lm_eval", "lighteval", "vllm", "openai", "huggingface_hub", "httpx")
    assert sorted(name for name in (*HEAVY, *optional) if name in loaded) == []
