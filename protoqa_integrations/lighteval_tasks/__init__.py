"""ProtoQA and CFC as lighteval custom tasks, shipped with this package.

lighteval (Hugging Face's evaluation suite: ``transformers``, vLLM, SGLang, TGI, endpoint and
LiteLLM backends) loads custom tasks from a Python file or module with ``--custom-tasks``.
:func:`tasks_file` is that file (``python -m protoqa_integrations.lighteval_tasks`` prints it;
the module name ``protoqa_integrations.lighteval_tasks.tasks`` works too)::

    lighteval accelerate \\
        "model_name=MODEL,generation_parameters={temperature:0.69,top_p:0.9,top_k:0}" \\
        "protoqa|0,cfc|0" --custom-tasks "$(python -m protoqa_integrations.lighteval_tasks)"

Tasks: ``protoqa`` (ProtoQA crowdsourced dev, 300 samples per question) and ``cfc`` (CFC dev,
100), with the prompts and per-question scores of the lm-evaluation-harness tasks
(:mod:`.utils`; the lighteval side is :mod:`.tasks`, which needs ``pip install
protoqa-eval[lighteval]``).

>>> Path(tasks_file()).name
'tasks.py'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["tasks_file", "TASK_NAMES"]

TASK_NAMES = ("protoqa", "cfc")


def tasks_file() -> str:
    """The custom-task file for ``lighteval ... --custom-tasks``.

    >>> Path(tasks_file()).is_file()
    True
    """
    return str(Path(__file__).resolve().parent / "tasks.py")
