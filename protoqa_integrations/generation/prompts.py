"""Turning ProtoQA questions into language-model prompts, and sampled text into ranked answers.

The text side of the ProtoQA paper's GPT-2 baseline (docs/spec.md, section 3; the ranking is
:func:`protoqa_core.ranking.rank_by_frequency`), shared by training, evaluation and the Space.
Besides the paper's rules, :func:`question_to_prompt` takes the phrasings of the baseline's own
preprocessing (``iesl/ProtoQA_GPT2``: "Name someone" -> "One person", "Which ..." -> "One ...");
any other question falls back to its ``Q: <question>? A:`` frame. A replacement keeps the case of
the phrase it replaces, since ``question.normalized`` (the paper's training text) is lower-case.

A training line is ``prompt<TAB>answer.`` (the paper's ``finetune_train.txt``); a generation
prompt is ``prompt<TAB>``. The tab, unlike a space, is its own GPT-2 BPE token, so the prompt
tokenizes the same way in both.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Optional

__all__ = [
    "ANSWER_SEPARATOR",
    "END_OF_ANSWER",
    "question_to_prompt",
    "generation_prompt",
    "PROMPT_STYLES",
    "normalized_question",
    "prompt_for",
    "CFC_EXAMPLE",
    "cfc_prompt",
    "training_line",
    "clean_answer",
    "CHAT_INSTRUCTION",
    "MAX_REPLY_ANSWER_CHARS",
    "protoqa_chat_messages",
    "cfc_chat_messages",
    "answer_from_reply",
    "visible_text",
    "has_content",
]

ANSWER_SEPARATOR = "\t"
"""Between the prompt and the answer in training lines and generation prompts."""

END_OF_ANSWER = "."
"""Ends every answer in a training line; generated text is cut at the first sentence end."""

# (trigger, replacement), tried in this order at each clause start. Longer triggers
# come before their prefixes ("name something" before "name a").
_PROMPT_RULES: tuple[tuple[str, str], ...] = (
    # The ProtoQA paper's rules.
    ("name something", "one thing"),
    ("tell me something", "one thing"),
    ("how can you tell", "one way to tell"),
    ("name an", "one"),
    ("name a", "one"),
    ("give me an", "one"),
    ("give me a", "one"),
    # Same kind of phrasing, handled like the paper's baseline code.
    ("give me something", "one thing"),
    ("name someone", "one person"),
    ("tell me someone", "one person"),
    ("name somewhere", "one place"),
    ("name someplace", "one place"),
    ("tell me somewhere", "one place"),
    ("tell me someplace", "one place"),
    ("tell me an", "one"),
    ("tell me a", "one"),
    ("which", "one"),
)
_TRIGGER = "|".join(
    re.escape(trigger).replace(r"\ ", r"\s+") for trigger, _ in sorted(_PROMPT_RULES, key=lambda rule: -len(rule[0]))
)
# The earliest clause start (string start, or after , ; :) followed by a trigger word
# group. The non-greedy head makes the first such clause win.
_PROMPT_PATTERN = re.compile(
    rf"^(?P<head>(?:.*?[,;:]\s*)??)(?P<trigger>{_TRIGGER})\b(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_REPLACEMENT = dict(_PROMPT_RULES)
_TRAILING_PUNCTUATION = ".?!:;, \t\n\r"
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_LINE_BREAK = re.compile(r"[\n\r\t]")


def _match_case(replacement: str, original: str) -> str:
    if original.isupper() and len(original) > 1:
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _question_text(question: str, trailing: str = "") -> str:
    """``question`` with its white space collapsed and ``trailing`` characters cut from its end; never empty."""
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}")
    text = " ".join(question.split()).rstrip(trailing)
    if not text:
        raise ValueError(f"cannot make a prompt from an empty question: {question!r}")
    return text


def question_to_prompt(question: str) -> str:
    """The statement prefix a language model completes with an answer (rules in the module doc).

    >>> question_to_prompt("Name something people bring to a picnic.")
    'One thing people bring to a picnic is'
    >>> question_to_prompt("at the beach, name something that might protect you from sun")
    'at the beach, one thing that might protect you from sun is'
    >>> question_to_prompt("Give me an animal with stripes?")
    'One animal with stripes is'
    >>> question_to_prompt("At what age do kids start school?")
    'Q: At what age do kids start school? A:'
    """
    text = _question_text(question, _TRAILING_PUNCTUATION)
    match = _PROMPT_PATTERN.match(text)
    if match is None:
        return f"Q: {text}? A:"
    trigger = match.group("trigger")
    replacement = _REPLACEMENT[" ".join(trigger.lower().split())]
    return f"{match.group('head')}{_match_case(replacement, trigger)}{match.group('rest')} is"


def generation_prompt(question: str) -> str:
    """The text to feed a fine-tuned model to sample an answer: prompt and separator.

    >>> generation_prompt("Name a fruit.")
    'One fruit is\\t'
    """
    return question_to_prompt(question) + ANSWER_SEPARATOR


CFC_EXAMPLE = ("a man throws a stick into the lake for his dog. where does the man throw the stick?", "into the lake")
"""The one-shot example of :func:`cfc_prompt`: made up, in the style of CFC questions."""


def cfc_prompt(question: str) -> str:
    """A one-shot question-answer prompt for a CFC question (context sentence and question).

    >>> print(cfc_prompt("a farmer with newly harvested crops. where are the farmers?"))
    Q: a man throws a stick into the lake for his dog. where does the man throw the stick?
    A: into the lake.
    Q: a farmer with newly harvested crops. where are the farmers?
    A:
    """
    text = _question_text(question)
    example_question, example_answer = CFC_EXAMPLE
    return f"Q: {example_question}\nA: {example_answer}.\nQ: {text}\nA:"


PROMPT_STYLES: Mapping[str, Callable[[str], str]] = {
    "statement": question_to_prompt,
    "finetuned": generation_prompt,
    "cfc-one-shot": cfc_prompt,
}
"""Prompt style -> question-to-prompt function: ``statement`` (the rewrite of docs/spec.md, for any
language model), ``finetuned`` (the rewrite plus the tab separator of the ProtoQA
fine-tuning format) and ``cfc-one-shot`` (one worked CFC example, then the question)."""


def normalized_question(question: str) -> str:
    """A question as the data's ``question.normalized`` writes it: lower-case, whitespace collapsed.

    >>> normalized_question("  Name a   Fruit. ")
    'name a fruit.'
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}")
    return " ".join(question.split()).lower()


