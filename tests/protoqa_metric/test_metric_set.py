"""The metric sets and the data-set result: which metrics a name asks for, the errors for a name
no set knows, the JSON a result prints and the table that compares similarities."""

from __future__ import annotations

import json
import re
from array import array

import pytest

from protoqa_metric.metric_set import (
    METRIC_SETS,
    PAPER_METRICS,
    STANDARD_METRICS,
    EvaluationResult,
    MetricSpec,
    format_table,
    metric_specs,
)
from tests.support.metric_names import STANDARD_NAMES


def test_the_sets_name_the_reference_evaluators_metrics_in_its_order():
    assert [m.name for m in metric_specs()] == list(STANDARD_NAMES)
    assert metric_specs("standard") is STANDARD_METRICS and metric_specs("paper") is PAPER_METRICS
    assert [m.name for m in PAPER_METRICS] == [n for n in STANDARD_NAMES if "@all" not in n and "set" not in n]
    assert list(METRIC_SETS) == ["standard", "paper"]


@pytest.mark.parametrize("spec", STANDARD_METRICS, ids=lambda spec: spec.name)
def test_each_metrics_name_says_its_limits(spec):
    # The name is the key of --json output: it must describe what is computed.
    match = re.fullmatch(r"(max_answers|max_incorrect)@(\d+|all)", spec.name)
    if match is None:
        assert spec == MetricSpec("set_intersection", weighted=False)
        return
    limit = None if match[2] == "all" else int(match[2])
    other = "max_incorrect" if match[1] == "max_answers" else "max_answers"
    assert getattr(spec, match[1]) == limit and getattr(spec, other) is None and spec.weighted


def test_metrics_asked_by_name_keep_the_order_asked():
    names = ["set_intersection", "max_answers@1"]
    assert [m.name for m in metric_specs(names)] == names
    assert [m.name for m in metric_specs(iter(names))] == names
    assert [m.name for m in metric_specs(" set_intersection , max_answers@1,")] == names


def test_an_unknown_metric_names_every_choice():
    with pytest.raises(ValueError) as error:
        metric_specs("max_answers@2")
    assert str(error.value) == (
        "unknown metric 'max_answers@2'; choose from " + ", ".join(STANDARD_NAMES) + " or a set: standard, paper"
    )
    with pytest.raises(ValueError, match="unknown metric 'Standard'"):
        metric_specs("Standard")  # set names are case-sensitive, as metric names are
    with pytest.raises(ValueError, match="unknown metric 'paper'"):
        metric_specs(["paper"])  # a list holds metric names, not set names


@pytest.mark.parametrize("names", ["", " , ", []], ids=["empty", "commas", "no-names"])
def test_asking_for_no_metric_is_an_error_not_an_empty_result(names):
    with pytest.raises(ValueError, match="^no metric given; choose from max_answers@1, .* or a set: standard, paper$"):
        metric_specs(names)


@pytest.mark.parametrize(
    "names",
    ["max_answers@1,max_answers@1", "max_answers@1, set_intersection ,max_answers@1", ["max_answers@1"] * 2],
    ids=["text", "spaced", "list"],
)
def test_a_metric_asked_twice_is_an_error_naming_it(names):
    # Its score would be one key of --json and one row of the table: the second would be silently merged.
    with pytest.raises(ValueError, match="^metric 'max_answers@1' is given twice; name each metric once$"):
        metric_specs(names)


def test_metric_specs_given_as_objects_pass_through_and_are_checked_by_name():
    custom = MetricSpec("max_answers@2", max_answers=2)
    assert metric_specs([custom, "max_answers@1"]) == (custom, STANDARD_METRICS[0])
    with pytest.raises(ValueError, match="^metric 'max_answers@1' is given twice"):
        metric_specs([STANDARD_METRICS[0], MetricSpec("max_answers@1", max_answers=3)])
    with pytest.raises(ValueError, match="^metric 'max_answers@1' is given twice"):
        metric_specs(["max_answers@1", STANDARD_METRICS[0]])


def test_the_json_of_a_result_is_its_scores_then_its_signature():
    result = EvaluationResult(
        {"max_answers@1": 0.25, "set_intersection": 0.5},
        {},
        2,
        missing=["q3"],
        signature="sim:wordnet|n:2",
        question_ids=["q1", "q2"],
        question_scores={"max_answers@1": array("d", [0.0, 0.5])},
    )
    assert result.as_dict() == {"max_answers@1": 0.25, "set_intersection": 0.5, "signature": "sim:wordnet|n:2"}
    assert list(result.as_dict()) == ["max_answers@1", "set_intersection", "signature"]
    result.exact_match_only = False  # set for learned similarities only, and then printed even when False
    assert json.loads(json.dumps(result.as_dict()))["exact_match_only"] is False
    result.scores["max_answers@1"] = 1.0
    assert result.as_dict()["max_answers@1"] == 1.0  # a fresh dict each time, never a stale copy


def test_fresh_results_share_no_lists():
    first, second = EvaluationResult({}, {}, 0), EvaluationResult({}, {}, 0)
    first.missing.append("q1")
    first.question_scores["m"] = array("d")
    assert second.missing == [] and second.question_scores == {}


def test_the_table_puts_similarities_in_columns_and_signatures_below():
    results = {
        "exact_match": EvaluationResult({"max_answers@1": 0.5, "max_incorrect@all": 1 / 3}, {}, 3, signature="s1"),
        "lcs": EvaluationResult({"max_answers@1": 0.0, "max_incorrect@all": 1.0}, {}, 3, signature="s2"),
    }
    assert format_table(results).splitlines() == [
        "metric             exact_match     lcs",
        "max_answers@1           0.5000  0.0000",
        "max_incorrect@all       0.3333  1.0000",
        "",
        "exact_match: s1",
        "lcs: s2",
    ]


def test_the_table_of_no_result_is_its_header_alone():
    # As the leaderboard's table of no system: the header, nothing else.
    assert format_table({}) == "metric"


def test_a_table_of_results_with_other_metrics_names_what_differs():
    results = {
        "exact_match": EvaluationResult({"max_answers@1": 0.5}, {}, 3, signature="s1"),
        "lcs": EvaluationResult({"max_incorrect@1": 0.0}, {}, 3, signature="s2"),
    }
    with pytest.raises(ValueError, match=re.escape("lcs scores max_incorrect@1, exact_match scores max_answers@1")):
        format_table(results)
