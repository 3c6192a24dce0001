"""What each harness wrote, read back: lm-eval sample records with their run's results file, lighteval
details and Inspect logs that are not what they claim, and the default keep rule."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_integrations.harnesses.harness_logs import (
    MAX_COMPLETION_CHARS,
    READERS,
    KeepOnce,
    lm_eval_samples,
    read_inspect_log,
    read_lighteval_details,
    read_lm_eval_samples,
)
from tests.support.archives import DEFLATE, ZSTD, inspect_bomb, zip_bytes
from tests.support.offline import offline_env
from tests.support.processes import run_python

STAMP = "2026-01-01T00-00-00.000001"


def record(qid: str, answers: list[str], **extra: object) -> str:
    return json.dumps(
        {
            "doc_id": 0,
            "doc": {"id": qid},
            "filter": "answers",
            "filtered_resps": [answers],
            "arguments": {"gen_args_0": {"arg_0": "Q", "arg_1": {"temperature": 0.7, "max_gen_toks": 8}}},
            **extra,
        }
    )


def test_lm_eval_samples_take_model_data_and_prompt_from_the_run_and_redact_its_credentials(tmp_path):
    samples = tmp_path / f"samples_protoqa_{STAMP}.jsonl"
    samples.write_text(record("q1", ["dog", "cat"]) + "\n" + record("q2", ["fish", ""]) + "\n")
    (tmp_path / f"results_{STAMP}.json").write_text(
        json.dumps(
            {
                "config": {"model": "local-completions", "model_args": "model=tiny,base_url=http://u:pw@h/v1"},
                "configs": {
                    "protoqa": {"dataset_kwargs": {"protoqa_config": "protoqa", "protoqa_split": "validation"}}
                },
            }
        )
    )
    read = read_lm_eval_samples(samples)
    assert read.samples == {"q1": ["dog", "cat"], "q2": ["fish", ""]}
    generation = read.generation
    assert (generation["harness"], generation["task"], generation["model"]) == ("lm-eval", "protoqa", "tiny")
    assert (generation["dataset"], generation["split"], generation["prompt"]) == ("protoqa", "validation", "statement")
    # in the words of protoqa-eval generate's signature
    assert generation["sampling"] == {"temperature": 0.7, "max_new_tokens": 8} and generation["num_samples"] == 2
    assert "pw" not in json.dumps(generation)


def test_lm_eval_records_of_other_filters_are_skipped_and_raw_responses_are_cleaned(tmp_path):
    path = tmp_path / f"samples_cfc_{STAMP}.jsonl"
    raw = json.dumps({"doc": {"id": "q1"}, "resps": [["  A dog.\nQ: next"]], "filter": "answers"})
    path.write_text(record("q1", ["ignored"], filter="none") + "\n" + raw + "\n\n")
    read = read_lm_eval_samples(path)
    assert list(read.samples) == ["q1"] and len(read.samples["q1"]) == 1
    assert read.samples["q1"][0] != "ignored" and "\n" not in read.samples["q1"][0]


@pytest.mark.parametrize(
    "lines, message",
    [
        ([json.dumps({"no": "doc"})], "no 'doc'"),
        ([record("q1", ["a"], filter="none")], "no lm-eval sample records"),
        ([record("q1", ["a"]), record("q1", ["b"])], "q1"),
        ([json.dumps({"doc": {"id": "q1"}, "filtered_resps": [["a"], ["b"]]})], "one list of answers"),
    ],
)
def test_bad_lm_eval_records_name_the_file_and_line(tmp_path, lines, message):
    path = tmp_path / f"samples_protoqa_{STAMP}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFormatError) as caught:
        read_lm_eval_samples(path)
    assert message in str(caught.value) and path.name in str(caught.value)


def test_keep_once_keeps_every_list_and_refuses_an_id_given_twice_in_one_field():
    keep = KeepOnce(Path("a.jsonl"))
    assert keep(None, "q1", 1) and keep("model_answers", "q1", None) and keep(None, "q2", 2)
    with pytest.raises(DataFormatError, match="q1"):
        keep(None, "q1", 3)


def test_lm_eval_samples_keep_what_they_are_asked_and_cap_answers(tmp_path):
    path = tmp_path / "samples.jsonl"
    lines = list(enumerate([record("q1", ["a"]), record("q2", ["b", "c", "d"])], start=1))
    kept = lm_eval_samples(lines, path, lambda field, qid, line: qid == "q2")
    assert kept.samples == {"q2": ["b", "c", "d"]} and kept.generation["num_samples"] == 3
    with pytest.raises(DataFormatError, match="q2"):
        lm_eval_samples(lines, path, KeepOnce(path), max_answers=2)


@pytest.mark.parametrize("reader", [read_lighteval_details, read_inspect_log])
def test_files_that_are_not_the_harness_log_they_claim_are_one_error_naming_the_file(tmp_path, reader):
    path = tmp_path / "details_protoqa|0_2026.parquet"
    path.write_text("not a log")
    with pytest.raises(DataFormatError) as caught:
        reader(path)
    assert path.name in str(caught.value) and "\n" not in str(caught.value)


def test_every_harness_format_has_a_reader():
    assert set(READERS) == {"lm-eval", "lighteval", "inspect"}


# The child's address space is capped: a reader that unpacks the bomb fails there, not on the test machine.
CONVERT_CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
from protoqa_integrations.cli import main
sys.argv = ["protoqa-eval", "convert", sys.argv[1], "-o", sys.argv[2]]
sys.exit(main())
"""


