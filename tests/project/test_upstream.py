"""The contributions in upstream/ pass the checks of the projects they are for, where those can run here.

upstream/ holds what lm-evaluation-harness, lighteval and inspect_evals ask a new evaluation to be:
an lm-eval task folder, a lighteval task module and inspect_evals register entries. The checks that
need the other project run when it is at hand: ``$LM_EVAL_CHECKOUT`` names a checkout of
lm-evaluation-harness (its own task tests and one evaluation on a tiny model run in a copy of it,
with the folder dropped in), ``$LIGHTEVAL_CHECKOUT`` one of lighteval (ruff under its
configuration, and its registry's loader of built-in task files, run by an interpreter that
imports lighteval), and ``$INSPECT_EVALS_PYTHON`` an interpreter with the ``inspect-evals`` and
``inspect-evals-lint`` packages (the register entries validated by inspect_evals' own metadata
model, the tasks linted by inspect-evals-lint). Without them those tests skip, saying which
variable to set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from protoqa_core.citations import PROBEVAL_CITATION, PROTOQA_CITATION
from tests.support.harnesses import lighteval_python
from tests.support.offline import offline_env
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
TASK_FOLDER = REPO / "upstream" / "lm-evaluation-harness" / "lm_eval" / "tasks" / "protoqa"
PACKAGE_TASKS = REPO / "protoqa_integrations" / "harnesses" / "lm_eval_tasks"
REGISTER_ENTRY = REPO / "upstream" / "inspect_evals" / "register_entry.py"
LIGHTEVAL_MODULE = REPO / "upstream" / "lighteval" / "src" / "lighteval" / "tasks" / "tasks" / "protoqa.py"
needs_data = pytest.mark.skipif(
    not (DATA / "protoqa" / "dev.crowdsourced.jsonl").is_file(), reason=f"shared ProtoQA data not found under {DATA}"
)


def _register_entry_module():
    spec = importlib.util.spec_from_file_location("register_entry", REGISTER_ENTRY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _checkout(variable: str) -> Path:
    value = os.environ.get(variable, "").strip()
    if not value:
        pytest.skip(f"set ${variable} to run this check")
    path = Path(value)
    if not path.is_dir():
        pytest.fail(f"${variable} names {value}, which is not a folder")
    return path


def test_the_task_files_are_the_packages_own():
    # The folder is the package's tasks as lm-eval would ship them: the same files, so that they cannot drift.
    for path in sorted(TASK_FOLDER.iterdir()):
        if path.name != "README.md":
            assert path.read_bytes() == (PACKAGE_TASKS / path.name).read_bytes(), path.name
    assert {p.name for p in TASK_FOLDER.glob("*.yaml")} == {
        "protoqa.yaml",
        "cfc.yaml",
        "cfc_test.yaml",
        "protoqa_chat.yaml",
        "cfc_chat.yaml",
    }


def test_the_task_files_pass_the_checks_lm_evals_hooks_give_task_folders():
    # check-yaml --unsafe (the YAML parses; its !function tags are not constructed), end-of-file-fixer and
    # trailing-whitespace: the hooks of lm-eval's pre-commit configuration that do not skip lm_eval/tasks/
    import yaml

    for path in sorted(TASK_FOLDER.iterdir()):
        text = path.read_text(encoding="utf-8")
        if path.name.endswith("yaml"):
            yaml.compose(text)
        assert text.endswith("\n") and not text.endswith("\n\n"), path.name
        assert not [line for line in text.splitlines() if line != line.rstrip()], path.name


def test_the_task_readme_has_the_papers_citations_and_a_filled_checklist():
    readme = (TASK_FOLDER / "README.md").read_text(encoding="utf-8")
    for heading in ("## Paper", "### Citation", "### Groups, Tags, and Tasks", "### Checklist", "### Changelog"):
        assert heading in readme, heading
    assert PROTOQA_CITATION.strip() in readme and PROBEVAL_CITATION.strip() in readme
    assert "[ ]" not in readme


def test_the_register_entries_name_the_task_file_and_the_commit(tmp_path):
    module = _register_entry_module()
    written = module.write_entries(tmp_path, "https://github.com/someone/protoqa-eval", "a" * 40, [])
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        "register/protoqa/eval.yaml",
        "register/cfc/eval.yaml",
    ]
    for name, entry in module.ENTRIES.items():
        (task,) = entry["tasks"]
        assert task["name"] == name and (REPO / task["task_path"]).is_file()
        assert "\n" not in entry["description"]
    assert module.main(["http://example.org/x"]) == 2


@pytest.mark.slow
@needs_data
def test_lm_eval_own_task_tests_and_a_tiny_run_in_a_checkout(tmp_path, dev3_gpt2):
    checkout = _checkout("LM_EVAL_CHECKOUT")
    copy = tmp_path / "lm-evaluation-harness"
    cloned = subprocess.run(
        ["git", "clone", "-q", "--shared", str(checkout), str(copy)], capture_output=True, text=True
    )
    assert cloned.returncode == 0, cloned.stderr
    shutil.copytree(REPO / "upstream" / "lm-evaluation-harness", copy, dirs_exist_ok=True)
    # lm-eval's CI lists the changed task files here; its task tests then run those tasks
    changed = copy / ".github" / "outputs" / "tasks_all_changed_and_modified_files.txt"
    changed.parent.mkdir(parents=True, exist_ok=True)
    changed.write_text(" ".join(f"lm_eval/tasks/protoqa/{p.name}" for p in sorted(TASK_FOLDER.glob("*.yaml"))))
    env = offline_env(PROTOQA_DATA_DIR=str(DATA))
    env["PYTHONPATH"] = os.pathsep.join([str(copy), env["PYTHONPATH"]])
    tests = run_python(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_tasks.py", "-k", "TestNewTasks"],
        copy,
        env,
        timeout=1200,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "65 passed" in tests.stdout, tests.stdout[-500:]
    run = run_python(
        ["-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={dev3_gpt2}"]
        + ["--tasks", "protoqa", "--limit", "2", "--batch_size", "100", "--device", "cpu"]
        + ["--output_path", str(tmp_path / "out")],
        copy,
        env,
        timeout=1200,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = next((tmp_path / "out").rglob("results_*.json"))
    saved = json.loads(results.read_text())
    assert saved["results"]["protoqa"]["KL_stderr,answers"] != "N/A"
    assert saved["configs"]["protoqa"]["metadata"]["signatures"]["KL"].startswith("clustering:human")


def test_the_lighteval_module_opens_with_the_header_lighteval_asks_for():
    header = LIGHTEVAL_MODULE.read_text(encoding="utf-8").split('"""')[1]
    fields = [line[:-1] for line in header.splitlines() if line.endswith(":") and " " not in line]
    assert fields == ["name", "dataset", "abstract", "languages", "tags", "paper"]
    assert "TASKS_TABLE = " in LIGHTEVAL_MODULE.read_text(encoding="utf-8")


