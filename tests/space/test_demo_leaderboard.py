"""The Space's Leaderboard tab: the shipped boards, uploads ranked against them within the Space's limits."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_python

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
    # The main figure (ProbEval KL, on every shipped board) follows the system and its rank range.
    assert headers[:3] == ["system", "rank", "ProbEval KL ↓"] and len(rows) == len(board.systems) >= 2
    # Rows are best first by it, its means are numbers the table can sort.
    means = [row[2] for row in rows]
    assert means == sorted(means) and all(isinstance(m, float) for m in means)
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
    # The shipped systems differ in samples per question (distinct answers): one more is ranked among them
    # only when its uploader accepts that too.
    with pytest.raises(DemoError, match="differ in samples per question, counted from their answers"):
        demo_leaderboard.rank_uploads("cfc_test", [str(upload)])
    board = demo_leaderboard.rank_uploads("cfc_test", [str(upload)], accept=["samples"])
    assert len(board.systems) == 9
    scores = board.scores["probeval_kl"]
    # The same file scores as its shipped copy, to the last bit of the interval.
    assert scores["mine"] == scores["gpt2-xl.oneshot"]
    headers, rows = demo_leaderboard.board_table(board, ["mine"])
    assert any(row[0] == "mine (uploaded)" for row in rows)
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"r4q1": ["a driver"]}) + "\n")
    with pytest.raises(DemoError, match="partial lacks 45 of the board's 46 questions"):
        demo_leaderboard.rank_uploads("cfc_test", [str(partial)])


def _bad_files(folder: Path) -> dict[str, str]:
    """Files users upload by mistake, each with what its one line must say."""
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "cut.json").write_text('{"r4q1": ["a driver",\n "a cop"')
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"doc": ["a"], "model_response": [1]}), folder / "wrong.parquet")
    return {
        "deep.json": "deep.json: JSON nested too deeply",
        "cut.json": "cut.json, line 2: malformed JSON (Expecting ',' delimiter at column 9)",
        "wrong.parquet": "wrong.parquet: row 1: 'doc' and 'model_response' are not the structs lighteval writes",
    }


@needs_data
def test_a_bad_upload_shows_the_command_lines_one_line_and_keeps_the_shipped_board(tmp_path, monkeypatch):

    from tests.support.offline import offline_env

    monkeypatch.setenv("PROTOQA_SPACE_DATA_DIR", str(DATA))
    monkeypatch.setenv("PROTOQA_SPACE_TMP", str(tmp_path / "space"))
    shipped = demo_leaderboard.board_view("cfc_test")
    for name, expected in _bad_files(tmp_path).items():
        view = demo_leaderboard.board_view("cfc_test", [str(tmp_path / name)])
        assert view.error is not None and view.error.startswith(expected), view.error
        # The shipped board, its plot and its signature stay.
        assert (view.rows, view.plot) == (shipped.rows, shipped.plot) and "Signature:" in view.note
        assert view.status.startswith("**Error:**") and "unexpected" not in view.error
        # The command line says the same line.
        cli = run_python(
            ["-m", "protoqa_integrations", "leaderboard", str(DATA / "cfc" / "test.targets.jsonl")]
            + [f"{Path(name).stem}={name}", "--metrics", "probeval"],
            tmp_path,
            offline_env(),
            timeout=300,
        )
        assert cli.returncode == 2 and cli.stderr.strip().splitlines()[-1].endswith(view.error), cli.stderr
        # And the API, with the file's content.
        content = (tmp_path / name).read_bytes()
        upload = {"name": name, "base64": __import__("base64").b64encode(content).decode()}
        answer = demo_leaderboard.api_rank("cfc_test", [upload])
        assert answer["error"] == view.error and len(answer["leaderboard"]["systems"]) == 8


@pytest.mark.slow
@needs_data
def test_uploads_are_drawn_and_can_be_ranked_on_the_common_questions(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("PROTOQA_SPACE_DATA_DIR", str(DATA))
    monkeypatch.setenv("PROTOQA_SPACE_TMP", str(tmp_path / "space"))
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"r4q1": ["a driver"], "r4q2": ["a cop"]}) + "\n")
    refused = demo_leaderboard.board_view("cfc_test", [str(partial)])
    assert "partial lacks 44 of the board's 46 questions" in refused.error
    view = demo_leaderboard.board_view("cfc_test", [str(partial)], only_common=True, accept=["samples"])
    assert view.error is None and view.board.questions == ["r4q1", "r4q2"]
    assert Path(view.plot).read_bytes()[:4] == b"\x89PNG" and Path(view.plot).parent == demo_leaderboard.plots_dir()
    assert "on the 2 questions every upload answers" in view.status
    assert any(row[0] == "partial (uploaded)" for row in view.rows)
    # Every system is ranked on those two questions: the shipped ones' figures are recomputed on them.
    assert "|n:2|" in view.board.signature and len(view.board.dropped) == 44


def test_the_phone_list_and_the_table_escape_names_and_read_as_headers():
    board = demo_leaderboard.shipped_board("protoqa_dev")
    headers, rows = demo_leaderboard.board_table(board)
    assert headers[:3] == ["system", "rank", "ProbEval KL ↓"]
    # the names of the command line's table and of the plot
    assert headers[3:] == [c.label for c in board.columns if c.label != "ProbEval KL"]
    assert "max_answers@10" in headers
    assert all(isinstance(value, float) for value in rows[0][2:])
    phone = demo_leaderboard.board_phone_list(board)
    assert phone.count("<li>") == len(board.systems) and "ProbEval KL" in phone


@needs_data
def test_a_mismatch_is_refused_naming_the_tabs_control_and_ranked_marked_once_accepted(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("PROTOQA_SPACE_DATA_DIR", str(DATA))
    monkeypatch.setenv("PROTOQA_SPACE_TMP", str(tmp_path / "space"))
    from tests.support.uploads import cfc_test_answers

    files = []
    for name, document in cfc_test_answers(DATA, {"few": 10, "many": 40}).items():
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
        files.append(str(tmp_path / f"{name}.json"))
    refused = demo_leaderboard.board_view("cfc_test", files)
    assert refused.error.startswith("few and many differ in samples (few: 10, many: 40)"), refused.error
    assert f"tick samples under “{demo_leaderboard.ACCEPT_LABEL}”" in refused.error
    assert "--accept-mismatch" not in refused.error + refused.status + refused.note
    assert demo_leaderboard.board_view("cfc_test", files, accept=["sample"]).error.startswith(
        "accept_mismatch takes fields among dataset, split, questions, samples"
    )
    view = demo_leaderboard.board_view("cfc_test", files, accept=["samples"])
    # The counts ranked are those counted from the answers: the shipped systems' and the uploads'.
    assert view.error is None and len(view.board.accepted) == 1
    assert view.board.accepted[0].startswith("samples (gpt2-large.zeroshot: 200, ")
    assert view.board.accepted[0].endswith(", few: 10, many: 40)")
    assert view.status.startswith("**NOT COMPARABLE AS RECORDED:** ranked despite differing samples")
    assert "NOT COMPARABLE AS RECORDED" in view.note and "--accept-mismatch" not in view.note
    assert view.note.rstrip().endswith("; accepted-mismatch:samples`")
    assert view.board.as_dict()["signature"].endswith("; accepted-mismatch:samples")


# The API in a new process whose address space is capped: a reader that unpacked an archive whole would fail
# there, not on the test machine. Each upload list is given, and each answer's error printed, as JSON.
API_CAPPED = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
sys.path.insert(0, sys.argv[1])
import demo_leaderboard
from protoqa_integrations.hub import serving
if sys.argv[3] != "-":
    serving.SCORE_TIME_BUDGET = float(sys.argv[3])
answers = [demo_leaderboard.api_rank("cfc_test", uploads) for uploads in json.loads(open(sys.argv[2]).read())]
print(json.dumps([(a["error"], len(a["leaderboard"]["systems"])) for a in answers]))
"""