@pytest.mark.parametrize("method", [ZSTD, DEFLATE], ids=["zstd", "deflate"])
def test_an_archive_entry_that_lies_about_its_size_stops_at_the_bytes_it_really_unpacks_to(tmp_path, method):
    bomb = tmp_path / "bomb.eval"
    # 64 MB of zeros declared as 1,000 bytes, behind a first entry as Inspect writes it; the cap is 4 MB.
    bomb.write_bytes(inspect_bomb(method, 64 << 20))
    assert bomb.stat().st_size < 1 << 20
    env = offline_env(PROTOQA_MAX_INPUT_MB="4")
    out = tmp_path / "out.json"
    started = time.monotonic()
    ran = run_python(["-c", CONVERT_CAPPED, str(bomb), str(out)], tmp_path, env, timeout=120)  # fmt: skip
    assert time.monotonic() - started < 60
    assert ran.returncode == 2 and not out.exists(), ran.stderr[-2000:]
    [line] = ran.stderr.strip().splitlines()
    assert "bomb.eval: entry 'header.json' unpacks past the input cap" in line
    assert "more than 4 MB, whatever sizes it declares; set PROTOQA_MAX_INPUT_MB" in line
    # Under the cap, the time budget of one input stops the reading, naming the file and the budget.
    slow = offline_env(PROTOQA_MAX_INPUT_MB="128", PROTOQA_MAX_INPUT_SECONDS="0.000001")
    ran = run_python(["-c", CONVERT_CAPPED, str(bomb), str(out)], tmp_path, slow, timeout=120)  # fmt: skip
    [line] = ran.stderr.strip().splitlines()
    assert ran.returncode == 2 and "bomb.eval: reading took longer than 1e-06 s, the time budget of one input" in line


def test_an_archive_holding_one_sample_twice_names_the_question_and_an_unknown_method_is_refused(tmp_path):
    twice = tmp_path / "twice.eval"
    entry = ("samples/r1q2_epoch_1.json", 0, b"{}", 2)
    twice.write_bytes(zip_bytes([("_journal/start.json", 0, b"{}", 2), entry, entry]))
    with pytest.raises(DataFormatError, match=r"twice.eval, question 'r1q2': the archive holds entry .* twice"):
        read_inspect_log(twice)
    odd = tmp_path / "odd.eval"
    odd.write_bytes(zip_bytes([("_journal/start.json", 12, b"BZh91AY", 2)]))
    with pytest.raises(DataFormatError, match="odd.eval: entry '_journal/start.json' is compressed with method 12"):
        read_inspect_log(odd)


def test_long_completions_are_cut_before_they_are_cleaned(tmp_path):
    path = tmp_path / f"samples_protoqa_{STAMP}.jsonl"
    path.write_text(record("q1", ["x" * (MAX_COMPLETION_CHARS * 3)]) + "\n")
    assert read_lm_eval_samples(path).samples == {"q1": ["x" * MAX_COMPLETION_CHARS]}
    raw = json.loads(record("q2", []))
    del raw["filtered_resps"]
    raw["resps"] = [["Sun screen " * 1000]]
    path.write_text(json.dumps(raw) + "\n")
    [answer] = read_lm_eval_samples(path).samples["q2"]
    assert answer.startswith("sun screen") and len(answer) <= MAX_COMPLETION_CHARS
