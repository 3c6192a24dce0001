"""The resume journal of an answers file (every line checked, errors naming file and line), the run lock,
and the atomic JSON writer."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from protoqa_integrations.generation.answers_journal import (
    AnswersFileError,
    check_journal,
    journal_hint,
    journal_path,
    lock_path,
    output_lock,
    read_journal,
    seal_record,
    write_json_atomically,
)
from protoqa_integrations.generation.settings import GenerationError

HEADER = {"model": "tiny", "sampling": "samples:2|top_p:0.9", "seed": 5}


def write_journal(path: Path, *records: object, header: object = HEADER) -> Path:
    """A journal as a run writes it (each record sealed); a record given as a string is written as it is."""
    sealed = (r if isinstance(r, str) else json.dumps(seal_record(r)) for r in records)
    lines = [json.dumps(seal_record({"header": header})), *sealed]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_journal_gives_the_samples_the_skipped_questions_and_the_last_usage(tmp_path):
    journal = write_journal(
        tmp_path / "a.json.partial.jsonl",
        {"id": "q1", "samples": ["dog", "cat"], "skipped": None, "usage": {"prompt_tokens": 4}},
        {"id": "q2", "samples": [], "skipped": "the prompt is longer than the context"},
        {"id": "q3", "samples": ["", "sun"], "usage": {"prompt_tokens": 9, "bad": 1.5, "flag": True}},
    )
    samples, skipped, usage = read_journal(journal, HEADER, 2, ["q1", "q2", "q3"])
    assert samples == {"q1": ["dog", "cat"], "q2": [], "q3": ["", "sun"]}
    assert skipped == {"q2": "the prompt is longer than the context"}
    assert usage == {"prompt_tokens": 9}  # the last complete question's record; only integer counts


def test_a_last_line_cut_short_by_the_interruption_is_sampled_again(tmp_path):
    journal = write_journal(tmp_path / "j", {"id": "q1", "samples": ["a", "b"]}, '{"id": "q2", "samp')
    assert read_journal(journal, HEADER, 2)[0] == {"q1": ["a", "b"]}


def test_other_settings_are_refused_naming_what_differs(tmp_path):
    journal = write_journal(tmp_path / "j", header={**HEADER, "seed": 6, "extra": 1})
    with pytest.raises(AnswersFileError, match=r"other settings \(differing: extra, seed\)"):
        read_journal(journal, HEADER)
    with pytest.raises(AnswersFileError, match=r"differing: model, sampling, seed"):
        read_journal(write_journal(tmp_path / "k", header=None), HEADER)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("not json at all", "line 2: not JSON"),
        ('["q1", ["a", "b"]]', "line 2: not a question record"),
        ({"samples": ["a", "b"]}, "line 2: not a question record"),
        ({"id": "q9", "samples": ["a", "b"]}, "line 2: question 'q9' is not one of the questions of this run"),
        ({"id": "q1", "samples": "a b"}, "line 2: question 'q1': 'samples' must be a list of strings"),
        ({"id": "q1", "samples": ["a", 2]}, "line 2: question 'q1': 'samples' must be a list of strings"),
        ({"id": "q1", "samples": ["a"]}, "line 2: question 'q1': 1 samples, expected 2"),
        ({"id": "q1", "samples": ["a", "b"], "skipped": 3}, "'skipped' must be a string or null"),
        ({"id": "q1", "samples": ["a", "b"], "skipped": "too long"}, "question 'q1': 2 samples, expected 0"),
    ],
)
def test_a_bad_line_is_an_error_naming_the_journal_and_the_line(tmp_path, record, message):
    journal = write_journal(tmp_path / "j", record, {"id": "q2", "samples": ["c", "d"]})
    with pytest.raises(AnswersFileError, match=message) as error:
        read_journal(journal, HEADER, 2, ["q1", "q2"])
    assert str(error.value).startswith(f"{journal}, line 2: ") and "delete the file to start over" in str(error.value)


def test_a_question_twice_names_both_lines(tmp_path):
    journal = write_journal(tmp_path / "j", {"id": "q1", "samples": ["a"]}, {"id": "q1", "samples": ["b"]})
    with pytest.raises(AnswersFileError, match=r"line 3: question 'q1' again \(first on line 2\)"):
        read_journal(journal, HEADER)


def test_json_that_json_does_not_allow_is_an_error_not_a_crash(tmp_path):
    deep = tmp_path / "deep"
    write_journal(deep, '{"id": "q1", "samples": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(AnswersFileError, match=r"delete the file to start over") as error:
        read_journal(deep, HEADER)
    assert str(deep) in str(error.value)
    nan = write_journal(tmp_path / "nan", '{"id": "q1", "samples": [], "usage": NaN}', {"id": "q2", "samples": []})
    with pytest.raises(AnswersFileError, match=str(nan)):
        read_journal(nan, HEADER)


def test_a_journal_that_is_not_a_regular_file_is_refused(tmp_path):
    target = write_journal(tmp_path / "elsewhere.jsonl", {"id": "q1", "samples": []})
    link = tmp_path / "a.json.partial.jsonl"
    link.symlink_to(target)
    with pytest.raises(AnswersFileError, match="not a regular file"):
        read_journal(link, HEADER)
    with pytest.raises(AnswersFileError, match="not a regular file"):
        check_journal(tmp_path / "a.json", HEADER, None, ["q1"])
    (tmp_path / "b.json.partial.jsonl").mkdir()
    with pytest.raises(AnswersFileError, match="b.json.partial.jsonl: the resume journal is not a regular file"):
        check_journal(tmp_path / "b.json", HEADER, None, ["q1"])


def test_undecodable_bytes_in_a_journal_name_the_file(tmp_path):
    journal = tmp_path / "j"
    journal.write_bytes(json.dumps({"header": HEADER}).encode() + b"\n\xff\xfe\n")
    with pytest.raises(AnswersFileError, match=rf"{journal}.*delete the journal"):
        read_journal(journal, HEADER)


def test_check_journal_passes_without_a_journal_and_checks_the_questions_of_the_run(tmp_path):
    output = tmp_path / "a.json"
    check_journal(output, HEADER, 2, ["q1"])
    write_journal(journal_path(output), {"id": "q1", "samples": ["a", "b"]})
    check_journal(output, HEADER, 2, ["q1", "q2"])
    with pytest.raises(AnswersFileError, match="'q1' is not one of the questions"):
        check_journal(output, HEADER, 2, ["q2"])


def test_paths_sit_beside_the_output_and_the_error_is_a_generation_error(tmp_path):
    assert journal_path(tmp_path / "a.json") == tmp_path / "a.json.partial.jsonl"
    assert lock_path(tmp_path / "a.json") == tmp_path / "a.json.partial.lock"
    assert issubclass(AnswersFileError, GenerationError)
    hint = journal_hint(tmp_path / "j", 7)
    assert f"the 7 question(s) sampled so far are kept in {tmp_path / 'j'}" in hint and "resume" in hint


def test_a_lock_held_by_another_open_is_refused_naming_the_holder(tmp_path):
    output = tmp_path / "a.json"
    path = lock_path(output)
    path.write_text("4242\n")
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(AnswersFileError, match=r"another run \(process 4242\) is writing these answers"):
            with output_lock(output):
                pass
    finally:
        os.close(fd)
    assert path.read_text() == "4242\n"  # the holder's lock file is left alone
    with output_lock(output) as held:  # a lock file left by a run that died is taken over
        assert held.read_text() == f"{os.getpid()}\n"
    assert not path.exists()


def test_nested_holds_share_the_lock_which_goes_with_the_last(tmp_path):
    output = tmp_path / "a.json"
    with output_lock(output) as outer:
        with output_lock(output) as inner:
            assert inner == outer and outer.exists()
        assert outer.exists()
    assert not outer.exists()
    with pytest.raises(RuntimeError), output_lock(output):  # an error in the run lets go of the lock too
        raise RuntimeError("stop")
    assert not lock_path(output).exists()


def test_a_planted_lock_link_or_a_file_that_is_not_a_lock_is_refused(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    lock_path(tmp_path / "a.json").symlink_to(victim)
    with pytest.raises(AnswersFileError, match="the lock file is a symbolic link; move it away"):
        with output_lock(tmp_path / "a.json"):
            pass
    lock_path(tmp_path / "b.json").write_text("x" * 100)
    with pytest.raises(AnswersFileError, match="b.json.partial.lock: not a lock file of protoqa-eval"):
        with output_lock(tmp_path / "b.json"):
            pass
    assert victim.read_text() == "keep me" and lock_path(tmp_path / "b.json").read_text() == "x" * 100
    with pytest.raises(AnswersFileError, match="cannot create the lock file"):
        with output_lock(tmp_path / "no" / "such" / "a.json"):
            pass


def test_write_json_atomically_writes_json_or_one_record_a_line_and_replaces_a_link(tmp_path):
    target = tmp_path / "out.json"
    write_json_atomically(target, {"q1": ["café"]})
    assert target.read_text(encoding="utf-8") == '{\n "q1": [\n  "café"\n ]\n}\n'
    write_json_atomically(target, [{"a": 1}, {"b": "é"}], jsonl=True)
    assert target.read_text(encoding="utf-8") == '{"a": 1}\n{"b": "é"}\n'
    victim = tmp_path / "victim.json"
    victim.write_text("keep")
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    write_json_atomically(link, [1])
    assert victim.read_text() == "keep" and not link.is_symlink() and json.loads(link.read_text()) == [1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "out.json", "victim.json"]


def test_an_edited_or_unsealed_record_is_refused_naming_its_line(tmp_path):
    sealed = seal_record({"id": "q1", "samples": ["dog", "cat"], "skipped": None})
    forged = json.dumps({**sealed, "samples": ["FORGED ANSWER", "cat"]})
    journal = write_journal(tmp_path / "j", {"id": "q2", "samples": ["a", "b"]}, forged, {"id": "q3", "samples": []})
    with pytest.raises(AnswersFileError, match=r"j, line 3: the record was changed after it was written") as error:
        read_journal(journal, HEADER, 2, ["q1", "q2", "q3"])
    assert "delete the file to start over" in str(error.value)
    unsealed = write_journal(tmp_path / "k", json.dumps({"id": "q1", "samples": ["a", "b"]}))
    with pytest.raises(AnswersFileError, match=r"k, line 2: the record has no checksum \('sha256'\)"):
        read_journal(unsealed, HEADER, 2)
    header = tmp_path / "h"
    header.write_text(json.dumps({**seal_record({"header": HEADER}), "sha256": "0" * 64}) + "\n")
    with pytest.raises(AnswersFileError, match=r"h, line 1: the record was changed"):
        read_journal(header, HEADER, 2)
