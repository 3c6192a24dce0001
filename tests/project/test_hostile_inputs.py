"""Hostile inputs, each run as a new process of ``protoqa-eval`` or ``probeval``.

Every case ends with status 2 and one error line naming the file (or the value at
fault), without a traceback, within a per-case time limit; or, where a value is
defined (gzip input, an empty predictions file, ``--allow-empty``), with that value.
ProbEval cases use the data's own clusters and character n-grams, to stay light.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Cluster
from protoqa_metric.metric import score_question
from protoqa_metric.scoring import score_matrix

REPO = Path(__file__).resolve().parents[2]
TIME_LIMIT = 90  # seconds per process; every case here takes a few seconds

EVAL = ["-m", "protoqa_metric"]
EVAL_OPTIONS = ["--similarity", "exact_match", "--no-progress"]
PROBEVAL = ["-m", "cfc_probeval"]
PROBEVAL_OPTIONS = ["--clustering", "human", "--matching", "cosine", "--embedder", "char-ngrams"]
CLIS = {"protoqa-eval": (EVAL, EVAL_OPTIONS), "probeval": (PROBEVAL, PROBEVAL_OPTIONS)}


def run(module: list[str], *args: str, user: int | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PROTOQA_EVAL_TRACEBACK", None)
    command = [sys.executable, *module, *map(str, args)]
    if user is not None:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIME_LIMIT, env=env, cwd=cwd)


def error_line(done: subprocess.CompletedProcess) -> str:
    """The one error line of a failed run (warnings may come before it)."""
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line and "warning:" not in line]
    assert len(lines) == 1, done.stderr[-2000:]
    assert ": error: " in lines[0]
    return lines[0]


def _target(qid: str, clusters: dict) -> str:
    return json.dumps(
        {
            "metadata": {"id": qid},
            "question": {"normalized": f"question {qid}"},
            "answers": {"raw": {}, "clusters": clusters},
        }
    )


@pytest.fixture
def files(tmp_path):
    targets = tmp_path / "targets.jsonl"
    targets.write_text(
        _target("q1", {"q1.0": {"count": 6, "answers": ["dog"]}, "q1.1": {"count": 4, "answers": ["cat"]}})
        + "\n"
        + _target("q2", {"q2.0": {"count": 3, "answers": ["red"]}})
        + "\n"
    )
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps({"q1": ["dog", "cat", "dog"], "q2": ["blue"]}))
    return targets, predictions


def both(name):
    return pytest.mark.parametrize(name, list(CLIS))


# ---- unreadable files -----------------------------------------------------------------


@both("cli")
def test_a_directory_as_input(cli, files, tmp_path):
    module, options = CLIS[cli]
    line = error_line(run(module, tmp_path, files[1], *options))
    assert str(tmp_path) in line and "is a directory" in line


@both("cli")
def test_a_missing_input(cli, files, tmp_path):
    module, options = CLIS[cli]
    line = error_line(run(module, files[0], tmp_path / "nope.json", *options))
    assert "nope.json" in line and "not found" in line


def _nobody_can_run() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


@pytest.fixture
def open_dir():
    """A folder anyone can enter (pytest's tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="hostile-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not _nobody_can_run(), reason="needs root and setpriv to run as an unprivileged user")
@both("cli")
def test_a_file_without_read_permission(cli, files, open_dir):
    module, options = CLIS[cli]
    targets = open_dir / "targets.jsonl"
    shutil.copyfile(files[0], targets)
    targets.chmod(0o644)
    secret = open_dir / "secret.json"
    shutil.copyfile(files[1], secret)
    secret.chmod(0o000)
    line = error_line(run(module, targets, secret, *options, user=65534, cwd=open_dir))
    assert "secret.json" in line and "permission denied" in line


@both("cli")
def test_a_file_name_over_255_characters(cli, files, tmp_path):
    module, options = CLIS[cli]
    long_name = tmp_path / ("p" * 300 + ".json")
    line = error_line(run(module, files[0], long_name, *options))
    assert "p" * 300 in line and "too long" in line


# ---- hostile JSON -----------------------------------------------------------------------


@both("cli")
def test_100000_deep_nesting(cli, files, tmp_path):
    module, options = CLIS[cli]
    deep = tmp_path / "deep.json"
    deep.write_text('{"q1": ' + "[" * 100_000 + "]" * 100_000 + "}")
    line = error_line(run(module, files[0], deep, *options))
    assert "deep.json" in line and "nested too deeply" in line


@both("cli")
def test_a_count_of_ten_to_the_400(cli, files, tmp_path):
    module, options = CLIS[cli]
    huge = tmp_path / "huge.jsonl"
    huge.write_text(
        files[0].read_text() + '{"metadata": {"id": "q3"}, "question": {"normalized": "q"}, '
        '"answers": {"raw": {}, "clusters": {"q3.0": {"count": 1' + "0" * 400 + ', "answers": ["x"]}}}}\n'
    )
    line = error_line(run(module, huge, files[1], *options))
    assert "huge.jsonl, line 3, question 'q3'" in line and "too large" in line


@both("cli")
def test_an_integer_of_5000_digits(cli, files, tmp_path):
    module, options = CLIS[cli]
    long_int = tmp_path / "counts.json"
    long_int.write_text('{"model_answers_with_count": {"q1": [["dog", 1' + "0" * 5000 + "]]}}")
    line = error_line(run(module, files[0], long_int, *options))
    assert "counts.json" in line and "unsupported JSON value" in line


@both("cli")
def test_nan_literal(cli, files, tmp_path):
    module, options = CLIS[cli]
    nan = tmp_path / "nan.json"
    nan.write_text('{"model_answers_with_count": {"q1": [["dog", NaN]]}}')
    line = error_line(run(module, files[0], nan, *options))
    assert "nan.json" in line and "NaN" in line


@both("cli")
def test_duplicate_keys(cli, files, tmp_path):
    module, options = CLIS[cli]
    dup = tmp_path / "dup.json"
    dup.write_text('{\n  "q1": ["dog"],\n  "q2": ["red"],\n  "q1": ["cat"]\n}\n')
    line = error_line(run(module, files[0], dup, *options))
    assert "dup.json, line 4" in line and "duplicate key 'q1'" in line
    dup_targets = tmp_path / "dup_targets.jsonl"
    dup_targets.write_text(
        files[0].read_text() + '{"metadata": {"id": "q3", "id": "q4"}, "question": {"normalized": "q"}}\n'
    )
    line = error_line(run(module, dup_targets, files[1], *options))
    assert "dup_targets.jsonl, line 3" in line and "duplicate key 'id'" in line


@both("cli")
def test_a_string_where_a_list_is_expected(cli, files, tmp_path):
    module, options = CLIS[cli]
    bare = tmp_path / "bare.json"
    bare.write_text('{"q1": "dog"}')
    line = error_line(run(module, files[0], bare, *options))
    assert "bare.json" in line and "question 'q1'" in line and "list" in line


# ---- encodings and compression -----------------------------------------------------------


@both("cli")
def test_utf16_file(cli, files, tmp_path):
    module, options = CLIS[cli]
    utf16 = tmp_path / "utf16.json"
    utf16.write_bytes(files[1].read_text().encode("utf-16"))
    line = error_line(run(module, files[0], utf16, *options))
    assert "utf16.json" in line and "UTF-16" in line


@both("cli")
def test_invalid_utf8(cli, files, tmp_path):
    module, options = CLIS[cli]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"q1": ["dog"]}\n{"q2": ["r\xe9d"]}\n')
    line = error_line(run(module, files[0], bad, *options))
    assert "bad.jsonl, line 2" in line and "UTF-8" in line