LOAD_BUILT_IN = """
from pathlib import Path
from lighteval.tasks.registry import Registry
configs = Registry._load_from_files([Path("src/lighteval/tasks/tasks/protoqa.py")], "lighteval.tasks.tasks")
print(sorted((name, config.metrics[0].sample_level_fn.num_samples()) for name, config in configs.items()))
"""


@pytest.mark.slow
@needs_data
def test_lighteval_own_ruff_settings_and_registry_loader_take_the_module(tmp_path):
    checkout = _checkout("LIGHTEVAL_CHECKOUT")
    python = lighteval_python()
    if python is None:
        pytest.skip("no interpreter imports lighteval: set $LIGHTEVAL_PYTHON")
    copy = tmp_path / "lighteval"
    cloned = subprocess.run(
        ["git", "clone", "-q", "--shared", str(checkout), str(copy)], capture_output=True, text=True
    )
    assert cloned.returncode == 0, cloned.stderr
    shutil.copytree(REPO / "upstream" / "lighteval", copy, dirs_exist_ok=True)
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None
    target = "src/lighteval/tasks/tasks/protoqa.py"
    for args in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [ruff, *args, "--config", "pyproject.toml", target], cwd=copy, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
    env = offline_env(PROTOQA_DATA_DIR=str(DATA), PROTOQA_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(copy / "src"), env["PYTHONPATH"]])
    loaded = subprocess.run(
        [python, "-c", LOAD_BUILT_IN], cwd=copy, env=env, capture_output=True, text=True, timeout=600
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert loaded.stdout.strip().splitlines()[-1] == "[('cfc', 100), ('protoqa', 300)]"


def _inspect_evals_python() -> str:
    value = os.environ.get("INSPECT_EVALS_PYTHON", "").strip()
    if not value:
        pytest.skip("set $INSPECT_EVALS_PYTHON to an interpreter with inspect-evals and inspect-evals-lint")
    return value


VALIDATE = """
import sys
from pathlib import Path
from inspect_evals.metadata import _load_single_eval_yaml, _metadata_from_entry
for path in sorted(Path(sys.argv[1]).glob("register/*/eval.yaml")):
    entry = _metadata_from_entry(_load_single_eval_yaml(path))
    print(type(entry).__name__, entry.id, entry.tasks[0].name, entry.tasks[0].task_path)
"""


@pytest.mark.slow
def test_inspect_evals_takes_the_register_entries_and_its_linter_passes_the_tasks(tmp_path):
    python = _inspect_evals_python()
    written = subprocess.run(
        [sys.executable, str(REGISTER_ENTRY), "https://github.com/someone/protoqa-eval", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert written.returncode == 0, written.stderr
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    validated = subprocess.run(
        [python, "-c", VALIDATE, str(tmp_path)], capture_output=True, text=True, env=env, timeout=300
    )
    assert validated.returncode == 0, validated.stderr[-3000:]
    assert validated.stdout.split("\n")[:2] == [
        "ExternalEvalMetadata cfc cfc protoqa_eval/tasks.py",
        "ExternalEvalMetadata protoqa protoqa protoqa_eval/tasks.py",
    ]
    linted = subprocess.run(
        [python, "-m", "inspect_evals_lint", "--task", "protoqa_eval/tasks.py", "--root", str(REPO)]
        + ["--output-format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    report = json.loads(linted.stdout)
    failed = [d for p in report["packages"] for d in p["diagnostics"] if d["status"] == "fail"]
    assert linted.returncode == 0 and report["passed"], failed
