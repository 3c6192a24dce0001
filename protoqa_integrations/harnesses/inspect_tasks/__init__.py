"""ProtoQA and CFC as Inspect AI tasks, shipped with this package.

Inspect runs a task from a file, ``FILE@TASK``: :func:`tasks_file` (printed by ``python -m
protoqa_integrations.harnesses.inspect_tasks``). ``model-config`` prints :func:`model_config_file`,
which has Inspect's ``hf`` provider feed a base model the prompt unchanged (it otherwise writes
``user: PROMPT`` for a tokenizer without a chat template). The Inspect side is :mod:`.tasks`
(``pip install protoqa-eval[inspect]``); how to run it: docs/evaluate-a-model.md.

>>> Path(tasks_file()).name, Path(model_config_file()).name
('tasks.py', 'base-model.yaml')
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["tasks_file", "model_config_file", "clean_answers", "TASK_NAMES", "PROMPTS"]

TASK_NAMES = ("protoqa", "cfc")

PROMPTS = ("base", "chat")
"""The tasks' ``prompt`` argument: ``base`` (the statement prompt of a ProtoQA question, the
one-shot prompt of a CFC question, cut at the stop strings; the default) or ``chat`` (the
instruction and question as a user turn, the answer taken from the reply)."""


def tasks_file() -> str:
    """The task file for ``inspect eval FILE@protoqa`` (or ``@cfc``).

    >>> Path(tasks_file()).is_file()
    True
    """
    return str(Path(__file__).resolve().parent / "tasks.py")


def model_config_file() -> str:
    """The ``--model-config`` file that has Inspect's ``hf`` provider send a base model the prompt unchanged.

    >>> "chat_template" in Path(model_config_file()).read_text()
    True
    """
    return str(Path(__file__).resolve().parent / "base-model.yaml")


def clean_answers(texts: Sequence[str], prompt: str = "base") -> list[str]:
    """Every sampled text as its answer (``""`` for none), order kept, as the other harnesses' tasks clean them.

    >>> clean_answers([" Dog.", "\\ncat"]), clean_answers(["1. **Dog**"], "chat")
    (['dog', ''], ['dog'])
    """
    # Imported here: printing the task file (python -m ...) needs neither, nor numpy, which generation imports.
    from protoqa_integrations.generation.prompts import answer_from_reply
    from protoqa_integrations.generation.settings import answer_from_text

    if prompt not in PROMPTS:
        raise ValueError(f"unknown prompt {prompt!r}; choose one of {', '.join(PROMPTS)}")
    clean = answer_from_text if prompt == "base" else answer_from_reply
    return [clean(text) for text in texts]
