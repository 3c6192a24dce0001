"""A declared option checks a value the same way in the library and on the command line."""

from __future__ import annotations

import argparse
import math

import pytest

from protoqa_core.options import Option

LEVEL = Option("level", float, 0.1, "level", low=0, high=1, low_open=True, choices=(0.1, 0.5))
WORD = Option("word", str, "a", "word", choices=("a", "b"))
COUNT = Option("count", int, 0, "count", low=0, high=2**32 - 1)


@pytest.mark.parametrize(
    "option, value",
    [(LEVEL, 0.2), (LEVEL, math.nan), (LEVEL, True), (LEVEL, "0.5"), (WORD, "c"), (COUNT, 2**32), (COUNT, 1.0)],
)
def test_a_value_outside_the_declaration_is_refused_naming_the_option(option, value):
    with pytest.raises(ValueError) as error:
        option.check(value)
    assert str(error.value) == f"{option.name} must be {option.accepts}, got {value!r}"


def test_the_accepted_values_are_written_from_the_declaration():
    assert Option("n", int, 1, "n", low=1).accepts == "an integer >= 1"
    assert Option("x", float, 0.5, "x", low=0, high=1, high_open=True).accepts == "a number in [0, 1)"
    assert Option("a", float, 0.1, "a", low=0, high=1, low_open=True, high_open=True, choices=(0.1,)).accepts == (
        "one of 0.1 (a level in (0, 1))"
    )
    with pytest.raises(TypeError, match="kind must be int, float, str or object"):
        Option("b", bool, True, "b")


def test_an_option_the_plug_in_checks_itself_passes_any_value_and_reads_a_number_from_its_flag():
    rule = Option("rule", object, None, "a number or a rule", metavar="RULE")
    assert rule.check("median*2") == "median*2" and rule.check(1) == 1
    assert rule.parse()("1e-3") == 0.001 and rule.parse()("fit") == "fit"
    assert (rule.flag, rule.metavar, rule.label) == ("--rule", "RULE", "rule")


def test_a_flag_refuses_what_the_library_refuses_at_an_open_end():
    parse = Option("x", float, 0.5, "x", low=0, high=1, high_open=True).parse()
    assert parse("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError):
        parse("1")
    assert Option("n", int, 1, "n", low=1).parse()("3") == 3