def prompt_for(question: str, style: str = "statement") -> str:
    """The prompt of a question in a prompt style (:data:`PROMPT_STYLES`), from its normalized text.

    The project's one prompt function (docs/training.md), so typed and normalized questions agree.

    >>> prompt_for("Name a fruit."), prompt_for("name a fruit", "finetuned")
    ('one fruit is', 'one fruit is\\t')
    """
    if style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {style!r}; choose one of {', '.join(PROMPT_STYLES)}")
    return PROMPT_STYLES[style](normalized_question(question))


def training_line(question: str, answer: str) -> str:
    """One fine-tuning example in the paper's ``prompt<TAB>answer.`` format.

    >>> training_line("name a fruit", "apple")
    'one fruit is\\tapple.'
    """
    answer = " ".join(answer.split())
    if not answer:
        raise ValueError(f"empty answer for question {question!r}")
    return generation_prompt(question) + answer + END_OF_ANSWER


def clean_answer(text: str, eos_token: Optional[str] = None) -> str:
    """The answer in a sampled continuation: up to the first end of sentence, line break or eos.

    >>> clean_answer(" Sun Screen. And a hat.")
    'sun screen'
    >>> clean_answer("\\tumbrella<|endoftext|>junk", eos_token="<|endoftext|>")
    'umbrella'
    >>> clean_answer("1.5 hours\\nmore text")
    '1.5 hours'
    """
    if eos_token:
        text = text.split(eos_token, 1)[0]
    text = _LINE_BREAK.split(text.lstrip(), 1)[0]
    end = _SENTENCE_END.search(text)
    if end is not None:
        text = text[: end.start()]
    return text.strip().lower()


CHAT_INSTRUCTION = (
    "Answer with one short phrase of a few words: the first answer that comes to mind. "
    "No explanation, no list, no full sentence."
)
"""What a chat model is asked to do, in the user turn before the question."""

MAX_REPLY_ANSWER_CHARS = 80
"""An answer taken from a chat reply is cut to this many characters (a whole reply is no answer)."""


def _user_turns(content: str, system_prompt: Optional[str]) -> list[dict[str, str]]:
    turns = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return turns + [{"role": "user", "content": content}]


def protoqa_chat_messages(question: str, system_prompt: Optional[str] = None) -> list[dict[str, str]]:
    """The chat prompt of a ProtoQA question: optional system turn, one user turn with the instruction.

    >>> protoqa_chat_messages("Name something people bring to a picnic.")[-1]["content"].splitlines()[-1]
    'Q: Name something people bring to a picnic?'
    >>> protoqa_chat_messages("name a fruit", system_prompt="You are terse.")[0]
    {'role': 'system', 'content': 'You are terse.'}
    """
    text = _question_text(question, _TRAILING_PUNCTUATION)
    return _user_turns(f"{CHAT_INSTRUCTION}\nQ: {text}?", system_prompt)


def cfc_chat_messages(question: str, system_prompt: Optional[str] = None) -> list[dict[str, str]]:
    """The CFC paper's one-shot "[Q]: ... / [A]: ..." prompt as chat turns, with :data:`CFC_EXAMPLE`.

    >>> [m["role"] for m in cfc_chat_messages("a man reads. where is he?")]
    ['user', 'assistant', 'user']
    >>> cfc_chat_messages("a man reads. where is he?")[1]["content"]
    'into the lake'
    """
    text = _question_text(question)
    example_question, example_answer = CFC_EXAMPLE
    turns = _user_turns(f"{CHAT_INSTRUCTION}\n[Q]: {example_question}", system_prompt)
    return turns + [{"role": "assistant", "content": example_answer}, {"role": "user", "content": f"[Q]: {text}"}]


