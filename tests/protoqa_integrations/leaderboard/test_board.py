"""``protoqa-eval leaderboard`` and ``convert``: figures equal to the single-system commands, hostile inputs, outputs."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from protoqa_core.io.records import Cluster, Question
from protoqa_core.significance import bootstrap_ci, holm_adjust, paired_bootstrap
from protoqa_integrations.leaderboard.board import MAX_SYSTEMS, build_leaderboard, leaderboard_from_dict, read_system
from protoqa_integrations.leaderboard.report import (
    LeaderboardError,
    SystemAnswers,
    format_table,
    model_index,
    to_csv,
    to_markdown,
)
from tests.support.leaderboard_files import FAST, protoqa_eval, write_small_files
from tests.support.offline import offline_env
from tests.support.paths import CFC_TEST, DATA, PROTOQA_DEV, needs_data
from tests.support.processes import run_python

CFC_MODELS = [
    f"{model}.{setting}"
    for model in ("gpt2-large", "gpt2-xl", "protoqa-ft", "gpt2-large-ft")
    for setting in ("zeroshot", "oneshot")
]


def questions(n: int) -> dict[str, Question]:
    return {
        f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6), Cluster(f"q{i}.1", ("cat",), 4)))
        for i in range(n)
    }


def system(name: str, answers: dict[str, list[str]]) -> SystemAnswers:
    counts = {q: {a: answers[q].count(a) for a in answers[q]} for q in answers}
    return SystemAnswers(name, f"{name}.json", "predictions", counts, dict(answers))


@pytest.fixture
def small_files(tmp_path):
    """Targets with 3 questions and two prediction files answering them."""
    return write_small_files(tmp_path)


# ---------------------------------------------------------------- the statistics


def test_every_system_is_resampled_on_the_same_questions_and_tested_in_pairs():
    rng = np.random.default_rng(0)
    qs = questions(40)
    good = system("good", {q: ["dog", "cat"] if rng.random() < 0.8 else ["fish"] for q in qs})
    fair = system("fair", {q: ["cat"] if rng.random() < 0.7 else ["fish"] for q in qs})
    poor = system("poor", {q: ["fish"] for q in qs})
    board = build_leaderboard(qs, [fair, good, poor], metrics=["protoqa"], similarity="exact_match")
    key = "max_answers@1"
    values = {}
    for s in (good, fair, poor):
        one = build_leaderboard(qs, [s], metrics=["protoqa"], similarity="exact_match")
        assert one.scores[key][s.name] == board.scores[key][s.name]
        scores = board.scores[key][s.name]
        # The same intervals as the single-system bootstrap of protoqa_core.significance.
        per_question = [1.0 if s.ranked[q][0] == "dog" else (0.4 / 0.6 if s.ranked[q][0] == "cat" else 0.0) for q in qs]
        values[s.name] = per_question
        ci = bootstrap_ci(per_question)
        assert (scores.mean, scores.low, scores.high) == pytest.approx((ci.mean, ci.low, ci.high), abs=1e-12)
    # Paired tests on the shared resamples, then Holm over the three pairs.
    raw = [
        paired_bootstrap(values[a], values[b]).p_value
        for a, b in [("fair", "good"), ("fair", "poor"), ("good", "poor")]
    ]
    assert list(board.p_values[key].values()) == pytest.approx(holm_adjust(raw), abs=2e-3)
    assert board.order(key) == ["good", "fair", "poor"]
    assert board.ranks[key] == {"good": (1, 1), "fair": (2, 2), "poor": (3, 3)}


def test_systems_not_told_apart_share_a_rank_range():
    qs = questions(30)
    a = system("a", {q: ["dog"] if i % 2 else ["cat"] for i, q in enumerate(qs)})
    b = system("b", {q: ["cat"] if i % 2 else ["dog"] for i, q in enumerate(qs)})
    board = build_leaderboard(qs, [a, b], metrics=["protoqa"], similarity="exact_match")
    assert board.ranks["max_answers@1"] == {"a": (1, 2), "b": (1, 2)}
    assert "(1-2)" in format_table(board)


def test_holm_adjusts_in_step_down_order():
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm_adjust([]) == []


# ---------------------------------------------------------------- outputs


def test_json_csv_markdown_and_model_index_carry_the_same_figures():
    yaml = pytest.importorskip("yaml")
    qs = questions(12)
    board = build_leaderboard(
        qs,
        [system("x", {q: ["dog"] for q in qs}), system("y", {q: ["cat", "dog"] for q in qs})],
        metrics=["protoqa"],
        similarity="exact_match",
    )
    document = json.loads(json.dumps(board.as_dict(), allow_nan=False))
    assert document["num_questions"] == 12 and [s["name"] for s in document["systems"]] == ["x", "y"]
    assert document["systems"][0]["scores"]["max_answers@1"]["mean"] == 1.0
    rows = list(csv.DictReader(io.StringIO(to_csv(board))))
    assert len(rows) == 2 * 7 and {r["metric"] for r in rows} >= {"max_answers@1", "max_incorrect@5"}
    assert float(
        next(r for r in rows if r["system"] == "y" and r["metric"] == "max_answers@1")["mean"]
    ) == pytest.approx(4 / 6)
    markdown = to_markdown(board)
    assert markdown.startswith("| system | format |") and board.signature in markdown
    blocks = model_index(board, "protoqa", "ProtoQA dev", "validation")
    card = yaml.safe_load(blocks["y"])["model-index"][0]
    assert card["name"] == "y"
    result = card["results"][0]
    assert result["dataset"] == {"type": "protoqa", "name": "ProtoQA dev", "split": "validation"}
    metric = next(m for m in result["metrics"] if m["type"] == "max_answers@1")
    assert metric["value"] == pytest.approx(4 / 6) and metric["config"].startswith("sim:exact_match|")


def test_an_accepted_mismatch_marks_every_metric_signature_and_survives_a_round_trip():
    qs = questions(6)
    board = build_leaderboard(
        qs, [system("x", {q: ["dog"] for q in qs})], metrics=["protoqa"], similarity="exact_match"
    )
    plain = [m["signature"] for m in board.as_dict()["metrics"]]
    board.accepted = ["samples (x.json: 30, y.json: 300)"]
    document = json.loads(json.dumps(board.as_dict(per_question=True)))
    assert [m["signature"] for m in document["metrics"]] == [f"{s}|accepted-mismatch:samples" for s in plain]
    assert document["signature"].endswith(" ; accepted-mismatch:samples")
    again = leaderboard_from_dict(document)
    # Read back, the mark is added once on output, never twice.
    assert again.as_dict(per_question=True)["metrics"] == document["metrics"]
    assert again.signature == board.signature and again.scores == board.scores


# ---------------------------------------------------------------- bad input


def one_line_failure(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in result.stderr and not result.stdout, result.stderr
    return errors[0]


@pytest.mark.parametrize(
    ("systems", "expected"),
    [
        (["a=missing.json", "b=b.json"], "not found: missing.json"),
        (["a=empty.json", "b=b.json"], "empty.json: the file is empty"),
        (["a=unknown.csv", "b=b.json"], "unknown.csv: unknown format"),
        (["a=unknown.bin", "b=b.json"], "unknown.bin: the file holds NUL bytes"),
        (["a=list.json", "b=b.json"], "list.json: unknown format"),
        (["a=folder", "b=b.json"], "is a directory"),
        (["a=pipe", "b=b.json"], "pipe: not a regular file"),
        (["a=a.json", "a=b.json"], "two systems are named 'a'"),
        (["runs/a=a.json", "b=b.json"], "path separator"),
        (["a.json", "b=b.json"], "expected NAME=FILE"),
        ([f"s{i}=missing{i}.json" for i in range(1000)], f"at most {MAX_SYSTEMS}"),
    ],
)
def test_bad_systems_end_with_one_line_and_status_2(small_files, systems, expected):
    (small_files / "empty.json").write_text("")
    (small_files / "unknown.bin").write_bytes(b"\x00\x01garbage\xff")
    (small_files / "unknown.csv").write_text("system,score\nx,1\n")
    (small_files / "list.json").write_text('["dog", "cat"]')
    (small_files / "folder").mkdir()
    os.mkfifo(small_files / "pipe")  # nobody writes to it: reading it would wait forever
    line = one_line_failure(protoqa_eval("leaderboard", "targets.jsonl", *systems, *FAST, cwd=small_files))
    assert expected in line


def test_different_question_sets_are_refused_naming_ids_unless_only_common(small_files):
    (small_files / "c.json").write_text(json.dumps({"q0": ["dog"], "q2": ["cat"], "q9": ["cat"]}))
    line = one_line_failure(
        protoqa_eval("leaderboard", "targets.jsonl", "a=a.json", "c=c.json", *FAST, cwd=small_files)
    )
    assert "c lacks 1 question(s): q1" in line and "not in the targets: q9" in line and "--only-common" in line
    common = protoqa_eval(
        "leaderboard", "targets.jsonl", "a=a.json", "c=c.json", *FAST, "--only-common", "--json", cwd=small_files
    )
    assert common.returncode == 0, common.stderr
    assert "ranking on the 2 questions every system answers; 2 question id(s) left out" in common.stderr
    document = json.loads(common.stdout)
    assert document["num_questions"] == 2 and document["questions_dropped"] == ["q1", "q9"]


def test_library_refuses_what_the_command_refuses():
    qs = questions(3)
    s = system("s", {q: ["dog"] for q in qs})
    with pytest.raises(LeaderboardError, match="two systems are named 's'"):
        build_leaderboard(qs, [s, s], metrics=["protoqa"], similarity="exact_match")
    with pytest.raises(LeaderboardError, match=f"at most {MAX_SYSTEMS}"):
        build_leaderboard(qs, [s] * (MAX_SYSTEMS + 1), metrics=["protoqa"])
    with pytest.raises(LeaderboardError, match="no systems"):
        build_leaderboard(qs, [], metrics=["protoqa"])


def test_an_empty_predictions_object_is_an_error_not_a_silent_zero(tmp_path):
    path = tmp_path / "nothing.json"
    path.write_text("{}")
    with pytest.raises(ValueError, match="no predictions"):
        read_system("x", path)


@pytest.mark.parametrize(
    "name",
    [
        "protoqa_integrations.leaderboard.board",
        "protoqa_integrations.harnesses.outputs",
        "protoqa_integrations.harnesses.harness_logs",
        "protoqa_integrations.leaderboard.cli",
        "protoqa_integrations.leaderboard.report",
        "protoqa_integrations.leaderboard.store",
    ],
)
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


# ---------------------------------------------------------------- against the single-system commands


@pytest.mark.slow
@needs_data
def test_cfc_test_kl_of_every_gpt2_file_equals_probeval(tmp_path):
    files = {name: DATA / "cfc" / f"test.samples.{name}.jsonl" for name in CFC_MODELS}
    out = protoqa_eval(
        "leaderboard",
        str(CFC_TEST),
        *[f"{n}={p}" for n, p in files.items()],
        "--metrics",
        "probeval",
        "--json",
        cwd=tmp_path,
    )
    # The files hold distinct answers, 100 to 200 per question at most: different counts are refused.
    assert out.returncode == 2 and "differ in samples per question, counted from their answers" in out.stderr
    out = protoqa_eval(
        "leaderboard",
        str(CFC_TEST),
        *[f"{n}={p}" for n, p in files.items()],
        "--metrics",
        "probeval",
        "--accept-mismatch",
        "samples",
        "--json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert "|n_samples:98-200|" in document["metrics"][0]["signature"]
    board = {s["name"]: s["scores"]["probeval_kl"] for s in document["systems"]}
    for name, path in files.items():
        single = run_python(
            ["-m", "cfc_probeval", str(CFC_TEST), str(path), "--json"], tmp_path, offline_env(), timeout=600
        )
        assert single.returncode == 0, single.stderr
        assert abs(board[name]["mean"] - json.loads(single.stdout)["kl"]) <= 1e-9, name
    # Rank ranges: the best (GPT-2 large fine-tuned on CFC, zero-shot) is told apart from the worst.
    assert board["gpt2-large-ft.zeroshot"]["rank"][0] == 1 and board["gpt2-large.zeroshot"]["rank"] == [8, 8]


@pytest.mark.slow
@needs_data
def test_protoqa_dev_max_answers_equal_protoqa_eval(tmp_path):
    files = {
        "finetuned": DATA / "protoqa" / "dev.predictions.gpt2finetuned.json",
        "human": DATA / "protoqa" / "dev.predictions.human.jsonl",
    }
    out = protoqa_eval(
        "leaderboard",
        str(PROTOQA_DEV),
        *[f"{n}={p}" for n, p in files.items()],
        "--metrics",
        "protoqa",
        "--json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    board = {s["name"]: s["scores"] for s in json.loads(out.stdout)["systems"]}
    for name, path in files.items():
        single = protoqa_eval(
            str(PROTOQA_DEV), str(path), "--similarity", "wordnet", "--metrics", "paper", "--json", cwd=tmp_path
        )
        assert single.returncode == 0, single.stderr
        scores = json.loads(single.stdout)
        for k in (1, 3, 5, 10):
            assert board[name][f"max_answers@{k}"]["mean"] == scores[f"max_answers@{k}"], (name, k)


# ---------------------------------------------------------------- names that cannot harm a reader

HOSTILE_NAMES = {
    "marquee": "<marquee onstart=alert(1)>x</marquee>",
    "link": "[x](javascript:alert(1))",
    "formula": "@SUM(1+1)",
    "dde": "+cmd|' -C calc'!A0",
    "math": "$a^b^c$",
    "minus": "-2+3",
    "quote": 'say "hi" # and: \\ [b]',
}


def test_hostile_names_are_shown_literally_in_every_format(small_files):
    pytest.importorskip("matplotlib")
    yaml = pytest.importorskip("yaml")
    qs = questions(3)
    systems = [
        system(name, {q: ["dog", "cat"][: i % 2 + 1] for q in qs}) for i, name in enumerate(HOSTILE_NAMES.values())
    ]
    board = build_leaderboard(qs, systems, metrics=["protoqa"], similarity="exact_match", resamples=50)
    markdown = to_markdown(board)
    assert "<marquee" not in markdown and "&lt;marquee onstart=alert(1)&gt;x&lt;/marquee&gt;" in markdown
    assert "| [x](" not in markdown and "| \\[x\\](javascript:alert(1)) |" in markdown  # text, not a link
    assert "\\$a^b^c\\$" in markdown
    # Every text cell a spreadsheet could read as a formula starts with a quote.
    for row in csv.reader(io.StringIO(to_csv(board))):
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row[:3]), row
    names = {row[0] for row in list(csv.reader(io.StringIO(to_csv(board))))[1:]}
    assert {"'@SUM(1+1)", "'+cmd|' -C calc'!A0", "'-2+3", "$a^b^c$"} <= names
    # The plot draws "$a^b^c$" as text, not as (broken) math.
    from protoqa_integrations.leaderboard.report import plot_leaderboard

    plot_leaderboard(board, small_files / "board.png")
    assert (small_files / "board.png").read_bytes()[:4] == b"\x89PNG"
    # model-index YAML reads back every name as it was.
    for name, block in model_index(board, "protoqa", "ProtoQA dev", "validation").items():
        assert yaml.safe_load(block)["model-index"][0]["name"] == name


@pytest.mark.parametrize("bad", ["a\x7fb", "a\x85b", "a\u2028b", "a\u202eb", "a\nb", "a\x1bb"])
def test_names_yaml_or_a_terminal_would_mangle_are_refused_before_any_file_is_read(small_files, bad):
    # The file does not exist: the name is refused first, so a bad name never costs a run.
    line = one_line_failure(
        protoqa_eval("leaderboard", "targets.jsonl", f"{bad}=missing.json", "b=b.json", *FAST, cwd=small_files)
    )
    assert "holds the control character U+" in line and "printable characters only" in line


# ---------------------------------------------------------------- bad input: one line naming the file and the fix


def _wrong_type_parquet(path: Path) -> Path:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"doc": ["a", "b"], "model_response": [1, 2]}), path)
    return path


@pytest.mark.parametrize("command", ["leaderboard", "convert"])
def test_deep_cut_and_wrong_type_files_end_in_one_line_naming_the_file(small_files, command):
    (small_files / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (small_files / "cut.json").write_text('{"q0": ["dog",\n "cat"')
    _wrong_type_parquet(small_files / "details_protoqa|0_2026-01-01T00-00-00.parquet")
    expected = {
        "deep.json": "deep.json: JSON nested too deeply; expected an answers file",
        "cut.json": "cut.json, line 2: malformed JSON (Expecting ',' delimiter at column 7): the file is cut short",
        "details_protoqa|0_2026-01-01T00-00-00.parquet": "'doc' and 'model_response' are not the structs lighteval "
        "writes (doc is str, model_response int); pass the details file",
    }
    for name, message in expected.items():
        if command == "leaderboard":
            result = protoqa_eval("leaderboard", "targets.jsonl", f"a={name}", "b=b.json", *FAST, cwd=small_files)
        else:
            result = protoqa_eval("convert", name, "-o", "out.json", cwd=small_files)
        assert message in one_line_failure(result)
        assert "unexpected" not in result.stderr


def test_a_read_only_model_index_folder_is_one_line(small_files, monkeypatch, capsys):
    import errno

    from protoqa_integrations.cli import main

    monkeypatch.chdir(small_files)
    real = tempfile.NamedTemporaryFile

    def read_only(*args, **kwargs):  # what a read-only file system answers to the writability probe
        if "cards" in str(kwargs.get("dir", "")):
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, **kwargs)

    (small_files / "cards").mkdir()
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", read_only)
    args = ["targets.jsonl", "a=a.json", "b=b.json", *FAST, "--dataset-type", "someone/pets"]
    assert main(["leaderboard", *args, "--model-index", "cards"]) == 2
    err = capsys.readouterr().err.strip()
    assert "read-only file system; choose a writable --model-index folder" in err and "Errno" not in err

    def no_mkdir(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Path, "mkdir", no_mkdir)
    assert main(["leaderboard", *args, "--model-index", "new"]) == 2
    err = capsys.readouterr().err.strip()
    assert "new: cannot make the --model-index folder: read-only file system; choose a writable folder" in err


def test_the_model_index_folder_and_data_set_id_are_checked_by_the_library(tmp_path):
    from protoqa_integrations.leaderboard.report import check_hub_id, model_index_files

    (tmp_path / "file").write_text("")
    with pytest.raises(LeaderboardError, match="--model-index needs a folder, and this is a file"):
        model_index_files(tmp_path / "file", ["a"], [], overwrite=False)
    files = model_index_files(tmp_path / "cards", ["a", "b"], [], overwrite=False)
    assert files == {"a": tmp_path / "cards" / "a.yaml", "b": tmp_path / "cards" / "b.yaml"}
    files["a"].write_text("model-index: []\n")
    with pytest.raises(LeaderboardError, match="--overwrite"):
        model_index_files(tmp_path / "cards", ["a"], [], overwrite=False)
    assert model_index_files(tmp_path / "cards", ["a"], [], overwrite=True) == {"a": files["a"]}
    for bad, message in (("", "needs --dataset-type"), ("x.jsonl", "is a file name"), ("a b", "not a Hugging Face")):
        with pytest.raises(LeaderboardError, match=message):
            check_hub_id(bad)


# ---------------------------------------------------------------- the clustering seed's share


def _raw_pets(n: int) -> dict[str, Question]:
    answers = {"dog": 5, "puppy": 2, "cat": 4, "kitten": 1, "goldfish": 3, "hamster": 2, "parrot": 1}
    return {f"q{i}": Question(f"q{i}", "name a pet", (), raw_answers=answers) for i in range(n)}


def test_a_seeded_clustering_puts_its_share_in_every_interval_and_survives_a_round_trip():
    from cfc_probeval.probeval import ProbEval

    q = _raw_pets(12)
    one = system("one", {k: ["dog", "dog", "cat", "fish", "parrot", "hamster"] for k in q})
    two = system("two", {k: ["cat", "kitten", "goldfish", "puppy", "rock", "dog"] for k in q})
    three = system("three", {k: ["dog"] * 6 for k in q})
    seeded = ProbEval("gmeans", embedder="char-ngrams", seed=5)
    board = build_leaderboard(q, [one, two], metrics=["probeval"], probeval=seeded, resamples=200)
    column = board.columns[0]
    assert column.signature.endswith("|clustering_draws:5") and "clustering_draws:5" in board.signature
    assert "mean over 5 automatic clusterings" in format_table(board)
    drawn = board.draws["probeval_kl"]["one"]
    assert len(drawn) == 5 and board.per_question["probeval_kl"]["one"] == pytest.approx(np.mean(drawn, axis=0))
    assert board.scores["probeval_kl"]["one"].mean == pytest.approx(float(np.mean(drawn)))
    document = json.loads(json.dumps(board.as_dict(per_question=True)))
    again = leaderboard_from_dict(document)
    assert again.scores == board.scores and again.p_values == board.p_values and again.draws == board.draws
    from protoqa_integrations.leaderboard.board import add_systems

    added = add_systems(again, q, [three], probeval=seeded)
    assert len(added.draws["probeval_kl"]["three"]) == 5
    whole = build_leaderboard(q, [one, two, three], metrics=["probeval"], probeval=seeded, resamples=200)
    assert added.scores == whole.scores and added.ranks == whole.ranks
    # Human clusters and the greedy start are scored once: nothing is drawn and nothing named.
    greedy = ProbEval("gmeans", embedder="char-ngrams", init="greedy")
    for setting, targets in ((greedy, q), (None, questions(12))):
        once = build_leaderboard(targets, [one, two], metrics=["probeval"], probeval=setting, resamples=200)
        assert not once.draws and "clustering_draws" not in once.signature
        assert "per_question_draws" not in once.as_dict(per_question=True)
