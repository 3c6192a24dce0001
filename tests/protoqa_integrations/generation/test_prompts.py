"""Question -> prompt rules, answer clean-up (protoqa_integrations.generation.prompts)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protoqa_integrations.generation.prompts import (
    ANSWER_SEPARATOR,
    clean_answer,
    generation_prompt,
    question_to_prompt,
    training_line,
)

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


@pytest.mark.parametrize(
    "question, prompt",
    [
        # The ProtoQA paper's rules.
        ("Name something people bring to a picnic.", "One thing people bring to a picnic is"),
        ("name something people bring to a picnic", "one thing people bring to a picnic is"),
        ("Tell me something you do before bed?", "One thing you do before bed is"),
        ("Name a fruit that is red", "One fruit that is red is"),
        ("Name an animal with stripes!", "One animal with stripes is"),
        ("Give me a reason to call in sick.", "One reason to call in sick is"),
        ("Give me an excuse for being late", "One excuse for being late is"),
        ("How can you tell if someone is lying?", "One way to tell if someone is lying is"),
        # Case of the trigger decides the case of the replacement; the rest is kept.
        ("NAME SOMETHING IN A KITCHEN", "ONE THING IN A KITCHEN is"),
        ("name something New Yorkers eat", "one thing New Yorkers eat is"),
        # Trailing punctuation and whitespace, repeated or mixed, and inner whitespace.
        ("  Name   something   in a purse ?. ", "One thing in a purse is"),
        ("name something:", "one thing is"),
        # A trigger opening a later clause.
        (
            "at the beach, name something that might protect you from sun",
            "at the beach, one thing that might protect you from sun is",
        ),
        ("Besides food; give me an item with an expiry date", "Besides food; one item with an expiry date is"),
        # The baseline code's extra phrasings.
        ("Tell me someone you call for help", "One person you call for help is"),
        ("Name someplace people go on a date", "One place people go on a date is"),
        ("Tell me a word that rhymes with cat", "One word that rhymes with cat is"),
        ("Which animal is the best pet?", "One animal is the best pet is"),
        # Triggers are whole words: "another", "namely", "whichever" do not match.
        ("Name another word for big", "Q: Name another word for big? A:"),
        ("Whichever way you go, what do you see?", "Q: Whichever way you go, what do you see? A:"),
        # Fallback.
        ("At what age do kids start school?", "Q: At what age do kids start school? A:"),
        ("why do people yawn", "Q: why do people yawn? A:"),
    ],
)
def test_question_to_prompt(question, prompt):
    assert question_to_prompt(question) == prompt


def test_the_first_clause_with_a_trigger_wins():
    assert question_to_prompt("name something, name a thing") == "one thing, name a thing is"
    assert question_to_prompt("in winter, name a sport, please") == "in winter, one sport, please is"


def test_docstring_examples():
    import doctest

    import protoqa_integrations.generation.prompts

    result = doctest.testmod(protoqa_integrations.generation.prompts)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("question", ["", "   ", "?!.", 42])
def test_question_to_prompt_rejects_non_questions(question):
    with pytest.raises((ValueError, TypeError)):
        question_to_prompt(question)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60))
def test_every_question_gets_a_one_line_prompt(text):
    stripped = " ".join(text.split()).rstrip(".?!:;, \t\n\r")
    if not stripped:
        with pytest.raises(ValueError):
            question_to_prompt(text)
        return
    prompt = question_to_prompt(text)
    assert prompt.endswith(" is") or (prompt.startswith("Q: ") and prompt.endswith("? A:"))
    assert "\n" not in prompt and "\t" not in prompt


def test_training_line_and_generation_prompt_share_the_prefix():
    line = training_line("Name a fruit.", "  green   apple ")
    assert line == "One fruit is\tgreen apple."
    assert line.startswith(generation_prompt("Name a fruit."))
    assert generation_prompt("Name a fruit.").endswith(ANSWER_SEPARATOR)
    with pytest.raises(ValueError):
        training_line("Name a fruit.", "  ")


def test_prompts_reproduce_the_papers_training_file():
    """For questions the paper's code handled plainly, our lines are the paper's lines."""
    scraped = DATA / "protoqa" / "dev.scraped.jsonl"
    paper = DATA / "protoqa_gpt2_format" / "dev.txt"
    if not (scraped.is_file() and paper.is_file()):
        pytest.skip(f"shared data not found under {DATA}")
    from protoqa_metric import read_targets

    paper_lines = set(paper.read_text(encoding="utf-8").splitlines())
    # The paper's code also deleted every '.', ':' and '?' and rewrote words such as
    # "someone" and "name" anywhere in the question; questions where that matters
    # are left out.
    plain = re.compile(r"^(name something|tell me something|name an? |give me an? |how can you tell) ")
    rewritten_elsewhere = re.compile(r"[.:?]|someone|someplace|name|which|what|tell me")
    compared = 0
    for question in read_targets(scraped).values():
        text = question.question.rstrip(".?!: ")
        head = plain.match(text)
        if head is None or rewritten_elsewhere.search(text[head.end() :]):
            continue
        for cluster in question.clusters:
            assert training_line(question.question, cluster.answers[0]) in paper_lines, question.question
        compared += 1
    assert compared > 300


@pytest.mark.parametrize(
    "text, answer",
    [
        (" Sun Screen. And a hat.", "sun screen"),
        ("\tumbrella.", "umbrella"),
        ("Dog!", "dog"),
        ("is it a cat? maybe", "is it a cat"),
        ("1.5 hours", "1.5 hours"),
        ("st.louis", "st.louis"),
        ("beach towel\nsecond line", "beach towel"),
        ("hat\tnext prompt is\tx.", "hat"),
        ("  ", ""),
        (".", ""),
        ("", ""),
    ],
)
def test_clean_answer(text, answer):
    assert clean_answer(text) == answer


def test_clean_answer_cuts_at_the_eos_token():
    assert clean_answer(" Pizza<|endoftext|>more. text", eos_token="<|endoftext|>") == "pizza"
    assert clean_answer(" Pizza[EOS]", eos_token="[EOS]") == "pizza"
    assert clean_answer("Pizza", eos_token=None) == "pizza"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_clean_answer_is_one_stripped_lower_case_line_and_idempotent(text):
    answer = clean_answer(text)
    assert answer == answer.strip() == answer.lower()
    assert "\n" not in answer and "\t" not in answer
    assert clean_answer(answer) == answer