@both("cli")
def test_gzip_is_read_transparently(cli, files, tmp_path):
    module, options = CLIS[cli]
    packed = tmp_path / "predictions.json.gz"
    packed.write_bytes(gzip.compress(files[1].read_bytes()))
    packed_targets = tmp_path / "targets.jsonl.gz"
    packed_targets.write_bytes(gzip.compress(files[0].read_bytes()))
    plain = run(module, *files, *options, "--json")
    zipped = run(module, packed_targets, packed, *options, "--json")
    assert plain.returncode == zipped.returncode == 0, zipped.stderr

    # Same numbers; only the file names in the output may differ.
    def strip(out: str) -> dict:
        return {k: v for k, v in json.loads(out).items() if k not in {"a", "b"}}

    assert strip(plain.stdout) == strip(zipped.stdout)


@both("cli")
def test_other_compression_is_refused(cli, files, tmp_path):
    module, options = CLIS[cli]
    packed = tmp_path / "predictions.json.bz2"
    packed.write_bytes(bz2.compress(files[1].read_bytes()))
    line = error_line(run(module, files[0], packed, *options))
    assert "predictions.json.bz2" in line and "bzip2" in line


def test_lone_surrogate_with_per_question(files, tmp_path):
    bad = tmp_path / "surrogate.json"
    bad.write_text('{"q1": ["\\ud800dog"]}')
    out = tmp_path / "out.jsonl"
    line = error_line(run(PROBEVAL, files[0], bad, *PROBEVAL_OPTIONS, "--per-question", out))
    assert "surrogate.json" in line and "surrogate" in line
    assert not out.exists()


