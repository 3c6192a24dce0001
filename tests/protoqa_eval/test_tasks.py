"""The Inspect AI tasks under the distribution's name, found through the ``inspect_ai`` entry point.

The slow tests install a wheel of this checkout into a fresh virtual environment that borrows the
test environment's libraries (a ``.pth`` line, without its editable install of the project) and
run ``inspect`` from a folder outside the checkout, as a user would after ``pip install``.
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support.lazy import require

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "protoqa" / "dev.crowdsourced.jsonl").is_file(), reason=f"shared ProtoQA data not found under {DATA}"
)


def test_the_entry_point_names_this_module_under_the_distribution_name():
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf-8")
    declared = dict(
        line.split("=", 1) for line in config["options.entry_points"]["inspect_ai"].strip().splitlines() if line
    )
    assert {name.strip(): value.strip() for name, value in declared.items()} == {"protoqa_eval": "protoqa_eval.tasks"}


def test_the_tasks_take_the_task_files_arguments():
    require("inspect_ai")
    from protoqa_eval.tasks import cfc, protoqa

    built = protoqa(samples=3, prompt="chat", data_dir=str(DATA))
    assert built.metadata["samples"] == 3 and built.metadata["prompt"] == "chat"
    assert cfc(data_dir=str(DATA)).metadata["samples"] == 100


@pytest.mark.slow
@needs_data
def test_an_evaluation_with_the_mock_model_scores_every_question(tmp_path):
    require("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from protoqa_eval import cfc

    outputs = [ModelOutput.from_content("mockllm/model", text) for text in [" the farm.", " a barn", "\nnothing"] * 2]
    for output in outputs:  # else the mock model counts tokens with tiktoken, which downloads its encoding
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model("mockllm/model", custom_outputs=outputs)
    logs = inspect_eval(cfc(samples=3, data_dir=str(DATA)), model=model, limit=2, log_dir=str(tmp_path), display="none")
    assert logs[0].status == "success" and logs[0].results is not None, logs[0].error
    assert [score.name for score in logs[0].results.scores][:2] == ["KL", "wn_ans@1"]
    assert logs[0].results.completed_samples == 2


@pytest.fixture(scope="module")
def installed(project_wheel, tmp_path_factory) -> Path:
    """A fresh environment's interpreter with the project's wheel installed (the libraries borrowed)."""
    require("inspect_ai")
    with zipfile.ZipFile(project_wheel) as archive:
        points = next(name for name in archive.namelist() if name.endswith("entry_points.txt"))
        assert "[inspect_ai]\nprotoqa_eval = protoqa_eval.tasks" in archive.read(points).decode()
    env_dir = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=300)
    python = env_dir / "bin" / "python"
    # Installed before the environment borrows the test environment's libraries, and without this checkout on
    # the path: pip would take the project's editable install there for the wheel, installed already.
    clean = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(project_wheel)],
        env=clean,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        env=clean,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert (Path(site) / "protoqa_eval" / "tasks.py").is_file()
    # The borrowed libraries come after the environment's own site-packages, where the wheel went.
    (Path(site) / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python


def _user_env(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PROTOQA_DATA_DIR")}
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf-home"),
        PROTOQA_CACHE_DIR=str(tmp_path / "protoqa-cache"),
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


@pytest.mark.slow
@needs_data
def test_inspect_eval_finds_the_task_by_name_from_any_folder(installed, tmp_path):
    from tests.support.tiny_lm import build_tiny_gpt2

    build_tiny_gpt2(tmp_path / "tiny-gpt2", ["one thing people bring to a picnic is food", "a dog", "the sun"] * 20)
    env = _user_env(tmp_path)
    config = subprocess.run(
        [str(installed), "-m", "protoqa_integrations.harnesses.inspect_tasks", "model-config"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert not config.startswith(str(REPO))
    command = [
        str(installed),
        "-m",
        "inspect_ai",
        "eval",
        "protoqa_eval/protoqa",
        "--model",
        "hf/./tiny-gpt2",
        "--model-config",
        config,
        "-T",
        "samples=4",
        "-T",
        f"data_dir={DATA}",
        "--limit",
        "1",
        "--log-dir",
        "logs",
        "--log-format",
        "json",
        "--display",
        "plain",
    ]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    log = json.loads(next((tmp_path / "logs").glob("*.json")).read_text())
    assert log["status"] == "success" and log["eval"]["task"] == "protoqa_eval/protoqa"
    assert log["eval"]["metadata"]["protoqa-eval"] and log["eval"]["metadata"]["signatures"]["KL"]
    scores = {score["name"]: score["metrics"] for score in log["results"]["scores"]}
    assert list(scores)[0] == "KL" and set(scores["KL"]) == {"mean", "stderr"}
    assert "×" in log["samples"][0]["scores"]["protoqa_scores"]["explanation"]


@pytest.mark.slow
def test_a_relative_data_dir_is_one_line(installed, tmp_path):
    env = _user_env(tmp_path)
    command = [str(installed), "-m", "inspect_ai", "eval", "protoqa_eval/cfc", "--model", "mockllm/model"]
    result = subprocess.run(
        [*command, "-T", "data_dir=data", "--display", "plain"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode != 0
    said = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert "Traceback" not in result.stderr and any("is a relative path" in line for line in said), said
    # one message, which Inspect wraps at the terminal's width
    assert len(said) <= 2 and said[-1].endswith('"$PWD/data"'), said


@pytest.mark.slow
def test_inspect_list_tasks_lists_the_installed_tasks_from_any_folder(installed, tmp_path):
    # Inspect lists the task files of folders given by relative path: python -m protoqa_eval prints one
    env = _user_env(tmp_path)
    folder = subprocess.run(
        [str(installed), "-m", "protoqa_eval"], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert not Path(folder).is_absolute() and (tmp_path / folder / "tasks.py").is_file()
    assert not (tmp_path / folder).resolve().is_relative_to(REPO)
    listed = subprocess.run(
        [str(installed), "-m", "inspect_ai", "list", "tasks", folder],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert listed.stdout.split() == [f"{folder}/tasks.py@cfc", f"{folder}/tasks.py@protoqa"]
    stray = subprocess.run(
        [str(installed), "-m", "protoqa_eval", "x"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert stray.returncode == 2 and stray.stderr.startswith("usage:") and "Traceback" not in stray.stderr
