"""The options both command lines share: one spelling each, hidden aliases, bounds checked at parse time."""

from __future__ import annotations

import pytest

from protoqa_core.cli import OneLineParser
from protoqa_core.cli_options import (
    DEFAULT_MAX_ANSWERS,
    add_input_options,
    add_max_answers_option,
    add_per_question_option,
    add_quiet_option,
)


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="demo")
    add_input_options(parser, unanswered="score each as 0", quiet="progress lines")
    add_per_question_option(parser, "per-question scores as JSONL")
    add_max_answers_option(parser)
    return parser


def test_every_shared_option_together_on_one_parser_with_its_defaults():
    args = _parser().parse_args([])
    assert vars(args) == {
        "ignore_unknown": False,
        "only_predicted": False,
        "all_stopwords_zero": False,
        "quiet": False,
        "per_question": None,
        "overwrite": False,
        "max_answers": DEFAULT_MAX_ANSWERS,
    }
    given = _parser().parse_args(
        ["--ignore-unknown", "--all-stopwords-zero", "--no-progress", "--per-question", "q.jsonl", "--max-answers", "3"]
    )
    assert (given.ignore_unknown, given.all_stopwords_zero, given.quiet, given.per_question, given.max_answers) == (
        True,
        True,
        True,
        "q.jsonl",
        3,
    )


def test_help_names_the_command_specific_words_and_hides_the_aliases():
    text = " ".join(_parser().format_help().split())
    assert "score each as 0" in text and "no progress lines on stderr" in text
    assert "write per-question scores as JSONL (never over an input file; default: no such file)" in text
    assert f"(default {DEFAULT_MAX_ANSWERS};" in text
    assert "--no-progress" not in text and "--force" not in text


@pytest.mark.parametrize("value", ["0", "-5", "ten", "2.5"])
def test_a_bad_cap_is_one_line_naming_the_option(value, capsys):
    with pytest.raises(SystemExit) as stopped:
        _parser().parse_args(["--max-answers", value])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error == (f"demo: error: argument --max-answers: must be an integer >= 1, got {value!r} (see demo --help)\n")


def test_per_question_needs_its_file(capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["--per-question"])
    assert "argument --per-question: expected one argument" in capsys.readouterr().err


def test_the_quiet_option_alone_says_what_it_silences():
    parser = OneLineParser(prog="demo")
    add_quiet_option(parser, "bars")
    assert "no bars on stderr" in " ".join(parser.format_help().split())
    assert parser.parse_args(["--quiet"]).quiet
