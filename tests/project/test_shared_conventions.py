"""What several packages share: the two metrics' messages for the same input errors and their
command-line conventions (sub-commands, the default sub-command, input option names), and the one
frequency ranker behind every surface that ranks samples."""

from __future__ import annotations

import warnings

import pytest

from cfc_probeval import cli as probeval_cli
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Cluster, Question
from protoqa_core.ranking import rank_by_frequency
from protoqa_metric import cli as metric_cli
from protoqa_metric import evaluate_predictions


def test_both_libraries_give_the_same_unknown_id_message():
    from cfc_probeval import evaluate_probeval

    q = Question("q1", "", (Cluster("q1.0", ("dog",), 3),))
    with pytest.raises(DataFormatError) as protoqa_error:
        evaluate_predictions([q], {"q1": ["dog"], "zz": ["x"]}, "exact_match")
    with pytest.raises(DataFormatError) as probeval_error:
        evaluate_probeval([q], {"q1": ["dog"], "zz": ["x"]}, clustering="human")
    assert str(protoqa_error.value) == str(probeval_error.value)
    with pytest.warns(UserWarning) as protoqa_warned:
        protoqa = evaluate_predictions([q], {"q1": ["dog"], "zz": ["x"]}, "exact_match", ignore_unknown=True)
    with pytest.warns(UserWarning) as probeval_warned:
        probeval = evaluate_probeval([q], {"q1": ["dog"], "zz": ["x"]}, clustering="human", ignore_unknown=True)
    assert protoqa.ignored == probeval.ignored == ["zz"]
    assert {str(w.message) for w in protoqa_warned} & {str(w.message) for w in probeval_warned} == {
        "ignored predictions for 1 question id(s) that are not in the targets: zz"
    }


@pytest.mark.parametrize("parse", [metric_cli.parse_args, probeval_cli.parse_args])
def test_help_lists_both_sub_commands(capsys, parse):
    with pytest.raises(SystemExit) as done:
        parse(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "evaluate" in out and "compare" in out


@pytest.mark.parametrize("parse", [metric_cli.parse_args, probeval_cli.parse_args])
def test_without_a_sub_command_evaluate_is_meant(parse):
    assert parse(["t.jsonl", "p.json"]).command == "evaluate"
    assert parse(["--json", "t.jsonl", "p.json"]).command == "evaluate"
    assert parse(["compare", "t.jsonl", "a.json", "b.json"]).command == "compare"


@pytest.mark.parametrize("parse", [metric_cli.parse_args, probeval_cli.parse_args])
def test_both_commands_share_the_input_option_names(parse):
    args = parse(["t.jsonl", "p.json", "--ignore-unknown", "--only-predicted", "--all-stopwords-zero", "--quiet"])
    assert (args.ignore_unknown, args.only_predicted, args.all_stopwords_zero, args.quiet) == (True, True, True, True)
    assert parse(["t.jsonl", "p.json", "--no-progress"]).quiet is True


def test_both_commands_report_progress_by_default():
    assert metric_cli.parse_args(["t", "p"]).quiet is False
    assert probeval_cli.parse_args(["t", "p"]).quiet is False


@pytest.mark.parametrize(
    "parse, spelling",
    [
        (metric_cli.parse_args, "--stopword-answers-score-zero"),
        (probeval_cli.parse_args, "--only-sampled"),
    ],
)
def test_spellings_of_no_release_are_usage_errors(capsys, parse, spelling):
    with pytest.raises(SystemExit) as stop:
        parse(["t.jsonl", "p.json", spelling])
    assert stop.value.code == 2 and f"unrecognized arguments: {spelling}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "main, prog", [(metric_cli.main, "protoqa-eval compare"), (probeval_cli.main, "probeval compare")]
)
def test_compare_sub_command_usage_errors_are_one_line(capsys, main, prog):
    with pytest.raises(SystemExit) as done:
        main(["compare", "only_targets.jsonl"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{prog}: error:")


NIGHT = ["Night", "Night", "night", "night", "evening", "evening", "evening"]


def test_every_surface_ranks_the_night_example_the_same():
    """Training hooks, generate, the lm-eval tasks, the leaderboard and the study all use the core ranker."""
    from protoqa_core.io.records import Cluster, Question
    from protoqa_integrations.generation.answers_file import answers_document
    from protoqa_integrations.harnesses.lm_eval_tasks.harness import process_test_results
    from protoqa_integrations.training.samples import score_sampled_answers

    question = Question("q", "when do you sleep", (Cluster("q.0", ("night",), 6), Cluster("q.1", ("evening",), 4)))
    assert process_test_results({"id": "q"}, [NIGHT]) == {"answered": ("q", ["night", "evening"])}
    assert answers_document([question], {"q": NIGHT}, {}, {})["model_answers_with_count"] == {
        "q": [["night", 4], ["evening", 3]]
    }
    # Ranked "night" first, Max Answers@1 claims the 6 of the bigger cluster.
    assert score_sampled_answers([question], [NIGHT], similarity="exact_match", metrics=["max_answers@1"]) == {
        "protoqa_exact_match_max_answers_at_1": 1.0
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from studies.validation.leaderboard import rank_by_frequency as leaderboard_ranker
        from studies.validation.study import baseline_score
    assert leaderboard_ranker is rank_by_frequency
    rows = {"night": [1.0, 0.0], "evening": [0.0, 1.0]}
    assert (
        baseline_score({"Night": 2, "night": 2, "evening": 3}, question.clusters, rows.__getitem__, max_answers=1)
        == 0.0
    )
    # A drawn answer set's order says which gold cluster each answer came from: the study's
    # baseline breaks ties alphabetically instead, whatever the order of the set.
    for answers in ({"night": 2, "evening": 2}, {"evening": 2, "night": 2}):
        assert baseline_score(answers, question.clusters, rows.__getitem__, max_answers=1) == pytest.approx(1 / 3)
