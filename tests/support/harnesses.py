"""The interpreters that run each evaluation harness or engine, which may live in their own environments.

lm-evaluation-harness, lighteval and vLLM pin versions of torch and transformers that cannot
share one environment, so ``bash scripts/setup.sh --test`` builds ``.venv-lighteval`` and
``.venv-vllm`` beside ``.venv``; an environment variable may name another interpreter.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Optional

import pytest

from tests.support.offline import REPO


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
