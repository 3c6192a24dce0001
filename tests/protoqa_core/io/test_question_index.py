"""The on-disk question index: targets and predictions read once each, joined by id, checked like the readers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.ids import reconcile_ids
from protoqa_core.io.question_index import CACHE_KIB, QuestionIndex, private_database


def _targets(path, clusters_by_id):
    rows = [
        {"metadata": {"id": qid}, "question": {"normalized": f"name {qid}"}, "answers": {"clusters": clusters}}
        for qid, clusters in clusters_by_id.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


THREE = {
    "q0": {"c": {"count": 2, "answers": ["a"]}},
    "q1": {},
    "q2": {"c": {"count": 1, "answers": ["b"]}},
    "q3": {"c": {"count": 4, "answers": ["c"]}},
}


def test_the_index_joins_files_in_any_order_and_reads_each_once(tmp_path, monkeypatch):
    targets = tmp_path / "t.jsonl"
    rows = [
        {"metadata": {"id": f"q{i}"}, "question": {"normalized": "x"}, "answers": {"clusters": clusters}}
        for i, clusters in enumerate([{"c": {"count": 2, "answers": ["a"]}}, {}, {"c": {"count": 1, "answers": ["b"]}}])
    ]
    targets.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    predictions = tmp_path / "p.json"
    predictions.write_text(json.dumps({"q2": ["b"], "q0": ["a", "z"]}), encoding="utf-8")
    opened: list[str] = []
    real_open = open

    def counting_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    with QuestionIndex(targets, [predictions]) as index:
        assert [(q.id, answers) for q, answers in index.questions(0)] == [("q0", ["a", "z"]), ("q2", ["b"])]
        assert index.zero_total() == ["q1"] and len(index) == 3
        assert index.count(0, only_predicted=True) == 2
    assert sorted(opened) == sorted([str(targets), str(predictions)])


def test_a_targets_line_over_its_cap_is_refused(tmp_path, monkeypatch):
    from protoqa_core.io import question_index

    monkeypatch.setattr(question_index, "MAX_TARGET_LINE_MB", 1 / 2**20 * 100)
    targets = tmp_path / "t.jsonl"
    row = {"metadata": {"id": "q1"}, "question": {"normalized": "x"}, "answers": {"clusters": {}}}
    long_row = {**row, "metadata": {"id": "q2"}, "question": {"normalized": "x" * 200}}
    targets.write_text(json.dumps(row) + "\n" + json.dumps(long_row) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"t.jsonl, line 2: the line is longer than"):
        QuestionIndex(targets)


def test_questions_and_counts_per_run_with_and_without_predictions(tmp_path):
    targets = _targets(tmp_path / "t.jsonl", THREE)
    first, second = tmp_path / "a.json", tmp_path / "b.jsonl"
    first.write_text(json.dumps({"q3": ["c"], "q0": ["a", "z"]}), encoding="utf-8")
    second.write_text('{"q2": [["b", 1], ["x", 5]]}\n', encoding="utf-8")
    with QuestionIndex(targets, [first, second]) as index:
        assert [(q.id, a) for q, a in index.questions(0)] == [("q0", ["a", "z"]), ("q2", []), ("q3", ["c"])]
        assert [(q.id, a) for q, a in index.questions(1, only_predicted=True)] == [("q2", ["x", "b"])]
        assert index.count(1, only_predicted=True) == 1 and index.count(1, only_predicted=False) == 3
        question = next(index.questions(0))[0]
        assert question.question == "name q0" and question.total_count == 2


def test_reconcile_names_an_unknown_prediction_by_file_line_and_id(tmp_path):
    targets = _targets(tmp_path / "t.jsonl", THREE)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"q0": ["a"]}\n{"q9": ["x"]}\n{"q8": []}\n', encoding="utf-8")
    with QuestionIndex(targets, [predictions]) as index:
        with pytest.raises(DataFormatError, match=r"p\.jsonl, line 2, question 'q9': .*2 question id\(s\).*q9, q8"):
            index.reconcile(0)
        kept = index.reconcile(0, ignore_unknown=True)
        assert kept.kept == () and list(kept.ignored) == ["q9", "q8"]
        assert list(kept.missing) == ["q2", "q3"]  # q1 totals 0: not missing
        assert kept.message == "ignored predictions for 2 question id(s) that are not in the targets: q9, q8"


def test_a_full_run_reconciles_without_a_message(tmp_path):
    targets = _targets(tmp_path / "t.jsonl", THREE)
    predictions = tmp_path / "p.json"
    predictions.write_text(json.dumps({"q0": [], "q2": [], "q3": []}), encoding="utf-8")
    with QuestionIndex(targets, [predictions]) as index:
        done = index.reconcile(0)
        assert not done.missing and not done.ignored and done.message is None


@pytest.mark.parametrize(
    "which, text, message",
    [
        ("targets", None, r"t\.jsonl, line 2, question 'q0': duplicate question id \(first on line 1\)"),
        ("predictions", '{"q0": []}\n{"q0": ["a"]}\n', r"p\.jsonl, line 2, question 'q0': duplicate question id"),
        ("predictions", '{"q0": "a"}\n', r"p\.jsonl, line 1, question 'q0': answers must be a list, got str"),
        ("predictions", '{"q0": ["a", "b"]}\n', r"p\.jsonl, line 1, question 'q0': more than 1 answers"),
    ],
)
def test_the_index_refuses_what_the_readers_refuse(tmp_path, which, text, message):
    targets = tmp_path / "t.jsonl"
    if which == "targets":
        line = json.dumps({"metadata": {"id": "q0"}, "question": {"normalized": "x"}, "answers": {"clusters": {}}})
        targets.write_text(line + "\n" + line + "\n", encoding="utf-8")
    else:
        _targets(targets, THREE)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(text or "{}\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=message):
        QuestionIndex(targets, [predictions], max_answers=1)


def test_a_missing_targets_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"targets file not found: .*nope\.jsonl"):
        QuestionIndex(tmp_path / "nope.jsonl")


def test_indexed_ids_behave_as_a_sequence(tmp_path):
    many = {f"q{i}": {} for i in range(7)}
    with QuestionIndex(_targets(tmp_path / "t.jsonl", many)) as index:
        ids = index.zero_total()
        assert len(ids) == 7 and bool(ids) and ids == [f"q{i}" for i in range(7)]
        assert (
            ids[0] == "q0" and ids[-1] == "q6" and ids[2:5] == ["q2", "q3", "q4"] and ids[1:6:2] == ["q1", "q3", "q5"]
        )
        assert repr(ids) == "IndexedIds(7 ids)"
        every = [f"q{i}" for i in range(7)]
        for cut in (slice(None, None, -1), slice(5, 1, -2), slice(-2, None, -3), slice(1, 5, -1), slice(10, -10, -4)):
            assert ids[cut] == every[cut], cut
        with pytest.raises(IndexError):
            ids[7]
        with pytest.raises(IndexError):
            ids[-8]
    with QuestionIndex(_targets(tmp_path / "t2.jsonl", {"q0": {"c": {"count": 1, "answers": ["a"]}}})) as index:
        none = index.zero_total()
        assert not none and len(none) == 0 and list(none) == []


def test_a_private_database_has_its_tables_a_bounded_cache_and_no_journal():
    db = private_database("CREATE TABLE t(x)", "CREATE TABLE u(y)")
    assert db.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall() == [("t",), ("u",)]
    assert db.execute("PRAGMA cache_size").fetchone() == (-CACHE_KIB,)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("off",)
    db.close()


def test_a_private_database_whose_tables_fail_is_closed_and_the_error_raised():
    with pytest.raises(sqlite3.OperationalError, match="table t already exists"):
        private_database("CREATE TABLE t(x)", "CREATE TABLE t(y)")


def _reconcile_error(tmp_path: Path, predictions: Path, text: str) -> DataFormatError:
    """The error of reconciling ``predictions`` (holding ``text``) with the targets ``THREE``."""
    predictions.write_text(text, encoding="utf-8")
    with QuestionIndex(_targets(tmp_path / "t.jsonl", THREE), [predictions]) as index:
        with pytest.raises(DataFormatError) as info:
            index.reconcile(0)
    return info.value


def test_reconcile_says_so_when_no_prediction_answers_a_target_question_as_reconcile_ids_does(tmp_path):
    predictions = tmp_path / "p.jsonl"
    indexed = _reconcile_error(tmp_path, predictions, '{"q9": ["x"]}\n{"q8": []}\n')
    with pytest.raises(DataFormatError) as whole:
        reconcile_ids(THREE, ["q9", "q8"], path=predictions, locate={"q9": 1}.get)
    assert str(indexed) == str(whole.value)
    assert "none of the 2 question id(s) of the predictions is in the targets" in str(indexed)


def test_reconcile_finds_the_line_of_an_unknown_id_in_a_document_over_several_lines(tmp_path):
    predictions = tmp_path / "p.json"
    error = _reconcile_error(tmp_path, predictions, '{"model_answers": {\n  "q0": ["a"],\n  "caf\u00e9": ["x"]\n}}\n')
    assert str(error).startswith(f"{predictions}, line 3, question 'caf\u00e9': predictions for 1 question id")
