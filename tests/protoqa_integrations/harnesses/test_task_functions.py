"""The task functions both harnesses share: a dataset row read as a question, its scores from the
cleaned samples (those of ``protoqa-eval`` and ``probeval``), the means and the signatures logged."""

from __future__ import annotations

import logging
import math

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Cluster, Question
from protoqa_core.signature import make_signature
from protoqa_integrations.harnesses.metric_names import METRIC_NAMES, SCORE_NAMES
from protoqa_integrations.harnesses.task_functions import (
    PARQUET_ENV,
    SIMILARITIES,
    load_split,
    mean,
    mean_logging_exact_match_signature,
    mean_logging_probeval_signature,
    mean_logging_wordnet_signature,
    parquet_from_env,
    process_results,
    question_from_doc,
)
from protoqa_metric.metric_set import PAPER_METRICS
from tests.support.paths import DATA

DOC = {
    "id": "q1",
    "question": "name a pet",
    "question_original": "Name a pet.",
    "clusters": {"id": ["q1.0", "q1.1", "q1.2"], "answers": [["dog", "puppy"], ["cat"], ["fish"]], "count": [6, 3, 1]},
}


def test_a_row_is_read_as_its_question_in_either_cluster_form():
    question = question_from_doc(DOC)
    assert question == Question(
        "q1",
        "name a pet",
        (Cluster("q1.0", ("dog", "puppy"), 6), Cluster("q1.1", ("cat",), 3), Cluster("q1.2", ("fish",), 1)),
        "Name a pet.",
    )
    records = [{"id": "q1.0", "answers": ["dog", "puppy"], "count": 6}, {"id": "q1.1", "answers": ["cat"], "count": 3}]
    assert (
        question_from_doc({"id": "q1", "question": "name a pet", "clusters": records}).clusters == question.clusters[:2]
    )
    unscored = question_from_doc({"id": "t1", "question": "name a pet", "clusters": None})  # a test row: no answers
    assert unscored.clusters == () and unscored.question_original == ""


def test_a_row_with_malformed_clusters_names_its_question():
    doc = {"id": "q7", "question": "name a pet", "clusters": {"answers": [["dog"]], "count": [1, 2]}}
    with pytest.raises(DataFormatError, match="q7") as error:
        question_from_doc(doc)
    assert "same length" in str(error.value)


def test_scores_are_the_paper_metrics_per_similarity_probeval_and_the_collapse_flag():
    scores = process_results(DOC, [["puppy", "cat", "dog", "cat", "snake", ""]])
    names = [SCORE_NAMES[f"{similarity}_{metric.name}"] for similarity in SIMILARITIES for metric in PAPER_METRICS]
    assert list(scores) == ["KL", *names, "collapsed"] == list(METRIC_NAMES)
    # Ranked by frequency: cat (2), then puppy, dog, snake, "" in first-seen order; puppy and dog are one cluster.
    assert scores["em_ans@1"] == pytest.approx(3 / 6)
    assert scores["em_ans@3"] == pytest.approx(9 / 10)
    assert scores["collapsed"] == ("q1", False)
    assert all(isinstance(scores[name], float) and 0.0 <= scores[name] <= 1.0 for name in names)


def test_the_kl_is_that_of_probeval_with_human_clusters_and_wordnet_matching():
    from cfc_probeval import evaluate_probeval

    samples = ["dogs", "cat", "cat", "fish", "hamster", "dog"]
    kl = process_results(DOC, [samples])["KL"]
    expected = evaluate_probeval([question_from_doc(DOC)], {"q1": samples}, clustering="human", matching="wordnet").kl
    assert kl == pytest.approx(float(expected), abs=1e-12) and kl > 0
    human = ["dog"] * 6 + ["cat"] * 3 + ["fish"]
    assert process_results(DOC, [human])["KL"] == pytest.approx(0.0, abs=1e-12)