def test_paired_surrogates_are_fine(files, tmp_path):
    emoji = tmp_path / "emoji.json"
    emoji.write_text('{"q1": ["\\ud83d\\ude00", "dog"]}')
    out = tmp_path / "out.jsonl"
    done = run(PROBEVAL, files[0], emoji, *PROBEVAL_OPTIONS, "--per-question", out, "--quiet", "--only-predicted")
    assert done.returncode == 0, done.stderr
    assert "\U0001f600" in out.read_text(encoding="utf-8")


# ---- output files: checked before any work, never destroying -----------------------------


def _bad_predictions(tmp_path: Path) -> Path:
    # If the output were checked after reading, this file's error would be reported instead.
    bad = tmp_path / "broken.json"
    bad.write_text('{"q1": ')
    return bad


@both("cli")
def test_per_question_into_a_directory(cli, files, tmp_path):
    module, options = CLIS[cli]
    line = error_line(run(module, files[0], _bad_predictions(tmp_path), *options, "--per-question", tmp_path))
    assert str(tmp_path) in line and "is a directory" in line


@both("cli")
def test_per_question_into_a_missing_folder(cli, files, tmp_path):
    module, options = CLIS[cli]
    out = tmp_path / "no" / "such" / "out.jsonl"
    line = error_line(run(module, files[0], _bad_predictions(tmp_path), *options, "--per-question", out))
    assert str(out) in line and "does not exist" in line


@pytest.mark.skipif(not _nobody_can_run(), reason="needs root and setpriv to run as an unprivileged user")
@both("cli")
def test_per_question_into_a_read_only_folder(cli, files, open_dir):
    module, options = CLIS[cli]
    for f in files:
        shutil.copyfile(f, open_dir / f.name)
        (open_dir / f.name).chmod(0o644)
    locked = open_dir / "locked"
    locked.mkdir(mode=0o555)
    locked.chmod(0o555)
    line = error_line(
        run(
            module,
            open_dir / files[0].name,
            open_dir / files[1].name,
            *options,
            "--per-question",
            locked / "out.jsonl",
            user=65534,
            cwd=open_dir,
        )
    )
    assert "locked" in line and "permission denied" in line


@both("cli")
def test_per_question_with_a_file_name_over_255_characters(cli, files, tmp_path):
    module, options = CLIS[cli]
    out = tmp_path / ("o" * 300 + ".jsonl")
    line = error_line(run(module, files[0], _bad_predictions(tmp_path), *options, "--per-question", out))
    assert "too long" in line


@both("cli")
def test_per_question_never_replaces_an_existing_file_without_force(cli, files, tmp_path):
    module, options = CLIS[cli]
    out = tmp_path / "mine.jsonl"
    out.write_text("precious\n")
    line = error_line(run(module, *files, *options, "--per-question", out))
    assert "mine.jsonl" in line and "--overwrite" in line
    assert out.read_text() == "precious\n"
    for flag in ("--overwrite", "--force"):  # one name in --help and messages; the other spelling still works
        out.write_text("precious\n")
        done = run(module, *files, *options, "--per-question", out, flag)
        assert done.returncode == 0, done.stderr
        assert json.loads(out.read_text().splitlines()[0])["id"] == "q1"
    shown = run(module, "evaluate", "--help")
    assert "--overwrite" in shown.stdout and "--force" not in shown.stdout


@both("cli")
def test_per_question_never_writes_over_an_input(cli, files, tmp_path):
    module, options = CLIS[cli]
    before = files[1].read_text()
    link = tmp_path / "alias.json"
    link.symlink_to(files[1])
    for target in (files[1], link, tmp_path / "." / files[1].name):
        line = error_line(run(module, *files, *options, "--per-question", target, "--force"))
        assert "input file" in line
    assert files[1].read_text() == before


# ---- output that is what it claims ----------------------------------------------------------


def _strict_json(text: str):
    def refuse(name):
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


@both("cli")
def test_nothing_to_score_is_an_error_unless_allowed(cli, tmp_path):
    module, options = CLIS[cli]
    targets = tmp_path / "no_truth.jsonl"
    targets.write_text(_target("q1", {}) + "\n" + _target("q2", {"q2.0": {"count": 0, "answers": ["x"]}}) + "\n")
    predictions = tmp_path / "p.json"
    predictions.write_text('{"q1": ["dog"]}')
    line = error_line(run(module, targets, predictions, *options, "--json"))
    assert "no_truth.jsonl" in line and "--allow-empty" in line
    allowed = run(module, targets, predictions, *options, "--json", "--allow-empty")
    assert allowed.returncode == 0, allowed.stderr
    out = _strict_json(allowed.stdout)
    if cli == "probeval":
        assert out["kl"] is None and out["num_questions"] == 0
    else:
        assert out["max_answers@1"] == 0.0 and "|n:0|" in out["signature"]


