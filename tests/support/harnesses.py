"""The interpreters that run each evaluation harness or engine, which may live in their own environments.

lm-evaluation-harness, lighteval and vLLM pin versions of torch and transformers that cannot
share one environment, so ``bash scripts/setup.sh --test`` builds ``.venv-lighteval`` and
``.venv-vllm`` beside ``.venv``; an environment variable may name another interpreter.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Optional

import pytest

from tests.support.offline import REPO, isolated_env, offline_env

PAPER = ("max_answers@1", "max_answers@3", "max_answers@5", "max_answers@10")


def python_importing(
    module: str, candidates: Iterable[Optional[str]], env: Optional[Mapping[str, str]] = None
) -> Optional[str]:
    """The first of ``candidates`` (interpreter paths; ``None`` and missing ones are passed over)
    that imports ``module``, or ``None``.

    >>> python_importing("json", [None, "/no/such/python", sys.executable]) == sys.executable
    True
    >>> python_importing("no_such_module_here", [sys.executable]) is None
    True
    """
    for candidate in candidates:
        if (
            candidate
            and Path(candidate).exists()
            and subprocess.run(
                [candidate, "-c", f"import {module}"], capture_output=True, env=None if env is None else dict(env)
            ).returncode
            == 0
        ):
            return candidate
    return None


def lm_eval_python() -> Optional[str]:
    """An interpreter that imports lm_eval: this one, or ``$LM_EVAL_PYTHON``."""
    return python_importing("lm_eval", (sys.executable, os.environ.get("LM_EVAL_PYTHON")))


def lighteval_python() -> Optional[str]:
    """An interpreter that imports lighteval: this one, ``$LIGHTEVAL_PYTHON`` or ``.venv-lighteval``'s."""
    candidates = (sys.executable, os.environ.get("LIGHTEVAL_PYTHON"), str(REPO / ".venv-lighteval" / "bin" / "python"))
    return python_importing("lighteval", candidates)


def lm_eval_or_skip() -> str:
    """:func:`lm_eval_python`, or the calling test skipped when there is none."""
    python = lm_eval_python()
    if python is None:
        pytest.skip("lm_eval is not importable here and $LM_EVAL_PYTHON is not set")
    return python


def lighteval_or_skip() -> str:
    """:func:`lighteval_python`, or the calling test skipped when there is none."""
    python = lighteval_python()
    if python is None:
        pytest.skip("no interpreter imports lighteval: set $LIGHTEVAL_PYTHON or run bash scripts/setup.sh --test")
    return python


def sampling_copy(python: str, folder: Path) -> subprocess.CompletedProcess:
    """The documented ``sampling-model`` command, run by ``python`` in ``folder``: ``./tiny-gpt2`` copied to
    ``./tiny-gpt2-sampling`` with a generation config that samples (lighteval's transformers backend samples only
    from such a model)."""
    return subprocess.run(
        [python, "-m", "protoqa_integrations.harnesses.lighteval_tasks", "sampling-model"]
        + ["./tiny-gpt2", "./tiny-gpt2-sampling"],
        cwd=folder,
        env=isolated_env(folder),
        capture_output=True,
        text=True,
        timeout=300,
    )


@functools.cache
def vllm_import_error(path: str) -> Optional[str]:
    """Why ``import vllm`` fails with the interpreter ``path`` (None when it works); asked once per
    run, as the import costs seconds.

    >>> vllm_import_error("/no/such/python")
    'no vLLM environment at /no/such/python (bash scripts/setup.sh --test builds it)'
    """
    if not Path(path).is_file():
        return f"no vLLM environment at {path} (bash scripts/setup.sh --test builds it)"
    result = subprocess.run([path, "-c", "import vllm"], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no message"])[-1]
        return f"vLLM cannot start in {path}: {last}"
    return None


def vllm_python() -> str:
    """The interpreter with vLLM (``$PROTOQA_VLLM_PYTHON`` or ``.venv-vllm``'s); skips with the reason
    when there is none that starts."""
    path = os.environ.get("PROTOQA_VLLM_PYTHON") or str(REPO / ".venv-vllm" / "bin" / "python")
    reason = vllm_import_error(path)
    if reason is not None:
        pytest.skip(reason)
    return path


def lm_eval_command(
    python: str, model_args: str, tasks: str, limit: int, *extra: str, include_path: Optional[Path] = None
) -> list[str]:
    """The project's lm-eval runner with its ``protoqa-hf`` backend (``model_args`` as lm-eval takes them) on
    ``limit`` questions of ``tasks`` (found also in ``include_path``), on the CPU; ``extra`` options last."""
    include = [] if include_path is None else ["--include_path", str(include_path)]
    return [
        python,
        "-m",
        "protoqa_integrations.harnesses.lm_eval_tasks",
        "run",
        "--model",
        "protoqa-hf",
        "--model_args",
        model_args,
        "--tasks",
        tasks,
        *include,
        "--limit",
        str(limit),
        "--device",
        "cpu",
        *extra,
    ]


def logged_protoqa_12(python: str, model: Path, batch: int, folder: Path, data: Path) -> tuple[list[str], Path]:
    """The lm-eval command that draws 12 answers for each of 3 ProtoQA dev questions from ``model`` (seed 7,
    ``batch`` samples per forward pass) and logs its samples, with the ``protoqa_12`` task written in ``folder``;
    and the folder it writes its results to."""
    from protoqa_integrations.harnesses.lm_eval_tasks import tasks_path

    tasks = folder / "tasks"
    tasks.mkdir()
    (tasks / "protoqa_12.yaml").write_text(f"include: {tasks_path()}/protoqa.yaml\ntask: protoqa_12\nrepeats: 12\n")
    out = folder / "lm_eval_out"
    logging = ["--output_path", str(out), "--log_samples", "--metadata", json.dumps({"data_dir": str(data)})]
    model_args = f"pretrained={model},seed=7,sample_batch_size={batch}"
    return lm_eval_command(python, model_args, "protoqa_12", 3, *logging, include_path=tasks), out


def protoqa_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m protoqa_integrations ARGS`` in a new process, offline, in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "protoqa_integrations", *args],
        cwd=cwd,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def check_convert_and_leaderboard(source: Path, targets: Path, reported: dict[str, float], suffix: str, tmp: Path):
    """convert keeps the settings; leaderboard gives the harness's scores (``reported``, its names ending in
    ``suffix``) for the raw output ``source`` and the converted file; returns the converted document and the
    leaderboard's systems by name."""
    from protoqa_integrations.harnesses.metric_names import SCORE_NAMES

    answers = tmp / "converted.answers.json"
    converted = protoqa_eval("convert", str(source), "-o", str(answers), cwd=tmp)
    assert converted.returncode == 0, converted.stderr
    document = json.loads(answers.read_text())
    board = protoqa_eval(
        "leaderboard",
        str(targets),
        f"raw={source}",
        f"converted={answers}",
        "--json",
        "--similarity",
        "wordnet",
        cwd=tmp,
    )
    assert board.returncode == 0, board.stderr
    systems = {s["name"]: s for s in json.loads(board.stdout)["systems"]}
    assert systems["converted"]["format"] == "answers"
    for name in ("raw", "converted"):
        scores = systems[name]["scores"]
        for metric in PAPER:
            assert scores[metric]["mean"] == pytest.approx(
                reported[f"{SCORE_NAMES['wordnet_' + metric]}{suffix}"], abs=1e-12
            ), (
                name,
                metric,
            )
        assert scores["probeval_kl"]["mean"] == pytest.approx(reported[f"KL{suffix}"], abs=1e-9), name
    return document, systems
