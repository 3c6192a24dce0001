"""The answers file: sampled through an engine (seeds, journal, resume, lock, warnings, run details),
its outputs checked before any work, and scored against the questions it records or is given.

The engine here is a small stand-in that records what it is asked; the real engines write answers
files in test_generation.py and engines/test_engines_real.py.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest

from protoqa_core.io.records import Cluster, Question
from protoqa_integrations.generation.answers_file import (
    GeneratedScores,
    answers_document,
    check_generate_outputs,
    generate_answers_file,
    score_generated,
)
from protoqa_integrations.generation.answers_journal import AnswersFileError, journal_path, lock_path, seal_record
from protoqa_integrations.generation.engines import Engine, EngineError
from protoqa_integrations.generation.provenance import ProvenanceError
from protoqa_integrations.generation.settings import PromptSamples, SamplingConfig, prompt_function

PET = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
FRUIT = Question("q2", "name a fruit", (Cluster("q2.0", ("apple",), 7), Cluster("q2.1", ("banana",), 3)))
DRINK = Question("q3", "name a drink", (Cluster("q3.0", ("water",), 5),))
CONFIG = SamplingConfig(num_samples=12, batch_size=4, seed=10)
HEADER = {"engine": "stand-in", "dataset": "protoqa", "split": "validation", "sampling": CONFIG.signature()}


class StandIn(Engine):
    """Answers each prompt with the texts of ``answers`` (by prompt text); ``fail_after`` prompts, then an error."""

    name = "stand-in"

    def __init__(self, answers: dict[str, list[str]], fail_after: int = -1, skip: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.answers, self.fail_after, self.skip = answers, fail_after, skip
        self.asked: list[tuple[list, list[int]]] = []

    def describe(self):
        return {"engine": self.name, "model": "stand-in"}

    def _sample(self, prompts, config, seeds, progress):
        self.asked.append((list(prompts), list(seeds)))
        for index, prompt in enumerate(prompts):
            if index == self.fail_after:
                raise EngineError("the server went away")
            if prompt in self.skip:
                yield PromptSamples(index, skipped="the prompt is longer than the context")
                continue
            answers = self.answers[prompt][: config.num_samples]
            self.usage["completion_tokens"] = self.usage.get("completion_tokens", 0) + len(answers)
            yield PromptSamples(index, list(answers), list(answers))


PROMPT = prompt_function("statement")
ANSWERS = {
    PROMPT(PET.question): ["dog", "cat", "dog", ""] * 3,
    PROMPT(FRUIT.question): ["apple", "banana", "kiwi", "apple"] * 3,
    PROMPT(DRINK.question): ["water"] * 12,  # at least 10 samples, all the same: collapsed
}


def generate(engine, output, questions=(PET, FRUIT, DRINK), **options):
    return generate_answers_file(
        engine, list(questions), output, config=CONFIG, prompt_style="statement", header=HEADER, **options
    )


def test_every_question_is_sampled_under_seed_plus_its_position_and_written_with_the_run_details(tmp_path):
    engine = StandIn(ANSWERS)
    output, board = tmp_path / "a.json", tmp_path / "a.leaderboard.jsonl"
    # Twelve identical samples at temperature 0.69: warned about and listed.
    with pytest.warns(UserWarning, match=r"1 question\(s\) got nearly the same answer in every sample at .*: q3$"):
        document = generate(engine, output, leaderboard=board)
    assert engine.asked == [([PROMPT(q.question) for q in (PET, FRUIT, DRINK)], [10, 11, 12])]
    assert json.loads(output.read_text()) == document
    assert document["model_answers"] == {q.id: ANSWERS[PROMPT(q.question)] for q in (PET, FRUIT, DRINK)}
    assert document["model_ranked_answers"]["q1"] == ["dog", "cat"]
    generation = document["generation"]
    assert {k: generation[k] for k in HEADER} == HEADER
    assert generation["empty_samples"] == {"q1": 3} and generation["num_questions"] == 3
    assert generation["engine_details"] == {"engine": "stand-in", "model": "stand-in"}
    assert generation["usage"] == {"completion_tokens": 36}
    assert generation["collapsed_questions"] == ["q3"]
    assert [json.loads(line) for line in board.read_text().splitlines()] == [
        {"q1": ["dog", "cat"]},
        {"q2": ["apple", "banana", "kiwi"]},
        {"q3": ["water"]},
    ]
    assert not journal_path(output).exists() and not lock_path(output).exists()


@pytest.mark.filterwarnings("ignore:1 question.s. got nearly the same answer")
def test_an_interrupted_run_keeps_what_it_drew_and_the_next_run_asks_only_for_the_rest(tmp_path):
    output = tmp_path / "a.json"
    with pytest.raises(EngineError, match="the server went away"):
        generate(StandIn(ANSWERS, fail_after=1), output)
    journal = [json.loads(line) for line in journal_path(output).read_text().splitlines()]
    assert journal[0] == seal_record({"header": HEADER}) and [r["id"] for r in journal[1:]] == ["q1"]
    assert not output.exists() and not lock_path(output).exists()
    engine = StandIn(ANSWERS)
    document = generate(engine, output)
    assert engine.asked == [([PROMPT(FRUIT.question), PROMPT(DRINK.question)], [11, 12])]  # same seeds as a whole run
    assert document["model_answers"] == generate(StandIn(ANSWERS), tmp_path / "whole.json")["model_answers"]
    assert document["generation"]["usage"] == {"completion_tokens": 36}  # the first run's tokens counted too


def test_a_journal_of_other_settings_is_refused_before_any_sampling(tmp_path):
    output = tmp_path / "a.json"
    journal_path(output).write_text(json.dumps({"header": {**HEADER, "sampling": "other"}}) + "\n")
    engine = StandIn(ANSWERS)
    with pytest.raises(AnswersFileError, match=r"other settings \(differing: sampling\)"):
        generate(engine, output)
    assert engine.asked == [] and not output.exists()


def test_a_skipped_question_is_warned_about_and_recorded_with_its_reason(tmp_path):
    engine = StandIn(ANSWERS, skip=(PROMPT(FRUIT.question),))
    with pytest.warns(UserWarning, match="^question 'q2' skipped: the prompt is longer than the context$"):
        document = generate(engine, tmp_path / "a.json", questions=(PET, FRUIT))
    assert document["generation"]["skipped"] == {"q2": "the prompt is longer than the context"}
    assert document["model_answers"]["q2"] == [] and document["generation"]["questions_without_answer"] == []


def test_a_second_run_on_the_same_output_is_refused_before_any_sampling(tmp_path):
    output = tmp_path / "a.json"
    lock_path(output).write_text("4242\n")
    fd = os.open(lock_path(output), os.O_RDWR)  # another run's hold: a lock through another open of the file
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        engine = StandIn(ANSWERS)
        with pytest.raises(AnswersFileError, match=r"another run \(process 4242\) is writing these answers"):
            generate(engine, output)
        assert engine.asked == [] and not journal_path(output).exists() and not output.exists()
    finally:
        os.close(fd)


def test_outputs_that_would_destroy_something_are_refused_before_any_work(tmp_path):
    answers, board = tmp_path / "a.json", tmp_path / "b.jsonl"
    check_generate_outputs(answers, board)
    answers.write_text("{}")
    with pytest.raises(AnswersFileError, match="--overwrite"):
        check_generate_outputs(answers, board)
    check_generate_outputs(answers, board, overwrite=True)
    with pytest.raises(AnswersFileError, match="the resume journal of -o and --leaderboard name the same file"):
        check_generate_outputs(answers, journal_path(answers), overwrite=True)
    targets = tmp_path / "targets.jsonl"
    targets.write_text("{}\n")
    with pytest.raises(AnswersFileError, match="targets.jsonl"):
        check_generate_outputs(targets, None, inputs=[targets], overwrite=True)
    journal_path(tmp_path / "c.json").symlink_to(targets)
    with pytest.raises(AnswersFileError, match="c.json.partial.jsonl: the resume journal is not a regular file"):
        check_generate_outputs(tmp_path / "c.json", None)
    shutil.copy(targets, journal_path(tmp_path / "d.json"))
    with pytest.raises(AnswersFileError, match="the resume journal is an input file"):
        check_generate_outputs(tmp_path / "d.json", None, inputs=[journal_path(tmp_path / "d.json")])


def write_answers(path: Path, samples: dict[str, list[str]], generation: dict) -> Path:
    questions = [Question(qid, "", ()) for qid in samples]
    path.write_text(json.dumps(answers_document(questions, samples, {}, generation)))
    return path


def test_scores_are_those_of_the_ranked_lists_and_every_sample(tmp_path):
    path = write_answers(tmp_path / "a.json", {"q1": ["cat", "cat", "dog"], "q2": ["apple"]}, {"sampling": "s"})
    scores = score_generated(str(path), [PET, FRUIT], similarities=["exact_match"])
    assert scores.num_questions == 2 and scores.generation == {**scores.generation, "sampling": "s"}
    assert scores.protoqa["exact_match"].scores["max_answers@1"] == pytest.approx((4 / 6 + 7 / 7) / 2)
    assert scores.probeval is not None and scores.probeval.kl > 0
    out = scores.as_dict()
    assert set(out) == {"protoqa", "probeval", "sampling", "num_questions"} and out["sampling"] == "s"
    assert out["probeval"]["signature"] == scores.probeval.signature
    without = score_generated(str(path), [PET, FRUIT], similarities=["exact_match"], probeval=False)
    assert without.probeval is None and "probeval" not in without.as_dict()


def test_a_file_answering_some_of_the_targets_is_refused_unless_only_those_are_scored(tmp_path):
    path = write_answers(tmp_path / "a.json", {"q1": ["dog"]}, {})
    with pytest.raises(AnswersFileError, match="answers 1 of the 2 target questions: a score over part"):
        score_generated(str(path), [PET, FRUIT], similarities=["exact_match"])
    with pytest.warns(UserWarning, match="^scoring the 1 of 2 questions that a.json answers$"):
        scores = score_generated(str(path), [PET, FRUIT], similarities=["exact_match"], only_predicted=True)
    assert scores.num_questions == 1
    assert "|missing:skip|n:1|" in scores.protoqa["exact_match"].signature
    assert scores.probeval is not None and "|missing:skip|n:1|n_samples:1|" in scores.probeval.signature


@pytest.mark.parametrize(
    ("samples", "targets", "message"),
    [
        ({"q1": ["dog"], "x9": ["cat"]}, [PET], r"a.json: answers for 1 question id\(s\) not in the targets: x9"),
        ({"q1": ["dog"]}, [FRUIT], r"answers for 1 question id\(s\) not in the targets: q1"),
        ({"t1": ["dog"]}, [Question("t1", "name a pet", ())], "no answer clusters .* submit the leaderboard file"),
    ],
)
def test_answers_that_cannot_be_scored_against_the_targets_are_one_clear_error(tmp_path, samples, targets, message):
    path = write_answers(tmp_path / "a.json", samples, {})
    with pytest.raises(AnswersFileError, match=message):
        score_generated(str(path), targets, similarities=["exact_match"], probeval=False)


def test_a_file_answering_no_question_is_an_error_after_its_warning(tmp_path):
    from protoqa_core.io.files import ProtoQAWarning

    path = write_answers(tmp_path / "a.json", {}, {})
    with pytest.warns(ProtoQAWarning, match="holds no predictions"):
        with pytest.raises(AnswersFileError, match="a.json answers none of the target questions"):
            score_generated(str(path), [PET], similarities=["exact_match"], probeval=False)


def test_a_missing_file_or_one_not_saying_its_questions_is_an_error(tmp_path):
    with pytest.raises(AnswersFileError, match="answers file not found: .*no.json"):
        score_generated(str(tmp_path / "no.json"))
    path = write_answers(tmp_path / "a.json", {"q1": ["dog"]}, {"dataset": "protoqa", "split": "dev"})
    with pytest.raises(AnswersFileError, match="a.json does not say which questions it answers; pass --targets FILE"):
        score_generated(str(path))


def test_another_data_set_is_refused_unless_accepted_and_then_marked(tmp_path):
    path = write_answers(tmp_path / "a.json", {"q1": ["dog"]}, {"dataset": "cfc", "split": "validation"})
    with pytest.raises(ProvenanceError, match="a.json answers dataset cfc, the targets are protoqa"):
        score_generated(str(path), [PET], targets_data=("protoqa", "validation"))
    accepted = score_generated(
        str(path), [PET], similarities=["exact_match"], targets_data=("protoqa", "validation"), accept=["dataset"]
    )
    assert accepted.accepted and accepted.as_dict()["accepted_mismatches"] == accepted.accepted
    mark = accepted.protoqa["exact_match"].signature.rsplit("|", 1)[1]
    assert "dataset" in mark and accepted.probeval.signature.endswith(mark)
    # Scored on a clustered targets file: every signature names it, before the accepted mismatch.
    label = "clusters:gmeans(k_init=8)@sha256=" + "ab" * 32
    labelled = score_generated(
        str(path), [PET], similarities=["exact_match"], targets_data=("protoqa", "validation"), accept=["dataset"],
        targets_label=label,
    )  # fmt: skip
    for signature in (labelled.protoqa["exact_match"].signature, labelled.probeval.signature):
        assert signature.endswith(f"|{label}|{mark}")


def test_the_questions_file_the_run_recorded_is_read_and_checked(tmp_path, shared_data):
    dev = tmp_path / "dev.crowdsourced.jsonl"
    shutil.copy(shared_data / "protoqa" / "dev.crowdsourced.jsonl", dev)
    first = json.loads(dev.read_text().splitlines()[0])["metadata"]["id"]
    generation = {"dataset": "protoqa", "split": "validation", "questions_from": str(dev)}
    path = write_answers(tmp_path / "a.json", {first: ["dog"]}, generation)
    with pytest.warns(UserWarning, match="scoring the 1 of 52 questions"):
        assert (
            score_generated(str(path), similarities=["exact_match"], probeval=False, only_predicted=True).num_questions
            == 1
        )
    dev.write_text(dev.read_text() + "\n")
    with pytest.raises(AnswersFileError, match=rf"pass --targets {dev} to score against it as it is now"):
        score_generated(str(path))
    dev.unlink()
    with pytest.raises(AnswersFileError, match=rf"answers the questions in {dev}, which is gone; pass --data-dir"):
        score_generated(str(path))


def test_generated_scores_list_accepted_mismatches_only_when_there_are_some():
    scores = GeneratedScores({}, None, {}, 0)
    assert scores.as_dict() == {"protoqa": {}, "sampling": None, "num_questions": 0}
