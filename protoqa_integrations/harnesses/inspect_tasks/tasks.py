"""ProtoQA and CFC as Inspect AI tasks: ``inspect eval FILE@protoqa`` (or ``@cfc``) with this file.

Each task is a dataset of one :class:`~inspect_ai.dataset.Sample` per question, the solver
:func:`sample_answers` (one ``generate`` per sample, on forked copies of the state, run
concurrently) and the scorer :func:`protoqa_scores`, which cleans and scores each question as the
other harnesses' tasks do (:func:`~protoqa_integrations.harnesses.task_functions.process_results`).
Task arguments, sampling settings and the log's contents: docs/evaluate-a-model.md. Inspect runs
a task in its file's own folder, hence :func:`absolute_data_dir`. Importing this module needs
``inspect-ai``.

>>> [task.name for task in (protoqa(), cfc())]  # the data beside the checkout
['protoqa', 'cfc']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Optional

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, GenerateConfig, ModelOutput
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, fork, solver
from inspect_ai.solver import generate as generate_step

from protoqa_core.io.data import data_dir_from_env
from protoqa_integrations.generation.prompts import cfc_chat_messages, protoqa_chat_messages
from protoqa_integrations.generation.settings import (
    CFC_NUM_SAMPLES,
    CHAT_MAX_NEW_TOKENS,
    PAPER_MAX_NEW_TOKENS,
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROTOQA_NUM_SAMPLES,
    STOP_STRINGS,
)
from protoqa_integrations.harnesses.inspect_tasks import PROMPTS, clean_answers
from protoqa_integrations.harnesses.metric_names import COLLAPSED_NAME, METRIC_NAMES
from protoqa_integrations.harnesses.task_functions import (
    cfc_one_shot_prompt,
    load_split,
    metric_signatures,
    process_results,
    protoqa_prompt,
)

__all__ = [
    "protoqa",
    "cfc",
    "question_samples",
    "sample_answers",
    "protoqa_scores",
    "answer_counts",
    "generate_config",
    "absolute_data_dir",
    "build_task",
]

_BASE_PROMPTS: Mapping[str, Callable[[dict], str]] = {"protoqa": protoqa_prompt, "cfc": cfc_one_shot_prompt}
_CHAT_PROMPTS: Mapping[str, Callable[[str], list[dict[str, str]]]] = {
    "protoqa": protoqa_chat_messages,
    "cfc": cfc_chat_messages,
}


def _check_prompt(prompt: str) -> None:
    if prompt not in PROMPTS:
        raise ValueError(f"unknown prompt {prompt!r}; choose one of {', '.join(PROMPTS)}")


def _chat_message(turn: Mapping[str, str]) -> ChatMessage:
    from inspect_ai.model import ChatMessageSystem

    if turn["role"] == "system":
        return ChatMessageSystem(content=turn["content"])
    if turn["role"] == "assistant":
        return ChatMessageAssistant(content=turn["content"])
    return ChatMessageUser(content=turn["content"])


def question_samples(
    dataset: str, split: str = "validation", prompt: str = "base", data_dir: Optional[str] = None
) -> MemoryDataset:
    """One Inspect sample per question of a ``protoqa_dataset`` config (``protoqa`` or ``cfc``) and split.

    ``target`` holds one answer per cluster, largest first; ``metadata["row"]`` is what the scorer reads.

    >>> first = question_samples("protoqa", data_dir="../shared/data")[0]
    >>> first.id, first.input
    ('r1q1', 'one thing that is hard to guess about a person you are just meeting is')
    >>> question_samples("cfc", prompt="chat", data_dir="../shared/data")[0].input[-1].role
    'user'
    """
    _check_prompt(prompt)
    if dataset not in _BASE_PROMPTS:
        raise ValueError(f"unknown data set {dataset!r}; choose one of {', '.join(_BASE_PROMPTS)}")
    rows = load_split(dataset, split, data_dir=data_dir)[split]
    samples = []
    for row in rows:
        clusters = row.get("clusters") or {}
        answers = [cluster[0] for cluster in clusters.get("answers", []) if cluster]
        text: str | list[ChatMessage]
        if prompt == "base":
            text = _BASE_PROMPTS[dataset](row)
        else:
            text = [_chat_message(turn) for turn in _CHAT_PROMPTS[dataset](row["question"])]
        samples.append(Sample(id=row["id"], input=text, target=answers, metadata={"row": row}))
    return MemoryDataset(samples, name=f"{dataset}/{split}", location=dataset)


def generate_config(prompt: str = "base") -> GenerateConfig:
    """The protocol's generation settings for a prompt style.

    >>> config = generate_config()
    >>> config.temperature, config.top_p, config.top_k, config.max_tokens, config.stop_seqs
    (0.69, 0.9, 0, 10, ['\\n', '.'])
    >>> generate_config("chat").stop_seqs is None
    True
    """
    _check_prompt(prompt)
    if prompt == "chat":
        return GenerateConfig(temperature=PAPER_TEMPERATURE, top_p=PAPER_TOP_P, top_k=0, max_tokens=CHAT_MAX_NEW_TOKENS)
    return GenerateConfig(
        temperature=PAPER_TEMPERATURE,
        top_p=PAPER_TOP_P,
        top_k=0,
        max_tokens=PAPER_MAX_NEW_TOKENS,
        stop_seqs=list(STOP_STRINGS),
    )


@solver
def sample_answers(samples: int) -> Solver:
    """Draw ``samples`` completions of the question's prompt, each from its own ``generate`` on a forked state.

    The state's ``output`` then holds every completion, in order, as one of its ``choices``.
    """
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        forks = await fork(state, [generate_step(tool_calls="none") for _ in range(samples)])
        choices = [forked.output.choices[0] for forked in forks if forked.output.choices]
        model = next((forked.output.model for forked in forks if forked.output.model), "")
        state.output = ModelOutput(model=model, choices=choices)
        return state

    return solve


def answer_counts(answers: list[str]) -> str:
    """A question's distinct answers with their counts, most frequent first (ties in first-seen order), for the viewer.

    >>> answer_counts(["dog", "cat", "dog", ""])
    'dog ×2, cat ×1, (none) ×1'
    """
    return ", ".join(f"{answer or '(none)'} ×{count}" for answer, count in Counter(answers).most_common())


@scorer(metrics={"*": [mean(), stderr()]})
def protoqa_scores(prompt: str = "base") -> Scorer:
    """The question's scores from all its sampled completions, under the harnesses' short names (``KL`` first).

    ``answer`` is the most frequent answer, ``explanation`` :func:`answer_counts`, ``metadata`` every answer.
    """
    _check_prompt(prompt)

    async def score(state: TaskState, target: Target) -> Score:
        row = state.metadata["row"]
        answers = clean_answers([choice.message.text for choice in state.output.choices], prompt)
        scores: dict[str, Any] = process_results(dict(row), [answers])
        scores[COLLAPSED_NAME] = float(scores[COLLAPSED_NAME][1])
        value = {name: float(scores[name]) for name in METRIC_NAMES}
        top = Counter(answer for answer in answers if answer).most_common(1)
        return Score(
            value=value,
            answer=top[0][0] if top else "",
            explanation=answer_counts(answers),
            metadata={"answers": answers},
        )

    return score


def absolute_data_dir(data_dir: Optional[str] = None) -> Optional[str]:
    """``data_dir``, else ``$PROTOQA_DATA_DIR``, refused when relative: ``inspect eval`` runs a task file in that
    file's own folder, where a relative path would be read (without either, the data are found as
    :func:`~protoqa_integrations.harnesses.task_functions.load_split` finds them).

    >>> absolute_data_dir("/data/protoqa")
    '/data/protoqa'
    >>> absolute_data_dir("../shared/data")
    Traceback (most recent call last):
    ...
    inspect_ai._util.error.PrerequisiteError: data_dir '../shared/data' is a relative path, which ...
    """
    chosen = data_dir or data_dir_from_env()
    if chosen and not Path(chosen).expanduser().is_absolute():
        # Inspect prints a PrerequisiteError as its message alone, without a traceback.
        raise PrerequisiteError(
            f"data_dir {chosen!r} is a relative path, which inspect eval would read from the task's own folder; "
            f'give an absolute path, such as "$PWD/{chosen}"'
        )
    return chosen


def build_task(
    dataset: str, samples: int, split: str = "validation", prompt: str = "base", data_dir: Optional[str] = None
) -> Task:
    """The Inspect task of a data set (``protoqa`` or ``cfc``), which :func:`protoqa` and :func:`cfc` return.

    >>> built = build_task("cfc", 2, data_dir=str(Path("../shared/data").resolve()))
    >>> list(built.metadata["signatures"])[:2], built.metadata["signatures"]["KL"]
    (['KL', 'wn_ans@1'], 'clustering:human|...')
    """
    questions = question_samples(dataset, split, prompt, absolute_data_dir(data_dir))
    signed = metric_signatures(len(questions), int(samples))
    return Task(
        dataset=questions,
        solver=sample_answers(int(samples)),
        scorer=protoqa_scores(prompt),
        config=generate_config(prompt),
        metadata={
            "protoqa_dataset": dataset,
            "split": split,
            "prompt": prompt,
            "samples": int(samples),
            "signatures": {name: signed[name] for name in METRIC_NAMES if name in signed},
            "protoqa-eval": signed["protoqa-eval"],
        },
        version=1,
    )


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