def test_samples_that_all_say_the_same_are_flagged_collapsed():
    assert process_results(DOC, [["dog"] * 20])["collapsed"] == ("q1", True)
    empty = process_results(DOC, [[""] * 5])
    assert empty["wn_ans@1"] == 0.0 and empty["em_ans@10"] == 0.0


def test_mean_is_exactly_rounded_and_zero_for_no_values():
    assert mean([0.1] * 10) == 0.1 and sum([0.1] * 10) / 10 != 0.1
    assert mean([1e16, 1.0, -1e16]) == pytest.approx(1 / 3)
    assert mean([]) == 0.0
    assert mean(iter([1.0, 2.0])) == 1.5  # any sequence-like input, read once


def test_each_mean_logs_its_signature_under_the_harness_logger(caplog):
    with caplog.at_level(logging.INFO, logger="lm_eval"):
        assert mean_logging_wordnet_signature([0.5, 1.0]) == 0.75
        assert mean_logging_exact_match_signature([0.25]) == 0.25
        assert mean_logging_probeval_signature([0.1, 0.3]) == pytest.approx(0.2)
    records = [r for r in caplog.records if r.name == "lm_eval.protoqa_eval"]
    assert [r.getMessage().split(":")[0] for r in records] == [
        "protoqa signature (wordnet)",
        "protoqa signature (exact_match)",
        "probeval signature",
    ]
    assert records[0].getMessage().endswith(make_signature("wordnet", "paper", "zero", 2, all_stopword_match=True))
    assert records[1].getMessage().endswith(make_signature("exact_match", "paper", "zero", 1))
    assert "wordnet" in records[2].getMessage() and "human" in records[2].getMessage()


def test_the_parquet_export_variable_counts_as_unset_when_blank(monkeypatch):
    # lighteval's dataset_source reads it by this function too.
    monkeypatch.setenv(PARQUET_ENV, " \t")
    assert parquet_from_env() is None
    monkeypatch.setenv(PARQUET_ENV, " someone/protoqa-parquet ")
    assert parquet_from_env() == "someone/protoqa-parquet"
    monkeypatch.delenv(PARQUET_ENV)
    assert parquet_from_env() is None


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "cfc").is_dir(), reason=f"shared CFC data not found under {DATA}")
def test_a_split_is_read_from_the_data_folder_which_wins_over_the_parquet_export(monkeypatch):
    monkeypatch.setenv(PARQUET_ENV, "someone/not-read")
    monkeypatch.delenv("PROTOQA_DATA_DIR", raising=False)
    split = load_split("cfc", "test", data_dir=str(DATA), unknown_metadata="ignored")
    assert list(split) == ["test"] and split["test"].num_rows == 46
    row = split["test"][0]
    assert set(row) >= {"id", "question", "clusters"} and question_from_doc(row).id == row["id"]
    monkeypatch.setenv("PROTOQA_DATA_DIR", str(DATA))
    assert load_split("cfc", "test")["test"].to_list() == split["test"].to_list()


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "cfc").is_dir(), reason=f"shared CFC data not found under {DATA}")
def test_the_parquet_export_is_read_as_it_is_without_a_data_folder(monkeypatch, tmp_path):
    import datasets

    monkeypatch.delenv("PROTOQA_DATA_DIR", raising=False)
    from protoqa_integrations.harnesses.lighteval_tasks.utils import write_parquet_copy

    rows = [{"id": "p1", "question": "where?", "clusters": {"id": ["p1.0"], "answers": [["home"]], "count": [2]}}]
    export = write_parquet_copy(
        tmp_path, {("cfc", "validation"): datasets.Dataset.from_list(rows)}
    )  # the export's layout
    monkeypatch.setenv(PARQUET_ENV, str(export))
    split = load_split("cfc", "validation")
    assert split["validation"].to_list() == rows
    assert not math.isnan(process_results(split["validation"][0], [["home"]])["KL"])
