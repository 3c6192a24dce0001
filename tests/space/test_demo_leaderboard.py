"""The Space's Leaderboard tab: the shipped boards, uploads ranked against them within the Space's limits."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

SPACE_DIR = Path(__file__).resolve().parents[2] / "space"
sys.path.insert(0, str(SPACE_DIR))

import demo_leaderboard  # noqa: E402
from demo_errors import DemoError  # noqa: E402

from protoqa_integrations.hub import serving  # noqa: E402

DATA = SPACE_DIR.parents[1] / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA / "cfc" / "test.targets.jsonl").is_file(), reason="shared data not found")


@pytest.mark.parametrize("key", list(demo_leaderboard.BOARDS))
def test_every_shipped_board_has_its_table_plot_and_signature(key):
    board = demo_leaderboard.shipped_board(key)
    headers, rows = demo_leaderboard.board_table(board)
    assert headers[:2] == ["system", board.columns[0].label] and len(rows) == len(board.systems) >= 2
    # Rows are best first by the first metric, its means are numbers the table can sort.
    means = [row[1] for row in rows]
    assert means == sorted(means, reverse=board.columns[0].higher_is_better)
    assert Path(demo_leaderboard.board_plot(key)).read_bytes()[:4] == b"\x89PNG"
    assert "Signature:" in demo_leaderboard.board_markdown(board)
    # The shipped JSON holds the per-question scores the figures are recomputed from.
    document = json.loads((demo_leaderboard.LEADERBOARD_DIR / f"{key}.json").read_text())
    shipped = {s["name"]: s["scores"] for s in document["systems"]}
    for column in board.columns:
        for name, score in board.scores[column.key].items():
            assert shipped[name][column.key]["mean"] == pytest.approx(score.mean, abs=1e-12)
            assert shipped[name][column.key]["low"] == pytest.approx(score.low, abs=1e-12)


def test_the_cfc_test_board_ranks_the_eight_gpt2_files():
    board = demo_leaderboard.shipped_board("cfc_test")
    assert [c.key for c in board.columns] == ["probeval_kl"] and len(board.systems) == 8
    assert board.order("probeval_kl")[0] == "gpt2-large-ft.zeroshot"


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, "upload one or more"), (demo_leaderboard.MAX_UPLOADS + 1, f"at most {demo_leaderboard.MAX_UPLOADS}")],
)
def test_upload_counts_outside_the_limit_are_refused(tmp_path, count, expected):
    files = []
    for i in range(count):
        path = tmp_path / f"f{i}.json"
        path.write_text("{}")
        files.append(str(path))
    with pytest.raises(DemoError, match=expected):
        demo_leaderboard.rank_uploads("cfc_test", files)


def test_oversized_unknown_and_clashing_uploads_are_refused(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (serving.MAX_REQUEST_BYTES + 1))
    with pytest.raises(DemoError, match="at most"):
        demo_leaderboard.rank_uploads("cfc_test", [str(big)])
    odd = tmp_path / "notes.json"
    odd.write_text('["not", "answers"]')
    with pytest.raises(DemoError, match="notes.json: unknown format"):
        demo_leaderboard.rank_uploads("cfc_test", [str(odd)])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "same.json").write_text(json.dumps({"r4q1": ["dog"]}))
    with pytest.raises(DemoError, match="two systems would be named 'same'"):
        demo_leaderboard.rank_uploads(
            "cfc_test", [str(tmp_path / "a" / "same.json"), str(tmp_path / "b" / "same.json")]
        )
    with pytest.raises(DemoError, match="unknown leaderboard"):
        demo_leaderboard.rank_uploads("nowhere", [str(big)])


@pytest.mark.slow
@needs_data
def test_an_uploaded_file_is_ranked_with_the_shipped_systems(tmp_path, monkeypatch):
    monkeypatch.setenv("PROTOQA_SPACE_DATA_DIR", str(DATA))
    upload = tmp_path / "mine.jsonl"
    shutil.copy(DATA / "cfc" / "test.samples.gpt2-xl.oneshot.jsonl", upload)
    board = demo_leaderboard.rank_uploads("cfc_test", [str(upload)])
    assert len(board.systems) == 9
    scores = board.scores["probeval_kl"]
    # The same file scores as its shipped copy, to the last bit of the interval.
    assert scores["mine"] == scores["gpt2-xl.oneshot"]
    headers, rows = demo_leaderboard.board_table(board, ["mine"])
    assert any(row[0] == "mine (uploaded)" for row in rows)
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"r4q1": ["a driver"]}) + "\n")
    with pytest.raises(DemoError, match="partial lacks 45 of the board's questions"):
        demo_leaderboard.rank_uploads("cfc_test", [str(partial)])
