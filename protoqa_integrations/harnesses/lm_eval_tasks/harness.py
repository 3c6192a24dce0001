"""The task YAML files' functions that are lm-eval's alone: the chat prompts, the answer filters,
the collapse warning and the test split's leaderboard file.

Plain Python on dicts and lists (no ``lm_eval`` import), so it is tested without the harness and
shared by every backend; what lighteval's tasks use as well lives in
:mod:`protoqa_integrations.harnesses.task_functions`.

>>> from protoqa_integrations.harnesses.task_functions import process_results
>>> doc = {"id": "q1", "question": "name a pet", "clusters": {"id": ["q1.0", "q1.1"],
...        "answers": [["dog"], ["cat"]], "count": [6, 4]}}
>>> scores = process_results(doc, [answers_filter([[" dog.", " cat", " dog"]], [doc])[0]])
>>> scores["em_ans@1"], round(scores["KL"], 4)
(1.0, 0.0355)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from protoqa_core.cli import write_output_file
from protoqa_core.environment import env_setting
from protoqa_core.ranking import rank_by_frequency
from protoqa_integrations.generation.engines.base import COLLAPSE_SHARE
from protoqa_integrations.generation.prompts import (
    CFC_EXAMPLE,
    answer_from_reply,
    cfc_chat_messages,
    protoqa_chat_messages,
)
from protoqa_integrations.generation.settings import PAPER_TEMPERATURE, answer_from_text
from protoqa_integrations.harnesses.task_functions import (
    logger,
    mean,
)

__all__ = [
    "LEADERBOARD_ENV",
    "answers_filter",
    "chat_answers_filter",
    "protoqa_chat_prompt",
    "cfc_chat_prompt",
    "cfc_chat_example",
    "chat_target",
    "mean_warning_collapsed",
    "process_test_results",
    "write_leaderboard",
]

LEADERBOARD_ENV = "PROTOQA_LEADERBOARD_FILE"
"""Where ``protoqa_test`` writes the leaderboard file (default ``protoqa_test.leaderboard.jsonl``)."""


def answers_filter(resps: Iterable[Sequence[str]], docs: Sequence[dict]) -> list[list[str]]:
    """Every sample of every question as a cleaned answer (``""`` for none), sample order kept.

    >>> answers_filter([["  Dog.", "\\ncat"]], [{}])
    [['dog', '']]
    """
    return [[answer_from_text(text) for text in samples] for samples in resps]


def chat_answers_filter(resps: Iterable[Sequence[str]], docs: Sequence[dict]) -> list[list[str]]:
    """Every chat reply of every question as its answer (:func:`~protoqa_integrations.generation.prompts.answer_from_reply`).

    >>> chat_answers_filter([["1. **Dog**", "Sure! Here's one: a cat."]], [{}])
    [['dog', 'a cat']]
    """
    return [[answer_from_reply(text) for text in samples] for samples in resps]


def protoqa_chat_prompt(doc: dict) -> str:
    """The user turn of the ProtoQA chat prompt (instruction and question).

    >>> protoqa_chat_prompt({"question": "name a pet."}).splitlines()[-1]
    'Q: name a pet?'
    """
    return protoqa_chat_messages(doc["question"])[-1]["content"]


def cfc_chat_prompt(doc: dict) -> str:
    """The user turn of a CFC question in the chat prompt; the worked example comes as a few-shot turn.

    >>> cfc_chat_prompt({"question": "a man reads. where is he?"})
    '[Q]: a man reads. where is he?'
    """
    return cfc_chat_messages(doc["question"])[-1]["content"]


def cfc_chat_example(*_args: Any) -> list[dict]:
    """The CFC one-shot example as a document, for the chat task's few-shot turn (user, then assistant).

    >>> cfc_chat_example()[0]["chat_target"]
    'into the lake'
    """
    first_turn = cfc_chat_messages(CFC_EXAMPLE[0])[0]["content"]
    return [{"id": "cfc-example", "question": CFC_EXAMPLE[0], "chat_text": first_turn, "chat_target": CFC_EXAMPLE[1]}]


def cfc_chat_text(doc: dict) -> str:
    """The user turn of a document: the example's own text, else :func:`cfc_chat_prompt`.

    >>> cfc_chat_text({"question": "a. b?"})
    '[Q]: a. b?'
    """
    return doc.get("chat_text") or cfc_chat_prompt(doc)


def chat_target(doc: dict) -> str:
    """The assistant turn of a few-shot document ("" for a question to answer).

    >>> chat_target({"chat_target": "into the lake"}), chat_target({"id": "q"})
    ('into the lake', '')
    """
    return doc.get("chat_target", "")


def mean_warning_collapsed(items: Sequence[tuple[str, bool]]) -> float:
    """The share of questions whose samples collapsed to one answer; a warning names them.

    A backend sending the same seed with every repeat (``local-completions``) gives such questions.

    >>> mean_warning_collapsed([("q1", True), ("q2", False)])
    0.5
    """
    collapsed = [qid for qid, flag in items if flag]
    if collapsed:
        logger.warning(
            "%d of %d questions got the same answer in more than %d%% of their samples at temperature "
            "%s: the backend may send a fixed seed with every request (use protoqa-local-completions or "
            "protoqa-local-chat-completions): %s",
            len(collapsed),
            len(items),
            int(COLLAPSE_SHARE * 100),
            PAPER_TEMPERATURE,
            ", ".join(collapsed[:10]),
        )
    return mean([1.0 if flag else 0.0 for _, flag in items])


def process_test_results(doc: dict, results: Sequence[Sequence[str]]) -> dict[str, tuple[str, list[str]]]:
    """A test question (no answers to score against): its id and ranked answers, for :func:`write_leaderboard`.

    >>> process_test_results({"id": "t1"}, [["dog", "cat", "dog", ""]])
    {'answered': ('t1', ['dog', 'cat'])}
    """
    return {"answered": (doc["id"], rank_by_frequency(results[0]))}


def write_leaderboard(items: Sequence[tuple[str, list[str]]]) -> float:
    """Write the ProtoQA leaderboard file (JSONL ``{id: [ranked answers]}``); returns the share answered.

    The file is ``$PROTOQA_LEADERBOARD_FILE`` (blank counts as unset, as for ``$PROTOQA_DATA_DIR``) or
    ``protoqa_test.leaderboard.jsonl`` in the working folder.
    """
    path = Path(env_setting(LEADERBOARD_ENV) or "protoqa_test.leaderboard.jsonl")

    def write(fh) -> None:
        for qid, ranked in items:
            fh.write(json.dumps({qid: list(ranked)}, ensure_ascii=False) + "\n")

    # A new temporary file replaces the name: a link planted there is never written through.
    write_output_file(path, write)
    logger.info(
        "protoqa_test: ranked answers of %d questions written to %s (ProtoQA leaderboard format)",
        len(items),
        path.resolve(),
    )
    return mean([1.0 if ranked else 0.0 for _, ranked in items])
