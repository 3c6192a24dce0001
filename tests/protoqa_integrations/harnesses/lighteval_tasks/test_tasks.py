"""The lighteval custom tasks: a real ``lighteval accelerate`` run on a tiny local GPT-2, scored by us again.

lighteval runs in its own interpreter, found in this order: this one when it imports
lighteval, ``$LIGHTEVAL_PYTHON``, then the checkout's ``.venv-lighteval`` (built by
``bash scripts/setup.sh --test``; lighteval 0.13 needs older ``huggingface_hub``, ``nltk`` and
``xxhash`` than the main environment has). Without one the run is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from protoqa_integrations.harnesses.lighteval_tasks import tasks_file
from protoqa_integrations.harnesses.metric_names import METRIC_NAMES, SCORE_NAMES
from tests.support.harnesses import check_convert_and_leaderboard, lighteval_or_skip, sampling_copy
from tests.support.offline import isolated_env
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[4]
DATA = REPO.parent / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "protoqa" / "dev.crowdsourced.jsonl").is_file(), reason=f"shared ProtoQA data not found under {DATA}"
)


# ---------------------------------------------------------------- without lighteval


def test_custom_task_file_is_printed_and_a_stray_argument_is_one_line(tmp_path):
    env = isolated_env(tmp_path)
    printed = run_python(["-m", "protoqa_integrations.harnesses.lighteval_tasks"], tmp_path, env)
    assert printed.returncode == 0 and printed.stdout.strip() == tasks_file()
    assert Path(printed.stdout.strip()).is_file()
    wrong = run_python(["-m", "protoqa_integrations.harnesses.lighteval_tasks", "run"], tmp_path, env)
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1 and not wrong.stdout


@pytest.mark.parametrize(
    "name", ["protoqa_integrations.harnesses.lighteval_tasks", "protoqa_integrations.harnesses.lighteval_tasks.utils"]
)
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


# ---------------------------------------------------------------- a real lighteval run


@pytest.mark.slow
@needs_data
def test_task_module_docstring_examples_under_lighteval(tmp_path):
    python = lighteval_or_skip()
    script = (
        "import doctest, sys\n"
        "import protoqa_integrations.harnesses.lighteval_tasks.tasks as tasks\n"
        "result = doctest.testmod(tasks, optionflags=doctest.ELLIPSIS)\n"
        "print(result)\n"
        "sys.exit(1 if result.failed or not result.attempted else 0)\n"
    )
    result = subprocess.run(
        [python, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=isolated_env(tmp_path, PROTOQA_DATA_DIR=str(DATA)),
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "failed=0" in result.stdout


def read_details(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


@pytest.fixture(scope="module")
def lighteval_run(tmp_path_factory, fitted_gpt2) -> tuple[Path, subprocess.CompletedProcess]:
    """The documented commands, run once for this module's checks of what lighteval reports: a sampling copy of the
    tiny model (lighteval 0.13's transformers backend never sets do_sample and refuses several greedy samples), then
    ``lighteval accelerate`` on 3 questions of each task, saving its details; the folder they ran in and the run."""
    python = lighteval_or_skip()
    folder = tmp_path_factory.mktemp("lighteval")
    shutil.copytree(fitted_gpt2, folder / "tiny-gpt2")
    copied = sampling_copy(python, folder)
    assert copied.returncode == 0, copied.stderr[-3000:]
    custom_tasks = subprocess.run(
        [python, "-m", "protoqa_integrations.harnesses.lighteval_tasks"],
        cwd=folder,
        env=isolated_env(folder),
        capture_output=True,
        text=True,
    ).stdout.strip()
    command = [
        python,
        "-m",
        "lighteval",
        "accelerate",
        "model_name=./tiny-gpt2-sampling,device=cpu,batch_size=4,"
        "generation_parameters={temperature:0.69,top_p:0.9,top_k:0}",
        "protoqa|0,cfc|0",
        "--custom-tasks",
        custom_tasks,
        "--max-samples",
        "3",
        "--output-dir",
        str(folder / "lighteval-out"),
        "--save-details",
    ]
    # lighteval seeds random and numpy but not torch, so its samples, and whether any of them is a
    # right answer, change from run to run: torch is seeded at start-up (sitecustomize) for the same run each time.
    seeded = folder / "seeded"
    seeded.mkdir()
    (seeded / "sitecustomize.py").write_text("import torch\n\ntorch.manual_seed(1234)\n")
    env = isolated_env(folder, PROTOQA_DATA_DIR=str(DATA))
    env["PYTHONPATH"] = os.pathsep.join([str(seeded), env["PYTHONPATH"]])
    result = subprocess.run(
        command,
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return folder, result


@pytest.mark.slow
@needs_data
def test_lighteval_run_reports_the_scores_we_compute_for_its_answers(tmp_path, lighteval_run):
    python = lighteval_or_skip()
    from transformers import AutoTokenizer, GenerationConfig

    from protoqa_dataset.parsing import load_questions
    from protoqa_integrations.generation.answers_file import answers_document, score_generated
    from protoqa_integrations.generation.prompts import cfc_prompt, question_to_prompt
    from protoqa_integrations.generation.settings import CFC_NUM_SAMPLES, PROTOQA_NUM_SAMPLES, answer_from_text
    from protoqa_metric.metric_set import PAPER_METRICS

    folder, result = lighteval_run
    out = folder / "lighteval-out"
    assert not GenerationConfig.from_pretrained(folder / "tiny-gpt2").do_sample
    model = folder / "tiny-gpt2-sampling"
    assert GenerationConfig.from_pretrained(model).do_sample
    again = sampling_copy(python, folder)
    assert (
        again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1 and "not an empty folder" in again.stderr
    )
    log = result.stdout + result.stderr
    assert "probeval signature: clustering:human|embedder:none|matching:wordnet" in log
    assert "protoqa signature (wordnet): sim:wordnet|stop:match|metrics:paper|missing:zero|n:3" in log
    reported = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    tokenizer = AutoTokenizer.from_pretrained(model)

    expectations = {"protoqa": (question_to_prompt, PROTOQA_NUM_SAMPLES), "cfc": (cfc_prompt, CFC_NUM_SAMPLES)}
    answered, scored = 0, 0
    for task, (prompt_of, num_samples) in expectations.items():
        questions = {q.id: q for q in load_questions(task, "validation", str(DATA))[0]}
        details = read_details(next(out.rglob(f"details_{task}|0_*.parquet")))
        assert len(details) == 3
        samples = {}
        for detail in details:
            question = questions[detail["doc"]["specific"]["row"]["id"]]
            # every question's details name the settings of its scores
            signed = detail["doc"]["specific"]["signatures"]
            assert set(signed) == set(METRIC_NAMES) - {"collapsed"} and detail["doc"]["specific"]["protoqa-eval"]
            assert signed["KL"].startswith("clustering:human")
            # The prompt lighteval fed the model is ours, token for token.
            assert detail["doc"]["query"] == prompt_of(question.question)
            tokens = detail["model_response"]["input_tokens"]
            # lighteval pads on the left with the eos token when the tokenizer has no pad token.
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
            start = next(i for i, token in enumerate(tokens) if token != pad)
            assert tokenizer.decode(tokens[start:]) == prompt_of(question.question)
            texts = detail["model_response"]["text"]
            assert len(texts) == num_samples
            samples[question.id] = [answer_from_text(text) for text in texts]
        answered += sum(bool(answer) for answers in samples.values() for answer in answers)
        asked = [questions[qid] for qid in samples]
        answers_file = tmp_path / f"{task}.answers.json"
        answers_file.write_text(json.dumps(answers_document(asked, samples, {}, {"dataset": task})))
        ours = score_generated(str(answers_file), asked)
        theirs = reported[f"{task}|0"]
        for similarity in ("wordnet", "exact_match"):
            for metric in PAPER_METRICS:
                assert (
                    theirs[SCORE_NAMES[f"{similarity}_{metric.name}"]] == ours.protoqa[similarity].scores[metric.name]
                ), (
                    task,
                    similarity,
                    metric.name,
                )
        assert theirs["KL"] == ours.probeval.kl
        scored += sum(theirs[name] > 0 for name in METRIC_NAMES if name not in ("KL", "collapsed"))
    # The fitted model's samples hold real answers, so the comparison is not one of zeros.
    assert answered > 0 and scored > 0


@pytest.mark.slow
@needs_data
def test_lighteval_details_are_ranked_as_the_harness_scored_them(tmp_path, lighteval_run):
    # convert keeps the settings lighteval recorded; leaderboard reports the scores lighteval reported.
    out = lighteval_run[0] / "lighteval-out"
    reported = json.loads(next(out.rglob("results_*.json")).read_text())["results"]["cfc|0"]
    details = next(out.rglob("details_cfc|0_*.parquet"))
    document, _ = check_convert_and_leaderboard(details, DATA / "cfc" / "dev.targets.jsonl", reported, "", tmp_path)
    generation = document["generation"]
    assert generation["harness"] == "lighteval" and generation["task"] == "cfc"
    assert (generation["dataset"], generation["split"]) == ("cfc", "validation")
    assert generation["sampling"]["temperature"] == 0.69 and generation["sampling"]["top_p"] == 0.9
    assert generation["num_samples"] == 100 and len(document["model_answers"]) == 3
