"""The leaderboard's on-disk index of system files: the same board as the files read whole, one system held
at a time, and what a large or hostile file gets (repeated ids, ids outside the targets, the answers cap)."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_integrations.leaderboard.board import build_leaderboard, read_system
from protoqa_integrations.leaderboard.store import SystemIndex
from tests.support.leaderboard_files import protoqa_eval

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "data"
PROTOQA_DEV = DATA / "protoqa" / "dev.crowdsourced.jsonl"
CFC = DATA / "cfc"
needs_data = pytest.mark.skipif(not PROTOQA_DEV.is_file(), reason=f"shared data not found under {DATA}")
FAST = ("--metrics", "protoqa", "--similarity", "exact_match", "--resamples", "200")


def one_line_failure(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in result.stderr and not result.stdout, result.stderr
    return errors[0]


def _dev_lists() -> dict[str, list[str]]:
    return json.loads((DATA / "protoqa" / "dev.predictions.gpt2finetuned.json").read_text())


def _large_document(path: Path, lists: dict[str, list[str]], extra: int, repeat: str = "") -> None:
    """``lists`` and ``extra`` ids outside the targets, over 16 MB (read as a stream), gzip-compressed;
    ``repeat`` gives one id a second time at the end."""
    with gzip.open(path, "wt") as fh:
        fh.write("{\n")
        for qid, answers in lists.items():
            fh.write(f"{json.dumps(qid)}: {json.dumps(answers)},\n")
        for i in range(extra):
            fh.write(f'"x{i:06d}": {json.dumps([f"answer {j}" for j in range(300)])},\n')
        if repeat:
            fh.write(f"{json.dumps(repeat)}: [],\n")
        fh.write('"x-last": []\n}\n')


@needs_data
def test_the_index_gives_the_board_of_the_files_read_whole():
    from protoqa_core.io.readers import read_targets

    targets = read_targets(PROTOQA_DEV)
    files = {
        "ft": DATA / "protoqa" / "dev.predictions.gpt2finetuned.json",
        "cfc-xl": CFC / "dev.predictions.gpt2-xl.oneshot.json",
    }
    whole = [read_system(name, path) for name, path in files.items()]
    # Ranked lists against samples: the counts differ, accepted here to compare the two readings.
    settings = {"similarity": "exact_match", "only_common": True, "resamples": 200, "accept": ["samples"]}
    expected = build_leaderboard(targets, whole, **settings)
    with SystemIndex(targets) as index:
        listed = [index.add(name, path) for name, path in files.items()]
        # Only names, formats and provenance stay in memory; the answers are on disk until scored.
        assert all(s.samples == {} for s in listed)
        board = build_leaderboard(targets, listed, **settings, index=index)
    assert board.as_dict(per_question=True) == expected.as_dict(per_question=True)


@pytest.mark.slow
@needs_data
def test_a_large_document_is_streamed_its_outside_ids_counted_and_a_repeated_id_refused(tmp_path):
    lists = _dev_lists()
    _large_document(tmp_path / "big.json.gz", lists, 8000)
    (tmp_path / "small.json").write_text(json.dumps(lists))
    line = one_line_failure(
        protoqa_eval("leaderboard", PROTOQA_DEV, "big=big.json.gz", "small=small.json", *FAST, cwd=tmp_path)
    )
    assert "big answers 8001 id(s) not in the targets: x000000, x000001" in line and "--only-common" in line
    ranked = protoqa_eval(
        "leaderboard",
        PROTOQA_DEV,
        "big=big.json.gz",
        "small=small.json",
        *FAST,
        "--only-common",
        "--json",
        cwd=tmp_path,
    )
    assert ranked.returncode == 0, ranked.stderr
    board = json.loads(ranked.stdout)
    assert board["num_questions"] == len(lists) and len(board["questions_dropped"]) == 8001
    assert board["questions_dropped"][:2] == ["x-last", "x000000"]  # sorted, each once
    scores = {s["name"]: s["scores"]["max_answers@10"]["mean"] for s in board["systems"]}
    assert scores["big"] == scores["small"]
    assert "warning: ranking on the 52 questions every system answers; 8001 question id(s) left out" in ranked.stderr

    _large_document(tmp_path / "twice.json.gz", lists, 8000, repeat="x000007")
    line = one_line_failure(
        protoqa_eval("leaderboard", PROTOQA_DEV, "t=twice.json.gz", "small=small.json", *FAST, cwd=tmp_path)
    )
    assert "twice.json.gz" in line and "x000007" in line and "duplicate question id" in line


@needs_data
def test_the_answers_cap_applies_to_every_format_and_can_be_raised(tmp_path):
    lists = _dev_lists()
    many = dict(lists)
    many["r1q2"] = [f"answer {i}" for i in range(501)]
    (tmp_path / "many.json").write_text(json.dumps(many))
    records = [
        {"doc_id": i, "doc": {"id": qid}, "filter": "answers", "filtered_resps": [answers]}
        for i, (qid, answers) in enumerate(many.items())
    ]
    lm_eval = tmp_path / "samples_protoqa_2026-01-01T00-00-00.jsonl"
    lm_eval.write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "small.json").write_text(json.dumps(lists))
    for name in ("many.json", lm_eval.name):
        line = one_line_failure(
            protoqa_eval("leaderboard", PROTOQA_DEV, f"m={name}", "s=small.json", *FAST, cwd=tmp_path)
        )
        assert name in line and "r1q2" in line and "more than 500 answers for one question" in line
        assert "--max-answers" in line
    raised = protoqa_eval(
        "leaderboard", PROTOQA_DEV, f"m={lm_eval.name}", "s=small.json", *FAST, "--max-answers", "501", cwd=tmp_path
    )
    assert raised.returncode == 0, raised.stderr
    line = one_line_failure(
        protoqa_eval(
            "leaderboard", PROTOQA_DEV, "m=many.json", "s=small.json", *FAST, "--max-answers", "0", cwd=tmp_path
        )
    )
    assert "--max-answers" in line


def test_an_empty_document_or_one_without_ids_is_an_error(tmp_path):
    cases = {"{}": "holds no predictions", '{"generation": {"model": "x"}}': "answers must be a list, got dict"}
    for text, message in cases.items():
        (tmp_path / "nothing.json").write_text(text)
        with SystemIndex(["q1"]) as index, pytest.raises(DataFormatError, match=message):
            index.add("x", tmp_path / "nothing.json")


def test_the_index_refuses_a_repeated_id_in_one_field_only(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"q1": ["dog"],\n"q1": ["cat"]}')
    with SystemIndex(["q1"]) as index, pytest.raises(DataFormatError, match="duplicate"):
        index.add("a", path)
    path.write_text(json.dumps({"model_answers": {"q1": ["dog"]}, "model_ranked_answers": {"q1": ["dog"]}}))
    with SystemIndex(["q1"]) as index:
        assert index.load(index.add("a", path)).ranked == {"q1": ["dog"]}


def test_the_index_folder_is_the_one_sqlite_takes_and_a_full_one_is_named(tmp_path, monkeypatch):
    import sqlite3

    from protoqa_integrations.leaderboard.store import IndexSpaceError, SystemIndex, index_folder

    monkeypatch.setenv("SQLITE_TMPDIR", str(tmp_path))
    assert index_folder() == str(tmp_path)
    monkeypatch.setenv("SQLITE_TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert index_folder() == str(tmp_path)
    with pytest.raises(IndexSpaceError, match=rf"could not be written in {tmp_path} \(TMPDIR; [\d,]+ MB free\)"):
        with SystemIndex(["q1"]):
            raise sqlite3.OperationalError("database or disk is full")
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        with SystemIndex(["q1"]):
            raise sqlite3.OperationalError("no such table: x")
