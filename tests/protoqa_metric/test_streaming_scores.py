"""``protoqa-eval`` streams: the same outputs as scoring everything in memory, and the size cap before reading.

Each command runs as a new process on real files (the ProtoQA crowdsourced dev set with
the fine-tuned GPT-2 ranked lists) or on generated hostile ones: an oversize regular
file or pipe, duplicated ids, predictions in another order than the targets, blank lines.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from protoqa_core.io.predictions import read_predictions
from protoqa_core.io.question_index import QuestionIndex
from protoqa_core.io.readers import read_targets
from protoqa_metric import ProtoQA

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
TARGETS = DATA / "protoqa" / "dev.crowdsourced.jsonl"
PREDICTIONS = DATA / "protoqa" / "dev.predictions.gpt2finetuned.json"
TIME_LIMIT = 300

pytestmark = pytest.mark.skipif(not TARGETS.is_file(), reason=f"shared ProtoQA data not found under {DATA}")


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ, PYTHONPATH=str(REPO))
    for name in ("PROTOQA_MAX_INPUT_MB", "PROTOQA_EVAL_TRACEBACK"):
        out.pop(name, None)
    out.update(extra)
    return out


def command(*args: object) -> list[str]:
    return [sys.executable, "-m", "protoqa_metric", *map(str, args), "--no-progress"]


def run(cwd: Path, *args: object, **extra_env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        command(*args), cwd=cwd, env=env(**extra_env), capture_output=True, text=True, timeout=TIME_LIMIT
    )


def one_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line and ": warning: " not in line]
    assert len(lines) == 1, done.stderr[-2000:]
    return lines[0]


# The peak that wait4 reports for a child starts at the memory of the process that forked it
# (Linux carries the forked address space's high-water mark over the exec), and pytest with
# the suite's libraries loaded holds gigabytes. So a small Python process forks the command
# and writes the command's own peak, in kilobytes, to the file named first.
_PEAK_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def launched(peak_file: Path, argv: list[str]) -> list[str]:
    """``argv`` run by the small launcher that writes its peak resident memory to ``peak_file``."""
    return [sys.executable, "-c", _PEAK_LAUNCHER, str(peak_file), *argv]


def measured(process: subprocess.Popen, peak_file: Path) -> tuple[int, float]:
    """Exit status and peak resident memory in MB of a command started by :func:`launched`."""
    status = process.wait()
    return status, int(peak_file.read_text()) / 1024


def in_memory_records(similarity: str) -> tuple[dict, list[dict]]:
    """The ``--json`` object and ``--per-question`` records as the in-memory path gives them."""
    result = ProtoQA(similarity).evaluate(read_targets(TARGETS), read_predictions(PREDICTIONS))
    records = [
        {
            "id": qid,
            "similarity": similarity,
            "scores": {m: qs.score for m, qs in by_metric.items()},
            "details": {
                m: {
                    "raw_score": qs.raw_score,
                    "oracle_score": qs.oracle_score,
                    "predictions": list(qs.predictions),
                    "assigned_cluster": list(qs.assignment),
                }
                for m, qs in by_metric.items()
            },
        }
        for qid, by_metric in result.per_question.items()
    ]
    return result.as_dict(), records


@pytest.mark.slow
@pytest.mark.parametrize("similarity", ["exact_match", "wordnet"])
def test_streamed_command_equals_the_in_memory_scores_on_real_data(tmp_path, similarity):
    expected_json, expected_records = in_memory_records(similarity)
    # The same predictions as JSONL in another order than the targets, with blank lines.
    lists = read_predictions(PREDICTIONS)
    shuffled = list(lists.items())
    random.Random(7).shuffle(shuffled)
    jsonl = tmp_path / "shuffled.jsonl"
    jsonl.write_text("\n".join(json.dumps({qid: answers}) + "\n" for qid, answers in shuffled), encoding="utf-8")
    for predictions in (PREDICTIONS, jsonl):
        out = tmp_path / f"per_question.{predictions.name}"
        done = run(tmp_path, TARGETS, predictions, "--similarity", similarity, "--json", "--per-question", out)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout) == expected_json
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert records == expected_records


def test_streams_give_the_in_memory_results_in_process():
    protoqa = ProtoQA("exact_match")
    whole = protoqa.evaluate(read_targets(TARGETS), read_predictions(PREDICTIONS))
    seen: dict[str, dict] = {}
    with QuestionIndex(TARGETS, [PREDICTIONS]) as index:
        streamed = protoqa.evaluate_index(index, on_question=lambda q, s: seen.update({q: s}))
        bare = protoqa.evaluate_index(index, on_question=lambda q, s: None, keep_question_scores=False)
        assert [(q.id, answers) for q, answers in index.questions(0)] == [
            (qid, read_predictions(PREDICTIONS).get(qid, [])) for qid in read_targets(TARGETS)
        ]
    assert streamed.per_question == {} and seen == whole.per_question
    for result in (streamed, bare):
        assert (result.scores, result.signature, result.num_questions) == (
            whole.scores,
            whole.signature,
            whole.num_questions,
        )
    assert streamed.question_ids == list(whole.per_question)
    for metric, values in streamed.question_scores.items():
        assert list(values) == [s[metric].score for s in whole.per_question.values()]
    assert bare.question_ids == [] and bare.question_scores == {}


def test_the_exact_running_sum_is_fsum():
    import math

    from protoqa_metric.metric import _ExactSum

    rng = random.Random(3)
    for values in (
        [rng.random() for _ in range(10_000)],
        [rng.choice([0.1, 1 / 3, 2 / 3, 0.7, 1.0, 0.0, 5e-324, 1e-17]) for _ in range(10_000)],
        [],
    ):
        total = _ExactSum()
        for value in values:
            total.add(value)
        assert total.value() == math.fsum(values)


def test_an_oversize_regular_file_is_refused_from_its_size_before_reading(tmp_path):
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as fh:  # 700 MB without a byte on disk: a sparse file
        fh.truncate(700 * 2**20)
    for targets, predictions in ((huge, PREDICTIONS), (TARGETS, huge)):
        process = subprocess.Popen(
            launched(tmp_path / "peak", command(targets, predictions, "--similarity", "exact_match", "--json")),
            cwd=tmp_path,
            env=env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        status, peak_mb = measured(process, tmp_path / "peak")
        assert process.stderr is not None
        stderr = process.stderr.read().decode()
        assert status == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
        assert f"{huge}: the input is larger than 512 MB (after decompression)" in stderr
        # Reading it would take 700 MB and more: the refusal came from the size alone.
        assert peak_mb < 250, peak_mb


def _oversize_pipe(tmp_path: Path, args: tuple, lines, cap_mb: int) -> tuple[int, float, str]:
    """Status, peak memory and stderr of the command reading ``lines`` from a pipe until it stops."""
    process = subprocess.Popen(
        launched(tmp_path / "peak", command(*args, "--similarity", "exact_match", "--json")),
        cwd=tmp_path,
        env=env(PROTOQA_MAX_INPUT_MB=str(cap_mb)),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    def feed(pipe) -> None:
        try:
            with pipe:
                for line in lines:
                    pipe.write(line)
        except BrokenPipeError:
            pass

    feeder = threading.Thread(target=feed, args=(process.stdin,))
    feeder.start()
    status, peak_mb = measured(process, tmp_path / "peak")
    feeder.join(timeout=TIME_LIMIT)
    assert process.stderr is not None
    return status, peak_mb, process.stderr.read().decode()


@pytest.mark.slow
def test_an_oversize_pipe_of_targets_is_refused_while_read_with_memory_bounded(tmp_path):
    row = json.loads(TARGETS.read_text(encoding="utf-8").splitlines()[0])
    # 400 MB of distinct questions, far more than the cap, written until the command stops reading.
    lines = (
        (json.dumps({**row, "metadata": {**row["metadata"], "id": f"q{i}"}}) + "\n").encode() for i in range(200_000)
    )
    status, peak_mb, stderr = _oversize_pipe(tmp_path, ("/dev/stdin", PREDICTIONS), lines, 48)
    assert status == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "/dev/stdin: the input is larger than 48 MB (after decompression)" in stderr
    # Holding 48 MB of questions as objects took over 250 MB before they were streamed.
    assert peak_mb < 200, peak_mb


def test_an_oversize_pipe_of_predictions_stops_at_the_cap(tmp_path):
    lines = (json.dumps({f"g{i}": ["dog", "cat", "a fish"]}).encode() + b"\n" for i in range(10**6))
    status, peak_mb, stderr = _oversize_pipe(tmp_path, (TARGETS, "/dev/stdin", "--ignore-unknown"), lines, 4)
    assert status == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "/dev/stdin: the input is larger than 4 MB (after decompression)" in stderr
    assert peak_mb < 200, peak_mb


def test_a_piped_targets_file_is_read_once(tmp_path):
    expected = run(tmp_path, TARGETS, PREDICTIONS, "--similarity", "exact_match", "--json")
    assert expected.returncode == 0, expected.stderr
    process = subprocess.Popen(
        command("/dev/stdin", PREDICTIONS, "--similarity", "exact_match,lcs", "--json"),
        cwd=tmp_path,
        env=env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = process.communicate(TARGETS.read_bytes(), timeout=TIME_LIMIT)
    assert process.returncode == 0, err
    first, second = out.decode().splitlines()
    assert first == expected.stdout.strip()
    assert json.loads(second)["signature"].startswith("sim:lcs|")


def _target(qid: str, count: int = 3) -> str:
    return json.dumps(
        {
            "metadata": {"id": qid},
            "question": {"normalized": f"question {qid}"},
            "answers": {"clusters": {f"{qid}.0": {"count": count, "answers": ["dog"]}}},
        }
    )


@pytest.mark.parametrize(
    ("targets", "predictions", "message"),
    [
        (
            [_target("q1"), "", _target("q2"), _target("q1")],
            ['{"q1": ["dog"]}'],
            "t.jsonl, line 4, question 'q1': duplicate question id (first on line 1)",
        ),
        (
            [_target("q1"), _target("q2")],
            ['{"q2": ["dog"]}', "", "  ", '{"q1": ["dog"]}', '{"q2": ["cat"]}'],
            "p.jsonl, line 5, question 'q2': duplicate question id (first on line 1)",
        ),
        (
            [_target("q1"), _target("q2")],
            ['{"q2": ["dog"], "q1": [], "q2": ["cat"]}'],
            "p.jsonl, line 1: duplicate key 'q2' in a JSON object",
        ),
        (
            [_target("q1"), _target("q2")],
            ["{", '  "q2": ["dog"],', '  "q2": ["cat"]', "}"],
            "p.jsonl, line 3: duplicate key 'q2' in a JSON object",
        ),
        (
            [_target("q1"), _target("q2")],
            ['{"q2": ["dog"]}', '{"q7": ["dog"]}', '{"q8": []}', '{"q1": ["dog"]}'],
            "p.jsonl, line 2, question 'q7': predictions for 2 question id(s) that are not in the targets: q7, q8 "
            "(pass ignore_unknown=True / --ignore-unknown to drop them)",
        ),
        (
            [_target("q1"), _target("q2")],
            ['{"q2": ["dog"]}', "{not json"],
            "p.jsonl, line 2: malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        ),
    ],
)
def test_hostile_inputs_keep_their_messages(tmp_path, targets, predictions, message):
    (tmp_path / "t.jsonl").write_text("\n".join(targets) + "\n", encoding="utf-8")
    (tmp_path / "p.jsonl").write_text("\n".join(predictions) + "\n", encoding="utf-8")
    out = tmp_path / "per_question.jsonl"
    done = run(tmp_path, "t.jsonl", "p.jsonl", "--similarity", "exact_match", "--per-question", out)
    assert one_error(done) == f"protoqa-eval: error: {message}"
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_missing_and_zero_count_questions_warn_as_before_and_interleave_freely(tmp_path):
    (tmp_path / "t.jsonl").write_text(
        "\n".join([_target("q1"), "", _target("q2", count=0), _target("q3"), _target("q4")]) + "\n\n",
        encoding="utf-8",
    )
    (tmp_path / "p.jsonl").write_text('{"q4": ["dog"]}\n\n{"q1": ["dog", "cat"]}\n', encoding="utf-8")
    out = tmp_path / "per_question.jsonl"
    done = run(tmp_path, "t.jsonl", "p.jsonl", "--similarity", "exact_match", "--json", "--per-question", out)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "protoqa-eval: warning: left out 1 question(s) whose clusters total 0: q2",
        "protoqa-eval: warning: 1 question(s) have no predictions and score 0: q3",
    ]
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["q1", "q3", "q4"]
    scores = json.loads(done.stdout)
    assert scores["max_answers@1"] == pytest.approx(2 / 3) and "|n:3|" in scores["signature"]
