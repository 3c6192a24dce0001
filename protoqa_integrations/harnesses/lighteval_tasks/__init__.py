"""ProtoQA and CFC as lighteval custom tasks, shipped with this package.

lighteval loads custom tasks with ``--custom-tasks``: :func:`tasks_file` (printed by ``python -m
protoqa_integrations.harnesses.lighteval_tasks``). lighteval 0.13's ``transformers`` backend never
sets ``do_sample``, hence :func:`save_sampling_model` (the ``sampling-model`` command). The lighteval
side is :mod:`.tasks` (``pip install protoqa-eval[lighteval]``); how to run it: docs/evaluate-a-model.md.

>>> Path(tasks_file()).name
'tasks.py'
"""

from __future__ import annotations

from pathlib import Path

from protoqa_core.install import install_command

__all__ = ["tasks_file", "save_sampling_model", "TASK_NAMES"]

TASK_NAMES = ("protoqa", "cfc")


def tasks_file() -> str:
    """The custom-task file for ``lighteval ... --custom-tasks``.

    >>> Path(tasks_file()).is_file()
    True
    """
    return str(Path(__file__).resolve().parent / "tasks.py")


def save_sampling_model(model: str, folder: str) -> Path:
    """Save a copy of ``model`` (Hub id or local folder) whose generation config samples (``do_sample``).

    Only ``do_sample`` changes; ``folder`` must not exist or be empty.

    >>> save_sampling_model("gpt2", "gpt2-sampling")  # doctest: +SKIP
    PosixPath('gpt2-sampling')
    """
    target = Path(folder)
    if target.is_symlink() or (target.exists() and (not target.is_dir() or any(target.iterdir()))):
        raise ValueError(f"{target} exists and is not an empty folder; name a new folder")
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ValueError(f"saving a model needs transformers ({exc}); {install_command('lighteval')}") from exc
    try:
        loaded = AutoModelForCausalLM.from_pretrained(model, trust_remote_code=False)
        tokenizer = AutoTokenizer.from_pretrained(model, trust_remote_code=False)
    except (OSError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"cannot load the model {model}: {first}") from exc
    loaded.generation_config.do_sample = True
    loaded.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target