@both("cli")
def test_an_empty_predictions_file_scores_zero_or_is_refused_with_a_warning(cli, files, tmp_path):
    module, options = CLIS[cli]
    empty = tmp_path / "empty.json"
    empty.write_text("")
    done = run(module, files[0], empty, *options, "--json")
    warnings = [line for line in done.stderr.splitlines() if "empty.json" in line]
    assert warnings and "warning" in warnings[0] and "no predictions" in warnings[0]
    if cli == "protoqa-eval":
        assert done.returncode == 0, done.stderr
        assert _strict_json(done.stdout)["max_answers@all"] == 0.0
    else:
        # Silence would score better than answers under ProbEval: an empty file is refused.
        assert done.returncode == 2 and done.stdout == ""
        assert "probeval: error: the samples answer 0 of the 2 question(s)" in error_line(done)


# ---- options ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    [
        ["--threshold", "-5"],
        ["--threshold", "nan"],
        ["--k-max", "0"],
        ["--k-init", "-1"],
        ["--alpha", "2"],
        ["--seed", "-1"],
        ["--distance-threshold", "inf"],
    ],
)
def test_probeval_option_ranges(option, tmp_path):
    # The files do not exist: the options must be refused before anything is read.
    line = error_line(run(PROBEVAL, tmp_path / "t.jsonl", tmp_path / "p.json", *option))
    assert option[0] in line


def test_probeval_option_combinations(files):
    line = error_line(run(PROBEVAL, *files, "--clustering", "xmeans", "--k-init", "5", "--k-max", "3"))
    assert "k_init" in line and "k_max" in line


@both("cli")
def test_compare_with_zero_resamples(cli, files):
    module, _ = CLIS[cli]
    line = error_line(run(module, "compare", files[0], files[1], files[1], "--resamples", "0"))
    assert "--resamples" in line


@both("cli")
def test_compare_without_target_answers(cli, tmp_path):
    module, _ = CLIS[cli]
    targets = tmp_path / "questions.jsonl"
    targets.write_text(_target("q1", {}) + "\n")
    predictions = tmp_path / "p.json"
    predictions.write_text('{"q1": ["dog"]}')
    extra = (
        ["--clustering", "human", "--embedder", "char-ngrams", "--matching", "cosine"]
        if cli == "probeval"
        else ["--similarity", "exact_match"]
    )
    line = error_line(run(module, "compare", targets, predictions, predictions, *extra))
    assert "questions.jsonl" in line


# ---- a closed standard output ---------------------------------------------------------------


@both("cli")
def test_stdout_closed_early(cli, files):
    module, options = CLIS[cli]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, *module, *files, *options, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    process.stdout.close()  # the reader is gone before anything is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=TIME_LIMIT) == 2
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
    assert not [line for line in stderr.splitlines() if "warning:" not in line]


@both("cli")
def test_piped_into_head(cli, files):
    module, options = CLIS[cli]
    command = " ".join([sys.executable, *module, *map(str, files), *options, "--json", "2>&1 | head -c1"])
    done = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert len(done.stdout) == 1 and "Traceback" not in done.stderr


# ---- the library: defined values -------------------------------------------------------------


def test_zero_count_clusters_score_zero_not_nan():
    clusters = [Cluster("a", ("dog",), 0), Cluster("b", ("cat",), 0)]
    result = score_question(["dog"], clusters, "exact_match")
    assert result.score == 0.0 and result.oracle_score == 0.0
    assert score_question(["dog"], [], "exact_match").score == 0.0
    import numpy as np

    assert score_matrix(np.zeros((1, 0)), []).score == 0.0


def test_a_bare_string_is_not_a_list_of_predictions():
    clusters = [Cluster("a", ("d",), 3)]
    with pytest.raises(DataFormatError, match="got a string"):
        score_question("dog", clusters, "exact_match")
    with pytest.raises(DataFormatError, match="got a string"):
        Cluster("a", "dog", 3)


# ---- the dataset export never destroys what the user has ---------------------------------------


def test_export_into_the_data_folder_it_reads(tmp_path):
    data = tmp_path / "data"
    (data / "cfc").mkdir(parents=True)
    readme = data / "README.md"
    readme.write_text("the data's own README\n")
    done = run(["-m", "protoqa_dataset"], "export", data, "--data-dir", data, "--overwrite")
    assert done.returncode == 2 and "Traceback" not in done.stderr  # the documented error status of every command
    assert len(done.stderr.strip().splitlines()) == 1 and str(data) in done.stderr
    assert "inside the data folder" in done.stderr
    assert readme.read_text() == "the data's own README\n"
