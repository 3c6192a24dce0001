"""The protoqa-eval command line, run in-process and as an installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from protoqa_metric.cli import main
from tests.support.metric_names import STANDARD_NAMES
from tests.support.processes import python_json

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
TARGETS = DATA / "protoqa" / "dev.crowdsourced.jsonl"

KEYS = {*STANDARD_NAMES, "signature"}


@pytest.fixture
def dev_files(shared_data):
    return (
        str(shared_data / "protoqa" / "dev.crowdsourced.jsonl"),
        str(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json"),
    )


def test_json_output_has_exactly_the_documented_keys(dev_files, capsys):
    assert main([*dev_files, "--similarity", "exact_match", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == KEYS
    assert all(0.0 <= out[k] <= 1.0 for k in KEYS - {"signature"})
    assert out["signature"].startswith("sim:exact_match|metrics:standard|missing:zero|n:52|")


def test_reference_evaluator_form_gives_same_numbers(dev_files, capsys):
    main([*dev_files, "--similarity", "exact_match", "--json"])
    ours = capsys.readouterr().out
    main(["evaluate", "--similarity_function", "exact_match", *dev_files, "--json"])
    assert capsys.readouterr().out == ours


def test_table_for_two_similarities_and_per_question_file(dev_files, tmp_path, capsys):
    per_q = tmp_path / "per_question.jsonl"
    assert main([*dev_files, "--similarity", "exact_match,wordnet", "--per-question", str(per_q)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["metric", "exact_match", "wordnet"]
    assert "wordnet: sim:wordnet|stop:match|" in out
    records = [json.loads(line) for line in per_q.read_text().splitlines()]
    assert len(records) == 2 * 52
    r = records[0]
    assert r["id"] == "r1q1" and r["similarity"] == "exact_match"
    details = r["details"]["max_answers@all"]
    assert len(details["assigned_cluster"]) == len(details["predictions"])


def test_paper_metric_set_and_stopword_switch(dev_files, capsys):
    main([*dev_files, "--metrics", "paper", "--all-stopwords-zero", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 8 and "max_answers@all" not in out
    assert "stop:zero" in out["signature"] and "metrics:paper" in out["signature"]


def test_bad_input_exits_2_with_a_clear_message(tmp_path, dev_files, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"r1q1": ["age"]}\n{"r1q2": [1]}\n')
    assert main([dev_files[0], str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl, line 2, question 'r1q2': answers must contain only strings" in err
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"nope": ["age"]}\n')
    assert main([dev_files[0], str(unknown), "--similarity", "exact_match"]) == 2
    assert "none of the 1 question id(s) of the predictions is in the targets (nope)" in capsys.readouterr().err
    assert main([dev_files[0], str(unknown), "--similarity", "exact_match", "--ignore-unknown", "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning: ignored predictions for 1 question id(s) that are not in the targets" in captured.err
    assert "warning: 52 question(s) have no predictions and score 0" in captured.err


def test_a_metric_asked_twice_exits_2_naming_it(dev_files, capsys):
    assert main([*dev_files, "--similarity", "exact_match", "--metrics", "max_answers@1,max_answers@1"]) == 2
    captured = capsys.readouterr()
    assert "metric 'max_answers@1' is given twice" in captured.err and captured.out == ""
    assert "Traceback" not in captured.err


def test_unknown_similarity_is_rejected(dev_files, capsys):
    with pytest.raises(SystemExit):
        main([*dev_files, "--similarity", "bert"])
    assert "unknown similarity 'bert'" in capsys.readouterr().err


def test_console_script_runs(dev_files):
    exe = shutil.which("protoqa-eval") or str(__import__("pathlib").Path(sys.executable).parent / "protoqa-eval")
    done = subprocess.run(
        [exe, *dev_files, "--similarity", "exact_match", "--json"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == KEYS
    module = subprocess.run([sys.executable, "-m", "protoqa_metric", "--version"], capture_output=True, text=True)
    assert module.stdout.startswith("protoqa-eval ")


def test_compare_two_systems(dev_files, shared_data, capsys):
    human = str(shared_data / "protoqa" / "dev.predictions.human.jsonl")
    assert (
        main(
            [
                "compare",
                dev_files[0],
                dev_files[1],
                human,
                "--similarity",
                "exact_match",
                "--metrics",
                "max_answers@10",
                "--json",
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    row = out["metrics"]["max_answers@10"]
    assert row["difference"] == pytest.approx(row["a"] - row["b"])
    assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    assert 0 < row["p_value"] <= 1
    assert row["b"] > row["a"] and row["p_value"] < 0.01  # humans beat the fine-tuned GPT-2
    assert out["signature"].endswith("|bootstrap:200|seed:12345")
    # The same system against itself: no difference, p = 1.
    main(["compare", dev_files[0], dev_files[1], dev_files[1], "--similarity", "exact_match", "--json"])
    same = json.loads(capsys.readouterr().out)["metrics"]["max_answers@1"]
    assert same["difference"] == 0 and same["p_value"] == 1.0


def test_long_answer_json_round_trip_through_the_cli(tmp_path):
    import subprocess
    import sys

    answer = " ".join(["dog", "cat", "car"] * 200)
    (tmp_path / "t.jsonl").write_text(
        json.dumps(
            {
                "metadata": {"id": "q1"},
                "question": {"normalized": "name an animal"},
                "answers": {
                    "raw": {answer: 3, "bird": 1},
                    "clusters": {"q1.0": {"count": 3, "answers": [answer]}, "q1.1": {"count": 1, "answers": ["bird"]}},
                },
            }
        )
        + "\n"
    )
    (tmp_path / "p.json").write_text(json.dumps({"q1": ["dog cat car dog cat car dog cat car dog cat car d"]}))
    done = subprocess.run(
        [sys.executable, "-m", "protoqa_metric", str(tmp_path / "t.jsonl"), str(tmp_path / "p.json"), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "approx:" in done.stdout and "q1.0" in done.stderr


NFC = unicodedata.normalize("NFC", "café")


NFD = unicodedata.normalize("NFD", "café")


FULL_WIDTH = "ｃａｆé"


JOINED = "ca\u200dfé"


def write_targets(path: Path, clusters: dict[str, tuple[str, int]]) -> None:
    lines = []
    for i, (qid, (answer, count)) in enumerate(clusters.items()):
        lines.append(
            json.dumps(
                {
                    "metadata": {"id": qid},
                    "question": {"normalized": f"question {i}"},
                    "answers": {
                        "clusters": {
                            f"{qid}.0": {"count": count, "answers": [answer]},
                            f"{qid}.1": {"count": 1, "answers": ["tea"]},
                        }
                    },
                },
                ensure_ascii=False,
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("similarity", ["exact_match", "wordnet"])
def test_spellings_of_one_answer_match_in_a_new_process(tmp_path, similarity):
    # Cluster and prediction in different spellings, each way round.
    pairs = {
        "q1": (NFD, NFC),
        "q2": (NFC, NFD),
        "q3": (NFC, FULL_WIDTH),
        "q4": (FULL_WIDTH, NFC),
        "q5": (NFC, JOINED),
        "q6": (JOINED, NFD),
    }
    write_targets(tmp_path / "targets.jsonl", {qid: (cluster, 3) for qid, (cluster, _) in pairs.items()})
    (tmp_path / "predictions.json").write_text(
        json.dumps({qid: [prediction] for qid, (_, prediction) in pairs.items()}, ensure_ascii=False), encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = ["-m", "protoqa_metric", "targets.jsonl", "predictions.json", "--similarity", similarity, "--json"]
    result = python_json([*command, "--no-progress"], tmp_path, env, timeout=120)
    scores = result.get("scores", result)
    assert scores["max_answers@1"] == 1.0, result


@pytest.mark.skipif(not TARGETS.is_file(), reason=f"shared ProtoQA data not found under {DATA}")
def test_the_command_line_caps_answers_per_question(tmp_path):
    qid = json.loads(TARGETS.read_text(encoding="utf-8").splitlines()[0])["metadata"]["id"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({qid: [f"answer {i}" for i in range(501)]}), encoding="utf-8")
    command = [sys.executable, "-m", "protoqa_metric", str(TARGETS), str(path), "--similarity", "exact_match"]
    done = subprocess.run(command + ["--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("warning:")]
    assert lines == [
        f"protoqa-eval: error: {path}, line 1, question '{qid}': more than 500 answers for one question, "
        "the cap per question (--max-answers raises it)"
    ]
    raised = subprocess.run(
        command + ["--max-answers", "501", "--json", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert raised.returncode == 0, raised.stderr
    assert json.loads(raised.stdout)["signature"].startswith("sim:exact_match|")
