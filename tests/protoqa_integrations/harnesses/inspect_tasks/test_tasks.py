"""The Inspect AI tasks: real ``inspect eval`` runs (a tiny local GPT-2 through the ``hf`` provider, and Inspect's
mock model), their logs read by ``convert`` and ``leaderboard``, the scores Inspect reports checked against ours.

Inspect runs with this interpreter (``inspect-ai`` is in the test environment, extra ``inspect``);
without it the tests that need it skip, saying so. The modules' docstring examples are collected
with the package's (``--doctest-modules``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_integrations.harnesses.harness_logs import read_inspect_log
from protoqa_integrations.harnesses.inspect_tasks import TASK_NAMES, model_config_file, tasks_file
from protoqa_integrations.harnesses.metric_names import SCORE_NAMES
from protoqa_integrations.harnesses.outputs import detect_format, read_harness_output
from tests.support.offline import isolated_env
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[4]
DATA = REPO.parent / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "protoqa" / "dev.crowdsourced.jsonl").is_file(), reason=f"shared ProtoQA data not found under {DATA}"
)
INSPECT = shutil.which("inspect", path=str(Path(sys.executable).parent))


def _inspect_ai():
    return pytest.importorskip("inspect_ai", reason="inspect-ai is not installed: pip install 'protoqa-eval[inspect]'")


def _task_scores(log_path: Path) -> dict[str, float]:
    """Inspect's own figures, as its log reports them: the mean of each score over the questions (by the other
    harnesses' names), each beside its standard error and its signature in the log."""
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(log_path), header_only=True)
    results = header.results
    assert results is not None
    full = {short: name for name, short in SCORE_NAMES.items()}
    assert [score.name for score in results.scores] == list(SCORE_NAMES.values())
    signatures = header.eval.metadata["signatures"]
    assert set(signatures) == set(SCORE_NAMES.values()) - {"collapsed"}
    assert signatures["KL"].startswith("clustering:human") and header.eval.metadata["protoqa-eval"]
    for score in results.scores:
        assert list(score.metrics) == ["mean", "stderr"] and len(score.name) <= 9
    return {full[score.name]: score.metrics["mean"].value for score in results.scores}


def _assert_inspect_equals_ours(log_path: Path, tmp_path: Path, *, env: dict[str, str]) -> dict[str, float]:
    """``protoqa-eval convert`` the log (a new process), score the answers file with ``score_generated`` and check
    each figure Inspect reported against ours (Inspect's mean() is numpy's, ours math.fsum's); returns Inspect's
    figures."""
    from protoqa_dataset.parsing import load_questions
    from protoqa_integrations.generation.answers_file import score_generated
    from protoqa_metric.metric_set import PAPER_METRICS

    answers = tmp_path / f"{log_path.stem}.answers.json"
    converted = run_python(
        ["-m", "protoqa_integrations", "convert", str(log_path), "-o", str(answers)], tmp_path, env, timeout=300
    )
    assert converted.returncode == 0, converted.stderr[-3000:]
    generation = json.loads(answers.read_text())["generation"]
    theirs = _task_scores(log_path)
    task = generation["task"]
    assert generation["harness"] == "inspect" and generation["dataset"] == task and generation["split"] == "validation"
    assert generation["sampling"]["temperature"] == 0.69 and generation["sampling"]["top_k"] == 0
    # the words of a generate file's signature: max_new_tokens:10|stop:newline,period, no raw newline
    from protoqa_core.signature import settings_signature
    from protoqa_integrations.generation.settings import SamplingConfig

    words = set(settings_signature(generation["sampling"]).split("|"))
    assert {"max_new_tokens:10", "stop:newline,period"} <= words <= set(SamplingConfig().signature().split("|"))
    questions = {q.id: q for q in load_questions(task, "validation", str(DATA))[0]}
    asked = [questions[qid] for qid in json.loads(answers.read_text())["model_answers"]]
    ours = score_generated(str(answers), asked)
    for similarity in ("wordnet", "exact_match"):
        for metric in PAPER_METRICS:
            name = f"{similarity}_{metric.name}"
            assert theirs[name] == pytest.approx(ours.protoqa[similarity].scores[metric.name], rel=1e-12, abs=1e-15)
    assert theirs["probeval_kl"] == pytest.approx(ours.probeval.kl, rel=1e-12)
    return theirs