# A leading "Sure! Here's one:" kind of clause: a short line or clause ending in a colon.
_PREAMBLE = re.compile(r"^[^:\n]{0,60}:\s*(?=\S)")
_ANSWER_LABEL = re.compile(r"^(?:\[?a\]?|answer)\s*:\s*", re.IGNORECASE)
_LIST_MARKER = re.compile(
    r"^(?:[-*+>\u2022\u2013\u2014]\s+|#{1,6}\s+|\(?\d{1,3}[.)]\s+|\(?[a-z][.)]\s+)", re.IGNORECASE
)
_MARKUP = re.compile(r"\*\*|__|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
_PREAMBLE_WORDS = re.compile(
    r"^(?:sure|of course|certainly|okay|ok|here|my answer|one (?:answer|thing|example)|"
    r"the answer|i'?d say|i would say)\b",
    re.IGNORECASE,
)
# A cell that only numbers or marks a table row: "#", "1", "2.", "-".
_ROW_LABEL = re.compile(r"#|no\.?|\d{1,3}[.)]?|[-*]", re.IGNORECASE)
_TABLE_RULE = re.compile(r"\|?(?:\s*:?-+:?\s*\|)+(?:\s*:?-+:?\s*)?")
_LIST_SEPARATOR = re.compile(r"\s*;\s*|\s*,\s*")


def visible_text(text: str) -> str:
    """``text`` without format characters (``Cf``: zero-width, bidi controls) and controls but line breaks and tabs.

    >>> visible_text("pi\\u200bzza\\u202e")
    'pizza'
    """
    return "".join(ch for ch in text if ch in "\n\r\t" or unicodedata.category(ch) not in ("Cf", "Cc"))


def has_content(text: str) -> bool:
    """Whether ``text`` has a character that is not punctuation (``P*``), a separator (``Z*``), white space or an
    invisible character (``Cf``, ``Cc``): a reply of dots, dashes or zero-width spaces says nothing.

    >>> has_content("..."), has_content("\\u200b\\u200b"), has_content("-- !"), has_content("42")
    (False, False, False, True)
    """
    return any(unicodedata.category(ch)[0] not in "PZC" and not ch.isspace() for ch in text)


def _table_rows(lines: list[str]) -> list[str]:
    """``lines`` without a markdown table's header and rule, each row as its first cell that is not a row number."""
    kept: list[str] = []
    previous_is_row = False
    for line in lines:
        if _TABLE_RULE.fullmatch(line):  # the rule under the header: | --- | :---: |
            if previous_is_row:
                kept.pop()  # the header row above it
            previous_is_row = False
            continue
        previous_is_row = line.startswith("|")
        if previous_is_row:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            line = next((cell for cell in cells if cell and not _ROW_LABEL.fullmatch(cell)), "")
        kept.append(line)
    return kept


def answer_from_reply(reply: str) -> str:
    """The answer in a chat model's reply; ``""`` when it holds none (rules: docs/api/protoqa_integrations.md).

    >>> answer_from_reply("1. Brush teeth")
    'brush teeth'
    >>> answer_from_reply("**Coffee**")
    'coffee'
    >>> answer_from_reply("Sure! Here's one: a beach towel. Enjoy!")
    'a beach towel'
    >>> answer_from_reply("Sure! Here's one:\\n\\n- \\"Sunscreen\\"\\n- Hat")
    'sunscreen'
    >>> answer_from_reply("A: into the river.")
    'into the river'
    >>> answer_from_reply("| # | answer |\\n|---|---|\\n| 1 | Sunscreen |")
    'sunscreen'
    >>> answer_from_reply("Sunscreen, a hat, a towel")
    'sunscreen'
    >>> answer_from_reply("..."), answer_from_reply("\\u200b\\u200d")
    ('', '')
    """
    lines = [line.strip() for line in visible_text(reply).replace("\r", "\n").split("\n")]
    lines = _table_rows([line for line in lines if has_content(line)])
    lines = [line for line in lines if has_content(line)]
    if not lines:
        return ""
    text = lines[0]
    if text.endswith(":") and len(text) <= 80:
        if len(lines) == 1:
            return ""  # only a preamble
        text = lines[1]
    elif _PREAMBLE_WORDS.match(text):
        text = _PREAMBLE.sub("", text, count=1)
    for _ in range(3):  # markers and markup nest in either order ("1. **Coffee**", "**1. Coffee**")
        text = _ANSWER_LABEL.sub("", text)
        text = _LIST_MARKER.sub("", text)
        text = _MARKUP.sub("", text).strip().strip(_QUOTES).strip()
    if ";" in text or text.count(",") >= 2:
        text = next((part for part in _LIST_SEPARATOR.split(text) if has_content(part)), "")
    answer = clean_answer(text)[:MAX_REPLY_ANSWER_CHARS].strip()
    return answer if has_content(answer) else ""