def _api_errors(tmp_path: Path, uploads: list, budget: str = "-", **env: str) -> list:

    from tests.support.offline import offline_env

    given = tmp_path / "uploads.json"
    given.write_text(json.dumps(uploads))
    ran = run_python(
        ["-c", API_CAPPED, str(SPACE_DIR), str(given), budget],
        tmp_path,
        offline_env(PROTOQA_SPACE_TMP=str(tmp_path / "space"), **env),
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout.strip().splitlines()[-1])


def test_the_api_reads_uploads_inside_its_budget_and_names_a_bomb_and_a_long_name_in_its_error(tmp_path):
    import base64

    from tests.support.archives import ZSTD, inspect_bomb

    # A 64 MB zstd entry that declares 1,000 bytes: a .eval of a few kilobytes, well under the upload cap.
    bomb = base64.b64encode(inspect_bomb(ZSTD, 64 << 20)).decode()
    # Reading a file of 70,000 questions takes far longer than the budget set below.
    slow = {"name": "mine.json", "content": json.dumps({f"r{i}q1": ["a driver"] for i in range(70_000)})}
    errors = _api_errors(
        tmp_path,
        [[{"name": "bomb.eval", "base64": bomb}], [{"name": "a" * 300 + ".json", "content": "{}"}]],
        PROTOQA_MAX_INPUT_MB="4",
    )
    assert errors[0][0].startswith("bomb.eval: entry 'header.json' unpacks past the input cap") and errors[0][1] == 8
    assert errors[1] == ["upload 1: the file name is longer than 200 bytes; shorten it", 8]
    [(error, shown)] = _api_errors(tmp_path, [[slow]], budget="0.000001")
    assert error.startswith("the uploaded files could not be read inside the Space's budget") and shown == 8
