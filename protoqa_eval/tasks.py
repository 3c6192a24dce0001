"""The Inspect AI tasks under the distribution's name: ``inspect eval protoqa_eval/protoqa`` (or ``protoqa_eval/cfc``).

setup.cfg declares this module as the package's ``inspect_ai`` entry point; Inspect imports it
when a task name starts with ``protoqa_eval/`` and registers the tasks under that name, because
they are defined here. Each is the task of
:func:`~protoqa_integrations.harnesses.inspect_tasks.tasks.build_task`, with the same arguments
(``-T samples=``, ``split=``, ``prompt=``, ``data_dir=``) as the task file's
(``inspect eval FILE@protoqa``, FILE from ``python -m protoqa_integrations.harnesses.inspect_tasks``).

Importing this module needs ``inspect-ai``.

>>> protoqa(samples=2).metadata["samples"], cfc().metadata["protoqa_dataset"]  # the data beside the checkout
(2, 'cfc')
"""

from __future__ import annotations

from typing import Optional

from inspect_ai import Task, task  # inspect-evals-lint: ignore[external_dependencies] -- setup.cfg's extra inspect

from protoqa_integrations.generation.settings import CFC_NUM_SAMPLES, PROTOQA_NUM_SAMPLES
from protoqa_integrations.harnesses.inspect_tasks.tasks import build_task

__all__ = ["protoqa", "cfc"]


@task
def protoqa(
    samples: int = PROTOQA_NUM_SAMPLES, split: str = "validation", prompt: str = "base", data_dir: Optional[str] = None
) -> Task:
    """ProtoQA crowdsourced questions (dev by default), ``samples`` completions per question."""
    return build_task("protoqa", samples, split, prompt, data_dir)


@task
def cfc(
    samples: int = CFC_NUM_SAMPLES, split: str = "validation", prompt: str = "base", data_dir: Optional[str] = None
) -> Task:
    """CFC questions (dev by default), ``samples`` completions per question."""
    return build_task("cfc", samples, split, prompt, data_dir)
