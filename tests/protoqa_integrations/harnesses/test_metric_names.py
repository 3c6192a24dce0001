"""The short names every harness reports the scores under: distinct, whole in 80 columns, KL first when sorted."""

from __future__ import annotations

from protoqa_integrations.harnesses.metric_names import HIGHER_IS_BETTER, METRIC_NAMES, SCORE_NAMES
from protoqa_metric.metric_set import PAPER_METRICS


def test_every_score_has_one_distinct_short_name_and_kl_comes_first():
    long_names = [f"{sim}_{metric.name}" for sim in ("wordnet", "exact_match") for metric in PAPER_METRICS]
    assert list(SCORE_NAMES) == ["probeval_kl", *long_names, "collapsed"]
    assert len(set(METRIC_NAMES)) == len(METRIC_NAMES) == 16
    assert METRIC_NAMES[0] == "KL" and all(len(name) <= 9 for name in METRIC_NAMES)


def test_kl_sorts_before_every_other_name_as_lm_evals_table_orders_them():
    # lm-eval's make_table sorts "metric,filter" keys; the stderr keys sort in between and are skipped there
    keys = sorted(f"{name}{suffix},answers" for name in METRIC_NAMES for suffix in ("", "_stderr"))
    assert [key for key in keys if "_stderr" not in key][0] == "KL,answers"


def test_only_the_kl_and_the_collapse_share_are_better_lower():
    assert {name for name, higher in HIGHER_IS_BETTER.items() if not higher} == {"KL", "collapsed"}
    assert HIGHER_IS_BETTER["wn_ans@1"] and HIGHER_IS_BETTER["em_inc@5"]
