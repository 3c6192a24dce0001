"""ProbEval's declared options (the seed, the threshold, each clustering's) check a value the same way in
the library and on the command line."""

from __future__ import annotations

import argparse
import math

import pytest

from cfc_probeval import clustering_options
from cfc_probeval.options import SEED, THRESHOLD


@pytest.mark.parametrize(
    "option, value",
    [
        (THRESHOLD, math.nan),
        (THRESHOLD, math.inf),
        (THRESHOLD, True),
        (THRESHOLD, "0.5"),
        (SEED, 2**32),
        (SEED, 1.0),
    ],
)
def test_a_value_outside_the_declaration_is_refused_naming_the_option(option, value):
    with pytest.raises(ValueError) as error:
        option.check(value)
    assert str(error.value) == f"{option.name} must be {option.accepts}, got {value!r}"


def test_each_declared_flag_parses_what_the_library_accepts_at_its_edges():
    for name, owners in clustering_options().items():
        option = owners[0][1]
        if option.kind is str:
            assert all(option.check(c) == c for c in option.choices)
            continue
        parse = option.parse()
        for edge, is_open in ((option.low, option.low_open), (option.high, option.high_open)):
            if edge is None:
                continue
            text = str(int(edge)) if option.kind is int else repr(float(edge))
            if is_open:
                with pytest.raises(argparse.ArgumentTypeError):
                    parse(text)
            elif not option.choices:
                assert option.check(parse(text)) == edge, name
        assert option.check(option.default) == option.default, name
