"""The validation studies' RoBERTa arm: the matching study at the papers' threshold and the length
scale chosen on folds, on a tiny random RoBERTa built here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.lazy import require
from tests.support.processes import run_python

require("torch")
require("transformers")
require("tokenizers")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[2]


def test_the_matching_study_has_a_roberta_arm_at_the_papers_threshold(tiny_roberta, shared_data):
    from studies.validation.matching_study import ROBERTA_THRESHOLD, run_matching_study

    result = run_matching_study(shared_data, matchers=["exact_match", "roberta"], num_questions=3, encoder=tiny_roberta)
    arm = result["matchers"]["roberta"]
    assert arm["threshold"] == ROBERTA_THRESHOLD == 0.1 and arm["tuned"] is False
    assert arm["similarity"].startswith("roberta(tiny-roberta@") and arm["questions_covered"] == 3
    # Identical strings go to their cluster first, so recall is at least exact matching's.
    assert arm["weighted"]["recall"] >= result["matchers"]["exact_match"]["weighted"]["recall"]
    assert arm["by_threshold_in_sample"]["0.1"] == {k: arm["weighted"][k] for k in ("precision", "recall", "f1")}
    with pytest.raises(ValueError, match="needs an encoder"):
        run_matching_study(shared_data, matchers=["roberta"], num_questions=1)


@pytest.mark.slow
def test_the_length_scale_is_chosen_on_folds_and_reported_held_out(tiny_roberta, shared_data, tmp_path):
    from studies.validation.matching_study import run_length_scale_study, run_matching_study

    rules = (1.0, "median*0.5", "median")
    result = run_length_scale_study(shared_data, tiny_roberta, rules=rules, num_questions=4, folds=2)
    assert result["rules"] == ["1", "median*0.5", "median"] and result["chosen"] in result["rules"]
    assert set(result["roberta_held_out"]["fold_rules"]) == {"0", "1"}
    per_rule = result["rules_in_sample"]
    assert result["roberta_held_out"]["similarity"] == per_rule[result["chosen"]]["similarity"]
    assert per_rule["median*0.5"]["similarity"].endswith(",gp-rbf:median*0.5,thr=0.1,unvalidated)")
    assert per_rule["1"]["similarity"].endswith(",gp-rbf:l=1,thr=0.1,unvalidated)")
    for figures in per_rule.values():
        assert 0 <= figures["non_identical_accepted"] <= figures["non_identical_answers"] > 0
    # The chosen rule has the best in-sample F1 of all (ties: the earlier rule).
    f1s = [per_rule[r]["in_sample"]["weighted"]["f1"] for r in result["rules"]]
    assert result["chosen"] == result["rules"][f1s.index(max(f1s))]
    baseline = run_matching_study(shared_data, matchers=["exact_match"], num_questions=4, folds=2)
    assert result["exact_match"]["weighted"] == baseline["matchers"]["exact_match"]["weighted"]
    assert result["within_cluster_distance"]["pairs"] > 0 and result["within_cluster_distance"]["median"] > 0
    with pytest.raises(ValueError, match="repeat"):
        run_length_scale_study(shared_data, tiny_roberta, rules=("median", "median*1"), num_questions=1)
    run = run_python(
        ["-m", "studies.validation.matching_study", "--choose-length-scale"],
        tmp_path,
        {**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert run.returncode == 2 and "--choose-length-scale needs --encoder" in run.stderr
