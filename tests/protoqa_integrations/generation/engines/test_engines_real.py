"""The engines against real vLLM: the offline engine, ``vllm serve`` with the openai engine, and
lm-evaluation-harness's API backends against that server, completions and chat.

vLLM's CPU build runs in its own environment, ``.venv-vllm`` (``bash scripts/setup.sh --test``
builds it; ``$PROTOQA_VLLM_PYTHON`` may name another interpreter); these tests run it in
subprocesses, on a tiny GPT-2 built here (head dimension 32, as vLLM's CPU attention needs).
They skip, saying why, only when that environment is absent or vLLM cannot start in it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.apps import free_port, started_server
from tests.support.harnesses import python_importing, vllm_python
from tests.support.offline import offline_env
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[4]
DATA = REPO.parent / "shared" / "data"
DEV = DATA / "protoqa" / "dev.crowdsourced.jsonl"

# Found, not imported: importing transformers costs seconds, and the module is collected in every run.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed"),
    pytest.mark.skipif(not DEV.is_file(), reason=f"no ProtoQA data under {DATA}"),
]

CHAT_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}\n"
    "{% elif m['role'] == 'user' %}Q: {{ m['content'] }}\n{% else %}A: {{ m['content'] }}\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}A:{% endif %}"
)
# vLLM's CPU build reserves this share of RAM (its default, 0.92, is refused on a shared machine).
MEMORY = "0.15"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A tiny GPT-2 (2 layers, 64 wide, 2 heads: head dimension 32) fitted a moment on dev answers, with a chat
    template."""
    from transformers import AutoTokenizer

    from protoqa_integrations.generation.prompts import question_to_prompt
    from protoqa_metric import read_targets
    from tests.support.tiny_lm import build_tiny_gpt2

    questions = list(read_targets(DEV).values())
    lines = [f"{question_to_prompt(q.question)} {c.answers[0]}." for q in questions[:3] for c in q.clusters[:4]]
    folder = build_tiny_gpt2(
        tmp_path_factory.mktemp("vllm") / "tiny",
        lines + [question_to_prompt(q.question) for q in questions],
        n_embd=64,
        n_positions=512,
        fit_lines=lines,
        fit_steps=60,
    )
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return folder


def generate(python, model, output, cwd, *extra, timeout=900):
    args = [
        python,
        "-m",
        "protoqa_integrations",
        "generate",
        str(model),
        "-o",
        str(output),
        "--data-dir",
        str(DATA),
        "--no-progress",
        *extra,
    ]
    return subprocess.run(
        args, cwd=cwd, env=offline_env(VLLM_LOGGING_LEVEL="ERROR"), capture_output=True, text=True, timeout=timeout
    )


