"""The lm-eval tasks on a tiny GPT-2: lm-eval's own ``hf`` backend runs the task offline;
``generate``, the Trainer callback and lm-eval give the same answers and scores; and ``convert`` and
``leaderboard`` read lm-eval's logged samples as the harness scored them.

The lm-evaluation-harness runs need ``lm_eval``; when this interpreter cannot import it,
``$LM_EVAL_PYTHON`` may name one that can (with this checkout on its ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.generation_commands import generate_cmd
from tests.support.lazy import lazy_import, require
from tests.support.paths import DATA, needs_data

torch = lazy_import("torch")
transformers = lazy_import("transformers")
require("datasets")

from protoqa_core.ranking import rank_by_frequency  # noqa: E402
from protoqa_integrations.generation.answers_file import score_generated  # noqa: E402
from protoqa_integrations.generation.prompts import question_to_prompt  # noqa: E402
from protoqa_integrations.harnesses.metric_names import METRIC_NAMES, SCORE_NAMES  # noqa: E402
from tests.support.harnesses import (  # noqa: E402
    check_convert_and_leaderboard,
    lm_eval_or_skip,
    lm_eval_python,
    logged_protoqa_12,
)
from tests.support.offline import offline_env  # noqa: E402

EQUAL_SETTINGS = {"num_samples": 12, "batch_size": 8, "seed": 7}

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def run(args, cwd, env, timeout=900):
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return result


@pytest.fixture(scope="module")
def logged_run(dev3_gpt2, tmp_path_factory):
    """The folder of results and logged samples of the lm-eval task through the ``protoqa-hf`` backend
    (``logged_protoqa_12``, 8 samples per forward pass, as ``generate --batch-size 8``), run once for the
    module's checks of it; ``None`` where no interpreter imports lm_eval (those checks skip, saying so)."""
    python = lm_eval_python()
    if python is None:
        return None
    folder = tmp_path_factory.mktemp("lm-eval")
    command, out = logged_protoqa_12(python, dev3_gpt2, 8, folder, DATA)
    result = run(command, folder, offline_env())
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_the_leaderboard_file_variable_counts_as_unset_when_blank(monkeypatch, tmp_path):
    from protoqa_integrations.harnesses.lm_eval_tasks.harness import LEADERBOARD_ENV, write_leaderboard

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(LEADERBOARD_ENV, " ")
    assert write_leaderboard([("t1", ["dog"]), ("t2", [])]) == 0.5
    assert [p.name for p in tmp_path.iterdir()] == ["protoqa_test.leaderboard.jsonl"]
    monkeypatch.setenv(LEADERBOARD_ENV, f" {tmp_path / 'board.jsonl'} ")
    write_leaderboard([("t1", ["dog"])])
    assert (tmp_path / "board.jsonl").read_text() == '{"t1": ["dog"]}\n'


@pytest.mark.slow
@needs_data
def test_generate_callback_and_lm_eval_give_the_same_answers_and_scores(
    dev3_gpt2, dev3_model, dev3, tmp_path, logged_run
):
    from protoqa_integrations.training.hooks import ProtoQAEvalCallback
    from protoqa_integrations.training.samples import metric_key

    env = offline_env()
    # 1. protoqa-eval generate + score-generated
    answers = tmp_path / "answers.json"
    result = run(
        generate_cmd(dev3_gpt2, answers, "--limit", "3", "--num-samples", "12", "--batch-size", "8", "--seed", "7"),
        tmp_path,
        env,
    )
    assert result.returncode == 0, result.stderr
    generated = json.loads(answers.read_text())["model_answers"]
    scores = score_generated(str(answers), dev3)

    # 2. the Trainer callback
    model, tokenizer = dev3_model
    callback = ProtoQAEvalCallback(
        dev3,
        tokenizer,
        similarity=["wordnet", "exact_match"],
        probeval=True,
        prompt_fn=question_to_prompt,
        **EQUAL_SETTINGS,
    )
    logged = callback.evaluate_model(model, tokenizer)
    assert callback.last_samples == generated
    assert any(rank_by_frequency(s) for s in generated.values())
    for sim in ("wordnet", "exact_match"):
        for metric, value in scores.protoqa[sim].scores.items():
            assert logged[metric_key(sim, metric)] == value
    assert logged["probeval_kl"] == scores.probeval.kl

    # 3. the lm-eval task, through the protoqa-hf backend
    lm_eval_or_skip()
    out = logged_run
    results_file = next(out.rglob("results_*.json"))
    harness = json.loads(results_file.read_text())["results"]["protoqa_12"]
    # lm-eval's mean adds the questions' scores left to right, the project's with math.fsum
    for sim in ("wordnet", "exact_match"):
        for metric, value in scores.protoqa[sim].scores.items():
            assert harness[f"{SCORE_NAMES[f'{sim}_{metric}']},answers"] == pytest.approx(value, rel=1e-12, abs=1e-15)
    assert harness["KL,answers"] == pytest.approx(scores.probeval.kl, rel=1e-12)
    samples_file = next(out.rglob("samples_protoqa_12_*.jsonl"))
    logged_samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    assert {s["doc"]["id"]: s["filtered_resps"][0] for s in logged_samples} == generated


