"""ProtoQA and CFC as lm-evaluation-harness tasks, shipped with this package.

This folder holds the task YAML files; ``lm_eval`` finds them with ``--include_path`` (it has no
plugin mechanism for tasks). The tasks, their scores and how to run them: docs/evaluate-a-model.md.
``python -m protoqa_integrations.harnesses.lm_eval_tasks run ...`` runs ``lm_eval run ...`` with
this folder included and the ``protoqa-hf`` backend (:mod:`.backend`) registered.

>>> Path(tasks_path()).joinpath("protoqa.yaml").is_file()
True
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["tasks_path", "TASKS", "GROUP"]

TASKS = ("protoqa", "protoqa_test", "cfc", "cfc_test", "protoqa_chat", "cfc_chat")
GROUP = "protoqa_cfc"


def tasks_path() -> str:
    """The folder with the task YAML files, for ``lm_eval --include_path``.

    >>> tasks_path().endswith("lm_eval_tasks")
    True
    """
    return str(Path(__file__).resolve().parent)