def test_the_documented_vllm_command_draws_the_protocol_in_one_call(tiny_model, tmp_path):
    # README/docs: `protoqa-eval generate MODEL -o OUT --engine vllm`, in the environment with vLLM
    # (setup.sh installs the project there), from any folder, without PYTHONPATH. One engine start
    # serves both points: the documented command runs, and it draws the whole protocol in one call.
    command = Path(vllm_python()).parent / "protoqa-eval"
    assert command.is_file(), f"{command} is missing: bash scripts/setup.sh --test installs protoqa-eval there"
    env = offline_env(VLLM_LOGGING_LEVEL="ERROR", PROTOQA_PROGRESS_INTERVAL="0")  # progress lines, in a log
    env.pop("PYTHONPATH")
    out = tmp_path / "vllm.json"
    result = subprocess.run(
        [
            str(command),
            "generate",
            str(tiny_model),
            "-o",
            str(out),
            "--engine",
            "vllm",
            "--data-dir",
            str(DATA),
            "--gpu-memory-utilization",
            MEMORY,
            "--enforce-eager",
            "--limit",
            "3",
            "--num-samples",
            "100",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # vLLM's one call reports through the project's progress: whole lines, the last one of every sample
    assert "sampling: 300/300 samples (100%)" in result.stderr, result.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert [len(v) for v in doc["model_answers"].values()] == [100, 100, 100]
    # Independent samples: the model, fitted to these questions, still spreads over answers.
    assert all(len(set(v)) > 1 for v in doc["model_answers"].values())
    info = doc["generation"]
    assert info["engine"]["engine"] == "vllm"
    assert info["sampling"].startswith("engine:vllm|samples:100|top_p:0.9|temperature:0.69|top_k:0")
    assert info["engine_details"]["vllm"] and info["engine_details"]["gpu_memory_utilization"] == 0.15
    assert info["usage"]["completion_tokens"] > 0 and "collapsed_questions" not in info
    # The answers file is scored like any other.
    scored = run_python(
        [
            "-m",
            "protoqa_integrations",
            "score-generated",
            str(out),
            "--data-dir",
            str(DATA),
            "--json",
            "--no-probeval",
            "--only-predicted",
        ],
        tmp_path,
        offline_env(VLLM_LOGGING_LEVEL="ERROR"),
        timeout=300,
    )
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["sampling"] == info["sampling"]


def test_vllm_out_of_memory_at_start_names_the_option_to_lower(tiny_model, tmp_path):
    python = vllm_python()
    result = generate(
        python,
        tiny_model,
        tmp_path / "oom.json",
        tmp_path,
        "--engine",
        "vllm",
        "--gpu-memory-utilization",
        "1.0",
        "--enforce-eager",
        "--limit",
        "1",
        "--num-samples",
        "2",
    )
    assert result.returncode == 2, result.stderr[-3000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("protoqa-eval generate: error: vLLM could not start"), last
    assert "--gpu-memory-utilization" in last
    assert not (tmp_path / "oom.json").exists()


@contextlib.contextmanager
def served(model: Path, log: Path):
    """The docs' server command for vLLM's CPU build (its ``vllm`` command cannot find its own version):
    ``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1, serving ``model`` as ``tiny``; yields its URL."""
    python = vllm_python()
    port = free_port()
    command = [
        python,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--gpu-memory-utilization",
        MEMORY,
        "--served-model-name",
        "tiny",
        "--enforce-eager",
    ]
    url = f"http://127.0.0.1:{port}/v1"
    env = offline_env(VLLM_LOGGING_LEVEL="WARNING")
    with started_server(command, ready_url=url + "/models", env=env, log=log, timeout=900, every=2, stop_timeout=60):
        yield url


@pytest.fixture(scope="module")
def server_log(tmp_path_factory) -> Path:
    """Where the module's server writes its log."""
    return tmp_path_factory.mktemp("serve") / "serve.log"


@pytest.fixture(scope="module")
def server(tiny_model, server_log):
    """``vllm serve`` (its OpenAI-compatible server) on 127.0.0.1, serving the tiny model as ``tiny``; one per module,
    as each start costs tens of seconds."""
    with served(tiny_model, server_log) as url:
        yield url


def test_openai_engine_against_vllm_serve_completions_and_chat(server, tiny_model, tmp_path):
    # vLLM 0.32's CPU build stops on seeded requests whose prompt is computed in chunks, hence no seeds.
    out = tmp_path / "openai.json"
    result = generate(
        sys.executable,
        "tiny",
        out,
        tmp_path,
        "--engine",
        "openai",
        "--base-url",
        server,
        "--limit",
        "3",
        "--num-samples",
        "300",
        "--max-n",
        "128",
        "--no-request-seeds",
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert [len(v) for v in doc["model_answers"].values()] == [300, 300, 300]
    assert all(len(set(v)) > 1 for v in doc["model_answers"].values())
    assert "collapsed_questions" not in doc["generation"]
    assert doc["generation"]["usage"]["completion_tokens"] > 0
    # what the server says of itself: the model it serves, from where, and its version; no seed was sent
    details = doc["generation"]["engine_details"]
    assert details["served_model_id"] == "tiny" and details["served_model_root"] == str(tiny_model)
    assert details["server_version"] and details["base_url"] == server
    assert "|seed:none|" in doc["generation"]["sampling"]
    chat = tmp_path / "chat.json"
    result = generate(
        sys.executable,
        "tiny",
        chat,
        tmp_path,
        "--engine",
        "openai",
        "--base-url",
        server,
        "--chat",
        "--dataset",
        "cfc",
        "--limit",
        "2",
        "--num-samples",
        "20",
        "--no-request-seeds",
        "--system-prompt",
        "Answer briefly.",
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(chat.read_text())
    assert [len(v) for v in doc["model_answers"].values()] == [20, 20] and not doc["generation"]["skipped"]
    assert doc["generation"]["prompt"] == "cfc-chat"
    # A model the server does not serve: one line, exit 2.
    result = generate(
        sys.executable,
        "llama",
        tmp_path / "x.json",
        tmp_path,
        "--engine",
        "openai",
        "--base-url",
        server,
        "--limit",
        "1",
    )
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "does not serve the model 'llama'" in result.stderr and "tiny" in result.stderr


def lm_eval_api_python() -> str:
    candidates = (sys.executable, os.environ.get("LM_EVAL_PYTHON"))
    python = python_importing("lm_eval.models.api_models", candidates, env=offline_env(VLLM_LOGGING_LEVEL="ERROR"))
    if python is None:
        pytest.skip("lm-eval[api] is not importable here and $LM_EVAL_PYTHON is not set")
    return python


def lm_eval(python, model, model_args, task, cwd, *extra):
    from protoqa_integrations.harnesses.lm_eval_tasks import tasks_path

    out = cwd / f"out-{model}-{task}"
    args = [
        python,
        "-m",
        "protoqa_integrations.harnesses.lm_eval_tasks",
        "run",
        "--model",
        model,
        "--model_args",
        model_args,
        "--tasks",
        task,
        "--limit",
        "2",
        "--output_path",
        str(out),
        "--metadata",
        json.dumps({"data_dir": str(DATA)}),
        "--include_path",
        tasks_path(),
        *extra,
    ]
    result = subprocess.run(
        args, cwd=cwd, env=offline_env(VLLM_LOGGING_LEVEL="ERROR"), capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"][task]
    return result, results


def test_lm_eval_api_backends_against_vllm_serve(server, tiny_model, tmp_path):
    python = lm_eval_api_python()
    base = (
        f"model=tiny,base_url={server}/completions,tokenizer_backend=huggingface,tokenizer={tiny_model},"
        "num_concurrent=4,max_retries=2"
    )
    # The harness's own backend sends "seed": 1234 with every repeat: vLLM answers 300 times alike,
    # and the tasks' guard says so.
    stock, scores = lm_eval(python, "local-completions", base, "protoqa", tmp_path)
    assert scores["collapsed,answers"] == 1.0
    assert "may send a fixed seed with every request" in stock.stderr
    # Ours sends no fixed seed: independent samples.
    _, scores = lm_eval(python, "protoqa-local-completions", base, "protoqa", tmp_path)
    assert scores["collapsed,answers"] == 0.0 and scores["wn_ans@10,answers"] >= 0.0
    chat = f"model=tiny,base_url={server}/chat/completions,num_concurrent=4,max_retries=2"
    _, scores = lm_eval(
        python,
        "protoqa-local-chat-completions",
        chat,
        "cfc_chat",
        tmp_path,
        "--apply_chat_template",
        "--fewshot_as_multiturn",
    )
    assert scores["collapsed,answers"] == 0.0 and "KL,answers" in scores


# Last in the module: a seeded request stops the CPU server, so this test uses the module's server after the others.
def test_seeded_requests_stop_the_cpu_server_and_the_error_names_no_request_seeds(server, server_log, tmp_path):
    # The CPU build stops on a seeded request ("CPU Generator does not use offset"); the client,
    # which had been answered before, says to run again with --no-request-seeds.
    logged = server_log.stat().st_size
    result = generate(
        sys.executable,
        "tiny",
        tmp_path / "seeded.json",
        tmp_path,
        "--engine",
        "openai",
        "--base-url",
        server,
        "--limit",
        "3",
        "--num-samples",
        "300",
        "--max-retries",
        "1",
    )
    with open(server_log, "rb") as fh:
        fh.seek(logged)
        log = fh.read().decode(errors="replace")
    if "CPU Generator does not use offset" not in log:
        pytest.skip("this vLLM build answered seeded requests")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "--no-request-seeds" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "seeded.json").exists()