@pytest.mark.slow
@needs_data
def test_lm_eval_log_samples_are_ranked_as_the_harness_scored_them(tmp_path, dev3_gpt2, logged_run):
    lm_eval_or_skip()
    reported = json.loads(next(logged_run.rglob("results_*.json")).read_text())["results"]["protoqa_12"]
    samples = next(logged_run.rglob("samples_protoqa_12_*.jsonl"))
    dev = DATA / "protoqa" / "dev.crowdsourced.jsonl"
    document, _ = check_convert_and_leaderboard(samples, dev, reported, ",answers", tmp_path)
    generation = document["generation"]
    assert generation["harness"] == "lm-eval" and generation["task"] == "protoqa_12"
    assert (generation["dataset"], generation["split"]) == ("protoqa", "validation")
    assert generation["sampling"]["temperature"] == 0.69 and generation["sampling"]["top_p"] == 0.9
    assert generation["num_samples"] == 12 and generation["model"] == str(dev3_gpt2)
    assert generation["backend"] == "protoqa-hf" and generation["model_args"]["seed"] == 7
    assert all(len(v) == 12 for v in document["model_answers"].values())


@pytest.mark.slow
@needs_data
def test_lm_eval_hf_backend_runs_the_task_offline_and_prints_scores(dev3_gpt2, tmp_path):
    python = lm_eval_or_skip()
    from protoqa_integrations.harnesses.lm_eval_tasks import tasks_path

    path = run([sys.executable, "-m", "protoqa_integrations.harnesses.lm_eval_tasks"], tmp_path, offline_env())
    assert path.stdout.strip() == tasks_path()
    result = run(
        [
            python,
            "-m",
            "lm_eval",
            "--model",
            "hf",
            "--model_args",
            f"pretrained={dev3_gpt2}",
            "--tasks",
            "protoqa",
            "--include_path",
            tasks_path(),
            "--limit",
            "3",
            "--batch_size",
            "100",
            "--device",
            "cpu",
            "--output_path",
            str(tmp_path / "out"),
        ],
        tmp_path,
        offline_env(PROTOQA_DATA_DIR=str(DATA)),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # lm-eval's table sorts a task's metrics by name: the upper-case KL heads it; every row fits 80 columns
    rows = [line for line in result.stdout.splitlines() if line.startswith("|") and "answers" in line]
    assert [row.split("|")[5].strip() for row in rows][:2] == ["KL", "collapsed"], rows
    assert {row.split("|")[5].strip() for row in rows} == set(METRIC_NAMES)
    assert all(len(row) <= 80 for row in rows), rows
    # every score has its standard error (lm-eval's mean_stderr) and its signature in the results file
    saved = json.loads(next((tmp_path / "out").rglob("results_*.json")).read_text())
    scores, signatures = saved["results"]["protoqa"], saved["configs"]["protoqa"]["metadata"]["signatures"]
    names = [key.split(",")[0] for key in scores if key.endswith(",answers") and "_stderr" not in key]
    assert len(names) == 16 and set(names) == set(METRIC_NAMES)
    for name in names:
        if name != "collapsed":
            assert isinstance(scores[f"{name}_stderr,answers"], float), name
            assert signatures[name].endswith("|version:" + signatures["protoqa-eval"]), name
    assert signatures["KL"].startswith("clustering:human")
