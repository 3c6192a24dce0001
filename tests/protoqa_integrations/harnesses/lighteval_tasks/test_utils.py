"""What the lighteval tasks do without lighteval: the metric names, the per-question scores, and the
data lighteval reads (the Parquet export as it is, else a Parquet copy of the JSONL files written once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoqa_integrations.harnesses.lighteval_tasks import TASK_NAMES
from protoqa_integrations.harnesses.lighteval_tasks.utils import (
    TASKS,
    dataset_source,
    score_samples,
    write_parquet_copy,
)
from protoqa_integrations.harnesses.metric_names import HIGHER_IS_BETTER, METRIC_NAMES
from tests.support.paths import DATA, needs_data


def test_metric_names_are_those_the_scores_carry():
    row = {
        "id": "q1",
        "question": "name a pet",
        "clusters": {"id": ["q1.0", "q1.1"], "answers": [["dog"], ["cat"]], "count": [6, 4]},
    }
    scores = score_samples(row, [" Cat.", " dog\nQ:", "", " cat"])
    assert tuple(scores) == METRIC_NAMES and set(HIGHER_IS_BETTER) == set(METRIC_NAMES)
    # "cat" ranks first (twice drawn): 4 of the best possible 6 at one answer.
    assert scores["wn_ans@1"] == pytest.approx(4 / 6) and scores["em_ans@3"] == 1.0
    assert TASK_NAMES == tuple(TASKS)


@needs_data
def test_parquet_copy_holds_the_rows_and_is_written_once(tmp_path, monkeypatch):
    import datasets

    from protoqa_integrations.harnesses.task_functions import load_split

    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    repo, subsets = dataset_source(data_dir=str(DATA))
    assert Path(repo).parent == tmp_path / "cache" / "lighteval" and subsets == {"protoqa": "protoqa", "cfc": "cfc"}
    for spec in TASKS.values():
        read = datasets.load_dataset(repo, subsets[spec.name], split=spec.split)
        assert read.to_list() == load_split(spec.config, spec.split, data_dir=str(DATA))[spec.split].to_list()
    written = {p: p.stat().st_mtime_ns for p in Path(repo).rglob("*") if p.is_file()}
    assert dataset_source(data_dir=str(DATA))[0] == repo
    assert {p: p.stat().st_mtime_ns for p in Path(repo).rglob("*") if p.is_file()} == written
    assert [p.name for p in Path(repo).parent.iterdir()] == [Path(repo).name]  # no half-written copy left


def test_parquet_copy_never_writes_through_a_planted_symlink(tmp_path):
    import datasets

    splits = {("cfc", "validation"): datasets.Dataset.from_list([{"id": "q1", "question": "where?"}])}
    digest = write_parquet_copy(tmp_path / "first", splits).name
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / digest).symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(FileExistsError, match=digest):
        write_parquet_copy(tmp_path / "second", splits)
    assert not list(elsewhere.iterdir())


def test_parquet_export_is_read_as_it_is(tmp_path, monkeypatch):
    monkeypatch.delenv("PROTOQA_DATA_DIR", raising=False)
    monkeypatch.setenv("PROTOQA_PARQUET", "someone/protoqa-parquet")
    assert dataset_source() == ("someone/protoqa-parquet", {"protoqa": "protoqa", "cfc": "cfc"})


def test_a_data_folder_without_the_files_names_the_missing_file(tmp_path):
    from protoqa_core.io.data import SourceError

    with pytest.raises(SourceError, match="dev.crowdsourced.jsonl"):
        dataset_source(data_dir=str(tmp_path))
    assert not (tmp_path / "lighteval").exists()


def test_samples_are_cleaned_one_for_one_in_sample_order():
    from protoqa_integrations.generation.settings import answer_from_text
    from protoqa_integrations.harnesses.lighteval_tasks.utils import clean_samples

    texts = [" Sun Screen.", "\n", " towel\nQ: next", "A Hat", ""]
    assert clean_samples(texts) == [answer_from_text(t) for t in texts] == ["sun screen", "", "towel", "a hat", ""]


def test_scores_are_those_of_the_lm_eval_tasks_with_collapse_as_a_number():
    from protoqa_integrations.harnesses.lighteval_tasks.utils import clean_samples
    from protoqa_integrations.harnesses.task_functions import process_results

    row = {"id": "q1", "question": "name a pet", "clusters": {"id": ["q1.0"], "answers": [["dog"]], "count": [3]}}
    texts = [" Dog."] * 12
    scores = score_samples(row, texts)
    harness = process_results(dict(row), [clean_samples(texts)])
    assert harness["collapsed"] == ("q1", True) and scores["collapsed"] == 1.0
    assert {k: v for k, v in scores.items() if k != "collapsed"} == {
        k: v for k, v in harness.items() if k != "collapsed"
    }
    assert score_samples(row, [" dog", " cat", " fish", " bird"])["collapsed"] == 0.0
    assert not HIGHER_IS_BETTER["KL"] and not HIGHER_IS_BETTER["collapsed"]
    assert all(HIGHER_IS_BETTER[name] for name in METRIC_NAMES if name not in ("KL", "collapsed"))


def test_tasks_follow_the_protocol_settings():
    from protoqa_integrations.generation.settings import SamplingConfig
    from protoqa_integrations.harnesses.lighteval_tasks.utils import MAX_NEW_TOKENS, SAMPLING_PARAMETERS

    paper = SamplingConfig()
    assert dict(SAMPLING_PARAMETERS) == {"temperature": paper.temperature, "top_p": paper.top_p, "top_k": 0}
    assert MAX_NEW_TOKENS == paper.max_new_tokens
    assert {name: (spec.config, spec.split, spec.num_samples) for name, spec in TASKS.items()} == {
        "protoqa": ("protoqa", "validation", 300),
        "cfc": ("cfc", "validation", 100),
    }
    assert TASKS["cfc"].prompt({"question": "a man reads. where is he?"}).endswith("Q: a man reads. where is he?\nA:")


def test_the_copy_is_reused_for_the_same_rows_and_written_anew_for_changed_ones(tmp_path):
    import datasets

    first = {("cfc", "validation"): datasets.Dataset.from_list([{"id": "q1", "question": "where?"}])}
    changed = {("cfc", "validation"): datasets.Dataset.from_list([{"id": "q1", "question": "where now?"}])}
    one = write_parquet_copy(tmp_path, first)
    assert write_parquet_copy(tmp_path, first) == one
    two = write_parquet_copy(tmp_path, changed)
    assert two != one and sorted(p.name for p in tmp_path.iterdir()) == sorted([one.name, two.name])
    card = (one / "README.md").read_text(encoding="utf-8")
    assert "- config_name: cfc" in card and "path: cfc/validation-00000-of-00001.parquet" in card
    assert datasets.Dataset.from_parquet(str(one / "cfc" / "validation-00000-of-00001.parquet")).to_list() == [
        {"id": "q1", "question": "where?"}
    ]


def test_a_failed_write_leaves_no_half_copy(tmp_path):
    class Broken:
        def to_list(self):
            return [{"id": "q1"}]

        def to_parquet(self, path):
            raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_parquet_copy(tmp_path, {("cfc", "validation"): Broken()})
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_the_copy_goes_is_refused(tmp_path):
    import datasets

    splits = {("cfc", "validation"): datasets.Dataset.from_list([{"id": "q1"}])}
    digest = write_parquet_copy(tmp_path / "probe", splits).name
    (tmp_path / "copies").mkdir()
    (tmp_path / "copies" / digest).write_text("mine")
    with pytest.raises(FileExistsError, match="is not a folder this module wrote"):
        write_parquet_copy(tmp_path / "copies", splits)
    assert (tmp_path / "copies" / digest).read_text() == "mine"
