"""Comparable or refused: the provenance inputs record is compared between systems and with the targets,
and credentials recorded by a harness never reach a converted file or a leaderboard."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from protoqa_core.io.readers import read_targets
from protoqa_integrations.generation.answers_file import answers_document
from protoqa_integrations.generation.provenance import (
    ProvenanceError,
    check_provenance,
    recorded_provenance,
    targets_data,
)
from tests.support.leaderboard_files import protoqa_eval
from tests.support.paths import CFC_DEV, PROTOQA_DEV, needs_data

pytestmark = needs_data
FAST = ("--metrics", "protoqa", "--similarity", "exact_match", "--resamples", "50")
SECRETS = ("hunter2", "sk-live-0123456789abcdef", "bearer-9f8e7d", "pw-in-args")


def one_line_failure(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in result.stderr and not result.stdout, result.stderr
    return errors[0]


def answers_file(path: Path, samples: int, seed: int = 0, **settings: object) -> Path:
    """An answers file of ProtoQA dev as ``protoqa-eval generate`` writes it, with ``samples`` per question."""
    rnd = random.Random(seed)
    questions = list(read_targets(PROTOQA_DEV).values())
    drawn = {q.id: [rnd.choice([a for c in q.clusters for a in c.answers]) for _ in range(samples)] for q in questions}
    generation = {
        "model": "tiny",
        "dataset": "protoqa",
        "split": "validation",
        "prompt": "statement",
        "questions_from": str(PROTOQA_DEV),
        "sampling": f"samples:{samples}|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|stop:newline,period"
        "|batch:100|seed:42|rng:splitmix64",
        **settings,
    }
    path.write_text(json.dumps(answers_document(questions, drawn, {}, generation)))
    return path


def test_the_data_set_of_a_targets_file_is_told_by_its_checksum(tmp_path):
    assert targets_data(PROTOQA_DEV) == ("protoqa", "validation")
    assert targets_data(CFC_DEV) == ("cfc", "validation")
    copy = tmp_path / "edited.jsonl"
    copy.write_text(PROTOQA_DEV.read_text()[:-2] + "\n")
    assert targets_data(copy) is None


def test_answers_to_one_data_set_are_not_ranked_against_another(tmp_path):
    answers_file(tmp_path / "a.json", 30)
    line = one_line_failure(protoqa_eval("leaderboard", str(CFC_DEV), "a=a.json", *FAST, cwd=tmp_path))
    assert "a answers dataset protoqa, the targets are cfc" in line and "--accept-mismatch dataset" in line
    line = one_line_failure(protoqa_eval("score-generated", "a.json", "--targets", str(CFC_DEV), cwd=tmp_path))
    assert "answers dataset protoqa, the targets are cfc" in line


@pytest.mark.slow
def test_different_samples_per_question_are_refused_unless_accepted_and_then_marked_everywhere(tmp_path):
    answers_file(tmp_path / "a.json", 30)
    answers_file(tmp_path / "b.json", 300, seed=1)
    line = one_line_failure(protoqa_eval("leaderboard", str(PROTOQA_DEV), "a=a.json", "b=b.json", *FAST, cwd=tmp_path))
    assert "a and b differ in samples (a: 30, b: 300)" in line and "--accept-mismatch samples" in line
    systems = (str(PROTOQA_DEV), "a=a.json", "b=b.json", *FAST, "--accept-mismatch", "samples")
    table = protoqa_eval(
        "leaderboard",
        *systems,
        "--model-index",
        "cards",
        "--dataset-type",
        "someone/protoqa",
        "--plot",
        "board.png",
        cwd=tmp_path,
    )
    assert table.returncode == 0, table.stderr
    assert "NOT COMPARABLE AS RECORDED" in table.stdout and "; accepted-mismatch:samples" in table.stdout
    assert "warning: ranked despite differing samples (a: 30, b: 300)" in table.stderr
    document = json.loads(protoqa_eval("leaderboard", *systems, "--json", cwd=tmp_path).stdout)
    assert document["accepted_mismatches"] == ["samples (a: 30, b: 300)"]
    assert document["signature"].endswith("; accepted-mismatch:samples")
    rows = protoqa_eval("leaderboard", *systems, "--csv", cwd=tmp_path).stdout.splitlines()[1:]
    assert rows and all(row.endswith("|accepted-mismatch:samples") for row in rows)
    assert "NOT COMPARABLE AS RECORDED" in protoqa_eval("leaderboard", *systems, "--markdown", cwd=tmp_path).stdout
    assert "accepted-mismatch:samples" in (tmp_path / "cards" / "a.yaml").read_text()


def test_plain_predictions_get_one_note_and_nothing_in_common_lists_who_answers_what(tmp_path):
    answers_file(tmp_path / "a.json", 30)
    ids = list(read_targets(PROTOQA_DEV))
    (tmp_path / "plain.json").write_text(json.dumps({qid: ["dog"] for qid in ids}))
    out = protoqa_eval("leaderboard", str(PROTOQA_DEV), "a=a.json", "p=plain.json", *FAST, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # In the one prefix style of every command's warnings.
    notes = [line for line in out.stderr.splitlines() if "warning: " in line]
    assert notes == [
        "protoqa-eval leaderboard: warning: p records no provenance (plain predictions): data set, split, "
        "questions, samples per question, sampling settings and prompt could not be checked"
    ]
    assert not any(line.startswith(("note:", "--only-common:")) for line in out.stderr.splitlines())
    (tmp_path / "first.json").write_text(json.dumps({qid: ["dog"] for qid in ids[:3]}))
    (tmp_path / "last.json").write_text(json.dumps({qid: ["dog"] for qid in ids[-3:]}))
    line = one_line_failure(
        protoqa_eval(
            "leaderboard", str(PROTOQA_DEV), "f=first.json", "l=last.json", *FAST, "--only-common", cwd=tmp_path
        )
    )
    assert f"f answers 3: {', '.join(ids[:3])}" in line and f"l answers 3: {', '.join(ids[-3:])}" in line


def test_generate_and_lm_eval_under_the_paper_settings_are_comparable():
    generate = {
        "dataset": "protoqa",
        "split": "validation",
        "prompt": "statement",
        "sampling": "samples:300|top_p:0.9|temperature:0.69|top_k:0|max_new_tokens:10|stop:newline,period",
    }
    lm_eval = {
        "harness": "lm-eval",
        "task": "protoqa",
        "dataset": "protoqa",
        "split": "validation",
        "prompt": "statement",
        "num_samples": 300,
        "sampling": {"until": ["\n", "."], "do_sample": True, "temperature": 0.69, "top_p": 0.9, "max_gen_toks": 10},
    }
    assert recorded_provenance(generate) == recorded_provenance(lm_eval)
    assert check_provenance({"g": generate, "l": lm_eval}, ("protoqa", "validation")).notes == []
    with pytest.raises(ProvenanceError, match="g and l differ in temperature"):
        check_provenance({"g": generate, "l": {**lm_eval, "sampling": {"temperature": 1.0}}})


def _lm_eval_run(folder: Path) -> Path:
    """An lm-eval --log_samples run whose recorded settings carry credentials in every form seen."""
    stamp = "2026-01-01T00-00-00.000000"
    ids = list(read_targets(PROTOQA_DEV))
    settings = {"until": ["\n", "."], "temperature": 0.69, "top_p": 0.9, "max_gen_toks": 10, "api_key": SECRETS[1]}
    with open(folder / f"samples_protoqa_{stamp}.jsonl", "w") as fh:
        for i, qid in enumerate(ids):
            record = {
                "doc_id": i,
                "doc": {"id": qid},
                "filter": "answers",
                "filtered_resps": [["dog", "cat", "dog"]],
                "arguments": {"gen_args_0": {"arg_0": "Q: ...", "arg_1": settings}},
            }
            fh.write(json.dumps(record) + "\n")
    results = {
        "config": {
            "model": "local-completions",
            "model_args": f"model=tiny,base_url=http://me:{SECRETS[3]}@127.0.0.1:8000/v1,auth=Bearer {SECRETS[2]}",
            "base_url": f"http://user:{SECRETS[0]}@127.0.0.1:8000/v1",
            "headers": {"Authorization": f"Bearer {SECRETS[1]}"},
        },
        "configs": {"protoqa": {"dataset_kwargs": {"protoqa_config": "protoqa", "protoqa_split": "validation"}}},
    }
    (folder / f"results_{stamp}.json").write_text(json.dumps(results))
    return folder / f"samples_protoqa_{stamp}.jsonl"


def test_credentials_a_harness_recorded_reach_no_converted_file_and_no_leaderboard(tmp_path):
    samples = _lm_eval_run(tmp_path)
    converted = protoqa_eval("convert", samples.name, "-o", "converted.json", cwd=tmp_path)
    assert converted.returncode == 0, converted.stderr
    text = (tmp_path / "converted.json").read_text()
    assert not any(secret in text for secret in SECRETS)
    generation = json.loads(text)["generation"]
    assert generation["model"] == "tiny" and generation["sampling"]["temperature"] == 0.69
    # Only the settings the project defines are shared: the key is left out, the address keeps its host.
    assert "api_key" not in generation["sampling"] and "auth" not in generation["model_args"]
    assert generation["model_args"] == "model=tiny,base_url=http://127.0.0.1:8000/v1"
    for source in (samples.name, "converted.json"):
        board = protoqa_eval("leaderboard", str(PROTOQA_DEV), f"s={source}", *FAST, "--json", cwd=tmp_path)
        assert board.returncode == 0, board.stderr
        assert not any(secret in board.stdout + board.stderr for secret in SECRETS)
        assert "api_key" not in json.loads(board.stdout)["systems"][0]["settings"]["sampling"]


def test_provenance_is_taken_from_the_content_and_a_wrong_claim_or_type_is_an_error(tmp_path):
    # A file claiming 30 samples and carrying 300, and a num_samples beside a sampling n that disagree.
    answers_file(tmp_path / "a.json", 30)
    answers_file(tmp_path / "claims.json", 300, sampling="samples:30|top_p:0.9|temperature:0.69|max_new_tokens:10")
    line = one_line_failure(
        protoqa_eval("leaderboard", str(PROTOQA_DEV), "a=a.json", "b=claims.json", *FAST, cwd=tmp_path)
    )
    assert "claims.json records 30 samples per question (sampling samples), but its questions carry at most 300" in line
    answers_file(tmp_path / "n.json", 30, num_samples=30, sampling={"n": 300, "temperature": 0.69})
    line = one_line_failure(protoqa_eval("leaderboard", str(PROTOQA_DEV), "a=n.json", *FAST, cwd=tmp_path))
    assert "n.json records 300 samples per question (sampling n), but its questions carry at most 30" in line
    # A value of the wrong type is an error naming it, not a field left unchecked.
    for name, settings, expected in (
        (
            "t.json",
            {"sampling": {"temperature": "0.69abc"}},
            "records sampling temperature as '0.69abc', which is not a number",
        ),
        ("b.json", {"sampling": {"top_p": True}}, "records sampling top_p as True, which is not a number"),
        ("d.json", {"dataset": ["protoqa"]}, "records dataset as ['protoqa'], which is not a text"),
    ):
        # written as another tool would write it, past the allowlist answers_document applies
        document = json.loads(answers_file(tmp_path / name, 30).read_text())
        document["generation"].update(settings)
        (tmp_path / name).write_text(json.dumps(document))
        line = one_line_failure(protoqa_eval("leaderboard", str(PROTOQA_DEV), f"x={name}", *FAST, cwd=tmp_path))
        assert f"error: {name} {expected}" in line, line
    # Two questions files of the same name and different content differ; the same content under two names does not.
    digest = {"questions_sha256": "a" * 64, "questions_from": "/one/dev.jsonl"}
    answers_file(tmp_path / "q1.json", 30, **digest)
    answers_file(tmp_path / "q2.json", 30, seed=1, **{**digest, "questions_sha256": "b" * 64})
    line = one_line_failure(
        protoqa_eval("leaderboard", str(PROTOQA_DEV), "a=q1.json", "b=q2.json", *FAST, cwd=tmp_path)
    )
    assert "a and b differ in questions (a: sha256:aaaaaaaaaaaaaaaa, b: sha256:bbbbbbbbbbbbbbbb)" in line
    answers_file(tmp_path / "q3.json", 30, seed=2, **{**digest, "questions_from": "/two/renamed.jsonl"})
    same = protoqa_eval("leaderboard", str(PROTOQA_DEV), "a=q1.json", "c=q3.json", *FAST, cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    # A reply naming another model than the one asked is ranked, and named in one warning.
    details = {"engine": "openai", "model": "gpt-4o", "reply_model": "gpt-4o-2024-08-06"}
    answers_file(tmp_path / "r.json", 30, engine_details=details)
    ranked = protoqa_eval("leaderboard", str(PROTOQA_DEV), "a=a.json", "r=r.json", *FAST, "--json", cwd=tmp_path)
    assert ranked.returncode == 0, ranked.stderr
    warned = [line for line in ranked.stderr.splitlines() if "answered as model 'gpt-4o-2024-08-06'" in line]
    assert len(warned) == 1 and "when asked for 'gpt-4o'" in warned[0] and warned[0].startswith("protoqa-eval")
    settings = json.loads(ranked.stdout)["systems"]
    assert {s["name"]: s["settings"].get("engine_details") for s in settings}["r"] == details