# ---------------------------------------------------------------- without a model


def test_task_file_and_model_config_are_printed_and_a_stray_argument_is_one_line(tmp_path):
    env = isolated_env(tmp_path)
    command = [sys.executable, "-m", "protoqa_integrations.harnesses.inspect_tasks"]
    printed = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert printed.returncode == 0 and printed.stdout.strip() == tasks_file() and Path(tasks_file()).is_file()
    config = subprocess.run([*command, "model-config"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert config.returncode == 0 and config.stdout.strip() == model_config_file()
    wrong = subprocess.run([*command, "run"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1 and not wrong.stdout
    assert TASK_NAMES == ("protoqa", "cfc")


def test_model_config_renders_the_prompt_unchanged():
    import yaml

    from protoqa_integrations.generation.prompts import cfc_prompt
    from tests.support.tiny_lm import word_tokenizer

    template = yaml.safe_load(Path(model_config_file()).read_text())["chat_template"]
    prompt = cfc_prompt("a farmer with newly harvested crops. where are the farmers?")
    tokenizer = word_tokenizer([prompt])
    # What Inspect's hf provider does with a chat template: the user turn, with a generation prompt.
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], chat_template=template, tokenize=False, add_generation_prompt=True
    )
    assert rendered == prompt


def test_foreign_and_damaged_logs_are_one_line_errors(tmp_path, monkeypatch):
    _inspect_ai()
    foreign = tmp_path / "foreign.eval"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("hello.txt", "hi")
    # An archive whose first entry is not an Inspect log's is not taken for one, whatever its name.
    with pytest.raises(DataFormatError, match="zip-compressed; decompress it first"):
        detect_format(foreign)
    with pytest.raises(DataFormatError, match="foreign.eval: not a readable Inspect log"):
        read_harness_output(foreign, "inspect")
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(foreign.read_bytes()[:20])
    with pytest.raises(DataFormatError, match="damaged zip archive"):
        read_inspect_log(truncated)
    look_alike = tmp_path / "look-alike.json"
    look_alike.write_text(json.dumps({"version": 2, "eval": {"task": "protoqa", "model": "m"}}))
    assert detect_format(look_alike) == "inspect"
    with pytest.raises(DataFormatError, match="look-alike.json: not a readable Inspect log"):
        read_inspect_log(look_alike)
    # An entry that unpacks past the input cap is refused from the archive's directory, before unpacking.
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("samples/q_epoch_1.json", b"0" * 50_000)
    monkeypatch.setenv("PROTOQA_MAX_INPUT_MB", "0.01")
    assert bomb.stat().st_size < 0.01 * 2**20
    with pytest.raises(DataFormatError, match="unpacks to more than"):
        read_inspect_log(bomb)
    # Without inspect-ai (last: the module stays hidden until the test ends), a log is one line naming the extra.
    monkeypatch.delenv("PROTOQA_MAX_INPUT_MB")
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    real = tmp_path / "real.eval"
    with zipfile.ZipFile(real, "w") as archive:
        archive.writestr("header.json", "{}")
    with pytest.raises(DataFormatError, match=r"needs inspect-ai: pip install .*\[inspect\]'"):
        read_inspect_log(real)


# Inspect's own mock model, run in a new process (an evaluation sets up logging for the whole process):
# each run answers the texts given, in turn. Usage is given, as the mock model would otherwise count
# tokens with tiktoken, which downloads its encoding.
MOCK_RUNS = """
import json, sys
import inspect_ai
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from protoqa_integrations.harnesses.inspect_tasks.tasks import cfc, protoqa

def mock(texts):
    outputs = [ModelOutput.from_content("mockllm/model", text) for text in texts]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return get_model("mockllm/model", custom_outputs=outputs)

data, out = sys.argv[1], sys.argv[2]
runs = {
    "base": (cfc(samples=4, data_dir=data), [" the farm.", " a barn", " the farm\\n", "\\nnothing"] * 3, 3, 1, {}),
    "chat": (protoqa(samples=2, prompt="chat", data_dir=data),
             ["Sure! Here's one: a beach towel. Enjoy!", "1. **Sunscreen**"], 1, 1, {"temperature": 0.5}),
    "epochs": (cfc(samples=1, data_dir=data), ["a", "b"], 1, 2, {}),
    "other": (inspect_ai.Task(dataset=[Sample(input="hi", target="hello")], name="greeting"), ["hello"], 1, 1, {}),
}
found = {}
for name, (task, texts, limit, epochs, config) in runs.items():
    log = inspect_ai.eval(task, model=mock(texts), limit=limit, epochs=epochs, log_dir=f"{out}/{name}",
                          display="none", **config)[0]
    found[name] = {"status": log.status, "location": log.location, "error": str(log.error)}
# The same log in Inspect's JSON format (--log-format json).
inspect_ai.log.write_eval_log(inspect_ai.log.read_eval_log(found["base"]["location"]), f"{out}/base.json")
print(json.dumps(found))
"""


@pytest.mark.slow
@needs_data
def test_mock_model_runs_are_read_back_and_scored_as_inspect_scored_them(tmp_path):
    _inspect_ai()
    env = isolated_env(tmp_path, PROTOQA_DATA_DIR=str(DATA))
    ran = run_python(["-c", MOCK_RUNS, str(DATA), str(tmp_path / "logs")], tmp_path, env, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    logs = json.loads(ran.stdout.strip().splitlines()[-1])
    assert {name: run["status"] for name, run in logs.items()} == dict.fromkeys(logs, "success"), logs
    base = Path(logs["base"]["location"])
    assert detect_format(base) == "inspect"
    read = read_inspect_log(base)
    assert len(read.samples) == 3 and all(len(answers) == 4 for answers in read.samples.values())
    assert sorted(answer for answers in read.samples.values() for answer in answers) == sorted(
        ["the farm", "a barn", "the farm", ""] * 3
    )
    # The prompt as protoqa-eval generate --prompt names it, so that runs of other harnesses compare with it.
    assert read.generation["num_samples"] == 4 and read.generation["prompt"] == "cfc-one-shot"
    _assert_inspect_equals_ours(base, tmp_path, env=env)
    as_json = tmp_path / "logs" / "base.json"
    assert detect_format(as_json) == "inspect" and read_inspect_log(as_json).samples == read.samples
    # A question held twice for one epoch is named, not the one it displaced.
    log = json.loads(as_json.read_text())
    log["samples"][1] = log["samples"][0]
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(log))
    first = log["samples"][0]["id"]
    with pytest.raises(
        DataFormatError, match=rf"twice.json, question '{first}': the log holds the sample of epoch 1 twice"
    ):
        read_inspect_log(twice)
    # The chat prompt: the instruction and question as the user turn, the answer taken from each reply; a
    # temperature given at the command line is what the log records.
    chat = read_inspect_log(logs["chat"]["location"])
    assert chat.samples == {"r1q1": ["a beach towel", "sunscreen"]} and chat.generation["prompt"] == "protoqa-chat"
    assert chat.generation["sampling"]["max_new_tokens"] == 32 and "stop" not in chat.generation["sampling"]
    assert chat.generation["sampling"]["temperature"] == 0.5 and chat.generation["sampling"]["top_p"] == 0.9
    # Several epochs put each question in the log more than once: refused, not merged.
    with pytest.raises(DataFormatError, match="appears twice"):
        read_inspect_log(logs["epochs"]["location"])
    with pytest.raises(DataFormatError, match="task 'greeting', not of this project's"):
        read_inspect_log(logs["other"]["location"])


# ---------------------------------------------------------------- a real inspect eval run


@pytest.fixture(scope="module")
def inspect_gpt2(tmp_path_factory) -> Path:
    """A tiny GPT-2 fitted for a moment to the first three ProtoQA dev questions' prompts and answers (so that some
    samples hit clusters), knowing the words of the first three CFC one-shot prompts (512 positions hold them)."""
    from protoqa_dataset.parsing import load_questions
    from protoqa_integrations.generation.prompts import cfc_prompt, question_to_prompt
    from tests.support.tiny_lm import build_tiny_gpt2

    protoqa = load_questions("protoqa", "validation", str(DATA))[0][:3]
    cfc = load_questions("cfc", "validation", str(DATA))[0][:3]
    lines = [f"{question_to_prompt(q.question)} {c.answers[0]}." for q in protoqa for c in q.clusters[:4]]
    return build_tiny_gpt2(
        tmp_path_factory.mktemp("inspect") / "tiny-gpt2",
        lines + [cfc_prompt(q.question) for q in cfc],
        n_positions=512,
        fit_lines=lines,
        fit_steps=80,
    )


@pytest.mark.slow
@needs_data
def test_inspect_eval_reports_the_scores_we_compute_for_its_answers(tmp_path, inspect_gpt2):
    _inspect_ai()
    assert INSPECT is not None, "inspect-ai is installed but its inspect command is not beside this interpreter"
    shutil.copytree(inspect_gpt2, tmp_path / "tiny-gpt2")
    env = isolated_env(tmp_path, PROTOQA_DATA_DIR=str(DATA))
    printed = {
        name: run_python(["-m", "protoqa_integrations.harnesses.inspect_tasks", *args], tmp_path, env).stdout.strip()
        for name, args in (("tasks", []), ("config", ["model-config"]))
    }
    # The documented command, at the tasks' defaults (300 and 100 samples per question), on three questions each.
    command = [
        INSPECT,
        "eval",
        f"{printed['tasks']}@protoqa",
        f"{printed['tasks']}@cfc",
        "--model",
        "hf/./tiny-gpt2",
        "--model-config",
        printed["config"],
        "--limit",
        "3",
        "--log-dir",
        "logs",
        "--display",
        "plain",
    ]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    logs = {path.name.split("_")[1]: path for path in (tmp_path / "logs").glob("*.eval")}
    assert set(logs) == {"protoqa", "cfc"}
    from inspect_ai.log import read_eval_log_samples

    from protoqa_integrations.generation.prompts import cfc_prompt, question_to_prompt
    from protoqa_integrations.generation.settings import CFC_NUM_SAMPLES, PROTOQA_NUM_SAMPLES
    from protoqa_integrations.leaderboard.board import read_system

    scored = 0
    for task, prompt_of, num_samples in (
        ("protoqa", question_to_prompt, PROTOQA_NUM_SAMPLES),
        ("cfc", cfc_prompt, CFC_NUM_SAMPLES),
    ):
        for sample in read_eval_log_samples(str(logs[task]), exclude_fields={"events"}):
            # The prompt Inspect sent is ours, and every sample asked for came back.
            assert sample.input == prompt_of(sample.metadata["row"]["question"])
            assert len(sample.output.choices) == num_samples
        theirs = _assert_inspect_equals_ours(logs[task], tmp_path, env=env)
        scored += sum(value > 0 for name, value in theirs.items() if name not in ("probeval_kl", "collapsed"))
        system = read_system(task, logs[task])
        assert system.format == "inspect" and len(system.samples) == 3
    # The fitted model's samples hold real answers, so the comparison is not one of zeros.
    assert scored > 0
